// Page-aligned, zeroed host allocations for backends whose "DMA memory" is ordinary host memory.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>

namespace sgpu::detail {

inline constexpr std::size_t kHostPage = 4096;

inline std::size_t round_up(std::size_t v, std::size_t align) { return (v + align - 1) / align * align; }

/// `bytes` rounded up to whole pages, aligned to max(align, page); nullptr on failure.
inline void* alloc_host_pages(std::size_t bytes, std::size_t align) {
  void* p = std::aligned_alloc(align < kHostPage ? kHostPage : align, bytes);
  if (p) std::memset(p, 0, bytes);
  return p;
}

inline void free_host_pages(void* p) { std::free(p); }

}  // namespace sgpu::detail
