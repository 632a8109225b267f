#include "board/config_space.hpp"

#include <stdexcept>

namespace sgpu::board {
namespace {

unsigned encode_payload(unsigned bytes) {
  unsigned code = 0;
  while ((128u << code) < bytes && code < 5) ++code;
  return code;
}

}  // namespace

ConfigSpace::ConfigSpace(FunctionIds ids, std::uint32_t bar0_bytes, LinkCaps link)
    : bar0_bytes_(bar0_bytes), ids_(ids), link_(link) {
  if (bar0_bytes < 128 || (bar0_bytes & (bar0_bytes - 1)) != 0)
    throw std::invalid_argument("ConfigSpace: BAR0 size must be a power of two >= 128");
  auto set = [&](std::uint16_t off, std::uint32_t v, std::uint32_t w = 0) {
    regs_[off / 4] = v;
    writable_[off / 4] = w;
  };
  set(0x00, (std::uint32_t{ids.device_id} << 16) | ids.vendor_id);
  // Command: I/O, memory, bus master, parity, SERR, INTx disable; status: capability list.
  set(kCommand, 0x0010'0000, 0x0000'0547);
  set(0x08, (ids.class_code << 8) | ids.revision);
  set(0x0c, 0);                                         // header type 0, single function
  set(kBar0, 0, ~(bar0_bytes - 1));                     // 32-bit, non-prefetchable memory
  set(0x2c, (std::uint32_t{ids.subsystem_id} << 16) | ids.subsystem_vendor_id);
  set(kCapPointer, kPmCap);
  set(0x3c, 0x0000'0000, 0x0000'00ff);                  // interrupt line (no INTx pin)
  // Power management: next MSI.
  set(kPmCap, (0x0003u << 16) | (std::uint32_t{kMsiCap} << 8) | 0x01);
  set(kPmCap + 4, 0x0000'0008, 0x0000'0003);
  // MSI: next PCIe; one vector, 32-bit addresses; enable bit writable.
  set(kMsiCap, (0x0000u << 16) | (std::uint32_t{kPcieCap} << 8) | 0x05, 0x0001'0000);
  set(kMsiCap + 4, 0, 0xffff'fffc);                     // message address
  set(kMsiCap + 8, 0, 0x0000'ffff);                     // message data
  // PCI Express capability: version 2, endpoint; last in the list.
  set(kPcieCap, (0x0002u << 16) | 0x10);
  set(kPcieCap + 0x04, 0x0000'8000 | encode_payload(link.max_payload_supported));  // device caps (role-based error)
  // Device control: MPS and MRRS writable, reset values 128 / 512 bytes.
  set(kDeviceControl, 0x0000'2000, 0x0000'70e0 | 0x0000'0800);
  set(kPcieCap + 0x0c, (std::uint32_t{link.max_lanes} << 4) | link.max_gen);       // link caps
  set(kPcieCap + 0x10, 0, 0x0000'0003);                 // link control (ASPM) / link status
  set_link(link.max_lanes, link.max_gen);
}

void ConfigSpace::set_link(unsigned lanes, unsigned gen) {
  const std::uint32_t status = (lanes << 4) | gen;
  regs_[kLinkStatus / 4] = (regs_[kLinkStatus / 4] & 0xffff) | (status << 16);
}

std::uint32_t ConfigSpace::read32(std::uint16_t offset) const {
  if (offset >= 4096 || (offset & 3) != 0) throw std::out_of_range("config read at an unaligned or out-of-range offset");
  return regs_[offset / 4];
}

void ConfigSpace::write32(std::uint16_t offset, std::uint32_t value, std::uint8_t byte_enables) {
  if (offset >= 4096 || (offset & 3) != 0) throw std::out_of_range("config write at an unaligned or out-of-range offset");
  std::uint32_t mask = 0;
  for (unsigned i = 0; i < 4; ++i)
    if (byte_enables >> i & 1) mask |= 0xffu << (8 * i);
  mask &= writable_[offset / 4];
  regs_[offset / 4] = (regs_[offset / 4] & ~mask) | (value & mask);
}

}  // namespace sgpu::board
