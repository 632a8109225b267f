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
