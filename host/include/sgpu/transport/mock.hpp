// MockTransport: a Transport for unit tests of everything above the seam (the idea of
// OpenTitan's mock_mmio). Register reads return scripted values, every access is logged so a test
// can assert the exact MMIO sequence, DMA memory is plain host memory at fake bus addresses
// (above 4 GiB), and the interrupt line and time are under the test's control.
//
//   auto mock = std::make_unique<sgpu::MockTransport>();
//   mock->load_reset_values();              // a healthy, idle device
//   mock->set_reg(SGPU_REG(ID_MAGIC), 0);   // ...or not
//   auto* m = mock.get();
//   auto dev = sgpu::Device::open(std::move(mock));
//   CHECK(m->writes() == expected);
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "sgpu/transport.hpp"
#include "sgpu/transport/host_page_dma.hpp"

namespace sgpu {

class MockTransport final : public Transport {
 public:
  struct Access {
    enum class Kind { Read, Write };
    Kind kind;
    std::uint32_t offset;
    std::uint32_t value;  ///< value read or written
    bool operator==(const Access& o) const {
      return kind == o.kind && offset == o.offset && value == o.value;
    }
    bool operator!=(const Access& o) const { return !(*this == o); }
  };
  static Access read(std::uint32_t offset, std::uint32_t value) { return {Access::Kind::Read, offset, value}; }
  static Access write(std::uint32_t offset, std::uint32_t value) { return {Access::Kind::Write, offset, value}; }

  MockTransport();
  ~MockTransport() override;

  // ---- registers
  /// The value every read of `offset` returns (default 0) once queued values are used up.
  void set_reg(std::uint32_t offset, std::uint32_t value);
  /// A one-shot value for the next read of `offset` (first in, first out).
  void queue_read(std::uint32_t offset, std::uint32_t value);
  /// Sets every field that has a reset value in the register map, plus what a healthy idle
  /// device reports: STATUS.idle, 8-byte bus, 48-bit addresses, 4 KiB pages, rings up to 2^10.
  void load_reset_values();
  /// Called after every write is logged (e.g. to emulate the device's reaction).
  std::function<void(std::uint32_t offset, std::uint32_t value)> on_write;

  // ---- log
  const std::vector<Access>& log() const { return log_; }
  std::vector<Access> writes() const;
  void clear_log() { log_.clear(); }

  // ---- interrupt and time
  /// Level of the interrupt line.
  void set_irq(bool level) { irq_ = level; }
  /// If set, wait_irq() calls it instead of the default (return the line; if low, let the
  /// whole timeout pass).
  std::function<bool(std::chrono::nanoseconds timeout)> on_wait_irq;
  /// Mock time advances by this much on every register access (default 100 ns).
  void set_access_time(std::chrono::nanoseconds t) { access_time_ = t; }
  void advance(std::chrono::nanoseconds t) { now_ += t; }

  // ---- DMA memory
  /// CPU pointer of the DMA byte at `bus_addr`, or nullptr if no live allocation covers it.
  void* dma_cpu(std::uint64_t bus_addr) const;
  /// Live DMA allocations.
  std::size_t dma_allocations() const;
  /// Makes the next alloc_dma() fail with OutOfMemory.
  void fail_next_alloc() { fail_next_alloc_ = true; }

  // ---- Transport
  std::uint32_t read32(std::uint32_t offset) override;
  void write32(std::uint32_t offset, std::uint32_t value) override;
  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align = 4096) override;
  bool wait_irq(std::chrono::nanoseconds timeout) override;
  std::chrono::nanoseconds now() override { return now_; }
  std::string_view name() const override { return "mock"; }

 private:
  std::map<std::uint32_t, std::uint32_t> regs_;
  std::map<std::uint32_t, std::deque<std::uint32_t>> queued_;
  std::vector<Access> log_;
  bool irq_ = false;
  std::chrono::nanoseconds now_{0};
  std::chrono::nanoseconds access_time_{100};
  bool fail_next_alloc_ = false;
  std::shared_ptr<HostPageDma> dma_;
};

}  // namespace sgpu
