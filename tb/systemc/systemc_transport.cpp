#include "systemc/systemc_transport.hpp"

#include <cmath>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

#include "sgpu/transport/host_page_dma.hpp"

namespace sgpu::systemc {
namespace {

class SystemcTransport final : public Transport {
 public:
  explicit SystemcTransport(std::shared_ptr<Platform> p)
      : p_(p),
        name_(p->config().implementation == PlatformConfig::Implementation::Rtl ? "systemc" : "systemc-model"),
        // The DMA memory keeps the platform (and its memory target) alive until the last buffer.
        dma_(HostPageDma::create(name_, {[p](std::uint64_t bus, void* cpu, std::size_t n) { p->memory().attach(bus, cpu, n); },
                                         [p](std::uint64_t bus, std::size_t n) { p->memory().detach(bus, n); }})) {}

  // The accesses report their status and the failure is thrown here, outside the SystemC
  // thread (HostCpu::transact32 says why).
  std::uint32_t read32(std::uint32_t offset) override {
    std::uint32_t v = 0;
    const auto s = run([&] { return p_->cpu().transact32(tlm::TLM_READ_COMMAND, kBar0Base + offset, v); });
    if (s != tlm::TLM_OK_RESPONSE)
      throw TransportFailure(fmt::format("{}: read of {:#x}: {}{}", name_, offset, response_string(s), why()));
    return v;
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    const auto s = run([&] { return p_->cpu().transact32(tlm::TLM_WRITE_COMMAND, kBar0Base + offset, value); });
    if (s != tlm::TLM_OK_RESPONSE)
      throw TransportFailure(
          fmt::format("{}: write of {:#x} to {:#x}: {}{}", name_, value, offset, response_string(s), why()));
  }

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return dma_->allocate(bytes, align); }

  bool wait_irq(std::chrono::nanoseconds timeout) override {
    try {
      const sc_core::sc_time t(static_cast<double>(timeout.count()), sc_core::SC_NS);
      return p_->cpu().run([&] { return p_->cpu().wait_irq(t); });
    } catch (const HostAccessError& e) {
      throw TransportFailure(fmt::format("{}: {}{}", name_, e.what(), why()));
    }
  }

  std::chrono::nanoseconds now() override {
    return std::chrono::nanoseconds(std::llround(p_->cpu().now().to_seconds() * 1e9));
  }

  std::string_view name() const override { return name_; }

 private:
  template <class F>
  auto run(F&& op) -> decltype(op()) {
    try {
      return p_->cpu().run(std::forward<F>(op));
    } catch (const HostAccessError& e) {
      throw TransportFailure(fmt::format("{}: {}{}", name_, e.what(), why()));
    }
  }

  // The device's own account of a failure (AXI violation, hung register slave), if any.
  std::string why() const {
    const std::string& f = p_->device().failure();
    return f.empty() ? std::string() : " (device: " + f + ")";
  }

  std::shared_ptr<Platform> p_;
  std::string name_;
  std::shared_ptr<HostPageDma> dma_;
};

}  // namespace

Result<std::unique_ptr<Transport>> open_systemc_transport(const PlatformConfig& config) {
  const char* name = config.implementation == PlatformConfig::Implementation::Rtl ? "systemc" : "systemc-model";
  if (!(config.device.clock_hz > 0)) return Error::invalid("{}: clock_hz {} is not positive", name, config.device.clock_hz);
  if (config.quantum_cycles == 0) return Error::invalid("{}: quantum_cycles must be at least 1", name);
  try {
    Platform::check_can_build();
  } catch (const PlatformError& e) {
    return Error::make(Errc::Unsupported, Touched::Nothing, "{}: {}", name, e.what());
  }
  // SystemC greets on stdout when its kernel starts; a driver backend keeps quiet unless asked.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);
  try {
    auto platform = std::make_shared<Platform>("sgpu_platform", config);
    return make_platform_transport(std::move(platform));
  } catch (const std::invalid_argument& e) {
    return Error::invalid("{}: {}", name, e.what());
  } catch (const std::exception& e) {
    return Error::make(Errc::TransportError, Touched::Nothing, "cannot start the {} platform: {}", name, e.what());
  }
}

std::unique_ptr<Transport> make_platform_transport(std::shared_ptr<Platform> platform) {
  return std::make_unique<SystemcTransport>(std::move(platform));
}

}  // namespace sgpu::systemc
