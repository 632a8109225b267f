// The pump: software queues → residency → (split) → Patch → SubmitCommand.
#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "scheduler_state.hpp"
#include "sgpu/kmd/patch.hpp"
#include "sgpu/sched/split.hpp"
#include "sgpu/sched/submit_command.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

namespace {

// Allocation-list indices the patch entries [begin, end) reference, sorted, unique.
std::vector<std::uint32_t> referenced(const std::vector<PatchLocation>& patches, std::uint32_t begin,
                                      std::uint32_t end) {
  std::vector<std::uint32_t> v;
  for (std::uint32_t i = begin; i < end; ++i) v.push_back(patches[i].allocation_index);
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

// Marks a dispatch that must start over because a recovery reordered the queues under it.
constexpr const char* kRestart = "dispatch restarts after a recovery";

// The caller's deadline passed while a render packet waited for ring room: nothing of it was
// emitted, it stays queued (the next pump carries on).
bool ring_room_timeout(const Error& e) { return e.code == Errc::Timeout && !e.hardware_touched; }

}  // namespace

Status Scheduler::pump() {
  if (fatal_) return *fatal_;
  // Not re-entrant: waits inside a dispatch (paging, ring room) run the ISR/DPC/TDR only.
  if (pumping_ || in_mm_ > 0) return ok_status();
  pumping_ = true;
  Status result = ok_status();
  const std::size_t capacity = device_.ring_entries() - 1;
  const auto ready = [](const ContextState& cs) { return !cs.queue.empty() && !cs.error; };
  while (!fatal_ && hw_.size() < capacity) {
    // The highest priority with work; round robin over its contexts, after the last one served.
    std::optional<int> top;
    for (const auto& [id, cs] : contexts_)
      if (ready(*cs) && (!top || cs->priority > *top)) top = cs->priority;
    if (!top) break;
    std::uint64_t& last = next_rr_[*top];
    ContextState* pick = nullptr;
    auto it = contexts_.upper_bound(last);
    for (std::size_t n = 0; n < contexts_.size(); ++n, ++it) {
      if (it == contexts_.end()) it = contexts_.begin();
      if (ready(*it->second) && it->second->priority == *top) {
        pick = it->second.get();
        break;
      }
    }
    last = pick->context->id();
    if (Status s = dispatch(*pick, pick->queue.front()); !s) {
      result = s;
      break;
    }
  }
  pumping_ = false;
  if (fatal_) return *fatal_;
  return result;
}

Status Scheduler::pump_until(std::chrono::nanoseconds deadline) {
  const auto saved = pump_deadline_;
  pump_deadline_ = deadline;
  Status s = pump();
  pump_deadline_ = saved;
  if (!s && ring_room_timeout(s.error())) return ok_status();  // still queued
  return s;
}

Result<std::vector<vidmm::Placement>> Scheduler::make_resident(ContextState& cs, const Pass& pass,
                                                               const std::vector<std::uint32_t>& allocations) {
  std::vector<AllocationListEntry> list;
  list.reserve(allocations.size());
  for (std::uint32_t i : allocations) list.push_back(pass.list[i]);
  ++in_mm_;
  auto placed = adapter_.memory_manager().make_resident(list, cs.context->residency_scope());
  --in_mm_;
  apply_mm_completed();
  return placed;
}

void Scheduler::fail_submission(SubmissionId submission, const Error& error) {
  auto it = pending_.find(submission);
  if (it == pending_.end()) return;
  ContextState* cs = find(it->second->context);
  pending_.erase(it);
  failed_.emplace(submission, error);
  if (!cs) return;
  --cs->pending;
  for (auto w = cs->queue.begin(); w != cs->queue.end();) {
    if ((*w)->pass->submission != submission) {
      ++w;
      continue;
    }
    Pass& p = *(*w)->pass;
    if (--p.queued == 0 && p.on_ring == 0) release_pass(p);
    w = cs->queue.erase(w);
  }
}

Status Scheduler::dispatch(ContextState& cs, const std::shared_ptr<Work>& work) {
  const std::uint64_t epoch = epoch_;
  Pass& pass = *work->pass;
  const auto done = [&] {
    auto it = std::find(cs.queue.begin(), cs.queue.end(), work);
    if (it != cs.queue.end()) cs.queue.erase(it);
    if (--pass.queued == 0 && pass.on_ring == 0) release_pass(pass);
  };
  const auto interrupted = [&] { return epoch != epoch_ || cs.error.has_value() || fatal_.has_value(); };
  const auto fail = [&](Error e) {
    if (fatal_) return Status(*fatal_);
    // Device-level trouble while paging (a timeout, a fault the recovery could not absorb) is
    // not this submission's fault: the adapter is lost.
    if (e.hardware_touched && (e.code == Errc::Timeout || e.code == Errc::DeviceFault || e.code == Errc::TransportError))
      return fatal(e);
    e.message = fmt::format("submission fence {} (context {}): {}", pass.submission, cs.context->id(), e.message);
    fail_submission(pass.submission, e);
    return ok_status();
  };

  const auto all = referenced(pass.patches, work->patch_start, work->patch_end);
  const auto t0 = trace_ ? now() : std::chrono::nanoseconds{};
  if (trace_ && !work->queue_traced) {
    work->queue_traced = true;
    trace_->slice(trace::Track::context_queue(cs.context->id()), "queued", trace::TracePoint::host(work->queued_at),
                  trace::TracePoint::host(t0), {{"submission", static_cast<std::int64_t>(pass.submission.value())}});
  }
  const std::uint64_t paging_before = executor_ ? executor_->counters().buffers : 0;
  auto placed = make_resident(cs, pass, all);
  if (trace_) {
    trace_->slice(trace::Track::context_queue(cs.context->id()), "residency", trace::TracePoint::host(t0),
                  trace::TracePoint::host(now()),
                  {{"submission", static_cast<std::int64_t>(pass.submission.value())},
                   {"allocations", static_cast<std::int64_t>(all.size())},
                   {"paging_buffers",
                    static_cast<std::int64_t>((executor_ ? executor_->counters().buffers : 0) - paging_before)},
                   {"fits", placed ? std::int64_t{1} : std::int64_t{0}}});
    trace_memory();
  }
  if (interrupted()) return fatal_ ? Status(*fatal_) : ok_status();
  if (placed) {
    Status s = submit_portion(cs, *work, work->dma_end, work->patch_end, all);
    if (!s) {
      if (interrupted()) return fatal_ ? Status(*fatal_) : ok_status();
      if (ring_room_timeout(s.error())) return s;  // stays queued; the pump stops here
      return fail(std::move(s).error());
    }
    done();
    return ok_status();
  }
  if (placed.error().code != Errc::OutOfMemory) return fail(std::move(placed).error());

  // The whole list does not fit: walk the patch list and submit portions (wddm-semantics §2.3).
  // A pass is counted once, however often the rest of it (after a restart) or a portion put
  // back by a recovery or preemption is walked again.
  if (!pass.split_counted) {
    pass.split_counted = true;
    ++counters_.splits;
  }
  const std::uint32_t base = work->patch_start;
  const auto fits = [&](const std::vector<std::uint32_t>& set) -> Result<bool> {
    auto r = make_resident(cs, pass, set);
    if (interrupted()) return Error{Errc::Aborted, kRestart, Touched::Nothing};
    if (!r) return std::move(r).error();
    return true;
  };
  const auto emit = [&](const SplitPortion& p) -> Status {
    // Placements of this portion: make_resident again (everything is there: no paging).
    auto r = make_resident(cs, pass, p.allocations);
    if (interrupted()) return Error{Errc::Aborted, kRestart, Touched::Nothing};
    if (!r) return std::move(r).error();
    ++counters_.portions;
    return submit_portion(cs, *work, p.dma_end, base + p.patch_start + p.patch_length, p.allocations);
  };
  auto walked = walk_split(pass.patches.data() + base, work->patch_end - base,
                           adapter_.caps().max_allocation_list_slot_id, work->dma_start, work->dma_end, fits, emit);
  if (interrupted()) return fatal_ ? Status(*fatal_) : ok_status();
  if (!walked && ring_room_timeout(walked.error())) return std::move(walked).error();  // the rest stays queued
  if (!walked) return fail(std::move(walked).error());
  done();
  return ok_status();
}

Status Scheduler::wait_ring_room(std::chrono::nanoseconds deadline, const char* what) {
  const std::size_t capacity = device_.ring_entries() - 1;
  Transport& t = device_.transport();
  while (hw_.size() >= capacity) {
    if (fatal_) return *fatal_;
    if (t.now() >= deadline)
      return Error::make(Errc::Timeout, Touched::Nothing,
                         "{}: no ring room by the deadline: {} of {} entries in flight, head ring fence {}, last "
                         "reported {}",
                         what, hw_.size(), capacity, hw_.front().fence, reporter_.last_reported());
    const auto now = t.now();
    const auto step_until = deadline - now < options_.tdr_delay ? deadline : now + options_.tdr_delay;
    SGPU_RETURN_IF_ERROR(step(step_until));
  }
  return fatal_ ? Status(*fatal_) : ok_status();
}

Status Scheduler::submit_portion(ContextState& cs, Work& work, std::uint32_t dma_end, std::uint32_t patch_end,
                                 const std::vector<std::uint32_t>& allocations) {
  const std::uint64_t epoch = epoch_;
  SGPU_RETURN_IF_ERROR(wait_ring_room(pump_deadline_, "render packet"));
  if (epoch != epoch_ || cs.error) return Error{Errc::Aborted, kRestart, Touched::Nothing};
  Pass& pass = *work.pass;
  auto& mm = adapter_.memory_manager();
  // DXGK_ALLOCATIONLIST as the memory manager placed it, for Patch.
  std::vector<AllocationListEntry> used;
  for (std::uint32_t i : allocations) {
    SGPU_ASSIGN_OR_RETURN(auto st, mm.query(pass.list[i].allocation));
    pass.dxgk_list[i].segment = st.placement.segment;
    pass.dxgk_list[i].gpu_address = st.placement.gpu_address;
    pass.dxgk_list[i].size = st.size;
    used.push_back(pass.list[i]);
  }

  // Patch is this packet's stamp: the addresses, and the fence it is given at the emission point.
  kmd::PatchArgs pa;
  pa.dma_buffer = pass.buffer.memory.cpu();
  pa.dma_size = static_cast<std::uint32_t>(pass.buffer.memory.size());
  pa.dma_start = work.dma_start;
  pa.dma_end = dma_end;
  pa.private_data = pass.buffer.private_data.data();
  pa.private_data_size = static_cast<std::uint32_t>(pass.buffer.private_data.size());
  pa.allocation_list = pass.dxgk_list.data();
  pa.allocation_list_size = static_cast<std::uint32_t>(pass.dxgk_list.size());
  pa.patch_list = pass.patches.data();
  pa.patch_list_size = pass.patch_count;
  pa.patch_start = work.patch_start;
  pa.patch_length = patch_end - work.patch_start;
  pa.fence_address = window_.fence_slot_gpu(cs.slot);
  if (pass.ring_flags & SubmitCommandFlags::kPresent) pa.flags.value |= kmd::PatchFlags::kPresent;
  if (pass.timestamps) {
    pa.timestamp_address = timestamp_address(pass);
    // The portion that starts the pass (again, after a recovery) starts with a clean landing area.
    if (work.dma_start == 0)
      std::memset(static_cast<std::byte*>(pa.dma_buffer) + kmd::timestamp_landing_offset(pa.dma_size), 0, 16);
  }
  const std::uint64_t context = cs.context->id();
  const auto patch = [this, &pa, context](RingFence fence) -> Status {
    pa.submission_fence = fence;
    ++counters_.patches;
    const auto t0 = trace_ ? now() : std::chrono::nanoseconds{};
    SGPU_RETURN_IF_ERROR(kmd::patch(pa));
    if (trace_)
      trace_->slice(trace::Track::context_queue(context), "Patch", trace::TracePoint::host(t0),
                    trace::TracePoint::host(now()),
                    {{"fence", static_cast<std::int64_t>(fence.value())},
                     {"patch_locations", static_cast<std::int64_t>(pa.patch_length)}});
    if (options_.after_patch) options_.after_patch(pa.dma_buffer, pa.dma_start, pa.dma_end);
    return ok_status();
  };
  HwPacket hp;
  hp.context = cs.context->id();
  hp.pass = work.pass;
  hp.dma_start = work.dma_start;
  hp.dma_end = dma_end;
  hp.patch_start = work.patch_start;
  hp.patch_end = patch_end;
  hp.ready_at = work.ready_at;
  // A preempted packet put back: its first portion is the one that resumes where it stopped.
  hp.overran_at = std::exchange(work.overran_at, std::nullopt);
  hp.preempted_at = std::exchange(work.preempted_at, std::nullopt);
  SGPU_RETURN_IF_ERROR(emit(std::move(hp), patch, &used));
  ++counters_.render_packets;
  work.dma_start = dma_end;
  work.patch_start = patch_end;
  return ok_status();
}

}  // namespace sgpu::sched
