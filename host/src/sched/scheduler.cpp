// Scheduler: creation, contexts, the submission path (Render/Present into pooled DMA buffers)
// and the waiting calls. The pump is in dispatch.cpp, interrupts and recovery in interrupts.cpp.
#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "scheduler_state.hpp"
#include "sgpu/sched/submit_command.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

Result<std::unique_ptr<Scheduler>> Scheduler::create(Device& device, kmd::Adapter& adapter, KernelWindow& window,
                                                     vidmm::DeviceExecutor* executor, SchedulerOptions options) {
  if (options.tdr_delay <= std::chrono::nanoseconds{0} || options.preempt_timeout <= std::chrono::nanoseconds{0} ||
      options.preempt_quantum <= std::chrono::nanoseconds{0})
    return Error::invalid("scheduler: tdr_delay, preempt_timeout and preempt_quantum must be positive");
  if (adapter.caps().node_count != 1)
    return Error::unsupported("scheduler: the adapter reports {} nodes; the device has one", adapter.caps().node_count);
  // The window is where DMA buffers live, so it must be the segment SubmitCommand names for them.
  const SegmentId dma_segment = adapter.dma_buffer_segment();
  if (dma_segment == kSystemMemory)
    return Error::unsupported(
        "scheduler: the adapter describes no DMA-buffer segment: the contexts' DMA buffers live in the kernel "
        "window, an aperture segment of its own that DmaBufferSegmentId names (kmd::describe with reserved pages)");
  const kmd::SegmentDescriptor& seg = **adapter.segment(dma_segment);
  const std::uint64_t window_base = window.gpu_base();
  const std::uint64_t window_bytes = window.bytes();
  if (seg.base_address != window_base || seg.size != window_bytes)
    return Error::invalid(
        "scheduler: DMA-buffer segment {} is [{:#x}, +{:#x}) but the kernel window is [{:#x}, +{:#x}): DMA buffers "
        "must lie inside the segment SubmitCommand names",
        dma_segment, seg.base_address, seg.size, window_base, window_bytes);
  std::unique_ptr<Scheduler> s(new Scheduler(device, adapter, window, executor, std::move(options)));
  if (executor) executor->set_queue(s.get());
  return s;
}

Scheduler::Scheduler(Device& device, kmd::Adapter& adapter, KernelWindow& window, vidmm::DeviceExecutor* executor,
                     SchedulerOptions options)
    : device_(device),
      adapter_(adapter),
      window_(window),
      executor_(executor),
      options_(std::move(options)),
      limiter_(options_.tdr_limit_count, options_.tdr_limit_time),
      last_ring_fence_(std::max(device.completed_fence(), device.last_submitted_fence())),
      dma_buffer_segment_(adapter.dma_buffer_segment()),
      interrupts_(options_.postmortem_interrupts) {
  // The ring is ours from now on; numbering continues after what the device already carried.
  // Everything already retired counts as reported: reports start after it.
  const RingFence done = device_.completed_fence();
  reporter_.note_submitted(last_ring_fence_);
  (void)reporter_.on_completed(done);
  head_since_ = device_.transport().now();
}

Scheduler::~Scheduler() {
  if (executor_) executor_->set_queue(nullptr);
  // Work still queued or running goes back to its pools; mapped buffers leave the window.
  for (auto& p : hw_)
    if (p.pass) release_pass(*p.pass);
  hw_.clear();
  for (auto& [id, cs] : contexts_) {
    for (auto& w : cs->queue) release_pass(*w->pass);
    cs->queue.clear();
    cs->context->dma_buffers().set_mapper(nullptr);
    window_.free_fence_slot(cs->slot);
  }
}

Scheduler::ContextState* Scheduler::find(std::uint64_t id) {
  auto it = contexts_.find(id);
  return it == contexts_.end() ? nullptr : it->second.get();
}
const Scheduler::ContextState* Scheduler::find(std::uint64_t id) const {
  auto it = contexts_.find(id);
  return it == contexts_.end() ? nullptr : it->second.get();
}

namespace {
Status check_priority(int priority) {
  if (priority < Scheduler::kMinPriority || priority > Scheduler::kMaxPriority)
    return Error::invalid("scheduler: priority {} is outside [{}, {}]", priority, Scheduler::kMinPriority,
                          Scheduler::kMaxPriority);
  return ok_status();
}
}  // namespace

Status Scheduler::add_context(kmd::Context& context, int priority) {
  if (fatal_) return *fatal_;
  SGPU_RETURN_IF_ERROR(check_priority(priority));
  if (!context.live()) return Error::invalid("scheduler: the context was moved from or destroyed");
  if (!adapter_.owns_context(context.id()))  // handles carry their adapter's tag
    return Error::invalid("scheduler: context {:#x} belongs to another adapter", context.id());
  if (find(context.id())) return Error::invalid("scheduler: context {:#x} is already registered", context.id());
  // DmaBufferSegmentSet 0: contiguous system memory the engine fetches at bus addresses (no
  // mapper: the pool's buffers stay unmapped, gpu_address 0, and go out as privileged entries).
  const kmd::SegmentSet dma_set = context.info().dma_buffer_segment_set;
  if (!dma_set.empty() && !dma_set.contains(dma_buffer_segment_))
    return Error::invalid(
        "scheduler: context {:#x}: DmaBufferSegmentSet {:#x} does not name segment {}, the kernel window its DMA "
        "buffers are mapped into",
        context.id(), dma_set.bits(), dma_buffer_segment_);
  if (context.node_ordinal() != 0)
    return Error::invalid("scheduler: context {} is on node {}; the device has node 0 only", context.id(),
                          context.node_ordinal());
  SGPU_ASSIGN_OR_RETURN(auto slot, window_.allocate_fence_slot());
  auto cs = std::make_unique<ContextState>();
  cs->context = &context;
  cs->slot = slot;
  cs->priority = priority;
  context.dma_buffers().set_mapper(dma_set.empty() ? nullptr : &window_);
  contexts_.emplace(context.id(), std::move(cs));
  return ok_status();
}

Status Scheduler::set_priority(const kmd::Context& context, int priority) {
  SGPU_RETURN_IF_ERROR(check_priority(priority));
  ContextState* cs = find(context.id());
  if (!cs || cs->context != &context)
    return Error::invalid("scheduler: context {:#x} is not registered with this scheduler", context.id());
  cs->priority = priority;
  return ok_status();
}

Result<int> Scheduler::priority(const kmd::Context& context) const {
  const ContextState* cs = find(context.id());
  if (!cs || cs->context != &context)
    return Error::invalid("scheduler: context {:#x} is not registered with this scheduler", context.id());
  return cs->priority;
}

Status Scheduler::remove_context(kmd::Context& context) {
  ContextState* cs = find(context.id());
  if (!cs || cs->context != &context)
    return Error::invalid("scheduler: context {:#x} is not registered with this scheduler", context.id());
  if (fatal_ || cs->error) {
    // Nothing of a lost context (or a lost adapter) will run again: drop its work.
    for (auto& p : hw_)
      if (p.pass && p.context == context.id() && --p.pass->on_ring == 0 && p.pass->queued == 0) release_pass(*p.pass);
    hw_.erase(std::remove_if(hw_.begin(), hw_.end(), [&](const HwPacket& p) { return p.context == context.id(); }),
              hw_.end());
    for (auto& w : cs->queue)
      if (--w->pass->queued == 0 && w->pass->on_ring == 0) release_pass(*w->pass);
    cs->queue.clear();
  }
  const bool on_ring = std::any_of(hw_.begin(), hw_.end(), [&](const HwPacket& p) { return p.context == context.id(); });
  if (!cs->queue.empty() || on_ring)
    return Error::busy(
        "scheduler: context {} still has {} queued and {} running packets", context.id(), cs->queue.size(),
        std::count_if(hw_.begin(), hw_.end(), [&](const HwPacket& p) { return p.context == context.id(); }));
  context.dma_buffers().set_mapper(nullptr);
  window_.free_fence_slot(cs->slot);
  contexts_.erase(context.id());
  return ok_status();
}

Error Scheduler::lost(const ContextState& cs) const {
  Error e = *cs.error;
  e.hardware_touched = false;
  return e;
}

Result<Scheduler::ContextState*> Scheduler::usable(const kmd::Context& context) {
  if (fatal_) return *fatal_;
  ContextState* cs = find(context.id());
  if (!cs || cs->context != &context)
    return Error::invalid("scheduler: context {:#x} is not registered with this scheduler", context.id());
  if (cs->error) return lost(*cs);
  return cs;
}

Status Scheduler::fatal(Error error) {
  if (!fatal_) {
    error.message = "adapter lost (scheduler in its fatal state): " + error.message;
    error.code = Errc::DeviceLost;
    error.hardware_touched = true;
    fatal_ = error;
  }
  return *fatal_;
}

std::size_t Scheduler::hardware_queue_depth() const { return hw_.size(); }

std::size_t Scheduler::software_queue_depth() const {
  std::size_t n = 0;
  for (const auto& [id, cs] : contexts_) n += cs->queue.size();
  return n;
}

// A DMA buffer mapped in the kernel window. When the window is full, retired buffers of every
// context are trimmed and the scheduler waits for work to retire (it always does: TDR bounds it).
Result<kmd::DmaBuffer> Scheduler::acquire_buffer(ContextState& cs, std::chrono::nanoseconds deadline) {
  Transport& t = device_.transport();
  for (int attempt = 0;; ++attempt) {
    auto b = cs.context->dma_buffers().acquire();
    if (b || b.error().code != Errc::OutOfMemory) return b;
    // Spare mapped buffers of every context leave the window (all of them after a first try).
    for (auto& [id, other] : contexts_) other->context->dma_buffers().trim(attempt == 0 ? 1 : 0);
    if (hw_.empty() && software_queue_depth() == 0) {
      if (attempt > 0) return b;
      continue;
    }
    if (attempt > 0 && t.now() >= deadline)
      return Error::make(Errc::Timeout, Touched::Nothing,
                         "context {}: no DMA buffer free in its pool or room in the kernel window by the deadline "
                         "(submit_timeout {} us); {} packets on the ring, {} queued, last ring fence reported {}",
                         cs.context->id(), static_cast<double>(options_.submit_timeout.count()) / 1000.0, hw_.size(),
                         software_queue_depth(), reporter_.last_reported());
    SGPU_RETURN_IF_ERROR(pump_until(deadline));
    const auto now = t.now();
    SGPU_RETURN_IF_ERROR(step(deadline - now < options_.tdr_delay ? deadline : now + options_.tdr_delay));
    if (fatal_) return *fatal_;
  }
}

Status Scheduler::check_device() {
  if (Status s = device_.check_present(); !s) return fatal(std::move(s).error());
  return ok_status();
}

// DMA buffer and lists back to the context's pools (DPC retirement, cancellation).
void Scheduler::release_pass(Pass& pass) {
  if (pass.released) return;
  pass.released = true;
  if (ContextState* cs = find(pass.context)) {
    give_back(*cs->context, pass);
  } else if (pass.buffer.gpu_address != 0) {
    window_.unmap(pass.buffer.gpu_address, pass.buffer.memory.size());
  }
}

// The pools take back only what they lent, unchanged (kmd/command_pools.hpp). A refusal here is a
// scheduler bug: the buffer leaves the window and is freed rather than re-used, and the adapter
// stops (fatal) so the bug is reported, not hidden.
void Scheduler::give_back(kmd::Context& context, Pass& pass) {
  Status st = context.dma_buffers().release(std::move(pass.buffer));
  if (!st && pass.buffer.gpu_address != 0) {
    window_.unmap(pass.buffer.gpu_address, pass.buffer.memory.size());
    pass.buffer.gpu_address = 0;
  }
  for (Status list_st : {context.allocation_lists().release(std::move(pass.list)),
                         context.patch_location_lists().release(std::move(pass.patches))})
    if (st) st = std::move(list_st);
  if (!st) (void)fatal(Error::invalid("context {}: giving a pass back to its pools: {}", context.id(), st.error().message));
}

namespace {

Result<std::vector<kmd::DxgkAllocationListEntry>> dxgk_list(const vidmm::MemoryManager& mm,
                                                            const std::vector<AllocationListEntry>& list) {
  std::vector<kmd::DxgkAllocationListEntry> out(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    out[i].allocation = list[i].allocation;
    out[i].write = list[i].write;
    if (!list[i].allocation) continue;
    auto st = mm.query(list[i].allocation);
    if (!st) {
      Error e = std::move(st).error();
      e.message = fmt::format("allocation list entry {}: {}", i, e.message);
      return e;
    }
    out[i].size = st->size;
    // Pre-patch information: where the allocation was last paged in.
    out[i].segment = st->placement.segment;
    out[i].gpu_address = st->placement.gpu_address;
  }
  return out;
}

}  // namespace

// Render and Present share the pass loop: a DMA buffer and lists from the context's pools per
// pass, one DDI call per pass (multipass until complete), everything given back on an error.
Result<SubmissionId> Scheduler::run_passes(ContextState& cs, const std::vector<AllocationListEntry>& user_list,
                                           std::uint32_t ring_flags, const char* ddi, const PassFn& one_pass) {
  kmd::Context& context = *cs.context;
  SGPU_ASSIGN_OR_RETURN(const auto list, dxgk_list(adapter_.memory_manager(), user_list));

  std::vector<std::shared_ptr<Pass>> passes;
  const auto give_back_all = [&] {
    for (auto& p : passes) give_back(context, *p);
  };
  std::uint32_t offset = 0;
  const auto deadline = device_.transport().now() + options_.submit_timeout;
  for (;;) {
    auto buf = acquire_buffer(cs, deadline);
    if (!buf) {
      give_back_all();
      return std::move(buf).error();
    }
    auto pass = std::make_shared<Pass>();
    pass->buffer = std::move(*buf);
    pass->context = context.id();
    pass->dxgk_list = list;
    pass->list = context.allocation_lists().acquire(user_list.size());
    pass->list.assign(user_list.begin(), user_list.end());
    pass->patches = context.patch_location_lists().acquire();
    pass->patches.resize(std::max<std::size_t>(pass->patches.capacity(), context.info().patch_location_list_size));
    pass->ring_flags = ring_flags;
    pass->timestamps = trace_ != nullptr;
    passes.push_back(pass);

    if (trace_) pass->render_begin = now();
    auto out = one_pass(*pass, offset);
    if (trace_) {
      pass->render_end = now();
      kmd::RenderPrivateData priv;
      if (out && pass->buffer.private_data.size() >= sizeof priv) {
        std::memcpy(&priv, pass->buffer.private_data.data(), sizeof priv);
        pass->timestamp_end_offset = priv.timestamp_end_offset;
      }
    }
    if (!out) {
      give_back_all();
      Error e = std::move(out).error();
      e.message = fmt::format("{}: context {}: {}", ddi, context.id(), e.message);
      return e;
    }
    pass->dma_bytes = out->dma_bytes;
    pass->patch_count = out->patch_count;
    ++counters_.passes;
    if (out->complete) break;
    if (out->dma_bytes == 0 || out->multipass_offset <= offset) {
      give_back_all();
      return Error::invalid("{}: context {}: no progress at multipass offset {}", ddi, context.id(), offset);
    }
    offset = out->multipass_offset;
  }
  auto id = queue_passes(cs, std::move(passes));
  // The submission is queued; render packets wait for ring room until the submit deadline.
  (void)pump_until(deadline);
  return id;
}

Result<SubmissionId> Scheduler::submit(kmd::Context& context, const umd::CommandList& cl) {
  SGPU_ASSIGN_OR_RETURN(auto csr, usable(context));
  if (cl.empty()) return Error::invalid("submit: context {}: the command list is empty", context.id());
  kmd::RenderCursor resume;  // each pass starts where the previous one stopped, in O(1)
  return run_passes(*csr, cl.allocations(), 0, "submit: Render", [&](Pass& pass, std::uint32_t offset) {
    kmd::RenderArgs a;
    a.command = cl.commands().data();
    a.command_length = cl.command_bytes();
    a.dma_buffer = pass.buffer.memory.cpu();
    a.dma_size = static_cast<std::uint32_t>(pass.buffer.memory.size());
    a.private_data = pass.buffer.private_data.data();
    a.private_data_size = static_cast<std::uint32_t>(pass.buffer.private_data.size());
    a.allocation_list = pass.dxgk_list.data();
    a.allocation_list_size = static_cast<std::uint32_t>(pass.dxgk_list.size());
    a.patch_in = cl.patch_locations().data();
    a.patch_in_size = static_cast<std::uint32_t>(cl.patch_locations().size());
    a.patch_out = pass.patches.data();
    a.patch_out_size = static_cast<std::uint32_t>(pass.patches.size());
    a.multipass_offset = offset;
    if (offset != 0) a.resume = resume;
    a.max_slot_id = adapter_.caps().max_allocation_list_slot_id;
    a.reserve_timestamps = pass.timestamps;
    auto out = kmd::render(a);
    if (out) resume = out->resume;
    return out;
  });
}

Result<SubmissionId> Scheduler::present(kmd::Context& context, const PresentRequest& r) {
  SGPU_ASSIGN_OR_RETURN(auto csr, usable(context));
  // DXGK_PRESENT_SOURCE_INDEX = 1, DXGK_PRESENT_DESTINATION_INDEX = 2; element 0 is null.
  const std::vector<AllocationListEntry> ul{{}, {r.src, false}, {r.dst, true}};
  return run_passes(*csr, ul, SubmitCommandFlags::kPresent, "present", [&](Pass& pass, std::uint32_t offset) {
    kmd::PresentArgs a;
    a.kind = r.kind;
    a.dma_buffer = pass.buffer.memory.cpu();
    a.dma_size = static_cast<std::uint32_t>(pass.buffer.memory.size());
    a.private_data = pass.buffer.private_data.data();
    a.private_data_size = static_cast<std::uint32_t>(pass.buffer.private_data.size());
    a.allocation_list = pass.dxgk_list.data();
    a.allocation_list_size = static_cast<std::uint32_t>(pass.dxgk_list.size());
    a.patch_out = pass.patches.data();
    a.patch_out_size = static_cast<std::uint32_t>(pass.patches.size());
    a.multipass_offset = offset;
    a.color = r.color;
    a.src = r.src_desc;
    a.dst = r.dst_desc;
    a.src_rect = r.src_rect;
    a.dst_rect = r.dst_rect;
    a.sub_rects = r.sub_rects.empty() ? nullptr : r.sub_rects.data();
    a.sub_rect_count = static_cast<std::uint32_t>(r.sub_rects.size());
    a.reserve_timestamps = pass.timestamps;
    return kmd::present(a);
  });
}

Result<SubmissionId> Scheduler::queue_passes(ContextState& cs, std::vector<std::shared_ptr<Pass>> passes) {
  const SubmissionId id = next_submission_;
  ++next_submission_;
  auto sub = std::make_unique<SubmissionState>();
  sub->context = cs.context->id();
  sub->passes_left = static_cast<std::uint32_t>(passes.size());
  pending_.emplace(id, std::move(sub));
  ++cs.pending;
  for (auto& p : passes) {
    p->submission = id;
    auto w = std::make_shared<Work>();
    w->pass = p;
    w->dma_start = 0;
    w->dma_end = p->dma_bytes;
    w->patch_start = 0;
    w->patch_end = p->patch_count;
    p->queued = 1;
    w->ready_at = device_.transport().now();
    if (trace_) {
      w->queued_at = now();
      const bool present = (p->ring_flags & SubmitCommandFlags::kPresent) != 0;
      trace_->slice(trace::Track::context_queue(cs.context->id()), present ? "Present" : "Render",
                    trace::TracePoint::host(p->render_begin), trace::TracePoint::host(p->render_end),
                    {{"submission", static_cast<std::int64_t>(id.value())},
                     {"dma_bytes", static_cast<std::int64_t>(p->dma_bytes)},
                     {"patch_locations", static_cast<std::int64_t>(p->patch_count)}});
    }
    cs.queue.push_back(std::move(w));
  }
  ++counters_.submissions;
  // The submission is queued; run_passes moves it onward (a failure then is reported by
  // wait()/query()).
  return id;
}

Result<FenceStatus> Scheduler::query(SubmissionId submission) const {
  if (!submission || submission >= next_submission_)
    return Error::invalid("query: submission fence {} was never handed out (last {})", submission,
                          next_submission_.value() - 1);
  if (pending_.count(submission)) return FenceStatus::Pending;
  if (failed_.count(submission)) return FenceStatus::Aborted;
  return FenceStatus::Completed;
}

Status Scheduler::wait(SubmissionId submission, std::chrono::nanoseconds timeout) {
  SGPU_RETURN_IF_ERROR(query(submission));
  Transport& t = device_.transport();
  const auto deadline = t.now() + timeout;
  for (;;) {
    auto s = query(submission);
    if (*s == FenceStatus::Completed) return ok_status();
    if (*s == FenceStatus::Aborted) return failed_.at(submission);
    if (fatal_) return *fatal_;
    if (t.now() >= deadline) {
      const auto& sub = *pending_.at(submission);
      return Error::make(Errc::Timeout, Touched::Hardware,
                         "wait: submission fence {} (context {}) not complete within {} ns; last ring fence "
                         "reported {}, {} packets on the ring, {} queued",
                         submission, sub.context, timeout.count(), reporter_.last_reported(), hw_.size(),
                         software_queue_depth());
    }
    SGPU_RETURN_IF_ERROR(pump_until(deadline));
    SGPU_RETURN_IF_ERROR(step(deadline));
  }
}

Status Scheduler::flush() {
  if (fatal_) return *fatal_;
  SGPU_RETURN_IF_ERROR(pump_until(device_.transport().now() + options_.submit_timeout));
  return step(device_.transport().now());
}

Status Scheduler::idle(std::chrono::nanoseconds timeout) {
  Transport& t = device_.transport();
  const auto deadline = t.now() + timeout;
  for (;;) {
    if (fatal_) return *fatal_;
    if (hw_.empty() && software_queue_depth() == 0) return ok_status();
    if (t.now() >= deadline)
      return Error::make(Errc::Timeout, Touched::Hardware,
                         "idle: {} packets on the ring, {} queued after {} ns; last ring fence reported {}", hw_.size(),
                         software_queue_depth(), timeout.count(), reporter_.last_reported());
    SGPU_RETURN_IF_ERROR(pump_until(deadline));
    SGPU_RETURN_IF_ERROR(step(deadline));
  }
}

Status Scheduler::run_until(std::chrono::nanoseconds until) {
  Transport& t = device_.transport();
  do {
    if (fatal_) return *fatal_;
    SGPU_RETURN_IF_ERROR(pump());
    SGPU_RETURN_IF_ERROR(step(until));
  } while (t.now() < until);
  return ok_status();
}

RingFence Scheduler::context_completed_fence(const kmd::Context& context) const {
  const ContextState* cs = find(context.id());
  return cs ? RingFence{window_.fence_slot_value(cs->slot)} : RingFence{};
}

bool Scheduler::context_lost(const kmd::Context& context) const {
  const ContextState* cs = find(context.id());
  return cs && cs->error.has_value();
}

}  // namespace sgpu::sched
