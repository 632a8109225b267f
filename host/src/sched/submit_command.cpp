#include "sgpu/sched/submit_command.hpp"

#include <fmt/format.h>

namespace sgpu::sched {

Status submit_command(Device& device, const SubmitCommandArgs& a) {
  if (!a.submission_fence)
    return Error::invalid("SubmitCommand: SubmissionFenceId 0 (the scheduler gives every fence)");
  Submission s;
  if (a.dma_buffer.segment == kSystemMemory) {
    s.buffer = a.dma_buffer.system_buffer;
    if (s.buffer == nullptr)
      return Error::invalid("SubmitCommand: fence {}: a system-memory DMA buffer without its memory",
                            a.submission_fence);
    // DmaBufferSegmentId 0: the engine reaches the buffer only at its bus address, which the
    // device allows a privileged entry alone. The buffer is kernel-built (Render/Present checked
    // every packet, none privileged; Patch every address), which is what the flag asserts.
    s.flags |= abi::ring_flags::kPrivileged;
  } else {
    s.gpu_address = a.dma_buffer.gpu_address;
  }
  s.start_offset = a.start_offset;
  s.end_offset = a.end_offset;
  s.context_id = a.context_id;
  if (a.flags.value & SubmitCommandFlags::kPaging) s.flags |= abi::ring_flags::kPaging | abi::ring_flags::kPrivileged;
  if (a.flags.value & SubmitCommandFlags::kPresent) s.flags |= abi::ring_flags::kPresent;
  if (a.flags.value & SubmitCommandFlags::kNullRendering) s.flags |= abi::ring_flags::kNullRender;
  auto f = device.submit(s, a.submission_fence);
  if (!f) {
    Error e = std::move(f).error();
    e.message = fmt::format(
        "SubmitCommand: fence {} (context {}, bytes [{}, {}) at {:#x}) refused: {}", a.submission_fence, a.context_id,
        a.start_offset, a.end_offset,
        a.dma_buffer.segment == kSystemMemory && s.buffer ? s.buffer->bus_addr() : a.dma_buffer.gpu_address, e.message);
    return e;
  }
  return ok_status();
}

}  // namespace sgpu::sched
