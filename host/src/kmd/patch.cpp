#include "sgpu/kmd/patch.hpp"

#include <array>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
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

/// What the per-entry check needs of one allocation-list element, gathered once per call.
struct AllocationBound {
  std::uint64_t base = 0;    ///< gpu_address
  std::uint64_t size = 0;    ///< bytes
  std::uint32_t grants = 0;  ///< kNoAccess, kPatchable or kWritable
};
/// Access levels, ordered so that an entry passes when its allocation's level is at least the
/// one its field needs. kPatchable: listed, not null, resident, and base + size does not pass
/// 2^64 (so no access inside the allocation wraps: the per-entry check needs no overflow test).
constexpr std::uint32_t kNoAccess = 0;
constexpr std::uint32_t kPatchable = 1;
constexpr std::uint32_t kWritable = 2;  ///< kPatchable with WriteOperation
constexpr std::uint32_t kNoEntryPasses = ~0u;

std::vector<AllocationBound> allocation_bounds(const PatchArgs& a) {
  std::vector<AllocationBound> bounds(a.allocation_list_size);
  for (std::uint32_t i = 0; i < a.allocation_list_size; ++i) {
    const DxgkAllocationListEntry& al = a.allocation_list[i];
    const bool patchable = al.allocation && al.segment != kSystemMemory && al.gpu_address + al.size >= al.gpu_address;
    bounds[i] = {al.gpu_address, al.size, !patchable ? kNoAccess : al.write ? kWritable : kPatchable};
  }
  return bounds;
}

/// What the per-entry check needs of one address field of a packet.
struct FieldBound {
  std::uint32_t patch_offset = 0;        ///< where the field's entry must point
  std::uint32_t needs = kNoEntryPasses;  ///< the access level the allocation must have
  std::uint64_t extent = 0;              ///< bytes the packet touches from the address
  std::uint64_t align_mask = 0;          ///< the address's low bits that must be 0
};

/// One packet's address fields as the per-entry check sees them.
struct PacketBounds {
  std::uint32_t count = 0;  ///< address fields (SlotIds below it may pass)
  std::array<FieldBound, abi::kMaxAddressFields> fields{};
};

/// Address field F of the packet kPackets[I] at SplitOffset `split`, as the per-entry check sees
/// it. Compiled for each packet kind and field, so the field's description is constants.
template <std::size_t I, unsigned F>
[[gnu::always_inline]] inline void field_bound(const std::uint32_t* pkt, std::uint32_t dwords, std::uint32_t split,
                                               FieldBound& b) {
  constexpr const abi::PacketInfo& p = abi::kPackets[I];
  constexpr const abi::AddressField& field = p.addresses[F];
  const detail::Access acc = detail::access_of(field, pkt, dwords);
  b = {split + 4 * field.dword, field.access == abi::AddressAccess::Write ? kWritable : kPatchable, acc.extent,
       acc.align - 1u};
  // A non-power-of-two alignment (none in the ABI today) or a field past the packet's end is left
  // to check_entry: no entry passes this one.
  constexpr auto pow2 = [](std::uint32_t x) { return x != 0 && (x & (x - 1)) == 0; };
  constexpr bool kChecked =
      pow2(field.align.clear) && pow2(field.align.set) && 4u * field.dword + 8 <= 4u * p.min_dwords;
  if constexpr (!kChecked) b.needs = kNoEntryPasses;
  // So that offset + extent cannot wrap in the per-entry check (AllocationOffset < 2^32).
  if (acc.extent > (std::uint64_t{1} << 63)) b.needs = kNoEntryPasses;
}

/// The bounds of every address field of the packet kPackets[I].
template <std::size_t I>
void packet_bounds(const std::uint32_t* pkt, std::uint32_t dwords, std::uint32_t split, PacketBounds& b) {
  constexpr unsigned kCount = abi::kPackets[I].address_count;
  static_assert(kCount <= 2 && abi::kMaxAddressFields == 2, "packet_bounds handles two address fields");
  b.count = kCount;
  if constexpr (kCount > 0) field_bound<I, 0>(pkt, dwords, split, b.fields[0]);
  if constexpr (kCount > 1) field_bound<I, 1>(pkt, dwords, split, b.fields[1]);
}

/// The entries [i, end) that name the packet kPackets[I] at SplitOffset `split` (its header
/// checked: `dwords` long, inside the buffer), from `i` while their SplitOffset is `split`:
/// check_entry's rules without the messages. Returns the first entry this check does not pass,
/// or the first entry of another packet. Compiled for each packet kind, so the packet's fields
/// are worked out with its constants and stay in registers.
template <std::size_t I>
[[gnu::always_inline]] inline std::uint32_t check_packet_entries(const PatchLocation* list, std::uint32_t i,
                                                                 std::uint32_t end, const std::uint32_t* pkt,
                                                                 std::uint32_t dwords, std::uint32_t split,
                                                                 const AllocationBound* allocations,
                                                                 std::uint32_t allocation_count) {
  PacketBounds packet;
  packet_bounds<I>(pkt, dwords, split, packet);
  do {
    const PatchLocation& e = list[i];
    // Reserved bits set make the SlotId >= the field count too.
    if (e.slot_id_and_reserved >= packet.count) return i;
    const FieldBound& f = packet.fields[e.slot_id_and_reserved];
    if (e.patch_offset != f.patch_offset || e.allocation_index >= allocation_count) return i;
    const AllocationBound& al = allocations[e.allocation_index];
    const std::uint64_t offset = e.allocation_offset;
    if (al.grants < f.needs || offset + f.extent > al.size || ((al.base + offset) & f.align_mask) != 0) return i;
    ++i;
  } while (i < end && list[i].split_offset == split);
  return i;
}

/// check_entry's rules without the messages, over entries [i, end): the first entry this check
/// does not pass (end: all pass), for check_entry to decide (it may still pass one, e.g. through
/// an allocation whose end passes 2^64, which this check leaves to it). The entries of one packet
/// follow one another, so the packet is decoded once for them (one jump on its opcode to the
/// packet kind's code), and each allocation-list element once per call: an entry costs a few
/// loads and compares, whose branches are never taken on a list that passes (cheaper than
/// combining them without branches).
std::uint32_t first_unchecked(const PatchArgs& a, const std::vector<AllocationBound>& bounds, std::uint32_t i,
                              std::uint32_t end) {
  const PatchLocation* const list = a.patch_list;
  const AllocationBound* const allocations = bounds.data();
  const std::uint32_t allocation_count = a.allocation_list_size;
  const auto* dma = static_cast<const std::byte*>(a.dma_buffer);
  const std::uint32_t dma_size = a.dma_size;
  while (i < end) {
    const std::uint32_t split = list[i].split_offset;
    if (split % 4 != 0 || std::uint64_t{split} + 4 > dma_size) return i;
    const auto* pkt = reinterpret_cast<const std::uint32_t*>(dma + split);
    const std::uint32_t header = pkt[0];
    const std::uint32_t dwords = abi::header_dwords(header);
    const std::uint8_t kind = abi::kPacketIndex[abi::header_opcode(header)];
    if (kind == abi::kNoPacket || std::uint64_t{split} + 4ull * dwords > dma_size) return i;
    switch (kind) {
      // One case per kPackets index (a jump table, each packet kind's code inlined).
#define SGPU_PATCH_CASE(K)                                                                                      \
  case K:                                                                                                       \
    if constexpr (K < abi::kPackets.size()) {                                                                   \
      if (dwords < abi::kPackets[K].min_dwords || dwords > abi::kPackets[K].max_dwords) return i;              \
      i = check_packet_entries<K>(list, i, end, pkt, dwords, split, allocations, allocation_count);             \
    }                                                                                                           \
    break;
      SGPU_PATCH_CASE(0)
      SGPU_PATCH_CASE(1)
      SGPU_PATCH_CASE(2)
      SGPU_PATCH_CASE(3)
      SGPU_PATCH_CASE(4)
      SGPU_PATCH_CASE(5)
      SGPU_PATCH_CASE(6)
      SGPU_PATCH_CASE(7)
      SGPU_PATCH_CASE(8)
      SGPU_PATCH_CASE(9)
      SGPU_PATCH_CASE(10)
      SGPU_PATCH_CASE(11)
      SGPU_PATCH_CASE(12)
      SGPU_PATCH_CASE(13)
      SGPU_PATCH_CASE(14)
      SGPU_PATCH_CASE(15)
#undef SGPU_PATCH_CASE
      default:
        return i;
    }
    static_assert(abi::kPackets.size() <= 16, "first_unchecked: add cases up to kPackets.size()");
    // Stopped inside the packet's entries: that entry is for check_entry.
    if (i < end && list[i].split_offset == split) return i;
  }
  return end;
}

/// Why entry `i` was refused, with the message that names it.
[[gnu::noinline, gnu::cold]] Status check_entry(const PatchArgs& a, std::uint32_t i) {
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
  const std::vector<AllocationBound> bounds = allocation_bounds(a);
  for (std::uint32_t i = a.patch_start; (i = first_unchecked(a, bounds, i, end)) < end; ++i)
    SGPU_RETURN_IF_ERROR(check_entry(a, i));

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
  for (std::uint32_t i = a.patch_start; i < end; ++i) {
    const PatchLocation& e = a.patch_list[i];
    const DxgkAllocationListEntry& al = a.allocation_list[e.allocation_index];
    store64(dma, e.patch_offset, al.gpu_address + e.allocation_offset);
    ++out.patched;
  }
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
