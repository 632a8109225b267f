// Memory-manager benchmark. Prints one JSON object (see cmake/SgpuBench.cmake):
//   vidmm_alloc_free_per_s_100k  create + make-resident + destroy pairs per second with 100 000
//                                allocations live in the memory segment (policy cost only: the
//                                paging operations go to an executor that discards them)
//   vidmm_alloc_vs_malloc        the same loop's time per pair divided by malloc+free of the
//                                same sizes (how many mallocs one allocation costs)
// paging_transfer_efficiency_1m is measured on the device by bench_paging.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include <nlohmann/json.hpp>

#include "sgpu/transport/mock.hpp"
#include "sgpu/vidmm/memory_manager.hpp"

namespace {

using Clock = std::chrono::steady_clock;

class DiscardingExecutor final : public sgpu::vidmm::PagingExecutor {
 public:
  sgpu::Status execute(const sgpu::vidmm::PagingBuffer& b) override {
    operations += b.operations.size();
    return sgpu::ok_status();
  }
  std::uint64_t dummy_page() const override { return 0; }
  std::uint64_t operations = 0;
};

constexpr int kLive = 100000;
constexpr int kPairs = 200000;

}  // namespace

int main() {
  using namespace sgpu;
  sgpu::MockTransport mock;
  TransportSystemMemory sys(mock);
  DiscardingExecutor ex;
  vidmm::MemoryManagerConfig cfg;
  kmd::SegmentDescriptor mem;
  mem.base_address = 0x1'0000'0000ull;
  mem.size = std::uint64_t{1} << 30;  // 1 GiB: 100 000 allocations of 4-8 KiB fit
  cfg.segments = {mem};
  auto mm = vidmm::MemoryManager::create(cfg, ex, sys);
  if (!mm) return std::fprintf(stderr, "%s\n", to_string(mm.error()).c_str()), 1;

  std::mt19937 rng(1);
  kmd::AllocationInfo info;
  info.supported_read_segments = info.supported_write_segments = kmd::SegmentSet::of(1);
  info.preferred_segment = kmd::SegmentPreference::of({1});
  std::vector<AllocationHandle> live;
  for (int i = 0; i < kLive; ++i) {
    info.size = 4096u * (1 + (rng() & 1));
    auto h = (*mm)->create_allocation(info);
    if (!h || !(*mm)->make_resident({{*h, false}})) return 1;
    live.push_back(*h);
  }
  std::vector<std::size_t> victims(kPairs), sizes(kPairs);
  for (int i = 0; i < kPairs; ++i) victims[i] = rng() % kLive, sizes[i] = 4096u * (1 + (rng() & 1));

  const auto t0 = Clock::now();
  for (int i = 0; i < kPairs; ++i) {
    if (!(*mm)->destroy_allocation(live[victims[i]])) return 1;
    info.size = sizes[i];
    auto h = (*mm)->create_allocation(info);
    if (!h || !(*mm)->make_resident({{*h, false}})) return 1;
    live[victims[i]] = *h;
  }
  const double vidmm_s = std::chrono::duration<double>(Clock::now() - t0).count();

  std::vector<void*> ptrs(kLive);
  for (int i = 0; i < kLive; ++i) ptrs[i] = std::malloc(4096u * (1 + (i & 1)));
  const auto t1 = Clock::now();
  for (int i = 0; i < kPairs; ++i) {
    std::free(ptrs[victims[i]]);
    ptrs[victims[i]] = std::malloc(sizes[i]);
    if (ptrs[victims[i]] == nullptr) return 1;
  }
  const double malloc_s = std::chrono::duration<double>(Clock::now() - t1).count();
  for (void* p : ptrs) std::free(p);

  nlohmann::json out;
  out["vidmm_alloc_free_per_s_100k"] = kPairs / vidmm_s;
  out["vidmm_alloc_vs_malloc"] = vidmm_s / malloc_s;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
