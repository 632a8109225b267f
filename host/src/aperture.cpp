#include "sgpu/aperture.hpp"

#include <atomic>
#include <cstring>

#include <fmt/format.h>

#include "duration.hpp"
#include "sgpu/device.hpp"
#include "sgpu/regs.hpp"

namespace sgpu {

namespace {

template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const TransportFailure& e) {
    return Error{Errc::TransportError, e.what(), Touched::Hardware};
  }
}

std::string range_text(std::uint64_t first, std::uint64_t count) {
  return fmt::format("pages [{}, {}) ({} page{})", first, first + count, count, count == 1 ? "" : "s");
}

}  // namespace

Result<std::unique_ptr<Aperture>> Aperture::create(Transport& transport, const DeviceInfo& info,
                                                   const ApertureOptions& options) {
  if (!info.has_gart) return Error::unsupported("the device reports no GART (CAP_FEATURES.gart = 0)");
  const std::uint64_t base = info.aperture_segment.base;
  const std::uint64_t size = info.aperture_segment.size;
  if (info.page_size() != kPageSize)
    return Error::unsupported("GPU page size {} bytes (CAP_MEM.page_shift {}); the GART uses 4 KiB pages",
                              info.page_size(), info.page_shift);
  if (size < kPageSize || size % kPageSize != 0 || base % kPageSize != 0)
    return Error::make(Errc::DeviceMismatch, Touched::Nothing,
                       "unusable aperture segment: base {:#x}, size {:#x} (CAP_APSEG_*)", base, size);
  const std::uint64_t ap_pages = size / kPageSize;
  const std::uint64_t field_max = SGPU_FIELD(GART_TABLE_SIZE, ENTRIES).mask >> SGPU_FIELD(GART_TABLE_SIZE, ENTRIES).lsb;
  std::uint64_t pages = options.table_pages == 0 ? ap_pages : options.table_pages;
  if (pages > ap_pages)
    return Error::invalid("table_pages {} exceeds the aperture's {} pages (CAP_APSEG_SIZE {:#x})", options.table_pages,
                          ap_pages, size);
  if (pages > field_max) pages = field_max;
  if (options.invalidate_timeout.count() <= 0) return Error::invalid("invalidate_timeout must be positive");
  const std::uint64_t max_bus = info.bus_addr_bits >= 64 || info.bus_addr_bits == 0
                                    ? ~std::uint64_t{0}
                                    : (std::uint64_t{1} << info.bus_addr_bits) - 1;

  SGPU_ASSIGN_OR_RETURN(auto table, transport.alloc_dma(pages * 8, kPageSize));
  SGPU_ASSIGN_OR_RETURN(auto dummy, transport.alloc_dma(kPageSize, kPageSize));

  std::unique_ptr<Aperture> ap(new Aperture(transport, base, static_cast<std::uint32_t>(pages), max_bus, options,
                                            std::move(table), std::move(dummy)));
  // Host memory first: the poison, and every PTE on the dummy page.
  auto* d = ap->dummy_.as<std::uint32_t>();
  for (std::size_t i = 0; i < kPageSize / 4; ++i) d[i] = options.poison;
  const std::uint64_t dpte = ap->dummy_pte();
  for (std::uint32_t p = 0; p < ap->pages_; ++p) ap->store_pte(p, dpte);
  std::atomic_thread_fence(std::memory_order_release);

  // Then the registers (programming guide, "Bringing up the GART").
  SGPU_RETURN_IF_ERROR(guarded([&]() -> Status {
    const std::uint64_t tb = ap->table_.bus_addr();
    transport.write32(SGPU_REG(GART_TABLE_BASE_LO), static_cast<std::uint32_t>(tb));
    transport.write32(SGPU_REG(GART_TABLE_BASE_HI), static_cast<std::uint32_t>(tb >> 32));
    transport.write32(SGPU_REG(GART_TABLE_SIZE), SGPU_FIELD(GART_TABLE_SIZE, ENTRIES).put(ap->pages_));
    transport.write32(SGPU_REG(GART_CMD), SGPU_FIELD(GART_CMD, INV_ALL).put(1));
    transport.write32(SGPU_REG(GART_CTRL), SGPU_FIELD(GART_CTRL, ENABLE).put(1));
    return ap->wait_invalidation();
  }));
  return ap;
}

Aperture::Aperture(Transport& transport, std::uint64_t base, std::uint32_t pages, std::uint64_t max_bus,
                   const ApertureOptions& options, DmaMemory table, DmaMemory dummy)
    : t_(&transport),
      base_(base),
      pages_(pages),
      max_bus_(max_bus),
      options_(options),
      table_(std::move(table)),
      dummy_(std::move(dummy)),
      mapped_(pages, false) {}

Aperture::~Aperture() {
  // The table is freed with this object: stop the GART from walking it. Best effort.
  try {
    t_->write32(SGPU_REG(GART_CTRL), SGPU_FIELD(GART_CTRL, ENABLE).put(0));
  } catch (const TransportFailure&) {
  }
}

std::uint64_t Aperture::dummy_pte() const {
  return dummy_.bus_addr() | kPteValid | (options_.dummy_writable ? kPteWritable : 0);
}

void Aperture::store_pte(std::uint32_t page, std::uint64_t value) {
  // One aligned 64-bit store: a walk never sees half an entry.
  auto* slot = reinterpret_cast<std::atomic<std::uint64_t>*>(table_.bytes() + std::size_t{page} * 8);
  static_assert(sizeof(std::atomic<std::uint64_t>) == 8, "PTE stores must be plain 64-bit stores");
  slot->store(value, std::memory_order_relaxed);
}

std::uint64_t Aperture::pte(std::uint32_t page) const {
  if (page >= pages_) return 0;
  const auto* slot =
      reinterpret_cast<const std::atomic<std::uint64_t>*>(table_.bytes() + std::size_t{page} * 8);
  return slot->load(std::memory_order_relaxed);
}

bool Aperture::is_mapped(std::uint32_t page) const { return page < pages_ && mapped_[page]; }

std::optional<std::uint64_t> Aperture::bus_page(std::uint32_t page) const {
  if (!is_mapped(page)) return std::nullopt;
  return pte(page) & ~(kPageSize - 1);
}

bool Aperture::dummy_intact() const {
  const auto* d = dummy_.as<const volatile std::uint32_t>();
  for (std::size_t i = 0; i < kPageSize / 4; ++i)
    if (d[i] != options_.poison) return false;
  return true;
}

Status Aperture::check_range(const char* what, std::uint64_t first, std::uint64_t count) const {
  if (count == 0) return Error::invalid("{}: no pages (count 0 at page {})", what, first);
  if (first >= pages_ || count > pages_ - first)
    return Error::invalid("{}: {} outside the aperture's {} pages", what, range_text(first, count), pages_);
  return ok_status();
}

Status Aperture::map(std::uint32_t first_page, const std::vector<std::uint64_t>& bus_pages, MapFlags flags) {
  // ---- validate everything before touching the table or a register
  SGPU_RETURN_IF_ERROR(check_range("map", first_page, bus_pages.size()));
  for (std::size_t i = 0; i < bus_pages.size(); ++i) {
    const std::uint64_t b = bus_pages[i];
    if (b % kPageSize != 0)
      return Error::invalid("map {}: bus address {:#x} for page {} (entry {}) is not 4 KiB aligned",
                            range_text(first_page, bus_pages.size()), b, first_page + i, i);
    if (b > max_bus_ || kPageSize - 1 > max_bus_ - b)
      return Error::invalid(
          "map {}: bus address {:#x} for page {} (entry {}) is beyond the device's "
          "bus addresses (max {:#x})",
          range_text(first_page, bus_pages.size()), b, first_page + i, i, max_bus_);
  }
  for (std::size_t i = 0; i < bus_pages.size(); ++i) {
    if (mapped_[first_page + i]) {
      std::size_t n = 0;
      while (i + n < bus_pages.size() && mapped_[first_page + i + n]) ++n;
      return Error::invalid("map {}: overlaps a mapped range at {}; unmap it first",
                            range_text(first_page, bus_pages.size()), range_text(first_page + i, n));
    }
  }

  // ---- table, then the invalidation of exactly this range
  const std::uint64_t bits = kPteValid | (flags.writable ? kPteWritable : 0) | (flags.cache_coherent ? kPteSnoop : 0);
  for (std::size_t i = 0; i < bus_pages.size(); ++i) {
    store_pte(static_cast<std::uint32_t>(first_page + i), bus_pages[i] | bits);
    mapped_[first_page + i] = true;
  }
  mapped_count_ += static_cast<std::uint32_t>(bus_pages.size());
  std::atomic_thread_fence(std::memory_order_release);
  return invalidate_range(first_page, static_cast<std::uint32_t>(bus_pages.size()));
}

Status Aperture::map(std::uint32_t first_page, const DmaMemory& memory, MapFlags flags) {
  return map(first_page, std::vector<const DmaMemory*>{&memory}, flags);
}

Status Aperture::map(std::uint32_t first_page, const std::vector<const DmaMemory*>& pieces, MapFlags flags) {
  std::vector<std::uint64_t> bus;
  for (std::size_t k = 0; k < pieces.size(); ++k) {
    const DmaMemory* m = pieces[k];
    if (m == nullptr || !*m) return Error::invalid("map at page {}: DMA allocation {} is empty", first_page, k);
    if (m->bus_addr() % kPageSize != 0 || m->size() % kPageSize != 0)
      return Error::invalid(
          "map at page {}: DMA allocation {} (bus {:#x}, {:#x} bytes) is not whole "
          "4 KiB pages",
          first_page, k, m->bus_addr(), m->size());
    for (std::uint64_t off = 0; off < m->size(); off += kPageSize) bus.push_back(m->bus_addr() + off);
  }
  if (bus.empty()) return Error::invalid("map at page {}: no DMA allocations", first_page);
  return map(first_page, bus, flags);
}

Status Aperture::unmap(std::uint32_t first_page, std::uint32_t count) {
  SGPU_RETURN_IF_ERROR(check_range("unmap", first_page, count));
  const std::uint64_t dpte = dummy_pte();
  for (std::uint32_t i = 0; i < count; ++i) {
    store_pte(first_page + i, dpte);
    if (mapped_[first_page + i]) {
      mapped_[first_page + i] = false;
      --mapped_count_;
    }
  }
  std::atomic_thread_fence(std::memory_order_release);
  return invalidate_range(first_page, count);
}

Status Aperture::invalidate_range(std::uint32_t first, std::uint32_t count) {
  return guarded([&]() -> Status {
    t_->write32(SGPU_REG(GART_INV_FIRST), SGPU_FIELD(GART_INV_FIRST, PAGE).put(first));
    t_->write32(SGPU_REG(GART_INV_COUNT), SGPU_FIELD(GART_INV_COUNT, COUNT).put(count));
    t_->write32(SGPU_REG(GART_CMD), SGPU_FIELD(GART_CMD, INV_RANGE).put(1));
    return wait_invalidation();
  });
}

Status Aperture::wait_invalidation() {
  const auto start = t_->now();
  for (;;) {
    const std::uint32_t st = t_->read32(SGPU_REG(GART_STATUS));
    if (SGPU_FIELD(GART_STATUS, INV_BUSY).get(st) == 0) return ok_status();
    if (st == 0xFFFF'FFFFu)
      return Error::make(Errc::DeviceLost, Touched::Hardware,
                         "device lost: GART_STATUS reads 0xffffffff (all ones) while waiting for a GART "
                         "invalidation: the device is gone (surprise removal or a dead link)");
    if (t_->now() - start >= options_.invalidate_timeout)
      return Error::make(Errc::Timeout, Touched::Hardware,
                         "GART invalidation did not finish within {}: GART_STATUS is {:#010x}",
                         detail::format_duration(options_.invalidate_timeout), st);
  }
}

}  // namespace sgpu
