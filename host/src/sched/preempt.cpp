// Preemption (wddm-semantics §1.13, §2.4): the scheduling quantum that lets higher-priority work
// in, and the TdrDelay overrun rule. Both ask the engine to stop at the next packet boundary
// (DxgkDdiPreemptCommand) and handle DMA_PREEMPTED when it comes (the ISR calls
// on_preemption_answer()). When the answer calls for a new order, the engine is reset to discard
// the stopped ring and the work is put back — the stopped entry from the packet it stopped at
// (PREEMPT_OFFSET) — which is a scheduling step, not a recovery: nobody is guilty, the TDR
// limiter does not count it. A recovery (guilty context, engine reset) follows only when the
// engine does not answer within preempt_timeout or the same packet overruns TdrDelay again
// without a packet completed in between.
#include <algorithm>
#include <limits>
#include <utility>

#include <fmt/format.h>

#include "scheduler_state.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

namespace {
double us(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1000.0; }
constexpr std::chrono::nanoseconds kNever = std::chrono::nanoseconds::max();
}  // namespace

std::string Scheduler::overrun_message(const HwPacket& p) const {
  return fmt::format("ring fence {} ({}) ran longer than TdrDelay {} us", p.fence,
                     p.context == 0 ? std::string("paging") : fmt::format("context {}", p.context),
                     us(options_.tdr_delay));
}

// When work of a higher priority than the head of the ring's started waiting (nullopt: none
// waits, the head is a paging packet, or there is no preemption). Waiting work is on the ring
// behind the head or at the front of a software queue.
std::optional<std::chrono::nanoseconds> Scheduler::inversion_since() const {
  if (fatal_ || hw_.empty() || !options_.use_preemption || !device_.info().has_preemption) return {};
  const HwPacket& head = hw_.front();
  const ContextState* running = head.is_paging() ? nullptr : find(head.context);
  if (!running) return {};
  std::optional<std::chrono::nanoseconds> since;
  const auto waits = [&](int priority, std::chrono::nanoseconds ready) {
    if (priority > running->priority && (!since || ready < *since)) since = ready;
  };
  for (std::size_t i = 1; i < hw_.size(); ++i)
    if (const ContextState* cs = hw_[i].is_paging() ? nullptr : find(hw_[i].context)) waits(cs->priority, hw_[i].ready_at);
  for (const auto& [id, cs] : contexts_)
    if (!cs->error && !cs->queue.empty()) waits(cs->priority, cs->queue.front()->ready_at);
  return since;
}

// The next time check_timeout() has something to decide (step() waits no longer than that).
std::chrono::nanoseconds Scheduler::next_check_at() const {
  if (fatal_) return kNever;
  if (preempt_) {
    if (preempt_->overrun) return preempt_->requested_at + options_.preempt_timeout;
    return hw_.empty() ? kNever : head_since_ + options_.tdr_delay;
  }
  if (hw_.empty()) return kNever;
  auto at = head_since_ + options_.tdr_delay;
  if (auto since = inversion_since()) at = std::min(at, std::min(*since, head_since_) + options_.preempt_quantum);
  return at;
}

// A packet that cannot be let run: a paging packet is the adapter's loss, a render packet its
// context's (recover()).
Status Scheduler::hang(std::size_t index, const std::string& why, std::optional<std::uint32_t> stopped_at) {
  if (hw_.at(index).is_paging()) {
    take_postmortem(why + " (a hung paging packet)", &hw_[index], stopped_at);
    return fatal(Error{Errc::Timeout, why + " (a hung paging packet)", Touched::Hardware});
  }
  return recover(index, why, stopped_at);
}

// After every step: the TdrDelay clock of the head of the ring, the quantum of waiting
// higher-priority work, and the deadline of an unanswered overrun request.
Status Scheduler::check_timeout() {
  if (fatal_) return *fatal_;
  if (hw_.empty()) return ok_status();
  const auto now = device_.transport().now();
  const HwPacket& head = hw_.front();
  if (preempt_) {
    if (preempt_->overrun) {
      if (now < preempt_->requested_at + options_.preempt_timeout) return ok_status();
      ++counters_.preempt_timeouts;
      if (trace_) trace_tdr("preemption not answered", {{"fence", static_cast<std::int64_t>(preempt_->fence.value())}});
      const auto it = std::find_if(hw_.begin(), hw_.end(), [&](const HwPacket& p) { return p.fence == preempt_->fence; });
      if (it == hw_.end()) {
        // It retired while the request was pending: the engine stops at the next packet boundary
        // and the answer is handled then. The head gets its own TdrDelay.
        preempt_->overrun = false;
        head_since_ = now;
        return ok_status();
      }
      const auto index = static_cast<std::size_t>(it - hw_.begin());
      return hang(index,
                  fmt::format("{}; the engine did not answer the preemption request within {} us",
                              overrun_message(*it), us(options_.preempt_timeout)),
                  {});
    }
    if (now - head_since_ >= options_.tdr_delay) {
      // A request for priority still unanswered while the head overran TdrDelay: from now on it
      // is this overrun's request (the engine merges requests: nothing more to write).
      preempt_->overrun = true;
      preempt_->fence = head.fence;
      preempt_->requested_at = now;
      if (trace_)
        trace_tdr("preempt request", {{"fence", static_cast<std::int64_t>(head.fence.value())},
                                      {"context", static_cast<std::int64_t>(head.context)}});
    }
    return ok_status();
  }
  if (now - head_since_ >= options_.tdr_delay) {
    if (!options_.use_preemption || !device_.info().has_preemption) return hang(0, overrun_message(head), {});
    return request_preemption(true, head);
  }
  if (auto since = inversion_since(); since && now >= std::min(*since, head_since_) + options_.preempt_quantum) {
    ++counters_.priority_preemptions;
    return request_preemption(false, head);
  }
  return ok_status();
}

// DxgkDdiPreemptCommand; the PreemptionFenceId is the next ring fence (not consumed).
Status Scheduler::request_preemption(bool overrun, const HwPacket& head) {
  const RingFence pf = last_ring_fence_.next();
  if (Status s = device_.request_preemption(pf); !s) return fatal(std::move(s).error());
  preempt_ = PreemptRequest{overrun, head.fence, device_.transport().now()};
  if (trace_) {
    std::vector<std::pair<std::string, std::int64_t>> args{{"fence", static_cast<std::int64_t>(head.fence.value())},
                                                           {"context", static_cast<std::int64_t>(head.context)},
                                                           {"preemption_fence", static_cast<std::int64_t>(pf.value())}};
    if (overrun) trace_tdr("preempt request", std::move(args));
    else trace_preemption("request", std::move(args));
  }
  return ok_status();
}

// DMA_PREEMPTED: the engine stopped at a packet boundary, everything before it retired or in
// memory. Decide what runs next: the work put back in a new order (take_back), a hang
// (recover), or the engine resumed where it stopped.
Status Scheduler::on_preemption_answer() {
  Transport& t = device_.transport();
  ++counters_.preemptions;
  auto st = device_.preemption_state();
  if (!st) return fatal(std::move(st).error());
  reporter_.on_preempted(st->preemption_fence, st->last_completed);
  if (trace_)
    trace_->instant(trace::Track::of(trace::TrackKind::Interrupts), "DMA_PREEMPTED", trace::TracePoint::host(now()),
                    {{"preemption_fence", static_cast<std::int64_t>(st->preemption_fence.value())},
                     {"last_completed", static_cast<std::int64_t>(st->last_completed.value())},
                     {"in_entry", std::int64_t{st->in_entry}},
                     {"offset", static_cast<std::int64_t>(st->offset)}});
  SGPU_RETURN_IF_ERROR(report_and_retire(device_.completed_fence(), false));
  if (!st->preempted)
    return fatal(Error::make(Errc::DeviceFault, Touched::Hardware,
                             "preemption: the preempted interrupt came but PREEMPT_STATUS.preempted is 0"));
  const std::optional<PreemptRequest> req = std::exchange(preempt_, std::nullopt);
  if (req) {
    auto& pt = preemption_times_;
    pt.last_request_to_answer = t.now() - req->requested_at;
    pt.max_request_to_answer = std::max(pt.max_request_to_answer, pt.last_request_to_answer);
    ++pt.answered;
  }
  const auto resume_engine = [&]() -> Status {
    if (Status s = device_.resume_from_preemption(); !s) return fatal(std::move(s).error());
    head_since_ = t.now();
    return ok_status();
  };
  if (hw_.empty()) return resume_engine();

  HwPacket& head = hw_.front();
  const std::uint32_t start = head.is_paging() ? 0 : head.dma_start;
  const std::uint32_t end = head.is_paging() ? head.paging.end_offset : head.dma_end;
  std::uint32_t stop = start;
  if (st->in_entry) {
    if (st->ring_index != head.ring_index || st->offset < start || st->offset >= end || st->offset % 4 != 0)
      return fatal(Error::make(Errc::DeviceFault, Touched::Hardware,
                               "preemption: the engine stopped in ring entry {} at offset {}, but the entry at the "
                               "head is {} (ring fence {}) with packets in [{}, {})",
                               st->ring_index, st->offset, head.ring_index, head.fence, start, end));
    stop = st->offset;
  }

  if (req && req->overrun && head.fence == req->fence) {
    const std::string why = overrun_message(head);
    if (head.overran_at && *head.overran_at == stop)
      return hang(0, fmt::format("{} twice, stopped at offset {} both times: no packet completed in between", why, stop),
                  stop);
    ++counters_.overruns;
    if (head.is_paging()) {
      // Paging runs ahead of everything anyway: it continues where it stopped.
      head.overran_at = stop;
      if (trace_)
        trace_tdr("overrun: resumed", {{"fence", static_cast<std::int64_t>(head.fence.value())},
                                       {"offset", static_cast<std::int64_t>(stop)}});
      return resume_engine();
    }
    return take_back(stop, true, req->requested_at);
  }
  if (inversion_since()) return take_back(stop, false, req ? req->requested_at : t.now());
  return resume_engine();
}

// The engine is stopped at `stop` in the head entry: reset it (which discards the ring) and put
// everything back — paging with its fences, render packets in their queues, the stopped one
// from `stop` — for the pump to order by priority.
Status Scheduler::take_back(std::uint32_t stop, bool overran, std::chrono::nanoseconds requested_at) {
  const HwPacket head = hw_.front();
  SGPU_ASSIGN_OR_RETURN(const RingFence last_aborted, reset_engine_checked(nullptr, head));
  const Resume resume{head.fence, stop, overran, requested_at};
  std::vector<HwPacket> paging;
  const std::size_t requeued = take_back_ring(0, &resume, paging);
  ++counters_.preempt_requeues;
  if (trace_) {
    std::vector<std::pair<std::string, std::int64_t>> args{
        {"fence", static_cast<std::int64_t>(head.fence.value())},
        {"context", static_cast<std::int64_t>(head.context)},
        {"resume_offset", static_cast<std::int64_t>(stop)},
        {"last_aborted", static_cast<std::int64_t>(last_aborted.value())},
        {"render_packets_requeued", static_cast<std::int64_t>(requeued)},
        {"paging_packets_resubmitted", static_cast<std::int64_t>(paging.size())}};
    if (overran) trace_tdr("overrun: requeued", std::move(args));
    else trace_preemption("requeued", std::move(args));
  }
  return resubmit_paging(std::move(paging), last_aborted);
}

// The head of the ring changed: its TdrDelay clock starts, and a packet put back by a
// preemption may be running again.
void Scheduler::head_started() {
  head_since_ = device_.transport().now();
  note_resumed_head();
}

void Scheduler::note_resumed_head() {
  if (hw_.empty() || !hw_.front().preempted_at) return;
  HwPacket& h = hw_.front();
  const auto d = device_.transport().now() - *h.preempted_at;
  h.preempted_at.reset();
  auto& pt = preemption_times_;
  ++pt.resumed;
  pt.last_request_to_resume = d;
  pt.max_request_to_resume = std::max(pt.max_request_to_resume, d);
  pt.total_request_to_resume += d;
  const SubmissionId submission = h.pass->submission;
  for (auto it = preemption_log_.rbegin(); it != preemption_log_.rend(); ++it)
    if (it->submission == submission && it->context == h.context && !it->resumed_at) {
      it->resumed_at = device_.transport().now();
      it->resumed_fence = h.fence;
      break;
    }
  if (trace_) {
    // Where the engine row's slice of the rest begins (a register read, only while tracing).
    if (auto cycles = device_.cycle_counter()) {
      h.pass->resumed_cycles = *cycles;
      trace_->calibrate(*cycles, now());
    }
    trace_->instant(trace::Track::context_queue(h.context), "resumed", trace::TracePoint::host(now()),
                    {{"submission", static_cast<std::int64_t>(submission.value())},
                     {"fence", static_cast<std::int64_t>(h.fence.value())},
                     {"offset", static_cast<std::int64_t>(h.dma_start)}});
    trace_preemption("resumed", {{"fence", static_cast<std::int64_t>(h.fence.value())},
                                 {"context", static_cast<std::int64_t>(h.context)},
                                 {"offset", static_cast<std::int64_t>(h.dma_start)},
                                 {"request_to_resume_ns", static_cast<std::int64_t>(d.count())}});
  }
}

void Scheduler::trace_preemption(const char* step, std::vector<std::pair<std::string, std::int64_t>> args) {
  trace::Args a;
  for (auto& [k, v] : args) a.push_back({std::move(k), v});
  trace_->instant(trace::Track::of(trace::TrackKind::Interrupts), fmt::format("preemption: {}", step),
                  trace::TracePoint::host(now()), std::move(a));
}

}  // namespace sgpu::sched
