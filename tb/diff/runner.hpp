// Drives the reference model and the Verilated RTL through the same random MMIO and ring
// operations and compares everything software can observe.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>

#include "diff/generator.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::diff {

struct RunConfig {
  std::uint64_t seed = 1;
  /// Stop once the model decoded this many packet headers.
  std::uint64_t packets = 2500;
  sim::SimConfig sim;
  GeneratorConfig gen;
  /// Compare the whole data region every this many steps (and always at the end).
  unsigned memory_compare_interval = 64;
  /// Called after every step with the packets decoded so far (soak runs draw progress with it).
  std::function<void(std::uint64_t packets)> on_progress;
};

struct RunResult {
  bool ok = true;
  std::string failure;  ///< first mismatch, with the step that caused it
  std::uint64_t steps = 0;
  std::uint64_t packets = 0;
  std::uint64_t entries = 0;
  std::uint64_t retired = 0;
  std::uint64_t resets = 0;
  std::uint64_t preemptions = 0;
  std::uint64_t rtl_cycles = 0;
  std::uint64_t uncertain_bytes = 0;
  /// Steps with CP_WATCHDOG near the write latency, and what happened at retirement in them.
  std::uint64_t retire_watchdog_steps = 0;
  std::uint64_t retire_watchdog_faults = 0;   ///< WATCHDOG while an entry retired
  std::uint64_t retire_watchdog_retired = 0;  ///< entries that retired in those steps
  std::uint64_t writeback_errors = 0;         ///< BUS_ERROR on a word of the write-back record
  std::array<std::uint64_t, 256> faults_by_reason{};
  std::array<std::uint64_t, 256> packets_by_opcode{};
  std::array<std::uint64_t, static_cast<std::size_t>(Inject::Count)> injected{};
  std::uint64_t gart_steps = 0;   ///< steps run with the GART on, through the aperture
  std::uint64_t dummy_reads = 0;  ///< valid copies out of the dummy page
  std::array<std::uint64_t, 8> gart_faults_by_reason{};  ///< GART records after GART steps (regs::GartFault)
  std::string summary() const;
};

RunResult run_differential(const RunConfig& config);

}  // namespace sgpu::diff
