#include "pcie/sim_pci_function.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

namespace sgpu::pcie {
namespace {

constexpr std::uint16_t kMsiCap = 0x50;
constexpr std::uint16_t kExpCap = 0x70;
constexpr std::uint64_t kBar0Size = 64 * 1024;
constexpr std::uint16_t kCommandWritable = cfg::kCommandMemory | cfg::kCommandBusMaster | cfg::kCommandIntxDisable;

}  // namespace

class SimPciFunction::Bar final : public BarWindow {
 public:
  explicit Bar(SimPciFunction& f) : f_(f) {}
  std::uint32_t read32(std::uint32_t offset) override {
    if (f_.removed_ || !f_.decodes_memory()) return 0xffffffffu;  // master abort / completion timeout
    try {
      return f_.dev_->mmio_read32(offset);
    } catch (const sim::SimError& e) {
      throw TransportFailure(fmt::format("pcie-sim: read of BAR0 + {:#x}: {}", offset, e.what()));
    }
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    if (f_.removed_ || !f_.decodes_memory()) return;
    try {
      f_.dev_->mmio_write32(offset, value);
    } catch (const sim::SimError& e) {
      throw TransportFailure(fmt::format("pcie-sim: write of {:#x} to BAR0 + {:#x}: {}", value, offset, e.what()));
    }
    f_.armed_ = true;  // the driver may have acknowledged: a level still high is a new message
  }
  std::uint64_t size() const override { return kBar0Size; }

 private:
  SimPciFunction& f_;
};

SimPciFunction::SimPciFunction(SimPciConfig config)
    : cfg_(std::move(config)), dev_(std::make_shared<sim::SimDevice>(cfg_.sim)), next_physical_(cfg_.physical_base) {
  put(cfg::kVendorId, 2, cfg_.id.vendor);
  put(cfg::kDeviceId, 2, cfg_.id.device);
  put(cfg::kStatus, 2, cfg::kStatusCapabilities);
  put(cfg::kRevision, 4, abi::pci::kClassCode << 8);  // class code above revision 0
  put(cfg::kBar0, 4, 0x4);                            // 64-bit memory BAR
  put(cfg::kSubsystemVendorId, 2, cfg_.id.vendor);
  put(cfg::kSubsystemId, 2, 0x0007);
  put(cfg::kCapabilityPointer, 1, kMsiCap);
  put(kMsiCap, 1, cfg::kCapMsi);
  put(kMsiCap + 1, 1, kExpCap);
  put(kMsiCap + 2, 2, 1u << 7);  // 64-bit address capable, one vector
  put(kExpCap, 1, cfg::kCapExpress);
  put(kExpCap + 2, 2, 0x0002);  // version 2, endpoint
  put(kExpCap + cfg::kExpLinkCapabilities, 4, cfg_.link.max_speed_gen | (cfg_.link.max_width << 4));
  put(kExpCap + cfg::kExpLinkStatus, 2, cfg_.link.speed_gen | (cfg_.link.width << 4));
}

SimPciFunction::~SimPciFunction() {
  for (const auto& [bus, bytes] : mapped_) dev_->memory().detach(bus, bytes);
}

std::uint32_t SimPciFunction::get(std::uint16_t offset, unsigned width) const {
  std::uint32_t v = 0;
  std::memcpy(&v, &config_[offset], width);
  return v;
}

void SimPciFunction::put(std::uint16_t offset, unsigned width, std::uint32_t value) {
  std::memcpy(&config_[offset], &value, width);
}

std::uint32_t SimPciFunction::config_read(std::uint16_t offset, unsigned width) {
  if (removed_ || (width != 1 && width != 2 && width != 4) || offset + width > config_.size()) return 0xffffffffu;
  return get(offset, width);
}

void SimPciFunction::config_write(std::uint16_t offset, unsigned width, std::uint32_t value) {
  if (removed_) return;
  if (offset == cfg::kCommand && width >= 2) {
    std::uint32_t v = value & kCommandWritable;
    if (cfg_.bus_master_stuck_off) v &= ~std::uint32_t{cfg::kCommandBusMaster};
    put(cfg::kCommand, 2, v);
  } else if (offset == kMsiCap + 2 && width == 2) {
    put(offset, 2, (get(offset, 2) & ~1u) | (value & 1u));  // MSI enable
  }
}

bool SimPciFunction::decodes_memory() const { return (get(cfg::kCommand, 2) & cfg::kCommandMemory) != 0; }
bool SimPciFunction::bus_master() const { return (get(cfg::kCommand, 2) & cfg::kCommandBusMaster) != 0; }
bool SimPciFunction::msi_enabled() const { return (get(kMsiCap + 2, 2) & 1u) != 0; }

Result<BarWindow*> SimPciFunction::map_bar(unsigned index) {
  if (index != 0)
    return Error::make(Errc::TransportError, Touched::Nothing, "sim: the simulated card has no BAR{}", index);
  if (!bar0_) bar0_ = std::make_unique<Bar>(*this);
  return bar0_.get();
}

std::vector<IovaRange> SimPciFunction::iova_ranges() const {
  return cfg_.addressing == DmaAddressing::Translated ? cfg_.iova_ranges : std::vector<IovaRange>{};
}

std::uint64_t SimPciFunction::iova_page_sizes() const {
  return cfg_.addressing == DmaAddressing::Translated ? cfg_.iova_page_sizes : 4096;
}

Result<HostBlock> SimPciFunction::alloc_host(std::size_t bytes) {
  const std::size_t page = smallest_page(iova_page_sizes());
  if (bytes == 0 || bytes % page != 0)
    return Error::invalid("sim: host memory of {:#x} bytes is not a multiple of the {:#x}-byte IOMMU page", bytes,
                          page);
  void* p = std::aligned_alloc(page, bytes);
  if (!p) return Error::make(Errc::OutOfMemory, Touched::Nothing, "sim: host allocation of {} bytes failed", bytes);
  std::memset(p, 0, bytes);
  HostBlock b{p, bytes, std::nullopt};
  if (cfg_.addressing == DmaAddressing::Physical) {
    // Like a hugepage: aligned to 2 MiB, contiguous; the device reaches it untranslated.
    constexpr std::uint64_t kHuge = std::uint64_t{2} << 20;
    b.bus_addr = next_physical_;
    next_physical_ += (bytes + kHuge - 1) / kHuge * kHuge;
    dev_->memory().attach(*b.bus_addr, p, bytes);
    mapped_[*b.bus_addr] = bytes;
  }
  return b;
}

void SimPciFunction::free_host(const HostBlock& b) noexcept {
  if (b.bus_addr) {
    dev_->memory().detach(*b.bus_addr, b.bytes);
    mapped_.erase(*b.bus_addr);
  }
  std::free(b.cpu);
}

Status SimPciFunction::map_dma(void* cpu, std::uint64_t iova, std::size_t bytes) {
  if (cfg_.addressing != DmaAddressing::Translated) return Error::unsupported("sim: no IOMMU in this configuration");
  // As VFIO_IOMMU_MAP_DMA: EINVAL unless address, size and host address are on the smallest page.
  const std::size_t page = smallest_page(iova_page_sizes());
  if (iova % page != 0 || bytes == 0 || bytes % page != 0 || reinterpret_cast<std::uintptr_t>(cpu) % page != 0)
    return Error::invalid("sim IOMMU: mapping [{:#x}, +{:#x}) from host {} is not on its {:#x}-byte page", iova, bytes,
                          fmt::ptr(cpu), page);
  for (const IovaRange& r : cfg_.iova_ranges)
    if (iova >= r.first && iova + bytes - 1 <= r.last) {
      dev_->memory().attach(iova, cpu, bytes);
      mapped_[iova] = bytes;
      return ok_status();
    }
  return Error::make(Errc::TransportError, Touched::Nothing, "sim IOMMU: IOVA [{:#x}, +{:#x}) is outside its ranges",
                     iova, bytes);
}

void SimPciFunction::unmap_dma(std::uint64_t iova, std::size_t bytes) noexcept {
  if (mapped_.erase(iova)) dev_->memory().detach(iova, bytes);
}

Status SimPciFunction::enable_interrupts() {
  if (cfg_.delivery == InterruptDelivery::Polling) return ok_status();
  if (cfg_.delivery == InterruptDelivery::Msix) return Error::unsupported("sim: the simulated card has MSI, not MSI-X");
  config_write(kMsiCap + 2, 2, 1);
  return ok_status();
}

Result<bool> SimPciFunction::wait_interrupt(std::chrono::nanoseconds timeout) {
  const double clock_hz = dev_->config().clock_hz;
  const auto budget = static_cast<std::uint64_t>(
      std::ceil(static_cast<double>(std::max<std::int64_t>(timeout.count(), 0)) * clock_hz / 1e9));
  const bool can_signal = !removed_ && cfg_.delivery != InterruptDelivery::Polling && msi_enabled() && bus_master();
  try {
    if (!can_signal) {
      if (budget) dev_->step(budget);
      return false;
    }
    const std::uint64_t end = dev_->cycle() + budget;
    for (;;) {
      if (!dev_->irq()) {
        armed_ = true;
        const std::uint64_t left = end > dev_->cycle() ? end - dev_->cycle() : 0;
        if (left == 0 || !dev_->run_until_irq(left)) return false;
      }
      if (armed_) {
        armed_ = false;
        ++messages_;
        return true;
      }
      // High, but its message was delivered already: wait for it to fall (the next edge).
      if (dev_->cycle() >= end) return false;
      dev_->step(std::min<std::uint64_t>(16, end - dev_->cycle()));
    }
  } catch (const sim::SimError& e) {
    return Error::make(Errc::TransportError, Touched::Nothing, "pcie-sim: {}", e.what());
  }
}

std::chrono::nanoseconds SimPciFunction::now() {
  return std::chrono::nanoseconds(std::llround(static_cast<double>(dev_->cycle()) * 1e9 / dev_->config().clock_hz));
}

}  // namespace sgpu::pcie
