#include "transport/pcie/pagemap.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace sgpu::pcie::detail {

Result<std::uint64_t> physical_from_entry(std::uint64_t entry, std::uint64_t va, std::uint64_t page_size) {
  if ((entry & kPagemapPresent) == 0)
    return Error::make(Errc::TransportError, Touched::Nothing,
                       "page at {:#x} is not in memory{}: DMA memory must be locked and touched first", va,
                       (entry & kPagemapSwapped) ? " (swapped out)" : "");
  const std::uint64_t pfn = entry & kPagemapPfnMask;
  if (pfn == 0)
    return Error::make(Errc::PermissionDenied, Touched::Nothing,
                       "/proc/self/pagemap hides the physical address of {:#x}: reading page frame numbers "
                       "needs CAP_SYS_ADMIN (run as root)",
                       va);
  return pfn * page_size + va % page_size;
}

Result<std::uint64_t> contiguous_physical(int pagemap_fd, const void* va, std::size_t bytes) {
  const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  const auto base = reinterpret_cast<std::uint64_t>(va);
  std::uint64_t first = 0;
  for (std::uint64_t off = 0; off < bytes; off += page) {
    const std::uint64_t v = base + off;
    std::uint64_t entry = 0;
    const auto at = static_cast<off_t>(v / page * sizeof entry);
    if (::pread(pagemap_fd, &entry, sizeof entry, at) != static_cast<ssize_t>(sizeof entry))
      return Error::make(Errc::TransportError, Touched::Nothing, "reading /proc/self/pagemap at {:#x}: {}", v,
                         std::strerror(errno));
    auto pa = physical_from_entry(entry, v, page);
    if (!pa) return std::move(pa).error();
    if (off == 0) {
      first = *pa;
    } else if (*pa != first + off) {
      return Error::make(Errc::OutOfMemory, Touched::Nothing,
                         "host memory at {:#x} is not physically contiguous: byte {:#x} is at physical {:#x}, "
                         "expected {:#x}",
                         base, off, *pa, first + off);
    }
  }
  return first;
}

}  // namespace sgpu::pcie::detail
