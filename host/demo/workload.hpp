// The demo workload on a Runtime: what `sgpu demo` runs and its test checks.
//
// Four contexts on one device, as a desktop would have them:
//   render   two command lists draw the scene (scene.hpp) into the back buffer;
//   copy     (low priority) one long submission streams 64 KiB chunks between two allocations
//            (fill a source chunk, stamp it, copy it; checked byte for byte): it runs in the
//            gaps between frames, the render and present work preempts it at a packet boundary
//            and it resumes from PREEMPT_OFFSET (Scheduler::preemption_log());
//   hang     (optional, lowest priority) a WAIT_MEM on a word nobody writes: put back at its
//            first TdrDelay overrun, recovered at its second without progress (engine reset,
//            the context lost), every other context goes on;
//   present  (highest priority) a flip queue of two primaries (sched/flip_queue.hpp): after each
//            frame's render fence, Presents (blt) the back buffer into the back primary; its
//            flip takes effect at the next vsync (a period of simulated time).
// The scene is drawn `frames` times, each frame a step further along the sprites' wave with its
// number in the status bar. Rendering is vsync-paced, as with vsync on: frame N + 1 renders once
// frame N is on screen (the copy streams meanwhile), and presenting into the primary on screen
// waits until a flip takes it off. Each frame is what the display showed when its flip took
// effect (the flip queue's capture).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "scene.hpp"
#include "sgpu/result.hpp"
#include "sgpu/sched/flip_queue.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::demo {

/// The contexts' scheduling priorities (Scheduler::set_priority): the display first, then
/// rendering; the copy stream and the hang in the background.
constexpr int kPresentPriority = 2;
constexpr int kRenderPriority = 1;
constexpr int kCopyPriority = -1;
constexpr int kHangPriority = -2;

/// The scheduler settings the workload is made for (`sgpu demo`'s defaults; it runs a few ms of
/// device time): TdrDelay 1 ms, so the hang is recovered within the demo; 250 us for the engine
/// to answer a preemption; a 50 us quantum, so the frames' work preempts the copy stream.
constexpr std::chrono::nanoseconds kTdrDelay = std::chrono::milliseconds(1);
constexpr std::chrono::nanoseconds kPreemptTimeout = std::chrono::microseconds(250);
constexpr std::chrono::nanoseconds kPreemptQuantum = std::chrono::microseconds(50);
/// Sets those three in `options` (the rest untouched).
void configure_scheduler(sched::SchedulerOptions& options);

struct WorkloadOptions {
  SceneGeometry geometry;
  bool inject_hang = true;
  std::uint32_t copy_chunks = 8;  ///< 64 KiB chunks the copy context streams (one submission)
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(50);  ///< per wait, device time
  std::uint32_t frames = 3;  ///< frames rendered and presented (at least 1)
  /// The display's refresh period (device time). Far above 60 Hz: a 60 Hz display would leave the
  /// simulated device idle for 16.7 ms per frame, about 4 million simulated cycles.
  std::chrono::nanoseconds vsync_period = std::chrono::microseconds(500);
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

/// One presented frame: its present, its flip and what the display showed.
struct FrameReport {
  std::uint32_t index = 0;               ///< 0, 1, ... (the status bar shows index + 1)
  sched::PresentFence fence;             ///< the flip queue's present fence
  SubmissionId present;                  ///< the Present (blt) submission
  unsigned primary = 0;                  ///< which primary it went into
  std::chrono::nanoseconds requested_at{};  ///< transport time of present()
  std::chrono::nanoseconds presented_at{};  ///< its Present submitted, once the primary left the screen
  std::chrono::nanoseconds flipped_at{};    ///< the vsync at which it went on screen
  std::uint64_t vsync = 0;                  ///< that vsync's number
  std::vector<std::uint8_t> bytes;          ///< the frame on screen, frame_bytes()
  std::chrono::nanoseconds render_submitted_at{};  ///< its background submitted
  std::chrono::nanoseconds render_completed_at{};  ///< its sprites' fence seen completed
};

/// A packet of the workload a preemption put back (Scheduler::PreemptionRecord) and whom it
/// belongs to.
struct PreemptionReport {
  sched::Scheduler::PreemptionRecord record;
  std::string context;  ///< "copy", "hang", ... ("" for a context not the workload's)
  int priority = 0;
};

struct WorkloadReport {
  std::vector<std::uint8_t> frame;  ///< the last frame on screen, frame_bytes()
  std::vector<FrameReport> frames;  ///< every frame, in present order
  std::uint64_t frames_presented = 0;  ///< the flip queue's frame counter
  std::uint64_t vsyncs = 0;            ///< vsyncs while the flip queue lived
  std::vector<Step> steps;
  bool copies_ok = false;           ///< the copy context's bytes arrived intact
  SubmissionId copy;                ///< the copy stream's submission
  std::chrono::nanoseconds copy_submitted_at{}, copy_completed_at{};
  std::vector<PreemptionReport> preemptions;  ///< packets put back during the workload, in order
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
