#include "sgpu/vidmm/memory_manager.hpp"

#include "handle_tag.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace sgpu::vidmm {

using kmd::AllocationInfoFlags;
using kmd::SegmentFlags;
using kmd::SegmentSet;

namespace {

// hAllocation: bits 63-52 this manager's tag, 51-32 the record's generation, 31-0 index + 1.
constexpr unsigned kGenerationBits = 20;
constexpr std::uint32_t kGenerationMask = (1u << kGenerationBits) - 1;
constexpr std::uint32_t kTagMask = 0xfff;

bool is_pow2(std::uint64_t v) { return v != 0 && (v & (v - 1)) == 0; }
std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace

struct MemoryManager::Record {
  std::uint32_t generation = 1;
  bool live = false;
  kmd::AllocationInfo info;
  std::uint64_t size = 0;
  std::uint64_t alignment = 0;
  AllocationOwner owner;
  SegmentId segment = kSystemMemory;  // 0 = not resident
  std::uint64_t offset = 0;
  std::unique_ptr<DmaMemory> owned_backing;  // unique_ptr: operations point at it across moves
  const DmaMemory* backing = nullptr;        // owned_backing or the ExistingSysMem memory
  bool backing_current = false;              // backing holds the current content
  Content content = Content::Undefined;
  bool pinned = false;
  std::uint32_t locks = 0;
  RingFence last_use;
  RingFence paging_fence;                    // last paging buffer that moved or wrote it
  std::uint64_t stamp = 0;                   // request that is placing it (never evict those)
  std::list<std::uint32_t>::iterator lru;

  bool resident() const { return segment != kSystemMemory; }
  bool evictable() const { return !pinned && locks == 0; }
  bool is_context_allocation() const { return owner.kind != AllocationKind::Standard; }
};

// ---------------------------------------------------------------- creation

Result<std::unique_ptr<MemoryManager>> MemoryManager::create(MemoryManagerConfig config, PagingExecutor& executor,
                                                             SystemMemory& system_memory) {
  const std::uint64_t page = config.page_size;
  if (!is_pow2(page)) return Error::invalid("page size {} is not a power of two", page);
  if (config.segments.size() > kMaxSegmentId)
    return Error::invalid("{} segments; segment IDs are 5-bit, at most {}", config.segments.size(), kMaxSegmentId);
  if (config.max_transfer_piece < page || config.max_transfer_piece % page != 0)
    return Error::invalid("max_transfer_piece {} is not a positive multiple of the page size",
                          config.max_transfer_piece);
  for (std::size_t i = 0; i < config.segments.size(); ++i) {
    auto& d = config.segments[i];
    const std::size_t id = i + 1;
    if (d.size == 0 || d.size % page != 0)
      return Error::invalid("segment {}: Size {:#x} is not a positive multiple of the page size", id, d.size);
    if (d.base_address % page != 0)
      return Error::invalid("segment {}: BaseAddress {:#x} is not page aligned", id, d.base_address);
    if (d.flags.value & ~SegmentFlags::kDefined)
      return Error::invalid("segment {}: Flags {:#x} set undefined bits {:#x}", id, d.flags.value,
                            d.flags.value & ~SegmentFlags::kDefined);
    if (d.flags.value & SegmentFlags::kAgp) return Error::unsupported("segment {}: Agp segments are not supported", id);
    if (d.flags.cache_coherent() && !d.is_aperture())
      return Error::invalid("segment {}: CacheCoherent is only valid with Aperture", id);
    if (d.commit_limit == 0) d.commit_limit = d.size;
    if (!d.is_aperture() && d.commit_limit != d.size)
      return Error::invalid("segment {}: CommitLimit {:#x} of a memory segment must equal Size {:#x}", id,
                            d.commit_limit, d.size);
    if (d.commit_limit > d.size)
      return Error::invalid("segment {}: CommitLimit {:#x} exceeds Size {:#x}", id, d.commit_limit, d.size);
    if (d.flags.use_banking()) {
      if (d.bank_range_table.empty()) return Error::invalid("segment {}: UseBanking without a bank range table", id);
      std::uint64_t prev = 0;
      for (std::uint64_t end : d.bank_range_table) {
        if (end <= prev || end > d.size)
          return Error::invalid("segment {}: bank end {:#x} not increasing inside the segment", id, end);
        prev = end;
      }
    } else if (!d.bank_range_table.empty()) {
      return Error::invalid("segment {}: bank range table given without UseBanking", id);
    }
    for (std::size_t j = 0; j < i; ++j) {
      const auto& o = config.segments[j];
      if (d.base_address < o.end_address() && o.base_address < d.end_address())
        return Error::invalid("segments {} and {} overlap in the GPU address space", j + 1, id);
    }
  }
  return std::unique_ptr<MemoryManager>(new MemoryManager(std::move(config), executor, system_memory));
}

MemoryManager::MemoryManager(MemoryManagerConfig config, PagingExecutor& executor, SystemMemory& system_memory)
    : config_(std::move(config)),
      executor_(executor),
      system_(system_memory),
      tag_(detail::next_handle_tag() % kTagMask + 1) {
  segments_.reserve(config_.segments.size());
  for (const auto& d : config_.segments)
    segments_.push_back(Segment{d, SegmentAllocator(d.size, config_.page_size), {}});
}

MemoryManager::~MemoryManager() = default;

// ---------------------------------------------------------------- validation

Status MemoryManager::validate(const kmd::AllocationInfo& info) const {
  const auto& f = info.flags;
  const std::uint32_t all = SegmentSet((1u << segments_.size()) - 1u).bits() | (segments_.size() == 32 ? ~0u : 0u);
  SegmentSet apertures;
  for (SegmentId id = 1; id <= segments_.size(); ++id)
    if (segment(id).is_aperture()) apertures = apertures | SegmentSet::of(id);
  const SegmentSet supported = info.supported_read_segments | info.supported_write_segments;

  if (info.size == 0) return Error::invalid("AllocationInfo.Size is 0");
  if (info.size > ~std::uint64_t{0} - config_.page_size)
    return Error::invalid("AllocationInfo.Size {:#x} overflows when rounded to the page size", info.size);
  if (info.alignment != 0 && !is_pow2(info.alignment))
    return Error::invalid("AllocationInfo.Alignment {} is not a power of two", info.alignment);
  if (info.priority == 0)
    return Error::invalid("AllocationInfo.AllocationPriority is 0 (invalid; use kPriorityNormal)");
  if (f.value & ~AllocationInfoFlags::kDefined)
    return Error::invalid("AllocationInfo.Flags {:#x} set undefined bits {:#x}", f.value,
                          f.value & ~AllocationInfoFlags::kDefined);
  for (auto [name, set] : {std::pair{"SupportedReadSegmentSet", info.supported_read_segments},
                           std::pair{"SupportedWriteSegmentSet", info.supported_write_segments},
                           std::pair{"EvictionSegmentSet", info.eviction_segments}})
    if (set.bits() & ~all)
      return Error::invalid("AllocationInfo.{} {:#x} names segments that do not exist (adapter has {})", name,
                            set.bits(), segments_.size());
  if (supported.empty())
    return Error::invalid(
        "AllocationInfo.SupportedReadSegmentSet and SupportedWriteSegmentSet are both 0: the GPU could never reach it");
  for (auto [name, set] : {std::pair{"SupportedReadSegmentSet", info.supported_read_segments},
                           std::pair{"SupportedWriteSegmentSet", info.supported_write_segments},
                           std::pair{"EvictionSegmentSet", info.eviction_segments}})
    if (!(set & config_.kernel_segments).empty())
      return Error::invalid(
          "AllocationInfo.{} {:#x} names segment {}, the kernel's DMA-buffer segment: allocations cannot live there",
          name, set.bits(), (set & config_.kernel_segments).first());
  if (!info.eviction_segments.without(apertures).empty())
    return Error::invalid("AllocationInfo.EvictionSegmentSet {:#x} names memory segment {} (aperture segments only)",
                          info.eviction_segments.bits(), info.eviction_segments.without(apertures).first());
  for (SegmentId id : info.eviction_segments.ids())
    if (segment(id).flags.value & SegmentFlags::kPitchAlignment)
      return Error::invalid("AllocationInfo.EvictionSegmentSet names segment {}, a PitchAlignment segment", id);

  // Preferences: at most five, highest first, no gaps, only from the supported sets.
  const auto& pref = info.preferred_segment;
  if (pref.value & kmd::SegmentPreference::kReservedMask)
    return Error::invalid("AllocationInfo.PreferredSegment {:#x} sets reserved bits 30-31", pref.value);
  bool ended = false;
  for (unsigned slot = 0; slot < kmd::SegmentPreference::kSlots; ++slot) {
    const SegmentId id = pref.segment(slot);
    if (id == 0) {
      ended = true;
      continue;
    }
    if (ended)
      return Error::invalid("AllocationInfo.PreferredSegment slot {} names segment {} after an empty slot", slot, id);
    if (!supported.contains(id))
      return Error::invalid("AllocationInfo.PreferredSegment slot {} names segment {}, not in the supported sets {:#x}",
                            slot, id, supported.bits());
  }
  for (unsigned slot = 0; slot < kmd::BankPreference::kSlots; ++slot) {
    const std::uint32_t bank = info.hinted_bank.bank(slot);
    if (bank == 0) continue;
    const SegmentId first = pref.segment(0);
    if (first == 0 || !segment(first).flags.use_banking())
      return Error::invalid(
          "AllocationInfo.HintedBank slot {} names bank {}, but the most preferred segment {} has no banks", slot, bank,
          first);
    if (bank > segment(first).bank_count())
      return Error::invalid("AllocationInfo.HintedBank slot {} names bank {}; segment {} has {} banks", slot, bank,
                            first, segment(first).bank_count());
  }

  // Flag combinations (DXGK_ALLOCATIONINFOFLAGS remarks).
  using F = AllocationInfoFlags;
  if (f.has(F::kCached) && !f.has(F::kCpuVisible))
    return Error::invalid("AllocationInfo.Flags: Cached requires CpuVisible");
  if (f.has(F::kPermanentSysMem) && !f.has(F::kCpuVisible))
    return Error::invalid("AllocationInfo.Flags: PermanentSysMem requires CpuVisible");
  if (f.has(F::kProtected) && (f.value & (F::kPermanentSysMem | F::kExistingSysMem | F::kExistingKernelSysMem)))
    return Error::invalid(
        "AllocationInfo.Flags: Protected excludes PermanentSysMem, ExistingSysMem and ExistingKernelSysMem");
  if (f.has(F::kExistingSysMem) && f.has(F::kExistingKernelSysMem))
    return Error::invalid("AllocationInfo.Flags: ExistingSysMem and ExistingKernelSysMem are mutually exclusive");
  if ((f.value & (F::kExistingSysMem | F::kExistingKernelSysMem)) && f.has(F::kPermanentSysMem))
    return Error::invalid("AllocationInfo.Flags: ExistingSysMem/ExistingKernelSysMem exclude PermanentSysMem");
  if (f.has(F::kUseAlternateVA))
    return Error::invalid("AllocationInfo.Flags: UseAlternateVA is only valid on the primary");
  if (f.value & (F::kLinkMirrored | F::kLinkInstanced))
    return Error::invalid("AllocationInfo.Flags: LinkMirrored/LinkInstanced need a linked display adapter");
  const bool lives_in_system = f.value & (F::kPermanentSysMem | F::kExistingSysMem | F::kExistingKernelSysMem);
  if (lives_in_system && !supported.without(apertures).empty())
    return Error::invalid(
        "AllocationInfo.Flags: a system-memory allocation (PermanentSysMem/ExistingSysMem) may "
        "only use aperture segments; supported sets {:#x} name memory segment {}",
        supported.bits(), supported.without(apertures).first());
  const bool existing = f.value & (F::kExistingSysMem | F::kExistingKernelSysMem);
  if (existing) {
    const DmaMemory* m = info.existing_memory;
    if (m == nullptr || !*m) return Error::invalid("AllocationInfo.Flags: ExistingSysMem without existing memory");
    if (m->bus_addr() % config_.page_size != 0 || m->size() < round_up(info.size, config_.page_size))
      return Error::invalid(
          "AllocationInfo: existing memory at {:#x} ({} bytes) is not page aligned or smaller than "
          "the page-rounded Size {}",
          m->bus_addr(), m->size(), round_up(info.size, config_.page_size));
  } else if (info.existing_memory != nullptr) {
    return Error::invalid("AllocationInfo: existing memory given without ExistingSysMem/ExistingKernelSysMem");
  }
  const std::uint64_t size = round_up(info.size, config_.page_size);
  bool fits_somewhere = false;
  for (SegmentId id : supported.ids())
    fits_somewhere |= size <= (segment(id).is_aperture() ? std::min(segment(id).commit_limit, config_.aperture_commit_limit)
                                                         : segment(id).size);
  if (!fits_somewhere)
    return Error::make(Errc::OutOfMemory, Touched::Nothing,
                       "AllocationInfo.Size {:#x} is larger than every supported segment ({:#x})", size,
                       supported.bits());
  return ok_status();
}

Result<AllocationHandle> MemoryManager::create_allocation(const kmd::AllocationInfo& info, const AllocationOwner& owner) {
  SGPU_RETURN_IF_ERROR(validate(info));
  std::uint32_t index;
  if (!free_records_.empty()) {
    index = free_records_.back();
    free_records_.pop_back();
  } else {
    index = static_cast<std::uint32_t>(records_.size());
    records_.emplace_back();
  }
  Record& r = records_[index];
  r.live = true;
  r.info = info;
  r.size = round_up(info.size, config_.page_size);
  r.alignment = std::max<std::uint64_t>(info.alignment, config_.page_size);
  r.owner = owner;
  r.backing = info.existing_memory;
  r.backing_current = info.existing_memory != nullptr;
  r.content = info.existing_memory ? Content::Valid : Content::Undefined;
  ++live_;
  if (r.is_context_allocation()) context_allocations_.push_back(index);
  return handle_of(index);
}

AllocationHandle MemoryManager::handle_of(std::uint32_t index) const {
  return AllocationHandle{(std::uint64_t{tag_} << 52) | (std::uint64_t{records_[index].generation} << 32) | (index + 1)};
}

Result<std::uint32_t> MemoryManager::lookup(AllocationHandle h, const char* what) const {
  if (h.value == 0) return Error::invalid("{}: allocation handle 0 is null", what);
  if ((h.value >> 52) != tag_)
    return Error::invalid("{}: allocation handle {:#x} belongs to another adapter's memory manager", what, h.value);
  const std::uint64_t index = (h.value & 0xffffffffu) - 1;
  if (index >= records_.size() || !records_[index].live ||
      records_[index].generation != ((h.value >> 32) & kGenerationMask))
    return Error::invalid("{}: allocation handle {:#x} is not a live allocation (destroyed, or never made)", what,
                          h.value);
  return static_cast<std::uint32_t>(index);
}

// ---------------------------------------------------------------- paging primitives

Status MemoryManager::run(PagingBuffer& pb) {
  if (pb.empty()) {
    paged_.clear();
    return ok_status();
  }
  Status s = executor_.execute(pb);
  pb.operations.clear();
  // Paging runs ahead: what this buffer moved is busy until its fence completes (0: it ran).
  // Also after a failure: the buffer may be on the ring.
  const RingFence fence = executor_.last_paging_fence();
  if (fence > completed_)
    for (std::uint32_t i : paged_)
      if (records_[i].live) records_[i].paging_fence = std::max(records_[i].paging_fence, fence);
  paged_.clear();
  if (!s) {
    Error e = std::move(s).error();
    e.hardware_touched = true;
    return e;
  }
  return ok_status();
}

Status MemoryManager::wait_paged(std::uint32_t index, const char* what, std::chrono::nanoseconds timeout) {
  const RingFence fence = records_[index].paging_fence;
  if (fence <= completed_) return ok_status();
  if (Status s = executor_.wait_paging(fence, timeout); !s) {
    Error e = std::move(s).error();
    e.message = fmt::format("{}: allocation {:#x} waits for its paging fence {}: {}", what, handle_of(index).value,
                            fence, e.message);
    return e;
  }
  set_completed_fence(fence);  // fences complete in ring order: everything up to it is done
  return ok_status();
}

PagingLocation MemoryManager::location(const Record& r) const {
  if (!r.resident()) return PagingLocation{kSystemMemory, 0, r.backing, 0};
  return PagingLocation{r.segment, segment(r.segment).base_address + r.offset, nullptr, 0};
}

void MemoryManager::emit_transfer(const Record& r, const PagingLocation& src, const PagingLocation& dst, PagingBuffer& pb) {
  const std::uint64_t piece = config_.max_transfer_piece;
  auto advance = [](PagingLocation l, std::uint64_t by) {
    (l.segment == kSystemMemory ? l.system_offset : l.segment_address) += by;
    return l;
  };
  for (std::uint64_t done = 0; done < r.size; done += piece) {
    TransferOp t;
    t.allocation = r.info.driver_handle;
    t.transfer_offset = done;
    t.transfer_size = std::min(piece, r.size - done);
    t.source = advance(src, done);
    t.destination = advance(dst, done);
    t.flags.transfer_start = done == 0;
    t.flags.transfer_end = done + t.transfer_size == r.size;
    t.flags.allocation_is_idle = r.last_use <= completed_;
    pb.operations.emplace_back(t);
  }
}

Status MemoryManager::ensure_backing(Record& r) {
  if (r.backing != nullptr) return ok_status();
  auto mem = system_.allocate(r.size);
  if (!mem)
    return Error::make(Errc::OutOfMemory, Touched::Nothing,
                       "no system memory for the {}-byte backing store of allocation {:#x}: {}", r.size,
                       r.info.driver_handle, mem.error().message);
  r.owned_backing = std::make_unique<DmaMemory>(std::move(*mem));
  r.backing = r.owned_backing.get();
  r.backing_current = false;  // zeroed, but holds no content yet
  return ok_status();
}

// The CPU writes the fill pattern into the backing store: the aperture has no FILL.
void MemoryManager::fill_backing(Record& r) {
  const std::uint32_t p = config_.fill_pattern;
  std::byte* b = r.backing->bytes();
  if (p == 0) {
    std::memset(b, 0, r.size);
  } else {
    for (std::uint64_t i = 0; i < r.size; i += 4) std::memcpy(b + i, &p, 4);
  }
  r.backing_current = true;
}

void MemoryManager::touch(std::uint32_t index) {
  Record& r = records_[index];
  auto& lru = segments_[r.segment - 1].lru;
  lru.splice(lru.end(), lru, r.lru);
}

// Frees the segment range of a resident allocation (unmapping aperture pages first).
void MemoryManager::release_range(Record& r, PagingBuffer& pb) {
  Segment& s = segments_[r.segment - 1];
  if (s.desc.is_aperture()) {
    UnmapApertureSegmentOp u;
    u.device = r.owner.device;
    u.allocation = r.info.driver_handle;
    u.segment = r.segment;
    u.offset_in_pages = r.offset / config_.page_size;
    u.number_of_pages = r.size / config_.page_size;
    u.dummy_page = executor_.dummy_page();
    pb.operations.emplace_back(u);
    aperture_committed_ -= r.size;
  }
  s.allocator.free(r.offset, r.size);
  s.lru.erase(r.lru);
  r.segment = kSystemMemory;
  r.offset = 0;
}

// Moves a resident allocation out of its segment: to an eviction aperture segment when it has
// one with room (and we may), else to its backing store in system memory.
Status MemoryManager::evict_one(std::uint32_t index, PagingBuffer& pb, bool allow_eviction_segment) {
  Record& r = records_[index];
  Segment& from = segments_[r.segment - 1];
  SGPU_RETURN_IF_ERROR(ensure_backing(r));
  ++evictions_;
  paged_.push_back(index);
  if (from.desc.is_aperture()) {  // the bytes already live in the backing store
    release_range(r, pb);
    return ok_status();
  }
  const PagingLocation src = location(r);
  if (allow_eviction_segment) {
    for (SegmentId e : r.info.eviction_segments.ids()) {
      std::uint64_t offset = 0;
      if (e == r.segment || !try_range(r, e, false, 0, pb, offset)) continue;
      const SegmentId old_segment = r.segment;
      const std::uint64_t old_offset = r.offset;
      MapApertureSegmentOp m;
      m.device = r.owner.device;
      m.allocation = r.info.driver_handle;
      m.segment = e;
      m.offset_in_pages = offset / config_.page_size;
      m.number_of_pages = r.size / config_.page_size;
      m.pages = r.backing;
      m.cache_coherent = segment(e).flags.cache_coherent() && r.info.flags.has(AllocationInfoFlags::kCached);
      pb.operations.emplace_back(m);
      const PagingLocation dst{e, segment(e).base_address + offset, nullptr, 0};
      if (r.content == Content::Valid) {
        emit_transfer(r, src, dst, pb);
      } else {
        DiscardContentOp d{r.info.driver_handle, r.last_use <= completed_, old_segment, src.segment_address, r.size};
        pb.operations.emplace_back(d);
        fill_backing(r);
      }
      segments_[old_segment - 1].allocator.free(old_offset, r.size);
      segments_[old_segment - 1].lru.erase(r.lru);
      r.segment = e;
      r.offset = offset;
      r.backing_current = true;
      auto& lru = segments_[e - 1].lru;
      r.lru = lru.insert(lru.end(), index);
      return ok_status();
    }
  }
  if (r.content == Content::Valid) {
    emit_transfer(r, src, PagingLocation{kSystemMemory, 0, r.backing, 0}, pb);
    r.backing_current = true;
  } else {
    pb.operations.emplace_back(DiscardContentOp{r.info.driver_handle, r.last_use <= completed_, r.segment,
                                                src.segment_address, r.size});
    r.backing_current = false;
  }
  release_range(r, pb);
  return ok_status();
}

// Finds room for `r` in `seg` (aperture: also within the commit limits), evicting least recently
// used allocations of that segment when allowed. Reserves the range; `offset` receives it.
bool MemoryManager::try_range(Record& r, SegmentId seg, bool allow_evict, std::uint64_t stamp, PagingBuffer& pb,
                              std::uint64_t& offset) {
  Segment& s = segments_[seg - 1];
  const bool aperture = s.desc.is_aperture();
  auto commit_ok = [&] {
    if (!aperture) return true;
    std::uint64_t in_segment = s.allocator.used_bytes();
    return in_segment + r.size <= s.desc.commit_limit && aperture_committed_ + r.size <= config_.aperture_commit_limit;
  };
  auto attempt = [&]() -> bool {
    if (!commit_ok()) return false;
    const bool from_end = r.info.flags.has(AllocationInfoFlags::kFromEndOfSegment) ||
                          (r.info.preferred_segment.segment(0) == seg && r.info.preferred_segment.from_end(0));
    // Hinted banks first (they apply to the most preferred segment), then anywhere.
    if (r.info.preferred_segment.segment(0) == seg && s.desc.flags.use_banking()) {
      for (unsigned slot = 0; slot < kmd::BankPreference::kSlots; ++slot) {
        const std::uint32_t bank = r.info.hinted_bank.bank(slot);
        if (bank == 0) break;
        const auto [begin, end] = s.desc.bank_range(bank);
        SegmentAllocator::Request req{r.size, r.alignment, r.info.hinted_bank.top_down(slot), begin, end};
        if (auto at = s.allocator.allocate(req)) return offset = *at, true;
      }
    }
    SegmentAllocator::Request req{r.size, r.alignment, from_end};
    if (auto at = s.allocator.allocate(req)) return offset = *at, true;
    return false;
  };
  bool placed = attempt();
  while (!placed && allow_evict) {
    // Victim: least recently used, idle before busy, never pinned/locked/in this request.
    std::optional<std::uint32_t> victim;
    for (int pass = 0; pass < 2 && !victim; ++pass)
      for (std::uint32_t i : s.lru) {
        const Record& v = records_[i];
        if (!v.evictable() || (stamp != 0 && v.stamp == stamp)) continue;
        if (pass == 0 && v.last_use > completed_) continue;
        victim = i;
        break;
      }
    if (!victim) break;
    // A victim evicted out of an aperture never goes to another aperture mid-placement.
    if (!evict_one(*victim, pb, !aperture)) break;
    placed = attempt();
  }
  if (placed && aperture) aperture_committed_ += r.size;
  return placed;
}

// Brings a non-resident allocation (or one resident in the wrong segment) into `seg`.
bool MemoryManager::page_in(std::uint32_t index, SegmentId seg, bool allow_evict, std::uint64_t stamp,
                            PagingBuffer& pb) {
  Record& r = records_[index];
  const bool aperture = segment(seg).is_aperture();
  if (aperture && !ensure_backing(r)) return false;
  std::uint64_t offset = 0;
  if (!try_range(r, seg, allow_evict, stamp, pb, offset)) return false;
  const PagingLocation dst{seg, segment(seg).base_address + offset, nullptr, 0};
  const bool init_context = r.is_context_allocation() && r.content == Content::Undefined;
  if (aperture) {
    if (!r.backing_current && !init_context) fill_backing(r);
    MapApertureSegmentOp m;
    m.device = r.owner.device;
    m.allocation = r.info.driver_handle;
    m.segment = seg;
    m.offset_in_pages = offset / config_.page_size;
    m.number_of_pages = r.size / config_.page_size;
    m.pages = r.backing;
    m.cache_coherent = segment(seg).flags.cache_coherent() && r.info.flags.has(AllocationInfoFlags::kCached);
    pb.operations.emplace_back(m);
    r.backing_current = true;
  } else if (r.content == Content::Valid) {
    emit_transfer(r, PagingLocation{kSystemMemory, 0, r.backing, 0}, dst, pb);
    r.backing_current = false;
  } else if (!init_context) {
    pb.operations.emplace_back(FillOp{r.info.driver_handle, r.size, config_.fill_pattern, dst});
    r.content = Content::FillPattern;
    r.backing_current = false;
  }
  if (init_context) {
    // Only CpuVisible + Protected allocations restricted to aperture segments get a CPU address.
    const auto& f = r.info.flags;
    bool aperture_only = true;
    for (SegmentId id : (r.info.supported_read_segments | r.info.supported_write_segments).ids())
      aperture_only &= segment(id).is_aperture();
    void* cpu = aperture && aperture_only && f.has(AllocationInfoFlags::kCpuVisible) && f.has(AllocationInfoFlags::kProtected)
                    ? r.backing->cpu()
                    : nullptr;
    pb.operations.emplace_back(InitContextResourceOp{r.info.driver_handle, r.size, dst, cpu, config_.context_init_pattern});
    r.content = Content::Valid;
    r.backing_current = aperture;
  }
  r.segment = seg;
  r.offset = offset;
  auto& lru = segments_[seg - 1].lru;
  r.lru = lru.insert(lru.end(), index);
  paged_.push_back(index);
  return true;
}

bool MemoryManager::acceptable(const Record& r, SegmentId seg, bool write) const {
  if (seg == kSystemMemory) return false;
  const SegmentSet ok = write ? r.info.supported_write_segments
                              : (r.info.supported_read_segments | r.info.supported_write_segments);
  return ok.contains(seg);
}

std::vector<std::uint32_t> MemoryManager::scope_allocations(const ResidencyScope& scope) const {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i : context_allocations_) {
    const Record& r = records_[i];
    if (!r.live) continue;
    if ((r.owner.kind == AllocationKind::DeviceContext && scope.device != 0 && r.owner.device == scope.device) ||
        (r.owner.kind == AllocationKind::GpuContext && scope.context != 0 && r.owner.context == scope.context))
      out.push_back(i);
  }
  return out;
}

// ---------------------------------------------------------------- residency

Result<std::vector<Placement>> MemoryManager::make_resident(const std::vector<AllocationListEntry>& list,
                                                            const ResidencyScope& scope) {
  // 1. Check everything before touching anything.
  struct Need {
    std::uint32_t index;
    bool write;
  };
  std::vector<Need> needs;
  needs.reserve(list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    auto idx = lookup(list[i].allocation, "make_resident");
    if (!idx) {
      Error e = std::move(idx).error();
      e.message = fmt::format("allocation list entry {}: {}", i, e.message);
      return e;
    }
    const Record& r = records_[*idx];
    if (list[i].write && r.info.supported_write_segments.empty())
      return Error::invalid(
          "allocation list entry {}: WriteOperation on allocation {:#x} whose "
          "SupportedWriteSegmentSet is 0",
          i, list[i].allocation.value);
    auto dup = std::find_if(needs.begin(), needs.end(), [&](const Need& n) { return n.index == *idx; });
    if (dup != needs.end())
      dup->write |= list[i].write;
    else
      needs.push_back({*idx, list[i].write});
  }
  for (std::uint32_t i : scope_allocations(scope))
    if (std::none_of(needs.begin(), needs.end(), [&](const Need& n) { return n.index == i; })) needs.push_back({i, true});
  for (const Need& n : needs) {
    const Record& r = records_[n.index];
    if (!acceptable(r, r.segment, n.write) && r.locks != 0)
      return Error::busy("allocation {:#x} is locked for CPU access and must move to be used",
                         handle_of(n.index).value);
  }

  // 2. Place, evicting as needed; everything of this request is protected by its stamp.
  const std::uint64_t stamp = ++stamp_;
  for (const Need& n : needs) records_[n.index].stamp = stamp;
  PagingBuffer pb;
  for (const Need& n : needs) {
    Record& r = records_[n.index];
    if (acceptable(r, r.segment, n.write)) continue;
    if (r.resident()) {
      if (auto s = evict_one(n.index, pb, false); !s) {
        (void)run(pb);
        Error e = std::move(s).error();
        e.hardware_touched = true;
        return e;
      }
    }
    const SegmentSet allowed = n.write ? r.info.supported_write_segments
                                       : (r.info.supported_read_segments | r.info.supported_write_segments);
    std::vector<SegmentId> preferred;
    for (unsigned slot = 0; slot < kmd::SegmentPreference::kSlots; ++slot) {
      const SegmentId id = r.info.preferred_segment.segment(slot);
      if (id != 0 && allowed.contains(id)) preferred.push_back(id);
    }
    std::vector<SegmentId> others;
    for (SegmentId id : allowed.ids())
      if (std::find(preferred.begin(), preferred.end(), id) == preferred.end()) others.push_back(id);
    // Memory segments before apertures among the non-preferred ones.
    std::stable_sort(others.begin(), others.end(),
                     [&](SegmentId a, SegmentId b) { return !segment(a).is_aperture() && segment(b).is_aperture(); });
    bool placed = false;
    for (SegmentId id : preferred)
      if ((placed = page_in(n.index, id, true, stamp, pb))) break;
    for (int evicting = 0; evicting < 2 && !placed; ++evicting)
      for (SegmentId id : others)
        if ((placed = page_in(n.index, id, evicting == 1, stamp, pb))) break;
    if (!placed) {
      const bool touched = !pb.empty();
      (void)run(pb);
      return Error{
          Errc::OutOfMemory,
          fmt::format("no room for allocation {:#x} ({} bytes) in any of its segments {:#x}, even after evicting "
                      "every idle, unpinned allocation not in this submission",
                      handle_of(n.index).value, r.size, allowed.bits()),
          Touched{touched}};
    }
  }

  // 3. Mark use; written allocations now hold content that eviction must keep.
  for (const Need& n : needs) {
    Record& r = records_[n.index];
    touch(n.index);
    if (n.write) {
      r.content = Content::Valid;
      if (!segment(r.segment).is_aperture()) r.backing_current = false;
    }
    if ((r.info.flags.value & (AllocationInfoFlags::kOverlay | AllocationInfoFlags::kCapture)) != 0) r.pinned = true;
  }
  SGPU_RETURN_IF_ERROR(run(pb));
  std::vector<Placement> out;
  out.reserve(list.size());
  for (const auto& e : list) {
    const Record& r = records_[*lookup(e.allocation, "make_resident")];
    out.push_back(Placement{r.segment, segment(r.segment).base_address + r.offset});
  }
  return out;
}

void MemoryManager::note_submitted(const std::vector<AllocationListEntry>& list, const ResidencyScope& scope,
                                   RingFence fence) {
  for (const auto& e : list)
    if (auto idx = lookup(e.allocation, "note_submitted")) records_[*idx].last_use = std::max(records_[*idx].last_use, fence);
  for (std::uint32_t i : scope_allocations(scope)) records_[i].last_use = std::max(records_[i].last_use, fence);
}

void MemoryManager::set_completed_fence(RingFence fence) {
  completed_ = std::max(completed_, fence);
  deferred_.erase(std::remove_if(deferred_.begin(), deferred_.end(), [&](auto& d) { return d.first <= completed_; }),
                  deferred_.end());
}

// ---------------------------------------------------------------- explicit operations

Status MemoryManager::evict(AllocationHandle h) {
  SGPU_ASSIGN_OR_RETURN(auto idx, lookup(h, "evict"));
  Record& r = records_[idx];
  if (!r.resident()) return ok_status();
  if (!r.evictable()) return Error::busy("evict: allocation {:#x} is {}", h.value, r.pinned ? "pinned" : "locked");
  PagingBuffer pb;
  SGPU_RETURN_IF_ERROR(evict_one(idx, pb, true));
  return run(pb);
}

Result<Placement> MemoryManager::pin(AllocationHandle h) {
  SGPU_ASSIGN_OR_RETURN(auto placed, make_resident({AllocationListEntry{h, false}}));
  records_[*lookup(h, "pin")].pinned = true;
  return placed.front();
}

Status MemoryManager::unpin(AllocationHandle h) {
  SGPU_ASSIGN_OR_RETURN(auto idx, lookup(h, "unpin"));
  if (!records_[idx].pinned) return Error::invalid("unpin: allocation {:#x} is not pinned", h.value);
  records_[idx].pinned = false;
  return ok_status();
}

Result<void*> MemoryManager::lock(AllocationHandle h, std::chrono::nanoseconds timeout) {
  SGPU_ASSIGN_OR_RETURN(auto idx, lookup(h, "lock"));
  Record& r = records_[idx];
  if (!r.info.flags.has(AllocationInfoFlags::kCpuVisible))
    return Error::invalid("lock: allocation {:#x} was not created CpuVisible", h.value);
  if (r.last_use > completed_)
    return Error::busy("lock: allocation {:#x} is used by fence {} (completed {})", h.value, r.last_use, completed_);
  void* cpu = nullptr;
  PagingBuffer pb;
  if (r.resident() && !segment(r.segment).is_aperture()) {
    cpu = executor_.cpu_address(r.segment, r.offset, r.size);
    if (cpu == nullptr) {
      if (!r.evictable()) return Error::busy("lock: allocation {:#x} is pinned where the CPU cannot reach it", h.value);
      SGPU_RETURN_IF_ERROR(evict_one(idx, pb, false));  // the CPU reaches it in system memory
    }
  }
  if (cpu == nullptr) {
    SGPU_RETURN_IF_ERROR(ensure_backing(r));
    SGPU_RETURN_IF_ERROR(run(pb));
  }
  // The CPU sees the bytes once the paging that moved or wrote them ran: wait for that fence
  // (this allocation's, not everything on the ring).
  SGPU_RETURN_IF_ERROR(wait_paged(idx, "lock", timeout));
  if (cpu == nullptr) {
    if (!r.backing_current) fill_backing(r);
    cpu = r.backing->cpu();
  }
  r.content = Content::Valid;
  ++r.locks;
  return cpu;
}

Status MemoryManager::unlock(AllocationHandle h) {
  SGPU_ASSIGN_OR_RETURN(auto idx, lookup(h, "unlock"));
  if (records_[idx].locks == 0) return Error::invalid("unlock: allocation {:#x} is not locked", h.value);
  --records_[idx].locks;
  return ok_status();
}

Status MemoryManager::destroy_allocation(AllocationHandle h) {
  SGPU_ASSIGN_OR_RETURN(auto idx, lookup(h, "destroy_allocation"));
  Record& r = records_[idx];
  if (r.locks != 0) return Error::busy("destroy_allocation: allocation {:#x} is locked", h.value);
  PagingBuffer pb;
  if (r.resident()) release_range(r, pb);
  Status s = run(pb);
  if (r.owned_backing) {
    // The GPU may still use it: rendering up to last_use, paging (a transfer into or out of it,
    // a MAP of its pages) up to paging_fence.
    const RingFence busy_until = std::max(r.last_use, r.paging_fence);
    if (busy_until > completed_) deferred_.emplace_back(busy_until, std::move(r.owned_backing));
    r.owned_backing.reset();
  }
  if (r.is_context_allocation())
    context_allocations_.erase(std::find(context_allocations_.begin(), context_allocations_.end(), idx));
  const std::uint32_t generation = (r.generation & kGenerationMask) == kGenerationMask ? 1 : r.generation + 1;
  r = Record{};
  r.generation = generation;
  free_records_.push_back(idx);
  --live_;
  return s;
}

void MemoryManager::destroy_owned_by(AllocationKind kind, std::uint64_t device, std::uint64_t context) {
  for (std::uint32_t i = 0; i < records_.size(); ++i) {
    Record& r = records_[i];
    if (!r.live || r.owner.kind != kind || r.owner.device != device) continue;
    if (kind == AllocationKind::GpuContext && r.owner.context != context) continue;
    r.locks = 0;
    (void)destroy_allocation(handle_of(i));
  }
}

Result<AllocationState> MemoryManager::query(AllocationHandle h) const {
  SGPU_ASSIGN_OR_RETURN(auto idx, lookup(h, "query"));
  const Record& r = records_[idx];
  AllocationState s;
  s.size = r.size;
  s.alignment = r.alignment;
  if (r.resident()) s.placement = Placement{r.segment, segment(r.segment).base_address + r.offset};
  s.segment_offset = r.offset;
  s.content = r.content;
  s.has_backing_store = r.backing != nullptr;
  s.pinned = r.pinned;
  s.lock_count = r.locks;
  s.last_use = r.last_use;
  s.paging_fence = r.paging_fence;
  s.owner = r.owner;
  return s;
}

}  // namespace sgpu::vidmm
