// The Artix-7 board, co-simulated: the generated LitePCIe transaction layer, the 7-series shell
// and the core (Verilated sgpu_s7_shell), with the PCIe hard block replaced by the
// root-complex model (S7RootComplex) on the hard block's own ports. The user clock (125 MHz,
// the hard block's) and the core clock (its own MMCM on the board) are independent.
#pragma once

#include <memory>
#include <string>

#include "board/config_space.hpp"
#include "board/pci_function.hpp"
#include "board/s7_root_complex.hpp"

namespace sgpu::board {

struct S7BoardConfig {
  RootComplexConfig rc;
  FunctionIds ids;
  std::uint32_t bar0_bytes = hard_block::kBar0Bytes;
  double user_clock_hz = 125e6;
  double core_clock_hz = 125e6;
  /// Where in its period the core clock starts, as a fraction (the two clocks are unrelated).
  double core_phase = 0.37;
  /// User clock cycles of link training (user_reset high) after power-up.
  unsigned link_training_cycles = 64;
  /// Simulated time a BAR read may take before the board counts as hung.
  double mmio_timeout_ns = 200'000;
  /// FST waveform; empty: $SGPU_FST, else none.
  std::string fst_path;
  std::uint64_t seed = 1;
};

class S7Board final : public PciFunction {
 public:
  explicit S7Board(S7BoardConfig config = {});
  ~S7Board() override;
  S7Board(const S7Board&) = delete;
  S7Board& operator=(const S7Board&) = delete;

  std::uint32_t config_read32(std::uint16_t offset) override;
  void config_write32(std::uint16_t offset, std::uint32_t value) override;
  std::uint32_t bar0_read32(std::uint32_t offset) override;
  void bar0_write32(std::uint32_t offset, std::uint32_t value) override;
  void bar0_write(std::uint32_t offset, const void* data, std::size_t bytes) override;
  tb::HostMemory& host_memory() override;
  std::uint64_t msi_count() const override;
  bool wait_msi(std::uint64_t seen, std::chrono::nanoseconds timeout) override;
  void run_for(std::chrono::nanoseconds t) override;
  std::chrono::nanoseconds now() const override;
  std::uint64_t core_cycles() const override;
  double core_clock_hz() const override;
  std::string describe() const override;

  /// Reads of more than one dword (a CPU's 64-bit load is two), for tests of the BAR bridge.
  std::vector<std::uint8_t> bar0_read(std::uint32_t offset, std::uint16_t dwords, std::uint8_t first_be = 0xf,
                                      std::uint8_t last_be = 0xf);
  /// Runs until every posted BAR write has reached the register block and no TLP is in flight.
  void drain();

  S7RootComplex& root_complex();
  std::uint64_t user_cycles() const;
  /// Register writes the shell has completed (the reg_write_o pulses).
  std::uint64_t register_writes() const;
  /// The core's interrupt line now.
  bool irq() const;
  const S7BoardConfig& config() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgpu::board
