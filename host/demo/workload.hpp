// The demo workload on a Runtime: what `sgpu demo` runs and its test checks.
//
// Four contexts on one device, as a desktop would have them:
//   render   two command lists draw the scene (scene.hpp) into the back buffer;
//   copy     streams 64 KiB copies between two allocations meanwhile (checked byte for byte);
//   hang     (optional) a WAIT_MEM on a word nobody writes: the scheduler's hang detection
//            preempts and resets the engine, the context is lost, every other context goes on;
//   present  waits for the render fence, then Presents (blt) the back buffer to the primary.
// Then the primary surface is read back through a CPU lock.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scene.hpp"
#include "sgpu/result.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::demo {

struct WorkloadOptions {
  SceneGeometry geometry;
  bool inject_hang = true;
  std::uint32_t copy_chunks = 8;  ///< 64 KiB copies the copy context streams
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(50);  ///< per wait, device time
  /// Records the timeline (Scheduler::set_trace for the workload's duration, contexts named by
  /// role); null = no tracing.
  trace::Recorder* trace = nullptr;
  /// Called after each report step with the steps done and expected_steps() (a long run's
  /// progress line: `sgpu demo` draws one on a terminal); empty = not called.
  std::function<void(std::size_t done, std::size_t total)> on_step;
};

/// One line of the report: what happened, when (simulated time) and its submission (0: none).
struct Step {
  std::string what;
  std::chrono::nanoseconds at{};
  SubmissionId fence;
};

struct WorkloadReport {
  std::vector<std::uint8_t> frame;  ///< the primary surface, frame_bytes()
  std::vector<Step> steps;
  bool copies_ok = false;           ///< the copy context's bytes arrived intact
  bool hang_recovered = false;      ///< the hung submission was aborted, its context lost
  std::string hang_context_error;   ///< what the lost context's next call answered
  std::uint64_t user_fence = 0;     ///< what the scene's user FENCE wrote
  sched::Scheduler::Counters counters;
  std::size_t dma_completed_reports = 0;
  std::chrono::nanoseconds simulated{};  ///< transport time of the whole workload
  std::uint64_t cycles = 0;              ///< device cycle counter over the workload
};

/// The report steps a successful run_workload(options) records (its progress total).
std::size_t expected_steps(const WorkloadOptions& options);

/// Runs the workload. Errors name the step that failed.
Result<WorkloadReport> run_workload(sched::Runtime& runtime, const WorkloadOptions& options);

}  // namespace sgpu::demo
