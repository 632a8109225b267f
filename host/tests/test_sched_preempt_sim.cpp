// Preemption that resumes, end to end on the Verilated RTL ("sim"): a long low-priority copy
// (recorded as 256 KiB COPY packets) lets a high-priority packet in once it has held the engine
// for the quantum, resumes from the packet it stopped at and completes with the right bytes; a
// healthy copy longer than TdrDelay is put back at each overrun (it made progress) and is never
// treated as hung. The hang rule itself (a second overrun without progress) is in
// test_sched_sim.cpp's hang tests. Only "sim": the reference model preempts between entries.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kCopyBytes = 4u << 20;  // 16 COPY packets

struct CopyRig {
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<kmd::Device> dev;
  std::unique_ptr<ScheduledContext> low, high;
  std::vector<kmd::Allocation> al;  // src, dst, small

  explicit CopyRig(RuntimeOptions o) {
    auto r = Runtime::open(test::open_tb_transport("sim"), std::move(o));
    if (!r) FAIL(to_string(r.error()));
    rt = std::move(*r);
    auto d = rt->adapter().create_device({});
    REQUIRE(d);
    dev = std::make_unique<kmd::Device>(std::move(*d));
    auto l = rt->create_context(*dev);
    auto h = rt->create_context(*dev);
    REQUIRE(l);
    REQUIRE(h);
    low = std::move(*l);
    high = std::move(*h);
    REQUIRE(rt->scheduler().set_priority(high->get(), 1));
    for (std::uint32_t bytes : {kCopyBytes, kCopyBytes, 4096u}) {
      const auto i = kmd::AllocationInfo::placed(bytes, kmd::SegmentSet::of(1), 1, kmd::AllocationInfoFlags::kCpuVisible);
      auto a = dev->create_allocation(i);
      if (!a) FAIL(to_string(a.error()));
      al.push_back(std::move(*a));
    }
    // The source's bytes, from the CPU; everything resident before the measurement.
    auto p = al[0].lock();
    REQUIRE(p);
    auto* w = static_cast<std::uint32_t*>(*p);
    for (std::uint32_t i = 0; i < kCopyBytes / 4; ++i) w[i] = i * 2654435761u;
    REQUIRE(al[0].unlock());
    umd::CommandList warm;
    REQUIRE(warm.copy(al[0].handle(), 0, al[2].handle(), 0, 4096));  // pages the source in
    REQUIRE(warm.fill(al[1].handle(), 0, 4096, 0));
    REQUIRE(warm.fill(al[2].handle(), 0, 4096, 0));
    auto f = s().submit(low->get(), warm);
    REQUIRE(f);
    // Paging 8 MiB in (longer than a short TdrDelay: the paging packets overrun and continue).
    if (Status st = s().wait(*f, 50ms); !st) FAIL(to_string(st.error()));
  }
  Scheduler& s() { return rt->scheduler(); }
  std::chrono::nanoseconds now() { return rt->device().transport().now(); }
  SubmissionId copy() {
    umd::CommandList cl;
    REQUIRE(cl.copy(al[0].handle(), 0, al[1].handle(), 0, kCopyBytes));
    auto f = s().submit(low->get(), cl);
    if (!f) FAIL(to_string(f.error()));
    return *f;
  }
  void check_copy() {
    auto p = al[1].lock();
    REQUIRE(p);
    const auto* w = static_cast<const std::uint32_t*>(*p);
    std::uint32_t bad = 0;
    for (std::uint32_t i = 0; i < kCopyBytes / 4; ++i) bad += w[i] != i * 2654435761u;
    REQUIRE(al[1].unlock());
    CHECK(bad == 0);
  }
};

/// DMA_COMPLETED notifications: strictly increasing (no fence lost to the resets, none twice).
void check_notifications(const FenceReporter& r) {
  RingFence last;
  std::size_t n = 0;
  for (const auto& e : r.log()) {
    if (e.kind != FenceNotification::Kind::DmaCompleted) continue;
    CHECK(e.fence > last);
    last = e.fence;
    ++n;
  }
  CHECK(n == r.counters().reported);
}

RuntimeOptions options() {
  RuntimeOptions o;
  o.device.aperture.table_pages = 2048;
  o.kernel_window_pages = kernel_window_pages_for(16);
  o.scheduler.tdr_delay = 50ms;
  o.scheduler.preempt_timeout = 50us;
  o.scheduler.preempt_quantum = 200us;
  return o;
}

}  // namespace

TEST_CASE("sched preempt sim: a long low-priority copy lets a high-priority packet in, resumes and completes",
          "[sched][sim][preempt]") {
  CopyRig r(options());
  auto& s = r.s();
  const SubmissionId copy = r.copy();
  // The copy runs past the quantum.
  CHECK(s.wait(copy, 400us).error().code == Errc::Timeout);
  const auto t0 = r.now();
  umd::CommandList one;
  const std::uint32_t v = 0x600d;
  REQUIRE(one.write_data(r.al[2].handle(), 0, &v, 1));
  auto high = s.submit(r.high->get(), one);
  REQUIRE(high);
  REQUIRE(s.wait(*high, 5ms));
  const auto latency = r.now() - t0;
  CHECK(*s.query(copy) == FenceStatus::Pending);  // it let the high packet in
  REQUIRE(s.wait(copy, 50ms));
  const auto& c = s.counters();
  CHECK(c.priority_preemptions == 1);
  CHECK(c.preemptions == 1);
  CHECK(c.preempt_requeues == 1);
  CHECK(c.resumed_packets == 1);
  CHECK(c.recoveries == 0);
  CHECK(s.preemption_times().resumed == 1);
  // After the reset the ring holds the high packet (entry 0), then the copy from where it
  // stopped: at a COPY packet past the first (it made progress before the preemption).
  const abi::RingEntry resumed = r.rt->device().ring_entry(1);
  CHECK(resumed.context_id == static_cast<std::uint32_t>(r.low->get().id()));
  CHECK(resumed.start_offset > 0);
  // The preemption log names the copy, where it resumed and when.
  REQUIRE(s.preemption_log().size() == 1);
  const Scheduler::PreemptionRecord& rec = s.preemption_log().back();
  CHECK(rec.submission == copy);
  CHECK(rec.context == r.low->get().id());
  CHECK_FALSE(rec.overrun);
  CHECK(rec.resume_offset == resumed.start_offset);
  CHECK(rec.taken_back_at >= rec.requested_at);
  REQUIRE(rec.resumed_at);
  CHECK(*rec.resumed_at - rec.requested_at == s.preemption_times().last_request_to_resume);
  CHECK(rec.resumed_fence > rec.fence);
  r.check_copy();
  check_notifications(s.reporter());
  auto p = r.al[2].lock();
  REQUIRE(p);
  CHECK(*static_cast<const std::uint32_t*>(*p) == 0x600d);
  REQUIRE(r.al[2].unlock());
  WARN("high-priority packet behind a 4 MiB copy: " << static_cast<double>(latency.count()) / 1000.0 << " us submit to completion; "
       << "preemption request to resume " << static_cast<double>(s.preemption_times().last_request_to_resume.count()) / 1000.0 << " us");
  CHECK(latency < 1ms);
}

TEST_CASE("sched preempt sim: a healthy copy longer than TdrDelay is put back at each overrun and completes",
          "[sched][sim][preempt][tdr]") {
  RuntimeOptions o = options();
  o.scheduler.tdr_delay = 500us;
  CopyRig r(o);
  auto& s = r.s();
  const Scheduler::Counters before = s.counters();  // the warm-up's paging overran too: continued
  const SubmissionId copy = r.copy();
  REQUIRE(s.wait(copy, 50ms));
  const auto& c = s.counters();
  const auto overruns = c.overruns - before.overruns;
  CHECK(overruns >= 1);
  CHECK(c.preempt_requeues - before.preempt_requeues == overruns);
  CHECK(c.resumed_packets - before.resumed_packets == overruns);
  CHECK(c.recoveries == 0);
  CHECK_FALSE(s.context_lost(r.low->get()));
  r.check_copy();
  check_notifications(s.reporter());
  WARN("4 MiB copy with TdrDelay 500 us: " << overruns << " overruns, put back and resumed each time");
}
