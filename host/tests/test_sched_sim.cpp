// The GPU scheduler end to end on the Verilated RTL: command lists through Render, residency,
// Patch and SubmitCommand; fences and interrupts; splitting under memory pressure; hang and
// fault recovery (TDR) with and without preemption; the TDR limit.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPage = 4096;

RuntimeOptions small_options() {
  RuntimeOptions o;
  o.device.aperture.table_pages = 2048;  // 8 MiB: 1007 pages for the memory manager, the rest the window
  o.kernel_window_pages = kernel_window_pages_for(16);  // the fence page + 16 DMA buffers
  o.scheduler.tdr_delay = 300us;
  o.scheduler.preempt_timeout = 50us;
  return o;
}

std::unique_ptr<Runtime> open_runtime(RuntimeOptions o = small_options(), const std::string& backend = test::e2e_backend()) {
  auto rt = Runtime::open(test::open_tb_transport(backend), std::move(o));
  if (!rt) FAIL(to_string(rt.error()));
  return std::move(*rt);
}

kmd::AllocationInfo mem_info(std::uint64_t bytes, bool aperture_too = false) {
  const auto segments = aperture_too ? kmd::SegmentSet::of(1) | kmd::SegmentSet::of(2) : kmd::SegmentSet::of(1);
  return kmd::AllocationInfo::placed(bytes, segments, 1, kmd::AllocationInfoFlags::kCpuVisible);
}

kmd::Allocation make_alloc(kmd::Device& dev, std::uint64_t bytes, bool aperture_too = false) {
  auto a = dev.create_allocation(mem_info(bytes, aperture_too));
  if (!a) FAIL(to_string(a.error()));
  return std::move(*a);
}

std::vector<std::uint32_t> read_back(kmd::Allocation& a, std::size_t bytes) {
  auto p = a.lock();
  if (!p) FAIL(to_string(p.error()));
  std::vector<std::uint32_t> v(bytes / 4);
  std::memcpy(v.data(), *p, bytes);
  REQUIRE(a.unlock());
  return v;
}

void require_ok(const Status& s) {
  if (!s) FAIL(to_string(s.error()));
}

SubmissionId require_submit(Scheduler& s, kmd::Context& c, const umd::CommandList& cl) {
  auto f = s.submit(c, cl);
  if (!f) FAIL(to_string(f.error()));
  return *f;
}

/// DMA_COMPLETED notifications: strictly increasing (never stale, never twice).
void check_notifications(const FenceReporter& r) {
  RingFence last;
  std::size_t n = 0;
  for (const auto& e : r.log()) {
    if (e.kind != FenceNotification::Kind::DmaCompleted) continue;
    INFO("notification " << n << " fence " << e.fence << " after " << last);
    CHECK(e.fence > last);
    last = e.fence;
    ++n;
  }
  CHECK(n == r.counters().reported);
}

double sim_us(Runtime& rt) { return static_cast<double>(rt.device().transport().now().count()) / 1000.0; }

}  // namespace

TEST_CASE("sched sim: a command list is rendered, patched, submitted and waited for", "[sched][sim][parity]") {
  auto rt = open_runtime();
  auto dev = rt->adapter().create_device({});
  REQUIRE(dev);
  auto ctx = rt->create_context(*dev);
  REQUIRE(ctx);
  auto a = make_alloc(*dev, 16 * kPage);
  umd::CommandList cl;
  REQUIRE(cl.fill(a.handle(), 0, 8 * kPage, 0x11223344u));
  const std::uint32_t data[3] = {0xcafe, 0xf00d, 0xbeef};
  REQUIRE(cl.write_data(a.handle(), 8 * kPage, data, 3));
  REQUIRE(cl.copy(a.handle(), 0, a.handle(), 12 * kPage, 64));
  auto& s = rt->scheduler();
  const SubmissionId f = require_submit(s, (*ctx)->get(), cl);
  CHECK(*s.query(f) != FenceStatus::Aborted);
  require_ok(s.wait(f, 2ms));
  CHECK(*s.query(f) == FenceStatus::Completed);
  auto v = read_back(a, 16 * kPage);
  CHECK(v[0] == 0x11223344u);
  CHECK(v[8 * kPage / 4 - 1] == 0x11223344u);
  CHECK(v[8 * kPage / 4] == 0xcafe);
  CHECK(v[8 * kPage / 4 + 2] == 0xbeef);
  CHECK(v[12 * kPage / 4] == 0x11223344u);
  // The context's fence slot holds the ring fence of its last packet (no MMIO to read it).
  CHECK(s.context_completed_fence((*ctx)->get()) != 0);
  CHECK(s.context_completed_fence((*ctx)->get()) <= s.reporter().last_reported());
  CHECK(s.counters().render_packets == 1);
  CHECK(s.counters().paging_packets >= 1);  // the FILL of first use went through the scheduler
  check_notifications(s.reporter());
  auto bad = s.query(f + 1);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::InvalidArgument);
  // A Render error comes back typed; nothing is queued.
  umd::CommandList oob;
  REQUIRE(oob.fill(a.handle(), 15 * kPage, 2 * kPage, 1));
  auto r = s.submit((*ctx)->get(), oob);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK(s.software_queue_depth() == 0);
  WARN("submit+wait: simulated " << sim_us(*rt) << " us");
}

TEST_CASE("sched sim: Patch follows allocations that moved between submissions", "[sched][sim][parity]") {
  auto rt = open_runtime();
  auto dev = rt->adapter().create_device({});
  auto ctx = rt->create_context(*dev);
  REQUIRE(ctx);
  auto& s = rt->scheduler();
  auto& mm = rt->memory_manager();
  auto src = make_alloc(*dev, 4 * kPage, true);
  auto dst = make_alloc(*dev, 4 * kPage, true);
  umd::CommandList fill;
  REQUIRE(fill.fill(src.handle(), 0, 4 * kPage, 0xa5a5a5a5u));
  std::vector<std::uint32_t> words(64);
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = static_cast<std::uint32_t>(i * 7 + 1);
  REQUIRE(fill.write_data(src.handle(), kPage, words.data(), words.size()));
  require_ok(s.wait(require_submit(s, (*ctx)->get(), fill), 2ms));
  const auto before = mm.query(src.handle())->placement;

  require_ok(mm.evict(src.handle()));  // to system memory; comes back elsewhere or the same place
  auto other = make_alloc(*dev, 8 * kPage);  // takes the old range first
  umd::CommandList touch;
  REQUIRE(touch.fill(other.handle(), 0, 8 * kPage, 0));
  require_ok(s.wait(require_submit(s, (*ctx)->get(), touch), 2ms));

  umd::CommandList copy;
  REQUIRE(copy.copy(src.handle(), 0, dst.handle(), 0, 4 * kPage));
  require_ok(s.wait(require_submit(s, (*ctx)->get(), copy), 2ms));
  const auto after = mm.query(src.handle())->placement;
  CHECK(after.gpu_address != before.gpu_address);
  auto v = read_back(dst, 4 * kPage);
  CHECK(v[0] == 0xa5a5a5a5u);
  for (std::size_t i = 0; i < words.size(); ++i) CHECK(v[kPage / 4 + i] == words[i]);
  CHECK(v[4 * kPage / 4 - 1] == 0xa5a5a5a5u);
  check_notifications(s.reporter());
}

namespace {

// A chain over four 64 KiB allocations that only fit two at a time in a 128 KiB memory segment.
std::vector<std::vector<std::uint32_t>> run_chain(std::uint64_t memory_bytes, Scheduler::Counters* counters,
                                                  const std::string& backend = test::e2e_backend()) {
  RuntimeOptions o = small_options();
  o.memory_segment_bytes = memory_bytes;
  // Healthy work only: read_back() may evict a 64 KiB allocation at the end, a paging copy that
  // takes longer than small_options()'s 300 us TdrDelay on the systemc-model backend.
  o.scheduler.tdr_delay = 5ms;
  auto rt = open_runtime(o, backend);
  auto dev = rt->adapter().create_device({});
  auto ctx = rt->create_context(*dev);
  REQUIRE(ctx);
  constexpr std::uint32_t kBytes = 16 * kPage;
  std::vector<kmd::Allocation> a;
  for (int i = 0; i < 4; ++i) a.push_back(make_alloc(*dev, kBytes));
  umd::CommandList cl;
  REQUIRE(cl.fill(a[0].handle(), 0, kBytes, 0x01010101u));
  std::uint32_t stamp[4] = {0x100, 0x200, 0x300, 0x400};
  REQUIRE(cl.write_data(a[0].handle(), 64, stamp, 1));
  REQUIRE(cl.copy(a[0].handle(), 0, a[1].handle(), 0, kBytes));
  REQUIRE(cl.write_data(a[1].handle(), 128, stamp + 1, 1));
  REQUIRE(cl.copy(a[1].handle(), 0, a[2].handle(), 0, kBytes));
  REQUIRE(cl.fill(a[2].handle(), 4096, 256, 0x5a5a5a5au));
  REQUIRE(cl.copy(a[2].handle(), 0, a[3].handle(), 0, kBytes));
  REQUIRE(cl.write_data(a[3].handle(), 192, stamp + 3, 1));
  REQUIRE(cl.copy(a[3].handle(), 0, a[0].handle(), 0, kBytes / 2));
  auto& s = rt->scheduler();
  const SubmissionId f = require_submit(s, (*ctx)->get(), cl);
  require_ok(s.wait(f, 20ms));
  std::vector<std::vector<std::uint32_t>> out;
  for (auto& x : a) out.push_back(read_back(x, kBytes));
  if (counters) *counters = s.counters();
  check_notifications(s.reporter());
  WARN("chain with a " << memory_bytes / 1024 << " KiB memory segment: simulated " << sim_us(*rt) << " us, "
                       << s.counters().splits << " split(s), " << s.counters().portions << " portions, "
                       << s.counters().paging_packets << " paging packets");
  return out;
}

}  // namespace

TEST_CASE("sched sim: a packet too big for memory is split and runs as an unsplit one", "[sched][sim][parity][split]") {
  Scheduler::Counters ref_c, split_c;
  // The whole memory segment: no split. A systemc backend builds one platform per process, so
  // there the unsplit reference comes from "sim" (the split run is the one under test).
  const auto ref = run_chain(0, &ref_c, test::e2e_backend_is_systemc() ? "sim" : test::e2e_backend());
  const auto split = run_chain(128 * 1024, &split_c);
  CHECK(ref_c.splits == 0);
  CHECK(split_c.splits == 1);
  CHECK(split_c.portions >= 3);
  REQUIRE(ref.size() == split.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    INFO("allocation " << i);
    CHECK(ref[i] == split[i]);  // byte for byte
  }
  CHECK(ref[0][64 / 4] == 0x100);
  CHECK(ref[3][192 / 4] == 0x400);
}

TEST_CASE("sched sim: a packet whose allocations cannot fit fails alone", "[sched][sim][parity][split]") {
  RuntimeOptions o = small_options();
  o.memory_segment_bytes = 128 * 1024;
  auto rt = open_runtime(o);
  auto dev = rt->adapter().create_device({});
  auto ctx = rt->create_context(*dev);
  REQUIRE(ctx);
  auto& s = rt->scheduler();
  auto big1 = make_alloc(*dev, 24 * kPage);
  auto big2 = make_alloc(*dev, 24 * kPage);
  auto small = make_alloc(*dev, kPage);
  umd::CommandList ok1, bad, ok2;
  REQUIRE(ok1.fill(small.handle(), 0, kPage, 7));
  REQUIRE(bad.copy(big1.handle(), 0, big2.handle(), 0, 24 * kPage));
  const std::uint32_t v = 9;
  REQUIRE(ok2.write_data(small.handle(), 0, &v, 1));
  const SubmissionId f1 = require_submit(s, (*ctx)->get(), ok1);
  const SubmissionId fb = require_submit(s, (*ctx)->get(), bad);
  const SubmissionId f2 = require_submit(s, (*ctx)->get(), ok2);
  require_ok(s.wait(f1, 5ms));
  auto e = s.wait(fb, 5ms);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == Errc::OutOfMemory);
  CHECK_THAT(e.error().message, Catch::Contains("submission fence " + std::to_string(fb.value())));
  CHECK(*s.query(fb) == FenceStatus::Aborted);
  require_ok(s.wait(f2, 5ms));
  CHECK(read_back(small, kPage)[0] == 9);
  CHECK_FALSE(s.context_lost((*ctx)->get()));
}

TEST_CASE("sched sim: 8 contexts interleaved, every fence completes once, in order", "[sched][sim][parity]") {
  auto rt = open_runtime();
  auto dev = rt->adapter().create_device({});
  auto& s = rt->scheduler();
  constexpr int kContexts = 8, kRounds = 12;
  std::vector<std::unique_ptr<ScheduledContext>> ctx;
  std::vector<kmd::Allocation> target;
  for (int c = 0; c < kContexts; ++c) {
    auto x = rt->create_context(*dev);
    REQUIRE(x);
    ctx.push_back(std::move(*x));
    target.push_back(make_alloc(*dev, kPage));
  }
  std::vector<std::vector<SubmissionId>> fences(kContexts);
  for (int r = 0; r < kRounds; ++r)
    for (int c = 0; c < kContexts; ++c) {
      umd::CommandList cl;
      const std::uint32_t v = static_cast<std::uint32_t>(c * 1000 + r);
      REQUIRE(cl.write_data(target[c].handle(), static_cast<std::uint32_t>(r * 4), &v, 1));
      fences[c].push_back(require_submit(s, ctx[c]->get(), cl));
    }
  // Submission fences are unique and increasing in submission order.
  for (int c = 0; c < kContexts; ++c)
    for (int r = 1; r < kRounds; ++r) CHECK(fences[c][r] > fences[c][r - 1]);
  require_ok(s.idle(20ms));
  for (int c = 0; c < kContexts; ++c)
    for (SubmissionId f : fences[c]) CHECK(*s.query(f) == FenceStatus::Completed);
  for (int c = 0; c < kContexts; ++c) {
    auto v = read_back(target[c], kPage);
    for (int r = 0; r < kRounds; ++r) CHECK(v[r] == static_cast<std::uint32_t>(c * 1000 + r));
    CHECK(s.context_completed_fence(ctx[c]->get()) != 0);
  }
  check_notifications(s.reporter());
  CHECK(s.reporter().counters().reported >= 1);
  CHECK(s.reporter().last_reported() == rt->device().completed_fence());
  CHECK(s.counters().render_packets == kContexts * kRounds);
  CHECK(s.counters().recoveries == 0);
  WARN("8 contexts x 12: simulated " << sim_us(*rt) << " us, " << s.counters().interrupts << " interrupts, "
                                     << s.reporter().counters().reported << " DMA_COMPLETED reports");
}

namespace {

// `unanswered`: the engine gets no time to answer the preemption request (1 ns), so recovery
// takes the "engine does not answer" path: reset after preempt_timeout.
void hang_test(bool use_preemption, bool unanswered = false) {
  RuntimeOptions o = small_options();
  o.scheduler.use_preemption = use_preemption;
  if (unanswered) o.scheduler.preempt_timeout = 1ns;
  auto rt = open_runtime(o);
  auto dev = rt->adapter().create_device({});
  auto& s = rt->scheduler();
  auto a = rt->create_context(*dev);
  auto b = rt->create_context(*dev);
  auto c = rt->create_context(*dev);
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(c);
  auto sem = make_alloc(*dev, kPage);
  auto tb = make_alloc(*dev, kPage);
  auto tc = make_alloc(*dev, kPage);
  // Warm up: everything resident, so the hang is not behind paging.
  umd::CommandList warm;
  REQUIRE(warm.fill(sem.handle(), 0, kPage, 0));
  REQUIRE(warm.fill(tb.handle(), 0, kPage, 0));
  REQUIRE(warm.fill(tc.handle(), 0, kPage, 0));
  require_ok(s.wait(require_submit(s, (*b)->get(), warm), 2ms));

  umd::CommandList hang;
  REQUIRE(hang.wait(sem.handle(), 0, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 16));  // never written
  const SubmissionId fa = require_submit(s, (*a)->get(), hang);
  std::vector<SubmissionId> fb, fc;
  for (std::uint32_t i = 0; i < 6; ++i) {
    umd::CommandList lb, lc;
    const std::uint32_t vb = 0xb000 + i, vc = 0xc000 + i;
    REQUIRE(lb.write_data(tb.handle(), i * 4, &vb, 1));
    REQUIRE(lc.write_data(tc.handle(), i * 4, &vc, 1));
    fb.push_back(require_submit(s, (*b)->get(), lb));
    fc.push_back(require_submit(s, (*c)->get(), lc));
  }
  for (SubmissionId f : fb) require_ok(s.wait(f, 10ms));
  for (SubmissionId f : fc) require_ok(s.wait(f, 10ms));
  auto ea = s.wait(fa, 1ms);
  REQUIRE_FALSE(ea);
  CHECK(ea.error().code == Errc::DeviceLost);
  CHECK(*s.query(fa) == FenceStatus::Aborted);
  CHECK(s.context_lost((*a)->get()));
  umd::CommandList more;
  REQUIRE(more.fill(sem.handle(), 0, 4, 1));
  auto again = s.submit((*a)->get(), more);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::DeviceLost);
  CHECK(s.counters().recoveries == 1);
  CHECK(s.counters().requeued_packets >= 1);
  // The reference model answers no preemption while hung in a wait (tb_transports.hpp): the
  // request times out and the engine reset recovers, as when the engine does not answer.
  if (use_preemption && !test::e2e_preempts_inside_entries()) unanswered = true;
  if (use_preemption && !unanswered) {
    // The first overrun is answered and only puts the wait back (not guilty); the same packet
    // overrunning again, stopped at the same offset, is the hang.
    CHECK(s.counters().preemptions == 2);
    CHECK(s.counters().overruns == 1);
    CHECK(s.counters().preempt_requeues == 1);
    CHECK(s.counters().preempt_timeouts == 0);
    CHECK(sim_us(*rt) >= 2 * 300.0);
  } else {
    CHECK(s.counters().preemptions == 0);
    CHECK(s.counters().overruns == 0);
    CHECK(s.counters().preempt_timeouts == (unanswered ? 1u : 0u));
  }
  auto vb = read_back(tb, kPage);
  auto vc = read_back(tc, kPage);
  for (std::uint32_t i = 0; i < 6; ++i) {
    CHECK(vb[i] == 0xb000 + i);
    CHECK(vc[i] == 0xc000 + i);
  }
  check_notifications(s.reporter());
  // B and C keep running after the recovery.
  umd::CommandList after;
  const std::uint32_t z = 0x7777;
  REQUIRE(after.write_data(tb.handle(), 100, &z, 1));
  require_ok(s.wait(require_submit(s, (*b)->get(), after), 2ms));
  CHECK(read_back(tb, kPage)[25] == 0x7777);
  WARN("hang (preemption " << use_preemption << "): simulated " << sim_us(*rt) << " us, " << s.counters().requeued_packets
                           << " packets requeued, " << s.counters().cancelled_packets << " cancelled");
}

}  // namespace

TEST_CASE("sched sim: a hung context is recovered by preemption + reset, others keep running", "[sched][sim][parity][tdr]") {
  hang_test(true);
}

TEST_CASE("sched sim: a hung context is recovered by engine reset without preemption", "[sched][sim][parity][tdr]") {
  hang_test(false);
}

TEST_CASE("sched sim: a preemption request the engine does not answer in time ends in a reset", "[sched][sim][parity][tdr]") {
  hang_test(true, true);
}

TEST_CASE("sched sim: more than TdrLimitCount recoveries puts the scheduler in its fatal state", "[sched][sim][parity][tdr]") {
  RuntimeOptions o = small_options();
  o.scheduler.tdr_limit_count = 2;
  o.scheduler.tdr_limit_time = 1s;
  auto rt = open_runtime(o);
  auto dev = rt->adapter().create_device({});
  auto& s = rt->scheduler();
  auto sem = make_alloc(*dev, kPage);
  std::vector<std::unique_ptr<ScheduledContext>> ctx;
  for (int i = 0; i < 4; ++i) {
    auto x = rt->create_context(*dev);
    REQUIRE(x);
    ctx.push_back(std::move(*x));
  }
  for (int i = 0; i < 3; ++i) {
    umd::CommandList hang;
    REQUIRE(hang.wait(sem.handle(), 0, abi::WaitMemFunc::Never, 0));
    auto f = s.submit(ctx[i]->get(), hang);
    REQUIRE(f);
    auto e = s.wait(*f, 5ms);
    REQUIRE_FALSE(e);
    CHECK(e.error().code == Errc::DeviceLost);
    if (i < 2) {
      CHECK_FALSE(s.fatal_error());
    }
  }
  REQUIRE(s.fatal_error());
  CHECK_THAT(s.fatal_error()->message, Catch::Contains("TdrLimitCount 2"));
  umd::CommandList ok;
  REQUIRE(ok.fill(sem.handle(), 0, 4, 1));
  auto r = s.submit(ctx[3]->get(), ok);  // an innocent context: the adapter is lost
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::DeviceLost);
  CHECK_THAT(r.error().message, Catch::Contains("adapter lost"));
  CHECK_FALSE(s.idle(1ms));
  CHECK(s.counters().recoveries == 3);
}

TEST_CASE("sched sim: a faulting submission (GART write fault) is recovered", "[sched][sim][parity][tdr]") {
  RuntimeOptions o = small_options();
  bool corrupt = false;
  std::uint64_t stray = 0;
  o.scheduler.after_patch = [&](void* dma, std::uint32_t start, std::uint32_t) {
    if (!corrupt) return;
    corrupt = false;
    // The first packet's address now points at an unmapped aperture page (read-only dummy).
    auto* w = static_cast<std::uint32_t*>(dma) + start / 4;
    w[abi::payload::write_data::kAddrLo] = static_cast<std::uint32_t>(stray);
    w[abi::payload::write_data::kAddrHi] = static_cast<std::uint32_t>(stray >> 32);
  };
  auto rt = open_runtime(o);
  stray = rt->device().aperture()->gpu_addr(rt->window().first_page() - 1);
  auto dev = rt->adapter().create_device({});
  auto& s = rt->scheduler();
  auto a = rt->create_context(*dev);
  auto b = rt->create_context(*dev);
  REQUIRE(a);
  REQUIRE(b);
  auto ta = make_alloc(*dev, kPage);
  auto tb = make_alloc(*dev, kPage);
  umd::CommandList warm;
  REQUIRE(warm.fill(ta.handle(), 0, kPage, 0));
  REQUIRE(warm.fill(tb.handle(), 0, kPage, 0));
  require_ok(s.wait(require_submit(s, (*b)->get(), warm), 2ms));

  umd::CommandList bad, good;
  const std::uint32_t v = 0x1234;
  REQUIRE(bad.write_data(ta.handle(), 0, &v, 1));
  REQUIRE(good.write_data(tb.handle(), 0, &v, 1));
  corrupt = true;
  const SubmissionId fa = require_submit(s, (*a)->get(), bad);
  const SubmissionId fb = require_submit(s, (*b)->get(), good);
  require_ok(s.wait(fb, 5ms));
  auto e = s.wait(fa, 1ms);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == Errc::DeviceLost);
  CHECK_THAT(e.error().message, Catch::Contains("device fault"));
  CHECK(s.reporter().counters().faulted == 1);
  CHECK(s.counters().recoveries == 1);
  CHECK(read_back(tb, kPage)[0] == 0x1234);
  CHECK(read_back(ta, kPage)[0] == 0);
  CHECK(rt->device().aperture()->dummy_intact());
  check_notifications(s.reporter());
}

TEST_CASE("sched sim: Present colour-fills sub-rectangles and blts to the primary", "[sched][sim][parity][present]") {
  auto rt = open_runtime();
  auto dev = rt->adapter().create_device({});
  REQUIRE(dev);
  auto ctx = rt->create_context(*dev);
  REQUIRE(ctx);
  constexpr std::uint32_t kW = 64, kH = 32, kPitch = kW * 4;
  auto back = make_alloc(*dev, kPitch * kH);
  auto primary = make_alloc(*dev, kPitch * kH);
  auto& s = rt->scheduler();
  const kmd::SurfaceDesc desc{kW, kH, kPitch, 4};
  const kmd::Rect whole{0, 0, kW, kH};

  // Colour fill of two sub-rectangles of the back buffer (no source), then a blt of it all.
  PresentRequest fill;
  fill.kind = kmd::PresentKind::ColorFill;
  fill.dst = back.handle();
  fill.color = 0xff336699u;
  fill.dst_desc = desc;
  fill.dst_rect = whole;
  fill.sub_rects = {{0, 0, 16, 8}, {32, 16, 64, 32}};
  auto f1 = s.present((*ctx)->get(), fill);
  if (!f1) FAIL(to_string(f1.error()));
  PresentRequest blt;
  blt.src = back.handle();
  blt.dst = primary.handle();
  blt.src_desc = blt.dst_desc = desc;
  blt.src_rect = blt.dst_rect = whole;
  auto f2 = s.present((*ctx)->get(), blt);
  if (!f2) FAIL(to_string(f2.error()));
  require_ok(s.wait(*f2, 2ms));
  CHECK(*s.query(*f1) == FenceStatus::Completed);

  auto v = read_back(primary, kPitch * kH);
  auto px = [&](std::uint32_t x, std::uint32_t y) { return v[y * kW + x]; };
  CHECK(px(0, 0) == 0xff336699u);
  CHECK(px(15, 7) == 0xff336699u);
  CHECK(px(16, 0) == 0);   // outside both sub-rectangles: the back buffer's first-use fill (0)
  CHECK(px(0, 8) == 0);
  CHECK(px(32, 16) == 0xff336699u);
  CHECK(px(63, 31) == 0xff336699u);
  CHECK(px(31, 31) == 0);

  // A Present that breaks a rule is refused with nothing queued.
  PresentRequest bad = blt;
  bad.src_rect = {0, 0, kW + 1, kH};
  auto refused = s.present((*ctx)->get(), bad);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::InvalidArgument);
  check_notifications(s.reporter());
}

TEST_CASE("sched sim: a Runtime needs the GART (user DMA buffers live in the aperture)", "[sched][sim][parity]") {
  RuntimeOptions o = small_options();
  o.device.gart = false;
  auto rt = Runtime::open(test::open_e2e_transport(), std::move(o));
  REQUIRE_FALSE(rt);
  CHECK(rt.error().code == Errc::Unsupported);
  CHECK(rt.error().message.find("GART") != std::string::npos);
}

TEST_CASE("DMA buffers where DmaBufferSegmentSet says: the kernel window's segment, or contiguous system memory",
          "[sched][dma_segment][parity]") {
  struct Policy : kmd::DefaultSizingPolicy {
    bool system_memory = false;
    kmd::DxgkContextInfo context_info(const kmd::Adapter& a, kmd::CreateDeviceFlags d, kmd::CreateContextFlags c,
                                      std::uint32_t node) const override {
      auto info = kmd::DefaultSizingPolicy::context_info(a, d, c, node);
      if (system_memory) info.dma_buffer_segment_set = {};
      return info;
    }
  };
  auto policy = std::make_shared<Policy>();
  RuntimeOptions o = small_options();
  o.sizing_policy = policy;
  auto rt = open_runtime(o);
  auto& s = rt->scheduler();
  auto dev = rt->adapter().create_device({});
  REQUIRE(dev);
  auto window_ctx = rt->create_context(*dev);
  policy->system_memory = true;
  auto system_ctx = rt->create_context(*dev);
  REQUIRE((window_ctx && system_ctx));
  CHECK((*window_ctx)->get().info().dma_buffer_segment_set == kmd::SegmentSet::of(rt->adapter().dma_buffer_segment()));
  CHECK((*system_ctx)->get().info().dma_buffer_segment_set.empty());

  auto a = make_alloc(*dev, 2 * kPage);
  auto b = make_alloc(*dev, 2 * kPage);
  umd::CommandList fill_a, copy_b;
  REQUIRE(fill_a.fill(a.handle(), 0, 2 * kPage, 0x5157e3u));
  REQUIRE(copy_b.copy(a.handle(), 0, b.handle(), 0, 2 * kPage));
  const std::uint32_t mapped = rt->window().mapped_buffers();
  // The system-memory context's packets run on the RTL from bus addresses (privileged entries,
  // no GART), in order with the window context's.
  require_ok(s.wait(require_submit(s, (*system_ctx)->get(), fill_a), 100ms));
  CHECK(rt->window().mapped_buffers() == mapped);
  require_ok(s.wait(require_submit(s, (*window_ctx)->get(), copy_b), 100ms));
  for (std::uint32_t w : read_back(b, 2 * kPage)) REQUIRE(w == 0x5157e3u);
  check_notifications(s.reporter());
}
