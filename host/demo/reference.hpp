// The demo frames as the C++ reference model computes them: the check `sgpu demo` and its test
// compare the presented frame against.
//
// The scene's command lists go through the same kmd::render (every allocation pre-patched at its
// address in the model's memory), kmd::patch and kmd::present as on the device, and the model
// executes the DMA buffers (no GART, no memory manager: placement cannot change the bytes).
#pragma once

#include <cstdint>
#include <vector>

#include "scene.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport/registry.hpp"

namespace sgpu::demo {

/// The primary surface after the scene's two lists for `frame` (record_sprites) and the Present
/// blt: frame_bytes() bytes. Runs on the "model" transport of `transports` (the program registers
/// it: tb/backends).
Result<std::vector<std::uint8_t>> reference_frame(const SceneGeometry& g, const TransportRegistry& transports,
                                                  std::uint32_t frame = 0);
/// Frames 0 .. count - 1 the same way, on one model device (the demo's frame sequence).
Result<std::vector<std::vector<std::uint8_t>>> reference_frames(const SceneGeometry& g,
                                                                const TransportRegistry& transports,
                                                                std::uint32_t count);

}  // namespace sgpu::demo
