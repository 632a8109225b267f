// The `pcie` transport: a softgpu on a PCIe card, from user space, with no kernel module of ours.
// Programs reach it through their TransportRegistry, where libsgpu registers it as "pcie":
//
//   sgpu::TransportRegistry registry;
//   registry.options<sgpu::pcie::PcieOptions>("pcie")->unsafe_no_iommu = false;  // the default
//   auto t = registry.open("pcie:0000:01:00.0");   // or "pcie": the one card that answers
//   auto dev = sgpu::Device::open(std::move(*t));
//
// The transport sits on a PciFunction (pci_function.hpp): VFIO on a host with an IOMMU, sysfs
// BAR + hugepages without one (only with unsafe_no_iommu, see docs/pcie.md), or the simulated
// function of the testbench ("pcie-sim", tb/pcie). On top of it, the same code for all three:
// 32-bit BAR0 register access with all-ones detection (a card that is gone is reported, never
// waited for), a DMA-memory pool whose I/O virtual addresses stay below the device's address
// reach, inside the IOMMU's ranges and on its page size, the interrupt wait (MSI, or fence
// polling in host memory) and time.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/transport/pci_function.hpp"

namespace sgpu::pcie {

struct PciId {
  std::uint16_t vendor = 0;
  std::uint16_t device = 0;
  bool operator==(const PciId& o) const { return vendor == o.vendor && device == o.device; }
};

/// The softgpu's own identity in configuration space (spec/abi.toml [pci]).
inline constexpr PciId kSoftgpuId{abi::pci::kVendorId, abi::pci::kDeviceId};

/// Vendor IDs whose functions are softgpu candidates without --pci-id: the bridges our boards use
/// keep the FPGA vendor's ID (spec/abi.toml [pci]), and a bitstream built with the bridge's
/// default device ID (which varies with lane count and generation) is still found; identity is
/// confirmed by ID_MAGIC in BAR0.
inline constexpr std::uint16_t kCandidateVendors[] = {abi::pci::kVendorId};

/// The narrowest DMA reach the transport drives (2 MiB: the ring and a few buffers).
inline constexpr unsigned kMinDmaAddressBits = 21;

/// The transport above the seam: the same for a card and for the simulated function.
struct PcieTransportOptions {
  /// The DMA address width the device (and its bridge) can drive, in [kMinDmaAddressBits, 64]
  /// bits, when narrower than CAP_BUS.ADDR_BITS says; 0 = CAP_BUS.ADDR_BITS.
  unsigned dma_address_bits = 0;
  /// The DMA pool maps host memory in chunks of this size (few large IOMMU mappings), rounded up
  /// to the IOMMU's smallest page.
  std::size_t dma_chunk_bytes = std::size_t{2} << 20;
  /// Fence polling (no MSI): how long one wait lets pass, and how often the interrupt status is
  /// read anyway so faults and preemptions are still seen.
  std::chrono::nanoseconds poll_interval = std::chrono::microseconds(20);
  std::chrono::nanoseconds status_check_interval = std::chrono::milliseconds(1);
  /// A wait for an interrupt checks every this long that the card is still there (one
  /// configuration read), so a card that vanished without notice ends the wait early.
  std::chrono::nanoseconds liveness_interval = std::chrono::milliseconds(100);
  /// Check ID_MAGIC and the major version of ID_VERSION at open (Device::open checks again).
  bool check_identity = true;
  /// Called with each warning (link below capability, unsafe mode); may be empty.
  std::function<void(std::string_view)> warn;
};

/// The options of the registry's "pcie" backend (TransportRegistry::options<PcieOptions>("pcie")):
/// how to find and open a card, and the transport above the seam. Which card is the spec's
/// argument ("pcie:0000:01:00.0"), not an option.
struct PcieOptions {
  /// Accept these vendor:device IDs as candidates too (a board with its own IDs, or a test).
  std::vector<PciId> extra_ids;
  /// Without an IOMMU: sysfs BAR, hugepages with physical addresses, fence polling. Unsafe (the
  /// card can then write anywhere in memory); refused unless set.
  bool unsafe_no_iommu = false;
  /// Where sysfs is ("/sys"; tests point it elsewhere).
  std::string sysfs_root = "/sys";
  PcieTransportOptions transport;
};

/// Opens the transport over an already opened function: enables memory decoding and Bus Master
/// (and checks both stuck), checks the link, maps BAR0, checks the ID registers, routes the
/// interrupt. Used by open_pcie() and by the testbench's simulated function ("pcie-sim"), whose
/// transport names itself `name`.
Result<std::unique_ptr<Transport>> open_pcie_transport(std::unique_ptr<PciFunction> function,
                                                       const PcieTransportOptions& options, std::string name = "pcie");

/// Finds the card (libpciaccess) at `address` ("0000:01:00.0" or "01:00.0"; empty = the one
/// candidate that answers with the softgpu magic), opens it through VFIO (or sysfs with
/// unsafe_no_iommu) and returns the transport. Every failure says what was seen and what to do.
/// The registry's "pcie" backend is this function.
Result<std::unique_ptr<Transport>> open_pcie(const PcieOptions& options, std::string_view address = {});

/// The real functions, for tools and the kernel-interface tests.
Result<std::unique_ptr<PciFunction>> open_vfio_function(std::string_view address,
                                                        const std::string& sysfs_root = "/sys");
/// No IOMMU: DMA memory from hugepages (the size /proc/meminfo gives). Enables the function
/// through sysfs `enable` (one more user in the PCI core's count; the kernel takes it only while
/// no driver is bound) and gives that back when the function is destroyed.
Result<std::unique_ptr<PciFunction>> open_sysfs_function(std::string_view address,
                                                         const std::string& sysfs_root = "/sys");

/// The PCI Express link as configuration space reports it (absent for conventional PCI).
struct LinkState {
  unsigned speed_gen = 0;      ///< trained: 1 = 2.5 GT/s, 2 = 5, 3 = 8, 4 = 16, 5 = 32
  unsigned width = 0;          ///< trained lanes
  unsigned max_speed_gen = 0;  ///< capability
  unsigned max_width = 0;
  bool degraded() const { return speed_gen < max_speed_gen || width < max_width; }
};
std::string to_string(const LinkState& l);  ///< "5.0 GT/s x4 (capable of 8.0 GT/s x8)"

/// One PCI function as `sgpu list` shows it.
struct FunctionInfo {
  std::string address;
  PciId id;
  PciId subsystem;
  std::uint32_t class_code = 0;
  std::uint8_t revision = 0;
  std::string vendor_name;  ///< from the PCI ID database, may be empty
  std::string driver;       ///< bound kernel driver, empty = none
  std::optional<unsigned> iommu_group;
  std::optional<LinkState> link;
  std::string link_note;               ///< why `link` is empty when it is ("conventional PCI", "needs root")
  bool candidate = false;              ///< a softgpu vendor/ID (or an extra ID)
  std::optional<std::uint32_t> magic;  ///< ID_MAGIC read from BAR0 (candidates only)
  std::string magic_note;              ///< why `magic` is empty when it is
  bool answers_softgpu() const;
};

/// Every PCI function libpciaccess sees; BAR0 is read only for candidates.
Result<std::vector<FunctionInfo>> list_functions(const PcieOptions& options = {});

/// Hands `address` to vfio-pci (driver_override, unbind, drivers_probe) and checks it took.
/// Returns the lines to print (what was done, the /dev/vfio group, permissions).
Result<std::vector<std::string>> bind_vfio(std::string_view address, const std::string& sysfs_root = "/sys");
/// Gives `address` back to the kernel's own driver (clears driver_override, reprobes).
Result<std::vector<std::string>> unbind_vfio(std::string_view address, const std::string& sysfs_root = "/sys");

/// "0000:01:00.0" from "01:00.0" or "0000:01:00.0"; InvalidArgument naming the text otherwise.
Result<std::string> normalize_address(std::string_view text);
/// A vendor:device pair in hex ("10ee:7024"); InvalidArgument naming the text otherwise.
Result<PciId> parse_pci_id(std::string_view text);

}  // namespace sgpu::pcie
