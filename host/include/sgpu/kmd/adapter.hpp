// Adapter: one softgpu as the driver model sees it: the driver caps (DXGK_DRIVERCAPS), the
// segment descriptors (DXGK_QUERYSEGMENTOUT), the memory manager over those segments, and the
// factory of devices and context allocations.
//
// The description comes from the device's capability registers (describe(DeviceInfo)) or is
// given explicitly (tests, other boards). Segment IDs follow the order memory segment, then
// aperture segment, counting only segments that exist: a device without a memory segment has
// the aperture as segment 1.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "sgpu/device.hpp"
#include "sgpu/kmd/segments.hpp"
#include "sgpu/kmd/sizing.hpp"
#include "sgpu/result.hpp"
#include "sgpu/vidmm/memory_manager.hpp"

namespace sgpu::kmd {

/// DXGK_VIDSCHCAPS bits a physical-addressing driver sets; the rest must be 0.
struct VidSchCaps {
  static constexpr std::uint32_t kMultiEngineAware = 1u << 0;
  static constexpr std::uint32_t kVSyncPowerSaveAware = 1u << 1;
  static constexpr std::uint32_t kPreemptionAware = 1u << 2;  ///< needs MultiEngineAware
  static constexpr std::uint32_t kNoDmaPatching = 1u << 3;    ///< needs PreemptionAware + MultiEngineAware
  static constexpr std::uint32_t kCancelCommandAware = 1u << 4;  ///< needs MultiEngineAware
  static constexpr std::uint32_t kDefined = (1u << 5) - 1;
  std::uint32_t value = 0;
};

/// DXGK_VIDMMCAPS bits; the rest must be 0.
struct VidMmCaps {
  static constexpr std::uint32_t kOutOfOrderLock = 1u << 0;
  static constexpr std::uint32_t kDedicatedPagingEngine = 1u << 1;
  static constexpr std::uint32_t kPagingEngineCanSwizzle = 1u << 2;
  static constexpr std::uint32_t kSectionBackedPrimary = 1u << 3;
  static constexpr std::uint32_t kDefined = (1u << 4) - 1;
  std::uint32_t value = 0;
};

/// DXGK_DRIVERCAPS, the fields that parameterise memory management and scheduling.
struct DriverCaps {
  std::uint64_t highest_acceptable_address = ~std::uint64_t{0};
  std::uint32_t max_allocation_list_slot_id = 256;   ///< VidMm's per-DMA-buffer slot table
  std::uint64_t aperture_segment_commit_limit = 0;   ///< bytes mapped into apertures at once
  VidSchCaps scheduling_caps;
  VidMmCaps memory_management_caps;
  std::uint32_t paging_node = 0;                     ///< node that runs paging buffers
  std::uint32_t node_count = 1;                      ///< schedulable nodes (engines)
};

/// Everything the driver reports about the adapter.
struct AdapterDescription {
  std::uint64_t page_size = 4096;
  std::vector<SegmentDescriptor> segments;  ///< segments[i] = segment ID i + 1
  DriverCaps caps;
  // DXGK_QUERYSEGMENTOUT's paging-buffer fields
  SegmentId paging_buffer_segment_id = kSystemMemory;  ///< aperture only; 0 = contiguous system memory
  /// The aperture segment the kernel maps DMA buffers into itself (the scheduler's window,
  /// sched/kernel_window.hpp), which contexts name in DmaBufferSegmentSet; the memory manager
  /// places no allocation there. 0 = none (DMA buffers then go to the first aperture segment).
  SegmentId dma_buffer_segment_id = kSystemMemory;
  std::uint32_t paging_buffer_size = 64 * 1024;
  std::uint32_t paging_buffer_private_data_size = 0;
};

/// The description a device reports: its memory segment (CAP_MEMSEG_*) and aperture segment
/// (CAP_APSEG_*, with CAP_FEATURES.gart) where present, caps from CAP_BUS/CAP_FEATURES.
/// `reserved_aperture_pages` pages at the top of the aperture are kept for the kernel (the
/// scheduler's window for DMA buffers and fence records, sched/kernel_window.hpp): they become an
/// aperture segment of their own after the memory manager's, dma_buffer_segment_id, and the
/// memory manager's aperture segment and commit limit shrink by that much (no such segment if
/// nothing is left).
AdapterDescription describe(const sgpu::DeviceInfo& info, std::uint64_t reserved_aperture_pages = 0);

class Device;
struct CreateContextAllocationArgs;
class ContextAllocation;

class Adapter {
 public:
  /// Validates the description (caps dependencies, segments) and builds the memory manager.
  /// Unsupported when the description has no segment at all. `executor` and `system_memory`
  /// must outlive the adapter; so must the adapter every object it creates.
  static Result<std::unique_ptr<Adapter>> create(AdapterDescription description, vidmm::PagingExecutor& executor,
                                                 SystemMemory& system_memory,
                                                 std::shared_ptr<const SizingPolicy> policy = nullptr);
  ~Adapter();
  Adapter(const Adapter&) = delete;
  Adapter& operator=(const Adapter&) = delete;

  const AdapterDescription& description() const { return desc_; }
  const DriverCaps& caps() const { return desc_.caps; }
  std::uint64_t page_size() const { return desc_.page_size; }
  /// The segment with this ID (InvalidArgument naming it if there is none).
  Result<const SegmentDescriptor*> segment(SegmentId id) const;
  /// The first memory / aperture segment, or Unsupported when the adapter has none.
  Result<SegmentId> memory_segment() const;
  Result<SegmentId> aperture_segment() const;
  SegmentSet aperture_segments() const;
  SegmentSet all_segments() const;
  /// The segments allocations may use: all but the DMA-buffer segment.
  SegmentSet allocation_segments() const;
  /// DmaBufferSegmentId: where the kernel maps DMA buffers (0 = none described).
  SegmentId dma_buffer_segment() const { return desc_.dma_buffer_segment_id; }

  vidmm::MemoryManager& memory_manager() { return *mm_; }
  const vidmm::MemoryManager& memory_manager() const { return *mm_; }
  SystemMemory& system_memory() { return system_; }
  const SizingPolicy& sizing_policy() const { return *policy_; }

  /// DxgkDdiCreateDevice: the policy sizes it, the OS checks (validate_device_info) apply.
  Result<Device> create_device(CreateDeviceFlags flags);
  /// DxgkCbCreateContextAllocation.
  Result<ContextAllocation> create_context_allocation(const CreateContextAllocationArgs& args);

  /// Live devices and contexts (for leak checks).
  std::size_t live_devices() const { return devices_.size(); }
  std::size_t live_contexts() const { return contexts_.size(); }
  /// hDevice / hContext names a live device / context of this adapter. Handles carry the
  /// adapter's tag (see handle_tag.hpp) and a sequence that is never reused, so another
  /// adapter's handle and a destroyed object's handle are both refused.
  bool owns_device(std::uint64_t device) const { return devices_.count(device) != 0; }
  bool owns_context(std::uint64_t context) const { return contexts_.count(context) != 0; }

 private:
  friend class Device;
  friend class Context;
  Adapter(AdapterDescription d, SystemMemory& s, std::shared_ptr<const SizingPolicy> p);
  std::uint64_t new_handle() { return (std::uint64_t{tag_} << 32) | next_sequence_++; }
  struct LiveContext {
    std::uint64_t device = 0;
    CreateContextFlags flags;
  };

  AdapterDescription desc_;
  SystemMemory& system_;
  std::shared_ptr<const SizingPolicy> policy_;
  std::unique_ptr<vidmm::MemoryManager> mm_;
  std::uint32_t tag_;                    ///< bits 63-32 of every hDevice/hContext
  std::uint32_t next_sequence_ = 1;      ///< bits 31-0 (also the ring's context id)
  std::map<std::uint64_t, CreateDeviceFlags> devices_;  ///< live hDevice -> flags
  std::map<std::uint64_t, LiveContext> contexts_;       ///< live hContext
};

}  // namespace sgpu::kmd
