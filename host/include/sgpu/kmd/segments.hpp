// Segments of the GPU address space (DXGK_SEGMENTDESCRIPTOR, DXGK_SEGMENTFLAGS) and the small
// bit-packed types that name them: segment sets, segment preferences, bank preferences.
//
// Segment IDs are 1-based: bit (ID - 1) of a segment set names segment ID; ID 0 is never a real
// segment, it means "system memory" (or "no preference"). Preferences pack 5-bit IDs, so the
// largest usable ID is 31.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <utility>
#include <vector>

#include "sgpu/types.hpp"

namespace sgpu::kmd {

/// A set of segment IDs, bit (ID - 1) per segment (DmaBufferSegmentSet, SupportedReadSegmentSet...).
class SegmentSet {
 public:
  constexpr SegmentSet() = default;
  constexpr explicit SegmentSet(std::uint32_t bits) : bits_(bits) {}
  static constexpr SegmentSet of(SegmentId id) {
    return SegmentSet(id >= 1 && id <= 32 ? std::uint32_t{1} << (id - 1) : 0u);
  }
  constexpr bool contains(SegmentId id) const { return id >= 1 && id <= 32 && (bits_ >> (id - 1)) & 1u; }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr std::uint32_t bits() const { return bits_; }
  constexpr SegmentSet operator|(SegmentSet o) const { return SegmentSet(bits_ | o.bits_); }
  constexpr SegmentSet operator&(SegmentSet o) const { return SegmentSet(bits_ & o.bits_); }
  constexpr SegmentSet without(SegmentSet o) const { return SegmentSet(bits_ & ~o.bits_); }
  constexpr bool operator==(SegmentSet o) const { return bits_ == o.bits_; }
  constexpr bool operator!=(SegmentSet o) const { return bits_ != o.bits_; }
  /// Lowest ID in the set, 0 if empty.
  constexpr SegmentId first() const {
    for (SegmentId id = 1; id <= 32; ++id)
      if (contains(id)) return id;
    return 0;
  }
  /// IDs in ascending order.
  std::vector<SegmentId> ids() const {
    std::vector<SegmentId> v;
    for (SegmentId id = 1; id <= 32; ++id)
      if (contains(id)) v.push_back(id);
    return v;
  }

 private:
  std::uint32_t bits_ = 0;
};

/// DXGK_SEGMENTFLAGS. Bit positions as in the header; bits above kDefined must be 0.
struct SegmentFlags {
  static constexpr std::uint32_t kAperture = 1u << 0;
  static constexpr std::uint32_t kAgp = 1u << 1;
  static constexpr std::uint32_t kCpuVisible = 1u << 2;
  static constexpr std::uint32_t kUseBanking = 1u << 3;
  static constexpr std::uint32_t kCacheCoherent = 1u << 4;
  static constexpr std::uint32_t kPitchAlignment = 1u << 5;
  static constexpr std::uint32_t kPopulatedFromSystemMemory = 1u << 6;
  static constexpr std::uint32_t kPreservedDuringStandby = 1u << 7;
  static constexpr std::uint32_t kPreservedDuringHibernate = 1u << 8;
  static constexpr std::uint32_t kPartiallyPreservedDuringHibernate = 1u << 9;
  static constexpr std::uint32_t kDirectFlip = 1u << 10;
  /// The WDDM 1.x flags; later ones (Use64KBPages, ...) belong to WDDM 2 and are rejected.
  static constexpr std::uint32_t kDefined = (1u << 11) - 1;

  std::uint32_t value = 0;
  constexpr bool aperture() const { return value & kAperture; }
  constexpr bool cpu_visible() const { return value & kCpuVisible; }
  constexpr bool use_banking() const { return value & kUseBanking; }
  constexpr bool cache_coherent() const { return value & kCacheCoherent; }
};

/// DXGK_SEGMENTDESCRIPTOR: one segment as the driver reports it to the memory manager.
struct SegmentDescriptor {
  std::uint64_t base_address = 0;            ///< GPU address of offset 0 (BaseAddress)
  std::uint64_t cpu_translated_address = 0; ///< bus (BAR) address; CpuVisible memory segments only
  std::uint64_t size = 0;                    ///< bytes, a multiple of the page size
  std::uint64_t commit_limit = 0;            ///< == size for memory segments; <= size for apertures
  SegmentFlags flags;
  /// End offsets of the banks (pBankRangeTable); banks are contiguous from offset 0, the last
  /// one ends at `size` and need not be listed. Empty without UseBanking.
  std::vector<std::uint64_t> bank_range_table;

  bool is_aperture() const { return flags.aperture(); }
  std::uint64_t end_address() const { return base_address + size; }
  std::uint32_t bank_count() const {
    if (!flags.use_banking()) return 0;
    const bool last_listed = !bank_range_table.empty() && bank_range_table.back() == size;
    return static_cast<std::uint32_t>(bank_range_table.size() + (last_listed ? 0 : 1));
  }
  /// [begin, end) offsets of bank `bank` (1-based).
  std::pair<std::uint64_t, std::uint64_t> bank_range(std::uint32_t bank) const {
    const std::uint64_t begin = bank <= 1 ? 0 : bank_range_table[bank - 2];
    const std::uint64_t end = bank - 1 < bank_range_table.size() ? bank_range_table[bank - 1] : size;
    return {begin, end};
  }
};

/// DXGK_SEGMENTPREFERENCE (= D3DDDI_SEGMENTPREFERENCE): up to five segment IDs, highest priority
/// first, each with a direction bit (1 = allocate from the end of the segment); bits 30-31 reserved.
struct SegmentPreference {
  static constexpr unsigned kSlots = 5;
  static constexpr std::uint32_t kReservedMask = 0xC0000000u;
  std::uint32_t value = 0;

  constexpr SegmentId segment(unsigned slot) const { return (value >> (6 * slot)) & 0x1f; }
  constexpr bool from_end(unsigned slot) const { return (value >> (6 * slot + 5)) & 1u; }
  /// Builds a preference from IDs in priority order (at most five; extra ones are dropped).
  static SegmentPreference of(std::initializer_list<SegmentId> ids, bool from_end = false) {
    SegmentPreference p;
    unsigned slot = 0;
    for (SegmentId id : ids) {
      if (slot == kSlots) break;
      p.value |= ((id & 0x1f) | (from_end ? 0x20u : 0u)) << (6 * slot++);
    }
    return p;
  }
};

/// DXGK_SEGMENTBANKPREFERENCE: up to four 1-based bank IDs (7 bits, 0 = none), each with a
/// direction bit (1 = top-down). Applies to the most preferred segment.
struct BankPreference {
  static constexpr unsigned kSlots = 4;
  std::uint32_t value = 0;
  constexpr std::uint32_t bank(unsigned slot) const { return (value >> (8 * slot)) & 0x7f; }
  constexpr bool top_down(unsigned slot) const { return (value >> (8 * slot + 7)) & 1u; }
  static BankPreference of(std::initializer_list<std::uint32_t> banks, bool top_down = false) {
    BankPreference p;
    unsigned slot = 0;
    for (std::uint32_t b : banks) {
      if (slot == kSlots) break;
      p.value |= ((b & 0x7f) | (top_down ? 0x80u : 0u)) << (8 * slot++);
    }
    return p;
  }
};

}  // namespace sgpu::kmd
