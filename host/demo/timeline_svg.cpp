#include "timeline_svg.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "sgpu/file_output.hpp"

namespace sgpu::demo {

namespace {

using trace::Timeline;
using trace::Track;
using trace::TrackKind;

constexpr unsigned kLabelWidth = 330;
constexpr unsigned kRowHeight = 22;
constexpr unsigned kTop = 34;

std::string escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// One colour per context (paging and the device's own rows take theirs from the packet's context).
const char* colour(std::uint64_t context, std::size_t index) {
  static const char* const kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948"};
  if (context == 0) return "#9c9c9c";
  return kPalette[index % (sizeof kPalette / sizeof *kPalette)];
}

std::int64_t arg_int(const trace::Args& args, const char* key) {
  for (const auto& a : args)
    if (a.key == key)
      if (const auto* v = std::get_if<std::int64_t>(&a.value)) return *v;
  return 0;
}

}  // namespace

std::string timeline_svg(const Timeline& tl, unsigned width) {
  // Rows: the device first, then every track the events use, in a reading order.
  struct RowKey {
    int order;
    std::uint64_t context;
    bool operator<(const RowKey& o) const { return std::tie(order, context) < std::tie(o.order, o.context); }
  };
  const auto order = [](TrackKind k) {
    switch (k) {
      case TrackKind::Engine: return 0;
      case TrackKind::ContextQueue: return 1;
      case TrackKind::Paging: return 2;
      case TrackKind::Ring: return 3;
      case TrackKind::HardwareQueue: return 4;
      case TrackKind::Interrupts: return 5;
    }
    return 6;
  };
  std::map<RowKey, Track> rows;
  std::map<std::uint64_t, std::size_t> context_index;
  std::int64_t t0 = 0, t1 = 0;
  bool first = true;
  for (const auto& e : tl.events()) {
    if (e.phase == Timeline::Phase::Counter) continue;
    rows.emplace(RowKey{order(e.track.kind), e.track.context}, e.track);
    if (e.track.kind == TrackKind::ContextQueue) context_index.emplace(e.track.context, context_index.size());
    const std::int64_t b = tl.to_time(e.begin).count(), en = tl.to_time(e.end).count();
    t0 = first ? b : std::min(t0, b);
    t1 = first ? en : std::max(t1, en);
    first = false;
  }
  if (t1 <= t0) t1 = t0 + 1;
  std::map<RowKey, unsigned> row_y;
  unsigned y = kTop;
  for (const auto& [key, track] : rows) {
    row_y[key] = y;
    y += kRowHeight;
  }
  const unsigned height = y + 48;
  const double plot = static_cast<double>(width - kLabelWidth - 10);
  const auto x_of = [&](std::int64_t t) { return kLabelWidth + plot * static_cast<double>(t - t0) / static_cast<double>(t1 - t0); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n"
      "<rect width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"8\" y=\"18\" font-size=\"13\" font-weight=\"bold\">softgpu timeline: {2:.1f} us of "
      "transport time (device rows from the engine's own timestamps)</text>\n",
      width, height, static_cast<double>(t1 - t0) / 1000.0);
  for (const auto& [key, track] : rows) {
    const unsigned ry = row_y[key];
    svg += fmt::format("<rect x=\"0\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\"/>\n", ry, width, kRowHeight,
                       (ry / kRowHeight) % 2 ? "#f4f4f4" : "#ffffff");
    svg += fmt::format("<text x=\"6\" y=\"{}\">{}</text>\n", ry + 15, escape(tl.track_name(track)));
  }
  for (const auto& e : tl.events()) {
    if (e.phase == Timeline::Phase::Counter) continue;
    const unsigned ry = row_y[RowKey{order(e.track.kind), e.track.context}];
    const std::uint64_t ctx = e.track.kind == TrackKind::ContextQueue ? e.track.context
                                                                      : static_cast<std::uint64_t>(arg_int(e.args, "context"));
    const auto ci = context_index.count(ctx) ? context_index[ctx] : 0;
    const bool bad = e.name.find("abort") != std::string::npos || e.name.rfind("TDR", 0) == 0 ||
                     e.name == "DMA_FAULTED" || e.name == "DMA_PREEMPTED";
    const double x = x_of(tl.to_time(e.begin).count());
    const std::string title = escape(e.name);
    if (e.phase == Timeline::Phase::Slice) {
      const double w = std::max(1.0, x_of(tl.to_time(e.end).count()) - x);
      // Queues hold several entries at once: translucent, so the overlap shows as depth.
      const bool queue = e.track.kind == TrackKind::HardwareQueue || e.name == "queued";
      svg += fmt::format(
          "<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" fill-opacity=\"{}\" "
          "stroke=\"{}\" stroke-width=\"0.5\"><title>{}</title></rect>\n",
          x, ry + 3, w, kRowHeight - 6, bad ? "#e15759" : colour(ctx, ci), queue ? 0.3 : 0.9, bad ? "#a00" : "#333",
          title);
    } else {
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\" stroke-width=\"{4}\">"
          "<title>{5}</title></line>\n",
          x, ry + 2, ry + kRowHeight - 2, bad ? "#d00" : "#555", bad ? 2 : 1, title);
    }
  }
  // Time axis: five ticks.
  const unsigned axis = y + 4;
  svg += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#333\"/>\n", kLabelWidth, axis,
                     width - 10, axis);
  for (int i = 0; i <= 4; ++i) {
    const std::int64_t t = t0 + (t1 - t0) * i / 4;
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\">{:.1f} us</text>\n", x_of(t), axis + 16,
                       i == 4 ? "end" : "middle", static_cast<double>(t - t0) / 1000.0);
  }
  svg += fmt::format(
      "<text x=\"8\" y=\"{}\" fill=\"#555\">bars: slices (colour = context, grey = paging, red = aborted); ticks: "
      "interrupts and reports, red = TDR steps. Hover for details.</text>\n",
      axis + 34);
  svg += "</svg>\n";
  return svg;
}

Status write_timeline_svg(const std::string& path, const Timeline& timeline, unsigned width) {
  return write_file(path, timeline_svg(timeline, width), "timeline picture");
}

}  // namespace sgpu::demo
