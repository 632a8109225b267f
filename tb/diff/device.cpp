#include "diff/device.hpp"

#include <cstddef>

#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::diff {

RtlDevice::RtlDevice(sim::SimConfig config, std::uint64_t wb_addr, std::uint64_t max_settle_cycles)
    : dev_(std::move(config)), wb_addr_(wb_addr), max_settle_cycles_(max_settle_cycles) {}

// Retirements are tens of cycles apart (each needs a ring-entry fetch), so sampling the record
// after every cycle and every MMIO access sees each of them. The generator never reuses a fence.
void RtlDevice::watch_writeback() {
  const std::uint64_t fence = dev_.memory().read64(wb_addr_);
  if (fence != last_wb_fence_) {
    last_wb_fence_ = fence;
    retired_.push_back(fence);
  }
}

std::uint32_t RtlDevice::mmio_read32(std::uint32_t offset) {
  const std::uint32_t v = dev_.mmio_read32(offset);
  watch_writeback();
  return v;
}

void RtlDevice::mmio_write32(std::uint32_t offset, std::uint32_t value) {
  dev_.mmio_write32(offset, value);
  watch_writeback();
}

void RtlDevice::settle() {
  constexpr auto kStatus = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, STATUS));
  constexpr auto kHead = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, RING_HEAD));
  constexpr auto kTail = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, RING_TAIL));
  constexpr auto kSize = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, RING_SIZE));
  constexpr auto kCtrl = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, CTRL));
  constexpr std::uint64_t kPollCycles = 32;
  const std::uint32_t mask = (1u << dev_.mmio_read32(kSize)) - 1;
  const std::uint32_t tail = dev_.mmio_read32(kTail) & mask;
  const bool enabled = (dev_.mmio_read32(kCtrl) & SGPU_REGS__CTRL__ENABLE_bm) != 0;
  for (std::uint64_t n = 0; n < max_settle_cycles_; n += kPollCycles) {
    for (std::uint64_t i = 0; i < kPollCycles; ++i) {
      dev_.step(1);
      watch_writeback();
    }
    const std::uint32_t status = mmio_read32(kStatus);
    if (!(status & SGPU_REGS__STATUS__IDLE_bm) || (status & SGPU_REGS__STATUS__RESETTING_bm)) continue;
    if ((status & SGPU_REGS__STATUS__FAULTED_bm) || !enabled) return;
    if ((mmio_read32(kHead) & mask) == tail) return;
  }
  throw sim::SimError("RTL did not settle within " + std::to_string(max_settle_cycles_) + " cycles");
}

}  // namespace sgpu::diff
