// I/O virtual addresses for the DMA pool: the free space is what the IOMMU accepts (its reported
// ranges), cut to what the device can drive (its address width), above a floor that keeps 0 and
// the first megabyte unused (a zero bus address then always means a bug, and low ranges are where
// platforms put reserved regions). First fit, coalescing on free.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "sgpu/transport/pci_function.hpp"
#include "transport/bus_allocator.hpp"

namespace sgpu::pcie::detail {

inline constexpr std::uint64_t kIovaFloor = std::uint64_t{1} << 20;

class IovaAllocator {
 public:
  /// `ranges`: the IOMMU's usable ranges (inclusive); `address_bits`: the device's reach (1..64).
  IovaAllocator(const std::vector<IovaRange>& ranges, unsigned address_bits, std::uint64_t floor = kIovaFloor) {
    const std::uint64_t top = address_bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << address_bits) - 1;
    for (const IovaRange& r : ranges) {
      const std::uint64_t first = std::max(r.first, floor);
      const std::uint64_t last = std::min(r.last, top);
      if (first > last || last - first < 4095) continue;
      usable_.push_back({first, last});
      // BusAllocator keeps [start, start + size): a range ending at 2^64 - 1 loses its last byte.
      const std::uint64_t size = last - first + (last == ~std::uint64_t{0} ? 0 : 1);
      if (!bus_)
        bus_.emplace(first, size);
      else
        bus_->free(first, size);
    }
  }

  /// A range of `bytes` aligned to `align` (a power of two), or nullopt if none is free.
  std::optional<std::uint64_t> allocate(std::uint64_t bytes, std::uint64_t align) {
    if (!bus_) return std::nullopt;
    return bus_->allocate(bytes, align);
  }
  void free(std::uint64_t iova, std::uint64_t bytes) {
    if (bus_) bus_->free(iova, bytes);
  }

  /// The ranges addresses come from (the IOMMU's ranges cut to the reach and the floor).
  const std::vector<IovaRange>& usable() const { return usable_; }
  std::size_t fragments() const { return bus_ ? bus_->fragments() : 0; }

 private:
  std::optional<sgpu::detail::BusAllocator> bus_;
  std::vector<IovaRange> usable_;
};

}  // namespace sgpu::pcie::detail
