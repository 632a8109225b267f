// FlipQueue: present with vsync semantics (a swap chain of two primaries) over the Scheduler.
//
// The device has no display engine, so the display is modelled here, on the host: one of the two
// primaries is "on screen" (scanned out) from the vsync at which its flip took effect until the
// vsync at which the next flip takes effect. A present is a DxgkDdiPresent (blt or colour fill,
// Scheduler::present on the queue's present context) into the back primary plus a queued flip:
//
//   present(r)   waits until the back primary has left the screen (rendering into a primary that
//                is scanned out would tear), submits the Present into it and queues its flip.
//                Returns the present fence (the frame's number, 1, 2, ...).
//   programmed   when the flip queue sees the Present's submission complete (at its next call:
//                the analogue of a driver programming the flip from its DPC), the flip is armed;
//   flipped      at the next vsync after that it takes effect: the primary is on screen, the
//                present fence completes, the frame counter counts it, and the other primary
//                leaves the screen (the next present may write it).
//
// Vsync: every `vsync_period` of transport time (simulated time on "sim"), counted from the
// queue's creation; or, with a zero period, only when vsync() is called (an explicit tick:
// deterministic, what most tests use). Flips take effect in present order, one per vsync.
//
// Scan-out: the primaries are allocated in the aperture segment (system memory behind the GART)
// and pinned for the queue's life, so the display never sees them move and capture (the frame
// a flip put on screen, read through the CPU mapping) needs no paging.
//
// Single-threaded like the Scheduler; every call first accounts for the vsyncs that have passed
// and the Presents that completed.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sgpu/kmd/allocation.hpp"
#include "sgpu/kmd/device.hpp"
#include "sgpu/kmd/present.hpp"
#include "sgpu/result.hpp"
#include "sgpu/sched/scheduler.hpp"
#include "sgpu/types.hpp"

namespace sgpu::sched {

class Runtime;

/// A present's fence: the frame's number in its flip queue (1, 2, ...; 0 = none). Completes when
/// the frame's flip took effect.
using PresentFence = Sequence<struct PresentFenceTag>;

struct FlipQueueOptions {
  /// Both primaries: width, height, pitch, bytes per pixel (the Present's destination).
  kmd::SurfaceDesc surface;
  /// The display's refresh period in transport time; zero = vsync only on vsync().
  std::chrono::nanoseconds vsync_period{0};
  /// Copy each frame when its flip puts it on screen (FlipRecord::scanout): what a capture of
  /// the display shows. Costs a frame-sized copy per flip on the host, no device time.
  bool capture = false;
};

enum class PresentStatus {
  Rendering,  ///< the Present is queued or running on the device
  Armed,      ///< the Present completed; the flip waits for the next vsync
  OnScreen,   ///< flipped: the frame is scanned out (the fence is complete)
  Replaced,   ///< a later flip took it off the screen (complete)
  Dropped,    ///< the Present was aborted (its context lost): no flip, the fence failed
};
std::string_view to_string(PresentStatus status);

/// One present, from present() to its flip.
struct FlipRecord {
  PresentFence fence;
  SubmissionId submission;  ///< the Present's Scheduler submission
  unsigned primary = 0;     ///< 0 or 1: which primary it wrote
  PresentStatus status = PresentStatus::Rendering;
  std::chrono::nanoseconds requested_at{};  ///< present() was called (transport time)
  std::chrono::nanoseconds presented_at{};  ///< present() submitted it, its primary off screen
  std::chrono::nanoseconds armed_at{};      ///< the queue saw the Present complete
  std::chrono::nanoseconds flipped_at{};    ///< the vsync at which it went on screen
  std::uint64_t vsync = 0;                  ///< that vsync's number (1, 2, ...)
  std::vector<std::uint8_t> scanout;        ///< with FlipQueueOptions::capture: the frame on screen
};

class FlipQueue {
 public:
  /// Creates the two primaries on `device` (CpuVisible, aperture, pinned) and the queue over the
  /// runtime's scheduler; Presents go on `context` (registered with that scheduler). Errors:
  /// InvalidArgument for a surface with no pixels, a pitch below width * bytes per pixel or a
  /// negative period; the memory manager's when the primaries cannot be made.
  static Result<std::unique_ptr<FlipQueue>> create(Runtime& runtime, kmd::Device& device, kmd::Context& context,
                                                   FlipQueueOptions options);
  ~FlipQueue();
  FlipQueue(const FlipQueue&) = delete;
  FlipQueue& operator=(const FlipQueue&) = delete;

  /// The two primaries (index 0, 1).
  AllocationHandle primary(unsigned index) const { return primaries_[index & 1].handle(); }
  /// The primary the next present writes.
  AllocationHandle back() const { return primary(next_); }
  /// Which primary is scanned out (none before the first flip).
  std::optional<unsigned> on_screen() const { return screen_; }

  /// Waits until the back primary is off screen (rendering into it is then safe) and returns it.
  /// Timeout naming the flip it waited for; Busy at once when only a vsync() tick can free it.
  Result<AllocationHandle> acquire(std::chrono::nanoseconds timeout);
  /// Present into the back primary (`request.dst` must be back()) and queue its flip; waits as
  /// acquire() first. InvalidArgument (nothing happens) when dst is not one of the queue's
  /// primaries, is the primary holding the last presented frame, or its size is not the queue's
  /// surface; the Scheduler's errors as they are.
  Result<PresentFence> present(const PresentRequest& request, std::chrono::nanoseconds timeout);

  /// Where the present is (InvalidArgument for a fence never handed out).
  Result<PresentStatus> query(PresentFence fence);
  /// Waits until the present's flip took effect: the Present first, then the vsync after it.
  /// Its Present's error if that was aborted; Timeout naming the fence and what it waited for;
  /// Busy at once when only a vsync() tick can complete it.
  Status wait(PresentFence fence, std::chrono::nanoseconds timeout);
  /// An explicit vsync (the tick; allowed with a period too): an armed flip takes effect now.
  Status vsync();

  /// Frames presented: flips that took effect (the frame counter).
  std::uint64_t frames_presented() const { return frames_; }
  /// Vsyncs so far.
  std::uint64_t vsyncs() const { return vsyncs_; }
  /// Every present so far, in order (index fence - 1).
  const std::vector<FlipRecord>& history() const { return records_; }
  /// Transport time of the next periodic vsync (nullopt with a zero period).
  std::optional<std::chrono::nanoseconds> next_vsync_at() const;

 private:
  FlipQueue(Runtime& runtime, kmd::Context& context, FlipQueueOptions options);
  std::chrono::nanoseconds now() const;
  /// Accounts for the vsyncs that have passed, then arms flips whose Present completed.
  Status observe();
  Status on_vsync(std::chrono::nanoseconds at);
  /// Whether primary `index` is on screen or holds a frame not yet flipped.
  std::optional<PresentFence> holder(unsigned index) const;
  /// Runs the scheduler until `fence` moves on (its Present completes, or the next vsync).
  Status advance(PresentFence fence, std::chrono::nanoseconds deadline, const char* what);
  Status capture(FlipRecord& record);

  Runtime& runtime_;
  Scheduler& scheduler_;
  kmd::Context& context_;
  FlipQueueOptions options_;
  std::array<kmd::Allocation, 2> primaries_;
  std::vector<FlipRecord> records_;
  std::deque<PresentFence> unflipped_;  // presented, not yet on screen nor dropped, in order
  std::map<PresentFence, Error> dropped_;  // why each dropped present failed
  std::optional<unsigned> screen_;
  std::optional<PresentFence> screen_fence_;
  unsigned next_ = 0;
  std::uint64_t frames_ = 0;
  std::uint64_t vsyncs_ = 0;
  std::chrono::nanoseconds epoch_{0};       // creation time: periodic vsyncs count from it
  std::chrono::nanoseconds next_vsync_{0};  // the next periodic vsync
};

}  // namespace sgpu::sched
