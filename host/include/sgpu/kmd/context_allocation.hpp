// Context allocations (DxgkCbCreateContextAllocation / DXGKARGCB_CREATECONTEXTALLOCATION):
// memory the GPU keeps per context (SharedAcrossContexts = 0: a GPU context allocation, resident
// while that context runs) or per device (= 1: a device context allocation, resident whenever
// any context of the device runs), e.g. a context save area. Their first content comes from an
// INIT_CONTEXT_RESOURCE paging operation and survives every eviction.
#pragma once

#include <cstdint>

#include "sgpu/kmd/allocation_info.hpp"
#include "sgpu/kmd/segments.hpp"
#include "sgpu/result.hpp"
#include "sgpu/vidmm/memory_manager.hpp"

namespace sgpu::kmd {

class Device;
class Context;

/// DXGK_CREATECONTEXTALLOCATIONFLAGS (WDDM 1.x: MapGpuVirtualAddress and later are undefined).
struct CreateContextAllocationFlags {
  static constexpr std::uint32_t kSharedAcrossContexts = 1u << 0;
  static constexpr std::uint32_t kDefined = kSharedAcrossContexts;
  std::uint32_t value = 0;
  constexpr bool shared_across_contexts() const { return value & kSharedAcrossContexts; }
};

/// DXGKARGCB_CREATECONTEXTALLOCATION (inputs; hAllocation is the returned object's handle()).
struct CreateContextAllocationArgs {
  CreateContextAllocationFlags context_allocation_flags;
  std::uint64_t device = 0;   ///< hDevice (Device::id(); 0: a system device): a live device of this adapter
  std::uint64_t context = 0;  ///< hContext (Context::id()): 0 when SharedAcrossContexts = 1, else a live
                              ///< context of that device
  std::uint64_t driver_allocation = 0;  ///< hDriverAllocation, echoed in paging operations
  std::uint64_t size = 0;
  std::uint32_t alignment = 0;
  SegmentSet supported_segment_set;
  SegmentSet eviction_segment_set;
  SegmentPreference preferred_segment;
  BankPreference hinted_bank;
  AllocationInfoFlags flags;
  std::uint32_t physical_adapter_index = 0;  ///< one adapter: must be 0
};

class ContextAllocation {
 public:
  ContextAllocation() = default;
  ContextAllocation(vidmm::MemoryManager& mm, AllocationHandle h) : mm_(&mm), handle_(h) {}
  ContextAllocation(ContextAllocation&& o) noexcept { *this = std::move(o); }
  ContextAllocation& operator=(ContextAllocation&& o) noexcept {
    if (this != &o) {
      reset();
      mm_ = std::exchange(o.mm_, nullptr);
      handle_ = std::exchange(o.handle_, AllocationHandle{});
    }
    return *this;
  }
  ~ContextAllocation() { reset(); }

  /// hAllocation (pass to destroy, i.e. reset()).
  AllocationHandle handle() const { return handle_; }
  /// DxgkCbDestroyContextAllocation: returns the segment range, aperture pages and backing store.
  void reset() {
    if (mm_) (void)mm_->destroy_allocation(handle_);
    mm_ = nullptr;
    handle_ = {};
  }
  Result<vidmm::AllocationState> state() const { return mm_->query(handle_); }

 private:
  vidmm::MemoryManager* mm_ = nullptr;
  AllocationHandle handle_;
};

}  // namespace sgpu::kmd
