// ISR, DPC, retirement, the TDR check and recovery by engine reset.
#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "scheduler_state.hpp"
#include "sgpu/sched/submit_command.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

namespace {
double us(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1000.0; }
}  // namespace

Status Scheduler::step(std::chrono::nanoseconds deadline) {
  if (fatal_) return *fatal_;
  Transport& t = device_.transport();
  const auto now = t.now();
  auto budget = std::max(deadline - now, std::chrono::nanoseconds{0});
  budget = std::min(budget, std::max(next_check_at() - now, std::chrono::nanoseconds{0}));
  auto line = device_.wait_interrupt(budget);
  if (!line) return fatal(std::move(line).error());
  if (*line) {
    auto ev = device_.acknowledge_interrupts();
    if (!ev) return fatal(std::move(ev).error());
    if (ev->any()) {
      ++counters_.interrupts;
      note_interrupt(*ev);
      if (trace_) {
        trace_calibrate();
        trace_->instant(trace::Track::of(trace::TrackKind::Interrupts), "interrupt", trace::TracePoint::host(t.now()),
                        {{"dma_completed", std::int64_t{ev->dma_completed}},
                         {"preempted", std::int64_t{ev->preempted}},
                         {"fault", std::int64_t{ev->fault}}});
      }
      SGPU_RETURN_IF_ERROR(isr_and_dpc(*ev));
    }
  } else if (!hw_.empty()) {
    // No interrupt although work is outstanding: is the device still there (a removed card
    // raises none and reads all ones)? Then the OS's QueryCurrentFence path.
    SGPU_RETURN_IF_ERROR(check_device());
    SGPU_RETURN_IF_ERROR(query_current_fence());
  }
  return check_timeout();
}

Status Scheduler::isr_and_dpc(const InterruptEvents& ev) {
  if (ev.dma_completed || ev.fault) SGPU_RETURN_IF_ERROR(report_and_retire(device_.completed_fence(), false));
  if (ev.fault) {
    const auto& f = device_.latched_fault();
    FaultRecord rec = f ? *f : FaultRecord{};
    reporter_.on_faulted(rec.fence);
    if (trace_)
      trace_->instant(trace::Track::of(trace::TrackKind::Interrupts), "DMA_FAULTED", trace::TracePoint::host(now()),
                      {{"fence", static_cast<std::int64_t>(rec.fence.value())}, {"fault", to_string(rec)}});
    // The faulting packet: by fence, else by ring index, else the head.
    std::size_t idx = 0;
    bool found = false;
    for (std::size_t i = 0; i < hw_.size() && !found; ++i)
      if (rec.fence != 0 && hw_[i].fence == rec.fence) idx = i, found = true;
    for (std::size_t i = 0; i < hw_.size() && !found; ++i)
      if (hw_[i].ring_index == rec.ring_index) idx = i, found = true;
    if (hw_.empty()) {
      take_postmortem("device fault with no packet on the ring: " + to_string(rec), nullptr, {});
      return fatal(
          Error::make(Errc::DeviceFault, Touched::Hardware, "fault with no packet on the ring: {}", to_string(rec)));
    }
    return recover(idx, "device fault: " + to_string(rec));
  }
  if (ev.preempted) return on_preemption_answer();
  return ok_status();
}

Status Scheduler::report_and_retire(RingFence hw, bool from_query) {
  auto r = from_query ? reporter_.query_current(hw) : reporter_.on_completed(hw);
  if (!r) return fatal(std::move(r).error());
  if (*r) retire(**r);
  return ok_status();
}

Result<std::optional<RingFence>> Scheduler::query_current_fence() {
  if (fatal_) return *fatal_;
  const RingFence before = reporter_.last_reported();
  SGPU_RETURN_IF_ERROR(report_and_retire(device_.completed_fence(), true));
  if (reporter_.last_reported() == before) return std::optional<RingFence>{};
  return std::optional<RingFence>{reporter_.last_reported()};
}

// DPC: every packet up to `hw` retired, in ring order.
void Scheduler::retire(RingFence hw) {
  bool head_changed = false;
  while (!hw_.empty() && hw_.front().fence <= hw) {
    HwPacket p = std::move(hw_.front());
    hw_.pop_front();
    head_changed = true;
    if (trace_) trace_retired(p);
    if (!p.pass) continue;  // paging: its buffer goes back below (DeviceExecutor::reclaim)
    Pass& pass = *p.pass;
    if (--pass.on_ring != 0 || pass.queued != 0) continue;
    release_pass(pass);
    auto it = pending_.find(pass.submission);
    if (it == pending_.end()) continue;
    if (--it->second->passes_left == 0) {
      if (ContextState* cs = find(it->second->context)) --cs->pending;
      pending_.erase(it);
    }
  }
  if (head_changed) note_resumed_head();
  if (head_changed) head_since_ = device_.transport().now();
  // Paging ran ahead: the buffers of retired paging packets go back (a FENCE record that
  // disagrees fails the executor's next execute(), with hardware touched).
  if (head_changed && executor_) (void)executor_->reclaim();
  if (trace_ && head_changed) trace_ring_occupancy();
  mm_completed_pending_ = std::max(mm_completed_pending_, hw);
  apply_mm_completed();
}

void Scheduler::apply_mm_completed() {
  // Never inside a MemoryManager call (the executor's wait runs the DPC while make_resident is
  // on the stack): applied when it returned.
  if (in_mm_ > 0) return;
  auto& mm = adapter_.memory_manager();
  if (mm_completed_pending_ > mm.completed_fence()) mm.set_completed_fence(mm_completed_pending_);
}

// The engine reset of a recovery or of a preemption's take-back: DxgkDdiResetEngine, the OS's
// check of LastAbortedFenceId, and what completed before the reset retired. The reset also drops
// a preemption request still pending. `tdr_step` names the TDR trace step (null: not traced
// here; the preemption traces its own). Returns LastAbortedFenceId.
Result<RingFence> Scheduler::reset_engine_checked(const char* tdr_step, const HwPacket& at_head) {
  const RingFence last_submitted = reporter_.last_submitted();
  if (Status s = device_.reset_engine(); !s) return fatal(std::move(s).error()).error();
  preempt_.reset();
  const RingFence last_aborted = device_.last_aborted_fence();
  const RingFence completed = device_.completed_fence();
  if (Status s = check_last_aborted(last_aborted, completed, last_submitted); !s)
    return fatal(std::move(s).error()).error();
  reporter_.on_reset(last_aborted);
  if (trace_ && tdr_step)
    trace_tdr(tdr_step, {{"guilty_fence", static_cast<std::int64_t>(at_head.fence.value())},
                         {"context", static_cast<std::int64_t>(at_head.context)},
                         {"last_aborted", static_cast<std::int64_t>(last_aborted.value())},
                         {"completed", static_cast<std::int64_t>(completed.value())}});
  SGPU_RETURN_IF_ERROR(report_and_retire(completed, false));
  return last_aborted;
}

// Everything still on the ring comes off it (the engine was just reset): paging packets into
// `paging` (resubmitted with their fences by resubmit_paging), the packets of
// `cancelled_context` (0: none) dropped, every other render packet back at the head of its
// context's queue in ring order, so the pump makes it resident, patches it again and gives it a
// new fence. `resume` (may be null) names the entry a preemption stopped: it is put back from
// the packet where it stopped. Returns how many render packets were put back.
std::size_t Scheduler::take_back_ring(std::uint64_t cancelled_context, const Resume* resume,
                                      std::vector<HwPacket>& paging) {
  const auto stopped = [&](const HwPacket& p) { return resume && p.fence == resume->fence; };
  if (trace_)
    for (const auto& p : hw_)
      trace_aborted(p, p.context == 0                                        ? "resubmitted with its fence"
                       : cancelled_context != 0 && p.context == cancelled_context ? "cancelled: its context is lost"
                       : stopped(p) ? "preempted: resumes where it stopped"
                                    : "requeued for a new fence");
  std::map<std::uint64_t, std::vector<HwPacket>> requeue;
  for (auto& p : hw_) {
    if (p.context == 0) {
      paging.push_back(p);
    } else if (cancelled_context != 0 && p.context == cancelled_context) {
      ++counters_.cancelled_packets;
      if (--p.pass->on_ring == 0 && p.pass->queued == 0) release_pass(*p.pass);
    } else {
      requeue[p.context].push_back(p);
    }
  }
  hw_.clear();

  std::size_t requeued = 0;
  for (auto& [ctx, list] : requeue) {
    ContextState* cs = find(ctx);
    for (auto it = list.rbegin(); it != list.rend(); ++it) {
      Pass& pass = *it->pass;
      --pass.on_ring;
      if (!cs) {
        if (pass.on_ring == 0 && pass.queued == 0) release_pass(pass);
        continue;
      }
      auto w = std::make_shared<Work>();
      w->pass = it->pass;
      w->dma_start = it->dma_start;
      w->dma_end = it->dma_end;
      w->patch_start = it->patch_start;
      w->patch_end = it->patch_end;
      w->ready_at = it->ready_at;
      w->overran_at = it->overran_at;
      if (stopped(*it)) {
        // The packets before the stop completed: the rest runs from there, its patch entries
        // from the first one of the packet it stopped at (they are in SplitOffset order).
        w->dma_start = resume->offset;
        while (w->patch_start < w->patch_end && pass.patches[w->patch_start].split_offset < resume->offset)
          ++w->patch_start;
        // An overrun stopped where a previous one did made no progress: remembered, so that
        // the next overrun at that offset is a hang. Progress forgets an earlier overrun.
        if (resume->overran) w->overran_at = resume->offset;
        else if (w->overran_at && *w->overran_at != resume->offset) w->overran_at.reset();
        w->preempted_at = resume->requested_at;
        ++counters_.resumed_packets;
        if (preemption_log_.size() == kPreemptionLogSize) preemption_log_.pop_front();
        preemption_log_.push_back(PreemptionRecord{pass.submission, ctx, it->fence, resume->offset, resume->overran,
                                                   resume->requested_at, now(), std::nullopt, RingFence{}});
        if (trace_)
          trace_->instant(trace::Track::context_queue(ctx), "preempted", trace::TracePoint::host(now()),
                          {{"submission", static_cast<std::int64_t>(pass.submission.value())},
                           {"fence", static_cast<std::int64_t>(it->fence.value())},
                           {"resume_offset", static_cast<std::int64_t>(resume->offset)},
                           {"overrun", std::int64_t{resume->overran}}});
      }
      ++pass.queued;
      if (trace_) w->queued_at = now();
      cs->queue.push_front(std::move(w));
      ++counters_.requeued_packets;
      ++requeued;
    }
  }
  return requeued;
}

// Paging packets first, with their original fences (they are still > the completed fence); their
// buffers still hold those fences: nothing to stamp. Then the dispatch under way (if any)
// starts over: the queues changed under it.
Status Scheduler::resubmit_paging(std::vector<HwPacket> paging, RingFence last_aborted) {
  const bool none = paging.empty();
  for (auto& p : paging) {
    SGPU_RETURN_IF_ERROR(emit(std::move(p), nullptr, nullptr));
    ++counters_.resubmitted_paging;
  }
  // Nothing up to the aborted fence runs any more (except resubmitted paging, which completes
  // past it): allocations the aborted packets used are idle.
  if (none) mm_completed_pending_ = std::max(mm_completed_pending_, last_aborted);
  apply_mm_completed();
  head_since_ = device_.transport().now();
  ++epoch_;
  return ok_status();
}

Status Scheduler::recover(std::size_t guilty_index, const std::string& why, std::optional<std::uint32_t> stopped_at) {
  Transport& t = device_.transport();
  const HwPacket guilty_packet = hw_.at(guilty_index);
  take_postmortem(why, &guilty_packet, stopped_at);  // before the reset clears the fault record
  if (guilty_packet.context == 0)
    return fatal(Error::make(Errc::DeviceFault, Touched::Hardware, "paging packet (ring fence {}) failed: {}",
                             guilty_packet.fence, why));

  SGPU_ASSIGN_OR_RETURN(const RingFence last_aborted, reset_engine_checked("engine reset", guilty_packet));
  ++counters_.recoveries;
  if (!limiter_.record(t.now()))
    return fatal(Error::make(Errc::DeviceLost, Touched::Hardware,
                             "{} recoveries within TdrLimitTime {} us exceed TdrLimitCount {} (bug check 0x116); "
                             "last: {}",
                             limiter_.in_window(), us(options_.tdr_limit_time), options_.tdr_limit_count, why));

  // Who was running: gone if it retired while the engine drained.
  ContextState* guilty = nullptr;
  for (const auto& p : hw_)
    if (p.fence == guilty_packet.fence) guilty = find(guilty_packet.context);

  std::vector<HwPacket> paging;
  const std::size_t requeued = take_back_ring(guilty ? guilty->context->id() : 0, nullptr, paging);
  if (trace_)
    trace_tdr("resubmission", {{"render_packets_requeued", static_cast<std::int64_t>(requeued)},
                               {"paging_packets_resubmitted", static_cast<std::int64_t>(paging.size())}});

  // The guilty context: in error, its queue cancelled, its submissions aborted.
  if (guilty) {
    const Error e = Error::make(Errc::DeviceLost, Touched::Hardware,
                                "context {} was put in error by hang recovery ({}); its ring fence {} was aborted",
                                guilty->context->id(), why, guilty_packet.fence);
    guilty->error = e;
    for (auto& w : guilty->queue) {
      ++counters_.cancelled_packets;
      if (--w->pass->queued == 0 && w->pass->on_ring == 0) release_pass(*w->pass);
    }
    guilty->queue.clear();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second->context != guilty->context->id()) {
        ++it;
        continue;
      }
      failed_.emplace(it->first, e);
      it = pending_.erase(it);
    }
    guilty->pending = 0;
    if (trace_)
      trace_tdr("context lost", {{"context", static_cast<std::int64_t>(guilty->context->id())},
                                 {"fence", static_cast<std::int64_t>(guilty_packet.fence.value())}});
  }
  return resubmit_paging(std::move(paging), last_aborted);
}

// ---- vidmm::PagingQueue

Result<RingFence> Scheduler::submit_paging(const vidmm::PagingSubmission& submission, const vidmm::PagingStamp& stamp) {
  if (fatal_) return *fatal_;
  if (submission.buffer == nullptr || !*submission.buffer)
    return Error::invalid("submit_paging: the paging buffer has no DMA memory");
  // Paging waits for room as long as TDR needs to clear every entry ahead of it, no longer.
  const auto bound = static_cast<std::int64_t>(device_.ring_entries()) * (options_.tdr_delay + options_.preempt_timeout);
  if (Status room = wait_ring_room(device_.transport().now() + bound, "paging buffer"); !room) {
    Error e = std::move(room).error();
    e.hardware_touched = true;  // the engine makes no progress: the adapter is lost
    return fatal(std::move(e)).error();
  }
  HwPacket p;
  p.paging = submission;
  SGPU_ASSIGN_OR_RETURN(const RingFence fence, emit(std::move(p), stamp, nullptr));
  ++counters_.paging_packets;
  return fence;
}

Status Scheduler::wait_paging(RingFence fence, std::chrono::nanoseconds timeout) {
  Transport& t = device_.transport();
  // The caller's deadline (paging runs ahead: only a CPU access such as a lock waits here, and it
  // says how long; TDR recovers a hang ahead of the fence meanwhile, if the deadline allows).
  const auto bound = timeout;
  const auto deadline = t.now() + bound;
  for (;;) {
    if (fatal_) return *fatal_;
    if (reporter_.last_reported() >= fence) return ok_status();
    if (t.now() >= deadline)
      return Error::make(Errc::Timeout, Touched::Hardware,
                         "paging fence {} not complete within {} us; last reported {}", fence, us(bound),
                         reporter_.last_reported());
    SGPU_RETURN_IF_ERROR(step(deadline));
  }
}

}  // namespace sgpu::sched
