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

struct HandlerRow {
  Opcode opcode;
  PacketHandler handler;
};

// Every packet of spec/abi.toml has a row here (test_model checks against abi::kPackets).
constexpr HandlerRow kHandlers[] = {
    {Opcode::Nop, exec_nop},
    {Opcode::WriteData, exec_write_data},
    {Opcode::Fence, exec_fence},
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
