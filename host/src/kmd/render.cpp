#include "sgpu/kmd/render.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "kmd/dma_pass.hpp"
#include "sgpu/overlap.hpp"

namespace sgpu::kmd {

using namespace detail;

namespace {

/// PatchLocation: SlotId is bits 0-23, bits 24-31 are Reserved.
constexpr std::uint32_t kSlotIdMask = 0x00ffffffu;

// ------------------------------------------------------------------------------------ Render
// render() runs these steps in order; each checks one thing and names what it refused.
//   check_render_call      the call's own arguments, before anything is read or written
//   check_multipass_offset a continuing pass starts on a packet boundary
//   read_patch_list        the input patch list, read once, ordered by PatchOffset
//   per packet:
//     decode_header        what the packet is, how long, whether it is allowed at all
//     check_room           room in this pass, or end the pass here (multipass)
//     copy_packet          copy into the DMA buffer; every later check reads the copy
//     bind_patch_entries   the input entries that patch this packet, one per address field
//     patch_field          per address field: the entry, the access against its allocation,
//                          the pre-patched address
//     emit_patch_entries   the output patch-location entries
//   finish_pass            the submission fence and the private data

/// Index of the input patch entry for each address field of one packet.
constexpr std::uint32_t kNoEntry = ~0u;
using EntryOf = std::array<std::uint32_t, abi::kMaxAddressFields>;

/// The user command buffer: user memory of any alignment, read dword by dword with memcpy.
struct CommandBuffer {
  const std::byte* bytes = nullptr;
  std::uint32_t length = 0;

  std::uint32_t dword(std::uint32_t offset) const {
    std::uint32_t d;
    std::memcpy(&d, bytes + offset, 4);
    return d;
  }
};

/// The input patch list, read once (user memory), with its entry indices in PatchOffset order.
struct InputPatchList {
  std::vector<PatchLocation> entries;
  std::vector<std::uint32_t> by_offset;
  /// Packets are translated in offset order, so binding walks by_offset once: the first entry
  /// not yet looked at.
  std::size_t cursor = 0;
};

/// One packet of the command buffer as its (checked) header describes it.
struct Packet {
  std::uint32_t offset = 0;  ///< command byte offset of the header
  std::uint32_t header = 0;
  std::uint32_t dwords = 0;
  const abi::PacketInfo* info = nullptr;

  std::uint32_t bytes() const { return 4 * dwords; }
  std::uint64_t end() const { return offset + 4ull * dwords; }
};

/// What one render() call reads and produces; the per-packet steps work on it.
struct RenderState {
  const RenderArgs& args;
  CommandBuffer cmd;
  InputPatchList patches;
  std::uint32_t dma_capacity = 0;
  RenderOutput out;
};

Status check_render_call(const RenderArgs& a) {
  SGPU_RETURN_IF_ERROR(check_dma("render", a.dma_buffer, a.dma_size, a.private_data, a.private_data_size));
  if (a.command == nullptr && a.command_length != 0)
    return Error::invalid("render: command buffer is null but CommandLength is {}", a.command_length);
  if (a.command_length % 4 != 0)
    return Error::invalid("render: CommandLength {} is not a multiple of 4", a.command_length);
  if (a.allocation_list == nullptr && a.allocation_list_size != 0)
    return Error::invalid("render: allocation list is null but has {} elements", a.allocation_list_size);
  if (a.patch_in == nullptr && a.patch_in_size != 0)
    return Error::invalid("render: input patch list is null but has {} entries", a.patch_in_size);
  if (a.patch_out == nullptr && a.patch_out_size != 0)
    return Error::invalid("render: output patch list is null but has {} entries", a.patch_out_size);
  return ok_status();
}

/// An earlier pass stopped on a packet boundary: walk the headers to see that this is one.
Status check_multipass_offset(std::uint32_t multipass_offset, const CommandBuffer& cmd) {
  if (multipass_offset == 0) return ok_status();
  if (multipass_offset % 4 != 0 || multipass_offset >= cmd.length)
    return Error::invalid(
        "render: MultipassOffset {} is not a 4-byte aligned offset inside the {}-byte "
        "command buffer",
        multipass_offset, cmd.length);
  std::uint64_t off = 0;
  while (off < multipass_offset) {
    const std::uint32_t dwords = abi::header_dwords(cmd.dword(static_cast<std::uint32_t>(off)));
    if (dwords == 0)
      return Error::invalid(
          "render: MultipassOffset {} is not a packet boundary: the header at command "
          "offset {} has dwords = 0",
          multipass_offset, off);
    off += 4ull * dwords;
  }
  if (off != multipass_offset)
    return Error::invalid(
        "render: MultipassOffset {} is not a packet boundary: the packet before it ends at "
        "command offset {}",
        multipass_offset, off);
  return ok_status();
}

Result<InputPatchList> read_patch_list(const RenderArgs& a) {
  InputPatchList in;
  in.entries.assign(a.patch_in, a.patch_in + a.patch_in_size);
  in.by_offset.resize(in.entries.size());
  std::iota(in.by_offset.begin(), in.by_offset.end(), 0u);
  const auto by_patch_offset = [&](std::uint32_t x, std::uint32_t y) {
    return in.entries[x].patch_offset < in.entries[y].patch_offset;
  };
  // A CommandList writes its entries in stream order: sorting is then only a check.
  if (!std::is_sorted(in.by_offset.begin(), in.by_offset.end(), by_patch_offset))
    std::stable_sort(in.by_offset.begin(), in.by_offset.end(), by_patch_offset);
  in.cursor = static_cast<std::size_t>(
      std::lower_bound(in.by_offset.begin(), in.by_offset.end(), a.multipass_offset,
                       [&](std::uint32_t i, std::uint32_t o) { return in.entries[i].patch_offset < o; }) -
      in.by_offset.begin());
  // Packets tile [0, len), so an entry below len lies in some packet and is checked with it (in
  // this pass or an earlier one); one at or past len patches nothing.
  for (std::uint32_t i = 0; i < in.entries.size(); ++i) {
    if (in.entries[i].patch_offset >= a.command_length)
      return Error::invalid(
          "render: patch entry {} is unused: PatchOffset {} lies past the {}-byte command "
          "buffer",
          i, in.entries[i].patch_offset, a.command_length);
  }
  return in;
}

/// The header alone: what the packet is, how long, whether it is allowed at all.
Result<Packet> decode_header(const CommandBuffer& cmd, std::uint32_t off) {
  Packet pk;
  pk.offset = off;
  pk.header = cmd.dword(off);
  pk.dwords = abi::header_dwords(pk.header);
  const std::uint32_t header = pk.header;
  const std::uint8_t opcode = abi::header_opcode(header);
  const abi::PacketInfo* p = abi::find_packet(opcode);
  if (p == nullptr)
    return Error::invalid("render: command offset {}: unknown opcode {:#04x} (header {:#010x})", off, opcode, header);
  pk.info = p;
  if (p->privileged)
    return Error::denied(
        "render: command offset {}: {} is a privileged packet (header {:#010x}); only the "
        "kernel may submit it",
        off, p->name, header);
  for (unsigned f = 0; f < p->address_count; ++f) {
    // A called buffer's packets are not in this command buffer, so Render could not check them.
    if (p->addresses[f].access == abi::AddressAccess::Execute)
      return Error::denied(
          "render: command offset {}: {} (header {:#010x}) executes another buffer, which "
          "Render cannot validate",
          off, p->name, header);
  }
  if (pk.dwords == 0)
    return Error::invalid("render: command offset {}: {} header {:#010x} has dwords = 0", off, p->name, header);
  if (pk.dwords < p->min_dwords || pk.dwords > p->max_dwords)
    return Error::invalid("render: command offset {}: {} with dwords = {}; the packet takes {} to {} dwords", off,
                          p->name, pk.dwords, p->min_dwords, p->max_dwords);
  if (pk.end() > cmd.length)
    return Error::invalid(
        "render: command offset {}: {} of {} dwords ends at byte {}, past the end of the "
        "{}-byte command buffer",
        off, p->name, pk.dwords, pk.end(), cmd.length);
  const std::uint8_t flags = abi::header_flags(header);
  if ((flags & ~p->flags_mask) != 0)
    return Error::invalid("render: command offset {}: {} sets undefined flag bits {:#04x} (defined: {:#04x})", off,
                          p->name, flags & ~p->flags_mask, p->flags_mask);
  return pk;
}

/// Room in this pass's DMA buffer and output patch list: true, or false to end the pass before
/// the packet (multipass); an error when even an empty pass has no room for it.
Result<bool> check_room(const RenderState& s, const Packet& pk) {
  const RenderArgs& a = s.args;
  if (room_for(s.out, *pk.info, pk.bytes(), s.dma_capacity, a.patch_out_size)) return true;
  if (s.out.packets == 0)
    return Error::invalid(
        "render: command offset {}: {} of {} bytes with {} address fields does not fit an "
        "empty DMA buffer of {} bytes (plus the {}-byte submission fence) and a patch "
        "list of {} entries",
        pk.offset, pk.info->name, pk.bytes(), pk.info->address_count, a.dma_size, submission_fence_bytes(),
        a.patch_out_size);
  return false;
}

/// Copies the packet into the DMA buffer; every later check reads the copy, so the user cannot
/// change what was validated.
std::uint32_t* copy_packet(RenderState& s, const Packet& pk) {
  std::uint32_t* pkt = static_cast<std::uint32_t*>(s.args.dma_buffer) + s.out.dma_bytes / 4;
  std::memcpy(pkt, s.cmd.bytes + pk.offset, pk.bytes());
  pkt[0] = pk.header;
  return pkt;
}

/// The input entries whose PatchOffset lies in the packet, bound to its address fields: each on
/// a field's low dword, at most one per field (a field without one is refused by patch_field).
Result<EntryOf> bind_patch_entries(InputPatchList& in, const Packet& pk) {
  const abi::PacketInfo* p = pk.info;
  EntryOf entry_of;
  entry_of.fill(kNoEntry);
  // Everything before the cursor belongs to earlier packets (they tile the buffer).
  for (; in.cursor < in.by_offset.size() && in.entries[in.by_offset[in.cursor]].patch_offset < pk.end();
       ++in.cursor) {
    const std::uint32_t i = in.by_offset[in.cursor];
    const std::uint32_t patch_offset = in.entries[i].patch_offset;
    const std::uint32_t rel = patch_offset - pk.offset;
    if (rel % 4 != 0)
      return Error::invalid(
          "render: patch entry {}: PatchOffset {} is not 4-byte aligned (inside {} at "
          "command offset {})",
          i, patch_offset, p->name, pk.offset);
    unsigned f = 0;
    while (f < p->address_count && p->addresses[f].dword != rel / 4) ++f;
    if (f == p->address_count)
      return Error::invalid(
          "render: patch entry {}: PatchOffset {} is dword {} of {} at command offset {}, "
          "not the low dword of an address field",
          i, patch_offset, rel / 4, p->name, pk.offset);
    if (entry_of[f] != kNoEntry)
      return Error::invalid(
          "render: patch entries {} and {} both patch {} field '{}' at command offset {} "
          "(PatchOffset {})",
          entry_of[f], i, p->name, p->addresses[f].name, pk.offset, patch_offset);
    entry_of[f] = i;
  }
  return entry_of;
}

/// The input entry `i` bound to address field `f`: it exists, names a non-null allocation-list
/// element, and its SlotId (and the slot the output uses) are allowed. Returns that element.
Result<const DxgkAllocationListEntry*> check_patch_entry(const RenderState& s, const Packet& pk, unsigned f,
                                                         std::uint32_t i) {
  const RenderArgs& a = s.args;
  const abi::PacketInfo* p = pk.info;
  if (i == kNoEntry)
    return Error::invalid(
        "render: command offset {}: {} address field '{}' (PatchOffset {}) has no "
        "patch-location entry",
        pk.offset, p->name, p->addresses[f].name, pk.offset + 4 * p->addresses[f].dword);
  const PatchLocation& e = s.patches.entries[i];
  if (e.allocation_index >= a.allocation_list_size)
    return Error::invalid(
        "render: patch entry {}: AllocationIndex {} is past the {}-element allocation "
        "list",
        i, e.allocation_index, a.allocation_list_size);
  const DxgkAllocationListEntry& al = a.allocation_list[e.allocation_index];
  if (!al.allocation)
    return Error::invalid("render: patch entry {}: AllocationIndex {} names a null allocation-list element", i,
                          e.allocation_index);
  if ((e.slot_id_and_reserved & ~kSlotIdMask) != 0)
    return Error::invalid("render: patch entry {}: Reserved bits set ({:#010x})", i, e.slot_id_and_reserved);
  if ((e.slot_id_and_reserved & kSlotIdMask) >= a.max_slot_id)
    return Error::invalid("render: patch entry {}: SlotId {} is not below MaxAllocationListSlotId {}", i,
                          e.slot_id_and_reserved & kSlotIdMask, a.max_slot_id);
  if (f >= a.max_slot_id)
    return Error::invalid("render: command offset {}: {} needs slot {} but MaxAllocationListSlotId is {}", pk.offset,
                          p->name, f, a.max_slot_id);
  return &al;
}

/// The access through field `f` (entry `i`) stays inside its allocation, writes only where the
/// list allows it, and AllocationOffset has the alignment the device requires (allocations are
/// page aligned, so this holds of the address whatever the placement).
Status check_access(const Packet& pk, unsigned f, std::uint32_t i, const PatchLocation& e,
                    const DxgkAllocationListEntry& al, const Access& acc) {
  const abi::PacketInfo* p = pk.info;
  const abi::AddressField& field = p->addresses[f];
  if (acc.extent > al.size || e.allocation_offset > al.size - acc.extent)
    return Error::invalid(
        "render: patch entry {}: {} field '{}' at command offset {} touches bytes [{}, {}) "
        "of allocation-list element {}, which has {} bytes",
        i, p->name, field.name, pk.offset, e.allocation_offset, e.allocation_offset + acc.extent, e.allocation_index,
        al.size);
  if (field.access == abi::AddressAccess::Write && !al.write)
    return Error::invalid(
        "render: patch entry {}: {} at command offset {} writes through allocation-list "
        "element {}, which lacks WriteOperation",
        i, p->name, pk.offset, e.allocation_index);
  if (e.allocation_offset % acc.align != 0)
    return Error::invalid(
        "render: patch entry {}: AllocationOffset {} is not {}-byte aligned as {} field "
        "'{}' requires (command offset {})",
        i, e.allocation_offset, acc.align, p->name, field.name, pk.offset);
  return ok_status();
}

/// The address field `f` gets when pre-patched: allocation address + AllocationOffset when the
/// list says where the allocation is (dxgkrnl may skip Patch when nothing moved, so it must be
/// final now), else 0.
Result<std::uint64_t> prepatch_address(const Packet& pk, unsigned f, std::uint32_t i, const PatchLocation& e,
                                       const DxgkAllocationListEntry& al, const Access& acc) {
  if (al.segment == kSystemMemory) return std::uint64_t{0};
  const abi::PacketInfo* p = pk.info;
  const abi::AddressField& field = p->addresses[f];
  const std::uint64_t address = al.gpu_address + e.allocation_offset;
  if (address < al.gpu_address || address + acc.extent < address)
    return Error::invalid(
        "render: patch entry {}: {} field '{}' at command offset {}: address {:#x} + {} "
        "+ {} bytes wraps past 2^64",
        i, p->name, field.name, pk.offset, al.gpu_address, e.allocation_offset, acc.extent);
  if (address % acc.align != 0)
    return Error::invalid(
        "render: patch entry {}: address {:#x} is not {}-byte aligned as {} field '{}' "
        "requires (command offset {})",
        i, address, acc.align, p->name, field.name, pk.offset);
  return address;
}

/// One address field of the copied packet `pkt`: its entry, the access against the allocation,
/// then the pre-patched address written into the copy.
Status patch_field(const RenderState& s, const Packet& pk, std::uint32_t* pkt, unsigned f, std::uint32_t i) {
  SGPU_ASSIGN_OR_RETURN(auto al, check_patch_entry(s, pk, f, i));
  const PatchLocation& e = s.patches.entries[i];
  const abi::AddressField& field = pk.info->addresses[f];
  const Access acc = access_of(field, pkt, pk.dwords);
  SGPU_RETURN_IF_ERROR(check_access(pk, f, i, e, *al, acc));
  SGPU_ASSIGN_OR_RETURN(auto address, prepatch_address(pk, f, i, e, *al, acc));
  put_address(pkt, field.dword, address);
  return ok_status();
}

/// One output entry per address field of the packet just written at out.dma_bytes.
void emit_patch_entries(RenderState& s, const Packet& pk, const EntryOf& entry_of) {
  for (unsigned f = 0; f < pk.info->address_count; ++f) {
    const PatchLocation& e = s.patches.entries[entry_of[f]];
    s.args.patch_out[s.out.patch_count++] =
        output_entry(*pk.info, f, e.allocation_index, e.allocation_offset, s.out.dma_bytes);
  }
}

/// Copy, bind, check and pre-patch, list: one packet from the command buffer to the DMA buffer.
Status translate_packet(RenderState& s, const Packet& pk) {
  std::uint32_t* pkt = copy_packet(s, pk);
  SGPU_ASSIGN_OR_RETURN(auto entry_of, bind_patch_entries(s.patches, pk));
  for (unsigned f = 0; f < pk.info->address_count; ++f) SGPU_RETURN_IF_ERROR(patch_field(s, pk, pkt, f, entry_of[f]));
  emit_patch_entries(s, pk, entry_of);
  s.out.dma_bytes += pk.bytes();
  ++s.out.packets;
  return ok_status();
}

}  // namespace

std::uint32_t submission_fence_bytes() { return packet_info(abi::Opcode::Fence).min_dwords * 4; }

std::uint32_t timestamp_reserve_bytes() {
  return 2 * packet_info(abi::Opcode::Timestamp).min_dwords * 4 + 16 + 7;  // packets, landing area, its alignment
}

Result<RenderOutput> render(const RenderArgs& a) {
  SGPU_RETURN_IF_ERROR(check_render_call(a));
  const CommandBuffer cmd{static_cast<const std::byte*>(a.command), a.command_length};
  SGPU_RETURN_IF_ERROR(check_multipass_offset(a.multipass_offset, cmd));
  SGPU_ASSIGN_OR_RETURN(auto patches, read_patch_list(a));

  RenderState s{a, cmd, std::move(patches), 0, RenderOutput{}};
  SGPU_ASSIGN_OR_RETURN(s.dma_capacity, begin_pass("render", a.dma_buffer, a.dma_size, a.reserve_timestamps, s.out));
  bool final_pass = true;
  for (std::uint32_t off = a.multipass_offset; off < cmd.length;) {
    SGPU_ASSIGN_OR_RETURN(auto pk, decode_header(cmd, off));
    SGPU_ASSIGN_OR_RETURN(auto room, check_room(s, pk));
    if (!room) {
      s.out.multipass_offset = off;
      final_pass = false;
      break;
    }
    SGPU_RETURN_IF_ERROR(translate_packet(s, pk));
    off += pk.bytes();
  }

  SGPU_RETURN_IF_ERROR(finish_pass(a.dma_buffer, a.dma_size, a.private_data, final_pass, a.reserve_timestamps, s.out));
  return s.out;
}

}  // namespace sgpu::kmd
