// The demo workload's pieces: the scene, its reference frames on the C++ model, the PNG writer
// and the frame strip; the workload end to end (frames through the flip queue).
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <memory>
#include <string>

#include "backends/backends.hpp"
#include "png.hpp"
#include "reference.hpp"
#include "scene.hpp"
#include "sim/sim_transport.hpp"
#include "tb_transports.hpp"
#include "workload.hpp"

using namespace sgpu;

namespace {
std::uint32_t pixel(const std::vector<std::uint8_t>& f, const demo::SceneGeometry& g, std::uint32_t x, std::uint32_t y) {
  std::uint32_t v = 0;
  std::memcpy(&v, f.data() + std::size_t{y} * g.pitch() + x * 4, 4);
  return v;
}
}  // namespace

TEST_CASE("demo scene: the reference model draws the expected frame", "[demo][model]") {
  const demo::SceneGeometry g;
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  auto frame = demo::reference_frame(g, registry);
  if (!frame) FAIL(to_string(frame.error()));
  REQUIRE(frame->size() == g.frame_bytes());
  CHECK(pixel(*frame, g, 0, 0) == demo::argb(0x10, 0x18, 0x50));               // first gradient band
  CHECK(pixel(*frame, g, 5, g.height - 1) == demo::argb(0x20, 0x20, 0x24));    // status bar
  CHECK(pixel(*frame, g, 8, g.height - 7) == demo::argb(0x40, 0xd0, 0x60));    // progress strip
  const std::uint32_t px = g.width - 12 * 8 - 16;
  CHECK(pixel(*frame, g, px, 16) == demo::argb(0x30, 0x90, 0x70));             // checker cell (0, 0)
  CHECK(pixel(*frame, g, px + 8, 16) == demo::argb(0xf0, 0xf0, 0xe0));         // checker cell (0, 1)
  CHECK(pixel(*frame, g, px + 8, 16 + 56) == demo::argb(0xf0, 0xf0, 0xe0));    // its blitted twin
  CHECK(pixel(*frame, g, px - 1, 16 + 56) == pixel(*frame, g, 0, 16 + 56));   // beside it: background
  const std::uint32_t sx = 12 + g.sprite / 2, sy = g.height / 2 + g.sprite / 2;
  CHECK((pixel(*frame, g, sx, sy) >> 16 & 0xff) == 0xff);                      // inside the first ball
}

TEST_CASE("demo PNG: written with libpng, read back byte-exact, errors name the path", "[demo][png]") {
  const std::uint32_t w = 5, h = 3, pitch = 24;
  std::vector<std::uint8_t> px(pitch * h);
  for (std::size_t i = 0; i < px.size(); ++i) px[i] = static_cast<std::uint8_t>(i * 7);
  const std::string path = "test_demo_roundtrip.png";
  REQUIRE(demo::write_png(path, px.data(), w, h, pitch));
  std::uint32_t rw = 0, rh = 0;
  auto back = demo::read_png(path, rw, rh);
  REQUIRE(back);
  REQUIRE(rw == w);
  REQUIRE(rh == h);
  for (std::uint32_t y = 0; y < h; ++y) CHECK(std::memcmp(back->data() + y * w * 4, px.data() + y * pitch, w * 4) == 0);
  std::remove(path.c_str());

  auto bad = demo::write_png("/nonexistent-dir/x.png", px.data(), w, h, pitch);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("/nonexistent-dir/x.png") != std::string::npos);
  CHECK_FALSE(demo::write_png(path, px.data(), w, h, 8));  // pitch < width * 4
}

TEST_CASE("demo workload on the Verilated RTL: every presented frame is the model's, the hang is recovered",
          "[demo][sim][parity]") {
  sched::RuntimeOptions ro;
  demo::configure_scheduler(ro.scheduler);  // as `sgpu demo`: TdrDelay 1 ms (the default is 2 s), a 50 us quantum
  TransportRegistry registry;  // the default board, as `sgpu demo`
  test::register_e2e_backends(registry);
  auto transport = registry.open(test::e2e_backend());
  REQUIRE(transport);
  auto rt = sched::Runtime::open(std::move(*transport), std::move(ro));
  if (!rt) FAIL(to_string(rt.error()));
  demo::WorkloadOptions wo;
  std::vector<std::pair<std::size_t, std::size_t>> progress;
  wo.on_step = [&](std::size_t done, std::size_t total) { progress.emplace_back(done, total); };
  auto r = demo::run_workload(**rt, wo);
  if (!r) FAIL(to_string(r.error()));
  // The progress total is the steps the run records, each reported once, in order.
  REQUIRE(progress.size() == r->steps.size());
  CHECK(r->steps.size() == demo::expected_steps(wo));
  for (std::size_t i = 0; i < progress.size(); ++i) {
    CHECK(progress[i].first == i + 1);
    CHECK(progress[i].second == demo::expected_steps(wo));
  }
  // Every frame the display showed is the model's frame of the same index; the frames differ,
  // alternate between the two primaries and went on screen in order, at distinct vsyncs.
  REQUIRE(r->frames.size() == wo.frames);
  CHECK(r->frames_presented == wo.frames);
  auto refs = demo::reference_frames(wo.geometry, registry, wo.frames);
  if (!refs) FAIL(to_string(refs.error()));
  REQUIRE(refs->size() == wo.frames);
  for (std::uint32_t n = 0; n < wo.frames; ++n) {
    const demo::FrameReport& f = r->frames[n];
    INFO("frame " << n + 1);
    CHECK(f.index == n);
    CHECK(f.fence == n + 1);
    CHECK(f.primary == n % 2);
    CHECK(f.bytes == (*refs)[n]);
    CHECK(f.flipped_at > f.presented_at);
    CHECK(f.presented_at >= f.requested_at);
    if (n > 0) {
      CHECK(f.vsync > r->frames[n - 1].vsync);
      CHECK(f.flipped_at - r->frames[n - 1].flipped_at >= wo.vsync_period);
      CHECK(f.bytes != r->frames[n - 1].bytes);
    }
    // Presenting frame n + 2 into frame n's primary started only once a flip took frame n off.
    if (n >= 2) CHECK(f.presented_at >= r->frames[n - 1].flipped_at);
  }
  const auto& ref = refs->back();
  CHECK(r->frame == ref);
  CHECK(*demo::reference_frame(wo.geometry, registry, wo.frames - 1) == ref);  // one frame alone: the same bytes
  CHECK(r->copies_ok);
  CHECK(r->hang_recovered);
  CHECK(r->hang_context_error.find("device_lost") != std::string::npos);
  CHECK(r->user_fence == demo::kUserFenceValue);
  CHECK(r->counters.recoveries == 1);
  CHECK(r->counters.cancelled_packets == 1);

  // Preemption: every packet put back is the workload's, a lower-priority one (copy or hang),
  // and ran again at or past where it started; the copy's bytes are right (copies_ok checks
  // every word against the pattern).
  std::size_t copy_preempted = 0, copy_resumed_inside = 0;
  for (const demo::PreemptionReport& p : r->preemptions) {
    INFO("preempted submission " << p.record.submission.value() << " (" << p.context << ")");
    CHECK((p.context == "copy" || p.context == "hang"));
    CHECK(p.priority < demo::kRenderPriority);
    CHECK(p.record.taken_back_at >= p.record.requested_at);
    if (p.record.submission == r->copy) {
      ++copy_preempted;
      REQUIRE(p.record.resumed_at);  // the copy completed, so every put-back ran again
      CHECK(*p.record.resumed_at > p.record.requested_at);
      copy_resumed_inside += p.record.resume_offset > 0;
    }
  }
  // On a device that stops inside a ring entry (the Verilated RTL: sim, pcie-sim, systemc) the
  // copy stream is running when frame 2's render arrives: it stops at a packet boundary inside
  // the stream and resumes from there, and the hang is put back at its first TdrDelay overrun,
  // recovered at its second. The reference model (model, untimed; systemc-model) preempts only
  // between ring entries: nothing is put back there and only the checks above hold.
  if (test::e2e_preempts_inside_entries()) {
    CHECK(copy_preempted >= 1);
    CHECK(copy_resumed_inside >= 1);
    CHECK(r->counters.priority_preemptions >= 1);
    CHECK(r->counters.overruns >= 1);
    CHECK((*rt)->scheduler().preemption_times().resumed >= copy_preempted);
  }

  // The PNG of the presented frame decodes back to the model's frame.
  const demo::SceneGeometry& g = wo.geometry;
  const std::string path = "test_demo_frame.png";
  REQUIRE(demo::write_png(path, r->frame.data(), g.width, g.height, g.pitch()));
  std::uint32_t w = 0, h = 0;
  auto back = demo::read_png(path, w, h);
  REQUIRE(back);
  CHECK(w == g.width);
  CHECK(h == g.height);
  CHECK(*back == ref);
  std::remove(path.c_str());

  // The strip: every frame side by side, 4 black pixels between them.
  std::vector<std::vector<std::uint8_t>> shown;
  for (const auto& f : r->frames) shown.push_back(f.bytes);
  const std::string strip = "test_demo_frames.png";
  REQUIRE(demo::write_png_strip(strip, shown, g.width, g.height, g.pitch()));
  auto strip_back = demo::read_png(strip, w, h);
  REQUIRE(strip_back);
  CHECK(w == wo.frames * g.width + (wo.frames - 1) * 4);
  CHECK(h == g.height);
  for (std::uint32_t n = 0; n < wo.frames; ++n)
    for (std::uint32_t y = 0; y < g.height; y += 37)
      CHECK(std::memcmp(strip_back->data() + (std::size_t{y} * w + n * (g.width + 4)) * 4,
                        shown[n].data() + std::size_t{y} * g.pitch(), g.width * 4) == 0);
  std::remove(strip.c_str());
}

TEST_CASE("demo frames: the sprites move and the frame number changes from frame to frame", "[demo][model]") {
  const demo::SceneGeometry g;
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  auto frames = demo::reference_frames(g, registry, 3);
  if (!frames) FAIL(to_string(frames.error()));
  REQUIRE(frames->size() == 3);
  const std::uint32_t sx = 12 + g.sprite / 2;
  // The first sprite: at the wave's rest position in frame 1, 28 rows lower in frame 2 (kWave[1]).
  CHECK((pixel((*frames)[0], g, sx, g.height / 2 + g.sprite / 2) >> 16 & 0xff) == 0xff);
  CHECK((pixel((*frames)[1], g, sx, g.height / 2 + 28 + g.sprite / 2) >> 16 & 0xff) == 0xff);
  CHECK(pixel((*frames)[1], g, sx, g.height / 2 + 2) != pixel((*frames)[0], g, sx, g.height / 2 + 2));
  // The status bar's last digit: "1" lights segment b only, "2" also a (the top row).
  const std::uint32_t digit_x = g.width - 24 + 8, digit_y = g.height - 12 + 1;
  const std::uint32_t lit = demo::argb(0xf0, 0xf0, 0xe0);
  CHECK(pixel((*frames)[0], g, digit_x + 4, digit_y) == lit);
  CHECK(pixel((*frames)[0], g, digit_x, digit_y) != lit);
  CHECK(pixel((*frames)[1], g, digit_x, digit_y) == lit);
  CHECK((*frames)[2] != (*frames)[1]);
}

TEST_CASE("demo PNG strip: errors name the path and what is wrong", "[demo][png]") {
  const std::vector<std::vector<std::uint8_t>> none;
  auto empty = demo::write_png_strip("strip.png", none, 4, 4, 16);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().code == Errc::InvalidArgument);
  CHECK(empty.error().message.find("strip.png") != std::string::npos);
  const std::vector<std::vector<std::uint8_t>> short_frame{std::vector<std::uint8_t>(16 * 4), std::vector<std::uint8_t>(8)};
  auto bad = demo::write_png_strip("strip.png", short_frame, 4, 4, 16);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("frame 1 has 8 bytes") != std::string::npos);
}

TEST_CASE("demo workload: zero frames is refused before anything is submitted", "[demo][model]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  auto transport = registry.open("model");
  REQUIRE(transport);
  auto rt = sched::Runtime::open(std::move(*transport), {});
  if (!rt) FAIL(to_string(rt.error()));
  demo::WorkloadOptions wo;
  wo.frames = 0;
  auto r = demo::run_workload(**rt, wo);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK(r.error().message.find("frames") != std::string::npos);
  CHECK((*rt)->scheduler().counters().submissions == 0);
}

namespace {

struct SkipRun {
  demo::WorkloadReport report;
  std::uint64_t skipped = 0;
  std::uint64_t cycles = 0;
};

// The demo workload on a fresh board: the fast model with the given idle skipping, or the
// checked one (two evaluations a cycle, every process each time, the AXI checker on).
SkipRun run_demo_on(sim::SimModel model, sim::IdleSkip skip) {
  sim::SimConfig board;
  board.model = model;
  board.check_axi = model == sim::SimModel::Checked;  // as `sgpu demo` and `sgpu --checked`
  board.idle_skip = skip;
  auto device = std::make_shared<sim::SimDevice>(board);
  sched::RuntimeOptions ro;
  demo::configure_scheduler(ro.scheduler);
  auto rt = sched::Runtime::open(sim::open_sim_transport_over(device), std::move(ro));
  if (!rt) FAIL(to_string(rt.error()));
  auto r = demo::run_workload(**rt, {});
  if (!r) FAIL(to_string(r.error()));
  return {std::move(*r), device->skipped_cycles(), device->cycle()};
}

}  // namespace

TEST_CASE("idle skipping: the demo gives the same cycles, times, frames and bytes as simulating every cycle",
          "[demo][sim][idle_skip]") {
  // The reference: the checked model, which evaluates everything twice a cycle and never skips.
  const SkipRun reference = run_demo_on(sim::SimModel::Checked, sim::IdleSkip::On);
  // The fast model's edge-only evaluation (no input-combinational region when no input
  // changed) without and with skipping.
  const SkipRun fast = run_demo_on(sim::SimModel::Fast, sim::IdleSkip::Off);
  const SkipRun on = run_demo_on(sim::SimModel::Fast, sim::IdleSkip::On);
  // Verify re-simulates every skip cycle by cycle and compares the model's whole state (a
  // SimError, so a failed run, on any difference).
  const SkipRun verify = run_demo_on(sim::SimModel::Fast, sim::IdleSkip::Verify);
  CHECK(reference.skipped == 0);
  CHECK(fast.skipped == 0);
  CHECK(on.skipped > on.cycles / 10);  // the hung WAIT_MEM's polls, at least
  CHECK(verify.skipped == on.skipped);
  for (const SkipRun* run : {&fast, &on, &verify}) {
    const demo::WorkloadReport& a = reference.report;
    const demo::WorkloadReport& b = run->report;
    CHECK(run->cycles == reference.cycles);
    CHECK(b.cycles == a.cycles);
    CHECK(b.simulated == a.simulated);
    REQUIRE(b.steps.size() == a.steps.size());
    for (std::size_t i = 0; i < a.steps.size(); ++i) {
      INFO("step " << i << ": " << a.steps[i].what);
      CHECK(b.steps[i].what == a.steps[i].what);
      CHECK(b.steps[i].at == a.steps[i].at);
      CHECK(b.steps[i].fence == a.steps[i].fence);
    }
    REQUIRE(b.frames.size() == a.frames.size());
    for (std::size_t i = 0; i < a.frames.size(); ++i) {
      CHECK(b.frames[i].bytes == a.frames[i].bytes);
      CHECK(b.frames[i].flipped_at == a.frames[i].flipped_at);
      CHECK(b.frames[i].presented_at == a.frames[i].presented_at);
      CHECK(b.frames[i].render_completed_at == a.frames[i].render_completed_at);
      CHECK(b.frames[i].vsync == a.frames[i].vsync);
    }
    REQUIRE(b.preemptions.size() == a.preemptions.size());
    for (std::size_t i = 0; i < a.preemptions.size(); ++i) {
      CHECK(b.preemptions[i].record.requested_at == a.preemptions[i].record.requested_at);
      CHECK(b.preemptions[i].record.taken_back_at == a.preemptions[i].record.taken_back_at);
      CHECK(b.preemptions[i].record.resumed_at == a.preemptions[i].record.resumed_at);
      CHECK(b.preemptions[i].record.resume_offset == a.preemptions[i].record.resume_offset);
    }
    CHECK(b.frame == a.frame);
    CHECK(b.copies_ok);
    CHECK(b.hang_recovered);
    CHECK(b.user_fence == a.user_fence);
    CHECK(b.copy_completed_at == a.copy_completed_at);
    CHECK(b.counters.interrupts == a.counters.interrupts);
    CHECK(b.dma_completed_reports == a.dma_completed_reports);
    CHECK(b.vsyncs == a.vsyncs);
  }
}
