// DXGK_DEVICEINFO / DXGK_CONTEXTINFO and their creation flags, the driver's sizing policy that
// fills them, and the checks the OS side applies to what the policy returned.
//
// The policy guarantees what the DDI remarks ask: one DMA buffer always holds the largest
// non-splittable command (the longest packet of spec/abi.toml) plus one Present of a RECT, and
// the lists hold what such a command and a Present reference. Every minimum is computed from
// the generated packet table (abi::kPackets), never restated by hand.
#pragma once

#include <cstdint>
#include <string_view>

#include "sgpu/gen/abi.hpp"
#include "sgpu/kmd/segments.hpp"
#include "sgpu/result.hpp"

namespace sgpu::kmd {

/// DXGK_ALLOCATION_LIST_SIZE_GDICONTEXT: a GDI context's AllocationListSize, exactly.
inline constexpr std::uint32_t kGdiContextAllocationListSize = 256;

/// DXGK_CREATEDEVICEFLAGS (WDDM 1.x).
struct CreateDeviceFlags {
  static constexpr std::uint32_t kSystemDevice = 1u << 0;
  static constexpr std::uint32_t kGdiDevice = 1u << 1;
  static constexpr std::uint32_t kDefined = kSystemDevice | kGdiDevice;
  std::uint32_t value = 0;
  constexpr bool system_device() const { return value & kSystemDevice; }
  constexpr bool gdi_device() const { return value & kGdiDevice; }
};

/// DXGK_CREATECONTEXTFLAGS (WDDM 1.x: VirtualAddressing and later bits are undefined here).
struct CreateContextFlags {
  static constexpr std::uint32_t kSystemContext = 1u << 0;
  static constexpr std::uint32_t kGdiContext = 1u << 1;
  static constexpr std::uint32_t kDefined = kSystemContext | kGdiContext;
  std::uint32_t value = 0;
  constexpr bool system_context() const { return value & kSystemContext; }
  constexpr bool gdi_context() const { return value & kGdiContext; }
};

/// DXGK_DEVICEINFOFLAGS: GuaranteedDmaBufferContract (obsolete, the only model) + Reserved.
struct DeviceInfoFlags {
  static constexpr std::uint32_t kGuaranteedDmaBufferContract = 1u << 0;
  static constexpr std::uint32_t kDefined = kGuaranteedDmaBufferContract;
  std::uint32_t value = 0;
};

/// DXGK_CONTEXTINFO_CAPS: NoPatchingRequired, DriverManagesResidency, UseIoMmu (WDDM 2 features
/// a physical-addressing driver must leave at 0).
struct ContextInfoCaps {
  static constexpr std::uint32_t kNoPatchingRequired = 1u << 0;
  static constexpr std::uint32_t kDriverManagesResidency = 1u << 1;
  static constexpr std::uint32_t kUseIoMmu = 1u << 2;
  std::uint32_t value = 0;
};

/// DXGK_DEVICEINFO.
struct DxgkDeviceInfo {
  std::uint32_t dma_buffer_size = 0;
  SegmentSet dma_buffer_segment_set;  ///< aperture segments only; empty = contiguous system memory
  std::uint32_t dma_buffer_private_data_size = 0;
  std::uint32_t allocation_list_size = 0;
  std::uint32_t patch_location_list_size = 0;
  DeviceInfoFlags flags;
};

/// DXGK_CONTEXTINFO.
struct DxgkContextInfo {
  std::uint32_t dma_buffer_size = 0;
  SegmentSet dma_buffer_segment_set;
  std::uint32_t dma_buffer_private_data_size = 0;
  std::uint32_t allocation_list_size = 0;
  std::uint32_t patch_location_list_size = 0;
  std::uint32_t reserved = 0;                  ///< must be 0
  ContextInfoCaps caps;
  std::uint32_t paging_companion_node_id = 0;  ///< zero-based node of the paging companion
};


/// What the minimums are made of, from the generated packet table.
struct CommandSizes {
  std::uint32_t largest_packet_bytes;     ///< longest packet: a command nothing can split
  std::uint32_t present_rect_bytes;       ///< one Present of a RECT: blit/fill rect + fence
  std::uint32_t present_allocations;      ///< list entries of a Present: NULL, source, destination
  std::uint32_t present_patch_locations;  ///< addresses a Present patches: source and destination
  /// The timestamp bracket a traced pass reserves (kmd::timestamp_reserve_bytes, render.hpp), so
  /// every DMA buffer still holds the longest packet when tracing is turned on.
  std::uint32_t timestamp_bracket_bytes;
  std::uint32_t min_dma_buffer_bytes() const {
    return largest_packet_bytes + present_rect_bytes + timestamp_bracket_bytes;
  }
};
CommandSizes command_sizes();

class Adapter;

/// The driver's sizing decisions (DxgkDdiCreateDevice / DxgkDdiCreateContext outputs).
/// Replaceable, so tests can feed the OS-side checks values that break the rules.
class SizingPolicy {
 public:
  virtual ~SizingPolicy() = default;
  virtual DxgkDeviceInfo device_info(const Adapter& adapter, CreateDeviceFlags flags) const = 0;
  virtual DxgkContextInfo context_info(const Adapter& adapter, CreateDeviceFlags device_flags,
                                       CreateContextFlags flags, std::uint32_t node_ordinal) const = 0;
};

/// 64 KiB DMA buffers (or more if a packet needs it) in the aperture when there is one, 64 / 128
/// list entries (256 / 256 for GDI), private data = RenderPrivateData (render.hpp).
class DefaultSizingPolicy : public SizingPolicy {
 public:
  static constexpr std::uint32_t kDmaBufferBytes = 64 * 1024;  ///< amortises set-up and fetch
  static constexpr std::uint32_t kAllocationListSize = 64;
  static constexpr std::uint32_t kPatchLocationListSize = 128;
  /// The DMA buffer size it gives: kDmaBufferBytes, or more when the longest packet plus a
  /// Present needs it, in whole pages.
  static std::uint32_t dma_buffer_bytes(std::uint64_t page_size);
  DxgkDeviceInfo device_info(const Adapter& adapter, CreateDeviceFlags flags) const override;
  DxgkContextInfo context_info(const Adapter& adapter, CreateDeviceFlags device_flags, CreateContextFlags flags,
                               std::uint32_t node_ordinal) const override;
};

/// The OS-side checks of a driver's DXGK_DEVICEINFO / DXGK_CONTEXTINFO. Errors name the field
/// and value (e.g. the memory segment DmaBufferSegmentSet names).
Status validate_device_info(const Adapter& adapter, const DxgkDeviceInfo& info);
Status validate_context_info(const Adapter& adapter, const DxgkContextInfo& info, CreateContextFlags flags);

}  // namespace sgpu::kmd
