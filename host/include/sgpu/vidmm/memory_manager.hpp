// MemoryManager: the video memory manager (VidMm) of a physical-addressing (WDDM 1.x) driver.
//
// It owns one SegmentAllocator per segment and the table of allocations, and decides placement
// (preferred segments first, then the other supported ones), residency (per submission: every
// allocation of the list, plus the context allocations of the submitting context and device, is
// made resident in a segment the GPU may use for that access), eviction (least recently used,
// idle before busy, pinned and locked never) to an eviction aperture segment or straight to
// system memory, and which paging operations carry it out. The operations of one call are handed
// to the PagingExecutor as one PagingBuffer.
//
// Rules that the caller can break are checked before anything changes: a rejected call leaves
// the allocators, the table and the executor untouched (Error::hardware_touched == false). A call
// that fails after paging began (no room left after evicting everything evictable, or the
// executor failed) says so with hardware_touched == true; allocations it already moved stay
// valid, their contents intact.
#pragma once

#include <chrono>
#include <cstdint>
#include <list>
#include <memory>
#include <vector>

#include "sgpu/kmd/allocation_info.hpp"
#include "sgpu/kmd/segments.hpp"
#include "sgpu/result.hpp"
#include "sgpu/system_memory.hpp"
#include "sgpu/types.hpp"
#include "sgpu/vidmm/paging.hpp"
#include "sgpu/vidmm/segment_allocator.hpp"

namespace sgpu::vidmm {

/// Who an allocation belongs to; context allocations come along with their context's submissions.
enum class AllocationKind { Standard, DeviceContext, GpuContext };
struct AllocationOwner {
  AllocationKind kind = AllocationKind::Standard;
  std::uint64_t device = 0;   ///< 0 for the system device
  std::uint64_t context = 0;  ///< GpuContext only
};

struct MemoryManagerConfig {
  std::vector<kmd::SegmentDescriptor> segments;  ///< segments[i] is segment ID i + 1
  std::uint64_t page_size = 4096;
  /// Segments the kernel manages itself (the DMA-buffer segment): no allocation may name them.
  kmd::SegmentSet kernel_segments;
  /// DXGK_DRIVERCAPS.ApertureSegmentCommitLimit: bytes mapped into all aperture segments together.
  std::uint64_t aperture_commit_limit = ~std::uint64_t{0};
  /// Transfers larger than this are split into TransferStart ... TransferEnd pieces (the paging
  /// buffer of the device executor holds one piece).
  std::uint64_t max_transfer_piece = 256 * 1024;
  std::uint32_t fill_pattern = 0;     ///< FILL pattern for first touch (VidMm uses 0)
  std::uint32_t context_init_pattern = 0;  ///< initial state written by INIT_CONTEXT_RESOURCE
};

/// Where an allocation is (the output half of DXGK_ALLOCATIONLIST: SegmentId, PhysicalAddress).
struct Placement {
  SegmentId segment = kSystemMemory;       ///< 0 = not resident
  std::uint64_t gpu_address = 0;           ///< segment BaseAddress + offset
};

/// Whose context allocations a submission brings along.
struct ResidencyScope {
  std::uint64_t device = 0;
  std::uint64_t context = 0;
};

enum class Content {
  Undefined,    ///< never paged in: first page-in FILLs (or INIT_CONTEXT_RESOURCE for context allocations)
  FillPattern,  ///< equals the fill pattern, nothing wrote it: eviction may discard it
  Valid,        ///< written by the GPU or the CPU: eviction must transfer it
};

/// Everything observable about one allocation (tests, tools).
struct AllocationState {
  std::uint64_t size = 0;
  std::uint64_t alignment = 0;
  Placement placement;
  std::uint64_t segment_offset = 0;
  Content content = Content::Undefined;
  bool has_backing_store = false;
  bool pinned = false;
  std::uint32_t lock_count = 0;
  RingFence last_use;
  /// The last paging buffer that moved or wrote it; busy (for the CPU) until it completes.
  RingFence paging_fence;
  AllocationOwner owner;
};

class MemoryManager {
 public:
  /// Validates the segment table (sizes, commit limits, flags, banks, no overlap) and builds the
  /// allocators. The executor and the system memory must outlive the manager.
  static Result<std::unique_ptr<MemoryManager>> create(MemoryManagerConfig config, PagingExecutor& executor,
                                                       SystemMemory& system_memory);
  ~MemoryManager();
  MemoryManager(const MemoryManager&) = delete;
  MemoryManager& operator=(const MemoryManager&) = delete;

  // ---- allocations
  /// Validates `info` (every DXGK_ALLOCATIONINFO rule; the error names the field and its value)
  /// and records the allocation. No memory is committed until it is first made resident.
  Result<AllocationHandle> create_allocation(const kmd::AllocationInfo& info, const AllocationOwner& owner = {});
  /// Frees the segment range (unmapping aperture pages) and the backing store (after the last
  /// fence that used it). Busy while locked.
  Status destroy_allocation(AllocationHandle allocation);
  /// Destroys every allocation of `owner.device` (or of `owner.context` for GPU context allocations).
  void destroy_owned_by(AllocationKind kind, std::uint64_t device, std::uint64_t context);

  // ---- residency (the call Render/SubmitCommand make per submission)
  /// Makes every listed allocation (and the scope's context allocations) resident where the GPU
  /// may access it as listed; returns one Placement per list entry.
  Result<std::vector<Placement>> make_resident(const std::vector<AllocationListEntry>& list,
                                               const ResidencyScope& scope = {});
  /// Records that the submission with `fence` uses the list (and the scope's context allocations).
  void note_submitted(const std::vector<AllocationListEntry>& list, const ResidencyScope& scope, RingFence fence);
  /// Latest completed fence: allocations last used at or before it are idle.
  void set_completed_fence(RingFence fence);
  RingFence completed_fence() const { return completed_; }

  /// Evicts one allocation now (to its eviction segment or system memory). Busy if pinned or locked.
  Status evict(AllocationHandle allocation);
  /// Makes the allocation resident and keeps it there until unpin().
  Result<Placement> pin(AllocationHandle allocation);
  Status unpin(AllocationHandle allocation);
  /// CPU access (CpuVisible allocations only): returns a CPU pointer to the allocation's bytes
  /// and keeps it in place until unlock(). Busy while a submission still uses it. Paging that
  /// moved it and may still run (paging runs ahead) is waited for: up to `timeout` for that
  /// fence (Errc::Timeout naming the allocation and the fence; DeviceLost if the device is gone).
  Result<void*> lock(AllocationHandle allocation, std::chrono::nanoseconds timeout = kDefaultPagingWait);
  /// How long lock() waits for paging by default (the transport's time).
  static constexpr std::chrono::nanoseconds kDefaultPagingWait = std::chrono::seconds(10);
  Status unlock(AllocationHandle allocation);

  // ---- observation
  Result<AllocationState> query(AllocationHandle allocation) const;
  const kmd::SegmentDescriptor& segment(SegmentId id) const { return segments_[id - 1].desc; }
  std::size_t segment_count() const { return segments_.size(); }
  const SegmentAllocator& allocator(SegmentId id) const { return segments_[id - 1].allocator; }
  std::uint64_t aperture_committed() const { return aperture_committed_; }
  std::size_t live_allocations() const { return live_; }
  std::uint64_t page_size() const { return config_.page_size; }
  /// Backing stores kept alive until the GPU is done with destroyed allocations.
  std::size_t deferred_frees() const { return deferred_.size(); }
  /// Allocations moved out of their segment to make room (or by evict()), since creation.
  std::uint64_t evictions() const { return evictions_; }

 private:
  struct Record;
  struct Segment {
    kmd::SegmentDescriptor desc;
    SegmentAllocator allocator;
    std::list<std::uint32_t> lru;  // resident allocations, least recently used first
  };

  MemoryManager(MemoryManagerConfig config, PagingExecutor& executor, SystemMemory& system_memory);
  Status validate(const kmd::AllocationInfo& info) const;
  Result<std::uint32_t> lookup(AllocationHandle h, const char* what) const;
  bool acceptable(const Record& r, SegmentId seg, bool write) const;
  Status ensure_backing(Record& r);
  void fill_backing(Record& r);
  bool try_range(Record& r, SegmentId seg, bool allow_evict, std::uint64_t stamp, PagingBuffer& pb,
                 std::uint64_t& offset);
  bool page_in(std::uint32_t index, SegmentId seg, bool allow_evict, std::uint64_t stamp, PagingBuffer& pb);
  Status evict_one(std::uint32_t index, PagingBuffer& pb, bool allow_eviction_segment);
  void release_range(Record& r, PagingBuffer& pb);
  void emit_transfer(const Record& r, const PagingLocation& src, const PagingLocation& dst, PagingBuffer& pb);
  PagingLocation location(const Record& r) const;
  void touch(std::uint32_t index);
  std::vector<std::uint32_t> scope_allocations(const ResidencyScope& scope) const;
  Status run(PagingBuffer& pb);
  Status wait_paged(std::uint32_t index, const char* what, std::chrono::nanoseconds timeout);
  AllocationHandle handle_of(std::uint32_t index) const;

  MemoryManagerConfig config_;
  PagingExecutor& executor_;
  SystemMemory& system_;
  std::vector<Segment> segments_;
  std::uint32_t tag_;  ///< 12 bits above every hAllocation: another manager's handles never match
  std::vector<Record> records_;
  std::vector<std::uint32_t> free_records_;
  std::vector<std::uint32_t> context_allocations_;
  std::vector<std::pair<RingFence, std::unique_ptr<DmaMemory>>> deferred_;
  std::vector<std::uint32_t> paged_;  ///< allocations the pending paging buffer moves or writes
  std::uint64_t aperture_committed_ = 0;
  std::uint64_t stamp_ = 0;
  std::size_t live_ = 0;
  std::uint64_t evictions_ = 0;
  RingFence completed_;
};

}  // namespace sgpu::vidmm
