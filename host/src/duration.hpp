// Readable durations for error messages and reports ("250 ns", "1.5 us", "2 ms").
#pragma once

#include <chrono>
#include <string>

#include <fmt/format.h>

namespace sgpu::detail {

inline std::string format_duration(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  if (ns < 1e3) return fmt::format("{} ns", d.count());
  if (ns < 1e6) return fmt::format("{:.4g} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.4g} ms", ns / 1e6);
  return fmt::format("{:.4g} s", ns / 1e9);
}

}  // namespace sgpu::detail
