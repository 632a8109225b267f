// The "sim" backend. MMIO goes through SimDevice's AXI4-Lite port (the clock runs until the
// response), DMA memory is page-aligned host memory attached into the simulated host memory
// (HostPageDma, bus addresses from 4 GiB up), wait_irq() advances the simulated clock, and now()
// is simulated time (cycles / clock_hz).
#include "sim/sim_transport.hpp"

#include <cmath>
#include <exception>

#include <fmt/format.h>

#include "sgpu/transport/host_page_dma.hpp"

namespace sgpu::sim {
namespace {

class SimTransport final : public Transport {
 public:
  explicit SimTransport(std::shared_ptr<SimDevice> dev)
      : dev_(dev),
        // The DMA memory keeps the simulated device (and so its memory map) alive until the last
        // buffer is gone, whatever the destruction order.
        dma_(HostPageDma::create("sim", {[dev](std::uint64_t bus, void* cpu, std::size_t n) { dev->memory().attach(bus, cpu, n); },
                                         [dev](std::uint64_t bus, std::size_t n) { dev->memory().detach(bus, n); }})),
        clock_hz_(dev->config().clock_hz) {}

  std::uint32_t read32(std::uint32_t offset) override {
    try {
      return dev_->mmio_read32(offset);
    } catch (const SimError& e) {
      throw TransportFailure(fmt::format("sim: read of {:#x}: {}", offset, e.what()));
    }
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    try {
      dev_->mmio_write32(offset, value);
    } catch (const SimError& e) {
      throw TransportFailure(fmt::format("sim: write of {:#x} to {:#x}: {}", value, offset, e.what()));
    }
  }

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return dma_->allocate(bytes, align); }

  bool wait_irq(std::chrono::nanoseconds timeout) override {
    try {
      if (dev_->irq()) return true;
      const double cycles = std::ceil(static_cast<double>(timeout.count()) * clock_hz_ / 1e9);
      if (cycles < 1) return false;
      return dev_->run_until_irq(static_cast<std::uint64_t>(cycles));
    } catch (const SimError& e) {
      throw TransportFailure(fmt::format("sim: {}", e.what()));
    }
  }

  std::chrono::nanoseconds now() override {
    return std::chrono::nanoseconds(std::llround(static_cast<double>(dev_->cycle()) * 1e9 / clock_hz_));
  }

  std::string_view name() const override { return "sim"; }

 private:
  std::shared_ptr<SimDevice> dev_;
  std::shared_ptr<HostPageDma> dma_;
  double clock_hz_;
};

}  // namespace

std::unique_ptr<Transport> open_sim_transport_over(std::shared_ptr<SimDevice> device) {
  return std::make_unique<SimTransport>(std::move(device));
}

Result<std::unique_ptr<Transport>> open_sim_transport(const SimConfig& config) {
  if (!(config.clock_hz > 0)) return Error::invalid("sim: clock_hz {} is not positive", config.clock_hz);
  try {
    return std::unique_ptr<Transport>(std::make_unique<SimTransport>(std::make_shared<SimDevice>(config)));
  } catch (const std::exception& e) {
    return Error::make(Errc::TransportError, Touched::Nothing, "cannot start the simulated device: {}", e.what());
  }
}

}  // namespace sgpu::sim
