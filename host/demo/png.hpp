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

/// Reads back a PNG written by write_png (for tests): A8R8G8B8 rows of width * 4 bytes.
Result<std::vector<std::uint8_t>> read_png(const std::string& path, std::uint32_t& width, std::uint32_t& height);

}  // namespace sgpu::demo
