#include "sgpu/kmd/render.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <type_traits>
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
// render() first tries the in-order path (render_in_order, below): one loop that copies the
// command bytes into the DMA buffer a chunk ahead of the packet it checks, and takes the input
// patch list in list order with each packet's entries exactly on its address fields, in field
// order (what a CommandList writes). Every rule is checked there too, on the copy, but without
// saying why: anything it does not accept at once (an out-of-order list, a refusal, a pass without
// a cursor) runs the call again on the full path, which decides. The full path, on a sorted copy
// of the list, runs these steps in order; each checks one thing and names what it refused.
//   check_render_call      the call's own arguments, before anything is read or written
//   start_pass             where a continuing pass starts: the resume cursor (checked in O(1)) or
//                          MultipassOffset proved a packet boundary by walking the headers; the
//                          sorted copy of the input list (sort_patch_list)
//   copy_pass              one memcpy of the command bytes this pass can hold into the DMA buffer;
//                          every later check reads the copy, so the user cannot change what was
//                          validated
//   per packet:
//     decode_header        what the packet is, how long, whether it is allowed at all
//     check_room           room in this pass, or end the pass here (multipass)
//     bind_patch_entries   the input entries that patch this packet, one per address field
//     patch_field          per address field: the entry, the access against its allocation,
//                          the pre-patched address
//     emit_patch_entries   the output patch-location entries
//   finish_pass            the submission fence and the private data
// Both paths produce the same DMA buffer, output list and cursor for what the in-order path
// accepts (test_render_fuzz runs every case both ways), and what a refusal names is the same.

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

/// The input patch list (user memory) in PatchOffset order: a copy of the list (read once) and
/// its indices in PatchOffset order.
struct InputPatchList {
  std::vector<PatchLocation> entries;
  std::vector<std::uint32_t> by_offset;  ///< entry indices in PatchOffset order
  /// Packets are translated in offset order, so binding walks the list once: the position (in
  /// PatchOffset order) of the first entry not yet bound.
  std::uint32_t cursor = 0;

  /// The entry at `cursor` and its index in the user's list, or false at the end of the list.
  bool peek(std::uint32_t& index, PatchLocation& e) const {
    if (cursor >= by_offset.size()) return false;
    index = by_offset[cursor];
    e = entries[index];
    return true;
  }
  void advance() { ++cursor; }
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

/// The input entries bound to one packet's address fields: their indices and their contents, as
/// read once from the list.
struct Binding {
  EntryOf index;
  std::array<PatchLocation, abi::kMaxAddressFields> entry;
};

/// What one render() call reads and produces; the per-packet steps work on it.
struct RenderState {
  const RenderArgs& args;
  CommandBuffer cmd;
  InputPatchList patches;
  std::uint32_t dma_capacity = 0;
  /// The command bytes copied into the DMA buffer at `copied_at`: [start, start + copied).
  std::uint32_t copied = 0;
  std::uint32_t copied_at = 0;
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

/// The check value of a cursor: what it says, mixed with which command buffer and patch list it
/// was issued for (splitmix64 steps). It catches a cursor from another call, a stale one and a
/// changed one (a caller's mistake), never 0 (0 = no cursor).
std::uint64_t cursor_check(const RenderArgs& a, std::uint32_t offset, std::uint32_t patch_index, std::uint32_t flags) {
  const std::uint64_t words[] = {
      reinterpret_cast<std::uintptr_t>(a.command), a.command_length, reinterpret_cast<std::uintptr_t>(a.patch_in),
      a.patch_in_size, (std::uint64_t{offset} << 32) | patch_index, flags};
  std::uint64_t h = 0x53475055'52534f52ull;  // "RSORUPGS"
  for (std::uint64_t w : words) {
    h += w + 0x9e3779b97f4a7c15ull;
    h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ull;
    h = (h ^ (h >> 27)) * 0x94d049bb133111ebull;
    h ^= h >> 31;
  }
  return h != 0 ? h : 1;
}

RenderCursor make_cursor(const RenderArgs& a, std::uint32_t offset, std::uint32_t patch_index, bool sorted) {
  RenderCursor c;
  c.command_offset = offset;
  c.patch_index = patch_index;
  c.flags = sorted ? RenderCursor::kSortedList : 0;
  c.check = cursor_check(a, offset, patch_index, c.flags);
  return c;
}

/// Without a cursor: an earlier pass stopped on a packet boundary; walk the headers to see that
/// this is one (O(offset): what the cursor saves).
Status check_multipass_offset(std::uint32_t multipass_offset, const CommandBuffer& cmd) {
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

/// The resume cursor names this call's MultipassOffset and was issued by Render for this command
/// buffer and patch list.
Status check_cursor(const RenderArgs& a) {
  const RenderCursor& c = a.resume;
  if (c.command_offset != a.multipass_offset)
    return Error::invalid("render: the resume cursor is for command offset {} but MultipassOffset is {}",
                          c.command_offset, a.multipass_offset);
  if ((c.flags & ~RenderCursor::kSortedList) != 0 || c.patch_index > a.patch_in_size ||
      c.check != cursor_check(a, c.command_offset, c.patch_index, c.flags))
    return Error::invalid(
        "render: the resume cursor (command offset {}, patch entry {}, check {:#018x}) was not issued by Render "
        "for this {}-byte command buffer and {}-entry patch list",
        c.command_offset, c.patch_index, c.check, a.command_length, a.patch_in_size);
  return ok_status();
}

/// The sorted copy of the input list (what an out-of-order list needs), the cursor at the first
/// entry at or past `start`. Every entry below the command length lies in some packet and is
/// checked with it (in this pass or an earlier one); one at or past it patches nothing.
Status sort_patch_list(const RenderArgs& a, std::uint32_t start, InputPatchList& in) {
  in.entries.assign(a.patch_in, a.patch_in + a.patch_in_size);
  in.by_offset.resize(in.entries.size());
  std::iota(in.by_offset.begin(), in.by_offset.end(), 0u);
  const auto by_patch_offset = [&](std::uint32_t x, std::uint32_t y) {
    return in.entries[x].patch_offset < in.entries[y].patch_offset;
  };
  std::stable_sort(in.by_offset.begin(), in.by_offset.end(), by_patch_offset);
  in.cursor = static_cast<std::uint32_t>(
      std::lower_bound(in.by_offset.begin(), in.by_offset.end(), start,
                       [&](std::uint32_t i, std::uint32_t o) { return in.entries[i].patch_offset < o; }) -
      in.by_offset.begin());
  for (std::uint32_t i = 0; i < in.entries.size(); ++i) {
    if (in.entries[i].patch_offset >= a.command_length)
      return Error::invalid(
          "render: patch entry {} is unused: PatchOffset {} lies past the {}-byte command "
          "buffer",
          i, in.entries[i].patch_offset, a.command_length);
  }
  return ok_status();
}

/// Where this pass starts in the command buffer and in the (sorted) input list.
Status start_pass(const RenderArgs& a, const CommandBuffer& cmd, InputPatchList& in) {
  const std::uint32_t start = a.multipass_offset;
  if (start != 0) {
    if (start % 4 != 0 || start >= cmd.length)
      return Error::invalid(
          "render: MultipassOffset {} is not a 4-byte aligned offset inside the {}-byte "
          "command buffer",
          start, cmd.length);
    if (a.resume.check != 0) {
      SGPU_RETURN_IF_ERROR(check_cursor(a));
    } else {
      SGPU_RETURN_IF_ERROR(check_multipass_offset(start, cmd));
    }
  }
  return sort_patch_list(a, start, in);
}

/// Copies the command bytes from `off` that this pass can hold into the DMA buffer at the pass's
/// current end, in one memcpy: the packets are then checked, pre-patched and listed in place.
void copy_pass(RenderState& s, std::uint32_t off) {
  const std::uint32_t room = s.dma_capacity > s.out.dma_bytes ? s.dma_capacity - s.out.dma_bytes : 0;
  s.copied = std::min(s.cmd.length - off, room);
  s.copied_at = s.out.dma_bytes;
  // An empty command buffer may come as a null pointer: memcpy must not see it, even for 0 bytes.
  if (s.copied != 0)
    std::memcpy(static_cast<std::byte*>(s.args.dma_buffer) + s.copied_at, s.cmd.bytes + off, s.copied);
}

/// The header alone: what the packet is, how long, whether it is allowed at all.
/// `header` is read from the DMA buffer's copy of the command buffer (`length` bytes).
Result<Packet> decode_header(std::uint32_t header_dword, std::uint32_t off, std::uint32_t length) {
  Packet pk;
  pk.offset = off;
  pk.header = header_dword;
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
  if (pk.end() > length)
    return Error::invalid(
        "render: command offset {}: {} of {} dwords ends at byte {}, past the end of the "
        "{}-byte command buffer",
        off, p->name, pk.dwords, pk.end(), length);
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

/// The input entries whose PatchOffset lies in the packet, bound to its address fields: each on
/// a field's low dword, at most one per field (a field without one is refused by patch_field).
Status bind_patch_entries(InputPatchList& in, const Packet& pk, Binding& b) {
  const abi::PacketInfo* p = pk.info;
  b.index.fill(kNoEntry);
  // Everything before the cursor belongs to earlier packets (they tile the buffer).
  std::uint32_t i;
  PatchLocation e;
  while (in.peek(i, e) && e.patch_offset < pk.end()) {
    const std::uint32_t patch_offset = e.patch_offset;
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
    if (b.index[f] != kNoEntry)
      return Error::invalid(
          "render: patch entries {} and {} both patch {} field '{}' at command offset {} "
          "(PatchOffset {})",
          b.index[f], i, p->name, p->addresses[f].name, pk.offset, patch_offset);
    b.index[f] = i;
    b.entry[f] = e;
    in.advance();
  }
  return ok_status();
}

/// The input entry `i` bound to address field `f`: it exists, names a non-null allocation-list
/// element, and its SlotId (and the slot the output uses) are allowed. Returns that element.
Result<const DxgkAllocationListEntry*> check_patch_entry(const RenderState& s, const Packet& pk, unsigned f,
                                                         std::uint32_t i, const PatchLocation& e) {
  const RenderArgs& a = s.args;
  const abi::PacketInfo* p = pk.info;
  if (i == kNoEntry)
    return Error::invalid(
        "render: command offset {}: {} address field '{}' (PatchOffset {}) has no "
        "patch-location entry",
        pk.offset, p->name, p->addresses[f].name, pk.offset + 4 * p->addresses[f].dword);
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
Status patch_field(const RenderState& s, const Packet& pk, std::uint32_t* pkt, unsigned f, const Binding& b) {
  const std::uint32_t i = b.index[f];
  const PatchLocation& e = b.entry[f];
  SGPU_ASSIGN_OR_RETURN(auto al, check_patch_entry(s, pk, f, i, e));
  const abi::AddressField& field = pk.info->addresses[f];
  const Access acc = access_of(field, pkt, pk.dwords);
  SGPU_RETURN_IF_ERROR(check_access(pk, f, i, e, *al, acc));
  SGPU_ASSIGN_OR_RETURN(auto address, prepatch_address(pk, f, i, e, *al, acc));
  put_address(pkt, field.dword, address);
  return ok_status();
}

/// One output entry per address field of the packet just written at out.dma_bytes.
void emit_patch_entries(RenderState& s, const Packet& pk, const Binding& b) {
  for (unsigned f = 0; f < pk.info->address_count; ++f) {
    const PatchLocation& e = b.entry[f];
    s.args.patch_out[s.out.patch_count++] =
        output_entry(*pk.info, f, e.allocation_index, e.allocation_offset, s.out.dma_bytes);
  }
}

/// Bind, check and pre-patch, list: one packet, already copied to out.dma_bytes.
Status translate_packet(RenderState& s, const Packet& pk) {
  auto* pkt = static_cast<std::uint32_t*>(s.args.dma_buffer) + s.out.dma_bytes / 4;
  Binding b;
  SGPU_RETURN_IF_ERROR(bind_patch_entries(s.patches, pk, b));
  for (unsigned f = 0; f < pk.info->address_count; ++f) SGPU_RETURN_IF_ERROR(patch_field(s, pk, pkt, f, b));
  emit_patch_entries(s, pk, b);
  s.out.dma_bytes += pk.bytes();
  ++s.out.packets;
  return ok_status();
}

/// The full path: every rule checked in turn, each refusal named. (Unused input entries, those
/// at or past the command length, were refused by sort_patch_list.)
Status render_pass(const RenderArgs& a, RenderOutput& result) {
  const CommandBuffer cmd{static_cast<const std::byte*>(a.command), a.command_length};
  RenderState s{a, cmd, InputPatchList{}, 0, 0, 0, RenderOutput{}};
  SGPU_RETURN_IF_ERROR(start_pass(a, cmd, s.patches));
  SGPU_ASSIGN_OR_RETURN(s.dma_capacity, begin_pass("render", a.dma_buffer, a.dma_size, a.reserve_timestamps, s.out));
  const std::uint32_t start = a.multipass_offset;
  copy_pass(s, start);
  const auto* dma = static_cast<const std::byte*>(a.dma_buffer);
  bool final_pass = true;
  for (std::uint32_t off = start; off < cmd.length;) {
    // Inside the copy: dma_bytes + 4 <= dma_capacity always (the fence's room) and off < length.
    std::uint32_t header;
    std::memcpy(&header, dma + s.out.dma_bytes, 4);
    SGPU_ASSIGN_OR_RETURN(auto pk, decode_header(header, off, cmd.length));
    SGPU_ASSIGN_OR_RETURN(auto room, check_room(s, pk));
    if (!room) {
      s.out.multipass_offset = off;
      final_pass = false;
      break;
    }
    SGPU_RETURN_IF_ERROR(translate_packet(s, pk));
    off += pk.bytes();
  }
  if (!final_pass) s.out.resume = make_cursor(a, s.out.multipass_offset, s.patches.cursor, true);

  SGPU_RETURN_IF_ERROR(finish_pass(a.dma_buffer, a.dma_size, a.private_data, final_pass, a.reserve_timestamps, s.out));
  result = s.out;
  return ok_status();
}

// ------------------------------------------------------------------------ the in-order path

/// How far the in-order path copies ahead of the packet it checks, so the packets being checked are
/// still in the core's caches. (One copy of the whole pass first, then the checks, measured the
/// same on the benchmark: chunks of 16 KiB to 64 MiB all within a few per cent.)
constexpr std::uint32_t kCopyAhead = 16 * 1024;

/// The call's lists, as the in-order path's per-field check reads them.
struct InOrderLists {
  const PatchLocation* patch_in;
  PatchLocation* patch_out;
  const DxgkAllocationListEntry* allocations;
  std::uint32_t allocation_count;
  std::uint32_t max_slot_id;
};

/// Address field F of the packet kPackets[I] at command offset `off` (DMA offset `dma_off`), copied
/// to `pkt`: its input entry `in` (read once), the access against the allocation, the pre-patched
/// address, the output entry `out`; check_patch_entry's, check_access's and prepatch_address's
/// rules without messages. Compiled for each packet kind and field, so the field's description
/// (dword, access, extent rule, alignment) is constants; the branches are never taken on input
/// that passes.
template <std::size_t I, unsigned F>
[[gnu::always_inline]] inline bool translate_field(const InOrderLists& l, std::uint32_t* pkt, std::uint32_t dwords,
                                                   std::uint32_t off, std::uint32_t dma_off, const PatchLocation* in,
                                                   PatchLocation* out) {
  constexpr const abi::AddressField& field = abi::kPackets[I].addresses[F];
  constexpr bool writes = field.access == abi::AddressAccess::Write;
  PatchLocation e;
  std::memcpy(&e, in, sizeof e);  // user memory: read once
  // The max_slot_id precondition (render_in_order) makes this SlotId and Reserved check one compare.
  if (e.patch_offset != off + 4 * field.dword || e.allocation_index >= l.allocation_count ||
      e.slot_id_and_reserved >= l.max_slot_id)
    return false;
  const DxgkAllocationListEntry& al = l.allocations[e.allocation_index];
  const Access acc = access_of(field, pkt, dwords);
  const std::uint64_t align_mask = acc.align - 1;
  if (!al.allocation || acc.extent > al.size || e.allocation_offset > al.size - acc.extent || (writes && !al.write) ||
      (acc.align & align_mask) != 0 || (e.allocation_offset & align_mask) != 0)
    return false;
  std::uint64_t address = 0;
  if (al.segment != kSystemMemory) {
    address = al.gpu_address + e.allocation_offset;
    if (address < al.gpu_address || address + acc.extent < address || (address & align_mask) != 0) return false;
  }
  put_address(pkt, field.dword, address);
  out->allocation_index = e.allocation_index;
  out->allocation_offset = e.allocation_offset;
  out->slot_id_and_reserved = F;  // as output_entry writes them
  out->driver_id = writes ? driver_id::kWrite : driver_id::kRead;
  out->patch_offset = dma_off + 4 * field.dword;
  out->split_offset = dma_off;
  return true;
}

/// Every address field of the packet kPackets[I]: its entries are patch_in[cursor...], its output
/// entries patch_out[patch_count...].
template <std::size_t I>
bool translate_fields(const InOrderLists& l, std::uint32_t* pkt, std::uint32_t dwords, std::uint32_t off,
                      std::uint32_t dma_off, std::uint32_t cursor, std::uint32_t patch_count) {
  constexpr unsigned kCount = abi::kPackets[I].address_count;
  static_assert(kCount <= 2 && abi::kMaxAddressFields == 2, "translate_fields handles two address fields");
  const PatchLocation* in = l.patch_in + cursor;
  PatchLocation* out = l.patch_out + patch_count;
  if constexpr (kCount > 0)
    if (!translate_field<I, 0>(l, pkt, dwords, off, dma_off, in, out)) return false;
  if constexpr (kCount > 1)
    if (!translate_field<I, 1>(l, pkt, dwords, off, dma_off, in + 1, out + 1)) return false;
  return true;
}

using TranslateFields = bool (*)(const InOrderLists&, std::uint32_t*, std::uint32_t, std::uint32_t, std::uint32_t,
                                 std::uint32_t, std::uint32_t);
template <std::size_t... I>
constexpr std::array<TranslateFields, sizeof...(I)> translate_fields_table(std::index_sequence<I...>) {
  return {&translate_fields<I>...};
}
/// translate_fields for each packet kind, by kPackets index.
constexpr auto kTranslateFields = translate_fields_table(std::make_index_sequence<abi::kPackets.size()>{});

/// What the in-order path checks of a header, by opcode: one load of 8 bytes instead of the
/// PacketInfo lookups. translate == nullptr: a packet Render never passes (decode_header's first
/// three rules: unknown, privileged, executing another buffer).
struct InOrderPacket {
  TranslateFields translate = nullptr;
  std::uint16_t min_dwords = 0;
  std::uint16_t max_dwords = 0;
  std::uint8_t flags_mask = 0;
  std::uint8_t address_count = 0;
};
static_assert(abi::header::kDwordsMask <= 0xffff, "InOrderPacket keeps dword counts in 16 bits");
constexpr std::array<InOrderPacket, 256> kInOrderPackets = [] {
  std::array<InOrderPacket, 256> table{};
  for (std::size_t i = 0; i < abi::kPackets.size(); ++i) {
    const abi::PacketInfo& p = abi::kPackets[i];
    bool executes = false;
    for (unsigned f = 0; f < p.address_count; ++f) executes |= p.addresses[f].access == abi::AddressAccess::Execute;
    if (p.privileged || executes) continue;
    table[static_cast<std::uint8_t>(p.opcode)] = {kTranslateFields[i], static_cast<std::uint16_t>(p.min_dwords),
                                                  static_cast<std::uint16_t>(p.max_dwords), p.flags_mask,
                                                  p.address_count};
  }
  return table;
}();

/// Where a pass of the in-order path starts: the command offset and the first input entry, from
/// the resume cursor. False: not for this path (no cursor, a sorted one, or one that does not
/// check out; the full path says which).
bool in_order_start(const RenderArgs& a, std::uint32_t& cursor) {
  cursor = 0;
  const std::uint32_t start = a.multipass_offset;
  if (start == 0) return true;
  if (start % 4 != 0 || start >= a.command_length || a.resume.check == 0 || a.resume.flags != 0 ||
      !check_cursor(a))
    return false;
  cursor = a.resume.patch_index;
  // The entry before the cursor belongs to an earlier pass.
  return cursor == 0 || a.patch_in[cursor - 1].patch_offset < start;
}

/// The in-order path (see the top of this section): true when it translated the pass, false when
/// the full path must decide. It accepts only input the full path accepts, and produces the same
/// output: the same rules on the same bytes (the copy in the DMA buffer, each input entry read
/// once), in a different order and without messages. Binding is simpler in order: a packet's
/// entries are the next address_count entries of the list, each on its field's low dword in field
/// order (fields are in dword order, so the PatchOffsets increase); any other entry in the packet
/// or after it lands where the next packet (or the end of the list) does not expect it. One
/// difference, as with the in-order reading before: an input entry past the end of the command
/// buffer is refused by the final pass, where the full path (which sorts the whole list on every
/// pass) refuses it on the first; a pass that is not the final one does not read the list past
/// its own entries, so N passes stay O(N).
bool render_in_order(const RenderArgs& a, RenderOutput& result) {
  std::uint32_t cursor;
  // SlotId < max_slot_id with the Reserved bits clear is then one compare, and every field's
  // ordinal (the output SlotId) is below max_slot_id.
  if (a.max_slot_id > kSlotIdMask + 1 || a.max_slot_id < abi::kMaxAddressFields || !in_order_start(a, cursor))
    return false;
  RenderOutput out;
  const auto capacity = begin_pass("render", a.dma_buffer, a.dma_size, a.reserve_timestamps, out);
  if (!capacity) return false;
  const std::uint32_t start = a.multipass_offset;
  const std::uint32_t length = a.command_length;
  auto* dma = static_cast<std::byte*>(a.dma_buffer);
  const auto* cmd = static_cast<const std::byte*>(a.command);
  // The arguments the loop reads, in locals: the compiler cannot tell that the stores into the
  // DMA buffer and the output list leave them alone, and would load them again per field.
  const InOrderLists lists{a.patch_in, a.patch_out, a.allocation_list, a.allocation_list_size, a.max_slot_id};
  const std::uint32_t patch_in_size = a.patch_in_size;
  const std::uint32_t patch_out_size = a.patch_out_size;
  const std::uint32_t dma_capacity = *capacity;
  const std::uint32_t fence_bytes = submission_fence_bytes();
  // Command byte c is copied to DMA byte c + shift (mod 2^32); the pass copies no further than
  // copy_end: the command buffer's end or the DMA buffer's room.
  const std::uint32_t shift = out.dma_bytes - start;
  const std::uint32_t room = dma_capacity > out.dma_bytes ? dma_capacity - out.dma_bytes : 0;
  const std::uint32_t copy_end = start + std::min(length - start, room);
  std::uint32_t copied = start;  // [start, copied) is in the DMA buffer
  // Copies up to `need` at least (a chunk ahead); false if the pass cannot hold it (the room
  // check before each copy rules that out).
  const auto copy_to = [&](std::uint32_t need) {
    const std::uint32_t to = std::min(copy_end, std::max(need, copied + kCopyAhead));
    std::memcpy(dma + (copied + shift), cmd + copied, to - copied);
    copied = to;
    return copied >= need;
  };

  bool final_pass = true;
  std::uint32_t off = start;
  while (off < length) {
    // Room for the fence after every packet keeps the header inside the pass (see render_pass).
    if (off + 4 > copied && !copy_to(off + 4)) return false;
    auto* pkt = reinterpret_cast<std::uint32_t*>(dma + out.dma_bytes);
    const std::uint32_t header = pkt[0];
    const InOrderPacket& p = kInOrderPackets[abi::header_opcode(header)];
    const std::uint32_t dwords = abi::header_dwords(header);
    const std::uint32_t bytes = 4 * dwords;
    if (p.translate == nullptr || dwords < p.min_dwords || dwords > p.max_dwords ||
        std::uint64_t{off} + bytes > length || (abi::header_flags(header) & ~p.flags_mask) != 0)
      return false;
    // room_for, with the fence's size read once.
    if (std::uint64_t{out.dma_bytes} + bytes + fence_bytes > dma_capacity ||
        std::uint64_t{out.patch_count} + p.address_count > patch_out_size) {
      if (out.packets == 0) return false;  // not even one packet: the full path refuses
      out.multipass_offset = off;
      final_pass = false;
      break;
    }
    if (off + bytes > copied && !copy_to(off + bytes)) return false;
    if (std::uint64_t{cursor} + p.address_count > patch_in_size) return false;
    if (!p.translate(lists, pkt, dwords, off, out.dma_bytes, cursor, out.patch_count)) return false;
    cursor += p.address_count;
    out.patch_count += p.address_count;
    out.dma_bytes += bytes;
    ++out.packets;
    off += bytes;
  }
  if (final_pass) {
    if (cursor != a.patch_in_size) return false;  // unused entries: the full path names them
  } else {
    out.resume = make_cursor(a, out.multipass_offset, cursor, false);
  }
  if (!finish_pass(a.dma_buffer, a.dma_size, a.private_data, final_pass, a.reserve_timestamps, out)) return false;
  result = out;
  return true;
}

}  // namespace

std::uint32_t submission_fence_bytes() { return packet_info(abi::Opcode::Fence).min_dwords * 4; }

std::uint32_t timestamp_reserve_bytes() {
  return 2 * packet_info(abi::Opcode::Timestamp).min_dwords * 4 + 16 + 7;  // packets, landing area, its alignment
}

Result<RenderOutput> render(const RenderArgs& a) {
  SGPU_RETURN_IF_ERROR(check_render_call(a));
  RenderOutput out;
  if (render_in_order(a, out)) return out;
  // Out of order, refused, or not for the in-order path: the full path decides, so that a refusal
  // names what it always named (an entry later in the list may belong to an earlier packet, the
  // list's unused entries come first).
  SGPU_RETURN_IF_ERROR(render_pass(a, out));
  return out;
}

}  // namespace sgpu::kmd
