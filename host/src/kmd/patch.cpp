#include "sgpu/kmd/patch.hpp"

#include <array>
#include <cstddef>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "kmd/dma_pass.hpp"
#include "sgpu/gen/abi.hpp"

namespace sgpu::kmd {

namespace {

/// Little-endian 64-bit store at a byte offset (PatchOffset need only be 4-aligned).
void store64(std::byte* base, std::uint64_t offset, std::uint64_t value) {
  std::uint32_t d[2] = {static_cast<std::uint32_t>(value), static_cast<std::uint32_t>(value >> 32)};
  std::memcpy(base + offset, d, sizeof d);
}

void store32(std::byte* base, std::uint64_t offset, std::uint32_t value) { std::memcpy(base + offset, &value, 4); }


/// PatchLocation: SlotId is bits 0-23, bits 24-31 are Reserved.
constexpr std::uint32_t kSlotIdMask = 0x00ffffffu;

/// Entry `i` names an address field of the packet at its SplitOffset (SlotId = the field's
/// ordinal, PatchOffset = its low dword, as Render and Present write them), and what that packet
/// touches from allocation address + AllocationOffset stays inside the allocation, with the
/// alignment the device requires and write permission for a write. The packet is read from the
/// DMA buffer, i.e. what the engine will execute.
Status check_field(const PatchArgs& a, std::uint32_t i, const PatchLocation& e, const DxgkAllocationListEntry& al) {
  const auto* dma = static_cast<const std::byte*>(a.dma_buffer);
  if (e.split_offset % 4 != 0 || std::uint64_t{e.split_offset} + 4 > a.dma_size)
    return Error::invalid("patch: entry {}: SplitOffset {} is not a 4-aligned packet offset inside the {}-byte DMA buffer",
                          i, e.split_offset, a.dma_size);
  const auto* pkt = reinterpret_cast<const std::uint32_t*>(dma + e.split_offset);
  const abi::PacketInfo* p = abi::find_packet(abi::header_opcode(pkt[0]));
  const std::uint32_t dwords = abi::header_dwords(pkt[0]);
  if (p == nullptr || dwords < p->min_dwords || dwords > p->max_dwords ||
      std::uint64_t{e.split_offset} + 4ull * dwords > a.dma_size)
    return Error::invalid("patch: entry {}: SplitOffset {} holds header {:#010x}, not a whole packet of the DMA buffer",
                          i, e.split_offset, pkt[0]);
  const std::uint32_t slot = e.slot_id_and_reserved & kSlotIdMask;
  if ((e.slot_id_and_reserved & ~kSlotIdMask) != 0 || slot >= p->address_count)
    return Error::invalid("patch: entry {}: SlotId/Reserved {:#x} is not an address field of the {} at SplitOffset {}",
                          i, e.slot_id_and_reserved, p->name, e.split_offset);
  const abi::AddressField& field = p->addresses[slot];
  if (e.patch_offset != e.split_offset + 4 * field.dword)
    return Error::invalid("patch: entry {}: PatchOffset {} is not {} field '{}' (offset {}) of the packet at SplitOffset {}",
                          i, e.patch_offset, p->name, field.name, e.split_offset + 4 * field.dword, e.split_offset);
  const detail::Access acc = detail::access_of(field, pkt, dwords);
  if (acc.extent > al.size || e.allocation_offset > al.size - acc.extent)
    return Error::invalid(
        "patch: entry {}: {} field '{}' would touch bytes [{}, {}) of allocation-list element {}, which has {} bytes",
        i, p->name, field.name, e.allocation_offset, std::uint64_t{e.allocation_offset} + acc.extent,
        e.allocation_index, al.size);
  const std::uint64_t address = al.gpu_address + e.allocation_offset;
  if (address < al.gpu_address || address + acc.extent < address)
    return Error::invalid("patch: entry {}: address {:#x} + {} + {} bytes wraps past 2^64", i, al.gpu_address,
                          e.allocation_offset, acc.extent);
  if (address % acc.align != 0)
    return Error::invalid("patch: entry {}: address {:#x} is not {}-byte aligned as {} field '{}' requires", i, address,
                          acc.align, p->name, field.name);
  if (field.access == abi::AddressAccess::Write && !al.write)
    return Error::invalid("patch: entry {}: {} writes through allocation-list element {}, which lacks WriteOperation",
                          i, p->name, e.allocation_index);
  return ok_status();
}

// ------------------------------------------------------------------------ the quick check
// patch() first runs the quick check (quick_check, below) over the whole range. It only says
// "accepted" or "don't know": it takes the list as Render and Present write it — each packet's
// entries one after another, on its address fields in field order — and checks every rule of
// check_entry on each entry, but as compares ORed into one word (QuickLoop::bad) that is looked
// at once, after the last entry, so an entry costs loads, ORs and no branch. Only what decides
// which memory is read next is a branch: the header's place (inside the buffer, 4-aligned), the
// packet kind (one jump on the opcode to that kind's code, compiled from its row of the ABI
// table), the packet's fixed part inside the buffer, enough entries left. Anything else — a
// refusal, another order, an element this check leaves alone — makes check_entry run on every
// entry, which decides and names what it refuses. Nothing is written before one of the two has
// passed the whole range.

/// One allocation-list element as the quick check sees it, worked out once per call: an access
/// of `extent` bytes at AllocationOffset `o` passes iff o + extent < read_end (or write_end). The
/// ends are 0 — every access fails — for a null or non-resident element, a write through one
/// without WriteOperation, and an element left to check_entry (a GPU address not
/// kMaxFieldAlign-aligned, an allocation that reaches 2^64; a size of 2^64 - 1 makes the ends
/// wrap to 0). So one compare checks the range and the access (AllocationOffset is below 2^32 and
/// an extent at most 2^64 - 2^32: their sum does not wrap), no access inside the allocation wraps,
/// and the address has the field's alignment iff AllocationOffset has it.
struct QuickAllocation {
  // No member initializers: the table on the stack is not cleared per call (PaddedAllocationTable).
  std::uint64_t read_end;   ///< size + 1, or 0
  std::uint64_t write_end;  ///< size + 1 if the list allows writes, else 0
};
constexpr QuickAllocation kFailingAllocation{0, 0};

QuickAllocation quick_allocation(const DxgkAllocationListEntry& al) {
  if (!al.allocation || al.segment == kSystemMemory || al.gpu_address % detail::kMaxFieldAlign != 0 ||
      al.gpu_address > ~std::uint64_t{0} - al.size)
    return kFailingAllocation;
  return {al.size + 1, al.write ? al.size + 1 : 0};
}

/// Allocation lists up to this many elements (padded: one less) are worked out on the stack.
constexpr std::uint32_t kQuickStackAllocations = 64;

/// The call's allocation list as QuickAllocations, padded with failing elements; the stack table
/// is always whole (at least kQuickStackAllocations), so that its mask is a constant
/// (quick_loop<true>).
using QuickAllocations = detail::PaddedAllocationTable<QuickAllocation, kQuickStackAllocations>;

// PatchLocation as the quick check reads it: {AllocationIndex, SlotId} and {PatchOffset,
// SplitOffset} as one 64-bit word each.
static_assert(sizeof(PatchLocation) == 24 && offsetof(PatchLocation, allocation_index) == 0 &&
                  offsetof(PatchLocation, slot_id_and_reserved) == 4 &&
                  offsetof(PatchLocation, split_offset) == offsetof(PatchLocation, patch_offset) + 4,
              "the quick check reads two fields of PatchLocation as one 64-bit word");

/// The quick check's loop state (everything inlined into one loop, so it lives in registers).
struct QuickLoop {
  const PatchLocation* e;          ///< the packet's first entry
  const PatchLocation* end;        ///< the range's end
  const std::byte* dma;
  std::uint32_t dma_size;
  const QuickAllocation* allocations;
  std::uint32_t index_mask;
  std::uint64_t first_words = 0;   ///< OR of every entry's {AllocationIndex, SlotId ^ its field}
  std::uint64_t bad = 0;           ///< nonzero: some other rule is broken
};

/// The packet kinds the quick check takes: each address field (an 8-byte address) and what its
/// extent reads inside the packet's fixed part, which the check reads without the exact end.
template <std::size_t I>
constexpr bool quick_takes() {
  if constexpr (I >= abi::kPackets.size()) {
    return false;
  } else {
    constexpr const abi::PacketInfo& p = abi::kPackets[I];
    if (p.address_count == 0) return false;
    for (unsigned f = 0; f < p.address_count; ++f) {
      const abi::AddressField& field = p.addresses[f];
      if (4u * field.dword + 8 > 4u * p.min_dwords) return false;
      const unsigned reads = field.extent == abi::ExtentKind::Field  ? 1
                             : field.extent == abi::ExtentKind::Rect ? 3
                                                                     : 0;
      for (unsigned k = 0; k < reads; ++k)
        if (field.extent_dwords[k] >= p.min_dwords) return false;
      if (field.extent == abi::ExtentKind::Variable && field.extent_dwords[0] >= p.min_dwords) return false;
    }
    return true;
  }
}
/// The case label of kPackets[I] in quick_check's switch on the opcode: its opcode, or (a kind it
/// does not take, or no kind) a label no opcode reaches, so that opcode goes to `default`.
template <std::size_t I>
constexpr unsigned quick_label() {
  if constexpr (quick_takes<I>()) return static_cast<std::uint8_t>(abi::kPackets[I].opcode);
  return 0x100 + I;
}

/// Address field F of the packet kPackets[I] (`pkt`, `dwords` long, at SplitOffset `split`) and
/// the entry s.e[F]: check_entry's rules for it as compares ORed into s.bad and s.first_words.
/// Compiled for each packet kind and field, so the field's description is constants.
template <std::size_t I, unsigned F>
[[gnu::always_inline]] inline void quick_field(QuickLoop& s, const std::uint32_t* pkt, std::uint32_t dwords,
                                               std::uint64_t split_twice) {
  constexpr const abi::AddressField& field = abi::kPackets[I].addresses[F];
  constexpr bool writes = field.access == abi::AddressAccess::Write;
  const PatchLocation* e = s.e + F;
  std::uint64_t first_word;  // {AllocationIndex, SlotId and Reserved}
  std::memcpy(&first_word, e, sizeof first_word);
  std::uint64_t offsets;  // {PatchOffset, SplitOffset}
  std::memcpy(&offsets, &e->patch_offset, sizeof offsets);
  const std::uint32_t allocation_offset = e->allocation_offset;
  // SlotId must be F and Reserved 0; both and AllocationIndex are checked after the last entry.
  s.first_words |= first_word ^ (std::uint64_t{F} << 32);
  const QuickAllocation& al = s.allocations[first_word & s.index_mask];
  const detail::Access acc = detail::access_of(field, pkt, dwords);
  // Nonzero unless PatchOffset is the field's, SplitOffset the packet's and AllocationOffset has
  // the field's alignment.
  s.bad |= (offsets ^ (split_twice + 4 * field.dword)) | (allocation_offset & (acc.align - 1));
  s.bad |= allocation_offset + acc.extent >= (writes ? al.write_end : al.read_end);
}

/// The packet kPackets[I] with header `header` at SplitOffset `split` (its header inside the
/// buffer) and its entries from s.e: the header, the packet inside the buffer, every address
/// field. Advances s.e past the entries; false: the check cannot go on (don't know).
template <std::size_t I>
[[gnu::always_inline]] inline bool quick_packet(QuickLoop& s, std::uint32_t header, std::uint32_t split) {
  constexpr const abi::PacketInfo& p = abi::kPackets[I];
  constexpr unsigned kCount = p.address_count;
  static_assert(kCount <= 2 && abi::kMaxAddressFields == 2, "quick_packet handles two address fields");
  constexpr std::uint32_t kFlags = std::uint32_t{p.flags_mask} << abi::header::kFlagsLsb;
  // What is read below must be in the buffer and the list: these decide what memory is read.
  // (s.e < s.end: a second entry is there unless s.e + 1 is the end; a pointer compare, where
  // s.end - s.e would divide by sizeof(PatchLocation).)
  if (std::uint64_t{split} + 4 * p.min_dwords > s.dma_size || (kCount > 1 && s.e + 1 == s.end)) return false;
  std::uint32_t dwords = p.min_dwords;
  if constexpr (p.min_dwords == p.max_dwords) {
    // One compare: the opcode, the dword count, no undefined flag bit (which check_entry allows:
    // left to it).
    s.bad |= (header & ~kFlags) ^ abi::make_header(p.opcode, p.min_dwords);
  } else {
    dwords = abi::header_dwords(header);
    s.bad |= (header & (abi::header::kFlagsMask << abi::header::kFlagsLsb) & ~kFlags) |
             (dwords - p.min_dwords > p.max_dwords - p.min_dwords) |
             (std::uint64_t{split} + 4ull * dwords > s.dma_size);
  }
  const auto* pkt = reinterpret_cast<const std::uint32_t*>(s.dma + split);
  const std::uint64_t split_twice = split * 0x1'0000'0001ull;  // {split, split}: no carry, split + 4 * dword < 2^32
  quick_field<I, 0>(s, pkt, dwords, split_twice);
  if constexpr (kCount > 1) quick_field<I, 1>(s, pkt, dwords, split_twice);
  s.e += kCount;
  return true;
}

/// quick_check's loop over the entries. Not inlined into patch(): there, patch()'s own values
/// took the registers and the loop kept its state (s.bad, s.first_words) on the stack, each OR a
/// load and a store. kStackTable: the allocation table is the one on the stack, whose mask is a
/// constant (one register fewer, which kept the loop's values out of the stack again).
template <bool kStackTable>
[[gnu::noinline]] bool quick_loop(QuickLoop s) {
  if constexpr (kStackTable) s.index_mask = kQuickStackAllocations - 1;
  while (s.e < s.end) {
    const std::uint32_t split = s.e->split_offset;
    // A 4-aligned header inside the buffer: the packet is read as dwords.
    if (std::uint64_t{split} + 4 > s.dma_size || split % 4 != 0) return false;
    std::uint32_t header;
    std::memcpy(&header, s.dma + split, sizeof header);
    bool went_on = false;
    switch (unsigned{abi::header_opcode(header)}) {
      // One case per kPackets index (a jump table on the opcode, each packet kind's code inlined).
#define SGPU_QUICK_CASE(K)                                   \
  case quick_label<K>():                                     \
    if constexpr (quick_takes<K>()) went_on = quick_packet<K>(s, header, split); \
    break;
      SGPU_QUICK_CASE(0)
      SGPU_QUICK_CASE(1)
      SGPU_QUICK_CASE(2)
      SGPU_QUICK_CASE(3)
      SGPU_QUICK_CASE(4)
      SGPU_QUICK_CASE(5)
      SGPU_QUICK_CASE(6)
      SGPU_QUICK_CASE(7)
      SGPU_QUICK_CASE(8)
      SGPU_QUICK_CASE(9)
      SGPU_QUICK_CASE(10)
      SGPU_QUICK_CASE(11)
      SGPU_QUICK_CASE(12)
      SGPU_QUICK_CASE(13)
      SGPU_QUICK_CASE(14)
      SGPU_QUICK_CASE(15)
#undef SGPU_QUICK_CASE
      default:
        break;
    }
    static_assert(abi::kPackets.size() <= 16, "quick_check: add cases up to kPackets.size()");
    if (!went_on) return false;
  }
  return s.bad == 0 && s.first_words <= s.index_mask;
}

/// Whether every entry of [first, end) passes check_entry, when they are in the order Render
/// writes them; false also when this check cannot tell (check_entry decides then).
bool quick_check(const PatchArgs& a, std::uint32_t first, std::uint32_t end) {
  const QuickAllocations allocations(a.allocation_list, a.allocation_list_size, kQuickStackAllocations,
                                     kFailingAllocation, quick_allocation);
  const QuickLoop s{a.patch_list + first,         a.patch_list + end,  static_cast<const std::byte*>(a.dma_buffer),
                    a.dma_size,                   allocations.table(), allocations.index_mask()};
  return allocations.index_mask() == kQuickStackAllocations - 1 ? quick_loop<true>(s) : quick_loop<false>(s);
}

/// Why entry `i` was refused, with the message that names it.
[[gnu::noinline]] Status check_entry(const PatchArgs& a, std::uint32_t i) {
  const PatchLocation& e = a.patch_list[i];
  if (e.patch_offset % 4 != 0 || std::uint64_t{e.patch_offset} + 8 > a.dma_size)
    return Error::invalid(
        "patch: entry {}: PatchOffset {} is not a 4-aligned 8-byte field inside the "
        "{}-byte DMA buffer",
        i, e.patch_offset, a.dma_size);
  if (e.allocation_index >= a.allocation_list_size)
    return Error::invalid("patch: entry {}: AllocationIndex {} is past the {}-element allocation list", i,
                          e.allocation_index, a.allocation_list_size);
  const DxgkAllocationListEntry& al = a.allocation_list[e.allocation_index];
  if (!al.allocation || al.segment == kSystemMemory)
    return Error::invalid(
        "patch: entry {}: allocation-list element {} is {} (segment {}): nothing to patch "
        "with",
        i, e.allocation_index, al.allocation ? "not resident" : "null", al.segment);
  return check_field(a, i, e, al);
}

}  // namespace

Result<PatchOutput> patch(const PatchArgs& a) {
  if (a.dma_buffer == nullptr) return Error::invalid("patch: the DMA buffer is null");
  if (a.dma_start > a.dma_end || a.dma_end > a.dma_size)
    return Error::invalid("patch: submission range [{}, {}) is not inside the {}-byte DMA buffer", a.dma_start,
                          a.dma_end, a.dma_size);
  if (std::uint64_t{a.patch_start} + a.patch_length > a.patch_list_size)
    return Error::invalid("patch: entries [{}, {}) are not inside the {}-entry patch list", a.patch_start,
                          std::uint64_t{a.patch_start} + a.patch_length, a.patch_list_size);
  if (a.patch_list == nullptr && a.patch_list_size != 0)
    return Error::invalid("patch: patch list is null but has {} entries", a.patch_list_size);
  if (a.allocation_list == nullptr && a.allocation_list_size != 0)
    return Error::invalid("patch: allocation list is null but has {} elements", a.allocation_list_size);

  // Check every entry before writing one, so a refusal leaves the buffer as it was.
  const std::uint32_t end = a.patch_start + a.patch_length;
  if (!quick_check(a, a.patch_start, end))
    for (std::uint32_t i = a.patch_start; i < end; ++i) SGPU_RETURN_IF_ERROR(check_entry(a, i));

  // The submission fence Render appended, when this submission's range holds it.
  RenderPrivateData priv;
  bool fence_in_range = false;
  if (a.private_data != nullptr && a.private_data_size >= sizeof priv) {
    std::memcpy(&priv, a.private_data, sizeof priv);
    fence_in_range = priv.magic == RenderPrivateData::kMagic && (priv.flags & RenderPrivateData::kHasFence) &&
                     priv.fence_offset >= a.dma_start && priv.fence_offset < a.dma_end;
  }
  auto* dma = static_cast<std::byte*>(a.dma_buffer);
  const auto& fence = *abi::find_packet(static_cast<std::uint8_t>(abi::Opcode::Fence));
  if (fence_in_range) {
    if (priv.fence_offset % 4 != 0 || std::uint64_t{priv.fence_offset} + 4 * fence.min_dwords > a.dma_end)
      return Error::invalid(
          "patch: the submission fence at offset {} does not lie inside the submission "
          "[{}, {})",
          priv.fence_offset, a.dma_start, a.dma_end);
    std::uint32_t header;
    std::memcpy(&header, dma + priv.fence_offset, 4);
    if (abi::header_opcode(header) != static_cast<std::uint8_t>(abi::Opcode::Fence) ||
        !(abi::header_flags(header) & abi::fence_flags::kValue64))
      return Error::invalid("patch: offset {} holds header {:#010x}, not the submission fence (FENCE, value64)",
                            priv.fence_offset, header);
    if (a.fence_address % 8 != 0)
      return Error::invalid("patch: submission fence address {:#x} is not 8-byte aligned", a.fence_address);
  }

  // The timestamp bracket's packets in this range: the opening one at 0, the closing one.
  const bool bracket = priv.magic == RenderPrivateData::kMagic && (priv.flags & RenderPrivateData::kHasTimestamps);
  std::uint32_t stamps[2] = {0, priv.timestamp_end_offset};
  std::uint32_t stamp_count = 0;
  if (bracket) {
    const auto& ts = *abi::find_packet(static_cast<std::uint8_t>(abi::Opcode::Timestamp));
    std::uint32_t in_range[2];
    for (std::uint32_t off : stamps)
      if (off >= a.dma_start && off < a.dma_end) in_range[stamp_count++] = off;
    for (std::uint32_t k = 0; k < stamp_count; ++k) {
      const std::uint32_t off = in_range[k];
      std::uint32_t header = 0;
      if (off % 4 == 0 && std::uint64_t{off} + 4 * ts.min_dwords <= a.dma_end) std::memcpy(&header, dma + off, 4);
      if (abi::header_opcode(header) != static_cast<std::uint8_t>(abi::Opcode::Timestamp))
        return Error::invalid("patch: offset {} holds header {:#010x}, not the timestamp bracket's TIMESTAMP", off,
                              header);
    }
    if (stamp_count > 0 && (a.timestamp_address == 0 || a.timestamp_address % 8 != 0))
      return Error::invalid(
          "patch: the DMA buffer carries the timestamp bracket but the timestamp address {:#x} is {}", a.timestamp_address,
          a.timestamp_address == 0 ? "0 (its TIMESTAMPs would write to address 0)" : "not 8-byte aligned");
    stamps[0] = in_range[0];
    stamps[1] = stamp_count > 1 ? in_range[1] : 0;
  }

  PatchOutput out;
  for (std::uint32_t k = 0; k < stamp_count; ++k) {
    // Opening (offset 0) -> the landing area's first slot, closing -> the second.
    const std::uint64_t slot = stamps[k] == 0 ? 0 : 8;
    store64(dma, stamps[k] + 4ull * abi::payload::timestamp::kAddrLo, a.timestamp_address + slot);
  }
  out.timestamps_written = stamp_count;
  // The lists in locals: through `a`, each store (which may alias it, for the compiler) would
  // make the loop load them again.
  const PatchLocation* const list = a.patch_list;
  const DxgkAllocationListEntry* const allocations = a.allocation_list;
  // Unrolled: the loop's own counting was a third of its instructions (GCC and Clang read this).
#pragma GCC unroll 4
  for (std::uint32_t i = a.patch_start; i < end; ++i) {
    const PatchLocation& e = list[i];
    store64(dma, e.patch_offset, allocations[e.allocation_index].gpu_address + e.allocation_offset);
  }
  out.patched = a.patch_length;
  if (fence_in_range) {
    store64(dma, priv.fence_offset + 4ull * abi::payload::fence::kAddrLo, a.fence_address);
    store32(dma, priv.fence_offset + 4ull * abi::payload::fence::kValueLo,
            static_cast<std::uint32_t>(a.submission_fence.value()));
    store32(dma, priv.fence_offset + 4ull * abi::payload::fence::kValueHi,
            static_cast<std::uint32_t>(a.submission_fence.value() >> 32));
    out.fence_written = true;
  }
  return out;
}

}  // namespace sgpu::kmd
