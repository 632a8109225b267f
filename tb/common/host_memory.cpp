#include "common/host_memory.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace sgpu::tb {

const uint8_t* HostMemory::find_page(uint64_t addr) const {
  const uint64_t page_number = addr >> kPageShift;
  if (page_number == cached_page_number_) return cached_page_;
  const auto it = pages_.find(page_number);
  if (it == pages_.end()) return nullptr;
  cached_page_number_ = page_number;
  cached_page_ = it->second.data;
  return cached_page_;
}

uint8_t* HostMemory::page_ptr(uint64_t addr) {
  const uint64_t page_number = addr >> kPageShift;
  if (page_number == cached_page_number_) return cached_page_;
  auto& slot = pages_[page_number];
  if (!slot.data) {
    slot.owned = std::make_unique<Page>();
    slot.owned->fill(0);
    slot.data = slot.owned->data();
  }
  cached_page_number_ = page_number;
  cached_page_ = slot.data;
  return cached_page_;
}

void HostMemory::attach(uint64_t bus_addr, void* host_ptr, size_t bytes) {
  if ((bus_addr & kPageMask) != 0 || (bytes & kPageMask) != 0 ||
      (reinterpret_cast<uintptr_t>(host_ptr) & kPageMask) != 0) {
    throw std::invalid_argument("HostMemory::attach: address, pointer and size must be page-aligned");
  }
  auto* base = static_cast<uint8_t*>(host_ptr);
  for (uint64_t off = 0; off < bytes; off += kPageBytes) {
    auto& slot = pages_[(bus_addr + off) >> kPageShift];
    slot.owned.reset();
    slot.data = base + off;
  }
  forget_cache();
}

void HostMemory::detach(uint64_t bus_addr, size_t bytes) {
  for (uint64_t off = 0; off < bytes; off += kPageBytes) pages_.erase((bus_addr + off) >> kPageShift);
  forget_cache();
}

void HostMemory::write(uint64_t addr, const void* src, size_t n) {
  const auto* bytes = static_cast<const uint8_t*>(src);
  while (n > 0) {
    const uint64_t offset = addr & kPageMask;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kPageBytes - offset));
    std::memcpy(page_ptr(addr) + offset, bytes, chunk);
    addr += chunk;
    bytes += chunk;
    n -= chunk;
  }
}

void HostMemory::read(uint64_t addr, void* dst, size_t n) const {
  auto* bytes = static_cast<uint8_t*>(dst);
  while (n > 0) {
    const uint64_t offset = addr & kPageMask;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kPageBytes - offset));
    if (const uint8_t* page = find_page(addr)) {
      std::memcpy(bytes, page + offset, chunk);
    } else {
      std::memset(bytes, 0, chunk);
    }
    addr += chunk;
    bytes += chunk;
    n -= chunk;
  }
}

void HostMemory::fill(uint64_t addr, uint8_t value, size_t n) {
  while (n > 0) {
    const uint64_t offset = addr & kPageMask;
    const size_t chunk = static_cast<size_t>(std::min<uint64_t>(n, kPageBytes - offset));
    std::memset(page_ptr(addr) + offset, value, chunk);
    addr += chunk;
    n -= chunk;
  }
}

uint8_t HostMemory::read8(uint64_t addr) const {
  const uint8_t* page = find_page(addr);
  return page ? page[addr & kPageMask] : 0;
}

// Multi-byte helpers are little-endian, like the bus.
uint32_t HostMemory::read32(uint64_t addr) const {
  uint8_t b[4];
  read(addr, b, sizeof b);
  return uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
}

uint64_t HostMemory::read64(uint64_t addr) const {
  return uint64_t{read32(addr)} | uint64_t{read32(addr + 4)} << 32;
}

void HostMemory::write32(uint64_t addr, uint32_t value) {
  const uint8_t b[4] = {static_cast<uint8_t>(value), static_cast<uint8_t>(value >> 8),
                        static_cast<uint8_t>(value >> 16), static_cast<uint8_t>(value >> 24)};
  write(addr, b, sizeof b);
}

void HostMemory::write64(uint64_t addr, uint64_t value) {
  write32(addr, static_cast<uint32_t>(value));
  write32(addr + 4, static_cast<uint32_t>(value >> 32));
}

void HostMemory::clear() {
  pages_.clear();
  forget_cache();
}

}  // namespace sgpu::tb
