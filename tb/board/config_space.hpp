// The configuration space of a PCIe endpoint function as a hard block (7-series pcie_7x, XDMA)
// presents it: a type-0 header with one 32-bit memory BAR, and the capabilities the host's
// enumeration touches (power management, MSI with one vector and 32-bit addresses, PCI
// Express). Reads and writes follow the registers' access rules (read-only, read-write, BAR
// size masking), so a host's BAR sizing and MSI set-up run against it unchanged.
#pragma once

#include <array>
#include <cstdint>

#include "board/sgpu_board_pci.hpp"

namespace sgpu::board {

/// By default what the Vivado flow configures the hard blocks with: the softgpu's identity
/// (spec/abi.toml [pci]) and the boards' other values (fpga/boards.toml [pci]), through the
/// header boards.py generates.
struct FunctionIds {
  std::uint16_t vendor_id = hard_block::kVendorId;
  std::uint16_t device_id = hard_block::kDeviceId;
  std::uint32_t class_code = hard_block::kClassCode;
  std::uint8_t revision = hard_block::kRevision;
  std::uint16_t subsystem_vendor_id = hard_block::kSubsystemVendorId;
  std::uint16_t subsystem_id = hard_block::kSubsystemId;
};

struct LinkCaps {
  unsigned max_lanes = 4;
  unsigned max_gen = 2;               ///< 1: 2.5 GT/s, 2: 5 GT/s, 3: 8 GT/s
  unsigned max_payload_supported = 512;
};

class ConfigSpace {
 public:
  // Offsets of what enumeration uses (the 7-series hard block's layout).
  static constexpr std::uint16_t kCommand = 0x04;
  static constexpr std::uint16_t kBar0 = 0x10;
  static constexpr std::uint16_t kCapPointer = 0x34;
  static constexpr std::uint16_t kPmCap = 0x40;
  static constexpr std::uint16_t kMsiCap = 0x48;
  static constexpr std::uint16_t kPcieCap = 0x60;
  static constexpr std::uint16_t kDeviceControl = kPcieCap + 0x08;
  static constexpr std::uint16_t kLinkStatus = kPcieCap + 0x10;  ///< upper half of this dword

  ConfigSpace(FunctionIds ids, std::uint32_t bar0_bytes, LinkCaps link);

  std::uint32_t read32(std::uint16_t offset) const;
  /// Writes the bytes of `value` selected by `byte_enables` (bit i = byte i).
  void write32(std::uint16_t offset, std::uint32_t value, std::uint8_t byte_enables = 0xf);

  /// Trained link (reported in the link status register).
  void set_link(unsigned lanes, unsigned gen);

  std::uint16_t command() const { return static_cast<std::uint16_t>(read32(kCommand)); }
  bool memory_enabled() const { return (command() & 0x2) != 0; }
  bool bus_master() const { return (command() & 0x4) != 0; }
  std::uint32_t bar0_base() const { return read32(kBar0) & ~(bar0_bytes_ - 1); }
  std::uint32_t bar0_bytes() const { return bar0_bytes_; }
  bool msi_enabled() const { return (read32(kMsiCap) >> 16 & 1) != 0; }
  std::uint32_t msi_address() const { return read32(kMsiCap + 4); }
  std::uint16_t msi_data() const { return static_cast<std::uint16_t>(read32(kMsiCap + 8)); }
  std::uint16_t device_control() const { return static_cast<std::uint16_t>(read32(kDeviceControl)); }
  unsigned max_payload() const { return 128u << (device_control() >> 5 & 7); }
  unsigned max_read_request() const { return 128u << (device_control() >> 12 & 7); }
  const FunctionIds& ids() const { return ids_; }
  const LinkCaps& link_caps() const { return link_; }

 private:
  std::array<std::uint32_t, 1024> regs_{};
  std::array<std::uint32_t, 1024> writable_{};  ///< bits the host may change
  std::uint32_t bar0_bytes_;
  FunctionIds ids_;
  LinkCaps link_;
};

}  // namespace sgpu::board
