// The device's COPY_OVERLAP rule as arithmetic, for the code that decides what to put in a
// buffer: a COPY (or READ_PHYSICAL) whose source and destination byte ranges share a byte, or a
// BLIT_RECT whose source and destination extents do, faults instead of copying. PacketWriter
// encodes such packets as asked (a test may want the fault); the callers that must not produce
// them — CommandList, Present, the device executor — check with these first, each on what it
// can see (offsets inside one allocation, or addresses).
#pragma once

#include <cstdint>

namespace sgpu {

/// Bytes a rectangle touches from its first byte: (height - 1) * pitch + width, 0 when empty.
/// Exact for 32-bit operands: (2^32 - 1)^2 + 2^32 - 1 < 2^64.
constexpr std::uint64_t rect_extent(std::uint32_t width, std::uint32_t height, std::uint32_t pitch) {
  if (width == 0 || height == 0) return 0;
  return std::uint64_t{height - 1} * pitch + width;
}

/// [a, a + a_len) and [b, b + b_len) share a byte (lengths up to 2^64 - 1; empty never overlaps).
constexpr bool ranges_overlap(std::uint64_t a, std::uint64_t a_len, std::uint64_t b, std::uint64_t b_len) {
  if (a_len == 0 || b_len == 0) return false;
  return a < b ? b - a < a_len : a - b < b_len;
}

/// A COPY / READ_PHYSICAL of `bytes` from `src` to `dst` would fault COPY_OVERLAP.
constexpr bool copy_overlaps(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  return ranges_overlap(src, bytes, dst, bytes);
}

/// A BLIT_RECT of `height` rows of `width` bytes from `src` (rows `src_pitch` apart) to `dst`
/// (`dst_pitch` apart) would fault COPY_OVERLAP: the extents overlap, even for interleaved rows.
constexpr bool blit_overlaps(std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                             std::uint32_t src_pitch, std::uint32_t dst_pitch) {
  return ranges_overlap(src, rect_extent(width, height, src_pitch), dst, rect_extent(width, height, dst_pitch));
}

}  // namespace sgpu
