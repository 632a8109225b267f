// DxgkDdiSubmitCommand: one DMA buffer (or a portion of one) becomes one ring entry retiring its
// SubmissionFenceId.
//
// In the driver model SubmitCommand cannot fail (bug check 0x119/2): the scheduler keeps the
// hardware queue within the ring (so the ring is never full), gives strictly increasing fences
// and only submits patched buffers mapped where the device can fetch them. So an error from
// here is a scheduler bug or a dead link, and the scheduler escalates it to its fatal state.
#pragma once

#include <cstdint>

#include "sgpu/device.hpp"
#include "sgpu/kmd/segments.hpp"
#include "sgpu/result.hpp"

namespace sgpu::sched {

/// DXGK_SUBMITCOMMANDFLAGS (WDDM 1.x bits the front end has a meaning for).
struct SubmitCommandFlags {
  static constexpr std::uint32_t kPaging = 1u << 0;
  static constexpr std::uint32_t kPresent = 1u << 1;
  static constexpr std::uint32_t kNullRendering = 1u << 3;
  std::uint32_t value = 0;
};

/// DXGKARG_SUBMITCOMMAND.
struct SubmitCommandArgs {
  std::uint32_t context_id = 0;           ///< hContext as the ring knows it (0: paging / system)
  kmd::SegmentId dma_buffer_segment_id = kmd::kSystemMemory;
  /// DmaBufferPhysicalAddress: a GPU address (aperture or memory segment) when the segment is
  /// not 0; with segment 0 the buffer is `system_buffer` (system physical, kernel buffers only).
  std::uint64_t dma_buffer_address = 0;
  const DmaMemory* system_buffer = nullptr;
  std::uint32_t dma_buffer_size = 0;
  std::uint32_t start_offset = 0;         ///< DmaBufferSubmissionStartOffset
  std::uint32_t end_offset = 0;           ///< DmaBufferSubmissionEndOffset
  FenceId submission_fence = 0;           ///< SubmissionFenceId (explicit, never 0)
  SubmitCommandFlags flags;
};

/// Writes the ring entry and rings the doorbell. A refusal names the fence and the range.
Status submit_command(Device& device, const SubmitCommandArgs& args);

}  // namespace sgpu::sched
