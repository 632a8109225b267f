// Aperture: the aperture-segment manager (the driver's side of the GART).
//
// Owns the GART page table (one contiguous DMA allocation of 64-bit PTEs) and the dummy page (a
// DMA page filled with a recognisable poison pattern), turns the GART on, and maps and unmaps
// ranges of aperture pages with the semantics of WDDM's MapApertureSegment /
// UnmapApertureSegment paging operations:
//
// - an unmapped page is never a hole: its PTE points at the dummy page (valid), so a stray read
//   returns the poison pattern. By default the dummy PTE is read-only, so a stray write faults
//   (WRITE_PROTECT, reported as a TRANSLATION fault of the submission); with
//   ApertureOptions::dummy_writable it is writable, as WDDM's dummy page, and a stray write
//   lands in the dummy page, where dummy_intact() detects it;
// - updates never disturb pages the GPU is using: each PTE is written whole (one aligned 64-bit
//   store), only the changed range is invalidated, and pages outside it keep their TLB entries;
// - the TLB is invalidated after every change (map and unmap) and the call returns only when
//   the invalidation completed: every translation started afterwards uses the new entries.
//
// Updates go through host memory and MMIO (GART_INV_FIRST / GART_INV_COUNT / GART_CMD, polling
// GART_STATUS.inv_busy); a privileged map/unmap packet can replace the MMIO later without a
// change to this interface.
//
// Every argument is checked before the first register access or table store: an error leaves
// the table, the device and this object unchanged (Error::hardware_touched == false), and its
// message names the page index and count.
//
// Policy: mapping a page that is already mapped is an error (unmap it first; WDDM's VidMm never
// maps over a live mapping, so this catches leaks and double maps). Unmapping a page that is not
// mapped is allowed (it stays on the dummy page), so error paths can unmap whole ranges.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"

namespace sgpu {

struct DeviceInfo;

/// Options of the aperture manager.
struct ApertureOptions {
  /// PTEs in the table (GART_TABLE_SIZE): aperture pages [0, table_pages) are usable.
  /// 0 = the whole aperture segment (CAP_APSEG_SIZE / 4 KiB).
  std::uint32_t table_pages = 0;
  /// 32-bit pattern the dummy page is filled with (little-endian dwords).
  std::uint32_t poison = 0xDEADBEEF;
  /// Map the dummy page writable (WDDM: stray writes land there and are detected by
  /// dummy_intact()); default read-only (stray writes fault).
  bool dummy_writable = false;
  /// Longest wait for an invalidation, in the transport's time.
  std::chrono::nanoseconds invalidate_timeout = std::chrono::milliseconds(1);
};

/// How pages are mapped (DXGK_MAPAPERTUREFLAGS and the write permission).
struct MapFlags {
  bool writable = true;        ///< PTE.writable; false = writes fault WRITE_PROTECT
  bool cache_coherent = false;  ///< PTE.snoop (DXGK_MAPAPERTUREFLAGS.CacheCoherent)
};

class Aperture {
 public:
  static constexpr std::uint64_t kPageSize = 4096;
  /// PTE bits (docs/programming-guide.md, "Page-table entries").
  static constexpr std::uint64_t kPteValid = 1u << 0;
  static constexpr std::uint64_t kPteWritable = 1u << 1;
  static constexpr std::uint64_t kPteSnoop = 1u << 2;

  /// Allocates the table and the dummy page, points every PTE at the dummy page, programs
  /// GART_TABLE_BASE / GART_TABLE_SIZE, invalidates the whole TLB and sets GART_CTRL.enable.
  /// `info` must describe the device behind `transport` (Device::info()); the aperture's GPU
  /// range comes from its CAP_APSEG_* fields. Unsupported if the device has no GART.
  /// `transport` must outlive the Aperture.
  static Result<std::unique_ptr<Aperture>> create(Transport& transport, const DeviceInfo& info,
                                                  const ApertureOptions& options = {});

  /// Turns the GART off (GART_CTRL.enable = 0), best effort, then frees the table.
  ~Aperture();
  Aperture(const Aperture&) = delete;
  Aperture& operator=(const Aperture&) = delete;

  /// GPU address of aperture page 0 (CAP_APSEG_BASE).
  std::uint64_t base() const { return base_; }
  /// Usable pages (the table size).
  std::uint32_t pages() const { return pages_; }
  /// Usable bytes: pages() x 4 KiB.
  std::uint64_t size() const { return std::uint64_t{pages_} * kPageSize; }
  /// GPU address of byte `offset` of aperture page `page`.
  std::uint64_t gpu_addr(std::uint32_t page, std::uint64_t offset = 0) const {
    return base_ + std::uint64_t{page} * kPageSize + offset;
  }
  /// True if `gpu` lies in the usable part of the aperture.
  bool contains(std::uint64_t gpu) const { return gpu >= base_ && gpu - base_ < size(); }

  /// MapApertureSegment: pages [first_page, first_page + bus_pages.size()) -> the given
  /// 4 KiB-aligned bus pages. Errors (nothing changed): empty list, range outside the table,
  /// a page already mapped, a misaligned or too wide bus address.
  Status map(std::uint32_t first_page, const std::vector<std::uint64_t>& bus_pages, MapFlags flags = {});
  /// Maps every page of `memory` to consecutive aperture pages from `first_page`.
  Status map(std::uint32_t first_page, const DmaMemory& memory, MapFlags flags = {});
  /// Maps the pages of several allocations, one after the other, from `first_page`.
  Status map(std::uint32_t first_page, const std::vector<const DmaMemory*>& pieces, MapFlags flags = {});

  /// UnmapApertureSegment: re-points pages [first_page, first_page + count) at the dummy page.
  /// The old pages may be freed once this returned (the invalidation completed).
  Status unmap(std::uint32_t first_page, std::uint32_t count);

  /// True if `page` is mapped (not on the dummy page).
  bool is_mapped(std::uint32_t page) const;
  /// Bus page `page` is mapped to, or nullopt if it is unmapped or out of range.
  std::optional<std::uint64_t> bus_page(std::uint32_t page) const;
  /// Pages currently mapped.
  std::uint32_t mapped_pages() const { return mapped_count_; }

  /// The PTE of `page` as it is in the table (0 if out of range).
  std::uint64_t pte(std::uint32_t page) const;
  /// The page table's bus address.
  std::uint64_t table_bus_addr() const { return table_.bus_addr(); }
  /// The dummy page (its bus address, its bytes).
  const DmaMemory& dummy_page() const { return dummy_; }
  std::uint32_t poison() const { return options_.poison; }
  /// The PTE of an unmapped page: the dummy page, valid (writable with dummy_writable).
  std::uint64_t dummy_pte() const;
  /// True if every dword of the dummy page still holds the poison pattern.
  bool dummy_intact() const;

 private:
  Aperture(Transport& transport, std::uint64_t base, std::uint32_t pages, std::uint64_t max_bus,
           const ApertureOptions& options, DmaMemory table, DmaMemory dummy);
  Status check_range(const char* what, std::uint64_t first, std::uint64_t count) const;
  void store_pte(std::uint32_t page, std::uint64_t value);
  Status invalidate_range(std::uint32_t first, std::uint32_t count);
  Status wait_invalidation();

  Transport* t_;
  std::uint64_t base_;
  std::uint32_t pages_;
  std::uint64_t max_bus_;  // bus addresses must be below this (CAP_BUS.addr_bits)
  ApertureOptions options_;
  DmaMemory table_;
  DmaMemory dummy_;
  std::vector<bool> mapped_;
  std::uint32_t mapped_count_ = 0;
};

}  // namespace sgpu
