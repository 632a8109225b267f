#include "board/board_transport.hpp"

#include <fmt/format.h>

#include "board/s7_root_complex.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::board {
namespace {

constexpr std::uint32_t kIdMagic = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, ID_MAGIC));
constexpr std::uint32_t kCapBus = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, CAP_BUS));
constexpr std::uint32_t kMagic = SGPU_REGS__ID_MAGIC__VALUE_reset;

class BoardTransport final : public Transport {
 public:
  // DMA buffers are host pages the board's host-memory model maps at their bus addresses; they
  // keep the board alive until the last one is gone, whatever the destruction order.
  BoardTransport(std::shared_ptr<PciFunction> f, const BoardTransportOptions& o)
      : fn_(f),
        dma_(HostPageDma::create("board",
                                 {[f](std::uint64_t bus, void* cpu, std::size_t n) { f->host_memory().attach(bus, cpu, n); },
                                  [f](std::uint64_t bus, std::size_t n) { f->host_memory().detach(bus, n); }},
                                 o.dma_base, o.dma_size)) {}

  std::uint32_t read32(std::uint32_t offset) override {
    try {
      return fn_->bar0_read32(offset);
    } catch (const std::exception& e) {
      throw TransportFailure(fmt::format("board: read of {:#x}: {}", offset, e.what()));
    }
  }

  void write32(std::uint32_t offset, std::uint32_t value) override {
    try {
      fn_->bar0_write32(offset, value);
    } catch (const std::exception& e) {
      throw TransportFailure(fmt::format("board: write of {:#x} to {:#x}: {}", value, offset, e.what()));
    }
  }

  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return dma_->allocate(bytes, align); }

  // An MSI is an event: the line counts as high when an MSI arrived since the last time this
  // returned true. The shell sends another MSI when a register write leaves the line high (the
  // acknowledge), so an event never waits for the next one.
  bool wait_irq(std::chrono::nanoseconds timeout) override {
    try {
      const std::uint64_t n = fn_->msi_count();
      if (n > msis_seen_ || fn_->wait_msi(msis_seen_, timeout)) {
        msis_seen_ = fn_->msi_count();
        return true;
      }
      return false;
    } catch (const std::exception& e) {
      throw TransportFailure(fmt::format("board: {}", e.what()));
    }
  }

  std::chrono::nanoseconds now() override { return fn_->now(); }
  std::string_view name() const override { return "board"; }

 private:
  std::shared_ptr<PciFunction> fn_;
  std::shared_ptr<HostPageDma> dma_;
  std::uint64_t msis_seen_ = 0;
};

}  // namespace

Result<std::unique_ptr<Transport>> open_board_transport(std::shared_ptr<PciFunction> f,
                                                        const BoardTransportOptions& o) {
  if (o.dma_size == 0 || o.dma_base + o.dma_size < o.dma_base)
    return Error::invalid("board: DMA window [{:#x}, +{:#x}) is empty or wraps", o.dma_base, o.dma_size);
  try {
    const Enumerated e = enumerate(*f, o.enumerate);
    const std::uint32_t magic = f->bar0_read32(kIdMagic);
    if (magic != kMagic)
      return Error::make(Errc::DeviceMismatch, Touched::Hardware, "board: BAR0 at {:#x} reads ID_MAGIC {:#010x}, not a softgpu",
                         e.bar0_base, magic);
    const std::uint32_t bus = f->bar0_read32(kCapBus);
    const unsigned bits = (bus & SGPU_REGS__CAP_BUS__ADDR_BITS_bm) >> SGPU_REGS__CAP_BUS__ADDR_BITS_bp;
    const std::uint64_t last = o.dma_base + o.dma_size - 1;
    if (bits < 64 && (last >> bits) != 0)
      return Error::make(Errc::Unsupported, Touched::Hardware,
                         "board: the DMA window [{:#x}, {:#x}] is beyond the device's reach: it reaches bus addresses "
                         "below 2^{} (CAP_BUS.addr_bits, {})",
                         o.dma_base, last, bits, f->describe());
  } catch (const std::exception& ex) {
    return Error::make(Errc::TransportError, Touched::Hardware, "board: cannot bring up {}: {}", f->describe(), ex.what());
  }
  return std::unique_ptr<Transport>(std::make_unique<BoardTransport>(std::move(f), o));
}

Result<std::unique_ptr<Transport>> open_board_transport(const BoardTransportOptions& o) {
  std::shared_ptr<PciFunction> f;
  try {
    if (o.shell == "s7") {
      f = std::make_shared<S7Board>(o.s7);
    } else if (o.shell == "usp") {
      f = std::make_shared<UspBoard>(o.usp);
    } else {
      return Error::invalid("board: unknown board shell '{}' (known: s7, usp)", o.shell);
    }
  } catch (const std::exception& e) {
    return Error::make(Errc::TransportError, Touched::Nothing, "board: cannot start the simulated board: {}", e.what());
  }
  return open_board_transport(std::move(f), o);
}

Result<std::unique_ptr<Transport>> open_board_backend(const BoardTransportOptions& options, std::string_view shell) {
  if (shell.empty()) return open_board_transport(options);
  BoardTransportOptions o = options;
  o.shell = std::string(shell);
  return open_board_transport(o);
}

}  // namespace sgpu::board
