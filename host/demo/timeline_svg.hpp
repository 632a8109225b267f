// A small picture of a timeline trace (SVG): one row per track, slices as bars coloured by
// context, instants as ticks (TDR steps and faults in red), a time axis. For the README and a
// quick look; the JSON (ui.perfetto.dev) is the place to explore.
#pragma once

#include <string>

#include "sgpu/result.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::demo {

/// The SVG document of `timeline`, `width` pixels wide.
std::string timeline_svg(const trace::Timeline& timeline, unsigned width = 1000);
/// Writes timeline_svg() to `path` (InvalidArgument naming the path when it cannot).
Status write_timeline_svg(const std::string& path, const trace::Timeline& timeline, unsigned width = 1000);

}  // namespace sgpu::demo
