// Physical addresses of this process's pages from /proc/self/pagemap (no IOMMU: the device must
// be given physical addresses). Each 64-bit entry: bit 63 present, bit 62 swapped, bits 0..54 the
// page frame number, which reads as 0 without CAP_SYS_ADMIN (Documentation/admin-guide/mm/pagemap).
#pragma once

#include <cstddef>
#include <cstdint>

#include "sgpu/result.hpp"

namespace sgpu::pcie::detail {

inline constexpr std::uint64_t kPagemapPresent = std::uint64_t{1} << 63;
inline constexpr std::uint64_t kPagemapSwapped = std::uint64_t{1} << 62;
inline constexpr std::uint64_t kPagemapPfnMask = (std::uint64_t{1} << 55) - 1;

/// The physical address of virtual address `va` given its pagemap entry and the base page size.
/// Errors: not present (never touched, or swapped out: the memory must be locked), or a zero
/// frame number (the process lacks CAP_SYS_ADMIN).
Result<std::uint64_t> physical_from_entry(std::uint64_t entry, std::uint64_t va, std::uint64_t page_size);

/// Physical address of [va, va + bytes), checked to be contiguous page by page, read through
/// `pagemap_fd` (an open /proc/self/pagemap). InvalidArgument names the first page that breaks
/// contiguity.
Result<std::uint64_t> contiguous_physical(int pagemap_fd, const void* va, std::size_t bytes);

}  // namespace sgpu::pcie::detail
