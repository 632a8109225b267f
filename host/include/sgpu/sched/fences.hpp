// Fence reporting on one node: what the ISR tells the scheduler (DMA_COMPLETED), the check the
// scheduler makes after an engine reset (LastAbortedFenceId), and the TDR limit window.
//
// All three are pure bookkeeping, unit-tested on their own; the scheduler feeds them what it
// read from the device.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::sched {

/// One notification the ISR/DPC made (DxgkCbNotifyInterrupt), kept for tests and tools.
struct FenceNotification {
  enum class Kind { DmaCompleted, DmaPreempted, DmaFaulted, Reset };
  Kind kind = Kind::DmaCompleted;
  RingFence fence;           ///< SubmissionFenceId / PreemptionFenceId / FaultedFenceId / LastAbortedFenceId
  RingFence last_completed;  ///< DmaPreempted: LastCompletedFenceId
};

/// DMA_COMPLETED reporting: a completion is reported only when its fence is newer than the last
/// one reported (the ISR may see one write-back value several times, or a missed interrupt be
/// caught by QueryCurrentFence), and never beyond the last fence submitted (a fence the driver
/// never gave out is the fatal "invalid fence" of bug check 0x119/1).
class FenceReporter {
 public:
  /// Records that `fence` was written to the ring (strictly increasing since the last reset,
  /// and greater than every reported fence).
  void note_submitted(RingFence fence);
  /// The ISR read `hw` from the write-back record. Returns the fence to report, or nullopt if it
  /// is not newer than the last reported. InvalidArgument (fatal) if `hw` was never submitted.
  Result<std::optional<RingFence>> on_completed(RingFence hw);
  /// DxgkDdiQueryCurrentFence: the same rule (reports only a newer fence); counted separately.
  Result<std::optional<RingFence>> query_current(RingFence hw);
  /// DMA_PREEMPTED / fault / reset records (logged; they do not move the reported fence).
  void on_preempted(RingFence preemption_fence, RingFence last_completed);
  void on_faulted(RingFence faulted_fence);
  void on_reset(RingFence last_aborted);

  RingFence last_reported() const { return last_reported_; }
  RingFence last_submitted() const { return last_submitted_; }
  const std::vector<FenceNotification>& log() const { return log_; }
  struct Counters {
    std::uint64_t reported = 0;        ///< DMA_COMPLETED notifications
    std::uint64_t stale = 0;           ///< ISR reads that were not newer (not reported)
    std::uint64_t query_reported = 0;  ///< reports made by QueryCurrentFence
    std::uint64_t preempted = 0;
    std::uint64_t faulted = 0;
    std::uint64_t resets = 0;
  };
  const Counters& counters() const { return counters_; }
  /// Keep at most this many log entries (oldest dropped); 0 = unbounded.
  void set_log_limit(std::size_t limit) { log_limit_ = limit; }

 private:
  Result<std::optional<RingFence>> report(RingFence hw, bool from_query);
  void push(const FenceNotification& n);
  RingFence last_reported_;
  RingFence last_submitted_;
  std::vector<FenceNotification> log_;
  std::size_t log_limit_ = 0;
  Counters counters_;
};

/// The check after DxgkDdiResetEngine: LastAbortedFenceId must lie in [last completed, last
/// submitted]; anything else is the fatal 0x119/0xA (InvalidArgument naming the three fences).
Status check_last_aborted(RingFence last_aborted, RingFence last_completed, RingFence last_submitted);

/// TdrLimitCount / TdrLimitTime: more than `limit_count` recoveries within `limit_time` is fatal
/// (bug check 0x116 VIDEO_TDR_FAILURE).
class TdrLimiter {
 public:
  TdrLimiter(unsigned limit_count, std::chrono::nanoseconds limit_time)
      : limit_count_(limit_count), limit_time_(limit_time) {}
  /// Records a recovery at `now`; false when this one is over the limit.
  bool record(std::chrono::nanoseconds now);
  /// Recoveries inside the window ending at the last record.
  std::size_t in_window() const { return times_.size(); }
  std::uint64_t total() const { return total_; }

 private:
  unsigned limit_count_;
  std::chrono::nanoseconds limit_time_;
  std::deque<std::chrono::nanoseconds> times_;
  std::uint64_t total_ = 0;
};

}  // namespace sgpu::sched
