#include "png.hpp"

#include <png.h>

#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

namespace sgpu::demo {
namespace {

struct FileCloser {
  void operator()(std::FILE* f) const { std::fclose(f); }
};
using File = std::unique_ptr<std::FILE, FileCloser>;

// libpng reports errors through longjmp unless given handlers: turn them into a message.
struct PngError {
  std::string message;
};
[[noreturn]] void on_error(png_structp png, png_const_charp msg) {
  static_cast<PngError*>(png_get_error_ptr(png))->message = msg;
  png_longjmp(png, 1);
}
void on_warning(png_structp, png_const_charp) {}

Error failure(const std::string& path, const std::string& what) { return Error::invalid("{}: {}", path, what); }

}  // namespace

Status write_png(const std::string& path, const std::uint8_t* pixels, std::uint32_t width, std::uint32_t height,
                 std::uint32_t pitch) {
  if (width == 0 || height == 0 || pitch < width * 4)
    return failure(path, fmt::format("bad frame geometry {}x{} with pitch {}", width, height, pitch));
  File file(std::fopen(path.c_str(), "wb"));
  if (!file) return failure(path, "cannot open for writing");
  PngError err;
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, &err, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_write_struct(&png, nullptr);
    return failure(path, "libpng could not start");
  }
  // Rows converted to RGBA before setjmp, so nothing with a destructor lives across it.
  std::vector<std::uint8_t> rgba(std::size_t{width} * 4 * height);
  for (std::uint32_t y = 0; y < height; ++y)
    for (std::uint32_t x = 0; x < width; ++x) {
      const std::uint8_t* p = pixels + std::size_t{y} * pitch + std::size_t{x} * 4;
      std::uint8_t* q = rgba.data() + (std::size_t{y} * width + x) * 4;
      q[0] = p[2];
      q[1] = p[1];
      q[2] = p[0];
      q[3] = p[3];
    }
  std::vector<png_bytep> rows(height);
  for (std::uint32_t y = 0; y < height; ++y) rows[y] = rgba.data() + std::size_t{y} * width * 4;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_write_struct(&png, &info);
    return failure(path, "libpng: " + err.message);
  }
  png_init_io(png, file.get());
  png_set_IHDR(png, info, width, height, 8, PNG_COLOR_TYPE_RGBA, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
               PNG_FILTER_TYPE_DEFAULT);
  png_write_info(png, info);
  png_write_image(png, rows.data());
  png_write_end(png, nullptr);
  png_destroy_write_struct(&png, &info);
  return ok_status();
}

Status write_png_strip(const std::string& path, const std::vector<std::vector<std::uint8_t>>& frames,
                       std::uint32_t width, std::uint32_t height, std::uint32_t pitch, std::uint32_t gap) {
  if (frames.empty()) return failure(path, "no frames for the strip");
  if (pitch < width * 4) return failure(path, fmt::format("bad frame geometry {}x{} with pitch {}", width, height, pitch));
  for (std::size_t i = 0; i < frames.size(); ++i)
    if (frames[i].size() < std::size_t{pitch} * height)
      return failure(path, fmt::format("frame {} has {} bytes, {} rows of {} needed", i, frames[i].size(), height, pitch));
  const std::uint32_t n = static_cast<std::uint32_t>(frames.size());
  const std::uint32_t strip_width = n * width + (n - 1) * gap, strip_pitch = strip_width * 4;
  std::vector<std::uint8_t> strip(std::size_t{strip_pitch} * height, 0);
  for (std::size_t i = 3; i < strip.size(); i += 4) strip[i] = 0xff;  // the gaps: opaque black
  for (std::uint32_t f = 0; f < n; ++f)
    for (std::uint32_t y = 0; y < height; ++y)
      std::memcpy(strip.data() + std::size_t{y} * strip_pitch + std::size_t{f} * (width + gap) * 4,
                  frames[f].data() + std::size_t{y} * pitch, std::size_t{width} * 4);
  return write_png(path, strip.data(), strip_width, height, strip_pitch);
}

Result<std::vector<std::uint8_t>> read_png(const std::string& path, std::uint32_t& width, std::uint32_t& height) {
  File file(std::fopen(path.c_str(), "rb"));
  if (!file) return failure(path, "cannot open for reading");
  PngError err;
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, &err, on_error, on_warning);
  png_infop info = png ? png_create_info_struct(png) : nullptr;
  if (!info) {
    png_destroy_read_struct(&png, nullptr, nullptr);
    return failure(path, "libpng could not start");
  }
  std::vector<std::uint8_t> rgba;
  std::vector<png_bytep> rows;
  if (setjmp(png_jmpbuf(png))) {
    png_destroy_read_struct(&png, &info, nullptr);
    return failure(path, "libpng: " + err.message);
  }
  png_init_io(png, file.get());
  png_read_info(png, info);
  width = png_get_image_width(png, info);
  height = png_get_image_height(png, info);
  if (png_get_color_type(png, info) != PNG_COLOR_TYPE_RGBA || png_get_bit_depth(png, info) != 8) {
    png_destroy_read_struct(&png, &info, nullptr);
    return failure(path, "not an 8-bit RGBA PNG");
  }
  rgba.resize(std::size_t{width} * 4 * height);
  rows.resize(height);
  for (std::uint32_t y = 0; y < height; ++y) rows[y] = rgba.data() + std::size_t{y} * width * 4;
  png_read_image(png, rows.data());
  png_read_end(png, nullptr);
  png_destroy_read_struct(&png, &info, nullptr);
  for (std::size_t i = 0; i < rgba.size(); i += 4) std::swap(rgba[i], rgba[i + 2]);  // RGBA -> BGRA
  return rgba;
}

}  // namespace sgpu::demo
