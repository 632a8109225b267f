// A simulated PCIe board as the host sees one of its functions: configuration space, BAR0, the
// host memory the device reaches by bus address, and MSI as a counted event. This is the shape
// a host-side PCI-function seam wraps (libpciaccess/VFIO on a real card: config region, BAR
// mmap, DMA mapping, MSI eventfd), so the same driver code can run against a board model.
//
// Time is simulated: accesses that need an answer (BAR reads) and waits advance the board's
// clocks; posted writes return at once and take effect as the simulation runs.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "board/sgpu_board_pci.hpp"
#include "common/host_memory.hpp"

namespace sgpu::board {

class PciFunction {
 public:
  virtual ~PciFunction() = default;

  virtual std::uint32_t config_read32(std::uint16_t offset) = 0;
  virtual void config_write32(std::uint16_t offset, std::uint32_t value) = 0;

  /// 32-bit read of BAR0 at byte offset `offset` (4-byte aligned): the clocks run until the
  /// device's completion returns. A failed request reads as all-ones.
  virtual std::uint32_t bar0_read32(std::uint32_t offset) = 0;
  /// Posted 32-bit write of BAR0.
  virtual void bar0_write32(std::uint32_t offset, std::uint32_t value) = 0;
  /// Posted write of 1..64 bytes at any offset, not crossing 4 KiB, as one TLP with the byte
  /// enables a CPU store (up to 8 bytes) or a write-combining buffer flush (up to 64) carries.
  virtual void bar0_write(std::uint32_t offset, const void* data, std::size_t bytes) = 0;

  /// Host memory, by bus address (what the device's DMA reaches).
  virtual tb::HostMemory& host_memory() = 0;

  /// MSIs delivered so far.
  virtual std::uint64_t msi_count() const = 0;
  /// Runs until msi_count() > seen or `timeout` of simulated time has passed; true if an MSI
  /// newer than `seen` arrived.
  virtual bool wait_msi(std::uint64_t seen, std::chrono::nanoseconds timeout) = 0;

  virtual void run_for(std::chrono::nanoseconds t) = 0;
  virtual std::chrono::nanoseconds now() const = 0;
  /// Rising edges of the core clock so far, and its frequency.
  virtual std::uint64_t core_cycles() const = 0;
  virtual double core_clock_hz() const = 0;
  /// One line: board, bridge, link.
  virtual std::string describe() const = 0;
};

/// What system firmware and the OS do before a driver opens the device.
struct EnumerateOptions {
  std::uint16_t vendor_id = hard_block::kVendorId;  ///< what enumeration looks for
  std::uint16_t device_id = hard_block::kDeviceId;
  std::uint32_t bar0_base = 0xf000'0000;  ///< BAR0 is a 32-bit BAR: below 4 GiB
  unsigned max_payload = 256;             ///< Max_Payload_Size the host programs
  unsigned max_read_request = 512;        ///< Max_Read_Request_Size
  std::uint32_t msi_address = 0xfee0'0000;
  std::uint16_t msi_data = 0x4021;
};

struct Enumerated {
  std::uint32_t bar0_base = 0;
  std::uint32_t bar0_bytes = 0;
  unsigned max_payload = 0, max_read_request = 0;
  unsigned link_width = 0, link_gen = 0;
};

/// Throws std::invalid_argument unless a bar0_write of `bytes` at `offset` is one a host can make:
/// 1..64 bytes, not crossing a 4 KiB boundary.
void check_bar0_write(std::uint32_t offset, std::size_t bytes);

/// Checks the IDs, sizes and assigns BAR0, sets MPS/MRRS, enables MSI, memory decoding and bus
/// mastering. Throws std::runtime_error naming what does not match.
Enumerated enumerate(PciFunction& f, const EnumerateOptions& o = {});

}  // namespace sgpu::board
