// DxgkDdiSubmitCommand: one DMA buffer (or a portion of one) becomes one ring entry retiring its
// SubmissionFenceId (a RingFence).
//
// In the driver model SubmitCommand cannot fail (bug check 0x119/2): the scheduler keeps the
// hardware queue within the ring (so the ring is never full), gives strictly increasing fences
// and only submits patched buffers mapped where the device can fetch them. So an error from
// here is a scheduler bug or a dead link, and the scheduler escalates it to its fatal state.
// The scheduler calls it from one place only, its emission point (sched/scheduler.hpp).
#pragma once

#include <cstdint>

#include "sgpu/device.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::sched {

/// DXGK_SUBMITCOMMANDFLAGS (WDDM 1.x bits the front end has a meaning for).
struct SubmitCommandFlags {
  static constexpr std::uint32_t kPaging = 1u << 0;
  static constexpr std::uint32_t kPresent = 1u << 1;
  static constexpr std::uint32_t kNullRendering = 1u << 3;
  std::uint32_t value = 0;
};

/// Where the device fetches the DMA buffer: DmaBufferSegmentId and DmaBufferPhysicalAddress.
struct DmaBufferLocation {
  /// A buffer in system memory (segment 0), fetched at its bus address: kernel-built buffers
  /// only; submit_command() makes the entry privileged (the device fetches bus addresses for
  /// privileged and paging entries only): paging buffers, and the DMA buffers of a context whose
  /// DmaBufferSegmentSet is 0.
  static DmaBufferLocation system(const DmaMemory& buffer) { return {kSystemMemory, 0, &buffer}; }
  /// A buffer at `gpu_address` in segment `segment` (an aperture or a memory segment, never 0).
  static DmaBufferLocation in_segment(SegmentId segment, std::uint64_t gpu_address) {
    return {segment, gpu_address, nullptr};
  }

  SegmentId segment = kSystemMemory;
  std::uint64_t gpu_address = 0;             ///< segment != 0
  const DmaMemory* system_buffer = nullptr;  ///< segment == 0
};

/// DXGKARG_SUBMITCOMMAND.
struct SubmitCommandArgs {
  std::uint32_t context_id = 0;           ///< hContext as the ring knows it (0: paging / system)
  DmaBufferLocation dma_buffer;
  std::uint32_t dma_buffer_size = 0;
  std::uint32_t start_offset = 0;         ///< DmaBufferSubmissionStartOffset
  std::uint32_t end_offset = 0;           ///< DmaBufferSubmissionEndOffset
  RingFence submission_fence;             ///< SubmissionFenceId (explicit, never 0)
  SubmitCommandFlags flags;
};

/// Writes the ring entry and rings the doorbell. A refusal names the fence and the range.
Status submit_command(Device& device, const SubmitCommandArgs& args);

}  // namespace sgpu::sched
