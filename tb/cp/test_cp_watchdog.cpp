// The command processor's watchdog (sgpu_cp_watchdog) alone.
//
// Its progress input is registered before it clears the count, and its expiry is decided a cycle
// ahead; the design claims that the expiry is still, cycle for cycle, that of a count cleared in
// the cycle of progress and compared in the cycle it is used, with the limit (CP_WATCHDOG) taken
// a cycle late. Random activity and progress (bursts, gaps ending exactly at the limit, steady
// progress) against that reference, for limits around the gaps, fixed or changing.
#include <catch2/catch.hpp>

#include <cstdint>
#include <iterator>
#include <random>

#include <verilated.h>

#include "Vsgpu_cp_watchdog.h"
#include "common/block_harness.hpp"
#include "common/test_seed.hpp"

namespace {

struct Watchdog : sgpu::tb::BlockHarness<Vsgpu_cp_watchdog> {
  Watchdog() : BlockHarness("watchdog") {
    dut->limit_i = 0;
    dut->active_i = 0;
    dut->progress_i = 0;
    reset();
  }
};

// The count cleared in the cycle of progress and compared in the cycle it is used (the watchdog
// before its progress and expiry were registered), with the limit of the cycle before.
struct Reference {
  std::uint32_t limit = 0;  // CP_WATCHDOG's reset value
  std::uint32_t count = 0;
  bool expired(bool active) const { return limit != 0 && active && count >= limit; }
  void clock(bool active, bool progress, std::uint32_t limit_in) {
    if (!active || progress) {
      count = 0;
    } else if (count != UINT32_MAX) {
      ++count;
    }
    limit = limit_in;
  }
};

struct Tally {
  unsigned expiries = 0;
  unsigned progress_at_last_cycle = 0;
};

// 20 000 cycles of random activity and progress; the limit of each cycle from limit_at(cycle).
template <class LimitAt>
Tally run_against_reference(std::mt19937_64& rng, LimitAt limit_at) {
  Watchdog w;
  Reference ref;
  Tally tally;
  // Gaps between progress drawn around the limit, so that progress lands in the last cycle
  // before the expiry, on it, and after it; runs of progress every cycle; inactive stretches.
  bool active = false;
  std::uint32_t gap_left = 0;
  std::uint32_t progress_run = 0;
  for (unsigned cycle = 0; cycle < 20000; ++cycle) {
    const std::uint32_t limit = limit_at(cycle);
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
    if (progress && active && ref.limit != 0 && ref.count + 1 == ref.limit) ++tally.progress_at_last_cycle;

    w.dut->limit_i = limit;
    w.dut->active_i = active;
    w.dut->progress_i = progress;
    w.dut->eval();
    INFO("cycle " << cycle << " active " << active << " progress " << progress << " count " << ref.count
                  << " limit " << ref.limit);
    REQUIRE(static_cast<bool>(w.dut->expired_o) == ref.expired(active));
    tally.expiries += ref.expired(active) ? 1u : 0u;
    w.clock();
    ref.clock(active, progress, limit);
  }
  return tally;
}

}  // namespace

TEST_CASE("the watchdog expires in the cycles a count cleared at progress would", "[cp][watchdog]") {
  const std::uint64_t seed = sgpu::tb::test_seed(11);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const std::uint32_t limit = GENERATE(0u, 1u, 2u, 3u, 5u, 8u);
  CAPTURE(limit);
  const Tally tally = run_against_reference(rng, [&](unsigned) { return limit; });
  if (limit != 0) {
    // The stimulus reached the cases that tell the two apart.
    CHECK(tally.expiries > 50);
    CHECK(tally.progress_at_last_cycle > 50);
  }
}

TEST_CASE("a CP_WATCHDOG change reaches the watchdog's expiry one cycle later", "[cp][watchdog]") {
  const std::uint64_t seed = sgpu::tb::test_seed(12);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // A new limit every seven cycles or so: raised past the count, lowered onto or below it.
  constexpr std::uint32_t kLimits[] = {0, 1, 2, 3, 4, 5, 8};
  std::uint32_t limit = 0;
  const Tally tally = run_against_reference(rng, [&](unsigned) {
    if (rng() % 7 == 0) limit = kLimits[rng() % std::size(kLimits)];
    return limit;
  });
  CHECK(tally.expiries > 50);
}
