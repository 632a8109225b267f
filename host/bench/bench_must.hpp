// The benchmarks' one error policy: a step that fails ends the program with the step's name and
// the library's error on stderr (a benchmark has nobody to return an error to, and a figure from a
// run that went wrong must not reach bench.json).
#pragma once

#include <cerrno>
#include <cstdlib>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "sgpu/result.hpp"

namespace sgpu::bench {

[[noreturn]] inline void die(std::string_view what, const Error& e) {
  fmt::print(stderr, "{}: {}: {}\n", program_invocation_short_name, what, to_string(e));
  std::exit(1);
}

template <class T>
T must(Result<T> r, std::string_view what) {
  if (!r) die(what, r.error());
  return std::move(*r);
}

inline void must(const Status& s, std::string_view what) {
  if (!s) die(what, s.error());
}

}  // namespace sgpu::bench
