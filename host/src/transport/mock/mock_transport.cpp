#include "sgpu/transport/mock.hpp"

#include <fmt/format.h>

#include "sgpu/regs.hpp"

namespace sgpu {

MockTransport::MockTransport() : dma_(HostPageDma::create("mock")) {}
MockTransport::~MockTransport() = default;

void MockTransport::set_reg(std::uint32_t offset, std::uint32_t value) { regs_[offset] = value; }

void MockTransport::queue_read(std::uint32_t offset, std::uint32_t value) {
  queued_[offset].push_back(value);
}

void MockTransport::load_reset_values() {
  for (const auto& f : regs::all_fields())
    if (f.reset) regs_[f.offset] = f.bits.set(regs_[f.offset], *f.reset);
  auto set = [&](std::uint32_t off, regs::Field field, std::uint32_t v) {
    regs_[off] = field.set(regs_[off], v);
  };
  set(SGPU_REG(STATUS), SGPU_FIELD(STATUS, IDLE), 1);
  set(SGPU_REG(CAP_BUS), SGPU_FIELD(CAP_BUS, DATA_BYTES), 8);
  set(SGPU_REG(CAP_BUS), SGPU_FIELD(CAP_BUS, ADDR_BITS), 48);
  set(SGPU_REG(CAP_BUS), SGPU_FIELD(CAP_BUS, MAX_BURST_M1), 15);
  set(SGPU_REG(CAP_BUS), SGPU_FIELD(CAP_BUS, OUTSTANDING_READS), 4);
  set(SGPU_REG(CAP_MEM), SGPU_FIELD(CAP_MEM, PAGE_SHIFT), 12);
  set(SGPU_REG(CAP_MEM), SGPU_FIELD(CAP_MEM, MAX_RING_LOG2), 10);
}

std::vector<MockTransport::Access> MockTransport::writes() const {
  std::vector<Access> w;
  for (const auto& a : log_)
    if (a.kind == Access::Kind::Write) w.push_back(a);
  return w;
}

std::uint32_t MockTransport::read32(std::uint32_t offset) {
  now_ += access_time_;
  std::uint32_t v = 0;
  if (auto q = queued_.find(offset); q != queued_.end() && !q->second.empty()) {
    v = q->second.front();
    q->second.pop_front();
  } else if (auto r = regs_.find(offset); r != regs_.end()) {
    v = r->second;
  }
  log_.push_back(read(offset, v));
  return v;
}

void MockTransport::write32(std::uint32_t offset, std::uint32_t value) {
  now_ += access_time_;
  log_.push_back(write(offset, value));
  if (on_write) on_write(offset, value);
}

Result<DmaMemory> MockTransport::alloc_dma(std::size_t bytes, std::size_t align) {
  if (fail_next_alloc_) {
    fail_next_alloc_ = false;
    return Error::make(Errc::OutOfMemory, Touched::Nothing, "mock: refused a {}-byte DMA allocation", bytes);
  }
  return dma_->allocate(bytes, align);
}

bool MockTransport::wait_irq(std::chrono::nanoseconds timeout) {
  if (on_wait_irq) return on_wait_irq(timeout);
  if (!irq_) now_ += timeout;
  return irq_;
}

void* MockTransport::dma_cpu(std::uint64_t bus_addr) const { return dma_->cpu_at(bus_addr); }

std::size_t MockTransport::dma_allocations() const { return dma_->live(); }

}  // namespace sgpu
