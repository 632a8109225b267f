// The "model" backend. MMIO goes straight to the reference model's registers, DMA memory is
// page-aligned host memory attached into the model's memory image (HostPageDma, bus addresses
// from 4 GiB up as in the sim backend), and wait_irq() runs the model until it is idle. The
// model is untimed: time advances only when a wait gives up, by the time waited, so timeouts
// behave as on a device that never answers.
#include "model/model_transport.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "common/host_memory.hpp"
#include "sgpu/transport/host_page_dma.hpp"

namespace sgpu::model {
namespace {

// The memory image and the model, kept alive by the transport and every DmaMemory it handed out.
struct ModelDevice {
  explicit ModelDevice(const Config& config) : model(memory, config) {}
  tb::HostMemory memory;
  Model model;
};

class ModelTransport final : public Transport {
 public:
  explicit ModelTransport(std::shared_ptr<ModelDevice> dev)
      : dev_(dev),
        dma_(HostPageDma::create("model", {[dev](std::uint64_t bus, void* cpu, std::size_t n) { dev->memory.attach(bus, cpu, n); },
                                           [dev](std::uint64_t bus, std::size_t n) { dev->memory.detach(bus, n); }})) {}

  std::uint32_t read32(std::uint32_t offset) override {
    try {
      return dev_->model.mmio_read32(offset);
    } catch (const std::out_of_range& e) {
      throw TransportFailure(fmt::format("model: {}", e.what()));
    }
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    try {
      dev_->model.mmio_write32(offset, value);
    } catch (const std::out_of_range& e) {
      throw TransportFailure(fmt::format("model: {}", e.what()));
    }
  }

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return dma_->allocate(bytes, align); }

  bool wait_irq(std::chrono::nanoseconds timeout) override {
    dev_->model.run_until_idle();
    if (dev_->model.irq()) return true;
    now_ += timeout;
    return false;
  }

  std::chrono::nanoseconds now() override { return now_; }

  std::string_view name() const override { return "model"; }

 private:
  std::shared_ptr<ModelDevice> dev_;
  std::shared_ptr<HostPageDma> dma_;
  std::chrono::nanoseconds now_{0};
};

}  // namespace

Result<std::unique_ptr<Transport>> open_model_transport(const Config& config) {
  return std::unique_ptr<Transport>(std::make_unique<ModelTransport>(std::make_shared<ModelDevice>(config)));
}

}  // namespace sgpu::model
