// The status line of long runs (see sgpu/diag/progress.hpp).
#include "sgpu/diag/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace sgpu::diag {

std::optional<std::chrono::nanoseconds> estimate_left(std::uint64_t done, std::uint64_t total,
                                                      std::chrono::nanoseconds elapsed) {
  if (done == 0 || total == 0) return std::nullopt;
  if (done >= total) return std::chrono::nanoseconds{0};
  const double left = static_cast<double>(elapsed.count()) * static_cast<double>(total - done) / static_cast<double>(done);
  return std::chrono::nanoseconds{static_cast<std::int64_t>(left)};
}

std::string format_duration(std::chrono::nanoseconds d) {
  const double s = static_cast<double>(d.count()) / 1e9;
  if (s < 1.0) return fmt::format("{} ms", d.count() / 1'000'000);
  if (s < 60.0) return fmt::format("{:.1f} s", s);
  const auto whole = static_cast<std::uint64_t>(s);
  if (whole < 3600) return fmt::format("{} min {:02} s", whole / 60, whole % 60);
  return fmt::format("{} h {:02} min", whole / 3600, whole / 60 % 60);
}

std::string format_progress(const std::string& label, std::uint64_t done, std::uint64_t total,
                            std::chrono::nanoseconds elapsed, unsigned width) {
  done = std::min(done, total);
  const double frac = total ? static_cast<double>(done) / static_cast<double>(total) : 1.0;
  const auto filled = static_cast<unsigned>(frac * width);
  const auto left = estimate_left(done, total, elapsed);
  return fmt::format("{} [{}{}] {:3}% {}/{}, {} elapsed, {}", label, std::string(filled, '#'),
                     std::string(width - filled, '-'), static_cast<unsigned>(frac * 100.0), done, total,
                     format_duration(elapsed), left ? "~" + format_duration(*left) + " left" : std::string("~? left"));
}

bool progress_wanted(std::FILE* stream) {
  const char* ci = std::getenv("CI");
  if (ci != nullptr && *ci != '\0') return false;
  return stream != nullptr && isatty(fileno(stream)) != 0;
}

namespace {
std::chrono::nanoseconds steady_now() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
}
}  // namespace

Progress::Progress(std::string label, std::uint64_t total) : Progress(std::move(label), total, Options{}) {}

Progress::Progress(std::string label, std::uint64_t total, Options options)
    : label_(std::move(label)), total_(total), options_(std::move(options)) {
  if (!options_.now) options_.now = steady_now;
  enabled_ = options_.enabled ? *options_.enabled : progress_wanted(options_.stream);
  start_ = options_.now();
}

Progress::~Progress() { finish(); }

void Progress::update(std::uint64_t done) {
  done_ = done;
  if (!enabled_ || finished_) return;
  const auto now = options_.now();
  if (drawn_ && now - last_draw_ < options_.min_interval) return;
  last_draw_ = now;
  draw();
}

void Progress::draw() {
  // "\r" + the line + erase to the end of the line (a shorter line leaves no tail).
  std::fprintf(options_.stream, "\r%s\x1b[K", format_progress(label_, done_, total_, options_.now() - start_).c_str());
  std::fflush(options_.stream);
  drawn_ = true;
}

void Progress::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  draw();
  std::fputc('\n', options_.stream);
  std::fflush(options_.stream);
}

}  // namespace sgpu::diag
