// First-fit allocator of bus-address ranges with coalescing free list. It never touches memory:
// backends use it to give DMA buffers device-visible addresses (the simulator and the mock start
// above 4 GiB so 64-bit addressing is always exercised).
#pragma once

#include <cstdint>
#include <iterator>
#include <map>
#include <optional>

namespace sgpu::detail {

class BusAllocator {
 public:
  BusAllocator(std::uint64_t base, std::uint64_t size) { free_[base] = size; }

  /// A range of `bytes` aligned to `align` (a power of two), or nullopt if none is free.
  std::optional<std::uint64_t> allocate(std::uint64_t bytes, std::uint64_t align) {
    if (bytes == 0 || align == 0 || (align & (align - 1)) != 0) return std::nullopt;
    for (auto it = free_.begin(); it != free_.end(); ++it) {
      const std::uint64_t start = it->first, size = it->second;
      const std::uint64_t addr = (start + align - 1) & ~(align - 1);
      if (addr < start || addr - start > size || size - (addr - start) < bytes) continue;
      const std::uint64_t end = start + size;
      free_.erase(it);
      if (addr > start) free_[start] = addr - start;
      if (addr + bytes < end) free_[addr + bytes] = end - (addr + bytes);
      return addr;
    }
    return std::nullopt;
  }

  /// Returns a range from allocate(); merges it with free neighbours.
  void free(std::uint64_t addr, std::uint64_t bytes) {
    auto it = free_.emplace(addr, bytes).first;
    if (auto next = std::next(it); next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  /// Number of free ranges (1 when everything is free).
  std::size_t fragments() const { return free_.size(); }

 private:
  std::map<std::uint64_t, std::uint64_t> free_;  // start -> size
};

}  // namespace sgpu::detail
