// kmd::Allocation: an allocation created through a kmd::Device (DxgkDdiCreateAllocation +
// the memory manager's checks of its DXGK_ALLOCATIONINFO). Move-only; destroying it frees
// everything it holds. Lock/Unlock give CPU access to CpuVisible allocations.
#pragma once

#include "sgpu/kmd/allocation_info.hpp"
#include "sgpu/result.hpp"
#include "sgpu/vidmm/memory_manager.hpp"

namespace sgpu::kmd {

class Allocation {
 public:
  Allocation() = default;
  Allocation(vidmm::MemoryManager& mm, AllocationHandle handle) : mm_(&mm), handle_(handle) {}
  Allocation(Allocation&& o) noexcept { *this = std::move(o); }
  Allocation& operator=(Allocation&& o) noexcept {
    if (this != &o) {
      reset();
      mm_ = std::exchange(o.mm_, nullptr);
      handle_ = std::exchange(o.handle_, AllocationHandle{});
    }
    return *this;
  }
  ~Allocation() { reset(); }

  AllocationHandle handle() const { return handle_; }
  explicit operator bool() const { return mm_ != nullptr; }
  /// Destroys the allocation now (no-op when empty or already destroyed with its device).
  void reset() {
    if (mm_) (void)mm_->destroy_allocation(handle_);
    mm_ = nullptr;
    handle_ = {};
  }

  /// CPU pointer to the bytes; InvalidArgument unless CpuVisible; Busy while the GPU uses it.
  Result<void*> lock() { return mm_->lock(handle_); }
  Status unlock() { return mm_->unlock(handle_); }
  Result<vidmm::AllocationState> state() const { return mm_->query(handle_); }

 private:
  vidmm::MemoryManager* mm_ = nullptr;
  AllocationHandle handle_;
};

}  // namespace sgpu::kmd
