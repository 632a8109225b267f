// The scheduler's side of the post-mortem (sgpu/diag/postmortem.hpp): the interrupt history and
// the capture at a recovery or a fatal fault/hang, with what only the scheduler knows (which
// DMA buffer the entry executes, its allocation list as placed, its patch list).
#include "scheduler_state.hpp"

namespace sgpu::sched {

void Scheduler::note_interrupt(const InterruptEvents& events) {
  if (!options_.postmortem) return;
  interrupts_.record({device_.transport().now(), events, device_.completed_fence()});
}

void Scheduler::take_postmortem(const std::string& why, const HwPacket* packet, std::optional<std::uint32_t> stopped_at) {
  if (!options_.postmortem) return;
  diag::CaptureInput in;
  in.cause = device_.latched_fault() ? diag::PostMortemCause::Fault : diag::PostMortemCause::Timeout;
  in.summary = why;
  in.stopped_at = stopped_at;
  in.interrupts = interrupts_.snapshot();
  if (packet) {
    in.ring_index = packet->ring_index;
    if (packet->is_paging()) {
      if (packet->paging.buffer) {
        in.buffer = packet->paging.buffer->bytes();
        in.buffer_bytes = packet->paging.buffer->size();
      }
    } else {
      const Pass& pass = *packet->pass;
      in.buffer = pass.buffer.memory.bytes();
      in.buffer_bytes = pass.buffer.memory.size();
      for (std::uint32_t i = 0; i < pass.dxgk_list.size(); ++i) {
        const auto& e = pass.dxgk_list[i];
        if (!e.allocation) continue;
        in.allocations.push_back({i, e.allocation, e.write, e.segment, e.gpu_address, e.size});
      }
      for (std::uint32_t i = packet->patch_start; i < packet->patch_end && i < pass.patches.size(); ++i) {
        const auto& p = pass.patches[i];
        in.patches.push_back({p.patch_offset, p.allocation_index, p.allocation_offset});
      }
    }
  }
  last_postmortem_ = diag::capture(device_, in);
  options_.postmortem(*last_postmortem_);
}

}  // namespace sgpu::sched
