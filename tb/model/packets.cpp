// Packet handlers of the reference model: one function per opcode, one table row each.
#include <array>

#include "model/exec.hpp"

namespace sgpu::model {
namespace {

using abi::Opcode;

void exec_nop(Exec& x, std::uint32_t header) {
  std::uint32_t dw = 0;
  for (std::uint32_t i = 1; i < abi::header_dwords(header); ++i) {
    if (!x.take(dw)) return;
  }
}

// The alignment check happens as soon as the address is complete (RTL: on addr_hi), before
// any data dword is taken; each data dword is written as it arrives.
void exec_write_data(Exec& x, std::uint32_t header) {
  std::uint32_t lo = 0, hi = 0;
  if (!x.take(lo) || !x.take(hi)) return;
  std::uint64_t addr = (std::uint64_t{hi} << 32) | lo;
  if ((addr & 3) != 0) {
    x.fault(abi::Fault::BadAlignment, addr, header);
    return;
  }
  for (std::uint32_t i = 3; i < abi::header_dwords(header); ++i) {
    std::uint32_t dw = 0;
    if (!x.take(dw)) return;
    x.write32(addr, dw);
    addr += 4;
  }
}

// WRITE_PHYSICAL: as WRITE_DATA, with PHYSICAL_RANGE after the alignment check (RTL: on
// addr_hi); the model has no GART, so "never translated" is the same write.
void exec_write_physical(Exec& x, std::uint32_t header) {
  std::uint32_t lo = 0, hi = 0;
  if (!x.take(lo) || !x.take(hi)) return;
  std::uint64_t addr = (std::uint64_t{hi} << 32) | lo;
  if ((addr & 3) != 0) {
    x.fault(abi::Fault::BadAlignment, addr, header);
    return;
  }
  if (!x.physical_range_ok(addr, 4 * std::uint64_t{abi::header_dwords(header) - 3})) {
    x.fault(abi::Fault::PhysicalRange, addr, header);
    return;
  }
  for (std::uint32_t i = 3; i < abi::header_dwords(header); ++i) {
    std::uint32_t dw = 0;
    if (!x.take(dw)) return;
    x.write32(addr, dw);
    addr += 4;
  }
}

// Alignment is checked after the whole packet arrived; then drain, write, drain, interrupt.
void exec_fence(Exec& x, std::uint32_t header) {
  std::uint32_t dw[4] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  const std::uint64_t addr = (std::uint64_t{dw[1]} << 32) | dw[0];
  const std::uint64_t value = (std::uint64_t{dw[3]} << 32) | dw[2];
  const std::uint8_t flags = abi::header_flags(header);
  const bool value64 = (flags & abi::fence_flags::kValue64) != 0;
  if ((value64 && (addr & 7) != 0) || (addr & 3) != 0) {
    x.fault(abi::Fault::BadAlignment, addr, header);
    return;
  }
  if (!x.drain()) return;
  if (value64) {
    x.write64(addr, value);
  } else {
    x.write32(addr, static_cast<std::uint32_t>(value));
  }
  if (!x.drain()) return;
  if (flags & abi::fence_flags::kIrq) x.signal_completed();
}

// The model has no GART: the invalidation is a no-op. What stays is the order of effects the
// RTL shows: the whole packet is read, then every earlier write is drained (a failed one faults
// here, as at a FENCE), then the GART is asked and the next packet waits for it.
void exec_tlb_invalidate(Exec& x, std::uint32_t /*header*/) {
  std::uint32_t dw[2] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  x.drain();
}

// MAP {first_page, count, pte_flags, count x bus}: BAD_LENGTH unless dwords = 4 + 2 * count
// (RTL: at the count dword), MAP_RANGE unless first_page + count <= GART_TABLE_SIZE (at the
// pte_flags dword); then each PTE dword is written as it arrives (low dword: bus bits 31:12 |
// flags bits 2:0), and the packet ends as TLB_INVALIDATE (drain; the model has no TLB).
void exec_map(Exec& x, std::uint32_t header) {
  std::uint32_t first = 0, count = 0, flags = 0;
  if (!x.take(first) || !x.take(count)) return;
  if (2 * std::uint64_t{count} + 4 != abi::header_dwords(header)) {
    x.fault(abi::Fault::BadLength, x.header_addr(), header);
    return;
  }
  if (!x.take(flags)) return;
  if (std::uint64_t{first} + count > x.gart_table_size()) {
    x.fault(abi::Fault::MapRange, first, header);
    return;
  }
  std::uint64_t addr = x.gart_table_base() + 8 * std::uint64_t{first};
  for (std::uint32_t i = 0; i < count; ++i) {
    std::uint32_t lo = 0, hi = 0;
    if (!x.take(lo)) return;
    x.write32(addr, (lo & ~0xfffu) | (flags & 7u));
    if (!x.take(hi)) return;
    x.write32(addr + 4, hi);
    addr += 8;
  }
  x.drain();
}

// UNMAP {first_page, count, dummy PTE}: MAP_RANGE as MAP (after the whole packet), then one
// 64-bit write of the dummy PTE per page, then as TLB_INVALIDATE.
void exec_unmap(Exec& x, std::uint32_t header) {
  std::uint32_t dw[4] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  if (std::uint64_t{dw[0]} + dw[1] > x.gart_table_size()) {
    x.fault(abi::Fault::MapRange, dw[0], header);
    return;
  }
  const std::uint64_t pte = (std::uint64_t{dw[3]} << 32) | dw[2];
  const std::uint64_t addr = x.gart_table_base() + 8 * std::uint64_t{dw[0]};
  for (std::uint32_t i = 0; i < dw[1]; ++i) x.write64(addr + 8 * std::uint64_t{i}, pte);
  x.drain();
}

// The extent of `rows` rows of `width` bytes `pitch` apart: (rows - 1) * pitch + width, which
// may exceed 64 bits (as the RTL's 65-bit sum); rows >= 1.
struct Extent {
  std::uint64_t lo;
  bool carry;
};
Extent extent(std::uint32_t width, std::uint32_t rows, std::uint32_t pitch) {
  const std::uint64_t body = std::uint64_t{rows - 1} * pitch;
  const std::uint64_t lo = body + width;
  return {lo, lo < body};
}
// a < b + e without wrap-around.
bool below_end(std::uint64_t a, std::uint64_t b, Extent e) { return a < b || e.carry || a - b < e.lo; }

// COPY / BLIT_RECT / FILL / FILL_RECT: the whole packet is read; a COPY or BLIT_RECT whose
// source and destination extents overlap faults COPY_OVERLAP (addr = dst); then drain (earlier
// packet writes are visible before the engine reads); then the engine runs to completion
// before the next packet.
void run_copy(Exec& x, std::uint32_t header, bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width,
              std::uint32_t height, std::uint32_t src_pitch, std::uint32_t dst_pitch, std::uint32_t pattern) {
  if (!fill && width != 0 && height != 0 && below_end(src, dst, extent(width, height, dst_pitch)) &&
      below_end(dst, src, extent(width, height, src_pitch))) {
    x.fault(abi::Fault::CopyOverlap, dst, header);
    return;
  }
  if (!x.drain()) return;
  x.copy_engine(fill, src, dst, width, height, src_pitch, dst_pitch, pattern, header);
}

std::uint64_t u64(std::uint32_t lo, std::uint32_t hi) { return (std::uint64_t{hi} << 32) | lo; }

void exec_copy(Exec& x, std::uint32_t header) {
  std::uint32_t dw[5] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  run_copy(x, header, false, u64(dw[0], dw[1]), u64(dw[2], dw[3]), dw[4], 1, 0, 0, 0);
}

// READ_PHYSICAL: COPY with PHYSICAL_RANGE on the source checked first (after the whole packet).
void exec_read_physical(Exec& x, std::uint32_t header) {
  std::uint32_t dw[5] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  if (!x.physical_range_ok(u64(dw[0], dw[1]), dw[4])) {
    x.fault(abi::Fault::PhysicalRange, u64(dw[0], dw[1]), header);
    return;
  }
  run_copy(x, header, false, u64(dw[0], dw[1]), u64(dw[2], dw[3]), dw[4], 1, 0, 0, 0);
}

void exec_fill(Exec& x, std::uint32_t header) {
  std::uint32_t dw[4] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  run_copy(x, header, true, 0, u64(dw[0], dw[1]), dw[2], 1, 0, 0, dw[3]);
}

void exec_blit_rect(Exec& x, std::uint32_t header) {
  std::uint32_t dw[8] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  run_copy(x, header, false, u64(dw[0], dw[1]), u64(dw[2], dw[3]), dw[4], dw[5], dw[6], dw[7], 0);
}

void exec_fill_rect(Exec& x, std::uint32_t header) {
  std::uint32_t dw[6] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  run_copy(x, header, true, 0, u64(dw[0], dw[1]), dw[2], dw[3], 0, dw[4], dw[5]);
}

// WAIT_MEM: the whole packet is read, the address checked (BAD_ALIGNMENT), every earlier write
// drained; then the stream stops and the dword is read. The model is untimed: the condition is
// evaluated once, against memory as it is when the packet executes (nothing else writes memory
// while a submission runs in the tests that compare with the RTL). False stays false: the
// watchdog faults (or the engine hangs). True: the rest of the buffer is fetched again.
bool wait_mem_hit(std::uint8_t func, std::uint32_t masked, std::uint32_t ref) {
  switch (static_cast<abi::WaitMemFunc>(func)) {
    case abi::WaitMemFunc::Always: return true;
    case abi::WaitMemFunc::Lt: return masked < ref;
    case abi::WaitMemFunc::Le: return masked <= ref;
    case abi::WaitMemFunc::Eq: return masked == ref;
    case abi::WaitMemFunc::Ne: return masked != ref;
    case abi::WaitMemFunc::Ge: return masked >= ref;
    case abi::WaitMemFunc::Gt: return masked > ref;
    case abi::WaitMemFunc::Never: return false;
  }
  return false;
}

void exec_wait_mem(Exec& x, std::uint32_t header) {
  std::uint32_t dw[5] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  const std::uint64_t addr = u64(dw[0], dw[1]);
  const std::uint32_t ref = dw[2], mask = dw[3];
  if ((addr & 3) != 0) {
    x.fault(abi::Fault::BadAlignment, addr, header);
    return;
  }
  if (!x.drain()) return;
  const auto func = static_cast<std::uint8_t>((abi::header_flags(header) & abi::wait_mem_flags::kFuncMask) >>
                                              abi::wait_mem_flags::kFuncLsb);
  std::uint32_t value = 0, uncertain = 0;
  if (!x.poll32(addr, header, value, uncertain)) return;
  // Uncertain bits under the mask matter only if they can change the outcome: the masked value
  // lies in [lo, hi]; the order comparisons are monotonic in it, EQ/NE can only hold when the
  // certain bits match.
  const std::uint32_t u = uncertain & mask;
  if (u != 0) {
    const std::uint32_t lo = value & mask & ~u, hi = lo | u;
    const auto f = static_cast<abi::WaitMemFunc>(func);
    const bool eq_like = f == abi::WaitMemFunc::Eq || f == abi::WaitMemFunc::Ne;
    if (eq_like ? (ref & ~u) == lo : wait_mem_hit(func, lo, ref) != wait_mem_hit(func, hi, ref)) x.ambiguous();
  }
  if (!wait_mem_hit(func, value & mask, ref)) {
    x.wait_forever(header);
    return;
  }
  x.restart_stream();
}

// TIMESTAMP: alignment once the address is complete, drain, then one posted 64-bit write of
// the (timing-dependent) cycle counter.
void exec_timestamp(Exec& x, std::uint32_t header) {
  std::uint32_t dw[2] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  const std::uint64_t addr = u64(dw[0], dw[1]);
  if ((addr & 7) != 0) {
    x.fault(abi::Fault::BadAlignment, addr, header);
    return;
  }
  if (!x.drain()) return;
  x.write_timestamp(addr);
}

// INDIRECT: the whole packet is read; addr or bytes not 4-byte aligned faults BAD_ALIGNMENT
// (addr = the called address); then the depth check (INDIRECT_DEPTH at the header); bytes = 0
// is nothing; else the called buffer runs and the caller continues after the packet.
void exec_indirect(Exec& x, std::uint32_t header) {
  std::uint32_t dw[3] = {};
  for (auto& d : dw) {
    if (!x.take(d)) return;
  }
  const std::uint64_t addr = u64(dw[0], dw[1]);
  if ((addr & 3) != 0 || (dw[2] & 3) != 0) {
    x.fault(abi::Fault::BadAlignment, addr, header);
    return;
  }
  x.call(addr, dw[2], header);
}

struct HandlerRow {
  Opcode opcode;
  PacketHandler handler;
};

// Every packet of spec/abi.toml has a row here (test_model checks against abi::kPackets).
constexpr HandlerRow kHandlers[] = {
    {Opcode::Nop, exec_nop},
    {Opcode::WriteData, exec_write_data},
    {Opcode::Fence, exec_fence},
    {Opcode::Copy, exec_copy},
    {Opcode::Fill, exec_fill},
    {Opcode::BlitRect, exec_blit_rect},
    {Opcode::FillRect, exec_fill_rect},
    {Opcode::TlbInvalidate, exec_tlb_invalidate},
    {Opcode::Map, exec_map},
    {Opcode::Unmap, exec_unmap},
    {Opcode::ReadPhysical, exec_read_physical},
    {Opcode::WritePhysical, exec_write_physical},
    {Opcode::WaitMem, exec_wait_mem},
    {Opcode::Timestamp, exec_timestamp},
    {Opcode::Indirect, exec_indirect},
};

constexpr std::array<PacketHandler, 256> make_table() {
  std::array<PacketHandler, 256> table{};
  for (const auto& row : kHandlers) table[static_cast<std::uint8_t>(row.opcode)] = row.handler;
  return table;
}
constexpr std::array<PacketHandler, 256> kTable = make_table();

}  // namespace

PacketHandler find_handler(std::uint8_t opcode) { return kTable[opcode]; }

abi::Fault check_header(std::uint32_t header, std::uint64_t buf_left_dwords, bool privileged) {
  const abi::PacketInfo* info = abi::find_packet(abi::header_opcode(header));
  if (info == nullptr) return abi::Fault::IllegalOpcode;
  const std::uint32_t dwords = abi::header_dwords(header);
  if (dwords < info->min_dwords || dwords > info->max_dwords) return abi::Fault::BadLength;
  if ((abi::header_flags(header) & ~info->flags_mask) != 0) return abi::Fault::ReservedBits;
  if (info->privileged && !privileged) return abi::Fault::PrivilegedPacket;
  if (dwords > buf_left_dwords) return abi::Fault::BufferOverrun;
  return abi::Fault::None;
}

}  // namespace sgpu::model
