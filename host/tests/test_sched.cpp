// Unit tests of the scheduler's pure parts: the splitting walk, fence reporting, the TDR limit
// window, the LastAbortedFenceId check, the DMA-buffer pool's mapper and describe()'s window.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>

#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/command_pools.hpp"
#include "sgpu/sched/fences.hpp"
#include "sgpu/sched/split.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/vidmm/paging.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

PatchLocation entry(std::uint32_t allocation, std::uint32_t slot, std::uint32_t split, std::uint32_t patch) {
  PatchLocation p;
  p.allocation_index = allocation;
  p.slot_id_and_reserved = slot;
  p.split_offset = split;
  p.patch_offset = patch;
  return p;
}

/// Fits while the listed allocations' sizes sum to at most `capacity` (a memory segment).
struct CapacityModel {
  std::map<std::uint32_t, std::uint64_t> size;
  std::uint64_t capacity = 0;
  std::vector<std::vector<std::uint32_t>> asked;
  FitsFn fits() {
    return [this](const std::vector<std::uint32_t>& set) -> Result<bool> {
      asked.push_back(set);
      std::uint64_t sum = 0;
      for (auto a : set) sum += size.at(a);
      if (sum > capacity) return Error::make(Errc::OutOfMemory, Touched::Hardware, "no room");
      return true;
    };
  }
};

}  // namespace

TEST_CASE("split: a list that fits is one portion covering the whole range", "[sched][split]") {
  std::vector<PatchLocation> p{entry(1, 0, 0, 4), entry(2, 1, 0, 12), entry(1, 0, 40, 44)};
  CapacityModel m{{{1, 10}, {2, 10}}, 100, {}};
  std::vector<SplitPortion> out;
  auto n = walk_split(p.data(), 3, 256, 0, 80, m.fits(), [&](const SplitPortion& s) {
    out.push_back(s);
    return ok_status();
  });
  REQUIRE(n);
  CHECK(*n == 1);
  REQUIRE(out.size() == 1);
  CHECK(out[0].dma_start == 0);
  CHECK(out[0].dma_end == 80);
  CHECK(out[0].patch_start == 0);
  CHECK(out[0].patch_length == 3);
  CHECK(out[0].allocations == std::vector<std::uint32_t>{1, 2});
}

TEST_CASE("split: portions end at the SplitOffset of the packet that does not fit", "[sched][split]") {
  // Packets at 0 (a->b), 40 (c->d), 80 (a->d), 120 (fence, no address). Room for two at once.
  std::vector<PatchLocation> p{entry(1, 0, 0, 4),   entry(2, 1, 0, 12),  entry(3, 0, 40, 44),
                               entry(4, 1, 40, 52), entry(1, 0, 80, 84), entry(4, 1, 80, 92)};
  CapacityModel m{{{1, 1}, {2, 1}, {3, 1}, {4, 1}}, 2, {}};
  std::vector<SplitPortion> out;
  auto n = walk_split(p.data(), 6, 256, 0, 140, m.fits(), [&](const SplitPortion& s) {
    out.push_back(s);
    return ok_status();
  });
  REQUIRE(n);
  CHECK(*n == 3);
  REQUIRE(out.size() == 3);
  CHECK(out[0].dma_start == 0);
  CHECK(out[0].dma_end == 40);
  CHECK(out[0].patch_start == 0);
  CHECK(out[0].patch_length == 2);
  CHECK(out[0].allocations == std::vector<std::uint32_t>{1, 2});
  CHECK(out[0].still_bound == std::vector<std::uint32_t>{1, 2});
  CHECK(out[1].dma_start == 40);
  CHECK(out[1].dma_end == 80);
  CHECK(out[1].patch_start == 2);
  CHECK(out[1].patch_length == 2);
  CHECK(out[1].allocations == std::vector<std::uint32_t>{3, 4});
  CHECK(out[2].dma_start == 80);
  CHECK(out[2].dma_end == 140);  // the fence packet rides with the last portion
  CHECK(out[2].patch_start == 4);
  CHECK(out[2].patch_length == 2);
  CHECK(out[2].allocations == std::vector<std::uint32_t>{1, 4});
  // Portions tile the range and the patch list exactly.
  for (std::size_t i = 1; i < out.size(); ++i) {
    CHECK(out[i].dma_start == out[i - 1].dma_end);
    CHECK(out[i].patch_start == out[i - 1].patch_start + out[i - 1].patch_length);
  }
}

TEST_CASE("split: a packet that cannot fit alone fails typed, after the portions before it", "[sched][split]") {
  std::vector<PatchLocation> p{entry(1, 0, 0, 4), entry(2, 0, 40, 44), entry(3, 1, 40, 52)};
  CapacityModel m{{{1, 1}, {2, 2}, {3, 2}}, 3, {}};
  std::vector<SplitPortion> out;
  auto n = walk_split(p.data(), 3, 256, 0, 100, m.fits(), [&](const SplitPortion& s) {
    out.push_back(s);
    return ok_status();
  });
  REQUIRE_FALSE(n);
  CHECK(n.error().code == Errc::OutOfMemory);
  CHECK_THAT(n.error().message, Catch::Contains("DMA offset 40") && Catch::Contains("[2, 3]"));
  REQUIRE(out.size() == 1);  // the first packet was emitted before the walk gave up
  CHECK(out[0].dma_end == 40);
}

TEST_CASE("split: the list is checked before any callback", "[sched][split]") {
  CapacityModel m{{{1, 1}}, 10, {}};
  int emitted = 0;
  const auto emit = [&](const SplitPortion&) {
    ++emitted;
    return ok_status();
  };
  SECTION("SlotId beyond MaxAllocationListSlotId") {
    std::vector<PatchLocation> p{entry(1, 4, 0, 4)};
    auto n = walk_split(p.data(), 1, 4, 0, 20, m.fits(), emit);
    REQUIRE_FALSE(n);
    CHECK(n.error().code == Errc::InvalidArgument);
    CHECK_THAT(n.error().message, Catch::Contains("SlotId 4 >= MaxAllocationListSlotId 4"));
  }
  SECTION("decreasing SplitOffset") {
    std::vector<PatchLocation> p{entry(1, 0, 8, 12), entry(1, 0, 4, 8)};
    auto n = walk_split(p.data(), 2, 256, 0, 20, m.fits(), emit);
    REQUIRE_FALSE(n);
    CHECK_THAT(n.error().message, Catch::Contains("entry 1 SplitOffset 4 is before entry 0's 8"));
  }
  SECTION("reserved bits") {
    std::vector<PatchLocation> p{entry(1, 0x01000000u, 0, 4)};
    auto n = walk_split(p.data(), 1, 256, 0, 20, m.fits(), emit);
    REQUIRE_FALSE(n);
    CHECK_THAT(n.error().message, Catch::Contains("Reserved"));
  }
  CHECK(emitted == 0);
  CHECK(m.asked.empty());
}

TEST_CASE("split: errors other than OutOfMemory stop the walk as they are", "[sched][split]") {
  std::vector<PatchLocation> p{entry(1, 0, 0, 4)};
  auto n = walk_split(
      p.data(), 1, 256, 0, 20,
      [](const std::vector<std::uint32_t>&) -> Result<bool> {
        return Error::make(Errc::Timeout, Touched::Hardware, "paging timed out");
      },
      [](const SplitPortion&) { return ok_status(); });
  REQUIRE_FALSE(n);
  CHECK(n.error().code == Errc::Timeout);
}

TEST_CASE("fences: DMA_COMPLETED is reported only for a newer fence", "[sched][fences]") {
  FenceReporter r;
  for (RingFence f{1}; f <= 5; ++f) r.note_submitted(f);
  auto a = r.on_completed(RingFence{2});
  REQUIRE(a);
  CHECK(*a == std::optional<RingFence>{RingFence{2}});
  auto dup = r.on_completed(RingFence{2});  // the same write-back value seen again
  REQUIRE(dup);
  CHECK_FALSE(dup->has_value());
  auto stale = r.on_completed(RingFence{1});
  REQUIRE(stale);
  CHECK_FALSE(stale->has_value());
  auto q = r.query_current(RingFence{2});  // QueryCurrentFence: nothing newer, nothing reported
  REQUIRE(q);
  CHECK_FALSE(q->has_value());
  auto missed = r.query_current(RingFence{4});  // a missed interrupt caught by QueryCurrentFence
  REQUIRE(missed);
  CHECK(*missed == std::optional<RingFence>{RingFence{4}});
  CHECK(r.last_reported() == 4);
  CHECK(r.counters().reported == 2);
  CHECK(r.counters().query_reported == 1);
  CHECK(r.counters().stale == 3);
  // The log holds each reported fence once, increasing.
  std::vector<RingFence> reported;
  for (const auto& n : r.log())
    if (n.kind == FenceNotification::Kind::DmaCompleted) reported.push_back(n.fence);
  CHECK(reported == std::vector<RingFence>{RingFence{2}, RingFence{4}});
}

TEST_CASE("fences: a fence never submitted is the fatal invalid-fence report", "[sched][fences]") {
  FenceReporter r;
  r.note_submitted(RingFence{3});
  auto bad = r.on_completed(RingFence{4});
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::InvalidArgument);
  CHECK_THAT(bad.error().message, Catch::Contains("fence 4") && Catch::Contains("last fence submitted is 3"));
  CHECK(r.last_reported() == 0);
}

TEST_CASE("fences: LastAbortedFenceId must lie in [last completed, last submitted]", "[sched][fences][tdr]") {
  CHECK(check_last_aborted(RingFence{5}, RingFence{5}, RingFence{9}));
  CHECK(check_last_aborted(RingFence{9}, RingFence{5}, RingFence{9}));
  CHECK(check_last_aborted(RingFence{7}, RingFence{5}, RingFence{9}));
  auto low = check_last_aborted(RingFence{4}, RingFence{5}, RingFence{9});
  REQUIRE_FALSE(low);
  CHECK_THAT(low.error().message, Catch::Contains("LastAbortedFenceId 4") && Catch::Contains("[last completed 5, "
                                                                                             "last submitted 9]"));
  CHECK_FALSE(check_last_aborted(RingFence{10}, RingFence{5}, RingFence{9}));
}

TEST_CASE("tdr: more than TdrLimitCount recoveries within TdrLimitTime is fatal", "[sched][tdr]") {
  TdrLimiter l(5, 60s);
  for (int i = 0; i < 5; ++i) CHECK(l.record(std::chrono::seconds(i * 10)));
  CHECK_FALSE(l.record(45s));  // the sixth within a minute
  TdrLimiter spread(5, 60s);
  for (int i = 0; i < 10; ++i) CHECK(spread.record(std::chrono::seconds(i * 13)));  // never six in 60 s
  CHECK(spread.total() == 10);
  CHECK(spread.in_window() <= 5);
  TdrLimiter tight(1, 1ms);
  CHECK(tight.record(0ms));
  CHECK(tight.record(2ms));   // the first left the window
  CHECK_FALSE(tight.record(2500us));
}

namespace {
struct FakeMapper final : kmd::DmaBufferMapper {
  std::uint64_t next = 0x1000000;
  std::map<std::uint64_t, std::size_t> mapped;
  bool full = false;
  Result<std::uint64_t> map(const DmaMemory& m) override {
    if (full) return Error::make(Errc::OutOfMemory, Touched::Nothing, "window full");
    const auto a = next;
    next += m.size();
    mapped[a] = m.size();
    return a;
  }
  void unmap(std::uint64_t gpu, std::size_t bytes) noexcept override {
    auto it = mapped.find(gpu);
    if (it != mapped.end() && it->second == bytes) mapped.erase(it);
  }
};
}  // namespace

TEST_CASE("pools: DMA buffers are mapped on creation and unmapped when freed", "[sched][pools]") {
  MockTransport mock;
  TransportSystemMemory sys(mock);
  FakeMapper mapper;
  {
    kmd::DmaBufferPool pool(sys, 8192, 16, 1);
    pool.set_mapper(&mapper);
    auto a = pool.acquire();
    auto b = pool.acquire();
    REQUIRE(a);
    REQUIRE(b);
    CHECK(a->gpu_address != 0);
    CHECK(b->gpu_address != a->gpu_address);
    CHECK(mapper.mapped.size() == 2);
    const auto ga = a->gpu_address;
    REQUIRE(pool.release(std::move(*a)));
    REQUIRE(pool.release(std::move(*b)));
    CHECK(mapper.mapped.size() == 2);  // free buffers stay mapped for reuse
    auto again = pool.acquire();
    REQUIRE(again);
    CHECK((again->gpu_address == ga || mapper.mapped.count(again->gpu_address)));
    REQUIRE(pool.release(std::move(*again)));
    pool.trim();  // keeps one
    CHECK(mapper.mapped.size() == 1);
    mapper.full = true;
    auto x = pool.acquire();  // the free one
    REQUIRE(x);
    auto y = pool.acquire();  // needs a new mapping: the mapper's error, nothing leaked
    REQUIRE_FALSE(y);
    CHECK(y.error().code == Errc::OutOfMemory);
    REQUIRE(pool.release(std::move(*x)));
  }
  CHECK(mapper.mapped.empty());  // the pool's destructor unmapped its free buffers
}

TEST_CASE("describe: reserved aperture pages become the DMA-buffer segment at the top of the aperture",
          "[sched][kmd]") {
  DeviceInfo info;
  info.page_shift = 12;
  info.has_gart = true;
  info.aperture_segment = {0x18000000000000ull, 1ull << 28};
  info.has_memory_segment = true;
  info.memory_segment = {0x10000000000000ull, 1ull << 28};
  auto plain = kmd::describe(info);
  auto reserved = kmd::describe(info, 1025);
  REQUIRE(plain.segments.size() == 2);
  CHECK(plain.dma_buffer_segment_id == kSystemMemory);
  REQUIRE(reserved.segments.size() == 3);
  CHECK(reserved.segments[1].base_address == plain.segments[1].base_address);
  CHECK(reserved.segments[1].size == plain.segments[1].size - 1025 * 4096);
  CHECK(reserved.segments[1].commit_limit == reserved.segments[1].size);
  CHECK(reserved.caps.aperture_segment_commit_limit == reserved.segments[1].size);
  CHECK(reserved.segments[0].size == plain.segments[0].size);
  REQUIRE(reserved.dma_buffer_segment_id == 3);
  CHECK(reserved.segments[2].is_aperture());
  CHECK(reserved.segments[2].base_address == reserved.segments[1].end_address());
  CHECK(reserved.segments[2].size == 1025 * 4096);
  auto all = kmd::describe(info, 1u << 16);  // nothing left for the memory manager's aperture segment
  REQUIRE(all.segments.size() == 2);
  CHECK(all.dma_buffer_segment_id == 2);
  CHECK(all.segments[1].size == info.aperture_segment.size);
}
