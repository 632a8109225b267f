// Pools of DMA buffers, allocation lists and patch-location lists for one device or context.
//
// The DDI rule: these may grow and shrink after creation but never below the starting sizes
// from DXGK_DEVICEINFO / DXGK_CONTEXTINFO. So a pool never hands out (or keeps) a buffer or list
// smaller than its starting size; acquire() with a larger need grows one; trim() gives back
// spare and oversized entries. A DMA buffer's private data is zeroed when the buffer is created
// and not touched again by the pool or the memory manager (reuse keeps what Render left there).
//
// A pool takes back only what it handed out, as it handed it out: release() checks the buffer
// (same memory, size, private-data size, GPU address) or list (one of those lent, capacity at
// least the starting size) and otherwise returns InvalidArgument naming what differs, leaving
// the argument with the caller. A short private-data block or a shrunk list is never re-used.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/system_memory.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/types.hpp"

namespace sgpu::kmd {

/// One DMA buffer: contiguous DMA memory plus the driver's private data block.
struct DmaBuffer {
  DmaMemory memory;
  std::vector<std::byte> private_data;
  /// GPU address the device fetches the buffer at (DmaBufferPhysicalAddress): set by the pool's
  /// mapper (e.g. the scheduler's kernel window in the aperture); 0 = not mapped, the buffer is
  /// only reachable at its bus address (privileged submissions).
  std::uint64_t gpu_address = 0;
};

/// Makes DMA buffers reachable by the GPU (WDDM maps them into the DmaBufferSegmentSet
/// aperture). Called by the pool when it creates a buffer and before it frees one.
class DmaBufferMapper {
 public:
  virtual ~DmaBufferMapper() = default;
  /// Maps `memory` and returns its GPU address. OutOfMemory when there is no room (the pool
  /// then frees the buffer and returns the error).
  virtual Result<std::uint64_t> map(const DmaMemory& memory) = 0;
  /// Unmaps what map() returned. Never fails (an error path may unmap twice).
  virtual void unmap(std::uint64_t gpu_address, std::size_t bytes) noexcept = 0;
};

class DmaBufferPool {
 public:
  /// Buffers are at least `starting_size` bytes (rounded to pages) with `private_data_size`
  /// bytes of private data; `keep` free buffers survive trim().
  DmaBufferPool(SystemMemory& memory, std::uint32_t starting_size, std::uint32_t private_data_size,
                std::size_t keep = 1);
  /// Unmaps (through the mapper) and frees the free buffers.
  ~DmaBufferPool();
  DmaBufferPool(const DmaBufferPool&) = delete;
  DmaBufferPool& operator=(const DmaBufferPool&) = delete;
  /// A buffer of at least max(starting size, min_bytes) bytes: a free one if one is big enough,
  /// else a new one (OutOfMemory if the system memory refuses). With a mapper, the buffer is
  /// mapped (gpu_address != 0) or the call fails with the mapper's error.
  Result<DmaBuffer> acquire(std::size_t min_bytes = 0);
  /// Takes back a buffer acquire() handed out, unchanged in memory, size, private-data size and
  /// GPU address; InvalidArgument (the buffer stays with the caller, nothing changes) for one
  /// this pool did not lend, one given back twice, or one that differs. A buffer mapped by a
  /// mapper that set_mapper() has since replaced is unmapped through it and freed.
  Status release(DmaBuffer&& buffer);
  /// Frees buffers beyond `keep` and any free buffer larger than the starting size.
  void trim();
  /// The same, keeping at most `keep` free buffers this time (0: free them all).
  void trim(std::size_t keep);
  /// Installs (or, with nullptr, removes) the mapper. Free buffers mapped by the previous mapper
  /// are unmapped through it first; buffers handed out stay as they are: whoever holds one gives
  /// it back with release() or unmaps it with the mapper it got it from. The mapper must outlive
  /// the pool or be removed before it dies.
  void set_mapper(DmaBufferMapper* mapper);
  DmaBufferMapper* mapper() const { return mapper_; }
  std::uint32_t starting_size() const { return starting_size_; }
  std::size_t free_count() const { return free_.size(); }
  std::size_t created() const { return created_; }
  /// Buffers handed out and not yet given back.
  std::size_t lent_count() const { return lent_.size(); }

 private:
  /// What acquire() handed out, keyed by the buffer's bus address.
  struct Lent {
    std::size_t bytes = 0;
    std::uint64_t gpu_address = 0;
    DmaBufferMapper* mapper = nullptr;
  };
  void unmap(DmaBuffer& buffer) noexcept;
  SystemMemory& memory_;
  std::uint32_t starting_size_;
  std::uint32_t private_size_;
  std::size_t keep_;
  std::size_t created_ = 0;
  DmaBufferMapper* mapper_ = nullptr;
  std::vector<DmaBuffer> free_;
  std::map<std::uint64_t, Lent> lent_;
};

/// Allocation lists / patch-location lists: vectors whose capacity never drops below the start.
template <class T>
class ListPool {
 public:
  explicit ListPool(std::uint32_t starting_size, std::size_t keep = 1) : starting_size_(starting_size), keep_(keep) {}
  /// An empty list with room for at least max(starting size, min_entries) entries.
  std::vector<T> acquire(std::size_t min_entries = 0) {
    const std::size_t want = std::max<std::size_t>(starting_size_, min_entries);
    ++lent_;
    for (auto it = free_.begin(); it != free_.end(); ++it)
      if (it->capacity() >= want) {
        std::vector<T> v = std::move(*it);
        free_.erase(it);
        return v;
      }
    std::vector<T> v;
    v.reserve(want);
    return v;
  }
  /// Takes back a list acquire() handed out. InvalidArgument, the list left with the caller,
  /// when no list is lent or its capacity fell below the starting size (not one of ours, or
  /// shrunk). (A list that grew is kept; trim() frees oversized ones.)
  Status release(std::vector<T>&& list) {
    if (lent_ == 0)
      return Error::invalid("list pool: a list of capacity {} given back, but none is lent", list.capacity());
    if (list.capacity() < starting_size_)
      return Error::invalid("list pool: a list of capacity {} given back; lists are at least the starting size {}",
                            list.capacity(), starting_size_);
    --lent_;
    std::vector<T> kept = std::move(list);
    kept.clear();
    free_.push_back(std::move(kept));
    return ok_status();
  }
  void trim() {
    free_.erase(std::remove_if(free_.begin(), free_.end(), [&](auto& v) { return v.capacity() > starting_size_; }),
                free_.end());
    if (free_.size() > keep_) free_.resize(keep_);
  }
  std::uint32_t starting_size() const { return starting_size_; }
  std::size_t free_count() const { return free_.size(); }
  std::size_t lent_count() const { return lent_; }

 private:
  std::uint32_t starting_size_;
  std::size_t keep_;
  std::size_t lent_ = 0;
  std::vector<std::vector<T>> free_;
};

/// The pools of one device or context, at the starting sizes its DXGK_DEVICEINFO /
/// DXGK_CONTEXTINFO gave.
struct CommandPools {
  template <class Info>
  CommandPools(SystemMemory& memory, const Info& info)
      : dma_buffers(memory, info.dma_buffer_size, info.dma_buffer_private_data_size),
        allocation_lists(info.allocation_list_size),
        patch_location_lists(info.patch_location_list_size) {}
  DmaBufferPool dma_buffers;
  ListPool<AllocationListEntry> allocation_lists;
  ListPool<PatchLocation> patch_location_lists;
};

}  // namespace sgpu::kmd
