// The "model" backend. MMIO goes straight to the reference model's registers, DMA memory is
// page-aligned host memory attached into the model's memory image at bus addresses from 4 GiB
// up (as in the sim backend), and wait_irq() runs the model until it is idle. The model is
// untimed: time advances only when a wait gives up, by the time waited, so timeouts behave as
// on a device that never answers.
#include "transport/model/model_transport.hpp"

#include <fmt/format.h>

#include "common/host_memory.hpp"
#include "model/model.hpp"
#include "transport/bus_allocator.hpp"
#include "transport/host_pages.hpp"

namespace sgpu::detail {
namespace {

// The memory image and the model, kept alive by the transport and every DmaMemory it handed out.
struct ModelDevice {
  tb::HostMemory memory;
  model::Model model{memory};
};

class ModelDma final : public DmaBackend {
 public:
  explicit ModelDma(std::shared_ptr<ModelDevice> device) : dev(std::move(device)) {}
  void release(void* cpu, std::uint64_t bus_addr, std::size_t bytes) noexcept override {
    dev->memory.detach(bus_addr, bytes);
    bus.free(bus_addr, bytes);
    free_host_pages(cpu);
  }
  std::shared_ptr<ModelDevice> dev;
  BusAllocator bus{std::uint64_t{1} << 32, std::uint64_t{1} << 40};
};

class ModelTransport final : public Transport {
 public:
  explicit ModelTransport(std::shared_ptr<ModelDevice> dev) : dev_(dev), dma_(std::make_shared<ModelDma>(dev)) {}

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

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override {
    if (align == 0 || (align & (align - 1)) != 0)
      return Error{Errc::InvalidArgument, fmt::format("alignment {} is not a power of two", align), false};
    const std::size_t a = align < kHostPage ? kHostPage : align;
    const std::size_t size = round_up(bytes == 0 ? 1 : bytes, a);
    const auto bus = dma_->bus.allocate(size, a);
    if (!bus) return Error{Errc::OutOfMemory, "model: bus address space exhausted", false};
    void* cpu = alloc_host_pages(size, a);
    if (!cpu) {
      dma_->bus.free(*bus, size);
      return Error{Errc::OutOfMemory, fmt::format("host allocation of {} bytes failed", size), false};
    }
    dev_->memory.attach(*bus, cpu, size);
    return DmaMemory(dma_, cpu, *bus, size);
  }

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
  std::shared_ptr<ModelDma> dma_;
  std::chrono::nanoseconds now_{0};
};

}  // namespace

std::unique_ptr<Transport> make_model_transport(const TransportOptions&) {
  return std::make_unique<ModelTransport>(std::make_shared<ModelDevice>());
}

}  // namespace sgpu::detail
