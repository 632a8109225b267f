#include "scene.hpp"

#include <algorithm>

namespace sgpu::demo {
namespace {

std::uint32_t lerp(std::uint32_t a, std::uint32_t b, std::uint32_t i, std::uint32_t n) {
  return a + ((b - a) * i + n / 2) / n;  // a <= b
}

// Colour of sprite pixel (x, y): a lit ball on a dark tile (integer maths: same bytes anywhere).
std::uint32_t sprite_pixel(std::uint32_t x, std::uint32_t y, std::uint32_t n) {
  const std::int32_t c = static_cast<std::int32_t>(n) / 2;
  const std::int32_t dx = static_cast<std::int32_t>(x) - c, dy = static_cast<std::int32_t>(y) - c;
  const std::int32_t d2 = dx * dx + dy * dy, r = c - 2;
  if (d2 > r * r) return argb(0x18, 0x14, 0x30);
  // Highlight towards the upper left.
  const std::int32_t hx = dx + c / 3, hy = dy + c / 3;
  const std::int32_t h = 255 - std::min<std::int32_t>(255, (hx * hx + hy * hy) * 255 / (r * r));
  return argb(0xff, static_cast<std::uint32_t>(0x60 + h * 0x9f / 255), static_cast<std::uint32_t>(0x20 + h * 0xdf / 255));
}

}  // namespace

Status record_background(const SceneGeometry& g, const SceneAllocations& a, umd::CommandList& cl) {
  // Vertical gradient in bands of 4 rows: deep blue at the top to violet at the bottom.
  constexpr std::uint32_t kBand = 4;
  const std::uint32_t bands = g.height / kBand;
  for (std::uint32_t i = 0; i < bands; ++i) {
    const std::uint32_t colour = argb(lerp(0x10, 0x70, i, bands), lerp(0x18, 0x20, i, bands), lerp(0x50, 0x90, i, bands));
    SGPU_RETURN_IF_ERROR(cl.fill_rect(a.frame, i * kBand * g.pitch(), g.pitch(), g.pitch(), kBand, colour));
  }
  // A checkerboard panel of 8 x 8 cells in the upper right.
  constexpr std::uint32_t kCell = 8, kCols = 12, kRows = 6;
  const std::uint32_t px = g.width - kCols * kCell - 16, py = 16;
  for (std::uint32_t r = 0; r < kRows; ++r)
    for (std::uint32_t c = 0; c < kCols; ++c) {
      const std::uint32_t colour = (r + c) % 2 ? argb(0xf0, 0xf0, 0xe0) : argb(0x30, 0x90, 0x70);
      const std::uint32_t off = (py + r * kCell) * g.pitch() + (px + c * kCell) * 4;
      SGPU_RETURN_IF_ERROR(cl.fill_rect(a.frame, off, g.pitch(), kCell * 4, kCell, colour));
    }
  // A second panel, blitted from the first.
  const std::uint32_t rows = kRows * kCell, first = py * g.pitch() + px * 4;
  SGPU_RETURN_IF_ERROR(cl.blit(a.frame, first, g.pitch(), a.frame, first + (rows + 8) * g.pitch(), g.pitch(),
                               kCols * kCell * 4, rows));
  return ok_status();
}

namespace {

// A digit as seven 1-pixel segments in a 5 x 9 cell at byte offset `at`: a b c d e f g.
Status draw_digit(const SceneGeometry& g, AllocationHandle frame, std::uint32_t at, unsigned digit, std::uint32_t colour,
                  umd::CommandList& cl) {
  struct Segment {
    std::uint32_t x, y, w, h;
  };
  static constexpr Segment kSegments[7] = {{0, 0, 5, 1}, {4, 0, 1, 5}, {4, 4, 1, 5}, {0, 8, 5, 1},
                                           {0, 4, 1, 5}, {0, 0, 1, 5}, {0, 4, 5, 1}};
  static constexpr std::uint8_t kDigits[10] = {0x3f, 0x06, 0x5b, 0x4f, 0x66, 0x6d, 0x7d, 0x07, 0x7f, 0x6f};
  for (unsigned s = 0; s < 7; ++s) {
    if (!(kDigits[digit % 10] >> s & 1)) continue;
    const Segment& seg = kSegments[s];
    SGPU_RETURN_IF_ERROR(cl.fill_rect(frame, at + seg.y * g.pitch() + seg.x * 4, g.pitch(), seg.w * 4, seg.h, colour));
  }
  return ok_status();
}

}  // namespace

Status record_sprites(const SceneGeometry& g, const SceneAllocations& a, umd::CommandList& cl, std::uint32_t frame) {
  // Build the sprite row by row with data writes.
  std::vector<std::uint32_t> row(g.sprite);
  for (std::uint32_t y = 0; y < g.sprite; ++y) {
    for (std::uint32_t x = 0; x < g.sprite; ++x) row[x] = sprite_pixel(x, y, g.sprite);
    SGPU_RETURN_IF_ERROR(cl.write_data(a.sprite, y * g.sprite * 4, row.data(), row.size()));
  }
  // Blit it along a wave (positions precomputed in integers).
  constexpr std::uint32_t kCopies = 6;
  static constexpr std::int32_t kWave[kCopies] = {0, 28, 40, 28, 0, -28};
  for (std::uint32_t i = 0; i < kCopies; ++i) {
    const std::uint32_t x = 12 + i * (g.sprite + 4);
    const std::uint32_t y = static_cast<std::uint32_t>(static_cast<std::int32_t>(g.height / 2) + kWave[(i + frame) % kCopies]);
    SGPU_RETURN_IF_ERROR(cl.blit(a.sprite, 0, g.sprite * 4, a.frame, y * g.pitch() + x * 4, g.pitch(), g.sprite * 4,
                                 g.sprite));
  }
  // Status bar, the last 12 rows: a linear FILL of its first row, then linear COPYs doubling the
  // filled rows (whole rows are contiguous), and a progress strip on it.
  const std::uint32_t bar = g.height - 12, bar_at = bar * g.pitch();
  SGPU_RETURN_IF_ERROR(cl.fill(a.frame, bar_at, g.pitch(), argb(0x20, 0x20, 0x24)));
  for (std::uint32_t done = 1; done < 12; done *= 2) {
    const std::uint32_t n = std::min(done, 12 - done);
    SGPU_RETURN_IF_ERROR(cl.copy(a.frame, bar_at, a.frame, bar_at + done * g.pitch(), n * g.pitch()));
  }
  // The progress strip, and the frame number (frame + 1, two digits) at its right.
  SGPU_RETURN_IF_ERROR(cl.fill_rect(a.frame, (bar + 4) * g.pitch() + 8 * 4, g.pitch(), (g.width - 40) * 4, 4,
                                    argb(0x40, 0xd0, 0x60)));
  const std::uint32_t number = (frame + 1) % 100, digits_at = (bar + 1) * g.pitch() + (g.width - 24) * 4;
  SGPU_RETURN_IF_ERROR(draw_digit(g, a.frame, digits_at, number / 10, argb(0xf0, 0xf0, 0xe0), cl));
  SGPU_RETURN_IF_ERROR(draw_digit(g, a.frame, digits_at + 8 * 4, number % 10, argb(0xf0, 0xf0, 0xe0), cl));
  // Semaphore: signal with a data write, wait for it (satisfied at once), then the user fence.
  const std::uint32_t go = 1;
  SGPU_RETURN_IF_ERROR(cl.write_data(a.status, kSemaphoreOffset, &go, 1));
  SGPU_RETURN_IF_ERROR(cl.wait(a.status, kSemaphoreOffset, abi::WaitMemFunc::Eq, 1));
  SGPU_RETURN_IF_ERROR(cl.fence(a.status, kUserFenceOffset, kUserFenceValue));
  return ok_status();
}

}  // namespace sgpu::demo
