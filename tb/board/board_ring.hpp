// Drives a board's core through its BAR0 and host memory the way a driver would, without the
// host library (tests of the board must not depend on the code that runs on it): ring set-up,
// packets, doorbell, waiting for the MSI, acknowledging.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>

#include "board/pci_function.hpp"
#include "model/stream.hpp"
#include "sgpu/gen/abi.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::board {

#define SGPU_BOARD_REG(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))

class BoardRing {
 public:
  static constexpr std::uint64_t kRingAddr = 0x1'0000'0000;
  static constexpr std::uint64_t kWritebackAddr = 0x1'0001'0000;
  static constexpr std::uint64_t kBufferAddr = 0x1'0010'0000;

  explicit BoardRing(PciFunction& f, unsigned log2_entries = 4) : f_(f), entries_(1u << log2_entries) {
    f_.bar0_write32(SGPU_BOARD_REG(RING_BASE_LO), static_cast<std::uint32_t>(kRingAddr));
    f_.bar0_write32(SGPU_BOARD_REG(RING_BASE_HI), static_cast<std::uint32_t>(kRingAddr >> 32));
    f_.bar0_write32(SGPU_BOARD_REG(RING_SIZE), log2_entries);
    f_.bar0_write32(SGPU_BOARD_REG(WB_ADDR_LO), static_cast<std::uint32_t>(kWritebackAddr));
    f_.bar0_write32(SGPU_BOARD_REG(WB_ADDR_HI), static_cast<std::uint32_t>(kWritebackAddr >> 32));
    f_.bar0_write32(SGPU_BOARD_REG(INT_ENABLE),
                    SGPU_REGS__INT_ENABLE__DMA_COMPLETED_bm | SGPU_REGS__INT_ENABLE__FAULT_bm);
    f_.bar0_write32(SGPU_BOARD_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  }

  tb::HostMemory& mem() { return f_.host_memory(); }

  /// Places `packets` in a fresh buffer and writes a ring entry for them (no doorbell yet).
  void push(const model::PacketStream& packets, std::uint64_t fence) {
    const std::uint64_t buf = next_buffer_;
    next_buffer_ += ((packets.bytes() + 0xfffu) & ~std::uint64_t{0xfff}) + 0x1000;
    mem().write(buf, packets.words().data(), packets.bytes());
    abi::RingEntry e{};
    e.buf_addr = buf;
    e.end_offset = packets.bytes();
    e.fence = fence;
    e.context_id = 1;
    mem().write(kRingAddr + std::uint64_t{tail_} * sizeof e, &e, sizeof e);
    tail_ = (tail_ + 1) % entries_;
  }

  void doorbell() { f_.bar0_write32(SGPU_BOARD_REG(RING_TAIL), tail_); }

  /// Waits for an MSI (simulated time), then reads and clears INT_STATUS; returns it (0: none).
  std::uint32_t wait_interrupt(std::chrono::nanoseconds timeout = std::chrono::milliseconds(2)) {
    if (!f_.wait_msi(msis_seen_, timeout)) return 0;
    msis_seen_ = f_.msi_count();
    const std::uint32_t status = f_.bar0_read32(SGPU_BOARD_REG(INT_STATUS));
    f_.bar0_write32(SGPU_BOARD_REG(INT_STATUS), status);
    return status;
  }

  /// Runs until the write-back record shows `fence`; true if it did within the time.
  bool wait_fence(std::uint64_t fence, std::chrono::nanoseconds timeout = std::chrono::milliseconds(2)) {
    const auto end = f_.now() + timeout;
    while (f_.now() < end) {
      if (writeback().fence >= fence) {
        f_.run_for(std::chrono::microseconds(1));  // the head follows the fence in the record
        return true;
      }
      f_.run_for(std::chrono::nanoseconds(500));
    }
    return writeback().fence >= fence;
  }

  abi::Writeback writeback() {
    abi::Writeback wb{};
    mem().read(kWritebackAddr, &wb, sizeof wb);
    return wb;
  }

  std::uint32_t reg(std::uint32_t offset) { return f_.bar0_read32(offset); }

 private:
  PciFunction& f_;
  std::uint32_t entries_;
  std::uint32_t tail_ = 0;
  std::uint64_t next_buffer_ = kBufferAddr;
  std::uint64_t msis_seen_ = 0;
};

}  // namespace sgpu::board
