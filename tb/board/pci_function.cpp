#include "board/pci_function.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "board/config_space.hpp"

namespace sgpu::board {
namespace {

unsigned size_code(unsigned bytes, const char* what) {
  for (unsigned code = 0; code < 6; ++code)
    if ((128u << code) == bytes) return code;
  throw std::invalid_argument(std::string(what) + " must be 128, 256, 512, 1024, 2048 or 4096 bytes");
}

std::string hex(std::uint32_t v) {
  char b[16];
  std::snprintf(b, sizeof b, "%#x", v);
  return b;
}

}  // namespace

void check_bar0_write(std::uint32_t offset, std::size_t bytes) {
  if (bytes == 0 || bytes > 64)
    throw std::invalid_argument("bar0_write: " + std::to_string(bytes) + " bytes (1..64)");
  if ((offset & 0xfffu) + bytes > 0x1000)
    throw std::invalid_argument("bar0_write: " + std::to_string(bytes) + " bytes at " + hex(offset) +
                                " cross a 4 KiB boundary");
}

Enumerated enumerate(PciFunction& f, const EnumerateOptions& o) {
  Enumerated e;
  const std::uint32_t id = f.config_read32(0x00);
  if ((id & 0xffff) != o.vendor_id || (id >> 16) != o.device_id)
    throw std::runtime_error("PCI ID " + hex(id & 0xffff) + ":" + hex(id >> 16) + ", expected " + hex(o.vendor_id) +
                             ":" + hex(o.device_id));
  // BAR sizing: write all-ones, read back the mask, restore.
  f.config_write32(ConfigSpace::kBar0, 0xffff'ffff);
  const std::uint32_t mask = f.config_read32(ConfigSpace::kBar0) & ~0xfu;
  if (mask == 0) throw std::runtime_error("BAR0 is not implemented");
  e.bar0_bytes = ~mask + 1;
  if (o.bar0_base & (e.bar0_bytes - 1))
    throw std::runtime_error("BAR0 base " + hex(o.bar0_base) + " is not aligned to its size " + hex(e.bar0_bytes));
  f.config_write32(ConfigSpace::kBar0, o.bar0_base);
  e.bar0_base = f.config_read32(ConfigSpace::kBar0) & mask;

  // Capabilities: find MSI and PCI Express by walking the list.
  std::uint16_t msi = 0, pcie = 0;
  for (std::uint16_t p = f.config_read32(ConfigSpace::kCapPointer) & 0xfc; p != 0;) {
    const std::uint32_t hdr = f.config_read32(p);
    if ((hdr & 0xff) == 0x05) msi = p;
    if ((hdr & 0xff) == 0x10) pcie = p;
    p = (hdr >> 8) & 0xfc;
  }
  if (!msi || !pcie) throw std::runtime_error("MSI or PCI Express capability missing");
  const std::uint32_t devctl = f.config_read32(pcie + 8);
  const std::uint32_t want = (devctl & ~0x70e0u) | (size_code(o.max_payload, "Max_Payload_Size") << 5) |
                             (size_code(o.max_read_request, "Max_Read_Request_Size") << 12);
  f.config_write32(pcie + 8, want);
  const std::uint32_t ctl = f.config_read32(pcie + 8);
  e.max_payload = 128u << (ctl >> 5 & 7);
  e.max_read_request = 128u << (ctl >> 12 & 7);
  const std::uint32_t link = f.config_read32(pcie + 0x10) >> 16;
  e.link_width = link >> 4 & 0x3f;
  e.link_gen = link & 0xf;

  f.config_write32(msi + 4, o.msi_address);
  f.config_write32(msi + 8, o.msi_data);
  f.config_write32(msi, f.config_read32(msi) | (1u << 16));
  // Memory space and bus master; INTx disabled (MSI only).
  f.config_write32(ConfigSpace::kCommand, (f.config_read32(ConfigSpace::kCommand) & 0xffff) | 0x0406);
  return e;
}

}  // namespace sgpu::board
