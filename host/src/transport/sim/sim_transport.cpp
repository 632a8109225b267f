// The "sim" backend. MMIO goes through SimDevice's AXI4-Lite port (the clock runs until the
// response), DMA memory is page-aligned host memory attached into the simulated host memory at
// bus addresses from 4 GiB up (so 64-bit addressing is always exercised), wait_irq() advances
// the simulated clock, and now() is simulated time (cycles / clock_hz).
#include "transport/sim/sim_transport.hpp"

#include <cmath>

#include <fmt/format.h>

#include "sim/sim_device.hpp"
#include "transport/bus_allocator.hpp"
#include "transport/host_pages.hpp"

namespace sgpu::detail {
namespace {

// Shared by the transport and every DmaMemory it handed out: keeps the simulated device (and so
// its memory map) alive until the last buffer is gone, whatever the destruction order.
class SimDma final : public DmaBackend {
 public:
  explicit SimDma(std::shared_ptr<sim::SimDevice> device) : dev(std::move(device)) {}
  void release(void* cpu, std::uint64_t bus_addr, std::size_t bytes) noexcept override {
    dev->memory().detach(bus_addr, bytes);
    bus.free(bus_addr, bytes);
    free_host_pages(cpu);
  }
  std::shared_ptr<sim::SimDevice> dev;
  BusAllocator bus{std::uint64_t{1} << 32, std::uint64_t{1} << 40};
};

class SimTransport final : public Transport {
 public:
  explicit SimTransport(std::shared_ptr<sim::SimDevice> dev)
      : dev_(dev), dma_(std::make_shared<SimDma>(dev)), clock_hz_(dev->config().clock_hz) {}

  std::uint32_t read32(std::uint32_t offset) override {
    try {
      return dev_->mmio_read32(offset);
    } catch (const sim::SimError& e) {
      throw TransportFailure(fmt::format("sim: read of {:#x}: {}", offset, e.what()));
    }
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    try {
      dev_->mmio_write32(offset, value);
    } catch (const sim::SimError& e) {
      throw TransportFailure(fmt::format("sim: write of {:#x} to {:#x}: {}", value, offset, e.what()));
    }
  }

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override {
    if (align == 0 || (align & (align - 1)) != 0)
      return Error{Errc::InvalidArgument, fmt::format("alignment {} is not a power of two", align), false};
    const std::size_t a = align < kHostPage ? kHostPage : align;
    const std::size_t size = round_up(bytes == 0 ? 1 : bytes, a);
    const auto bus = dma_->bus.allocate(size, a);
    if (!bus) return Error{Errc::OutOfMemory, "sim: bus address space exhausted", false};
    void* cpu = alloc_host_pages(size, a);
    if (!cpu) {
      dma_->bus.free(*bus, size);
      return Error{Errc::OutOfMemory, fmt::format("host allocation of {} bytes failed", size), false};
    }
    dev_->memory().attach(*bus, cpu, size);
    return DmaMemory(dma_, cpu, *bus, size);
  }

  bool wait_irq(std::chrono::nanoseconds timeout) override {
    try {
      if (dev_->irq()) return true;
      const double cycles = std::ceil(static_cast<double>(timeout.count()) * clock_hz_ / 1e9);
      if (cycles < 1) return false;
      return dev_->run_until_irq(static_cast<std::uint64_t>(cycles));
    } catch (const sim::SimError& e) {
      throw TransportFailure(fmt::format("sim: {}", e.what()));
    }
  }

  std::chrono::nanoseconds now() override {
    return std::chrono::nanoseconds(
        std::llround(static_cast<double>(dev_->cycle()) * 1e9 / clock_hz_));
  }

  std::string_view name() const override { return "sim"; }

 private:
  std::shared_ptr<sim::SimDevice> dev_;
  std::shared_ptr<SimDma> dma_;
  double clock_hz_;
};

}  // namespace

std::unique_ptr<Transport> make_sim_transport(const TransportOptions& o) {
  sim::SimConfig c;
  c.read_latency = o.read_latency;
  c.write_latency = o.write_latency;
  c.memory_ready_prob = o.memory_ready_prob;
  c.seed = o.seed;
  c.clock_hz = o.clock_hz;
  c.fst_path = o.fst_path;
  c.check_axi = o.check_axi;
  return std::make_unique<SimTransport>(std::make_shared<sim::SimDevice>(c));
}

}  // namespace sgpu::detail
