// The `pcie` transport above the seam: the same code over VFIO, sysfs (no IOMMU) and the
// simulated function.
//
// Register reads are the slow direction on PCIe (a read is a round trip; about 1 µs), so nothing
// on the submit path reads a register: fences come from the write-back record in host memory, and
// the interrupt status is read only when an interrupt arrived (or, when polling, every
// status_check_interval). A read that returns all-ones is checked against configuration space:
// if the vendor ID reads all-ones too the device is gone, and TransportFailure says so instead of
// letting the driver wait on a dead card.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "sgpu/regs.hpp"
#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/config_space.hpp"
#include "transport/pcie/discovery.hpp"
#include "transport/pcie/dma_pool.hpp"
#include "transport/pcie/messages.hpp"

namespace sgpu::pcie {
namespace {

detail::ConfigReader reader(PciFunction& fn) {
  return [&fn](std::uint16_t off, unsigned width) { return fn.config_read(off, width); };
}

class PcieTransport final : public Transport {
 public:
  PcieTransport(std::shared_ptr<PciFunction> fn, BarWindow* bar0, std::shared_ptr<detail::DmaPool> pool,
                const PcieTransportOptions& options, std::string name)
      : fn_(std::move(fn)),
        bar0_(bar0),
        pool_(std::move(pool)),
        polling_(fn_->interrupt_delivery() == InterruptDelivery::Polling),
        poll_interval_(options.poll_interval),
        status_interval_(options.status_check_interval),
        liveness_interval_(options.liveness_interval > std::chrono::nanoseconds{0} ? options.liveness_interval
                                                                                   : std::chrono::milliseconds(100)),
        address_(fn_->address()),
        name_(std::move(name)) {
    last_status_check_ = fn_->now();
  }

  std::uint32_t read32(std::uint32_t offset) override {
    check_offset(offset, "read");
    const std::uint32_t v = bar0_->read32(offset);
    if (v == 0xffffffffu && gone())
      throw TransportFailure(detail::device_lost(address_, fmt::format("reading BAR0 + {:#x}", offset)));
    return v;
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    check_offset(offset, "write");
    bar0_->write32(offset, value);
  }

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override {
    return pool_->allocate(pool_, bytes, align);
  }

  bool wait_irq(std::chrono::nanoseconds timeout) override {
    if (polling_) {
      // No interrupt: let a little time pass (the driver reads fences from host memory), and
      // now and then report the line high so the driver's ISR reads the interrupt status and
      // sees faults and preemptions.
      auto r = fn_->wait_interrupt(std::min(timeout, poll_interval_));
      if (!r) throw TransportFailure(r.error().message);
      const auto now = fn_->now();
      if (now - last_status_check_ < status_interval_) return false;
      last_status_check_ = now;
      if (gone()) throw TransportFailure(detail::device_lost(address_, "polling for fences"));
      return true;
    }
    // In slices: a card that vanished without notice (link down, FPGA reloaded) sends nothing,
    // so between slices one configuration read checks that it is still there.
    const auto end = fn_->now() + timeout;
    for (;;) {
      const auto slice = std::max(std::min(end - fn_->now(), liveness_interval_), std::chrono::nanoseconds{0});
      auto r = fn_->wait_interrupt(slice);
      if (!r) throw TransportFailure(r.error().message);
      if (*r) return true;
      if (slice.count() > 0 && gone())
        throw TransportFailure(detail::device_lost(address_, "waiting for an interrupt"));
      if (fn_->now() >= end) return false;
    }
  }

  std::chrono::nanoseconds now() override { return fn_->now(); }
  std::string_view name() const override { return name_; }

 private:
  bool gone() { return detail::absent(fn_->config_read(cfg::kVendorId, 2)); }

  void check_offset(std::uint32_t offset, const char* what) const {
    if (offset % 4 != 0 || std::uint64_t{offset} + 4 > bar0_->size())
      throw TransportFailure(fmt::format("{}: register {} at BAR0 + {:#x} is outside the {:#x}-byte BAR or unaligned",
                                         address_, what, offset, bar0_->size()));
  }

  std::shared_ptr<PciFunction> fn_;
  BarWindow* bar0_;  // owned by fn_
  std::shared_ptr<detail::DmaPool> pool_;
  bool polling_;
  std::chrono::nanoseconds poll_interval_, status_interval_, liveness_interval_, last_status_check_{};
  std::string address_;
  std::string name_;
};

}  // namespace

Result<std::unique_ptr<Transport>> open_pcie_transport(std::unique_ptr<PciFunction> function,
                                                       const PcieTransportOptions& options, std::string name) {
  if (!function) return Error::invalid("open_pcie_transport: no PCI function");
  // Options first: a bad one changes nothing on the function.
  if (options.dma_address_bits != 0 &&
      (options.dma_address_bits < kMinDmaAddressBits || options.dma_address_bits > 64))
    return Error::invalid("dma_address_bits {} is outside [{}, 64] (0 takes the device's CAP_BUS.ADDR_BITS)",
                          options.dma_address_bits, kMinDmaAddressBits);
  std::shared_ptr<PciFunction> fn = std::move(function);
  const std::string address = fn->address();
  auto warn = [&](const std::string& text) {
    if (options.warn) options.warn(text);
  };

  if (detail::absent(fn->config_read(cfg::kVendorId, 2)))
    return Error(Errc::TransportError, detail::device_lost(address, "opening it"), Touched::Nothing);
  if (fn->dma_addressing() == DmaAddressing::Physical) warn(detail::unsafe_no_iommu_warning(address));
  if (const auto link = detail::read_link(reader(*fn)); link && link->degraded())
    warn(detail::link_degraded(address, *link));

  // Memory decoding and Bus Master: ours to enable (VFIO leaves them to user space), and checked,
  // since a card that drops Bus Master never fetches the ring nor sends an MSI.
  const auto command = static_cast<std::uint16_t>(fn->config_read(cfg::kCommand, 2));
  std::uint16_t want = command | cfg::kCommandMemory | cfg::kCommandBusMaster;
  if (fn->interrupt_delivery() != InterruptDelivery::Polling) want |= cfg::kCommandIntxDisable;
  fn->config_write(cfg::kCommand, 2, want);
  const auto now_cmd = static_cast<std::uint16_t>(fn->config_read(cfg::kCommand, 2));
  if ((now_cmd & cfg::kCommandBusMaster) == 0) return detail::bus_master_off(address, now_cmd);
  if ((now_cmd & cfg::kCommandMemory) == 0)
    return Error::make(Errc::TransportError, Touched::Hardware,
                       "{} does not decode memory after enabling it (COMMAND reads {:#06x})", address, now_cmd);

  SGPU_ASSIGN_OR_RETURN(BarWindow* const bar0, fn->map_bar(0));

  unsigned address_bits = options.dma_address_bits ? options.dma_address_bits : 64;
  if (options.check_identity) {
    if (bar0->size() < SGPU_REG(CAP_BUS) + 4)
      return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                         "{}: BAR0 is {:#x} bytes, too small for the softgpu registers", address, bar0->size());
    const std::uint32_t magic = bar0->read32(SGPU_REG(ID_MAGIC));
    if (magic == 0xffffffffu && detail::absent(fn->config_read(cfg::kVendorId, 2)))
      return Error(Errc::TransportError, detail::device_lost(address, "reading ID_MAGIC"), Touched::Hardware);
    if (magic != SGPU_REGS__ID_MAGIC__VALUE_reset)
      return detail::id_mismatch(address, magic, SGPU_REGS__ID_MAGIC__VALUE_reset);
    const std::uint32_t version = bar0->read32(SGPU_REG(ID_VERSION));
    const std::uint32_t major = SGPU_FIELD(ID_VERSION, MAJOR).get(version);
    if (major != SGPU_REGS__ID_VERSION__MAJOR_reset)
      return detail::version_mismatch(address, version, major, SGPU_REGS__ID_VERSION__MAJOR_reset);
    const unsigned reach = SGPU_FIELD(CAP_BUS, ADDR_BITS).get(bar0->read32(SGPU_REG(CAP_BUS)));
    if (reach > 0 && reach < kMinDmaAddressBits)
      return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                         "{}: CAP_BUS.ADDR_BITS reads {}: a DMA reach below {} bits cannot hold the ring and its "
                         "buffers",
                         address, reach, kMinDmaAddressBits);
    if (reach > 0) address_bits = std::min(address_bits, reach);
  }

  auto pool = std::make_shared<detail::DmaPool>(fn, address_bits, options.dma_chunk_bytes);
  SGPU_RETURN_IF_ERROR(fn->enable_interrupts());
  return std::unique_ptr<Transport>(
      std::make_unique<PcieTransport>(fn, bar0, std::move(pool), options, std::move(name)));
}

Result<std::unique_ptr<Transport>> open_pcie(const PcieOptions& options, std::string_view wanted) {
  std::string address;
  if (!wanted.empty()) {  // validated before anything is scanned
    SGPU_ASSIGN_OR_RETURN(address, normalize_address(wanted));
  }
  SGPU_ASSIGN_OR_RETURN(const auto seen, detail::scan_functions(options));
  if (!address.empty()) {
    const bool found =
        std::any_of(seen.begin(), seen.end(), [&](const FunctionInfo& f) { return f.address == address; });
    if (!found) return detail::no_card(address, seen);
  } else {
    std::vector<FunctionInfo> answering, candidates;
    for (const FunctionInfo& f : seen) {
      if (f.answers_softgpu()) answering.push_back(f);
      if (f.candidate) candidates.push_back(f);
    }
    if (answering.size() > 1) return detail::several_cards(answering);
    if (answering.size() == 1)
      address = answering.front().address;
    else if (candidates.size() == 1)
      address = candidates.front().address;  // BAR0 unreadable here; checked after opening
    else if (candidates.size() > 1)
      return detail::several_cards(candidates);
    else
      return detail::no_card("", seen);
  }
  SGPU_ASSIGN_OR_RETURN(auto fn, options.unsafe_no_iommu ? open_sysfs_function(address, options.sysfs_root)
                                                         : open_vfio_function(address, options.sysfs_root));
  return open_pcie_transport(std::move(fn), options.transport);
}

}  // namespace sgpu::pcie
