// Timeline trace: what the driver stack and the device did, on one time axis, as a Chrome
// trace-event / Perfetto JSON file (ui.perfetto.dev and chrome://tracing open it as is).
//
// Two pieces:
//  - Recorder, the interface the scheduler calls at its trace points. The scheduler holds a
//    Recorder pointer that is null unless tracing was enabled (Runtime::enable_trace,
//    Scheduler::set_trace), and every trace point is one `if (trace_)`: off costs a branch, and
//    the DMA buffers and register traffic are those of an untraced run, byte for byte;
//  - Timeline, the Recorder that keeps the events and writes the JSON (nlohmann_json) with the
//    tracks named (process/thread metadata), slices ("X"), instants ("i") and counters ("C").
//
// Time. Host events carry the transport's time (Transport::now(): simulated time on sim, model
// and the SystemC platforms, a monotonic clock on a card). Device events carry the device's own
// cycle counter, as TIMESTAMP packets wrote it (docs/tracing.md): the timeline converts them to
// the transport's time with calibration points (the cycle counter read next to now()), by the
// line through the first and the last point, when it writes.
//
// Tracks that overlap themselves (a queue holds several submissions at once) are laid out in
// lanes when written: a slice goes to the first lane of its track where it overlaps nothing, so
// each lane is a well-formed row in both viewers; lanes after the first are named "<track> #2"...
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "sgpu/result.hpp"

namespace sgpu::trace {

/// A point on the time axis: the transport's time, or a device cycle count (converted when the
/// timeline is written).
struct TracePoint {
  std::int64_t value = 0;
  bool device_cycles = false;
  static TracePoint host(std::chrono::nanoseconds t) { return {t.count(), false}; }
  static TracePoint device(std::uint64_t cycles) { return {static_cast<std::int64_t>(cycles), true}; }
};

/// Which row an event belongs to.
enum class TrackKind : std::uint8_t {
  ContextQueue,   ///< one per context: Render/Present, waiting in the software queue, residency, Patch
  HardwareQueue,  ///< ring entries from ring write to retirement
  Ring,           ///< SubmitCommand: the ring writes and doorbells
  Engine,         ///< the device executing DMA buffers (device timestamps): command processor and copy engine
  Paging,         ///< paging buffers from the memory manager, submission to retirement
  Interrupts,     ///< interrupts, DMA_COMPLETED / PREEMPTED / FAULTED reports, TDR steps
};

struct Track {
  TrackKind kind = TrackKind::Ring;
  std::uint64_t context = 0;  ///< ContextQueue: the context's handle
  static Track context_queue(std::uint64_t context) { return {TrackKind::ContextQueue, context}; }
  static Track of(TrackKind kind) { return {kind, 0}; }
};

/// One event argument ("args" in the JSON).
struct Arg {
  std::string key;
  std::variant<std::int64_t, double, std::string> value;
};
using Args = std::vector<Arg>;

/// What the scheduler and the memory manager's paging path report. Implementations must not
/// call back into the driver.
class Recorder {
 public:
  virtual ~Recorder() = default;
  /// Names a context's queue track, e.g. "context 1 (render) queue".
  virtual void name_context(std::uint64_t context, std::string name) = 0;
  /// A slice [begin, end] on `track`.
  virtual void slice(Track track, std::string name, TracePoint begin, TracePoint end, Args args = {}) = 0;
  virtual void instant(Track track, std::string name, TracePoint at, Args args = {}) = 0;
  /// A counter sample: `series` (name, value) plotted on one counter track `name`.
  virtual void counter(std::string name, TracePoint at, std::vector<std::pair<std::string, double>> series) = 0;
  /// The device cycle counter read at transport time `at` (maps device cycles to the time axis).
  virtual void calibrate(std::uint64_t device_cycles, std::chrono::nanoseconds at) = 0;
};

/// The recorder that keeps everything and writes the Chrome trace-event JSON.
class Timeline final : public Recorder {
 public:
  enum class Phase : char { Slice = 'X', Instant = 'i', Counter = 'C' };
  struct Event {
    Phase phase = Phase::Slice;
    Track track;
    std::string name;
    TracePoint begin, end;  ///< end == begin for instants and counters
    Args args;
    std::vector<std::pair<std::string, double>> series;  ///< counters
  };

  void name_context(std::uint64_t context, std::string name) override;
  void slice(Track track, std::string name, TracePoint begin, TracePoint end, Args args = {}) override;
  void instant(Track track, std::string name, TracePoint at, Args args = {}) override;
  void counter(std::string name, TracePoint at, std::vector<std::pair<std::string, double>> series) override;
  void calibrate(std::uint64_t device_cycles, std::chrono::nanoseconds at) override;

  const std::vector<Event>& events() const { return events_; }
  /// The track's label as written ("ring", "context 3 (render) queue", ...).
  std::string track_name(const Track& track) const;
  /// A point on the transport's time axis (device cycles converted by the calibration).
  std::chrono::nanoseconds to_time(TracePoint p) const;
  /// Device cycles per microsecond by the calibration, 0 while it has fewer than two points
  /// (device points are then placed at 1 cycle per ns from the one point there is).
  double cycles_per_us() const;

  /// The Chrome trace-event JSON (object form: traceEvents, displayTimeUnit, metadata).
  std::string to_json() const;
  /// Writes to_json() to `path`. InvalidArgument naming the path when it cannot be written.
  Status write(const std::string& path) const;

 private:
  std::vector<Event> events_;
  std::vector<std::pair<std::uint64_t, std::string>> context_names_;
  std::vector<std::pair<std::uint64_t, std::chrono::nanoseconds>> calibration_;  // (cycles, time)
};

}  // namespace sgpu::trace
