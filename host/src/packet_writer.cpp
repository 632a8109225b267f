#include "sgpu/packet_writer.hpp"

#include <cstring>
#include <utility>

#include <fmt/format.h>

namespace sgpu {

namespace {

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
    return Error::invalid("{} packet of {} dwords: the packet takes {} to {} dwords", p.name, dwords, p.min_dwords,
                          p.max_dwords);
  if (dwords * 4 > remaining())
    return Error::make(Errc::OutOfMemory, Touched::Nothing,
                       "{} packet of {} bytes does not fit: {} of {} bytes left in the buffer", p.name, dwords * 4,
                       remaining(), capacity_);
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

Status PacketWriter::dword_write(abi::Opcode op, std::uint64_t addr, const std::uint32_t* data,
                                 std::size_t count) {
  const auto name = info(op).name;
  if (addr % 4 != 0) return Error::invalid("{} address {:#x} is not 4-byte aligned", name, addr);
  if (count == 0) return Error::invalid("{} without data", name);
  if (data == nullptr) return Error::invalid("{} data is null", name);
  const std::size_t dwords = count + 3;
  SGPU_RETURN_IF_ERROR(reserve(op, dwords));
  put(abi::make_header(op, static_cast<std::uint32_t>(dwords)));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  std::memcpy(base_ + offset_ / 4, data, count * 4);
  offset_ += count * 4;
  ++packets_;
  return ok_status();
}

Status PacketWriter::write_data(std::uint64_t addr, const std::uint32_t* data, std::size_t count) {
  return dword_write(abi::Opcode::WriteData, addr, data, count);
}

Status PacketWriter::fence(std::uint64_t addr, std::uint64_t value, std::uint8_t flags) {
  const auto& p = info(abi::Opcode::Fence);
  if ((flags & ~p.flags_mask) != 0)
    return Error::invalid("FENCE flags {:#04x} set undefined bits (defined: {:#04x})", flags, p.flags_mask);
  const unsigned align = (flags & abi::fence_flags::kValue64) ? 8 : 4;
  if (addr % align != 0) return Error::invalid("FENCE address {:#x} is not {}-byte aligned", addr, align);
  if (!(flags & abi::fence_flags::kValue64) && (value >> 32) != 0)
    return Error::invalid("FENCE value {:#x} needs 64 bits but the value64 flag is not set", value);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Fence, p.min_dwords));
  put(abi::make_header(abi::Opcode::Fence, p.min_dwords, flags));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  put(static_cast<std::uint32_t>(value));
  put(static_cast<std::uint32_t>(value >> 32));
  ++packets_;
  return ok_status();
}

Status PacketWriter::linear_copy(abi::Opcode op, std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  const auto& p = info(op);
  SGPU_RETURN_IF_ERROR(reserve(op, p.min_dwords));
  put(abi::make_header(op, p.min_dwords));
  put(static_cast<std::uint32_t>(src));
  put(static_cast<std::uint32_t>(src >> 32));
  put(static_cast<std::uint32_t>(dst));
  put(static_cast<std::uint32_t>(dst >> 32));
  put(bytes);
  ++packets_;
  return ok_status();
}

Status PacketWriter::copy(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  return linear_copy(abi::Opcode::Copy, src, dst, bytes);
}

Status PacketWriter::wait_mem(std::uint64_t addr, abi::WaitMemFunc func, std::uint32_t ref, std::uint32_t mask,
                              std::uint32_t interval) {
  if (addr % 4 != 0) return Error::invalid("WAIT_MEM address {:#x} is not 4-byte aligned", addr);
  const auto f = static_cast<unsigned>(func);
  if (f > (abi::wait_mem_flags::kFuncMask >> abi::wait_mem_flags::kFuncLsb))
    return Error::invalid("WAIT_MEM compare function {} is not defined", f);
  const auto& p = info(abi::Opcode::WaitMem);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::WaitMem, p.min_dwords));
  put(abi::make_header(abi::Opcode::WaitMem, p.min_dwords, static_cast<std::uint8_t>(f << abi::wait_mem_flags::kFuncLsb)));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  put(ref);
  put(mask);
  put(interval);
  ++packets_;
  return ok_status();
}

Status PacketWriter::indirect(std::uint64_t addr, std::uint32_t bytes) {
  if (addr % 4 != 0) return Error::invalid("INDIRECT address {:#x} is not 4-byte aligned", addr);
  if (bytes % 4 != 0) return Error::invalid("INDIRECT length {} is not a multiple of 4 bytes", bytes);
  const auto& p = info(abi::Opcode::Indirect);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Indirect, p.min_dwords));
  put(abi::make_header(abi::Opcode::Indirect, p.min_dwords));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  put(bytes);
  ++packets_;
  return ok_status();
}

Status PacketWriter::timestamp(std::uint64_t addr) {
  if (addr % 8 != 0) return Error::invalid("TIMESTAMP address {:#x} is not 8-byte aligned", addr);
  const auto& p = info(abi::Opcode::Timestamp);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Timestamp, p.min_dwords));
  put(abi::make_header(abi::Opcode::Timestamp, p.min_dwords));
  put(static_cast<std::uint32_t>(addr));
  put(static_cast<std::uint32_t>(addr >> 32));
  ++packets_;
  return ok_status();
}

Status PacketWriter::fill(std::uint64_t dst, std::uint32_t bytes, std::uint32_t pattern) {
  const auto& p = info(abi::Opcode::Fill);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Fill, p.min_dwords));
  put(abi::make_header(abi::Opcode::Fill, p.min_dwords));
  put(static_cast<std::uint32_t>(dst));
  put(static_cast<std::uint32_t>(dst >> 32));
  put(bytes);
  put(pattern);
  ++packets_;
  return ok_status();
}

Status PacketWriter::blit_rect(std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                               std::uint32_t src_pitch, std::uint32_t dst_pitch) {
  const auto& p = info(abi::Opcode::BlitRect);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::BlitRect, p.min_dwords));
  put(abi::make_header(abi::Opcode::BlitRect, p.min_dwords));
  put(static_cast<std::uint32_t>(src));
  put(static_cast<std::uint32_t>(src >> 32));
  put(static_cast<std::uint32_t>(dst));
  put(static_cast<std::uint32_t>(dst >> 32));
  put(width);
  put(height);
  put(src_pitch);
  put(dst_pitch);
  ++packets_;
  return ok_status();
}

Status PacketWriter::fill_rect(std::uint64_t dst, std::uint32_t width, std::uint32_t height, std::uint32_t dst_pitch,
                               std::uint32_t pattern) {
  const auto& p = info(abi::Opcode::FillRect);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::FillRect, p.min_dwords));
  put(abi::make_header(abi::Opcode::FillRect, p.min_dwords));
  put(static_cast<std::uint32_t>(dst));
  put(static_cast<std::uint32_t>(dst >> 32));
  put(width);
  put(height);
  put(dst_pitch);
  put(pattern);
  ++packets_;
  return ok_status();
}

Status PacketWriter::tlb_invalidate(std::uint32_t first_page, std::uint32_t count) {
  if (count > ~first_page)
    return Error::invalid("TLB_INVALIDATE of {} pages from page {} wraps around the page index", count, first_page);
  const auto& p = info(abi::Opcode::TlbInvalidate);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::TlbInvalidate, p.min_dwords));
  put(abi::make_header(abi::Opcode::TlbInvalidate, p.min_dwords));
  put(first_page);
  put(count);
  ++packets_;
  return ok_status();
}

Status PacketWriter::map_pages(std::uint32_t first_page, std::uint32_t pte_flags, const std::uint64_t* bus,
                               std::size_t count) {
  if (pte_flags > 7) return Error::invalid("MAP pte_flags {:#x} set bits above 2", pte_flags);
  if (count != 0 && bus == nullptr) return Error::invalid("MAP bus addresses are null");
  if (count > ~first_page)
    return Error::invalid("MAP of {} pages from page {} wraps around the page index", count, first_page);
  for (std::size_t i = 0; i < count; ++i) {
    if (bus[i] % 4096 != 0) return Error::invalid("MAP bus address {:#x} is not 4 KiB aligned", bus[i]);
  }
  const std::size_t dwords = 4 + 2 * count;
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Map, dwords));
  put(abi::make_header(abi::Opcode::Map, static_cast<std::uint32_t>(dwords)));
  put(first_page);
  put(static_cast<std::uint32_t>(count));
  put(pte_flags);
  for (std::size_t i = 0; i < count; ++i) {
    put(static_cast<std::uint32_t>(bus[i]));
    put(static_cast<std::uint32_t>(bus[i] >> 32));
  }
  ++packets_;
  return ok_status();
}

Status PacketWriter::unmap_pages(std::uint32_t first_page, std::uint32_t count, std::uint64_t dummy_pte) {
  if (count > ~first_page)
    return Error::invalid("UNMAP of {} pages from page {} wraps around the page index", count, first_page);
  const auto& p = info(abi::Opcode::Unmap);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::Unmap, p.min_dwords));
  put(abi::make_header(abi::Opcode::Unmap, p.min_dwords));
  put(first_page);
  put(count);
  put(static_cast<std::uint32_t>(dummy_pte));
  put(static_cast<std::uint32_t>(dummy_pte >> 32));
  ++packets_;
  return ok_status();
}

Status PacketWriter::write_physical(std::uint64_t addr, const std::uint32_t* data, std::size_t count) {
  return dword_write(abi::Opcode::WritePhysical, addr, data, count);
}

Status PacketWriter::read_physical(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  return linear_copy(abi::Opcode::ReadPhysical, src, dst, bytes);
}

Status PacketWriter::tlb_invalidate_all() {
  const auto& p = info(abi::Opcode::TlbInvalidate);
  SGPU_RETURN_IF_ERROR(reserve(abi::Opcode::TlbInvalidate, p.min_dwords));
  put(abi::make_header(abi::Opcode::TlbInvalidate, p.min_dwords, abi::tlb_invalidate_flags::kAll));
  put(0);
  put(0);
  ++packets_;
  return ok_status();
}

Status PacketWriter::raw(const std::uint32_t* dwords, std::size_t count) {
  if (count * 4 > remaining())
    return Error::make(Errc::OutOfMemory, Touched::Nothing, "{} raw bytes do not fit: {} bytes left", count * 4,
                       remaining());
  for (std::size_t i = 0; i < count; ++i) put(dwords[i]);
  return ok_status();
}

}  // namespace sgpu
