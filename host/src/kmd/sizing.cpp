#include "sgpu/kmd/sizing.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/render.hpp"

namespace sgpu::kmd {

namespace {

constexpr std::uint32_t packet_bytes(std::string_view name) {
  for (const auto& p : abi::kPackets)
    if (p.name == name) return p.max_dwords * 4u;
  return 0;  // not in this version of the packet set
}

std::uint32_t round_up(std::uint64_t v, std::uint64_t a) { return static_cast<std::uint32_t>((v + a - 1) / a * a); }

// Checks shared by DXGK_DEVICEINFO and DXGK_CONTEXTINFO. `what` names the structure.
Status validate_common(const Adapter& adapter, const char* what, std::uint32_t dma_size, SegmentSet dma_set,
                       std::uint32_t alloc_list, std::uint32_t patch_list) {
  const CommandSizes cs = command_sizes();
  if (dma_set.bits() & ~adapter.all_segments().bits())
    return Error::invalid("{}.DmaBufferSegmentSet {:#x} names segments that do not exist (adapter segments {:#x})",
                          what, dma_set.bits(), adapter.all_segments().bits());
  const SegmentSet memory = dma_set.without(adapter.aperture_segments());
  if (!memory.empty())
    return Error::invalid(
        "{}.DmaBufferSegmentSet {:#x} names segment {}, a memory segment: DMA buffers may only "
        "be placed in aperture segments (or 0 = contiguous system memory)",
        what, dma_set.bits(), memory.first());
  if (dma_size < cs.min_dma_buffer_bytes())
    return Error::invalid(
        "{}.DmaBufferSize {} is smaller than the largest non-splittable packet ({} bytes) plus "
        "a Present of one RECT ({} bytes) plus the timestamp bracket of a traced pass ({} bytes)",
        what, dma_size, cs.largest_packet_bytes, cs.present_rect_bytes, cs.timestamp_bracket_bytes);
  if (dma_size % 4 != 0) return Error::invalid("{}.DmaBufferSize {} is not a multiple of 4", what, dma_size);
  if (alloc_list < cs.present_allocations)
    return Error::invalid("{}.AllocationListSize {} cannot hold a Present ({} entries)", what, alloc_list,
                          cs.present_allocations);
  if (patch_list < cs.present_patch_locations)
    return Error::invalid("{}.PatchLocationListSize {} cannot hold a Present ({} entries)", what, patch_list,
                          cs.present_patch_locations);
  return ok_status();
}

}  // namespace

CommandSizes command_sizes() {
  std::uint32_t largest = 0;
  for (const auto& p : abi::kPackets) largest = std::max(largest, p.max_dwords * 4u);
  // A Present of one RECT is one rectangle blit or colour fill, then a fence.
  const std::uint32_t rect = std::max(packet_bytes("BLIT_RECT"), packet_bytes("FILL_RECT"));
  return CommandSizes{largest, rect + packet_bytes("FENCE"), 3, 2, timestamp_reserve_bytes()};
}

DxgkDeviceInfo DefaultSizingPolicy::device_info(const Adapter& adapter, CreateDeviceFlags flags) const {
  const DxgkContextInfo c = DefaultSizingPolicy::context_info(adapter, flags, CreateContextFlags{}, 0);
  DxgkDeviceInfo d;
  d.dma_buffer_size = c.dma_buffer_size;
  d.dma_buffer_segment_set = c.dma_buffer_segment_set;
  d.dma_buffer_private_data_size = c.dma_buffer_private_data_size;
  if (flags.system_device()) {
    // The system device's DMA buffers are the paging buffers (sched::Runtime): sized and placed
    // as the adapter describes them (DXGK_QUERYSEGMENTOUT's PagingBuffer* fields), never below
    // what one DMA buffer must hold.
    const AdapterDescription& desc = adapter.description();
    d.dma_buffer_size = round_up(std::max(desc.paging_buffer_size, command_sizes().min_dma_buffer_bytes()),
                                 adapter.page_size());
    d.dma_buffer_segment_set =
        desc.paging_buffer_segment_id == kSystemMemory ? SegmentSet{} : SegmentSet::of(desc.paging_buffer_segment_id);
    d.dma_buffer_private_data_size = desc.paging_buffer_private_data_size;
  }
  d.allocation_list_size = flags.gdi_device() ? kGdiContextAllocationListSize : kAllocationListSize;
  d.patch_location_list_size = flags.gdi_device() ? kGdiContextAllocationListSize : kPatchLocationListSize;
  return d;
}

std::uint32_t DefaultSizingPolicy::dma_buffer_bytes(std::uint64_t page_size) {
  return round_up(std::max<std::uint32_t>(kDmaBufferBytes, command_sizes().min_dma_buffer_bytes()), page_size);
}

DxgkContextInfo DefaultSizingPolicy::context_info(const Adapter& adapter, CreateDeviceFlags, CreateContextFlags flags,
                                                  std::uint32_t) const {
  DxgkContextInfo c;
  c.dma_buffer_size = dma_buffer_bytes(adapter.page_size());
  // DMA buffers in the kernel's DMA-buffer segment (the window the scheduler maps them into),
  // else the aperture when there is one (the GPU reads them through the GART); otherwise
  // contiguous page-locked system memory.
  if (adapter.dma_buffer_segment() != kSystemMemory)
    c.dma_buffer_segment_set = SegmentSet::of(adapter.dma_buffer_segment());
  else if (auto ap = adapter.aperture_segment())
    c.dma_buffer_segment_set = SegmentSet::of(*ap);
  c.dma_buffer_private_data_size = sizeof(RenderPrivateData);
  c.allocation_list_size = flags.gdi_context() ? kGdiContextAllocationListSize : kAllocationListSize;
  c.patch_location_list_size = flags.gdi_context() ? kGdiContextAllocationListSize : kPatchLocationListSize;
  c.paging_companion_node_id = adapter.caps().paging_node;
  return c;
}

Status validate_device_info(const Adapter& adapter, const DxgkDeviceInfo& info) {
  if (info.flags.value & ~DeviceInfoFlags::kDefined)
    return Error::invalid("DXGK_DEVICEINFO.Flags {:#x} sets reserved bits {:#x}", info.flags.value,
                          info.flags.value & ~DeviceInfoFlags::kDefined);
  return validate_common(adapter, "DXGK_DEVICEINFO", info.dma_buffer_size, info.dma_buffer_segment_set,
                         info.allocation_list_size, info.patch_location_list_size);
}

Status validate_context_info(const Adapter& adapter, const DxgkContextInfo& info, CreateContextFlags flags) {
  if (info.reserved != 0) return Error::invalid("DXGK_CONTEXTINFO.Reserved is {:#x}, must be 0", info.reserved);
  if (info.caps.value != 0)
    return Error::invalid(
        "DXGK_CONTEXTINFO.Caps {:#x}: NoPatchingRequired, DriverManagesResidency and UseIoMmu "
        "are WDDM 2 features; a physical-addressing context must leave Caps 0",
        info.caps.value);
  if (info.paging_companion_node_id >= adapter.caps().node_count)
    return Error::invalid("DXGK_CONTEXTINFO.PagingCompanionNodeId {} is not a node (adapter has {})",
                          info.paging_companion_node_id, adapter.caps().node_count);
  if (flags.gdi_context() && info.allocation_list_size != kGdiContextAllocationListSize)
    return Error::invalid("DXGK_CONTEXTINFO.AllocationListSize {} of a GDI context must be exactly {}",
                          info.allocation_list_size, kGdiContextAllocationListSize);
  return validate_common(adapter, "DXGK_CONTEXTINFO", info.dma_buffer_size, info.dma_buffer_segment_set,
                         info.allocation_list_size, info.patch_location_list_size);
}

}  // namespace sgpu::kmd
