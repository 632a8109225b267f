#include "sgpu/kmd/render.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
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
// saying why and not always at once (see "the in-order path" below): anything it does not accept
// (an out-of-order list, a refusal, a pass without a cursor) runs the call again on the full
// path, which decides. The full path, on a sorted copy
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
// The in-order path only ever says "accepted" or "don't know": the full path is the one place
// that names a refusal. So it does not stop at the first broken rule. What decides where the loop
// goes or which memory it touches is checked as it goes (the header, the room, the lists'
// lengths); every other rule of an address field is a compare whose result is ORed into a "something
// is off" word, tested once at the end of the pass. A pass that broke a rule has then written
// nothing that matters: the full path, which runs next and refuses, copies the pass's command
// bytes into the DMA buffer again, the private data is written only by an accepted pass, and a
// refused call's output entries are not the caller's to use (render.hpp). Each packet kind is
// compiled on its own from the ABI table (header, room and fields with the kind's constants),
// reached by one jump on the opcode.

/// How far the in-order path copies ahead of the packet it checks, so the packets being checked are
/// still in the core's caches. (One copy of the whole pass first, then the checks, measured the
/// same on the benchmark: chunks of 8 KiB to 64 MiB all within a few per cent; so did copying in
/// 64- to 512-byte blocks between the packets, so that the core would copy while it checks.)
constexpr std::uint32_t kCopyAhead = 16 * 1024;

/// Sizes up to this keep the range check one compare (AllocationOffset is below 2^32 and a
/// rectangle's extent at most 2^64 - 2^32, so their sum does not wrap either).
constexpr std::uint64_t kMaxInOrderSize = std::uint64_t{1} << 62;

/// One allocation-list element as the in-order path checks it, worked out once per call: an
/// access of `extent` bytes at AllocationOffset `o` is allowed iff o + extent < read_end (or
/// write_end), and the pre-patched address is base + (o & offset_mask). The ends are 0 — every
/// access refused — for a null element, a write through a read-only one, and an element the path
/// leaves to the full one (a size past kMaxInOrderSize, a GPU address not kMaxFieldAlign-aligned
/// or whose allocation wraps past 2^64: the full path checks each access of those in full).
struct InOrderAllocation {
  // No member initializers: the table on the stack is not cleared per call (PaddedAllocationTable).
  std::uint64_t base;         ///< the GPU address, 0 in system memory
  std::uint64_t read_end;     ///< size + 1, or 0
  std::uint64_t write_end;    ///< size + 1 if the list allows writes, else 0
  std::uint64_t offset_mask;  ///< ~0 resident, 0 in system memory (pre-patched to 0)
};
constexpr InOrderAllocation kRefusingAllocation{0, 0, 0, 0};

InOrderAllocation in_order_allocation(const DxgkAllocationListEntry& al) {
  InOrderAllocation r = kRefusingAllocation;
  const bool resident = al.segment != kSystemMemory;
  if (!al.allocation || al.size > kMaxInOrderSize) return r;
  if (resident && (al.gpu_address % kMaxFieldAlign != 0 || al.gpu_address > ~std::uint64_t{0} - al.size)) return r;
  r.base = resident ? al.gpu_address : 0;
  r.offset_mask = resident ? ~std::uint64_t{0} : 0;
  r.read_end = al.size + 1;
  r.write_end = al.write ? al.size + 1 : 0;
  return r;
}

/// Allocation lists up to this many elements (padded: one less) are worked out on the stack.
constexpr std::uint32_t kInOrderStackAllocations = 64;

/// The call's allocation list as InOrderAllocations (refusing elements pad it: every access
/// through one is "don't know").
using InOrderAllocations = PaddedAllocationTable<InOrderAllocation, kInOrderStackAllocations>;

// PatchLocation as the in-order path reads it: its first 64-bit word is {AllocationIndex, SlotId}.
static_assert(sizeof(PatchLocation) == 24 && offsetof(PatchLocation, allocation_index) == 0 &&
                  offsetof(PatchLocation, slot_id_and_reserved) == 4,
              "the in-order path reads AllocationIndex and SlotId as one 64-bit word");

/// The in-order path's loop state: the per-kind code below works on it (everything inlined into
/// one loop, so it lives in registers).
struct InOrderLoop {
  std::byte* dma;                  ///< + a command offset: where that command byte's copy is
  const PatchLocation* in;         ///< the packet's first input entry
  PatchLocation* out;              ///< its first output entry
  PatchLocation* out_start;
  PatchLocation* out_end;          ///< output entries before it have room in both lists
  const InOrderAllocation* allocations;
  std::uint32_t index_mask;
  std::uint32_t off;               ///< the packet's command offset
  std::uint64_t dma_offsets;       ///< its DMA offset, in both halves ({PatchOffset, SplitOffset} of an entry)
  std::uint64_t end = 0;           ///< a packet ending at or before it needs no exact check
  std::uint64_t first_words = 0;   ///< OR of every entry's {AllocationIndex, SlotId}
  std::uint64_t bad = 0;           ///< nonzero: some other rule is broken
  std::uint32_t entries() const { return static_cast<std::uint32_t>(out - out_start); }
};

/// Address field F of the packet kPackets[I] at command offset s.off (its copy `pkt`, `dwords`
/// long): its input entry (each word read once), the access against the allocation, the
/// pre-patched address, the output entry. check_patch_entry's, check_access's and
/// prepatch_address's rules as compares ORed into s.bad and s.first_words, without a branch.
/// Compiled for each packet kind and field, so the field's description (dword, access, extent
/// rule, alignment) is constants.
template <std::size_t I, unsigned F>
[[gnu::always_inline]] inline void in_order_field(InOrderLoop& s, std::uint32_t* pkt, std::uint32_t dwords) {
  constexpr const abi::AddressField& field = abi::kPackets[I].addresses[F];
  constexpr bool writes = field.access == abi::AddressAccess::Write;
  const PatchLocation* in = s.in + F;
  PatchLocation* out = s.out + F;
  std::uint64_t first_word;
  std::memcpy(&first_word, in, sizeof first_word);
  const std::uint32_t allocation_offset = in->allocation_offset;
  const std::uint32_t patch_offset = in->patch_offset;
  // AllocationIndex and SlotId (with Reserved) are checked at the end of the pass, on the OR.
  s.first_words |= first_word;
  const InOrderAllocation& al = s.allocations[first_word & s.index_mask];
  const Access acc = access_of(field, pkt, dwords);
  // Nonzero unless PatchOffset is the field's and AllocationOffset has the field's alignment.
  s.bad |= (patch_offset ^ (s.off + 4 * field.dword)) | (allocation_offset & (acc.align - 1));
  s.bad |= allocation_offset + acc.extent >= (writes ? al.write_end : al.read_end);
  const std::uint64_t address = al.base + (allocation_offset & al.offset_mask);
  std::memcpy(pkt + field.dword, &address, sizeof address);
  // As output_entry writes it: SlotId = the field's ordinal, DriverId = the access.
  out->allocation_index = static_cast<std::uint32_t>(first_word);
  out->slot_id_and_reserved = F;
  out->driver_id = writes ? driver_id::kWrite : driver_id::kRead;
  out->allocation_offset = allocation_offset;
  const std::uint64_t offsets = s.dma_offsets + 4 * field.dword;  // {PatchOffset, SplitOffset}
  std::memcpy(&out->patch_offset, &offsets, sizeof offsets);
}
static_assert(offsetof(PatchLocation, split_offset) == offsetof(PatchLocation, patch_offset) + 4,
              "in_order_field writes PatchOffset and SplitOffset as one 64-bit word");

enum class InOrderStep { Next, EndPass, Refuse };

/// The in-order path's copy of the pass's command bytes into the DMA buffer, a chunk ahead of the
/// packet being checked, and the exact checks of a packet's end and room that the loop's quick
/// compares (InOrderLoop::end, out_end) leave to it. Out of the loop: it runs about once a chunk.
class InOrderCopy {
 public:
  InOrderCopy(const RenderArgs& a, std::uint32_t cursor, std::uint32_t dma_start, std::uint32_t dma_capacity)
      : dma_(static_cast<std::byte*>(a.dma_buffer)),
        cmd_(static_cast<const std::byte*>(a.command)),
        length_(a.command_length),
        shift_(dma_start - a.multipass_offset),
        copied_(a.multipass_offset),
        patch_in_left_(a.patch_in_size - cursor),
        patch_out_size_(a.patch_out_size) {
    const std::uint32_t start = a.multipass_offset;
    const std::uint32_t room = dma_capacity > dma_start ? dma_capacity - dma_start : 0;
    copy_end_ = start + std::min(length_ - start, room);
    const std::uint32_t fence_bytes = submission_fence_bytes();
    room_end_ = dma_capacity >= std::uint64_t{dma_start} + fence_bytes
                    ? start + std::uint64_t{dma_capacity - dma_start - fence_bytes}
                    : 0;
  }

  std::uint32_t shift() const { return shift_; }
  /// A packet ending at or before this is inside the command buffer, the pass's room and the
  /// copy, with the next header copied too.
  std::uint64_t fast_end() const {
    return std::min({std::uint64_t{length_}, room_end_, copied_ >= 4 ? std::uint64_t{copied_} - 4 : 0});
  }
  /// Entries (input read = output written) the pass may reach.
  std::uint32_t entry_end() const { return std::min(patch_in_left_, patch_out_size_); }

  /// Copies up to `need` at least (a chunk ahead); false if the pass cannot hold it.
  [[gnu::noinline]] bool to(std::uint32_t need) {
    const std::uint32_t to = std::min(copy_end_, std::max(need, copied_ + kCopyAhead));
    std::memcpy(dma_ + (copied_ + shift_), cmd_ + copied_, to - copied_);
    copied_ = to;
    return copied_ >= need;
  }

  /// The exact checks of a packet (already checked alone) at `off` of `bytes` with `count`
  /// address fields, `entries` entries and `packets` packets into the pass, in decode_header's,
  /// check_room's and the binding's order; then the copy reaches past it and the next header.
  /// On Next, `end` is the loop's new InOrderLoop::end. (Values in and out, so that the loop's
  /// state stays in registers.)
  struct Checked {
    InOrderStep step;
    std::uint64_t end;
  };
  [[gnu::noinline]] Checked packet(std::uint32_t off, std::uint32_t bytes, std::uint32_t entries, std::uint32_t count,
                                   std::uint32_t packets) {
    const std::uint64_t packet_end = std::uint64_t{off} + bytes;
    if (packet_end > length_) return {InOrderStep::Refuse, 0};
    if (packet_end > room_end_ || std::uint64_t{entries} + count > patch_out_size_)
      return {packets == 0 ? InOrderStep::Refuse : InOrderStep::EndPass, 0};  // not even one packet: refused
    if (std::uint64_t{entries} + count > patch_in_left_) return {InOrderStep::Refuse, 0};
    const auto next = static_cast<std::uint32_t>(packet_end);
    if (next > copied_ && !to(next)) return {InOrderStep::Refuse, 0};
    if (next < length_ && next + 4 > copied_ && !to(next + 4)) return {InOrderStep::Refuse, 0};
    return {InOrderStep::Next, fast_end()};
  }

 private:
  std::byte* dma_;
  const std::byte* cmd_;
  std::uint32_t length_;
  std::uint32_t shift_;
  std::uint32_t copied_;        ///< [start, copied) is in the DMA buffer
  std::uint32_t patch_in_left_;
  std::uint32_t patch_out_size_;
  std::uint32_t copy_end_ = 0;  ///< the command buffer's end or the DMA buffer's room
  std::uint64_t room_end_ = 0;  ///< where the pass's packets may end, leaving the fence's room
};

/// The packet kinds the in-order path takes: not privileged, not executing another buffer
/// (decode_header's refusals of a known opcode).
constexpr bool in_order_takes(std::size_t i) {
  if (i >= abi::kPackets.size()) return false;
  const abi::PacketInfo& p = abi::kPackets[i];
  for (unsigned f = 0; f < p.address_count; ++f)
    if (p.addresses[f].access == abi::AddressAccess::Execute) return false;
  return !p.privileged;
}
/// The case label of kPackets[I] in render_in_order's switch on the opcode: its opcode, or (a kind
/// it does not take, or no kind) a label no opcode reaches, so that opcode goes to `default`.
template <std::size_t I>
constexpr unsigned in_order_label() {
  if constexpr (in_order_takes(I)) return static_cast<std::uint8_t>(abi::kPackets[I].opcode);
  return 0x100 + I;
}

/// One packet of kind kPackets[I] with header `header` at s.off: the header's rules, the room,
/// then every address field; advances s past it.
template <std::size_t I>
[[gnu::always_inline]] inline InOrderStep in_order_packet(InOrderLoop& s, InOrderCopy& copy, std::uint32_t header,
                                                          std::uint32_t packets) {
  constexpr const abi::PacketInfo& p = abi::kPackets[I];
  constexpr unsigned kCount = p.address_count;
  static_assert(kCount <= 2 && abi::kMaxAddressFields == 2, "in_order_packet handles two address fields");
  constexpr std::uint32_t kFlags = std::uint32_t{p.flags_mask} << abi::header::kFlagsLsb;
  std::uint32_t dwords = p.min_dwords;
  if constexpr (p.min_dwords == p.max_dwords) {
    // One compare: the opcode, the dword count, no undefined flag bit.
    if ((header & ~kFlags) != abi::make_header(p.opcode, p.min_dwords)) return InOrderStep::Refuse;
  } else {
    dwords = abi::header_dwords(header);
    if ((header & (abi::header::kFlagsMask << abi::header::kFlagsLsb) & ~kFlags) != 0 ||
        dwords - p.min_dwords > p.max_dwords - p.min_dwords)
      return InOrderStep::Refuse;
  }
  const std::uint32_t bytes = 4 * dwords;
  if (__builtin_expect(s.off + std::uint64_t{bytes} > s.end || s.out_end - s.out < kCount, 0)) {
    const auto checked = copy.packet(s.off, bytes, s.entries(), kCount, packets);
    if (checked.step != InOrderStep::Next) return checked.step;
    s.end = checked.end;
  }
  auto* pkt = reinterpret_cast<std::uint32_t*>(s.dma + s.off);
  if constexpr (kCount > 0) in_order_field<I, 0>(s, pkt, dwords);
  if constexpr (kCount > 1) in_order_field<I, 1>(s, pkt, dwords);
  s.in += kCount;
  s.out += kCount;
  s.off += bytes;
  s.dma_offsets += bytes * 0x1'0000'0001ull;
  return InOrderStep::Next;
}

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

/// The in-order path (see the top of this section and of Render's): true when it translated the
/// pass, false when the full path must decide. It accepts only input the full path accepts, and
/// produces the same output: the same rules on the same bytes (the copy in the DMA buffer, each
/// input entry read once), in a different order and without messages. Binding is simpler in
/// order: a packet's entries are the next address_count entries of the list, each on its field's
/// low dword in field order (fields are in dword order, so the PatchOffsets increase); any other
/// entry in the packet or after it lands where the next packet (or the end of the list) does not
/// expect it. Two differences: an input entry past the end of the command buffer is refused by
/// the final pass, where the full path (which sorts the whole list on every pass) refuses it on
/// the first (a pass that is not the final one does not read the list past its own entries, so N
/// passes stay O(N)); and SlotIds are checked on their OR, so with a MaxAllocationListSlotId that
/// is not a power of two some lists the full path accepts are left to it.
[[gnu::noinline]] bool render_in_order(const RenderArgs& a, RenderOutput& result) {
  std::uint32_t cursor;
  // SlotId < max_slot_id with the Reserved bits clear is then one compare, and every field's
  // ordinal (the output SlotId) is below max_slot_id.
  if (a.max_slot_id > kSlotIdMask + 1 || a.max_slot_id < abi::kMaxAddressFields || !in_order_start(a, cursor))
    return false;
  // The allocation list is worked out once per call: left to the full path when that costs more
  // than the entries that use it.
  if (a.allocation_list_size >= std::max(kInOrderStackAllocations, a.patch_in_size)) return false;
  RenderOutput out;
  const auto capacity = begin_pass("render", a.dma_buffer, a.dma_size, a.reserve_timestamps, out);
  if (!capacity) return false;
  const InOrderAllocations allocations(a.allocation_list, a.allocation_list_size, 1, kRefusingAllocation,
                                       in_order_allocation);
  const std::uint32_t start = a.multipass_offset;
  const std::uint32_t length = a.command_length;
  const std::uint32_t dma_start = out.dma_bytes;
  InOrderCopy copy(a, cursor, dma_start, *capacity);
  InOrderLoop s{
      // dma + command offset: where the copy of that command byte is (an address before the buffer
      // when the pass starts past its DMA offset, so computed as an integer).
      reinterpret_cast<std::byte*>(reinterpret_cast<std::uintptr_t>(a.dma_buffer) + dma_start - std::uintptr_t{start}),
      a.patch_in + cursor, a.patch_out, a.patch_out, a.patch_out + copy.entry_end(),
      allocations.table(), allocations.index_mask(), start, dma_start * 0x1'0000'0001ull};

  bool final_pass = true;
  std::uint32_t packets = 0;
  if (start < length && !copy.to(start + 4)) return false;
  s.end = copy.fast_end();
  // Invariant: s.off < length => the header at s.off is in the copy.
  while (s.off < length) {
    std::uint32_t header;
    std::memcpy(&header, s.dma + s.off, sizeof header);
    InOrderStep step = InOrderStep::Refuse;
    switch (unsigned{abi::header_opcode(header)}) {
      // One case per packet kind (a jump table; the kind's checks and fields inlined), by
      // kPackets index; a kind the path does not take, or an unknown opcode, goes to default.
#define SGPU_IN_ORDER_CASE(I)                                                 \
  case in_order_label<I>():                                                   \
    if constexpr (in_order_takes(I)) step = in_order_packet<I>(s, copy, header, packets); \
    break;
      SGPU_IN_ORDER_CASE(0)
      SGPU_IN_ORDER_CASE(1)
      SGPU_IN_ORDER_CASE(2)
      SGPU_IN_ORDER_CASE(3)
      SGPU_IN_ORDER_CASE(4)
      SGPU_IN_ORDER_CASE(5)
      SGPU_IN_ORDER_CASE(6)
      SGPU_IN_ORDER_CASE(7)
      SGPU_IN_ORDER_CASE(8)
      SGPU_IN_ORDER_CASE(9)
      SGPU_IN_ORDER_CASE(10)
      SGPU_IN_ORDER_CASE(11)
      SGPU_IN_ORDER_CASE(12)
      SGPU_IN_ORDER_CASE(13)
      SGPU_IN_ORDER_CASE(14)
      SGPU_IN_ORDER_CASE(15)
#undef SGPU_IN_ORDER_CASE
      default:
        break;
    }
    static_assert(abi::kPackets.size() <= 16, "render_in_order: add cases up to kPackets.size()");
    if (step == InOrderStep::Refuse) return false;
    if (step == InOrderStep::EndPass) {
      out.multipass_offset = s.off;
      final_pass = false;
      break;
    }
    ++packets;
  }
  // The rules checked on the OR: every AllocationIndex read the element it names (the OR of the
  // indices is inside the padded table, so each index is, and one past the list read a refusing
  // element), and every SlotId with the Reserved bits is below max_slot_id (the OR is: exact when
  // max_slot_id is a power of two; otherwise a list the full path accepts may be left to it).
  if (s.bad != 0 || static_cast<std::uint32_t>(s.first_words) > s.index_mask ||
      (s.first_words >> 32) >= a.max_slot_id)
    return false;
  out.dma_bytes = dma_start + (s.off - start);
  out.patch_count = s.entries();
  out.packets = packets;
  if (final_pass) {
    if (cursor + s.entries() != a.patch_in_size) return false;  // unused entries: the full path names them
  } else {
    out.resume = make_cursor(a, out.multipass_offset, cursor + s.entries(), false);
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
