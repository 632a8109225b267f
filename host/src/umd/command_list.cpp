#include "sgpu/umd/command_list.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "sgpu/overlap.hpp"

namespace sgpu::umd {

namespace {

const abi::PacketInfo& info(abi::Opcode op) { return *abi::find_packet(static_cast<std::uint8_t>(op)); }

/// One address field of a packet being recorded: which allocation and where in it. The order is
/// the order of the packet's address fields in the generated table.
struct Target {
  AllocationHandle allocation;
  std::uint32_t offset = 0;
};

}  // namespace

CommandList::CommandList() { allocations_.push_back({}); }

void CommandList::reset() {
  commands_.clear();
  allocations_.clear();
  allocations_.push_back({});  // element 0 stays the null element
  patches_.clear();
  operations_ = 0;
}

std::uint32_t CommandList::reference(AllocationHandle allocation, bool write) {
  // The null handle is element 0 by convention; it never gets a second entry.
  if (!allocation) return 0;
  for (std::size_t i = 1; i < allocations_.size(); ++i) {
    if (allocations_[i].allocation == allocation) {
      // One entry per allocation: WriteOperation is the OR over every use.
      allocations_[i].write = allocations_[i].write || write;
      return static_cast<std::uint32_t>(i);
    }
  }
  allocations_.push_back({allocation, write});
  return static_cast<std::uint32_t>(allocations_.size() - 1);
}

void CommandList::append_raw(const std::uint32_t* dwords, std::size_t count) {
  commands_.insert(commands_.end(), dwords, dwords + count);
}

void CommandList::append_raw_patch(const PatchLocation& location) { patches_.push_back(location); }

namespace {

/// Appends one packet: `words` holds the whole packet with the header in words[0] and the
/// address dwords 0; `targets` names one allocation per address field of the packet (in the
/// order of abi::PacketInfo::addresses). Checks that the result still fits the 32-bit offsets of
/// the patch-location list before changing anything.
Status emit(CommandList& cl, abi::Opcode op, const std::uint32_t* words, std::size_t count,
            const Target* targets) {
  const auto& p = info(op);
  for (unsigned i = 0; i < p.address_count; ++i) {
    if (!targets[i].allocation)
      return Error::invalid("{}: the {} allocation is the null handle", p.name, p.addresses[i].name);
  }
  const std::uint64_t at = cl.command_bytes();
  if (at + count * 4 > std::numeric_limits<std::uint32_t>::max())
    return Error::invalid("{} at command offset {} would end past 4 GiB: PatchOffset is 32-bit", p.name, at);
  for (unsigned i = 0; i < p.address_count; ++i) {
    const auto& field = p.addresses[i];
    PatchLocation loc;
    loc.allocation_index = cl.reference(targets[i].allocation, field.access == abi::AddressAccess::Write);
    loc.allocation_offset = targets[i].offset;
    loc.patch_offset = static_cast<std::uint32_t>(at + 4u * field.dword);
    cl.append_raw_patch(loc);
  }
  cl.append_raw(words, count);
  return ok_status();
}

/// Where a piece's address field starts: the operation's offset + the piece's first unit × stride.
struct Start {
  std::uint32_t offset;
  std::uint64_t stride;
};

/// The pieces a long operation is recorded as (CommandList::kMaxPacketBytes): `units` units
/// (bytes, or rows of `unit_bytes`) in pieces of at most kMaxPacketBytes, at least one unit each;
/// one piece for 0 units (the packet that writes nothing). Every piece's start offsets must fit
/// the 32-bit AllocationOffset, and the whole chain the 32-bit PatchOffset: checked before anything
/// is recorded (pieces()), so a refused operation records nothing.
struct Pieces {
  std::uint32_t count = 1;
  std::uint32_t per_piece = 0;  // units
  std::uint32_t units = 0;
  std::array<Start, 2> starts{};  // one per address field of the packet

  std::uint32_t first(std::uint32_t k) const { return k * per_piece; }
  /// Units of piece k (0 only for the one packet of an empty operation).
  std::uint32_t size(std::uint32_t k) const { return units == 0 ? 0 : std::min(per_piece, units - first(k)); }
  /// Offset of address field `i` in piece k (fits 32 bits: pieces() checked the last piece).
  std::uint32_t at(std::uint32_t k, unsigned i) const {
    return static_cast<std::uint32_t>(starts[i].offset + std::uint64_t{first(k)} * starts[i].stride);
  }
};

Result<Pieces> pieces(const CommandList& cl, abi::Opcode op, std::uint32_t units, std::uint64_t unit_bytes,
                      std::initializer_list<Start> starts) {
  const auto& p = info(op);
  Pieces r;
  r.units = units;
  r.per_piece = static_cast<std::uint32_t>(
      std::max<std::uint64_t>(1, CommandList::kMaxPacketBytes / std::max<std::uint64_t>(unit_bytes, 1)));
  r.per_piece = std::min(r.per_piece, std::max(units, 1u));
  r.count = units == 0 ? 1 : static_cast<std::uint32_t>((std::uint64_t{units} + r.per_piece - 1) / r.per_piece);
  std::copy(starts.begin(), starts.end(), r.starts.begin());
  const std::uint64_t last_unit = r.first(r.count - 1);
  for (const Start& s : starts)
    if (s.offset + last_unit * s.stride > std::numeric_limits<std::uint32_t>::max())
      return Error::invalid(
          "{} from offset {}: recorded as {} packets, the last one would start at offset {}, past the 32-bit "
          "AllocationOffset",
          p.name, s.offset, r.count, s.offset + last_unit * s.stride);
  const std::uint64_t at = cl.command_bytes();
  if (at + std::uint64_t{r.count} * p.min_dwords * 4 > std::numeric_limits<std::uint32_t>::max())
    return Error::invalid("{} at command offset {}: {} packets would end past 4 GiB: PatchOffset is 32-bit", p.name, at,
                          r.count);
  return r;
}

/// Records one `op` packet per piece: the header set, `payload(k, words)` sets piece k's other
/// dwords; its address fields point at `targets[i]` + the piece's offset (Pieces::at).
template <std::size_t Dwords, std::size_t Addresses, class Payload>
Status record_pieces(CommandList& cl, abi::Opcode op, const Pieces& n,
                     const std::array<AllocationHandle, Addresses>& targets, Payload&& payload) {
  for (std::uint32_t k = 0; k < n.count; ++k) {
    std::array<std::uint32_t, Dwords> w{};
    w[0] = abi::make_header(op, info(op).min_dwords);
    payload(k, w);
    std::array<Target, Addresses> t{};
    for (unsigned i = 0; i < Addresses; ++i) t[i] = {targets[i], n.at(k, i)};
    SGPU_RETURN_IF_ERROR(emit(cl, op, w.data(), w.size(), t.data()));
  }
  return ok_status();
}

}  // namespace

Status CommandList::copy(AllocationHandle src, std::uint32_t src_offset, AllocationHandle dst, std::uint32_t dst_offset,
                         std::uint32_t bytes) {
  namespace f = abi::payload::copy;
  // The device refuses overlapping COPY ranges (COPY_OVERLAP); within one allocation the list can see it.
  if (src && src == dst && copy_overlaps(src_offset, dst_offset, bytes))
    return Error::invalid("COPY of {} bytes from offset {} to offset {} of allocation {:#x}: ranges overlap", bytes,
                          src_offset, dst_offset, src.value);
  SGPU_ASSIGN_OR_RETURN(const Pieces n, pieces(*this, abi::Opcode::Copy, bytes, 1, {{src_offset, 1}, {dst_offset, 1}}));
  SGPU_RETURN_IF_ERROR((record_pieces<f::kBytes + 1, 2>(*this, abi::Opcode::Copy, n, {src, dst},
                                                         [&](std::uint32_t k, auto& w) { w[f::kBytes] = n.size(k); })));
  ++operations_;
  return ok_status();
}

Status CommandList::fill(AllocationHandle dst, std::uint32_t offset, std::uint32_t bytes, std::uint32_t pattern) {
  namespace f = abi::payload::fill;
  // Pieces start at multiples of 4 bytes of the range, so byte i still gets pattern byte i mod 4.
  SGPU_ASSIGN_OR_RETURN(const Pieces n, pieces(*this, abi::Opcode::Fill, bytes, 1, {{offset, 1}}));
  SGPU_RETURN_IF_ERROR((record_pieces<f::kPattern + 1, 1>(*this, abi::Opcode::Fill, n, {dst},
                                                          [&](std::uint32_t k, auto& w) {
                                                            w[f::kBytes] = n.size(k);
                                                            w[f::kPattern] = pattern;
                                                          })));
  ++operations_;
  return ok_status();
}

Status CommandList::blit(AllocationHandle src, std::uint32_t src_offset, std::uint32_t src_pitch, AllocationHandle dst,
                         std::uint32_t dst_offset, std::uint32_t dst_pitch, std::uint32_t width_bytes,
                         std::uint32_t height) {
  namespace f = abi::payload::blit_rect;
  // BLIT_RECT refuses overlapping extents (COPY_OVERLAP), even for interleaved rows.
  if (src && src == dst && blit_overlaps(src_offset, dst_offset, width_bytes, height, src_pitch, dst_pitch))
    return Error::invalid(
        "BLIT_RECT {}x{} from offset {} (pitch {}) to offset {} (pitch {}) of allocation "
        "{:#x}: source and destination extents overlap",
        width_bytes, height, src_offset, src_pitch, dst_offset, dst_pitch, src.value);
  // Whole rows per piece: the pieces' offsets step by a pitch each, one for each side.
  SGPU_ASSIGN_OR_RETURN(const Pieces n, pieces(*this, abi::Opcode::BlitRect, height, width_bytes,
                                                {{src_offset, src_pitch}, {dst_offset, dst_pitch}}));
  SGPU_RETURN_IF_ERROR((record_pieces<f::kDstPitch + 1, 2>(*this, abi::Opcode::BlitRect, n, {src, dst},
                                                            [&](std::uint32_t k, auto& w) {
                                                              w[f::kWidth] = width_bytes;
                                                              w[f::kHeight] = n.size(k);
                                                              w[f::kSrcPitch] = src_pitch;
                                                              w[f::kDstPitch] = dst_pitch;
                                                            })));
  ++operations_;
  return ok_status();
}

Status CommandList::fill_rect(AllocationHandle dst, std::uint32_t offset, std::uint32_t pitch,
                              std::uint32_t width_bytes, std::uint32_t height, std::uint32_t pattern) {
  namespace f = abi::payload::fill_rect;
  SGPU_ASSIGN_OR_RETURN(const Pieces n, pieces(*this, abi::Opcode::FillRect, height, width_bytes, {{offset, pitch}}));
  SGPU_RETURN_IF_ERROR((record_pieces<f::kPattern + 1, 1>(*this, abi::Opcode::FillRect, n, {dst},
                                                          [&](std::uint32_t k, auto& w) {
                                                            w[f::kWidth] = width_bytes;
                                                            w[f::kHeight] = n.size(k);
                                                            w[f::kDstPitch] = pitch;
                                                            w[f::kPattern] = pattern;
                                                          })));
  ++operations_;
  return ok_status();
}

Status CommandList::write_data(AllocationHandle dst, std::uint32_t offset, const std::uint32_t* data,
                               std::size_t count) {
  namespace f = abi::payload::write_data;
  const auto& p = info(abi::Opcode::WriteData);
  if (offset % 4 != 0) return Error::invalid("WRITE_DATA offset {} is not 4-byte aligned", offset);
  // The device needs at least one data dword (min_dwords) and at most max_dwords in all.
  const std::size_t max_count = p.max_dwords - f::kData;
  if (count == 0 || count > max_count)
    return Error::invalid("WRITE_DATA of {} dwords: the packet carries 1 to {} data dwords", count, max_count);
  if (data == nullptr) return Error::invalid("WRITE_DATA data is null");
  std::vector<std::uint32_t> w(f::kData + count, 0);
  w[0] = abi::make_header(abi::Opcode::WriteData, static_cast<std::uint32_t>(w.size()));
  std::copy(data, data + count, w.begin() + f::kData);
  const Target t[] = {{dst, offset}};
  SGPU_RETURN_IF_ERROR(emit(*this, abi::Opcode::WriteData, w.data(), w.size(), t));
  ++operations_;
  return ok_status();
}

Status CommandList::fence(AllocationHandle dst, std::uint32_t offset, std::uint64_t value, bool irq) {
  namespace f = abi::payload::fence;
  // The value is 64-bit, so the packet always has value64, which needs an 8-aligned address.
  if (offset % 8 != 0) return Error::invalid("FENCE offset {} is not 8-byte aligned", offset);
  const auto& p = info(abi::Opcode::Fence);
  const auto flags =
      static_cast<std::uint8_t>(abi::fence_flags::kValue64 | (irq ? abi::fence_flags::kIrq : 0u));
  std::array<std::uint32_t, f::kValueHi + 1> w{};
  w[0] = abi::make_header(abi::Opcode::Fence, p.min_dwords, flags);
  w[f::kValueLo] = static_cast<std::uint32_t>(value);
  w[f::kValueHi] = static_cast<std::uint32_t>(value >> 32);
  const Target t[] = {{dst, offset}};
  SGPU_RETURN_IF_ERROR(emit(*this, abi::Opcode::Fence, w.data(), w.size(), t));
  ++operations_;
  return ok_status();
}

Status CommandList::wait(AllocationHandle src, std::uint32_t offset, abi::WaitMemFunc func, std::uint32_t ref,
                         std::uint32_t mask, std::uint32_t interval) {
  namespace f = abi::payload::wait_mem;
  if (offset % 4 != 0) return Error::invalid("WAIT_MEM offset {} is not 4-byte aligned", offset);
  const auto fn = static_cast<unsigned>(func);
  if (fn > (abi::wait_mem_flags::kFuncMask >> abi::wait_mem_flags::kFuncLsb))
    return Error::invalid("WAIT_MEM compare function {} is not defined", fn);
  const auto& p = info(abi::Opcode::WaitMem);
  std::array<std::uint32_t, f::kInterval + 1> w{};
  w[0] = abi::make_header(abi::Opcode::WaitMem, p.min_dwords,
                          static_cast<std::uint8_t>(fn << abi::wait_mem_flags::kFuncLsb));
  w[f::kRef] = ref;
  w[f::kMask] = mask;
  w[f::kInterval] = interval;
  const Target t[] = {{src, offset}};
  SGPU_RETURN_IF_ERROR(emit(*this, abi::Opcode::WaitMem, w.data(), w.size(), t));
  ++operations_;
  return ok_status();
}

Status CommandList::timestamp(AllocationHandle dst, std::uint32_t offset) {
  namespace f = abi::payload::timestamp;
  if (offset % 8 != 0) return Error::invalid("TIMESTAMP offset {} is not 8-byte aligned", offset);
  const auto& p = info(abi::Opcode::Timestamp);
  std::array<std::uint32_t, f::kAddrHi + 1> w{};
  w[0] = abi::make_header(abi::Opcode::Timestamp, p.min_dwords);
  const Target t[] = {{dst, offset}};
  SGPU_RETURN_IF_ERROR(emit(*this, abi::Opcode::Timestamp, w.data(), w.size(), t));
  ++operations_;
  return ok_status();
}

Status CommandList::nop(std::uint32_t dwords) {
  const auto& p = info(abi::Opcode::Nop);
  if (dwords < p.min_dwords || dwords > p.max_dwords)
    return Error::invalid("NOP of {} dwords: the packet takes {} to {} dwords", dwords, p.min_dwords, p.max_dwords);
  std::vector<std::uint32_t> w(dwords, 0);
  w[0] = abi::make_header(abi::Opcode::Nop, dwords);
  SGPU_RETURN_IF_ERROR(emit(*this, abi::Opcode::Nop, w.data(), w.size(), nullptr));
  ++operations_;
  return ok_status();
}

}  // namespace sgpu::umd
