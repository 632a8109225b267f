// DxgkDdiPresent: a present request (blt or colour fill) becomes a DMA buffer and a
// patch-location list of the same kind Render produces (kmd/render.hpp): pre-patched packets,
// every reference listed, the submission-fence packet at the end of the final pass.
#pragma once

#include <cstdint>

#include "sgpu/kmd/render.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::kmd {

/// DXGKARG_PRESENT, the WDDM 1.x subset the front end can do: a blt from the source (allocation
/// list element 1) to the destination (element 2), a colour fill of the destination (no source),
/// or a flip (no destination: a blt to the primary surface given as element 2 by the caller).
/// Element 0 is always the null element. Rectangles are in pixels of `bytes_per_pixel`.
struct Rect {
  std::int32_t left = 0, top = 0, right = 0, bottom = 0;
  std::uint32_t width() const { return static_cast<std::uint32_t>(right - left); }
  std::uint32_t height() const { return static_cast<std::uint32_t>(bottom - top); }
};
enum class PresentKind { Blt, ColorFill };
struct SurfaceDesc {
  std::uint32_t width = 0, height = 0;  ///< pixels
  std::uint32_t pitch = 0;              ///< bytes per row
  std::uint32_t bytes_per_pixel = 4;
};
struct PresentArgs {
  PresentKind kind = PresentKind::Blt;
  void* dma_buffer = nullptr;
  std::uint32_t dma_size = 0;
  void* private_data = nullptr;
  std::uint32_t private_data_size = 0;
  const DxgkAllocationListEntry* allocation_list = nullptr;  ///< exactly 3 elements: null, src, dst
  std::uint32_t allocation_list_size = 0;
  PatchLocation* patch_out = nullptr;
  std::uint32_t patch_out_size = 0;
  std::uint32_t multipass_offset = 0;  ///< index of the next sub-rectangle
  std::uint32_t color = 0;             ///< A8R8G8B8, ColorFill only
  SurfaceDesc src, dst;
  Rect src_rect, dst_rect;           ///< no stretching: equal sizes
  const Rect* sub_rects = nullptr;   ///< in destination coordinates, clipped to dst_rect
  std::uint32_t sub_rect_count = 0;  ///< 0 = the whole dst_rect
  bool reserve_timestamps = false;   ///< tracing: the timestamp bracket, as RenderArgs (render.hpp)
};
/// DxgkDdiPresent: one BLIT_RECT or FILL_RECT per sub-rectangle, patch entries for the source
/// (index 1) and destination (index 2), pre-patched like Render, then the submission-fence
/// packet. Multipass by sub-rectangle. Errors name the rectangle and the bound it breaks.
Result<RenderOutput> present(const PresentArgs& args);

}  // namespace sgpu::kmd
