#include "sgpu/kmd/command_pools.hpp"

#include <algorithm>

namespace sgpu::kmd {

DmaBufferPool::DmaBufferPool(vidmm::SystemMemory& memory, std::uint32_t starting_size, std::uint32_t private_data_size,
                             std::size_t keep)
    : memory_(memory), starting_size_(starting_size), private_size_(private_data_size), keep_(keep) {}

Result<DmaBuffer> DmaBufferPool::acquire(std::size_t min_bytes) {
  const std::size_t want = std::max<std::size_t>(starting_size_, min_bytes);
  auto it = std::find_if(free_.begin(), free_.end(), [&](const DmaBuffer& b) { return b.memory.size() >= want; });
  if (it != free_.end()) {
    DmaBuffer b = std::move(*it);
    free_.erase(it);
    return b;
  }
  auto mem = memory_.allocate(want);
  if (!mem) return std::move(mem).error();
  ++created_;
  // Private data is zeroed here, at creation, and only here.
  return DmaBuffer{std::move(*mem), std::vector<std::byte>(private_size_, std::byte{0})};
}

void DmaBufferPool::release(DmaBuffer buffer) {
  if (buffer.memory.size() >= starting_size_) free_.push_back(std::move(buffer));
}

void DmaBufferPool::trim() {
  free_.erase(std::remove_if(free_.begin(), free_.end(),
                             [&](const DmaBuffer& b) { return b.memory.size() > std::size_t{starting_size_} + 4095; }),
              free_.end());
  if (free_.size() > keep_) free_.resize(keep_);
}

}  // namespace sgpu::kmd
