// Sparse byte-addressable model of a 64-bit host (or device) address space.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace sgpu::tb {

/// Memory as seen by the bus models: 4 KiB pages created on first write, unwritten bytes read 0.
///
/// Every simulated read and write beat lands here, so the common case (an access inside one page
/// that was touched recently) avoids the hash map through a one-entry page cache. Not
/// thread-safe: one simulation owns one HostMemory.
class HostMemory {
public:
  static constexpr unsigned kPageShift = 12;
  static constexpr uint64_t kPageBytes = uint64_t{1} << kPageShift;
  static constexpr uint64_t kPageMask = kPageBytes - 1;

  HostMemory() = default;
  HostMemory(const HostMemory&) = delete;
  HostMemory& operator=(const HostMemory&) = delete;
  HostMemory(HostMemory&&) noexcept = default;
  HostMemory& operator=(HostMemory&&) noexcept = default;

  void write(uint64_t addr, const void* src, size_t n);
  void read(uint64_t addr, void* dst, size_t n) const;

  /// Pointer to the start of the page holding addr; the page is created (zeroed) if needed.
  /// Stays valid until the page is detached or the memory cleared (pages never move).
  uint8_t* page_ptr(uint64_t addr);
  /// The page holding addr, or nullptr if nothing was ever written there.
  const uint8_t* find_page(uint64_t addr) const;

  void fill(uint64_t addr, uint8_t value, size_t n);

  uint8_t read8(uint64_t addr) const;
  uint32_t read32(uint64_t addr) const;
  uint64_t read64(uint64_t addr) const;
  void write8(uint64_t addr, uint8_t value) { write(addr, &value, 1); }
  void write32(uint64_t addr, uint32_t value);
  void write64(uint64_t addr, uint64_t value);

  /// Backs the page-aligned bus range [bus_addr, bus_addr + bytes) with caller-owned memory, so
  /// the host's CPU pointer and the device see the same bytes (DMA buffers of the sim
  /// transport). Previous contents of those pages are dropped. The caller keeps `host_ptr` alive
  /// until detach().
  void attach(uint64_t bus_addr, void* host_ptr, size_t bytes);
  /// Removes the pages of [bus_addr, bus_addr + bytes); they read as 0 again.
  void detach(uint64_t bus_addr, size_t bytes);

  /// Number of pages that exist (for tests and statistics).
  size_t page_count() const { return pages_.size(); }
  void clear();

private:
  using Page = std::array<uint8_t, kPageBytes>;
  /// A page is either owned (created on first write) or attached (caller's memory).
  struct Slot {
    uint8_t* data = nullptr;
    std::unique_ptr<Page> owned;
  };

  void forget_cache() const {
    cached_page_number_ = ~uint64_t{0};
    cached_page_ = nullptr;
  }

  std::unordered_map<uint64_t, Slot> pages_;
  // One-entry cache of the last page looked up. Mutable because reads hit it too; it never
  // changes what a read returns.
  mutable uint64_t cached_page_number_ = ~uint64_t{0};
  mutable uint8_t* cached_page_ = nullptr;
};

}  // namespace sgpu::tb
