// Drives sgpu_top through raw MMIO and host memory, the way a driver would but without the host
// library: tests of the RTL must not depend on the code they are meant to check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/stream.hpp"
#include "sgpu/gen/abi.hpp"
#include "sgpu/gen/sgpu_regs.h"
#include "sim/sim_device.hpp"

namespace sgpu::tb {

#define SGPU_REG(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))

/// Bus addresses the harness uses in the simulated host memory (above 4 GiB on purpose).
inline constexpr std::uint64_t kRingAddr = 0x1'0000'0000;
inline constexpr std::uint64_t kWritebackAddr = 0x1'0001'0000;
inline constexpr std::uint64_t kBufferAddr = 0x1'0010'0000;
inline constexpr std::uint64_t kDataAddr = 0x1'0100'0000;

/// Packet streams come from the reference model's builder (one builder for every testbench).
using Packets = model::PacketStream;

class RingHarness {
 public:
  explicit RingHarness(sim::SimConfig config = {}, unsigned log2_entries = 4)
      : dev_(config), entries_(1u << log2_entries) {
    dev_.mmio_write32(SGPU_REG(RING_BASE_LO), static_cast<std::uint32_t>(kRingAddr));
    dev_.mmio_write32(SGPU_REG(RING_BASE_HI), static_cast<std::uint32_t>(kRingAddr >> 32));
    dev_.mmio_write32(SGPU_REG(RING_SIZE), log2_entries);
    dev_.mmio_write32(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(kWritebackAddr));
    dev_.mmio_write32(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>(kWritebackAddr >> 32));
    dev_.mmio_write32(SGPU_REG(INT_ENABLE), SGPU_REGS__INT_ENABLE__DMA_COMPLETED_bm | SGPU_REGS__INT_ENABLE__FAULT_bm);
    dev_.mmio_write32(SGPU_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  }

  sim::SimDevice& dev() { return dev_; }
  HostMemory& mem() { return dev_.memory(); }

  /// Places `packets` in a fresh buffer and writes a ring entry for them (without the doorbell).
  std::uint32_t push(const Packets& packets, std::uint64_t fence, std::uint32_t flags = 0) {
    const std::uint64_t buf = next_buffer_;
    next_buffer_ += (packets.bytes() + 0xfffu) & ~std::uint64_t{0xfff};
    next_buffer_ += 0x1000;
    mem().write(buf, packets.words().data(), packets.bytes());
    abi::RingEntry e{};
    e.buf_addr = buf;
    e.start_offset = 0;
    e.end_offset = packets.bytes();
    e.fence = fence;
    e.context_id = 1;
    e.flags = flags;
    return push_entry(e);
  }

  std::uint32_t push_entry(const abi::RingEntry& e) {
    mem().write(kRingAddr + std::uint64_t{tail_} * sizeof(abi::RingEntry), &e, sizeof e);
    tail_ = (tail_ + 1) % entries_;
    return tail_;
  }

  void doorbell() { dev_.mmio_write32(SGPU_REG(RING_TAIL), tail_); }

  /// Runs until the interrupt line rises, then reads and clears INT_STATUS; returns it (0 = timeout).
  std::uint32_t wait_irq(std::uint64_t max_cycles = 200000) {
    if (!dev_.run_until_irq(max_cycles)) return 0;
    const std::uint32_t status = dev_.mmio_read32(SGPU_REG(INT_STATUS));
    dev_.mmio_write32(SGPU_REG(INT_STATUS), status);
    return status;
  }

  /// Runs until the write-back record shows `fence` (or the budget is spent); true if it did.
  /// The record is two 64-bit writes, the fence last: once it shows, the entry has retired
  /// (a few more cycles let its acknowledgement reach the registers).
  bool wait_fence(std::uint64_t fence, std::uint64_t max_cycles = 200000) {
    for (std::uint64_t n = 0; n < max_cycles; n += 64) {
      if (writeback().fence >= fence) {
        dev_.step(16);
        return true;
      }
      dev_.step(64);
    }
    return writeback().fence >= fence;
  }

  abi::Writeback writeback() {
    abi::Writeback wb{};
    mem().read(kWritebackAddr, &wb, sizeof wb);
    return wb;
  }

  std::uint32_t reg(std::uint32_t offset) { return dev_.mmio_read32(offset); }
  /// A 64-bit register pair, low half first.
  std::uint64_t reg64(std::uint32_t lo, std::uint32_t hi) {
    const std::uint64_t l = reg(lo);
    return l | (std::uint64_t{reg(hi)} << 32);
  }
  std::uint64_t fence_done() { return reg64(SGPU_REG(FENCE_DONE_LO), SGPU_REG(FENCE_DONE_HI)); }
  bool faulted() { return (reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__FAULTED_bm) != 0; }

  /// The fault record (FAULT_*), as software reads it.
  struct Fault {
    abi::Fault reason;
    std::uint32_t ring_index;
    std::uint64_t addr;
    std::uint64_t fence;
    std::uint32_t detail;
  };
  Fault fault() {
    const std::uint32_t status = reg(SGPU_REG(FAULT_STATUS));
    return {static_cast<abi::Fault>((status & SGPU_REGS__FAULT_STATUS__REASON_bm) >> SGPU_REGS__FAULT_STATUS__REASON_bp),
            (status & SGPU_REGS__FAULT_STATUS__RING_INDEX_bm) >> SGPU_REGS__FAULT_STATUS__RING_INDEX_bp,
            reg64(SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)),
            reg64(SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)), reg(SGPU_REG(FAULT_DETAIL))};
  }
  std::uint32_t tail() const { return tail_; }

  /// The engine-reset protocol of the programming guide: stop fetching, reset, wait for idle,
  /// restart the ring at entry 0 (the reset cleared the head), fetch again. True if it went idle.
  bool reset_engine() {
    dev_.mmio_write32(SGPU_REG(CTRL), 0);
    dev_.mmio_write32(SGPU_REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
    bool idle = false;
    for (int i = 0; i < 1000 && !idle; ++i) {
      const std::uint32_t status = reg(SGPU_REG(STATUS));
      idle = (status & SGPU_REGS__STATUS__IDLE_bm) && !(status & SGPU_REGS__STATUS__RESETTING_bm);
      if (!idle) dev_.step(16);
    }
    tail_ = 0;
    dev_.mmio_write32(SGPU_REG(RING_TAIL), 0);
    dev_.mmio_write32(SGPU_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
    return idle;
  }

 private:
  sim::SimDevice dev_;
  std::uint32_t entries_;
  std::uint32_t tail_ = 0;
  std::uint64_t next_buffer_ = kBufferAddr;
};

}  // namespace sgpu::tb
