// DXGK_ALLOCATIONINFO and DXGK_ALLOCATIONINFOFLAGS: what the driver says about an allocation
// when it is created. The memory manager (vidmm::MemoryManager) validates every field against
// the adapter's segments before anything is allocated.
#pragma once

#include <cstdint>

#include "sgpu/kmd/segments.hpp"
#include "sgpu/transport.hpp"

namespace sgpu::kmd {

/// DXGK_ALLOCATIONINFOFLAGS (WDDM 1.x bits 0..14; later bits belong to WDDM 2 and are rejected).
struct AllocationInfoFlags {
  static constexpr std::uint32_t kCpuVisible = 1u << 0;
  static constexpr std::uint32_t kPermanentSysMem = 1u << 1;
  static constexpr std::uint32_t kCached = 1u << 2;
  static constexpr std::uint32_t kProtected = 1u << 3;
  static constexpr std::uint32_t kExistingSysMem = 1u << 4;
  static constexpr std::uint32_t kExistingKernelSysMem = 1u << 5;
  static constexpr std::uint32_t kFromEndOfSegment = 1u << 6;
  static constexpr std::uint32_t kSwizzled = 1u << 7;
  static constexpr std::uint32_t kOverlay = 1u << 8;
  static constexpr std::uint32_t kCapture = 1u << 9;
  static constexpr std::uint32_t kUseAlternateVA = 1u << 10;
  static constexpr std::uint32_t kSynchronousPaging = 1u << 11;
  static constexpr std::uint32_t kLinkMirrored = 1u << 12;
  static constexpr std::uint32_t kLinkInstanced = 1u << 13;
  static constexpr std::uint32_t kHistoryBuffer = 1u << 14;
  static constexpr std::uint32_t kDefined = (1u << 15) - 1;

  std::uint32_t value = 0;
  constexpr bool has(std::uint32_t bit) const { return (value & bit) != 0; }
};

/// D3DDDI_ALLOCATIONPRIORITY_NORMAL: what to pass when indifferent (0 is invalid).
inline constexpr std::uint32_t kPriorityNormal = 0x78000000u;

/// DXGK_ALLOCATIONINFO, the fields a physical-addressing driver uses.
struct AllocationInfo {
  std::uint64_t size = 0;             ///< bytes; rounded up to the page size
  std::uint32_t alignment = 0;        ///< bytes, a power of two; 0 = page size
  SegmentSet supported_read_segments;   ///< SupportedReadSegmentSet
  SegmentSet supported_write_segments;  ///< SupportedWriteSegmentSet
  SegmentSet eviction_segments;         ///< aperture segments only; empty = straight to system memory
  SegmentPreference preferred_segment;
  BankPreference hinted_bank;           ///< banks of the most preferred segment
  AllocationInfoFlags flags;
  std::uint32_t priority = kPriorityNormal;  ///< AllocationPriority; 0 is invalid
  std::uint64_t driver_handle = 0;      ///< hAllocation: the driver's own handle, echoed in paging ops
  /// ExistingSysMem / ExistingKernelSysMem: the memory to use as backing store (not owned; must
  /// outlive the allocation, be page-aligned and at least `size` bytes).
  const DmaMemory* existing_memory = nullptr;

  /// The usual description: `bytes` the GPU reads and writes in any of `segments`, placed first
  /// in `preferred` (one of them), with `flags` (AllocationInfoFlags bits); everything else at its
  /// default. The memory manager validates it like any other.
  static AllocationInfo placed(std::uint64_t bytes, SegmentSet segments, SegmentId preferred, std::uint32_t flags = 0) {
    AllocationInfo i;
    i.size = bytes;
    i.supported_read_segments = i.supported_write_segments = segments;
    i.preferred_segment = SegmentPreference::of({preferred});
    i.flags.value = flags;
    return i;
  }
};

}  // namespace sgpu::kmd
