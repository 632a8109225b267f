// Progress: one status line for long runs (soak tests, long demos), with an estimate of the time
// left, drawn on stderr only when stderr is a terminal and CI is not set, so logs and CI output
// stay quiet. Redraws at most every `min_interval` (carriage return, no scrolling); finish()
// ends the line.
//
//   diag::Progress p("diff soak", total_packets);
//   for (...) p.update(done);
//   p.finish();
//
// The formatting and the estimate are pure functions (format_progress, estimate_left), tested
// without a terminal; the same line format is drawn by tools/progress.py for `make bench` and
// `make fuzz`.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace sgpu::diag {

/// Time left at a constant rate: elapsed x (total - done) / done; nullopt before any progress.
std::optional<std::chrono::nanoseconds> estimate_left(std::uint64_t done, std::uint64_t total,
                                                      std::chrono::nanoseconds elapsed);

/// "label [#########-----------]  45% 4500/10000, 2.1 s elapsed, ~2.6 s left" (`width`
/// characters of bar; "~? left" before any progress; done is clamped to total).
std::string format_progress(const std::string& label, std::uint64_t done, std::uint64_t total,
                            std::chrono::nanoseconds elapsed, unsigned width = 24);

/// "850 ms", "2.1 s", "3 min 05 s", "1 h 02 min".
std::string format_duration(std::chrono::nanoseconds d);

/// True if progress should be drawn on `stream`: it is a terminal and the environment has no CI.
bool progress_wanted(std::FILE* stream);

class Progress {
 public:
  struct Options {
    std::FILE* stream = stderr;
    /// nullopt: progress_wanted(stream) decides; true/false forces it (tests).
    std::optional<bool> enabled;
    std::chrono::nanoseconds min_interval = std::chrono::milliseconds(200);
    /// The clock (tests give their own).
    std::function<std::chrono::nanoseconds()> now;
  };
  Progress(std::string label, std::uint64_t total);
  Progress(std::string label, std::uint64_t total, Options options);
  ~Progress();  ///< finish()es
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  bool enabled() const { return enabled_; }
  /// `done` of `total` units are complete; redraws if min_interval has passed.
  void update(std::uint64_t done);
  /// Draws the final line and ends it with a newline (once; nothing if disabled).
  void finish();

 private:
  void draw();
  std::string label_;
  std::uint64_t total_;
  Options options_;
  bool enabled_;
  bool finished_ = false;
  std::uint64_t done_ = 0;
  std::chrono::nanoseconds start_{0}, last_draw_{0};
  bool drawn_ = false;
};

}  // namespace sgpu::diag
