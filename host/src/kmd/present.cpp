// DxgkDdiPresent: a blt or colour fill of the destination as one BLIT_RECT or FILL_RECT per
// sub-rectangle, pre-patched and listed like Render's output, then the submission fence.
#include "sgpu/kmd/present.hpp"

#include <cstring>
#include <string>

#include <fmt/format.h>

#include "kmd/dma_pass.hpp"
#include "sgpu/overlap.hpp"
#include "sgpu/packet_writer.hpp"

namespace sgpu::kmd {

using namespace detail;

namespace {

Status check_surface(const char* which, const SurfaceDesc& s, const DxgkAllocationListEntry& al) {
  if (s.bytes_per_pixel == 0) return Error::invalid("present: {} surface has 0 bytes per pixel", which);
  const std::uint64_t row = std::uint64_t{s.width} * s.bytes_per_pixel;
  if (row > s.pitch)
    return Error::invalid("present: {} surface rows of {} pixels x {} bytes = {} bytes exceed the pitch {}", which,
                          s.width, s.bytes_per_pixel, row, s.pitch);
  const std::uint64_t extent = rect_extent(static_cast<std::uint32_t>(row), s.height, s.pitch);  // row <= pitch
  if (extent > al.size)
    return Error::invalid("present: {} surface {}x{} (pitch {}) needs {} bytes, its allocation has {}", which, s.width,
                          s.height, s.pitch, extent, al.size);
  return ok_status();
}

std::string to_string(const Rect& r) { return fmt::format("[{}, {}, {}, {})", r.left, r.top, r.right, r.bottom); }

/// `r` is well formed and lies inside [0, width) x [0, height).
Status check_rect(const char* what, const Rect& r, std::uint32_t width, std::uint32_t height) {
  if (r.left < 0 || r.top < 0 || r.right < r.left || r.bottom < r.top || static_cast<std::uint32_t>(r.right) > width ||
      static_cast<std::uint32_t>(r.bottom) > height)
    return Error::invalid("present: {} {} (left, top, right, bottom) is not inside the {}x{} surface", what,
                          to_string(r), width, height);
  return ok_status();
}

}  // namespace

Result<RenderOutput> present(const PresentArgs& a) {
  SGPU_RETURN_IF_ERROR(check_dma("present", a.dma_buffer, a.dma_size, a.private_data, a.private_data_size));
  if (a.patch_out == nullptr && a.patch_out_size != 0)
    return Error::invalid("present: output patch list is null but has {} entries", a.patch_out_size);
  // DXGK_PRESENT_SOURCE_INDEX = 1, DXGK_PRESENT_DESTINATION_INDEX = 2, element 0 the null element.
  constexpr std::uint32_t kSrc = 1, kDst = 2;
  if (a.allocation_list == nullptr || a.allocation_list_size != 3)
    return Error::invalid(
        "present: the allocation list has {} elements; Present takes 3 (null, source, "
        "destination)",
        a.allocation_list == nullptr ? 0 : a.allocation_list_size);
  const auto* list = a.allocation_list;
  if (list[0].allocation)
    return Error::invalid("present: allocation-list element 0 is {:#x}; it must be the null element",
                          list[0].allocation.value);
  const bool blt = a.kind == PresentKind::Blt;
  if (!list[kDst].allocation) return Error::invalid("present: the destination (allocation-list element 2) is null");
  if (blt && !list[kSrc].allocation)
    return Error::invalid("present: blt without a source (allocation-list element 1 is null)");

  SGPU_RETURN_IF_ERROR(check_surface("destination", a.dst, list[kDst]));
  SGPU_RETURN_IF_ERROR(check_rect("dst_rect", a.dst_rect, a.dst.width, a.dst.height));
  if (blt) {
    SGPU_RETURN_IF_ERROR(check_surface("source", a.src, list[kSrc]));
    SGPU_RETURN_IF_ERROR(check_rect("src_rect", a.src_rect, a.src.width, a.src.height));
    if (a.src.bytes_per_pixel != a.dst.bytes_per_pixel)
      return Error::invalid("present: source has {} bytes per pixel, destination {}: no format conversion",
                            a.src.bytes_per_pixel, a.dst.bytes_per_pixel);
    if (a.src_rect.width() != a.dst_rect.width() || a.src_rect.height() != a.dst_rect.height())
      return Error::invalid("present: src_rect {} is {}x{} but dst_rect {} is {}x{}: no stretching",
                            to_string(a.src_rect), a.src_rect.width(), a.src_rect.height(), to_string(a.dst_rect),
                            a.dst_rect.width(), a.dst_rect.height());
  } else if (a.dst.bytes_per_pixel != 4) {
    // Color is A8R8G8B8; FILL_RECT repeats a 32-bit pattern, which is that colour only at 4 bytes a pixel.
    return Error::unsupported("present: colour fill of a {}-byte-per-pixel surface (only 4)", a.dst.bytes_per_pixel);
  }

  if (a.sub_rect_count != 0 && a.sub_rects == nullptr)
    return Error::invalid("present: {} sub-rectangles but the list is null", a.sub_rect_count);
  const std::uint32_t count = a.sub_rect_count != 0 ? a.sub_rect_count : 1;
  const auto rect = [&](std::uint32_t i) { return a.sub_rect_count != 0 ? a.sub_rects[i] : a.dst_rect; };
  if (a.multipass_offset >= count)
    return Error::invalid("present: MultipassOffset {} is past the {} sub-rectangles", a.multipass_offset, count);
  for (std::uint32_t i = 0; i < count; ++i) {
    const Rect r = rect(i);
    if (r.left < a.dst_rect.left || r.top < a.dst_rect.top || r.right > a.dst_rect.right ||
        r.bottom > a.dst_rect.bottom || r.right < r.left || r.bottom < r.top)
      return Error::invalid("present: sub-rectangle {} {} is not inside dst_rect {}", i, to_string(r),
                            to_string(a.dst_rect));
  }

  const abi::PacketInfo& p = packet_info(blt ? abi::Opcode::BlitRect : abi::Opcode::FillRect);
  const std::uint32_t bytes = p.min_dwords * 4;
  const std::uint32_t fence_bytes = submission_fence_bytes();
  const std::uint64_t bpp = a.dst.bytes_per_pixel;
  RenderOutput out;
  SGPU_ASSIGN_OR_RETURN(const std::uint32_t dma_capacity,
                        begin_pass("present", a.dma_buffer, a.dma_size, a.reserve_timestamps, out));
  bool final_pass = true;

  for (std::uint32_t i = a.multipass_offset; i < count; ++i) {
    const Rect r = rect(i);
    if (r.width() == 0 || r.height() == 0) continue;  // nothing to draw: no packet
    if (!room_for(out, p, bytes, dma_capacity, a.patch_out_size)) {
      if (out.packets == 0)
        return Error::invalid(
            "present: sub-rectangle {}: a {}-byte {} with {} patch entries does not fit an "
            "empty DMA buffer of {} bytes (plus the {}-byte submission fence) and a patch "
            "list of {} entries",
            i, bytes, p.name, p.address_count, a.dma_size, fence_bytes, a.patch_out_size);
      out.multipass_offset = i;
      final_pass = false;
      break;
    }
    // Byte offsets of the first pixel in each allocation; the source is the same rectangle moved
    // by src_rect's offset from dst_rect (no stretching).
    const std::uint64_t width_bytes = r.width() * bpp;
    const std::uint64_t dst_off = std::uint64_t(r.top) * a.dst.pitch + std::uint64_t(r.left) * bpp;
    const std::int64_t sx = std::int64_t{a.src_rect.left} + (r.left - a.dst_rect.left);
    const std::int64_t sy = std::int64_t{a.src_rect.top} + (r.top - a.dst_rect.top);
    const std::uint64_t src_off = blt ? std::uint64_t(sy) * a.src.pitch + std::uint64_t(sx) * bpp : 0;
    if (dst_off > 0xffffffffu || src_off > 0xffffffffu || width_bytes > 0xffffffffu)
      return Error::invalid(
          "present: sub-rectangle {} {}: offsets {} / {} or row of {} bytes do not fit the "
          "32-bit packet and patch-list fields",
          i, to_string(r), src_off, dst_off, width_bytes);
    const auto width32 = static_cast<std::uint32_t>(width_bytes);
    const std::uint64_t dst_extent = rect_extent(width32, r.height(), a.dst.pitch);
    const std::uint64_t src_extent = rect_extent(width32, r.height(), a.src.pitch);
    // The overlap rule on offsets: the pre-patched addresses may still be 0 (not resident).
    if (blt && list[kSrc].allocation == list[kDst].allocation &&
        blit_overlaps(src_off, dst_off, width32, r.height(), a.src.pitch, a.dst.pitch))
      return Error::invalid(
          "present: sub-rectangle {} {}: source and destination extents overlap in one "
          "allocation (the device refuses COPY_OVERLAP)",
          i, to_string(r));
    // Pre-patched address of each side (0 when not resident), checked against 2^64.
    const auto prepatch = [&](std::uint32_t index, std::uint64_t offset,
                              std::uint64_t extent) -> Result<std::uint64_t> {
      const auto& al = list[index];
      if (al.segment == kSystemMemory) return std::uint64_t{0};
      const std::uint64_t address = al.gpu_address + offset;
      if (address < al.gpu_address || address + extent < address)
        return Error::invalid(
            "present: sub-rectangle {}: allocation-list element {} at {:#x} + {} + {} bytes "
            "wraps past 2^64",
            i, index, al.gpu_address, offset, extent);
      return address;
    };
    SGPU_ASSIGN_OR_RETURN(auto dst_addr, prepatch(kDst, dst_off, dst_extent));

    const std::uint32_t pos = out.dma_bytes;
    PacketWriter w(a.dma_buffer, dma_capacity, pos);
    if (blt) {
      SGPU_ASSIGN_OR_RETURN(auto src_addr, prepatch(kSrc, src_off, src_extent));
      SGPU_RETURN_IF_ERROR(w.blit_rect(src_addr, dst_addr, width32, r.height(), a.src.pitch, a.dst.pitch));
    } else {
      SGPU_RETURN_IF_ERROR(w.fill_rect(dst_addr, width32, r.height(), a.dst.pitch, a.color));
    }
    out.dma_bytes = w.offset();
    for (unsigned f = 0; f < p.address_count; ++f) {
      const bool write = p.addresses[f].access == abi::AddressAccess::Write;
      a.patch_out[out.patch_count++] =
          output_entry(p, f, write ? kDst : kSrc, static_cast<std::uint32_t>(write ? dst_off : src_off), pos);
    }
    ++out.packets;
  }

  SGPU_RETURN_IF_ERROR(finish_pass(a.dma_buffer, a.dma_size, a.private_data, final_pass, a.reserve_timestamps, out));
  return out;
}

}  // namespace sgpu::kmd
