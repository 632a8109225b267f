// The PCI-function seam: what the `pcie` transport needs from one PCI function, and nothing more.
//
//   Transport (register access, DMA pool + IOVA allocator, interrupt wait, time)   pcie_transport
//   ───────────────────────────── PciFunction ─────────────────────────────
//   VfioFunction            libpciaccess discovery + VFIO type 1 (BAR mmap, MAP_DMA, MSI → eventfd)
//   SysfsFunction           no IOMMU: sysfs BAR, hugepages + pagemap, fence polling (unsafe, opt-in)
//   SimPciFunction (tb/)    the simulated device behind a simulated configuration space
//
// Everything above the seam is the same code for a card and for the simulation, so the tests of
// the transport over the simulation test what runs on a card. Below the seam there is no policy:
// a function moves bytes (configuration space, BAR windows, host memory made reachable by the
// device) and delivers interrupt messages; choosing addresses, checking identity, enabling Bus
// Master and deciding that the device is gone happen above.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgpu/result.hpp"

namespace sgpu::pcie {

/// Standard configuration-space layout (PCI Local Bus 3.0, PCI Express Base 4.0), the parts used.
namespace cfg {
inline constexpr std::uint16_t kVendorId = 0x00;
inline constexpr std::uint16_t kDeviceId = 0x02;
inline constexpr std::uint16_t kCommand = 0x04;
inline constexpr std::uint16_t kStatus = 0x06;
inline constexpr std::uint16_t kRevision = 0x08;
inline constexpr std::uint16_t kClassCode = 0x09;  ///< 3 bytes: prog-if, subclass, class
inline constexpr std::uint16_t kBar0 = 0x10;
inline constexpr std::uint16_t kSubsystemVendorId = 0x2c;
inline constexpr std::uint16_t kSubsystemId = 0x2e;
inline constexpr std::uint16_t kCapabilityPointer = 0x34;

inline constexpr std::uint16_t kCommandMemory = 1u << 1;
inline constexpr std::uint16_t kCommandBusMaster = 1u << 2;
inline constexpr std::uint16_t kCommandIntxDisable = 1u << 10;
inline constexpr std::uint16_t kStatusCapabilities = 1u << 4;

inline constexpr std::uint8_t kCapMsi = 0x05;
inline constexpr std::uint8_t kCapExpress = 0x10;
inline constexpr std::uint8_t kCapMsix = 0x11;
/// Offsets inside the PCI Express capability.
inline constexpr std::uint16_t kExpLinkCapabilities = 0x0c;
inline constexpr std::uint16_t kExpLinkStatus = 0x12;
}  // namespace cfg

/// An inclusive range of I/O virtual addresses the IOMMU lets the device use.
struct IovaRange {
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  bool operator==(const IovaRange& o) const { return first == o.first && last == o.last; }
};

/// The smallest page of an IOMMU page-size bitmap (PciFunction::iova_page_sizes(): bit n set =
/// 2^n-byte pages), and never less than the host's 4 KiB page (also for an empty bitmap).
inline std::size_t smallest_page(std::uint64_t page_sizes) {
  constexpr std::uint64_t kHostPage = 4096;
  const std::uint64_t lowest = page_sizes & (~page_sizes + 1);
  return static_cast<std::size_t>(lowest > kHostPage ? lowest : kHostPage);
}

/// How host memory becomes reachable by the device.
enum class DmaAddressing {
  Translated,  ///< an IOMMU translates: the caller chooses the I/O virtual address (map_dma)
  Physical,    ///< no IOMMU: the bus address is the physical address the function reports
};

/// How the function tells the host that its interrupt fired.
enum class InterruptDelivery {
  Msi,      ///< MSI messages (wait_interrupt() returns on each)
  Msix,     ///< MSI-X vector 0
  Polling,  ///< none: the transport polls fences in host memory
};
std::string_view to_string(InterruptDelivery d);

/// Host memory a function handed out for DMA. `bus_addr` is set when the function fixes the
/// address the device must use (DmaAddressing::Physical); translated functions leave it empty.
struct HostBlock {
  void* cpu = nullptr;
  std::size_t bytes = 0;
  std::optional<std::uint64_t> bus_addr;
};

/// One BAR as mapped into this process. Accesses are 32-bit and naturally aligned; the offset is
/// checked by the caller (the transport) against size().
class BarWindow {
 public:
  virtual ~BarWindow() = default;
  virtual std::uint32_t read32(std::uint32_t offset) = 0;
  virtual void write32(std::uint32_t offset, std::uint32_t value) = 0;
  virtual std::uint64_t size() const = 0;
};

/// One PCI function (a card's physical function, or the simulated one). Not thread-safe: the
/// transport that owns it serialises every call.
class PciFunction {
 public:
  virtual ~PciFunction() = default;

  /// Domain:bus:device.function, e.g. "0000:01:00.0" ("sim:0" for the simulation).
  virtual std::string address() const = 0;
  /// What implements it: "vfio", "sysfs (no IOMMU)", "sim".
  virtual std::string_view kind() const = 0;

  // ---- configuration space
  /// Reads `width` (1, 2 or 4) bytes at `offset`, little-endian. A function that is gone reads
  /// all-ones, as on a real bus.
  virtual std::uint32_t config_read(std::uint16_t offset, unsigned width) = 0;
  virtual void config_write(std::uint16_t offset, unsigned width, std::uint32_t value) = 0;
  /// 256 (conventional) or 4096 (extended) bytes.
  virtual std::size_t config_size() const = 0;

  // ---- BARs
  /// Maps BAR `index` (0..5) and returns its window; the function keeps it mapped until it is
  /// destroyed. Fails with a message naming the BAR and the reason.
  virtual Result<BarWindow*> map_bar(unsigned index) = 0;

  // ---- DMA
  virtual DmaAddressing dma_addressing() const = 0;
  /// Translated: the I/O virtual ranges the IOMMU accepts (the whole 64-bit space if it reports
  /// none). Physical: empty.
  virtual std::vector<IovaRange> iova_ranges() const = 0;
  /// Translated: the page sizes the IOMMU maps, as a bitmap (bit n set: 2^n-byte pages; VFIO's
  /// iova_pgsizes). The I/O virtual address, size and host address of every map_dma() are
  /// multiples of the smallest. Physical: the host page size.
  virtual std::uint64_t iova_page_sizes() const = 0;
  /// Zeroed host memory of `bytes` (a multiple of the smallest of iova_page_sizes()), aligned to
  /// that page size, that the function can make reachable; physically contiguous with `bus_addr`
  /// set for DmaAddressing::Physical.
  virtual Result<HostBlock> alloc_host(std::size_t bytes) = 0;
  virtual void free_host(const HostBlock& block) noexcept = 0;
  /// Translated only: makes [cpu, cpu + bytes) reachable by the device at [iova, iova + bytes).
  virtual Status map_dma(void* cpu, std::uint64_t iova, std::size_t bytes) = 0;
  virtual void unmap_dma(std::uint64_t iova, std::size_t bytes) noexcept = 0;

  // ---- interrupt
  virtual InterruptDelivery interrupt_delivery() const = 0;
  /// Routes the function's interrupt (MSI / MSI-X vector 0) to the event wait_interrupt() waits
  /// on. Polling functions accept and do nothing.
  virtual Status enable_interrupts() = 0;
  /// Waits up to `timeout` (the function's time) for an interrupt message; true if one arrived
  /// (messages that arrived before the call count). A polling function only lets the time pass.
  virtual Result<bool> wait_interrupt(std::chrono::nanoseconds timeout) = 0;

  // ---- time
  /// Monotonic time: a real clock for a card, simulated time for the simulation.
  virtual std::chrono::nanoseconds now() = 0;
};

}  // namespace sgpu::pcie
