#include "sgpu/packet_writer.hpp"

#include <cstring>

#include <fmt/format.h>

namespace sgpu {

namespace {

Error invalid(std::string message) { return Error{Errc::InvalidArgument, std::move(message), false}; }

const abi::PacketInfo& info(abi::Opcode op) { return *abi::find_packet(static_cast<std::uint8_t>(op)); }

}  // namespace

PacketWriter::PacketWriter(void* cpu, std::size_t bytes, std::size_t start_offset)
    : base_(static_cast<std::uint32_t*>(cpu)),
      capacity_(bytes & ~std::size_t{3}),
      offset_(start_offset & ~std::size_t{3}) {
  if (offset_ > capacity_) offset_ = capacity_;
}

Status PacketWriter::reserve(abi::Opcode op, std::size_t dwords) {
  const auto& p = info(op);
  if (dwords < p.min_dwords || dwords > p.max_dwords)
    return invalid(fmt::format("{} packet of {} dwords: the packet takes {} to {} dwords", p.name,
                               dwords, p.min_dwords, p.max_dwords));
  if (dwords * 4 > remaining())
    return Error{Errc::OutOfMemory,
                 fmt::format("{} packet of {} bytes does not fit: {} of {} bytes left in the buffer",
                             p.name, dwords * 4, remaining(), capacity_),
                 false};
  return ok_status();
}

void PacketWriter::put(std::uint32_t dword) {
  base_[offset_ / 4] = dword;
  offset_ += 4;
}

Status PacketWriter::nop(std::uint32_t dwords) {
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Nop, dwords));
  put(abi::make_header(abi::Opcode::Nop, dwords));
  for (std::uint32_t i = 1; i < dwords; ++i) put(0);
  ++packets_;
  return ok_status();
}

Status PacketWriter::write_data(std::uint64_t addr, const std::uint32_t* data, std::size_t count) {
  if (addr % 4 != 0)
    return invalid(fmt::format("WRITE_DATA address {:#x} is not 4-byte aligned", addr));
  if (count == 0) return invalid("WRITE_DATA without data");
  if (data == nullptr) return invalid("WRITE_DATA data is null");
  const std::size_t dwords = count + 3;
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::WriteData, dwords));
  put(abi::make_header(abi::Opcode::WriteData, static_cast<std::uint32_t>(dwords)));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  std::memcpy(base_ + offset_ / 4, data, count * 4);
  offset_ += count * 4;
  ++packets_;
  return ok_status();
}

Status PacketWriter::fence(std::uint64_t addr, std::uint64_t value, std::uint8_t flags) {
  const auto& p = info(abi::Opcode::Fence);
  if ((flags & ~p.flags_mask) != 0)
    return invalid(fmt::format("FENCE flags {:#04x} set undefined bits (defined: {:#04x})", flags,
                               p.flags_mask));
  const unsigned align = (flags & abi::fence_flags::kValue64) ? 8 : 4;
  if (addr % align != 0)
    return invalid(fmt::format("FENCE address {:#x} is not {}-byte aligned", addr, align));
  if (!(flags & abi::fence_flags::kValue64) && (value >> 32) != 0)
    return invalid(fmt::format("FENCE value {:#x} needs 64 bits but the value64 flag is not set", value));
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Fence, p.min_dwords));
  put(abi::make_header(abi::Opcode::Fence, p.min_dwords, flags));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  put(static_cast<std::uint32_t>(value));
  put(static_cast<std::uint32_t>(value >> 32));
  ++packets_;
  return ok_status();
}

Status PacketWriter::raw(const std::uint32_t* dwords, std::size_t count) {
  if (count * 4 > remaining())
    return Error{Errc::OutOfMemory,
                 fmt::format("{} raw bytes do not fit: {} bytes left", count * 4, remaining()), false};
  for (std::size_t i = 0; i < count; ++i) put(dwords[i]);
  return ok_status();
}

}  // namespace sgpu
