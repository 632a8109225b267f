#include "sgpu/kmd/adapter.hpp"

#include "handle_tag.hpp"

#include <fmt/format.h>

#include "sgpu/kmd/context_allocation.hpp"
#include "sgpu/kmd/device.hpp"

namespace sgpu::kmd {

namespace {}  // namespace

AdapterDescription describe(const sgpu::DeviceInfo& info, std::uint64_t reserved_aperture_pages) {
  AdapterDescription d;
  d.page_size = info.page_size() != 0 ? info.page_size() : 4096;
  if (info.has_memory_segment && info.memory_segment.size != 0) {
    SegmentDescriptor m;
    m.base_address = info.memory_segment.base;
    m.size = info.memory_segment.size;
    m.commit_limit = m.size;
    d.segments.push_back(m);
  }
  // The kernel's window is the top of the aperture, so the segment keeps its base address.
  const std::uint64_t reserved_bytes =
      reserved_aperture_pages > info.aperture_segment.size / d.page_size ? info.aperture_segment.size
                                                                          : reserved_aperture_pages * d.page_size;
  if (info.has_gart && info.aperture_segment.size > reserved_bytes) {
    SegmentDescriptor a;
    a.base_address = info.aperture_segment.base;
    a.size = info.aperture_segment.size - reserved_bytes;
    a.commit_limit = a.size;
    a.flags.value = SegmentFlags::kAperture;
    d.segments.push_back(a);
    d.caps.aperture_segment_commit_limit = a.size;
  }
  if (info.has_gart && reserved_bytes != 0) {
    SegmentDescriptor w;
    w.base_address = info.aperture_segment.base + info.aperture_segment.size - reserved_bytes;
    w.size = w.commit_limit = reserved_bytes;
    w.flags.value = SegmentFlags::kAperture;
    d.segments.push_back(w);
    d.dma_buffer_segment_id = static_cast<SegmentId>(d.segments.size());
  }
  if (info.bus_addr_bits != 0 && info.bus_addr_bits < 64)
    d.caps.highest_acceptable_address = (std::uint64_t{1} << info.bus_addr_bits) - 1;
  // SchedulingCaps say what the driver does, not what the device could: PreemptionAware waits
  // for the host's preemption path (the scheduler and TDR work), even though the device
  // reports CAP_FEATURES.preemption.
  d.caps.scheduling_caps.value = VidSchCaps::kMultiEngineAware;
  d.caps.memory_management_caps.value = VidMmCaps::kDedicatedPagingEngine;
  return d;
}

Adapter::Adapter(AdapterDescription d, SystemMemory& s, std::shared_ptr<const SizingPolicy> p)
    : desc_(std::move(d)), system_(s), policy_(std::move(p)), tag_(detail::next_handle_tag()) {}

Adapter::~Adapter() = default;

Result<std::unique_ptr<Adapter>> Adapter::create(AdapterDescription d, vidmm::PagingExecutor& executor,
                                                 SystemMemory& system_memory,
                                                 std::shared_ptr<const SizingPolicy> policy) {
  const auto& caps = d.caps;
  const std::uint32_t vs = caps.scheduling_caps.value;
  if (vs & ~VidSchCaps::kDefined) return Error::invalid("DXGK_DRIVERCAPS.SchedulingCaps {:#x} sets undefined bits", vs);
  if ((vs & VidSchCaps::kPreemptionAware) && !(vs & VidSchCaps::kMultiEngineAware))
    return Error::invalid("DXGK_DRIVERCAPS.SchedulingCaps: PreemptionAware requires MultiEngineAware");
  if ((vs & VidSchCaps::kNoDmaPatching) &&
      (vs & (VidSchCaps::kPreemptionAware | VidSchCaps::kMultiEngineAware)) !=
          (VidSchCaps::kPreemptionAware | VidSchCaps::kMultiEngineAware))
    return Error::invalid(
        "DXGK_DRIVERCAPS.SchedulingCaps: NoDmaPatching requires PreemptionAware and MultiEngineAware");
  if ((vs & VidSchCaps::kCancelCommandAware) && !(vs & VidSchCaps::kMultiEngineAware))
    return Error::invalid("DXGK_DRIVERCAPS.SchedulingCaps: CancelCommandAware requires MultiEngineAware");
  if (caps.memory_management_caps.value & ~VidMmCaps::kDefined)
    return Error::invalid("DXGK_DRIVERCAPS.MemoryManagementCaps {:#x} sets undefined bits",
                          caps.memory_management_caps.value);
  if (caps.node_count == 0 || caps.paging_node >= caps.node_count)
    return Error::invalid("DXGK_DRIVERCAPS.PagingNode {} is not one of the {} nodes", caps.paging_node,
                          caps.node_count);
  if (caps.max_allocation_list_slot_id == 0) return Error::invalid("DXGK_DRIVERCAPS.MaxAllocationListSlotId is 0");
  if (d.segments.empty())
    return Error::unsupported(
        "adapter reports no segment (no memory segment, no aperture segment): nothing to place allocations in");
  if (d.paging_buffer_segment_id != kSystemMemory &&
      (d.paging_buffer_segment_id > d.segments.size() || !d.segments[d.paging_buffer_segment_id - 1].is_aperture()))
    return Error::invalid("DXGK_QUERYSEGMENTOUT.PagingBufferSegmentId {} is not an aperture segment",
                          d.paging_buffer_segment_id);

  if (d.dma_buffer_segment_id != kSystemMemory &&
      (d.dma_buffer_segment_id > d.segments.size() || !d.segments[d.dma_buffer_segment_id - 1].is_aperture()))
    return Error::invalid("DmaBufferSegmentId {} is not an aperture segment", d.dma_buffer_segment_id);

  vidmm::MemoryManagerConfig config;
  config.segments = d.segments;
  if (d.dma_buffer_segment_id != kSystemMemory) config.kernel_segments = SegmentSet::of(d.dma_buffer_segment_id);
  config.page_size = d.page_size;
  if (caps.aperture_segment_commit_limit != 0) config.aperture_commit_limit = caps.aperture_segment_commit_limit;
  SGPU_ASSIGN_OR_RETURN(auto mm, vidmm::MemoryManager::create(std::move(config), executor, system_memory));
  if (!policy) policy = std::make_shared<DefaultSizingPolicy>();
  std::unique_ptr<Adapter> a(new Adapter(std::move(d), system_memory, std::move(policy)));
  a->mm_ = std::move(mm);
  return a;
}

Result<const SegmentDescriptor*> Adapter::segment(SegmentId id) const {
  if (id == 0 || id > desc_.segments.size())
    return Error::invalid("segment {} does not exist (adapter has {} segments)", id, desc_.segments.size());
  return &desc_.segments[id - 1];
}

Result<SegmentId> Adapter::memory_segment() const {
  for (SegmentId id = 1; id <= desc_.segments.size(); ++id)
    if (!desc_.segments[id - 1].is_aperture()) return id;
  return Error::unsupported("adapter has no memory segment (CAP_MEMSEG_SIZE = 0)");
}

Result<SegmentId> Adapter::aperture_segment() const {
  for (SegmentId id = 1; id <= desc_.segments.size(); ++id)
    if (desc_.segments[id - 1].is_aperture()) return id;
  return Error::unsupported("adapter has no aperture segment (no GART or CAP_APSEG_SIZE = 0)");
}

SegmentSet Adapter::aperture_segments() const {
  SegmentSet s;
  for (SegmentId id = 1; id <= desc_.segments.size(); ++id)
    if (desc_.segments[id - 1].is_aperture()) s = s | SegmentSet::of(id);
  return s;
}

SegmentSet Adapter::allocation_segments() const {
  return desc_.dma_buffer_segment_id == kSystemMemory ? all_segments()
                                                      : all_segments().without(SegmentSet::of(desc_.dma_buffer_segment_id));
}

SegmentSet Adapter::all_segments() const {
  SegmentSet s;
  for (SegmentId id = 1; id <= desc_.segments.size(); ++id) s = s | SegmentSet::of(id);
  return s;
}

Result<Device> Adapter::create_device(CreateDeviceFlags flags) {
  if (flags.value & ~CreateDeviceFlags::kDefined)
    return Error::invalid("DXGK_CREATEDEVICEFLAGS {:#x} sets undefined bits {:#x}", flags.value,
                          flags.value & ~CreateDeviceFlags::kDefined);
  if (flags.system_device() && flags.gdi_device())
    return Error::invalid("DXGK_CREATEDEVICEFLAGS: SystemDevice and GdiDevice are exclusive");
  const DxgkDeviceInfo info = policy_->device_info(*this, flags);
  SGPU_RETURN_IF_ERROR(validate_device_info(*this, info));
  const std::uint64_t handle = new_handle();
  devices_.emplace(handle, flags);
  return Device(*this, handle, flags, info);
}

Result<ContextAllocation> Adapter::create_context_allocation(const CreateContextAllocationArgs& a) {
  const auto& f = a.context_allocation_flags;
  if (f.value & ~CreateContextAllocationFlags::kDefined)
    return Error::invalid("DXGKARGCB_CREATECONTEXTALLOCATION.ContextAllocationFlags {:#x} sets undefined bits {:#x}",
                          f.value, f.value & ~CreateContextAllocationFlags::kDefined);
  if (a.physical_adapter_index != 0)
    return Error::invalid("DXGKARGCB_CREATECONTEXTALLOCATION.PhysicalAdapterIndex {} (one adapter: must be 0)",
                          a.physical_adapter_index);
  if (a.device == 0)
    return Error::invalid(
        "DXGKARGCB_CREATECONTEXTALLOCATION.hDevice is null (a system device): context allocations are only "
        "for non-system devices");
  const auto dev = devices_.find(a.device);
  if (dev == devices_.end())
    return Error::invalid(
        "DXGKARGCB_CREATECONTEXTALLOCATION.hDevice {:#x} is not a live device of this adapter (another adapter's, "
        "or destroyed)",
        a.device);
  if (dev->second.system_device())
    return Error::invalid("DXGKARGCB_CREATECONTEXTALLOCATION.hDevice {:#x} is a system device", a.device);
  vidmm::AllocationOwner owner;
  owner.device = a.device;
  if (f.shared_across_contexts()) {
    if (a.context != 0)
      return Error::invalid(
          "DXGKARGCB_CREATECONTEXTALLOCATION.hContext {:#x} must be null when "
          "SharedAcrossContexts = 1 (a device context allocation)",
          a.context);
    owner.kind = vidmm::AllocationKind::DeviceContext;
  } else {
    if (a.context == 0)
      return Error::invalid(
          "DXGKARGCB_CREATECONTEXTALLOCATION.hContext is null with SharedAcrossContexts = 0 (a GPU context "
          "allocation needs its context; a system context has none)");
    const auto ctx = contexts_.find(a.context);
    if (ctx == contexts_.end())
      return Error::invalid(
          "DXGKARGCB_CREATECONTEXTALLOCATION.hContext {:#x} is not a live context of this adapter (another "
          "adapter's, or destroyed)",
          a.context);
    if (ctx->second.device != a.device)
      return Error::invalid(
          "DXGKARGCB_CREATECONTEXTALLOCATION.hContext {:#x} belongs to device {:#x}, not hDevice {:#x}", a.context,
          ctx->second.device, a.device);
    if (ctx->second.flags.system_context())
      return Error::invalid("DXGKARGCB_CREATECONTEXTALLOCATION.hContext {:#x} is a system context", a.context);
    owner.kind = vidmm::AllocationKind::GpuContext;
    owner.context = a.context;
  }
  AllocationInfo info;
  info.size = a.size;
  info.alignment = a.alignment;
  info.supported_read_segments = a.supported_segment_set;
  info.supported_write_segments = a.supported_segment_set;
  info.eviction_segments = a.eviction_segment_set;
  info.preferred_segment = a.preferred_segment;
  info.hinted_bank = a.hinted_bank;
  info.flags = a.flags;
  info.driver_handle = a.driver_allocation;
  auto h = mm_->create_allocation(info, owner);
  if (!h) {
    Error e = std::move(h).error();
    e.message = "DXGKARGCB_CREATECONTEXTALLOCATION: " + e.message;
    return e;
  }
  return ContextAllocation(*mm_, *h);
}

}  // namespace sgpu::kmd
