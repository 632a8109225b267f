// The property Render must keep for ANY input, checked independently of Render's own code: a
// rejected command buffer gets a typed error; an accepted one becomes a DMA buffer of known,
// unprivileged packets whose every GPU address lies, with everything the packet touches from it,
// inside an allocation the list allows for that access, with one patch entry per address field.
//
// Used by the libFuzzer target (fuzz_render.cpp, `make fuzz`) and by a Catch2 test that runs the
// same oracle over deterministic random mutations in every `make test`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace sgpu::fuzz {

/// Builds a command buffer, patch list and allocation list from `data` (a random stream: a valid
/// CommandList first, then mutations of its dwords and patch entries), runs kmd::render, and
/// checks the property. Returns "" or what broke it; `accepted` (optional) tells whether Render
/// accepted the input, so a test can prove it explores both sides.
std::string check_render(const std::uint8_t* data, std::size_t size, bool* accepted = nullptr);

}  // namespace sgpu::fuzz
