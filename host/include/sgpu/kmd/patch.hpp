// DxgkDdiPatch: writes final addresses into a DMA buffer just before it is submitted.
//
// Patch processes only the entries [patch_start, patch_start + patch_length) of the list, and for
// each one writes (allocation GPU address + AllocationOffset) as a 64-bit little-endian value at
// PatchOffset, in place, where the allocation's address comes from the allocation list as the
// memory manager placed it (DXGK_ALLOCATIONLIST.SegmentId/PhysicalAddress). It may run several
// times on the same buffer (after preemption, after the allocations moved): each run overwrites
// the same dwords. When the submission's range [dma_start, dma_end) contains the submission-fence
// packet Render recorded in the private data, Patch writes its address (fence_address) and value
// (submission_fence). Likewise the timestamp bracket (render.hpp): the opening TIMESTAMP (offset
// 0) and the closing one, when in range, get timestamp_address and timestamp_address + 8; a
// buffer that carries the bracket without a timestamp_address is refused (its TIMESTAMPs would
// write to address 0).
//
// Patch must not fail in the driver model (bug check 0x119/3 otherwise), so everything it relies
// on is checked by Render; patch() still checks every entry of the range before writing any
// (InvalidArgument naming the entry's index), so a scheduler bug is reported, never turned into a
// stray write or a stray access by the engine:
//  - PatchOffset is a 4-aligned 8-byte field inside the buffer; the allocation is listed, not
//    null and resident;
//  - SplitOffset holds a whole known packet, SlotId is one of its address fields and PatchOffset
//    is that field's low dword;
//  - [AllocationOffset, AllocationOffset + extent) lies inside the allocation (size), where the
//    extent is what the packet touches from that field (spec/abi.toml, as Render computes it);
//    the address does not wrap, has the field's alignment, and a write field has WriteOperation.
#pragma once

#include <cstdint>

#include "sgpu/kmd/render.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::kmd {

/// DXGK_PATCHFLAGS.
struct PatchFlags {
  static constexpr std::uint32_t kPaging = 1u << 0;
  static constexpr std::uint32_t kPresent = 1u << 1;
  static constexpr std::uint32_t kRedirectedPresent = 1u << 2;
  static constexpr std::uint32_t kNullRendering = 1u << 3;
  std::uint32_t value = 0;
};

/// DXGKARG_PATCH.
struct PatchArgs {
  void* dma_buffer = nullptr;
  std::uint32_t dma_size = 0;
  std::uint32_t dma_start = 0;  ///< DmaBufferSubmissionStartOffset
  std::uint32_t dma_end = 0;    ///< DmaBufferSubmissionEndOffset
  const void* private_data = nullptr;
  std::uint32_t private_data_size = 0;
  const DxgkAllocationListEntry* allocation_list = nullptr;
  std::uint32_t allocation_list_size = 0;
  const PatchLocation* patch_list = nullptr;
  std::uint32_t patch_list_size = 0;
  std::uint32_t patch_start = 0;   ///< PatchLocationListSubmissionStart
  std::uint32_t patch_length = 0;  ///< PatchLocationListSubmissionLength
  RingFence submission_fence;      ///< SubmissionFenceId
  std::uint64_t fence_address = 0;     ///< GPU address the submission fence is written to
  /// GPU address of the DMA buffer's timestamp landing area (kmd::timestamp_landing_offset), for
  /// a buffer Render or Present gave the timestamp bracket (tracing); 0 otherwise.
  std::uint64_t timestamp_address = 0;
  PatchFlags flags;
};

struct PatchOutput {
  std::uint32_t patched = 0;       ///< address fields written
  bool fence_written = false;      ///< the submission-fence packet was in range and filled in
  std::uint32_t timestamps_written = 0;  ///< TIMESTAMPs of the bracket in range and filled in
};

Result<PatchOutput> patch(const PatchArgs& args);

}  // namespace sgpu::kmd
