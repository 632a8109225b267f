// Reproducible randomness for tests and benchmarks.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace sgpu::tb {

/// The seed of this run: the SGPU_SEED environment variable if set (decimal or 0x-hex), else
/// `default_seed`. It is printed to stderr so every failing run says how to reproduce it;
/// tests should also CAPTURE it so it appears next to the failed assertion.
inline uint64_t test_seed(uint64_t default_seed = 1) {
  uint64_t seed = default_seed;
  if (const char* env = std::getenv("SGPU_SEED"); env != nullptr && *env != '\0') {
    seed = std::stoull(env, nullptr, 0);
  }
  std::fprintf(stderr, "[sgpu] seed %llu (reproduce with SGPU_SEED=%llu)\n",
               static_cast<unsigned long long>(seed), static_cast<unsigned long long>(seed));
  return seed;
}

}  // namespace sgpu::tb
