// Randomized create/destroy/make-resident/evict sequences checked against a simple model, and a
// pressure test: a working set far larger than the memory segment cycles through eviction with
// every byte verified (on the reference executor; on the RTL once the device executes paging).
#include <map>
#include <random>

#include "vidmm_fixture.hpp"

using namespace vidmm_test;

namespace {

// The model: which allocations exist, their size, and where they are resident. The allocator's
// used bytes per segment must equal the sum of resident sizes, ranges must not overlap, and
// every allocation keeps the bytes the "GPU" last wrote.
struct Model {
  struct A {
    std::uint64_t size;
    std::uint32_t seed;
    bool written;
  };
  std::map<std::uint64_t, A> live;
};

void check_against_model(Fixture& f, const Model& m) {
  auto& mm = f.mm();
  REQUIRE(mm.live_allocations() == m.live.size());
  std::map<SegmentId, std::uint64_t> used;
  std::map<std::uint64_t, std::uint64_t> ranges;  // gpu address -> size
  for (const auto& [h, a] : m.live) {
    auto s = mm.query(AllocationHandle{h});
    REQUIRE(s);
    REQUIRE(s->size == a.size);
    if (s->placement.segment == 0) continue;
    used[s->placement.segment] += a.size;
    auto next = ranges.lower_bound(s->placement.gpu_address);
    REQUIRE((next == ranges.end() || next->first >= s->placement.gpu_address + a.size));
    if (next != ranges.begin()) REQUIRE(std::prev(next)->first + std::prev(next)->second <= s->placement.gpu_address);
    ranges.emplace(s->placement.gpu_address, a.size);
    if (a.written) REQUIRE(gpu_check(f.executor, s->placement.gpu_address, 4096, a.seed));  // first page
  }
  for (SegmentId id = 1; id <= mm.segment_count(); ++id) REQUIRE(mm.allocator(id).used_bytes() == used[id]);
  REQUIRE(mm.aperture_committed() == used[kAp]);
}

}  // namespace

TEST_CASE("randomized create/destroy/make-resident/evict matches the model", "[vidmm][random]") {
  for (std::uint32_t seed : {1u, 2u, 3u, 42u}) {
    INFO("seed " << seed);
    Fixture f(two_segments(512 * 1024, 512 * 1024));
    auto& mm = f.mm();
    std::mt19937 rng(seed);
    Model m;
    std::uint32_t next_seed = 1;
    auto pick = [&]() {
      auto it = m.live.begin();
      std::advance(it, std::uniform_int_distribution<std::size_t>(0, m.live.size() - 1)(rng));
      return it;
    };
    for (int step = 0; step < 1500; ++step) {
      const int action = std::uniform_int_distribution<int>(0, 9)(rng);
      if (action < 3 || m.live.empty()) {
        const std::uint64_t size = kPage * std::uniform_int_distribution<std::uint64_t>(1, 24)(rng);
        const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
        auto info = kind == 0 ? alloc_info(size, {kMem}) : kind == 1 ? alloc_info(size, {kMem}, SegmentSet::of(kAp))
                                                                     : alloc_info(size, {kAp, kMem});
        auto h = mm.create_allocation(info);
        REQUIRE(h);
        m.live[h->value] = {size, 0, false};
      } else if (action < 5) {
        auto it = pick();
        REQUIRE(mm.destroy_allocation(AllocationHandle{it->first}));
        m.live.erase(it);
      } else if (action < 9) {
        // A submission of 1-4 allocations; some write.
        std::vector<AllocationListEntry> list;
        const int n = std::uniform_int_distribution<int>(1, 4)(rng);
        for (int i = 0; i < n; ++i) list.push_back({AllocationHandle{pick()->first}, (rng() & 1) != 0});
        auto p = mm.make_resident(list);
        if (!p) {
          REQUIRE(p.error().code == Errc::OutOfMemory);  // too big together; never anything else
        } else {
          for (std::size_t i = 0; i < list.size(); ++i) {
            if (!list[i].write) continue;
            auto& a = m.live[list[i].allocation.value];
            a.seed = next_seed++;
            a.written = true;
            gpu_fill(f.executor, (*p)[i].gpu_address, 4096, a.seed);
          }
        }
      } else {
        REQUIRE(mm.evict(AllocationHandle{pick()->first}));
      }
      if (step % 50 == 0) check_against_model(f, m);
    }
    check_against_model(f, m);
    for (auto& [h, a] : m.live) REQUIRE(mm.destroy_allocation(AllocationHandle{h}));
    CHECK(mm.allocator(kMem) == vidmm::SegmentAllocator(512 * 1024, kPage));
    CHECK(mm.allocator(kAp) == vidmm::SegmentAllocator(512 * 1024, kPage));
    CHECK(f.executor.mapped_pages(kAp) == 0);
    CHECK(f.executor.counters().dummy_page_writes == 0);
  }
}

TEST_CASE("pressure: 4x the memory segment cycles through eviction, every byte verified", "[vidmm][pressure]") {
  for (bool via_aperture : {false, true}) {
    INFO("eviction segment: " << (via_aperture ? "aperture" : "system memory"));
    Fixture f(two_segments(256 * 1024, 512 * 1024));
    auto& mm = f.mm();
    constexpr int kCount = 32;                  // 32 x 32 KiB = 1 MiB = 4x the memory segment
    constexpr std::size_t kBytes = 32 * 1024;
    std::vector<AllocationHandle> h;
    for (int i = 0; i < kCount; ++i)
      h.push_back(*mm.create_allocation(alloc_info(kBytes, {kMem}, via_aperture ? SegmentSet::of(kAp) : SegmentSet{})));
    std::vector<std::uint32_t> seed(kCount, 0);
    std::mt19937 rng(7);
    for (int round = 0; round < 300; ++round) {
      // Each submission uses three allocations; one of them is rewritten.
      std::vector<AllocationListEntry> list;
      for (int k = 0; k < 3; ++k) list.push_back({h[(round * 3 + k * 11) % kCount], k == 0});
      auto p = mm.make_resident(list);
      REQUIRE(p);
      for (std::size_t k = 0; k < list.size(); ++k) {
        const auto idx = std::find(h.begin(), h.end(), list[k].allocation) - h.begin();
        REQUIRE((*p)[k].segment == kMem);
        if (seed[idx] != 0) REQUIRE(gpu_check(f.executor, (*p)[k].gpu_address, kBytes, seed[idx]));
        if (list[k].write) {
          seed[idx] = static_cast<std::uint32_t>(rng());
          gpu_fill(f.executor, (*p)[k].gpu_address, kBytes, seed[idx]);
        }
      }
      mm.note_submitted(list, {}, sgpu::RingFence{static_cast<std::uint64_t>(round + 1)});
      mm.set_completed_fence(sgpu::RingFence{static_cast<std::uint64_t>(round)});  // one submission in flight
    }
    // Every allocation, one by one, comes back with its bytes.
    mm.set_completed_fence(sgpu::RingFence{1000});
    for (int i = 0; i < kCount; ++i) {
      auto p = mm.make_resident({{h[i], false}});
      REQUIRE(p);
      if (seed[i] != 0) CHECK(gpu_check(f.executor, (*p)[0].gpu_address, kBytes, seed[i]));
    }
    CHECK(f.executor.counters().count(vidmm::PagingOperationType::Transfer) > 300);
    CHECK(f.executor.counters().dummy_page_writes == 0);
  }
}
