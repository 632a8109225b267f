#include "sgpu/sched/fences.hpp"

#include <fmt/format.h>

namespace sgpu::sched {

void FenceReporter::push(const FenceNotification& n) {
  log_.push_back(n);
  if (log_limit_ != 0 && log_.size() > log_limit_) log_.erase(log_.begin(), log_.begin() + (log_.size() - log_limit_));
}

void FenceReporter::note_submitted(FenceId fence) {
  if (fence > last_submitted_) last_submitted_ = fence;
}

Result<std::optional<FenceId>> FenceReporter::report(FenceId hw, bool from_query) {
  if (hw > last_submitted_)
    return Error{Errc::InvalidArgument,
                 fmt::format("fence reporting: the device reports fence {} but the last fence submitted is {} "
                             "(invalid fence ID, bug check 0x119/0x1)",
                             hw, last_submitted_),
                 true};
  if (hw <= last_reported_) {
    ++counters_.stale;
    return std::optional<FenceId>{};
  }
  last_reported_ = hw;
  ++counters_.reported;
  if (from_query) ++counters_.query_reported;
  push({FenceNotification::Kind::DmaCompleted, hw, 0});
  return std::optional<FenceId>{hw};
}

Result<std::optional<FenceId>> FenceReporter::on_completed(FenceId hw) { return report(hw, false); }
Result<std::optional<FenceId>> FenceReporter::query_current(FenceId hw) { return report(hw, true); }

void FenceReporter::on_preempted(FenceId preemption_fence, FenceId last_completed) {
  ++counters_.preempted;
  push({FenceNotification::Kind::DmaPreempted, preemption_fence, last_completed});
}

void FenceReporter::on_faulted(FenceId faulted_fence) {
  ++counters_.faulted;
  push({FenceNotification::Kind::DmaFaulted, faulted_fence, 0});
}

void FenceReporter::on_reset(FenceId last_aborted) {
  ++counters_.resets;
  push({FenceNotification::Kind::Reset, last_aborted, last_reported_});
}

Status check_last_aborted(FenceId last_aborted, FenceId last_completed, FenceId last_submitted) {
  if (last_aborted < last_completed || last_aborted > last_submitted)
    return Error{Errc::InvalidArgument,
                 fmt::format("engine reset: LastAbortedFenceId {} is outside [last completed {}, last submitted {}] "
                             "(bug check 0x119/0xA)",
                             last_aborted, last_completed, last_submitted),
                 true};
  return ok_status();
}

bool TdrLimiter::record(std::chrono::nanoseconds now) {
  ++total_;
  times_.push_back(now);
  while (!times_.empty() && now - times_.front() > limit_time_) times_.pop_front();
  return times_.size() <= limit_count_;
}

}  // namespace sgpu::sched
