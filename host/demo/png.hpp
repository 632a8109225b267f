// Writes a frame as a PNG file with libpng.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sgpu/result.hpp"

namespace sgpu::demo {

/// Writes `height` rows of `width` A8R8G8B8 pixels (bytes B, G, R, A; rows `pitch` bytes apart)
/// to `path` as an 8-bit RGBA PNG. InvalidArgument for bad geometry; TransportError is not used:
/// a file or libpng error is reported as InvalidArgument naming the path and libpng's message.
Status write_png(const std::string& path, const std::uint8_t* pixels, std::uint32_t width, std::uint32_t height,
                 std::uint32_t pitch);

/// Writes `frames` (each `height` rows of `width` A8R8G8B8 pixels, rows `pitch` bytes apart) side
/// by side as one PNG, `gap` black pixels between them: the demo's frame strip (libpng here has no
/// APNG support, so an animation is a strip). InvalidArgument for no frames, a frame shorter than
/// height * pitch, or what write_png refuses.
Status write_png_strip(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames,
                       std::uint32_t width, std::uint32_t height, std::uint32_t pitch, std::uint32_t gap = 4);

/// Reads back a PNG written by write_png (for tests): A8R8G8B8 rows of width * 4 bytes.
Result<std::vector<std::uint8_t>> read_png(const std::string& path, std::uint32_t& width, std::uint32_t& height);

}  // namespace sgpu::demo
