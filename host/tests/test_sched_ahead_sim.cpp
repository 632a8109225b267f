// Paging that runs ahead and waits that end, end to end on the Verilated RTL: a working set four
// times the memory segment cycled through the scheduler with no wait between submissions (every
// eviction and page-in in flight behind rendering), checked byte for byte; a submission whose
// paging sits behind a hung packet returns at once; the caller's deadlines are typed timeouts
// naming the submission, the allocation and the paging fence they waited for.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <random>
#include <vector>

#include <fmt/format.h>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPage = 4096;

std::unique_ptr<Runtime> open_runtime(RuntimeOptions o) {
  auto rt = Runtime::open(test::open_tb_transport(test::e2e_backend()), std::move(o));
  if (!rt) FAIL(to_string(rt.error()));
  return std::move(*rt);
}

kmd::AllocationInfo mem_info(std::uint64_t bytes, bool evict_to_aperture = false) {
  auto i = kmd::AllocationInfo::placed(bytes, kmd::SegmentSet::of(1), 1, kmd::AllocationInfoFlags::kCpuVisible);
  if (evict_to_aperture) i.eviction_segments = kmd::SegmentSet::of(2);
  return i;
}

void require_ok(const Status& s) {
  if (!s) FAIL(to_string(s.error()));
}

}  // namespace

TEST_CASE("paging ahead on the RTL: a working set 4x the memory segment, no waits between submissions, every byte checked",
          "[sched][sim][parity][pressure][paging_ahead]") {
  constexpr std::uint32_t kAllocBytes = 64 * 1024;
  constexpr std::uint32_t kQuarter = kAllocBytes / 4;
  constexpr unsigned kAllocs = 16;  // 1 MiB: four times the memory segment
  constexpr unsigned kRounds = 3;
  RuntimeOptions o;
  o.device.aperture.table_pages = 2048;
  o.memory_segment_bytes = 256 * 1024;
  o.kernel_window_pages = kernel_window_pages_for(16);
  o.scheduler.tdr_delay = 50ms;  // healthy work only
  auto rt = open_runtime(o);
  auto dev = rt->adapter().create_device({});
  REQUIRE(dev);
  auto ctx = rt->create_context(*dev);
  REQUIRE(ctx);
  auto& s = rt->scheduler();
  std::vector<kmd::Allocation> allocs;
  for (unsigned i = 0; i < kAllocs; ++i) {
    auto a = dev->create_allocation(mem_info(kAllocBytes, i % 2 == 0));  // even ones evict to the aperture
    if (!a) FAIL(to_string(a.error()));
    allocs.push_back(std::move(*a));
  }
  // The model: each allocation is four quarters of one 32-bit value each.
  std::vector<std::array<std::uint32_t, 4>> model(kAllocs);
  std::vector<SubmissionId> subs;
  for (unsigned i = 0; i < kAllocs; ++i) {
    umd::CommandList cl;
    for (std::uint32_t q = 0; q < 4; ++q) {
      model[i][q] = 0xA000'0000u | (i << 8) | q;
      REQUIRE(cl.fill(allocs[i].handle(), q * kQuarter, kQuarter, model[i][q]));
    }
    auto f = s.submit((*ctx)->get(), cl);
    if (!f) FAIL(to_string(f.error()));
    subs.push_back(*f);
  }
  // Copies between allocations in a shuffled order: both must be resident at once, everything
  // else is evicted and paged back in while earlier copies still run.
  std::mt19937 rng(20261124);
  for (unsigned round = 0; round < kRounds; ++round) {
    for (unsigned n = 0; n < kAllocs; ++n) {
      const unsigned src = rng() % kAllocs;
      unsigned dst = rng() % kAllocs;
      if (dst == src) dst = (dst + 1) % kAllocs;
      const std::uint32_t qs = rng() % 4, qd = rng() % 4;
      umd::CommandList cl;
      REQUIRE(cl.copy(allocs[src].handle(), qs * kQuarter, allocs[dst].handle(), qd * kQuarter, kQuarter));
      model[dst][qd] = model[src][qs];
      auto f = s.submit((*ctx)->get(), cl);
      if (!f) FAIL(to_string(f.error()));
      subs.push_back(*f);
    }
  }
  const auto& ex = rt->executor().counters();
  CHECK(ex.ran_ahead == ex.buffers);  // no paging buffer was waited for on its own
  CHECK(rt->memory_manager().evictions() > kAllocs);
  for (SubmissionId f : subs) require_ok(s.wait(f, 1s));
  require_ok(s.idle(1s));
  CHECK(s.counters().recoveries == 0);
  for (unsigned i = 0; i < kAllocs; ++i) {
    auto p = allocs[i].lock();
    if (!p) FAIL(to_string(p.error()));
    const auto* w = static_cast<const std::uint32_t*>(*p);
    for (std::uint32_t q = 0; q < 4; ++q) {
      const auto* begin = w + q * kQuarter / 4;
      const auto* bad = std::find_if(begin, begin + kQuarter / 4, [&](std::uint32_t x) { return x != model[i][q]; });
      if (bad != begin + kQuarter / 4)
        FAIL("allocation " << i << " quarter " << q << " dword " << (bad - begin) << ": " << std::hex << *bad
                           << " instead of " << model[i][q]);
    }
    REQUIRE(allocs[i].unlock());
  }
  CHECK(rt->executor().in_flight() == 0);
  WARN("paging ahead: " << ex.buffers << " paging buffers, all ran ahead; " << rt->memory_manager().evictions()
                        << " evictions; simulated " << rt->device().transport().now().count() / 1000 << " us");
}

TEST_CASE("paging ahead on the RTL: paging behind a hung packet does not block submit, the deadlines name what they waited for",
          "[sched][sim][parity][tdr][deadline][paging_ahead]") {
  RuntimeOptions o;
  o.device.aperture.table_pages = 2048;
  o.kernel_window_pages = kernel_window_pages_for(16);
  o.scheduler.tdr_delay = 300us;
  o.scheduler.preempt_timeout = 50us;
  auto rt = open_runtime(o);
  auto dev = rt->adapter().create_device({});
  auto hang = rt->create_context(*dev);
  auto work = rt->create_context(*dev);
  REQUIRE(hang);
  REQUIRE(work);
  auto& s = rt->scheduler();
  auto& mm = rt->memory_manager();
  auto sem = dev->create_allocation(mem_info(kPage));
  auto b = dev->create_allocation(mem_info(kPage));
  auto c = dev->create_allocation(mem_info(kPage));
  REQUIRE(sem);
  REQUIRE(b);
  REQUIRE(c);
  umd::CommandList warm;
  REQUIRE(warm.fill(sem->handle(), 0, kPage, 0));
  require_ok(s.wait(*s.submit((*hang)->get(), warm), 2ms));

  umd::CommandList stuck;
  REQUIRE(stuck.wait(sem->handle(), 0, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 16));  // never written
  auto lost = s.submit((*hang)->get(), stuck);
  REQUIRE(lost);

  // b's first touch is paged behind the hung packet: submit() returns at once.
  const auto t0 = rt->device().transport().now();
  umd::CommandList cl;
  const std::uint32_t v = 0x600d'f00du;
  REQUIRE(cl.write_data(b->handle(), 8, &v, 1));
  auto sub = s.submit((*work)->get(), cl);
  REQUIRE(sub);
  CHECK(rt->device().transport().now() - t0 < o.scheduler.tdr_delay);
  CHECK(s.counters().recoveries == 0);
  CHECK(*s.query(*sub) == FenceStatus::Pending);

  // A wait shorter than TdrDelay is a Timeout naming the submission.
  auto w = s.wait(*sub, 50us);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::Timeout);
  CHECK_THAT(w.error().message, Catch::Contains(fmt::format("submission fence {}", *sub)));

  // c is only paged in (no rendering): its lock waits for its own paging fence, behind the hang.
  REQUIRE(mm.make_resident({{c->handle(), true}}));
  const RingFence paging = mm.query(c->handle())->paging_fence;
  REQUIRE(paging > 0);
  auto lk = mm.lock(c->handle(), 20us);
  REQUIRE_FALSE(lk);
  CHECK(lk.error().code == Errc::Timeout);
  // The CPU cannot reach the memory segment: lock moved c to system memory, one more paging
  // buffer behind the hang, and waited for that one.
  const RingFence waited = mm.query(c->handle())->paging_fence;
  CHECK(waited > paging);
  CHECK_THAT(lk.error().message, Catch::Contains(fmt::format("allocation {:#x}", c->handle().value)) &&
                                     Catch::Contains(fmt::format("paging fence {}", waited)));
  CHECK(mm.query(c->handle())->lock_count == 0);

  // With time for TDR, everything but the hung context completes, with the right bytes.
  require_ok(s.wait(*sub, 10ms));
  CHECK(s.counters().recoveries == 1);
  CHECK(s.wait(*lost, 1ms).error().code == Errc::DeviceLost);
  auto pc = mm.lock(c->handle());
  if (!pc) FAIL(to_string(pc.error()));
  CHECK(static_cast<const std::uint32_t*>(*pc)[0] == 0);  // the FILL of its first touch
  REQUIRE(mm.unlock(c->handle()));
  auto pb = b->lock();
  if (!pb) FAIL(to_string(pb.error()));
  CHECK(static_cast<const std::uint32_t*>(*pb)[2] == v);
  REQUIRE(b->unlock());
}
