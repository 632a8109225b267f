// Shared set-up of the memory-manager tests: an adapter with a 1 MiB memory segment (ID 1) and
// a 1 MiB aperture segment (ID 2), system memory from the mock transport, and the reference
// executor playing the GPU. Also helpers to describe allocations tersely.
#pragma once

#include <catch2/catch.hpp>

#include <memory>

#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/device.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/vidmm/reference_executor.hpp"

namespace vidmm_test {

using namespace sgpu;
using namespace sgpu::kmd;

inline constexpr std::uint64_t kPage = 4096;
inline constexpr std::uint64_t kMemBase = 0x1'0000'0000ull;
inline constexpr std::uint64_t kApBase = 0x2'0000'0000ull;
inline constexpr SegmentId kMem = 1;
inline constexpr SegmentId kAp = 2;

inline AdapterDescription two_segments(std::uint64_t mem_bytes = 1 << 20, std::uint64_t ap_bytes = 1 << 20) {
  AdapterDescription d;
  SegmentDescriptor mem;
  mem.base_address = kMemBase;
  mem.size = mem_bytes;
  mem.commit_limit = mem_bytes;
  mem.flags.value = SegmentFlags::kCpuVisible;
  SegmentDescriptor ap;
  ap.base_address = kApBase;
  ap.size = ap_bytes;
  ap.commit_limit = ap_bytes;
  ap.flags.value = SegmentFlags::kAperture;
  d.segments = {mem, ap};
  d.caps.aperture_segment_commit_limit = ap_bytes;
  d.caps.scheduling_caps.value = VidSchCaps::kMultiEngineAware;
  return d;
}

struct Fixture {
  explicit Fixture(AdapterDescription d = two_segments(), std::shared_ptr<const SizingPolicy> policy = nullptr)
      : executor(d.segments, d.page_size), system(mock) {
    auto a = Adapter::create(std::move(d), executor, system, std::move(policy));
    if (!a) FAIL(to_string(a.error()));
    adapter = std::move(*a);
  }
  vidmm::MemoryManager& mm() { return adapter->memory_manager(); }

  MockTransport mock;
  vidmm::ReferenceExecutor executor;
  TransportSystemMemory system;
  std::unique_ptr<Adapter> adapter;
};

/// An allocation of `bytes` usable in `segments` (read and write), preferring them in order.
inline AllocationInfo alloc_info(std::uint64_t bytes, std::initializer_list<SegmentId> segments = {kMem},
                                 SegmentSet eviction = {}) {
  AllocationInfo i;
  i.size = bytes;
  for (SegmentId s : segments) i.supported_read_segments = i.supported_read_segments | SegmentSet::of(s);
  i.supported_write_segments = i.supported_read_segments;
  i.preferred_segment = SegmentPreference::of(segments);
  i.eviction_segments = eviction;
  i.driver_handle = 0x100;
  return i;
}

/// Fills `bytes` at `gpu` with a pattern derived from `seed` (through the executor = the GPU).
inline void gpu_fill(vidmm::ReferenceExecutor& ex, std::uint64_t gpu, std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint32_t> w(bytes / 4);
  for (std::size_t i = 0; i < w.size(); ++i) w[i] = seed * 2654435761u + static_cast<std::uint32_t>(i) * 40503u;
  REQUIRE(ex.gpu_write(gpu, w.data(), bytes));
}
inline bool gpu_check(vidmm::ReferenceExecutor& ex, std::uint64_t gpu, std::size_t bytes, std::uint32_t seed) {
  std::vector<std::uint32_t> w(bytes / 4);
  if (!ex.gpu_read(gpu, w.data(), bytes)) return false;
  for (std::size_t i = 0; i < w.size(); ++i)
    if (w[i] != seed * 2654435761u + static_cast<std::uint32_t>(i) * 40503u) return false;
  return true;
}

}  // namespace vidmm_test
