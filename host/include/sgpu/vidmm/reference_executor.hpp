// ReferenceExecutor: runs paging buffers in process over a byte-exact model of the segments.
//
// The memory segment is a block of host bytes; the aperture is a page table whose entries point
// at backing-store pages or at the dummy page; system memory is the backing stores themselves.
// It checks every operation it is given (ranges inside their segment, aperture pages mapped
// before a transfer goes through them, unmap to the right dummy page, FILL only on memory
// segments) and fails the buffer on a violation, so it doubles as a checker of the memory
// manager. DISCARD_CONTENT poisons the range, so a manager that later relies on discarded bytes
// is caught by the content checks. Accesses that reach the dummy page are counted.
//
// Tests also use it as "the GPU": gpu_write / gpu_read access any GPU address as a submission
// would, which is how contents are written before evictions and verified after restores.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "sgpu/kmd/segments.hpp"
#include "sgpu/vidmm/paging.hpp"

namespace sgpu::vidmm {

class ReferenceExecutor final : public PagingExecutor {
 public:
  static constexpr std::byte kDummyPoison{0xA5};    ///< content of the dummy page
  static constexpr std::byte kDiscardPoison{0xDD};  ///< what DISCARD_CONTENT leaves behind

  /// `segments[i]` is segment ID i + 1 (as the adapter reports them).
  ReferenceExecutor(std::vector<kmd::SegmentDescriptor> segments, std::uint64_t page_size);

  Status execute(const PagingBuffer& buffer) override;
  std::uint64_t dummy_page() const override { return kDummyPageBus; }
  void* cpu_address(SegmentId segment, std::uint64_t offset, std::uint64_t bytes) override;

  /// The GPU writes / reads `bytes` at a GPU address (memory or aperture segment).
  Status gpu_write(std::uint64_t gpu_address, const void* data, std::size_t bytes);
  Status gpu_read(std::uint64_t gpu_address, void* data, std::size_t bytes);

  /// Makes the next execute() fail without doing anything (error-path tests).
  void fail_next_buffer() { fail_next_ = true; }

  struct Counters {
    std::array<std::uint64_t, 11> operations{};  ///< by PagingOperationType value
    std::uint64_t buffers = 0;
    std::uint64_t bytes_transferred = 0;
    std::uint64_t dummy_page_reads = 0;
    std::uint64_t dummy_page_writes = 0;
    std::uint64_t count(PagingOperationType t) const { return operations[static_cast<std::size_t>(t)]; }
  };
  const Counters& counters() const { return counters_; }
  /// Every operation executed so far, in order.
  const std::vector<PagingOperation>& log() const { return log_; }
  void clear_log() { log_.clear(); }
  /// Number of aperture pages of `segment` currently mapped to something other than the dummy page.
  std::uint64_t mapped_pages(SegmentId segment) const;

 private:
  static constexpr std::uint64_t kDummyPageBus = 0xD0D0'0000'0000ull;

  struct Segment {
    kmd::SegmentDescriptor desc;
    std::vector<std::byte> memory;        // memory segments
    std::vector<std::byte*> page_table;   // aperture segments: nullptr = dummy page
  };

  Status run(const PagingOperation& op);
  Status access(const PagingLocation& loc, std::uint64_t bytes, bool write, std::byte* data);
  Status access_gpu(SegmentId segment, std::uint64_t offset, std::uint64_t bytes, bool write, std::byte* data);
  Result<SegmentId> segment_of(std::uint64_t gpu_address, std::uint64_t bytes) const;

  std::vector<Segment> segments_;
  std::uint64_t page_;
  std::vector<std::byte> dummy_;
  Counters counters_;
  std::vector<PagingOperation> log_;
  bool fail_next_ = false;
};

}  // namespace sgpu::vidmm
