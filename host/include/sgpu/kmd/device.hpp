// kmd::Device and kmd::Context: a DXGK device (one per runtime device, created with
// DXGK_CREATEDEVICEFLAGS) and a DXGK context on one node of it. Not the hardware: that is
// sgpu::Device. Both are move-only RAII objects; destroying a device destroys its allocations
// and device context allocations, destroying a context its GPU context allocations. The adapter
// must outlive them.
//
// Each has its DMA-buffer and list pools at the starting sizes its DXGK_DEVICEINFO /
// DXGK_CONTEXTINFO gave (command_pools.hpp: never below them, private data zeroed at creation).
// A context's pools carry its Render and Present passes (the scheduler). A device's pools carry
// what the device submits without a context of its own: the system device's DMA buffers are the
// memory manager's paging buffers (sched::Runtime hands its pool to the DeviceExecutor, and the
// default sizing policy sizes the system device from the adapter's paging-buffer description).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "sgpu/kmd/allocation.hpp"
#include "sgpu/kmd/command_pools.hpp"
#include "sgpu/kmd/sizing.hpp"
#include "sgpu/result.hpp"

namespace sgpu::kmd {

class Adapter;
class Context;

/// DXGKARG_CREATECONTEXT inputs.
struct CreateContextArgs {
  std::uint32_t node_ordinal = 0;
  std::uint32_t engine_affinity = 1;  ///< exactly one bit: 1 << EngineOrdinal (one engine: 1)
  CreateContextFlags flags;
  std::vector<std::byte> private_driver_data;  ///< from the user-mode driver; opaque
};

class Device {
 public:
  Device(Device&& o) noexcept;
  Device& operator=(Device&& o) noexcept;
  ~Device();

  std::uint64_t id() const { return id_; }  ///< hDevice
  /// False once moved from or destroyed.
  bool live() const { return adapter_ != nullptr; }
  CreateDeviceFlags flags() const { return flags_; }
  const DxgkDeviceInfo& info() const { return info_; }
  Adapter& adapter() const { return *adapter_; }

  /// DxgkDdiCreateContext: checks the arguments, sizes the context with the adapter's policy,
  /// applies validate_context_info, creates the pools at the starting sizes.
  Result<Context> create_context(const CreateContextArgs& args);
  /// DxgkDdiCreateAllocation (one allocation; the device owns it).
  Result<Allocation> create_allocation(const AllocationInfo& info);

  /// The device-level pools, at DXGK_DEVICEINFO's starting sizes. Their buffers are contiguous
  /// system memory at their bus addresses (no mapper: what the device submits itself is
  /// privileged); DXGK_DEVICEINFO.DmaBufferSegmentSet says where they may be placed.
  DmaBufferPool& dma_buffers() { return pools_->dma_buffers; }
  ListPool<AllocationListEntry>& allocation_lists() { return pools_->allocation_lists; }
  ListPool<PatchLocation>& patch_location_lists() { return pools_->patch_location_lists; }

 private:
  friend class Adapter;
  Device(Adapter& adapter, std::uint64_t id, CreateDeviceFlags flags, const DxgkDeviceInfo& info);
  void release();
  Adapter* adapter_ = nullptr;
  std::uint64_t id_ = 0;
  CreateDeviceFlags flags_;
  DxgkDeviceInfo info_;
  std::unique_ptr<CommandPools> pools_;
};

class Context {
 public:
  Context(Context&& o) noexcept;
  Context& operator=(Context&& o) noexcept;
  ~Context();

  std::uint64_t id() const { return id_; }  ///< hContext
  std::uint64_t device_id() const { return device_; }
  /// False once moved from or destroyed.
  bool live() const { return adapter_ != nullptr; }
  CreateContextFlags flags() const { return flags_; }
  std::uint32_t node_ordinal() const { return node_; }
  const DxgkContextInfo& info() const { return info_; }
  /// The residency scope of this context's submissions (its context allocations and its device's).
  vidmm::ResidencyScope residency_scope() const { return {device_, id_}; }

  DmaBufferPool& dma_buffers() { return pools_->dma_buffers; }
  ListPool<AllocationListEntry>& allocation_lists() { return pools_->allocation_lists; }
  ListPool<PatchLocation>& patch_location_lists() { return pools_->patch_location_lists; }

 private:
  friend class Device;
  Context(Adapter& adapter, std::uint64_t device, std::uint64_t id, CreateContextFlags flags, std::uint32_t node,
          const DxgkContextInfo& info);
  void release();
  Adapter* adapter_ = nullptr;
  std::uint64_t device_ = 0;
  std::uint64_t id_ = 0;
  CreateContextFlags flags_;
  std::uint32_t node_ = 0;
  DxgkContextInfo info_;
  std::unique_ptr<CommandPools> pools_;
};

}  // namespace sgpu::kmd
