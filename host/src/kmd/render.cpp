#include "sgpu/kmd/render.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <numeric>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sgpu/packet_writer.hpp"

namespace sgpu::kmd {

namespace {

/// DXGKARG_RENDER/PRESENT: pDmaBuffer starts 4 KiB aligned.
constexpr std::uintptr_t kDmaBufferAlign = 4096;
/// PatchLocation: SlotId is bits 0-23, bits 24-31 are Reserved.
constexpr std::uint32_t kSlotIdMask = 0x00ffffffu;

const abi::PacketInfo& info(abi::Opcode op) { return *abi::find_packet(static_cast<std::uint8_t>(op)); }

/// Bytes a rectangle touches from its first byte: (height - 1) * pitch + width, 0 when empty.
/// Fits 64 bits: (2^32 - 1)^2 + 2^32 - 1 < 2^64.
std::uint64_t rect_extent(std::uint64_t width, std::uint64_t height, std::uint64_t pitch) {
  if (width == 0 || height == 0) return 0;
  return (height - 1) * pitch + width;
}

/// What a packet touches through one of its address fields, and the alignment the device
/// requires of that address (1 = any).
struct Access {
  std::uint64_t extent = 0;
  std::uint32_t align = 1;
};

/// The access through address field `field` of the packet `pkt` (header included, `dwords`
/// long), as spec/abi.toml describes the field (`extent`, `align`; abi::AddressField). The ABI
/// generator refuses an address field without both, so a new packet cannot slip through Render
/// unchecked.
Access access_of(const abi::AddressField& field, const std::uint32_t* pkt, std::uint32_t dwords) {
  const std::uint8_t flags = abi::header_flags(pkt[0]);
  const auto& d = field.extent_dwords;
  std::uint64_t extent = 0;
  switch (field.extent) {
    case abi::ExtentKind::Constant:
      extent = field.value.get(flags);
      break;
    case abi::ExtentKind::Field:
      extent = pkt[d[0]];
      break;
    case abi::ExtentKind::Variable:  // dwords >= min_dwords > d[0]: the header check came first
      extent = 4ull * (dwords - d[0]);
      break;
    case abi::ExtentKind::Rect:
      extent = rect_extent(pkt[d[0]], pkt[d[1]], pkt[d[2]]);
      break;
  }
  return Access{extent, field.align.get(flags)};
}

void put_address(std::uint32_t* pkt, unsigned dword, std::uint64_t address) {
  pkt[dword] = static_cast<std::uint32_t>(address);
  pkt[dword + 1] = static_cast<std::uint32_t>(address >> 32);
}

/// The checks Render and Present share on the DMA buffer and its private data.
Status check_dma(const char* ddi, const void* dma_buffer, std::uint32_t dma_size, const void* private_data,
                 std::uint32_t private_data_size) {
  if (dma_buffer == nullptr) return Error::invalid("{}: the DMA buffer is null", ddi);
  if (reinterpret_cast<std::uintptr_t>(dma_buffer) % kDmaBufferAlign != 0)
    return Error::invalid("{}: the DMA buffer at {} is not {}-byte aligned", ddi, dma_buffer, kDmaBufferAlign);
  if (private_data == nullptr || private_data_size < sizeof(RenderPrivateData))
    return Error::invalid("{}: DMA buffer private data of {} bytes{}; RenderPrivateData needs {}", ddi,
                          private_data_size, private_data == nullptr ? " (null)" : "", sizeof(RenderPrivateData));
  if ((dma_size & ~3u) < submission_fence_bytes())
    return Error::invalid("{}: a DMA buffer of {} bytes cannot hold the {}-byte submission fence", ddi, dma_size,
                          submission_fence_bytes());
  return ok_status();
}

/// This pass's DMA buffer (keeping the submission fence's room) and output patch list have room
/// for a `bytes`-byte packet `p` (Render and Present).
bool room_for(const RenderOutput& out, const abi::PacketInfo& p, std::uint32_t bytes, std::uint32_t dma_capacity,
              std::uint32_t patch_out_size) {
  return std::uint64_t{out.dma_bytes} + bytes + submission_fence_bytes() <= dma_capacity &&
         std::uint64_t{out.patch_count} + p.address_count <= patch_out_size;
}

/// The output patch-location entry for address field `f` of the packet `p` at DMA byte offset
/// `packet_offset` (Render and Present). Every reference is listed even when pre-patched: the
/// allocation may move before submission.
PatchLocation output_entry(const abi::PacketInfo& p, unsigned f, std::uint32_t allocation_index,
                           std::uint32_t allocation_offset, std::uint32_t packet_offset) {
  PatchLocation o;
  o.allocation_index = allocation_index;
  o.allocation_offset = allocation_offset;
  o.slot_id_and_reserved = f;  // each packet rebinds its slots: what the previous one held is free
  o.driver_id = p.addresses[f].access == abi::AddressAccess::Write ? driver_id::kWrite : driver_id::kRead;
  o.patch_offset = packet_offset + 4 * p.addresses[f].dword;
  o.split_offset = packet_offset;
  return o;
}

/// Ends a pass: on the final one appends the submission fence (a FENCE with value64, address and
/// value 0 until Patch fills them in) and records it in the private data; an earlier pass
/// records that its buffer has no fence (the private data is reused from buffer to buffer).
Status finish_pass(void* dma_buffer, std::uint32_t dma_capacity, void* private_data, bool final_pass,
                   RenderOutput& out) {
  RenderPrivateData priv;
  priv.magic = RenderPrivateData::kMagic;
  if (final_pass) {
    PacketWriter w(dma_buffer, dma_capacity, out.dma_bytes);
    SGPU_RETURN_IF_ERROR(w.fence(0, 0, abi::fence_flags::kValue64));
    priv.fence_offset = out.dma_bytes;
    priv.flags = RenderPrivateData::kHasFence;
    out.dma_bytes = w.offset();
  }
  std::memcpy(private_data, &priv, sizeof priv);
  out.complete = final_pass;
  return ok_status();
}

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

std::uint32_t submission_fence_bytes() { return info(abi::Opcode::Fence).min_dwords * 4; }

Result<RenderOutput> render(const RenderArgs& a) {
  SGPU_RETURN_IF_ERROR(check_render_call(a));
  const CommandBuffer cmd{static_cast<const std::byte*>(a.command), a.command_length};
  SGPU_RETURN_IF_ERROR(check_multipass_offset(a.multipass_offset, cmd));
  SGPU_ASSIGN_OR_RETURN(auto patches, read_patch_list(a));

  RenderState s{a, cmd, std::move(patches), a.dma_size & ~3u, RenderOutput{}};
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

  SGPU_RETURN_IF_ERROR(finish_pass(a.dma_buffer, s.dma_capacity, a.private_data, final_pass, s.out));
  return s.out;
}

namespace {

Status check_surface(const char* which, const SurfaceDesc& s, const DxgkAllocationListEntry& al) {
  if (s.bytes_per_pixel == 0) return Error::invalid("present: {} surface has 0 bytes per pixel", which);
  const std::uint64_t row = std::uint64_t{s.width} * s.bytes_per_pixel;
  if (row > s.pitch)
    return Error::invalid("present: {} surface rows of {} pixels x {} bytes = {} bytes exceed the pitch {}", which,
                          s.width, s.bytes_per_pixel, row, s.pitch);
  const std::uint64_t extent = rect_extent(row, s.height, s.pitch);
  if (extent > al.size)
    return Error::invalid("present: {} surface {}x{} (pitch {}) needs {} bytes, its allocation has {}", which, s.width,
                          s.height, s.pitch, extent, al.size);
  return ok_status();
}

std::string to_string(const Rect& r) { return fmt::format("[{}, {}, {}, {})", r.left, r.top, r.right, r.bottom); }

/// `r` is well formed and lies inside [0, width) x [0, height).
Status check_rect(const char* what, const Rect& r, std::uint32_t width, std::uint32_t height) {
  if (r.left < 0 || r.top < 0 || r.right < r.left || r.bottom < r.top ||
      static_cast<std::uint32_t>(r.right) > width || static_cast<std::uint32_t>(r.bottom) > height)
    return Error::invalid("present: {} {} (left, top, right, bottom) is not inside the {}x{} surface", what,
                          to_string(r), width, height);
  return ok_status();
}

/// [a, a + a_len) and [b, b + b_len) share a byte (empty never overlaps).
bool overlap(std::uint64_t a, std::uint64_t a_len, std::uint64_t b, std::uint64_t b_len) {
  if (a_len == 0 || b_len == 0) return false;
  return a < b ? b - a < a_len : a - b < b_len;
}

}  // namespace

Result<RenderOutput> present(const PresentArgs& a) {
  SGPU_RETURN_IF_ERROR(check_dma("present", a.dma_buffer, a.dma_size, a.private_data, a.private_data_size));
  if (a.patch_out == nullptr && a.patch_out_size != 0)
    return Error::invalid("present: output patch list is null but has {} entries", a.patch_out_size);
  // DXGK_PRESENT_SOURCE_INDEX = 1, DXGK_PRESENT_DESTINATION_INDEX = 2, element 0 the null element.
  constexpr std::uint32_t kSrc = 1, kDst = 2;
  if (a.allocation_list == nullptr || a.allocation_list_size != 3)
    return Error::invalid(
        "present: the allocation list has {} elements; Present takes 3 (null, source, "
        "destination)",
        a.allocation_list == nullptr ? 0 : a.allocation_list_size);
  const auto* list = a.allocation_list;
  if (list[0].allocation)
    return Error::invalid("present: allocation-list element 0 is {:#x}; it must be the null element",
                          list[0].allocation.value);
  const bool blt = a.kind == PresentKind::Blt;
  if (!list[kDst].allocation) return Error::invalid("present: the destination (allocation-list element 2) is null");
  if (blt && !list[kSrc].allocation)
    return Error::invalid("present: blt without a source (allocation-list element 1 is null)");

  SGPU_RETURN_IF_ERROR(check_surface("destination", a.dst, list[kDst]));
  SGPU_RETURN_IF_ERROR(check_rect("dst_rect", a.dst_rect, a.dst.width, a.dst.height));
  if (blt) {
    SGPU_RETURN_IF_ERROR(check_surface("source", a.src, list[kSrc]));
    SGPU_RETURN_IF_ERROR(check_rect("src_rect", a.src_rect, a.src.width, a.src.height));
    if (a.src.bytes_per_pixel != a.dst.bytes_per_pixel)
      return Error::invalid("present: source has {} bytes per pixel, destination {}: no format conversion",
                            a.src.bytes_per_pixel, a.dst.bytes_per_pixel);
    if (a.src_rect.width() != a.dst_rect.width() || a.src_rect.height() != a.dst_rect.height())
      return Error::invalid("present: src_rect {} is {}x{} but dst_rect {} is {}x{}: no stretching",
                            to_string(a.src_rect), a.src_rect.width(), a.src_rect.height(), to_string(a.dst_rect),
                            a.dst_rect.width(), a.dst_rect.height());
  } else if (a.dst.bytes_per_pixel != 4) {
    // Color is A8R8G8B8; FILL_RECT repeats a 32-bit pattern, which is that colour only at 4 bytes a pixel.
    return Error::unsupported("present: colour fill of a {}-byte-per-pixel surface (only 4)", a.dst.bytes_per_pixel);
  }

  if (a.sub_rect_count != 0 && a.sub_rects == nullptr)
    return Error::invalid("present: {} sub-rectangles but the list is null", a.sub_rect_count);
  const std::uint32_t count = a.sub_rect_count != 0 ? a.sub_rect_count : 1;
  const auto rect = [&](std::uint32_t i) { return a.sub_rect_count != 0 ? a.sub_rects[i] : a.dst_rect; };
  if (a.multipass_offset >= count)
    return Error::invalid("present: MultipassOffset {} is past the {} sub-rectangles", a.multipass_offset, count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const Rect r = rect(i);
    if (r.left < a.dst_rect.left || r.top < a.dst_rect.top || r.right > a.dst_rect.right ||
        r.bottom > a.dst_rect.bottom || r.right < r.left || r.bottom < r.top)
      return Error::invalid("present: sub-rectangle {} {} is not inside dst_rect {}", i, to_string(r),
                            to_string(a.dst_rect));
  }

  const abi::PacketInfo& p = info(blt ? abi::Opcode::BlitRect : abi::Opcode::FillRect);
  const std::uint32_t bytes = p.min_dwords * 4;
  const std::uint32_t dma_capacity = a.dma_size & ~3u;
  const std::uint32_t fence_bytes = submission_fence_bytes();
  const std::uint64_t bpp = a.dst.bytes_per_pixel;
  RenderOutput out;
  bool final_pass = true;

  for (std::uint32_t i = a.multipass_offset; i < count; ++i) {
    const Rect r = rect(i);
    if (r.width() == 0 || r.height() == 0) continue;  // nothing to draw: no packet
    if (!room_for(out, p, bytes, dma_capacity, a.patch_out_size)) {
      if (out.packets == 0)
        return Error::invalid(
            "present: sub-rectangle {}: a {}-byte {} with {} patch entries does not fit an "
            "empty DMA buffer of {} bytes (plus the {}-byte submission fence) and a patch "
            "list of {} entries",
            i, bytes, p.name, p.address_count, a.dma_size, fence_bytes, a.patch_out_size);
      out.multipass_offset = i;
      final_pass = false;
      break;
    }
    // Byte offsets of the first pixel in each allocation; the source is the same rectangle moved
    // by src_rect's offset from dst_rect (no stretching).
    const std::uint64_t width_bytes = r.width() * bpp;
    const std::uint64_t dst_off = std::uint64_t(r.top) * a.dst.pitch + std::uint64_t(r.left) * bpp;
    const std::int64_t sx = std::int64_t{a.src_rect.left} + (r.left - a.dst_rect.left);
    const std::int64_t sy = std::int64_t{a.src_rect.top} + (r.top - a.dst_rect.top);
    const std::uint64_t src_off = blt ? std::uint64_t(sy) * a.src.pitch + std::uint64_t(sx) * bpp : 0;
    if (dst_off > 0xffffffffu || src_off > 0xffffffffu || width_bytes > 0xffffffffu)
      return Error::invalid(
          "present: sub-rectangle {} {}: offsets {} / {} or row of {} bytes do not fit the "
          "32-bit packet and patch-list fields",
          i, to_string(r), src_off, dst_off, width_bytes);
    const std::uint64_t dst_extent = rect_extent(width_bytes, r.height(), a.dst.pitch);
    const std::uint64_t src_extent = rect_extent(width_bytes, r.height(), a.src.pitch);
    if (blt && list[kSrc].allocation == list[kDst].allocation && overlap(src_off, src_extent, dst_off, dst_extent))
      return Error::invalid(
          "present: sub-rectangle {} {}: source and destination extents overlap in one "
          "allocation (the device refuses COPY_OVERLAP)",
          i, to_string(r));
    // Pre-patched address of each side (0 when not resident), checked against 2^64.
    const auto prepatch = [&](std::uint32_t index, std::uint64_t offset, std::uint64_t extent) -> Result<std::uint64_t> {
      const auto& al = list[index];
      if (al.segment == kSystemMemory) return std::uint64_t{0};
      const std::uint64_t address = al.gpu_address + offset;
      if (address < al.gpu_address || address + extent < address)
        return Error::invalid(
            "present: sub-rectangle {}: allocation-list element {} at {:#x} + {} + {} bytes "
            "wraps past 2^64",
            i, index, al.gpu_address, offset, extent);
      return address;
    };
    SGPU_ASSIGN_OR_RETURN(auto dst_addr, prepatch(kDst, dst_off, dst_extent));

    const std::uint32_t pos = out.dma_bytes;
    if (blt) {
      SGPU_ASSIGN_OR_RETURN(auto src_addr, prepatch(kSrc, src_off, src_extent));
      // Written directly rather than with PacketWriter::blit_rect: its overlap check would refuse
      // two not-yet-resident sides (both pre-patched to 0); overlap was checked on offsets above.
      namespace f = abi::payload::blit_rect;
      std::uint32_t* pkt = static_cast<std::uint32_t*>(a.dma_buffer) + pos / 4;
      std::fill(pkt, pkt + p.min_dwords, 0u);
      pkt[0] = abi::make_header(abi::Opcode::BlitRect, p.min_dwords);
      put_address(pkt, f::kSrcLo, src_addr);
      put_address(pkt, f::kDstLo, dst_addr);
      pkt[f::kWidth] = static_cast<std::uint32_t>(width_bytes);
      pkt[f::kHeight] = r.height();
      pkt[f::kSrcPitch] = a.src.pitch;
      pkt[f::kDstPitch] = a.dst.pitch;
      out.dma_bytes += bytes;
    } else {
      PacketWriter w(a.dma_buffer, dma_capacity, pos);
      SGPU_RETURN_IF_ERROR(
          w.fill_rect(dst_addr, static_cast<std::uint32_t>(width_bytes), r.height(), a.dst.pitch, a.color));
      out.dma_bytes = w.offset();
    }
    for (unsigned f = 0; f < p.address_count; ++f) {
      const bool write = p.addresses[f].access == abi::AddressAccess::Write;
      a.patch_out[out.patch_count++] =
          output_entry(p, f, write ? kDst : kSrc, static_cast<std::uint32_t>(write ? dst_off : src_off), pos);
    }
    ++out.packets;
  }

  SGPU_RETURN_IF_ERROR(finish_pass(a.dma_buffer, dma_capacity, a.private_data, final_pass, out));
  return out;
}

}  // namespace sgpu::kmd
