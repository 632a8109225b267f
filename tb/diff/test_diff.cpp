// Differential random testing: the reference model and the Verilated RTL execute the same
// random rings (valid and invalid packets, bad ring entries, injected bus errors, engine
// resets; steps with the GART on, every address through the aperture: scattered pages, the
// dummy page, refused translations) and must agree on every register (the GART fault record
// included), write-back record, retired fence and memory byte.
//
// SGPU_SEED=<n> reproduces a run (the seed is printed). SGPU_SOAK=1 runs 1 000 000 packets per
// configuration instead of 3 000 (SGPU_SOAK=<n> with n > 1: n packets).
#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "common/test_seed.hpp"
#include "diff/runner.hpp"
#include "sgpu/diag/progress.hpp"
#include "sgpu/gen/sgpu_reg_enums.hpp"

using namespace sgpu;
using namespace sgpu::diff;

namespace {

/// Five configurations x 3 000 packets: 15 000 packets per `make test` run.
constexpr std::uint64_t kDefaultPackets = 3'000;

std::uint64_t packets_per_config() {
  if (const char* soak = std::getenv("SGPU_SOAK"); soak != nullptr && *soak != '\0') {
    const std::uint64_t n = std::stoull(soak, nullptr, 0);
    return n > 1 ? n : 1'000'000;
  }
  return kDefaultPackets;
}

/// Bus timings and ring sizes the random runs cycle through.
struct Flavour {
  const char* name;
  unsigned read_latency;
  unsigned write_latency;
  double ready_prob;
  unsigned ring_log2;
  std::uint32_t watchdog;  ///< CP_WATCHDOG (0: off, no never-satisfied waits)
  /// Some steps run with CP_WATCHDOG near the write latency (reads must be much faster).
  bool retire_watchdog;
};
constexpr Flavour kFlavours[] = {
    {"fast bus, 16-entry ring, watchdog 3000", 16, 8, 1.0, 4, 3000, false},
    {"slow bus, 4-entry ring, no watchdog", 64, 32, 1.0, 2, 0, false},
    {"back-pressure, 32-entry ring, watchdog 8000", 37, 16, 0.6, 5, 8000, false},
    {"long write latency, 8-entry ring, watchdog 5000 (near 90 at times)", 24, 90, 0.85, 3, 5000, true},
    {"exact timing, fast reads, 8-entry ring, watchdog 4000 (near 60 at times)", 6, 60, 1.0, 3, 4000, true},
};

}  // namespace

TEST_CASE("model and RTL agree on random rings", "[diff]") {
  const std::uint64_t base_seed = tb::test_seed(1);
  const std::uint64_t packets = packets_per_config();
  std::uint64_t total = 0;
  std::uint64_t uncertain = 0;
  std::array<std::uint64_t, 256> faults{};
  std::array<std::uint64_t, 8> gart_faults{};
  std::uint64_t gart_steps = 0, dummy_reads = 0;
  std::uint64_t retire_watchdog_steps = 0, retire_watchdog_faults = 0, retire_watchdog_retired = 0;
  std::uint64_t writeback_errors = 0;
  // A status line with the time left on a terminal (soak runs take hours); quiet in CTest and CI.
  diag::Progress progress("diff", std::size(kFlavours) * packets);
  for (std::size_t i = 0; i < std::size(kFlavours); ++i) {
    const Flavour& f = kFlavours[i];
    RunConfig cfg;
    cfg.seed = base_seed * 1000 + i;
    cfg.packets = packets;
    cfg.sim.read_latency = f.read_latency;
    cfg.sim.write_latency = f.write_latency;
    cfg.sim.memory_ready_prob = f.ready_prob;
    cfg.sim.seed = cfg.seed;
    cfg.gen.ring_log2 = f.ring_log2;
    cfg.gen.watchdog_cycles = f.watchdog;
    cfg.gen.retire_watchdog_latency = f.retire_watchdog ? f.write_latency : 0;
    cfg.on_progress = [&progress, i, packets](std::uint64_t done) { progress.update(i * packets + done); };
    const RunResult r = run_differential(cfg);
    progress.update((i + 1) * packets);
    if (i + 1 == std::size(kFlavours)) progress.finish();
    INFO("configuration: " << f.name << "; reproduce with SGPU_SEED=" << base_seed);
    INFO(r.summary());
    std::fprintf(stderr, "[diff] %s: %s\n", f.name, r.summary().c_str());
    if (!r.ok) std::fprintf(stderr, "[diff] FAILED (SGPU_SEED=%llu): %s\n", static_cast<unsigned long long>(base_seed), r.failure.c_str());
    INFO(r.failure);
    REQUIRE(r.ok);
    CHECK(r.failure.empty());
    total += r.packets;
    for (std::size_t k = 0; k < r.faults_by_reason.size(); ++k) faults[k] += r.faults_by_reason[k];
    uncertain += r.uncertain_bytes;
    gart_steps += r.gart_steps;
    dummy_reads += r.dummy_reads;
    for (std::size_t k = 0; k < r.gart_faults_by_reason.size(); ++k) gart_faults[k] += r.gart_faults_by_reason[k];
    retire_watchdog_steps += r.retire_watchdog_steps;
    retire_watchdog_faults += r.retire_watchdog_faults;
    retire_watchdog_retired += r.retire_watchdog_retired;
    writeback_errors += r.writeback_errors;
  }
  CHECK(total >= std::size(kFlavours) * packets);
  // Every fault the generator aims at was reached over the run (a weak generator shows here).
  if (packets >= kDefaultPackets) {
    for (const auto fault : {abi::Fault::IllegalOpcode, abi::Fault::BadLength, abi::Fault::ReservedBits,
                             abi::Fault::BufferOverrun, abi::Fault::BadAlignment, abi::Fault::BadRingEntry,
                             abi::Fault::BusError, abi::Fault::Watchdog, abi::Fault::IndirectDepth}) {
      INFO("fault " << abi::to_string(fault));
      CHECK(faults[static_cast<std::uint8_t>(fault)] > 0);
    }
    // GART-mapped traffic: translated steps, reads of the dummy page, and every refusal the
    // generator aims at (each one a TRANSLATION fault with the same GART record on both).
    CHECK(gart_steps > 0);
    CHECK(dummy_reads > 0);
    CHECK(faults[static_cast<std::uint8_t>(abi::Fault::Translation)] > 0);
    for (const auto reason : {regs::GartFault::InvalidPte, regs::GartFault::WriteProtect, regs::GartFault::OutOfRange,
                              regs::GartFault::Privilege}) {
      INFO("GART refusal " << regs::to_string(reason));
      CHECK(gart_faults[static_cast<std::size_t>(reason)] > 0);
    }
    // Retirement's commit point was met from both sides: bus errors on the write-back record,
    // and watchdogs near the write latency that expired before the fence word and that did not.
    CHECK(writeback_errors > 0);
    CHECK(retire_watchdog_faults > 0);
    CHECK(retire_watchdog_retired > 0);
  }
  std::fprintf(stderr, "[diff] write-back record: %llu bus errors; %llu steps with the watchdog near the write latency: "
               "%llu retirements stopped by it, %llu entries retired\n",
               static_cast<unsigned long long>(writeback_errors), static_cast<unsigned long long>(retire_watchdog_steps),
               static_cast<unsigned long long>(retire_watchdog_faults),
               static_cast<unsigned long long>(retire_watchdog_retired));
  std::fprintf(stderr, "[diff] %llu packets in total; %llu bytes left timing-dependent by failed writes\n",
               static_cast<unsigned long long>(total), static_cast<unsigned long long>(uncertain));
}
