// The demo frame: what `sgpu demo` draws, recorded as command lists on allocations by handle.
//
// Everything is deterministic and made only of what the front end executes (colour fills, 2-D
// blits, linear copies and fills, data writes, a user fence and a wait), so the same lists give
// the same bytes on the Verilated RTL, on the C++ reference model and on a board. Pixels are
// A8R8G8B8 (bytes B, G, R, A in memory), rows `pitch` bytes apart.
#pragma once

#include <cstdint>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/umd/command_list.hpp"

namespace sgpu::demo {

struct SceneGeometry {
  std::uint32_t width = 320;
  std::uint32_t height = 240;
  std::uint32_t sprite = 48;  ///< the sprite is sprite x sprite pixels
  std::uint32_t pitch() const { return width * 4; }
  std::uint32_t frame_bytes() const { return pitch() * height; }
  std::uint32_t sprite_bytes() const { return sprite * sprite * 4; }
};

/// The allocations the scene draws with (sizes from SceneGeometry).
struct SceneAllocations {
  AllocationHandle frame;   ///< back buffer, frame_bytes()
  AllocationHandle sprite;  ///< sprite_bytes()
  AllocationHandle status;  ///< 4 KiB: the user fence and the semaphore word
};

/// Bytes of the status allocation and where the scene's fence and semaphore live in it.
inline constexpr std::uint32_t kStatusBytes = 4096;
inline constexpr std::uint32_t kSemaphoreOffset = 0;
inline constexpr std::uint32_t kUserFenceOffset = 8;
inline constexpr std::uint64_t kUserFenceValue = 0x5350'4755'0000'0001ull;

/// First list: background gradient bands and a checkerboard panel, copied once further down.
Status record_background(const SceneGeometry& g, const SceneAllocations& a, umd::CommandList& cl);
/// Second list: builds the sprite with data writes, blits it along a wave, draws the status bar,
/// signals the semaphore and waits on it, then writes the user fence. `frame` (0, 1, ...) moves
/// the sprites one step along the wave per frame and is shown as frame + 1 in the status bar.
Status record_sprites(const SceneGeometry& g, const SceneAllocations& a, umd::CommandList& cl, std::uint32_t frame = 0);

/// A8R8G8B8 colour helpers.
constexpr std::uint32_t argb(std::uint32_t r, std::uint32_t g, std::uint32_t b, std::uint32_t a = 0xff) {
  return (a << 24) | ((r & 0xff) << 16) | ((g & 0xff) << 8) | (b & 0xff);
}

}  // namespace sgpu::demo
