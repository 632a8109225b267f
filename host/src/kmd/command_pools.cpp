#include "sgpu/kmd/command_pools.hpp"

#include <algorithm>

namespace sgpu::kmd {

DmaBufferPool::DmaBufferPool(SystemMemory& memory, std::uint32_t starting_size, std::uint32_t private_data_size,
                             std::size_t keep)
    : memory_(memory), starting_size_(starting_size), private_size_(private_data_size), keep_(keep) {}

DmaBufferPool::~DmaBufferPool() {
  for (auto& b : free_) unmap(b);
}

void DmaBufferPool::unmap(DmaBuffer& buffer) noexcept {
  if (mapper_ && buffer.gpu_address != 0) mapper_->unmap(buffer.gpu_address, buffer.memory.size());
  buffer.gpu_address = 0;
}

Result<DmaBuffer> DmaBufferPool::acquire(std::size_t min_bytes) {
  const std::size_t want = std::max<std::size_t>(starting_size_, min_bytes);
  auto it = std::find_if(free_.begin(), free_.end(), [&](const DmaBuffer& b) { return b.memory.size() >= want; });
  if (it != free_.end()) {
    DmaBuffer b = std::move(*it);
    free_.erase(it);
    return b;
  }
  SGPU_ASSIGN_OR_RETURN(auto mem, memory_.allocate(want));
  // Private data is zeroed here, at creation, and only here.
  DmaBuffer b{std::move(mem), std::vector<std::byte>(private_size_, std::byte{0}), 0};
  if (mapper_) {
    SGPU_ASSIGN_OR_RETURN(b.gpu_address, mapper_->map(b.memory));  // on error the memory goes back with `b`
  }
  ++created_;
  return b;
}

void DmaBufferPool::release(DmaBuffer buffer) {
  if (buffer.memory.size() >= starting_size_) {
    free_.push_back(std::move(buffer));
  } else {
    unmap(buffer);
  }
}

void DmaBufferPool::trim() { trim(keep_); }

void DmaBufferPool::trim(std::size_t keep) {
  const auto oversized = [&](const DmaBuffer& b) { return b.memory.size() > std::size_t{starting_size_} + 4095; };
  for (auto& b : free_)
    if (oversized(b)) unmap(b);
  free_.erase(std::remove_if(free_.begin(), free_.end(), oversized), free_.end());
  while (free_.size() > keep) {
    unmap(free_.back());
    free_.pop_back();
  }
}

void DmaBufferPool::set_mapper(DmaBufferMapper* mapper) {
  if (mapper == mapper_) return;
  for (auto& b : free_) unmap(b);
  mapper_ = mapper;
  // Free buffers are remapped lazily: drop them (they were unmapped) so acquire() maps new ones.
  free_.clear();
}

}  // namespace sgpu::kmd
