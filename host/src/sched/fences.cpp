#include "sgpu/sched/fences.hpp"

#include <fmt/format.h>

namespace sgpu::sched {

void FenceReporter::push(const FenceNotification& n) {
  log_.push_back(n);
  if (log_limit_ != 0 && log_.size() > log_limit_) log_.erase(log_.begin(), log_.begin() + (log_.size() - log_limit_));
}

void FenceReporter::note_submitted(RingFence fence) {
  if (fence > last_submitted_) last_submitted_ = fence;
}

Result<std::optional<RingFence>> FenceReporter::report(RingFence hw, bool from_query) {
  if (hw > last_submitted_)
    return Error::make(Errc::InvalidArgument, Touched::Hardware,
                       "fence reporting: the device reports fence {} but the last fence submitted is {} "
                       "(invalid fence ID, bug check 0x119/0x1)",
                       hw, last_submitted_);
  if (hw <= last_reported_) {
    ++counters_.stale;
    return std::optional<RingFence>{};
  }
  last_reported_ = hw;
  ++counters_.reported;
  if (from_query) ++counters_.query_reported;
  push({FenceNotification::Kind::DmaCompleted, hw, RingFence{}});
  return std::optional<RingFence>{hw};
}

Result<std::optional<RingFence>> FenceReporter::on_completed(RingFence hw) { return report(hw, false); }
Result<std::optional<RingFence>> FenceReporter::query_current(RingFence hw) { return report(hw, true); }

void FenceReporter::on_preempted(RingFence preemption_fence, RingFence last_completed) {
  ++counters_.preempted;
  push({FenceNotification::Kind::DmaPreempted, preemption_fence, last_completed});
}

void FenceReporter::on_faulted(RingFence faulted_fence) {
  ++counters_.faulted;
  push({FenceNotification::Kind::DmaFaulted, faulted_fence, RingFence{}});
}

void FenceReporter::on_reset(RingFence last_aborted) {
  ++counters_.resets;
  push({FenceNotification::Kind::Reset, last_aborted, last_reported_});
}

Status check_last_aborted(RingFence last_aborted, RingFence last_completed, RingFence last_submitted) {
  if (last_aborted < last_completed || last_aborted > last_submitted)
    return Error::make(Errc::InvalidArgument, Touched::Hardware,
                       "engine reset: LastAbortedFenceId {} is outside [last completed {}, last submitted {}] "
                       "(bug check 0x119/0xA)",
                       last_aborted, last_completed, last_submitted);
  return ok_status();
}

bool TdrLimiter::record(std::chrono::nanoseconds now) {
  ++total_;
  times_.push_back(now);
  while (!times_.empty() && now - times_.front() > limit_time_) times_.pop_front();
  return times_.size() <= limit_count_;
}

}  // namespace sgpu::sched
