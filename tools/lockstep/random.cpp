// Long random lock-step runs: the differential generator's rings (valid and invalid packets,
// bus errors, engine resets, preemption) on random bus timings, with both sgpu_top builds in
// lock-step under sim::SimDevice (the shim aborts at the first differing output).
//
//   lockstep_random FIRST_SEED RUNS PACKETS_PER_RUN
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "Vsgpu_top.h"
#include "diff/runner.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s FIRST_SEED RUNS PACKETS_PER_RUN\n", argv[0]);
    return 2;
  }
  const std::uint64_t first = std::stoull(argv[1], nullptr, 0);
  const std::uint64_t runs = std::stoull(argv[2], nullptr, 0);
  const std::uint64_t packets = std::stoull(argv[3], nullptr, 0);
  std::uint64_t cycles = 0;
  for (std::uint64_t seed = first; seed < first + runs; ++seed) {
    std::mt19937_64 rng(seed);
    auto pick = [&](std::uint64_t lo, std::uint64_t hi) { return lo + rng() % (hi - lo + 1); };
    sgpu::diff::RunConfig cfg;
    cfg.seed = seed;
    cfg.packets = packets;
    cfg.sim.read_latency = static_cast<unsigned>(pick(1, 300));
    cfg.sim.write_latency = static_cast<unsigned>(pick(1, 160));
    cfg.sim.memory_ready_prob = (rng() % 4 == 0) ? 1.0 : 0.3 + 0.7 * double(rng() % 1000) / 1000.0;
    cfg.sim.seed = seed;
    cfg.gen.ring_log2 = static_cast<unsigned>(pick(1, 6));
    // The model has no notion of time, so a watchdog must not fire on legitimate slow progress:
    // its bound grows with the bus's latencies and back-pressure.
    const auto slow = static_cast<std::uint64_t>(16.0 * (cfg.sim.read_latency + cfg.sim.write_latency) /
                                                 cfg.sim.memory_ready_prob);
    cfg.gen.watchdog_cycles = (rng() % 3 == 0) ? 0 : static_cast<std::uint32_t>(pick(2000 + slow, 9000 + slow));
    const sgpu::diff::RunResult r = sgpu::diff::run_differential(cfg);
    cycles += r.rtl_cycles;
    std::printf("seed %llu: read latency %u, write latency %u, ready %.3f, ring 2^%u, watchdog %u: %s\n",
                static_cast<unsigned long long>(seed), cfg.sim.read_latency, cfg.sim.write_latency,
                cfg.sim.memory_ready_prob, cfg.gen.ring_log2, cfg.gen.watchdog_cycles, r.summary().c_str());
    std::fflush(stdout);
    if (!r.ok) {
      std::printf("model mismatch: %s\n", r.failure.c_str());
      return 1;
    }
  }
  std::printf("lockstep: %llu runs, %llu cycles compared, every output identical\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(Vsgpu_top::cycles_compared()));
  return 0;
}
