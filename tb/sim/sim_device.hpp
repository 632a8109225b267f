// The whole softgpu front end (Verilated sgpu_top) with the host memory it masters, driven one
// clock at a time. This is what the host library's `sim` transport wraps; top-level tests use it
// directly. Nothing here knows about rings or packets: it is the board, not the driver.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include "common/axi_memory.hpp"
#include "common/axi_checker.hpp"
#include "common/host_memory.hpp"
#include "sim/idle_skip.hpp"

namespace sgpu::sim {

/// Which Verilated configuration of sgpu_top runs (cmake/SgpuVerilate.cmake, docs/architecture.md).
enum class SimModel {
  /// Assertions and trace code compiled in, X assignments random per seed: what the tests use.
  Checked,
  /// Neither (and -O3): the same cycles for a fraction of the host instructions. What the CLI,
  /// the demo and the benchmarks use.
  Fast,
};

std::string_view to_string(SimModel model);

struct SimConfig {
  /// Host-memory model timing, in core clocks (see AxiMemoryModel::Config).
  unsigned read_latency = 64;
  unsigned write_latency = 32;
  /// Probability that the memory is ready/valid in a cycle; < 1 adds random back-pressure.
  double memory_ready_prob = 1.0;
  /// Seed for the memory model's random stalls and Verilator's X/initial randomisation.
  std::uint64_t seed = 1;
  /// Core clock frequency, used to convert simulated cycles to time.
  double clock_hz = 250e6;
  /// Write an FST waveform here; empty = the SGPU_FST environment variable, else none.
  std::string fst_path;
  /// Run the AXI protocol checker on the host-memory port (throws on a violation).
  bool check_axi = true;
  /// The model configuration. A waveform (fst_path or SGPU_FST) needs the checked model's trace
  /// code, so asking for one runs the checked model whatever this says (model_for()).
  SimModel model = SimModel::Checked;
  /// Idle skipping (tb/sim/idle_skip.hpp): stretches in which the device provably only counts
  /// (waiting for memory, a WAIT_MEM's poll interval, nothing to do) are not simulated cycle by
  /// cycle but advanced at once, with the same result. The fast model only (the checked one
  /// evaluates its assertions and waveform every cycle), and only with a memory that never stalls
  /// at random (memory_ready_prob 1).
  IdleSkip idle_skip = IdleSkip::On;
};

/// The model a device with this configuration runs: `config.model`, or Checked if a waveform is
/// asked for.
SimModel model_for(const SimConfig& config);

/// Thrown when the simulated hardware breaks a rule (AXI protocol, MMIO timeout).
struct SimError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class SimDevice {
 public:
  explicit SimDevice(SimConfig config = {});
  ~SimDevice();
  SimDevice(const SimDevice&) = delete;
  SimDevice& operator=(const SimDevice&) = delete;

  /// 32-bit register access through the AXI4-Lite slave; the clock runs until the response.
  std::uint32_t mmio_read32(std::uint32_t offset);
  void mmio_write32(std::uint32_t offset, std::uint32_t value);

  /// The host memory the device reads and writes (bus addresses).
  tb::HostMemory& memory();

  /// Level of the interrupt line now.
  bool irq() const;
  /// Advances the clock by `cycles`.
  void step(std::uint64_t cycles = 1);
  /// Runs until the interrupt line is high or `max_cycles` have passed; true if it is high.
  bool run_until_irq(std::uint64_t max_cycles);
  /// Clock cycles since construction.
  std::uint64_t cycle() const;
  /// Of those, the cycles idle skipping advanced over instead of simulating (counted in Verify
  /// mode too, where they were simulated as well).
  std::uint64_t skipped_cycles() const;
  const SimConfig& config() const;
  /// The configuration that runs (model_for(config())).
  SimModel model() const;

  /// The host-memory port's model: statistics, and error injection for fault tests.
  const tb::AxiMemoryModel& memory_port() const;
  tb::AxiMemoryModel& memory_port();

  /// The board around one model configuration (defined and only usable in sim_device.cpp).
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgpu::sim
