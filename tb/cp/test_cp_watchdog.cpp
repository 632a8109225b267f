// The command processor's watchdog (sgpu_cp_watchdog) alone.
//
// Its progress input is registered before it clears the count; the design claims that the
// expiry is still, cycle for cycle, that of a count cleared in the cycle of progress. Random
// activity and progress (bursts, gaps ending exactly at the limit, steady progress) against
// that reference, for limits around the gaps.
#include <catch2/catch.hpp>

#include <cstdint>
#include <memory>
#include <random>

#include <verilated.h>

#include "Vsgpu_cp_watchdog.h"
#include "common/block_harness.hpp"
#include "common/test_seed.hpp"

namespace {

struct Watchdog : sgpu::tb::BlockHarness<Vsgpu_cp_watchdog> {
  explicit Watchdog(std::uint32_t limit) : BlockHarness("watchdog") {
    dut->limit_i = limit;
    dut->active_i = 0;
    dut->progress_i = 0;
    reset();
  }
};

// The count cleared in the cycle of progress (the watchdog before its progress was registered).
struct Reference {
  std::uint32_t limit;
  std::uint32_t count = 0;
  bool expired(bool active) const { return limit != 0 && active && count >= limit; }
  void clock(bool active, bool progress) {
    if (!active || progress) {
      count = 0;
    } else if (count != UINT32_MAX) {
      ++count;
    }
  }
};

}  // namespace

TEST_CASE("the watchdog expires in the cycles a count cleared at progress would", "[cp][watchdog]") {
  const std::uint64_t seed = sgpu::tb::test_seed(11);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::uint32_t limit = GENERATE(0u, 1u, 2u, 3u, 5u, 8u);
  CAPTURE(limit);
  Watchdog w(limit);
  Reference ref{limit};

  // Gaps between progress drawn around the limit, so that progress lands in the last cycle
  // before the expiry, on it, and after it; runs of progress every cycle; inactive stretches.
  bool active = false;
  std::uint32_t gap_left = 0;
  std::uint32_t progress_run = 0;
  unsigned expiries = 0, progress_at_last_cycle = 0;
  for (unsigned cycle = 0; cycle < 20000; ++cycle) {
    if (rng() % 64 == 0) active = !active;
    bool progress = false;
    if (progress_run != 0) {
      progress = true;
      --progress_run;
    } else if (gap_left == 0) {
      progress = true;
      gap_left = static_cast<std::uint32_t>(rng() % (limit + 3));
      if (rng() % 8 == 0) progress_run = static_cast<std::uint32_t>(rng() % 6);
    } else {
      --gap_left;
    }
    if (progress && active && limit != 0 && ref.count + 1 == limit) ++progress_at_last_cycle;

    w.dut->active_i = active;
    w.dut->progress_i = progress;
    w.dut->eval();
    INFO("cycle " << cycle << " active " << active << " progress " << progress << " count " << ref.count);
    REQUIRE(static_cast<bool>(w.dut->expired_o) == ref.expired(active));
    expiries += ref.expired(active) ? 1u : 0u;
    w.clock();
    ref.clock(active, progress);
  }
  if (limit != 0) {
    // The stimulus reached the cases that tell the two apart.
    CHECK(expiries > 50);
    CHECK(progress_at_last_cycle > 50);
  }
}
