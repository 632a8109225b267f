// The simulated PCI function: the Verilated device (SimDevice) behind a simulated configuration
// space and IOMMU, so the `pcie` transport above the seam runs unchanged on the simulation
// ("pcie-sim", pcie_sim_transport.hpp).
//
// Configuration space: a 4 KiB header with the softgpu's IDs (spec/abi.toml [pci]), COMMAND
// (memory, Bus Master and INTx-disable writable), an MSI capability and a PCI Express capability
// with the link the test asks for. BAR0 is the register window; host memory becomes reachable at
// the I/O virtual address the pool chose (an IOMMU that, like VFIO's, refuses ranges outside its
// apertures and mappings not on its smallest page), or at a made-up physical address (no IOMMU).
// The interrupt line becomes MSI messages: one when the line is high and armed; armed again when
// the line is seen low or after any register write (the driver acknowledged), so a level that
// stays high across an acknowledge is delivered again. Time is simulated time. remove() pulls
// the card.
//
// (The co-simulated board of the boards issue, with a real bridge in the RTL, is the function to
// put behind the same seam next.)
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "sgpu/transport.hpp"
#include "sgpu/transport/pci_function.hpp"
#include "sgpu/transport/pcie.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::pcie {

/// The simulated card: the board it wraps and what its configuration space, IOMMU and
/// interrupt look like.
struct SimPciConfig {
  /// The simulated board (memory latencies, seed, clock, waveform, AXI checking).
  sim::SimConfig sim;
  PciId id = kSoftgpuId;
  InterruptDelivery delivery = InterruptDelivery::Msi;
  DmaAddressing addressing = DmaAddressing::Translated;
  /// What the simulated IOMMU reports (Translated): its ranges and page sizes (x86's by default).
  std::vector<IovaRange> iova_ranges{{0, (std::uint64_t{1} << 48) - 1}};
  std::uint64_t iova_page_sizes = (std::uint64_t{1} << 12) | (std::uint64_t{1} << 21) | (std::uint64_t{1} << 30);
  /// Made-up physical addresses start here (Physical).
  std::uint64_t physical_base = std::uint64_t{1} << 32;
  LinkState link{2, 4, 2, 4};
  bool bus_master_stuck_off = false;  ///< COMMAND.bus_master does not stick (a broken card)
};

class SimPciFunction final : public PciFunction {
 public:
  explicit SimPciFunction(SimPciConfig config);
  ~SimPciFunction() override;

  std::string address() const override { return "sim:00:00.0"; }
  std::string_view kind() const override { return "sim"; }
  std::uint32_t config_read(std::uint16_t offset, unsigned width) override;
  void config_write(std::uint16_t offset, unsigned width, std::uint32_t value) override;
  std::size_t config_size() const override { return config_.size(); }
  Result<BarWindow*> map_bar(unsigned index) override;
  DmaAddressing dma_addressing() const override { return cfg_.addressing; }
  std::vector<IovaRange> iova_ranges() const override;
  std::uint64_t iova_page_sizes() const override;
  Result<HostBlock> alloc_host(std::size_t bytes) override;
  void free_host(const HostBlock& block) noexcept override;
  Status map_dma(void* cpu, std::uint64_t iova, std::size_t bytes) override;
  void unmap_dma(std::uint64_t iova, std::size_t bytes) noexcept override;
  InterruptDelivery interrupt_delivery() const override { return cfg_.delivery; }
  Status enable_interrupts() override;
  Result<bool> wait_interrupt(std::chrono::nanoseconds timeout) override;
  std::chrono::nanoseconds now() override;

  /// Surprise removal: from now on everything reads all-ones, writes vanish, no MSI arrives.
  void remove() { removed_ = true; }
  /// The simulated device (statistics, fault injection).
  sim::SimDevice& device() { return *dev_; }
  /// DMA mappings live now, and MSIs delivered so far.
  std::size_t live_mappings() const { return mapped_.size(); }
  /// The live mappings: bus address -> bytes.
  const std::map<std::uint64_t, std::size_t>& mappings() const { return mapped_; }
  std::uint64_t messages() const { return messages_; }

 private:
  class Bar;
  bool decodes_memory() const;
  bool bus_master() const;
  bool msi_enabled() const;
  std::uint32_t get(std::uint16_t offset, unsigned width) const;
  void put(std::uint16_t offset, unsigned width, std::uint32_t value);

  SimPciConfig cfg_;
  std::shared_ptr<sim::SimDevice> dev_;
  std::array<std::uint8_t, 4096> config_{};
  std::unique_ptr<Bar> bar0_;
  std::map<std::uint64_t, std::size_t> mapped_;  // bus address -> bytes
  std::uint64_t next_physical_;
  bool removed_ = false;
  bool armed_ = true;
  std::uint64_t messages_ = 0;
};

}  // namespace sgpu::pcie
