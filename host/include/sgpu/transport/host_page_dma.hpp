// HostPageDma: the DMA memory of backends whose device reaches ordinary host memory (the
// simulated RTL, the reference model, the mock, a SystemC platform): zeroed, page-aligned host
// pages at bus addresses handed out from a range of the backend's own (4 GiB up by default, so
// 64-bit addressing is always exercised), each allocation optionally mirrored into the device
// model's memory map. A backend's alloc_dma() is one call:
//
//   dma_ = HostPageDma::create("sim", {[dev](auto bus, void* cpu, auto n) { dev->memory().attach(bus, cpu, n); },
//                                      [dev](auto bus, auto n) { dev->memory().detach(bus, n); }});
//   Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return dma_->allocate(bytes, align); }
//
// Every DmaMemory it hands out shares it, and with it whatever the map's hooks keep alive (the
// device model), so buffers may outlive the transport in any order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"

namespace sgpu {

namespace detail {
class BusAllocator;
}

class HostPageDma final : public DmaBackend, public std::enable_shared_from_this<HostPageDma> {
 public:
  /// Hooks that mirror each allocation into the device model's view of host memory.
  struct MemoryMap {
    /// The device sees [bus_addr, bus_addr + bytes) as the host bytes at `cpu` from now on.
    std::function<void(std::uint64_t bus_addr, void* cpu, std::size_t bytes)> attach;
    /// The range is gone (the host bytes are freed right after). Must not throw.
    std::function<void(std::uint64_t bus_addr, std::size_t bytes)> detach;
  };
  static constexpr std::size_t kPageSize = 4096;
  static constexpr std::uint64_t kDefaultBusBase = std::uint64_t{1} << 32;
  static constexpr std::uint64_t kDefaultBusSize = std::uint64_t{1} << 40;

  /// `backend` names the backend in error messages; bus addresses come from [bus_base,
  /// bus_base + bus_size).
  static std::shared_ptr<HostPageDma> create(std::string backend, MemoryMap map = {},
                                             std::uint64_t bus_base = kDefaultBusBase,
                                             std::uint64_t bus_size = kDefaultBusSize);
  ~HostPageDma() override;
  HostPageDma(const HostPageDma&) = delete;
  HostPageDma& operator=(const HostPageDma&) = delete;

  /// Transport::alloc_dma: `bytes` (0 counts as 1) rounded up to whole pages, aligned to
  /// max(align, page size), zeroed. InvalidArgument when `align` is not a power of two,
  /// OutOfMemory when the bus range or the host has no room; nothing is allocated then.
  Result<DmaMemory> allocate(std::size_t bytes, std::size_t align);

  /// CPU pointer of the byte at `bus_addr`, or nullptr if no live allocation covers it.
  void* cpu_at(std::uint64_t bus_addr) const;
  /// Live allocations.
  std::size_t live() const { return live_.size(); }

  // DmaBackend
  void release(void* cpu, std::uint64_t bus_addr, std::size_t bytes) noexcept override;

 private:
  HostPageDma(std::string backend, MemoryMap map, std::uint64_t bus_base, std::uint64_t bus_size);

  std::string backend_;
  MemoryMap map_;
  std::unique_ptr<detail::BusAllocator> bus_;
  std::map<std::uint64_t, std::pair<void*, std::size_t>> live_;  // bus address -> (cpu, bytes)
};

}  // namespace sgpu
