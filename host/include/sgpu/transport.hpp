// The transport: the only seam between driver policy and hardware (Mesa's winsys idea).
//
// A Transport moves 32-bit register accesses to BAR0, hands out DMA-able host memory with the bus
// addresses the device must use, waits for the interrupt line and tells the time (simulated time
// for the simulator, real time for a board). Everything above it (Device, the CLI, the tests of
// policy) is written against this interface only and never learns which backend it runs on.
//
// Backends are chosen by name through a TransportRegistry (transport/registry.hpp): libsgpu
// carries "mock" (unit tests: scripted reads, logged writes) and "pcie" (a card through
// libpciaccess + VFIO, transport/pcie.hpp); the testbench adds "sim" (the Verilated RTL in
// process), "model" (the C++ reference model) and "pcie-sim" (the pcie transport over a simulated
// PCI function). Each backend has its own options; nothing here knows them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "sgpu/result.hpp"

namespace sgpu {

/// Implemented by each backend: gives DMA memory back. Kept alive by every DmaMemory it handed
/// out, so buffers may safely outlive the Transport that allocated them.
class DmaBackend {
 public:
  virtual ~DmaBackend() = default;
  /// Unmaps `bus_addr` from the device and frees `cpu`. Never fails.
  virtual void release(void* cpu, std::uint64_t bus_addr, std::size_t bytes) noexcept = 0;
};

/// A block of host memory the device can reach by DMA. Move-only; freed on destruction.
/// The CPU sees it at cpu(), the device at bus_addr(); both see the same bytes.
class DmaMemory {
 public:
  DmaMemory() noexcept = default;
  DmaMemory(std::shared_ptr<DmaBackend> backend, void* cpu, std::uint64_t bus_addr,
            std::size_t bytes) noexcept
      : backend_(std::move(backend)), cpu_(cpu), bus_addr_(bus_addr), size_(bytes) {}
  ~DmaMemory() { reset(); }
  DmaMemory(DmaMemory&& o) noexcept { *this = std::move(o); }
  DmaMemory& operator=(DmaMemory&& o) noexcept {
    if (this != &o) {
      reset();
      backend_ = std::move(o.backend_);
      cpu_ = std::exchange(o.cpu_, nullptr);
      bus_addr_ = std::exchange(o.bus_addr_, 0);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  DmaMemory(const DmaMemory&) = delete;
  DmaMemory& operator=(const DmaMemory&) = delete;

  /// Frees the memory now (no-op when empty).
  void reset() noexcept {
    if (backend_ && cpu_) backend_->release(cpu_, bus_addr_, size_);
    backend_.reset();
    cpu_ = nullptr;
    bus_addr_ = 0;
    size_ = 0;
  }

  explicit operator bool() const noexcept { return cpu_ != nullptr; }
  void* cpu() const noexcept { return cpu_; }
  std::byte* bytes() const noexcept { return static_cast<std::byte*>(cpu_); }
  template <class T>
  T* as() const noexcept { return static_cast<T*>(cpu_); }
  std::uint64_t bus_addr() const noexcept { return bus_addr_; }
  std::size_t size() const noexcept { return size_; }

 private:
  std::shared_ptr<DmaBackend> backend_;
  void* cpu_ = nullptr;
  std::uint64_t bus_addr_ = 0;
  std::size_t size_ = 0;
};

/// 32-bit register access, DMA memory, interrupt wait and time. See the file comment.
///
/// Register accesses are infallible in the interface (as on a real bus, a dead link reads
/// all-ones); a backend whose link breaks (e.g. the simulator's MMIO timeout) throws
/// TransportFailure, which Device turns into an Errc::TransportError result.
class Transport {
 public:
  virtual ~Transport() = default;

  /// Reads the 32-bit register at byte offset `offset` of BAR0.
  virtual std::uint32_t read32(std::uint32_t offset) = 0;
  /// Writes the 32-bit register at byte offset `offset` of BAR0.
  virtual void write32(std::uint32_t offset, std::uint32_t value) = 0;

  /// Allocates `bytes` of zeroed DMA-able memory aligned to `align` bytes (a power of two;
  /// at least the page size is always honoured).
  virtual Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align = 4096) = 0;

  /// Waits until the interrupt line is high or `timeout` has passed (in the backend's time:
  /// the simulator advances its clock instead of sleeping). True if the line is high.
  /// Returns at once if the line is already high. Over PCIe the interrupt is a message (MSI),
  /// not a level: true once per message that arrived, which the driver then acknowledges.
  virtual bool wait_irq(std::chrono::nanoseconds timeout) = 0;

  /// The backend's time: simulated time for "sim", a monotonic clock for hardware (and for an
  /// untimed model, time advances only by the waits that give up).
  virtual std::chrono::nanoseconds now() = 0;

  /// Backend name, as registered: "sim", "model", "mock", "pcie"...
  virtual std::string_view name() const = 0;
};

/// Thrown by a backend when the link to the device breaks (see Transport).
class TransportFailure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace sgpu
