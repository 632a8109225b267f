// The emission point: the one place a ring entry is made (amdgpu_fence_emit's role). Render and
// Present portions (dispatch.cpp), paging buffers (submit_paging) and paging buffers resubmitted
// after a reset (recover) all come through here.
#include <fmt/format.h>

#include "scheduler_state.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

SubmitCommandArgs Scheduler::submit_args(const HwPacket& p) const {
  SubmitCommandArgs a;
  a.submission_fence = p.fence;
  if (p.is_paging()) {
    // A kernel-built buffer in system memory, fetched at its bus address (paging + privileged).
    a.context_id = p.paging.context_id;
    a.dma_buffer = DmaBufferLocation::system(*p.paging.buffer);
    a.dma_buffer_size = static_cast<std::uint32_t>(p.paging.buffer->size());
    a.start_offset = 0;
    a.end_offset = p.paging.end_offset;
    a.flags.value = SubmitCommandFlags::kPaging;
  } else {
    // A context's DMA buffer: mapped in the kernel window (the DMA-buffer segment), or, for a
    // context whose DmaBufferSegmentSet is 0, contiguous system memory at its bus address.
    const Pass& pass = *p.pass;
    a.context_id = static_cast<std::uint32_t>(p.context);
    a.dma_buffer = pass.buffer.gpu_address != 0
                       ? DmaBufferLocation::in_segment(dma_buffer_segment_, pass.buffer.gpu_address)
                       : DmaBufferLocation::system(pass.buffer.memory);
    a.dma_buffer_size = static_cast<std::uint32_t>(pass.buffer.memory.size());
    a.start_offset = p.dma_start;
    a.end_offset = p.dma_end;
    a.flags.value = pass.ring_flags;
  }
  return a;
}

// Takes the next ring fence (a packet that carries one already is a paging buffer resubmitted
// after a reset: it keeps it), lets `stamp` write it into the DMA buffer, SubmitCommand, then the
// bookkeeping every ring entry needs: the fence reporter, the memory manager (`used`: the
// allocations a render packet references), the TDR clock, the hardware queue. The caller has
// made room on the ring. A failure of Patch or SubmitCommand is the scheduler's fatal state.
Result<RingFence> Scheduler::emit(HwPacket packet, const Stamp& stamp, const std::vector<AllocationListEntry>* used) {
  const bool resubmission = static_cast<bool>(packet.fence);
  if (!resubmission) packet.fence = last_ring_fence_.next();
  if (stamp) {
    if (Status s = stamp(packet.fence); !s) {
      // Patch may not fail (bug check 0x119/3): a scheduler bug, never a stray write.
      Error e = std::move(s).error();
      e.message = packet.is_paging()
                      ? fmt::format("writing fence {} into the paging buffer failed: {}", packet.fence, e.message)
                      : fmt::format("Patch of fence {} (context {}, bytes [{}, {})) failed: {}", packet.fence,
                                    packet.context, packet.dma_start, packet.dma_end, e.message);
      return fatal(std::move(e)).error();
    }
  }
  packet.ring_index = device_.ring_tail();
  const auto t0 = trace_ ? now() : std::chrono::nanoseconds{};
  if (Status s = submit_command(device_, submit_args(packet)); !s) return fatal(std::move(s).error()).error();
  if (!resubmission) last_ring_fence_ = packet.fence;
  if (trace_) {
    packet.written_at = now();
    trace_->slice(trace::Track::of(trace::TrackKind::Ring),
                  packet.is_paging() ? fmt::format("paging fence {}", packet.fence)
                                     : fmt::format("fence {} (context {})", packet.fence, packet.context),
                  trace::TracePoint::host(t0), trace::TracePoint::host(packet.written_at),
                  {{"fence", static_cast<std::int64_t>(packet.fence.value())},
                   {"context", static_cast<std::int64_t>(packet.context)},
                   {"ring_index", static_cast<std::int64_t>(packet.ring_index)},
                   {"kind", std::string(packet.is_paging() ? "paging" : "render")},
                   {"resubmission", std::int64_t{resubmission}}});
  }

  reporter_.note_submitted(packet.fence);
  if (used)
    adapter_.memory_manager().note_submitted(*used, find(packet.context)->context->residency_scope(), packet.fence);
  const bool head = hw_.empty();
  if (packet.pass) ++packet.pass->on_ring;
  const RingFence fence = packet.fence;
  hw_.push_back(std::move(packet));
  if (head) head_started();
  if (trace_) trace_ring_occupancy();
  return fence;
}

}  // namespace sgpu::sched
