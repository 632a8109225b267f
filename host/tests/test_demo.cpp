// The demo workload's pieces: the scene, its reference frame on the C++ model, the PNG writer.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>

#include "backends/backends.hpp"
#include "png.hpp"
#include "reference.hpp"
#include "scene.hpp"
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

TEST_CASE("demo workload on the Verilated RTL: the presented frame is the model's, the hang is recovered",
          "[demo][sim][parity]") {
  sched::RuntimeOptions ro;
  ro.scheduler.tdr_delay = std::chrono::milliseconds(1);  // as `sgpu demo`; the default is TdrDelay's 2 s
  ro.scheduler.preempt_timeout = std::chrono::microseconds(250);
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
  auto ref = demo::reference_frame(wo.geometry, registry);
  if (!ref) FAIL(to_string(ref.error()));
  REQUIRE(r->frame.size() == ref->size());
  CHECK(std::memcmp(r->frame.data(), ref->data(), ref->size()) == 0);
  CHECK(r->copies_ok);
  CHECK(r->hang_recovered);
  CHECK(r->hang_context_error.find("device_lost") != std::string::npos);
  CHECK(r->user_fence == demo::kUserFenceValue);
  CHECK(r->counters.recoveries == 1);
  CHECK(r->counters.cancelled_packets == 1);
  CHECK(r->counters.resubmitted_paging >= 1);  // the copy context's paging sat behind the hang

  // The PNG of the presented frame decodes back to the model's frame.
  const demo::SceneGeometry& g = wo.geometry;
  const std::string path = "test_demo_frame.png";
  REQUIRE(demo::write_png(path, r->frame.data(), g.width, g.height, g.pitch()));
  std::uint32_t w = 0, h = 0;
  auto back = demo::read_png(path, w, h);
  REQUIRE(back);
  CHECK(w == g.width);
  CHECK(h == g.height);
  CHECK(*back == *ref);
  std::remove(path.c_str());
}
