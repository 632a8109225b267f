#include "sgpu/trace/timeline.hpp"

#include "sgpu/file_output.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace sgpu::trace {

namespace {

using nlohmann::json;

constexpr int kHostPid = 1;
constexpr int kDevicePid = 2;

// Rows top to bottom: what the contexts asked for, then how it reached the device, then the device.
int sort_index(TrackKind k) {
  switch (k) {
    case TrackKind::ContextQueue: return 100;
    case TrackKind::Paging: return 200;
    case TrackKind::Ring: return 300;
    case TrackKind::HardwareQueue: return 400;
    case TrackKind::Interrupts: return 500;
    case TrackKind::Engine: return 0;
  }
  return 900;
}

json args_json(const Args& args) {
  json a = json::object();
  for (const auto& arg : args) std::visit([&](const auto& v) { a[arg.key] = v; }, arg.value);
  return a;
}

double to_us(std::chrono::nanoseconds t) { return static_cast<double>(t.count()) / 1000.0; }

struct TrackLess {
  bool operator()(const Track& a, const Track& b) const {
    return std::tie(a.kind, a.context) < std::tie(b.kind, b.context);
  }
};
struct RowLess {
  bool operator()(const std::pair<Track, std::size_t>& a, const std::pair<Track, std::size_t>& b) const {
    return std::tie(a.first.kind, a.first.context, a.second) < std::tie(b.first.kind, b.first.context, b.second);
  }
};

}  // namespace

void Timeline::name_context(std::uint64_t context, std::string name) {
  for (auto& [id, n] : context_names_)
    if (id == context) {
      n = std::move(name);
      return;
    }
  context_names_.emplace_back(context, std::move(name));
}

void Timeline::slice(Track track, std::string name, TracePoint begin, TracePoint end, Args args) {
  events_.push_back(Event{Phase::Slice, track, std::move(name), begin, end, std::move(args), {}});
}

void Timeline::instant(Track track, std::string name, TracePoint at, Args args) {
  events_.push_back(Event{Phase::Instant, track, std::move(name), at, at, std::move(args), {}});
}

void Timeline::counter(std::string name, TracePoint at, std::vector<std::pair<std::string, double>> series) {
  events_.push_back(Event{Phase::Counter, Track::of(TrackKind::Ring), std::move(name), at, at, {}, std::move(series)});
}

void Timeline::calibrate(std::uint64_t device_cycles, std::chrono::nanoseconds at) {
  calibration_.emplace_back(device_cycles, at);
}

double Timeline::cycles_per_us() const {
  if (calibration_.size() < 2) return 0.0;
  const auto& [c0, t0] = calibration_.front();
  const auto& [c1, t1] = calibration_.back();
  if (c1 <= c0 || t1 <= t0) return 0.0;
  return static_cast<double>(c1 - c0) / to_us(t1 - t0);
}

std::chrono::nanoseconds Timeline::to_time(TracePoint p) const {
  if (!p.device_cycles) return std::chrono::nanoseconds{p.value};
  if (calibration_.empty()) return std::chrono::nanoseconds{p.value};
  const auto& [c0, t0] = calibration_.front();
  const double per_us = cycles_per_us();
  const double ns_per_cycle = per_us > 0 ? 1000.0 / per_us : 1.0;
  const double delta = static_cast<double>(static_cast<std::int64_t>(static_cast<std::uint64_t>(p.value) - c0));
  return t0 + std::chrono::nanoseconds{static_cast<std::int64_t>(delta * ns_per_cycle)};
}

std::string Timeline::track_name(const Track& t) const {
  switch (t.kind) {
    case TrackKind::ContextQueue:
      for (const auto& [id, n] : context_names_)
        if (id == t.context) return n;
      return fmt::format("context {} queue", t.context);
    case TrackKind::HardwareQueue: return "hardware queue (ring entries, write to retirement)";
    case TrackKind::Ring: return "ring (SubmitCommand: entry + doorbell)";
    case TrackKind::Engine: return "engine (CP + copy engine), device timestamps";
    case TrackKind::Paging: return "paging (memory manager's paging buffers)";
    case TrackKind::Interrupts: return "interrupts, reports and TDR";
  }
  return "?";
}

std::string Timeline::to_json() const {
  // Lanes: each slice goes to the first lane of its track it does not overlap.
  struct Row {
    int pid = kHostPid;
    int tid = 0;
  };
  std::map<Track, std::vector<std::int64_t>, TrackLess> lane_ends;  // per track: end time of each lane
  std::map<std::pair<Track, std::size_t>, Row, RowLess> rows;
  int next_tid = 1;
  const auto row = [&](const Track& t, std::size_t lane) -> Row& {
    auto [it, fresh] = rows.try_emplace({t, lane});
    if (fresh) it->second = Row{t.kind == TrackKind::Engine ? kDevicePid : kHostPid, next_tid++};
    return it->second;
  };
  std::vector<std::size_t> order(events_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return to_time(events_[a].begin) < to_time(events_[b].begin);
  });
  std::vector<std::size_t> lane_of(events_.size(), 0);
  for (std::size_t i : order) {
    const Event& e = events_[i];
    if (e.phase != Phase::Slice) continue;
    const std::int64_t b = to_time(e.begin).count(), en = std::max(b, to_time(e.end).count());
    auto& ends = lane_ends[e.track];
    std::size_t lane = 0;
    while (lane < ends.size() && ends[lane] > b) ++lane;
    if (lane == ends.size()) ends.push_back(en);
    ends[lane] = std::max(ends[lane], en);
    lane_of[i] = lane;
  }

  json events = json::array();
  for (std::size_t i = 0; i < events_.size(); ++i) {
    const Event& e = events_[i];
    const double ts = to_us(to_time(e.begin));
    if (e.phase == Phase::Counter) {
      json args = json::object();
      for (const auto& [k, v] : e.series) args[k] = v;
      events.push_back({{"ph", "C"}, {"name", e.name}, {"pid", kHostPid}, {"ts", ts}, {"args", args}});
      continue;
    }
    const Row& r = row(e.track, lane_of[i]);
    json ev = {{"ph", std::string(1, static_cast<char>(e.phase))},
               {"name", e.name},
               {"cat", e.track.kind == TrackKind::Engine ? "device" : "host"},
               {"pid", r.pid},
               {"tid", r.tid},
               {"ts", ts},
               {"args", args_json(e.args)}};
    if (e.phase == Phase::Slice) ev["dur"] = std::max(0.0, to_us(to_time(e.end)) - ts);
    if (e.phase == Phase::Instant) ev["s"] = "t";
    events.push_back(std::move(ev));
  }

  json meta = json::array();
  meta.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kHostPid}, {"args", {{"name", "softgpu driver (libsgpu)"}}}});
  meta.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kHostPid}, {"args", {{"sort_index", 1}}}});
  meta.push_back({{"ph", "M"}, {"name", "process_name"}, {"pid", kDevicePid}, {"args", {{"name", "softgpu device"}}}});
  meta.push_back({{"ph", "M"}, {"name", "process_sort_index"}, {"pid", kDevicePid}, {"args", {{"sort_index", 0}}}});
  for (const auto& [key, r] : rows) {
    const auto& [track, lane] = key;
    std::string name = track_name(track);
    if (lane > 0) name += fmt::format(" #{}", lane + 1);
    const int sort = sort_index(track.kind) + static_cast<int>(track.context % 64) * 2 + static_cast<int>(lane);
    meta.push_back({{"ph", "M"}, {"name", "thread_name"}, {"pid", r.pid}, {"tid", r.tid}, {"args", {{"name", name}}}});
    meta.push_back(
        {{"ph", "M"}, {"name", "thread_sort_index"}, {"pid", r.pid}, {"tid", r.tid}, {"args", {{"sort_index", sort}}}});
  }
  for (auto& e : events) meta.push_back(std::move(e));

  json doc = {{"traceEvents", std::move(meta)},
              {"displayTimeUnit", "ns"},
              {"otherData",
               {{"producer", "libsgpu trace::Timeline"},
                {"time_axis", "the transport's time: simulated on sim/model/systemc, wall clock on a card"},
                {"device_cycles_per_us", cycles_per_us()}}}};
  return doc.dump(1);
}

Status Timeline::write(const std::string& path) const {
  return write_file(path, to_json(), "trace");
}

}  // namespace sgpu::trace
