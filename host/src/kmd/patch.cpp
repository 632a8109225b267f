#include "sgpu/kmd/patch.hpp"

#include <cstring>
#include <string>
#include <utility>

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

/// check_entry's rules without the messages, for the loop over every entry: true when the
/// entry passes them all. The header decoded last is kept, since a packet's entries follow one
/// another. (check_entry, which names what failed, runs only on a refusal.)
struct FastCheck {
  const PatchArgs& a;
  const std::byte* dma;
  std::uint32_t split = ~0u;  ///< SplitOffset of the packet decoded last (~0u: none)
  const abi::PacketInfo* p = nullptr;
  std::uint32_t dwords = 0;

  bool ok(const PatchLocation& e) {
    if (e.patch_offset % 4 != 0 || std::uint64_t{e.patch_offset} + 8 > a.dma_size) return false;
    if (e.allocation_index >= a.allocation_list_size) return false;
    const DxgkAllocationListEntry& al = a.allocation_list[e.allocation_index];
    if (!al.allocation || al.segment == kSystemMemory) return false;
    if (e.split_offset != split) {
      if (e.split_offset % 4 != 0 || std::uint64_t{e.split_offset} + 4 > a.dma_size) return false;
      std::uint32_t header;
      std::memcpy(&header, dma + e.split_offset, 4);
      p = abi::find_packet(abi::header_opcode(header));
      dwords = abi::header_dwords(header);
      if (p == nullptr || dwords < p->min_dwords || dwords > p->max_dwords ||
          std::uint64_t{e.split_offset} + 4ull * dwords > a.dma_size)
        return false;
      split = e.split_offset;
    }
    const std::uint32_t slot = e.slot_id_and_reserved;  // Reserved bits set: >= address_count
    if (slot >= p->address_count) return false;
    const abi::AddressField& field = p->addresses[slot];
    if (e.patch_offset != e.split_offset + 4 * field.dword) return false;
    const detail::Access acc =
        detail::access_of(field, reinterpret_cast<const std::uint32_t*>(dma + e.split_offset), dwords);
    if (acc.extent > al.size || e.allocation_offset > al.size - acc.extent) return false;
    const std::uint64_t address = al.gpu_address + e.allocation_offset;
    // The ABI's alignments are powers of two: a mask instead of a division, per entry.
    const bool aligned = (acc.align & (acc.align - 1)) == 0 ? (address & (acc.align - 1)) == 0
                                                             : address % acc.align == 0;
    if (address < al.gpu_address || address + acc.extent < address || !aligned) return false;
    return field.access != abi::AddressAccess::Write || al.write;
  }
};

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
  FastCheck fast{a, static_cast<const std::byte*>(a.dma_buffer)};
  for (std::uint32_t i = a.patch_start; i < end; ++i) {
    if (fast.ok(a.patch_list[i])) continue;
    SGPU_RETURN_IF_ERROR(check_entry(a, i));
    return Error::invalid("patch: entry {} was refused", i);  // check_entry names why; not reached
  }

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
