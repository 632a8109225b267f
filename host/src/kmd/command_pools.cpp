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
  DmaBuffer b;
  if (it != free_.end()) {
    b = std::move(*it);
    free_.erase(it);
  } else {
    SGPU_ASSIGN_OR_RETURN(auto mem, memory_.allocate(want));
    // Private data is zeroed here, at creation, and only here.
    b = DmaBuffer{std::move(mem), std::vector<std::byte>(private_size_, std::byte{0}), 0};
    if (mapper_) {
      SGPU_ASSIGN_OR_RETURN(b.gpu_address, mapper_->map(b.memory));  // on error the memory goes back with `b`
    }
    ++created_;
  }
  lent_[b.memory.bus_addr()] = Lent{b.memory.size(), b.gpu_address, mapper_};
  return b;
}

Status DmaBufferPool::release(DmaBuffer&& buffer) {
  const std::uint64_t bus = buffer.memory.bus_addr();
  auto it = buffer.memory ? lent_.find(bus) : lent_.end();
  if (it == lent_.end())
    return Error::invalid("DMA buffer pool: the buffer at bus address {:#x} was not lent by this pool (or came back already)",
                          bus);
  const Lent& lent = it->second;
  if (buffer.memory.size() != lent.bytes)
    return Error::invalid("DMA buffer pool: the buffer at bus address {:#x} comes back with {} bytes; it was lent with {}",
                          bus, buffer.memory.size(), lent.bytes);
  if (buffer.private_data.size() != private_size_)
    return Error::invalid(
        "DMA buffer pool: the buffer at bus address {:#x} comes back with {} bytes of private data; it was lent with {}",
        bus, buffer.private_data.size(), private_size_);
  if (buffer.gpu_address != lent.gpu_address)
    return Error::invalid("DMA buffer pool: the buffer at bus address {:#x} comes back at GPU address {:#x}; it was lent at {:#x}",
                          bus, buffer.gpu_address, lent.gpu_address);
  DmaBufferMapper* const mapped_by = lent.mapper;
  lent_.erase(it);
  DmaBuffer b = std::move(buffer);
  if (mapped_by != mapper_) {
    if (mapped_by && b.gpu_address != 0) mapped_by->unmap(b.gpu_address, b.memory.size());
    return ok_status();  // freed with `b`
  }
  free_.push_back(std::move(b));
  return ok_status();
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
