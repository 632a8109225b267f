// The UltraScale+ (Alveo) board, co-simulated: the US+ shell and the core (Verilated
// sgpu_usp_shell) with a behavioural model of XDMA in AXI Bridge mode in place of the vendor
// IP. The model is what the shell relies on, and no more:
//  * BAR0 accesses arrive on m_axib as AXI4 bursts (one beat, 4 bytes, at the BAR offset) after
//    a link latency; read data returns after another;
//  * s_axib serves the core's reads and writes from host memory (bus address = AXI address:
//    one AXI BAR, translation 0), at most 32 reads and 32 writes in flight (PG194), and it
//    checks what XDMA requires: AXI rules (4 KiB boundary, bursts), contiguous write strobes
//    within a burst, and bus mastering enabled;
//  * usr_irq_req[0] rising becomes one MSI, acknowledged on usr_irq_ack[0];
//  * configuration space as XDMA presents it (ConfigSpace), msi_enable following it.
#pragma once

#include <memory>
#include <string>

#include "board/config_space.hpp"
#include "board/pci_function.hpp"
#include "common/axi_memory.hpp"

namespace sgpu::board {

struct UspBoardConfig {
  FunctionIds ids;
  std::uint32_t bar0_bytes = hard_block::kBar0Bytes;
  unsigned lanes = 8, gen = 3;
  double axi_clock_hz = 250e6;
  double core_clock_hz = 250e6;
  double core_phase = 0.41;
  /// Host -> device and device -> host latency of a BAR access through the link and bridge.
  double mmio_latency_ns = 300;
  /// From an s_axib read to its first data beat (link, root complex, memory).
  double read_latency_ns = 700;
  double msi_latency_ns = 80;
  /// XDMA bridge limits (PG194): reads and writes in flight on s_axib.
  unsigned max_reads = 32, max_writes = 32;
  double mmio_timeout_ns = 200'000;
  std::string fst_path;
  std::uint64_t seed = 1;
};

struct UspBridgeStats {
  std::uint64_t max_reads_in_flight = 0;
  std::uint64_t max_writes_in_flight = 0;
  std::uint64_t read_bursts = 0, write_bursts = 0;
  std::uint64_t msis = 0;
};

class UspBoard final : public PciFunction {
 public:
  explicit UspBoard(UspBoardConfig config = {});
  ~UspBoard() override;
  UspBoard(const UspBoard&) = delete;
  UspBoard& operator=(const UspBoard&) = delete;

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

  const UspBridgeStats& bridge_stats() const;
  /// The s_axib memory model: statistics, error injection.
  tb::AxiMemoryModel& host_port();
  std::uint64_t register_writes() const;
  bool irq() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgpu::board
