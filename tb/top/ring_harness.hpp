// Drives sgpu_top through raw MMIO and host memory, the way a driver would but without the host
// library: tests of the RTL must not depend on the code they are meant to check.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

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

/// Packet stream builder over the generated ABI.
class Packets {
 public:
  Packets& nop(std::uint32_t dwords = 1) {
    words_.push_back(abi::make_header(abi::Opcode::Nop, dwords));
    for (std::uint32_t i = 1; i < dwords; ++i) words_.push_back(0xdead0000u + i);
    return *this;
  }
  Packets& write_data(std::uint64_t addr, const std::vector<std::uint32_t>& data) {
    words_.push_back(abi::make_header(abi::Opcode::WriteData, static_cast<std::uint32_t>(3 + data.size())));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.insert(words_.end(), data.begin(), data.end());
    return *this;
  }
  Packets& fence(std::uint64_t addr, std::uint64_t value, std::uint8_t flags) {
    words_.push_back(abi::make_header(abi::Opcode::Fence, 5, flags));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.push_back(static_cast<std::uint32_t>(value));
    words_.push_back(static_cast<std::uint32_t>(value >> 32));
    return *this;
  }
  Packets& tlb_invalidate(std::uint32_t first_page, std::uint32_t count, bool all = false) {
    words_.push_back(abi::make_header(abi::Opcode::TlbInvalidate, 3, all ? abi::tlb_invalidate_flags::kAll : 0));
    words_.push_back(first_page);
    words_.push_back(count);
    return *this;
  }
  /// MAP of bus.size() pages from first_page (dwords = 4 + 2 * pages).
  Packets& map(std::uint32_t first_page, std::uint32_t pte_flags, const std::vector<std::uint64_t>& bus) {
    const auto count = static_cast<std::uint32_t>(bus.size());
    words_.push_back(abi::make_header(abi::Opcode::Map, 4 + 2 * count));
    words_.push_back(first_page);
    words_.push_back(count);
    words_.push_back(pte_flags);
    for (const std::uint64_t b : bus) {
      words_.push_back(static_cast<std::uint32_t>(b));
      words_.push_back(static_cast<std::uint32_t>(b >> 32));
    }
    return *this;
  }
  Packets& write_physical(std::uint64_t addr, const std::vector<std::uint32_t>& data) {
    words_.push_back(abi::make_header(abi::Opcode::WritePhysical, 3 + static_cast<std::uint32_t>(data.size())));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.insert(words_.end(), data.begin(), data.end());
    return *this;
  }
  Packets& read_physical(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
    words_.push_back(abi::make_header(abi::Opcode::ReadPhysical, 6));
    words_.push_back(static_cast<std::uint32_t>(src));
    words_.push_back(static_cast<std::uint32_t>(src >> 32));
    words_.push_back(static_cast<std::uint32_t>(dst));
    words_.push_back(static_cast<std::uint32_t>(dst >> 32));
    words_.push_back(bytes);
    return *this;
  }
  Packets& unmap(std::uint32_t first_page, std::uint32_t count, std::uint64_t dummy_pte) {
    words_.push_back(abi::make_header(abi::Opcode::Unmap, 5));
    words_.push_back(first_page);
    words_.push_back(count);
    words_.push_back(static_cast<std::uint32_t>(dummy_pte));
    words_.push_back(static_cast<std::uint32_t>(dummy_pte >> 32));
    return *this;
  }
  Packets& copy(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
    words_.push_back(abi::make_header(abi::Opcode::Copy, 6));
    words_.push_back(static_cast<std::uint32_t>(src));
    words_.push_back(static_cast<std::uint32_t>(src >> 32));
    words_.push_back(static_cast<std::uint32_t>(dst));
    words_.push_back(static_cast<std::uint32_t>(dst >> 32));
    words_.push_back(bytes);
    return *this;
  }
  Packets& fill(std::uint64_t dst, std::uint32_t bytes, std::uint32_t pattern) {
    words_.push_back(abi::make_header(abi::Opcode::Fill, 5));
    words_.push_back(static_cast<std::uint32_t>(dst));
    words_.push_back(static_cast<std::uint32_t>(dst >> 32));
    words_.push_back(bytes);
    words_.push_back(pattern);
    return *this;
  }
  Packets& blit_rect(std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                     std::uint32_t src_pitch, std::uint32_t dst_pitch) {
    words_.push_back(abi::make_header(abi::Opcode::BlitRect, 9));
    for (std::uint32_t w : {static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(src >> 32),
                            static_cast<std::uint32_t>(dst), static_cast<std::uint32_t>(dst >> 32), width, height,
                            src_pitch, dst_pitch})
      words_.push_back(w);
    return *this;
  }
  Packets& fill_rect(std::uint64_t dst, std::uint32_t width, std::uint32_t height, std::uint32_t dst_pitch,
                     std::uint32_t pattern) {
    words_.push_back(abi::make_header(abi::Opcode::FillRect, 7));
    for (std::uint32_t w : {static_cast<std::uint32_t>(dst), static_cast<std::uint32_t>(dst >> 32), width, height,
                            dst_pitch, pattern})
      words_.push_back(w);
    return *this;
  }
  Packets& wait_mem(std::uint64_t addr, abi::WaitMemFunc func, std::uint32_t ref, std::uint32_t mask,
                         std::uint32_t interval = 0) {
    words_.push_back(abi::make_header(abi::Opcode::WaitMem, 6,
                                      static_cast<std::uint8_t>(static_cast<unsigned>(func) << abi::wait_mem_flags::kFuncLsb)));
    for (std::uint32_t w : {static_cast<std::uint32_t>(addr), static_cast<std::uint32_t>(addr >> 32), ref, mask, interval})
      words_.push_back(w);
    return *this;
  }
  Packets& indirect(std::uint64_t addr, std::uint32_t bytes) {
    words_.push_back(abi::make_header(abi::Opcode::Indirect, 4));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.push_back(bytes);
    return *this;
  }
  Packets& timestamp(std::uint64_t addr) {
    words_.push_back(abi::make_header(abi::Opcode::Timestamp, 3));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    return *this;
  }
  Packets& append(const Packets& other) {
    words_.insert(words_.end(), other.words_.begin(), other.words_.end());
    return *this;
  }
  Packets& raw(std::uint32_t word) {
    words_.push_back(word);
    return *this;
  }
  const std::vector<std::uint32_t>& words() const { return words_; }
  std::uint32_t bytes() const { return static_cast<std::uint32_t>(words_.size() * 4); }

 private:
  std::vector<std::uint32_t> words_;
};

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
  /// The record is two 64-bit writes, the fence first: once the fence shows, a few more cycles
  /// let the head (the second write) land too.
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
