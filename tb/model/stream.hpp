// Builds packet streams and ring entries over the generated ABI. Shared by the model's tests,
// the differential generator and anything else that needs command buffers without the host
// library (tests of the device must not depend on the code they check).
#pragma once

#include <cstdint>
#include <vector>

#include "sgpu/gen/abi.hpp"

namespace sgpu::model {

class PacketStream {
 public:
  PacketStream& nop(std::uint32_t dwords = 1, std::uint32_t filler = 0xdead0000u) {
    words_.push_back(abi::make_header(abi::Opcode::Nop, dwords));
    for (std::uint32_t i = 1; i < dwords; ++i) words_.push_back(filler + i);
    return *this;
  }
  PacketStream& write_data(std::uint64_t addr, const std::vector<std::uint32_t>& data) {
    words_.push_back(abi::make_header(abi::Opcode::WriteData, static_cast<std::uint32_t>(3 + data.size())));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.insert(words_.end(), data.begin(), data.end());
    return *this;
  }
  PacketStream& fence(std::uint64_t addr, std::uint64_t value, std::uint8_t flags) {
    words_.push_back(abi::make_header(abi::Opcode::Fence, 5, flags));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.push_back(static_cast<std::uint32_t>(value));
    words_.push_back(static_cast<std::uint32_t>(value >> 32));
    return *this;
  }
  PacketStream& tlb_invalidate(std::uint32_t first_page, std::uint32_t count, bool all = false) {
    words_.push_back(abi::make_header(abi::Opcode::TlbInvalidate, 3, all ? abi::tlb_invalidate_flags::kAll : 0));
    words_.push_back(first_page);
    words_.push_back(count);
    return *this;
  }
  /// MAP of bus.size() pages from first_page (dwords = 4 + 2 * pages).
  PacketStream& map(std::uint32_t first_page, std::uint32_t pte_flags, const std::vector<std::uint64_t>& bus) {
    const auto count = static_cast<std::uint32_t>(bus.size());
    words_.push_back(abi::make_header(abi::Opcode::Map, 4 + 2 * count));
    words_.push_back(first_page);
    words_.push_back(count);
    words_.push_back(pte_flags);
    for (const std::uint64_t b : bus) {
      words_.push_back(static_cast<std::uint32_t>(b));
      words_.push_back(static_cast<std::uint32_t>(b >> 32));
    }
    return *this;
  }
  PacketStream& write_physical(std::uint64_t addr, const std::vector<std::uint32_t>& data) {
    words_.push_back(abi::make_header(abi::Opcode::WritePhysical, 3 + static_cast<std::uint32_t>(data.size())));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.insert(words_.end(), data.begin(), data.end());
    return *this;
  }
  PacketStream& read_physical(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
    words_.push_back(abi::make_header(abi::Opcode::ReadPhysical, 6));
    words_.push_back(static_cast<std::uint32_t>(src));
    words_.push_back(static_cast<std::uint32_t>(src >> 32));
    words_.push_back(static_cast<std::uint32_t>(dst));
    words_.push_back(static_cast<std::uint32_t>(dst >> 32));
    words_.push_back(bytes);
    return *this;
  }
  PacketStream& unmap(std::uint32_t first_page, std::uint32_t count, std::uint64_t dummy_pte) {
    words_.push_back(abi::make_header(abi::Opcode::Unmap, 5));
    words_.push_back(first_page);
    words_.push_back(count);
    words_.push_back(static_cast<std::uint32_t>(dummy_pte));
    words_.push_back(static_cast<std::uint32_t>(dummy_pte >> 32));
    return *this;
  }
  PacketStream& copy(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
    words_.push_back(abi::make_header(abi::Opcode::Copy, 6));
    words_.push_back(static_cast<std::uint32_t>(src));
    words_.push_back(static_cast<std::uint32_t>(src >> 32));
    words_.push_back(static_cast<std::uint32_t>(dst));
    words_.push_back(static_cast<std::uint32_t>(dst >> 32));
    words_.push_back(bytes);
    return *this;
  }
  PacketStream& fill(std::uint64_t dst, std::uint32_t bytes, std::uint32_t pattern) {
    words_.push_back(abi::make_header(abi::Opcode::Fill, 5));
    words_.push_back(static_cast<std::uint32_t>(dst));
    words_.push_back(static_cast<std::uint32_t>(dst >> 32));
    words_.push_back(bytes);
    words_.push_back(pattern);
    return *this;
  }
  PacketStream& blit_rect(std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                          std::uint32_t src_pitch, std::uint32_t dst_pitch) {
    words_.push_back(abi::make_header(abi::Opcode::BlitRect, 9));
    for (std::uint32_t w : {static_cast<std::uint32_t>(src), static_cast<std::uint32_t>(src >> 32),
                            static_cast<std::uint32_t>(dst), static_cast<std::uint32_t>(dst >> 32), width, height,
                            src_pitch, dst_pitch})
      words_.push_back(w);
    return *this;
  }
  PacketStream& fill_rect(std::uint64_t dst, std::uint32_t width, std::uint32_t height, std::uint32_t dst_pitch,
                          std::uint32_t pattern) {
    words_.push_back(abi::make_header(abi::Opcode::FillRect, 7));
    for (std::uint32_t w : {static_cast<std::uint32_t>(dst), static_cast<std::uint32_t>(dst >> 32), width, height,
                            dst_pitch, pattern})
      words_.push_back(w);
    return *this;
  }
  PacketStream& wait_mem(std::uint64_t addr, abi::WaitMemFunc func, std::uint32_t ref, std::uint32_t mask,
                         std::uint32_t interval = 0) {
    words_.push_back(abi::make_header(abi::Opcode::WaitMem, 6,
                                      static_cast<std::uint8_t>(static_cast<unsigned>(func) << abi::wait_mem_flags::kFuncLsb)));
    for (std::uint32_t w : {static_cast<std::uint32_t>(addr), static_cast<std::uint32_t>(addr >> 32), ref, mask, interval})
      words_.push_back(w);
    return *this;
  }
  PacketStream& indirect(std::uint64_t addr, std::uint32_t bytes) {
    words_.push_back(abi::make_header(abi::Opcode::Indirect, 4));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    words_.push_back(bytes);
    return *this;
  }
  PacketStream& timestamp(std::uint64_t addr) {
    words_.push_back(abi::make_header(abi::Opcode::Timestamp, 3));
    words_.push_back(static_cast<std::uint32_t>(addr));
    words_.push_back(static_cast<std::uint32_t>(addr >> 32));
    return *this;
  }
  PacketStream& raw(std::uint32_t word) {
    words_.push_back(word);
    return *this;
  }
  PacketStream& append(const PacketStream& other) {
    words_.insert(words_.end(), other.words_.begin(), other.words_.end());
    return *this;
  }
  const std::vector<std::uint32_t>& words() const { return words_; }
  std::vector<std::uint32_t>& words() { return words_; }
  std::uint32_t bytes() const { return static_cast<std::uint32_t>(words_.size() * 4); }

 private:
  std::vector<std::uint32_t> words_;
};

}  // namespace sgpu::model
