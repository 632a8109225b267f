// Paging running ahead of rendering, on the Verilated design through the GPU scheduler: a
// working set four times the memory segment (16 allocations of 64 KiB, a 256 KiB memory
// segment), first filled, then copied between in a fixed pseudo-random order, every submission
// queued without waiting. Run twice on fresh devices: paging running ahead (the driver's way)
// and every paging buffer waited for (DeviceExecutorOptions::run_ahead = false, the old way).
// Prints one JSON object (see cmake/SgpuBench.cmake, docs/benchmarks.md):
//   paging_overlap_ratio       share of the paging buffers' time on the ring (from the ring
//                              write to the engine's closing timestamp) during which render work
//                              was on the ring too (written, not yet finished by the engine)
//   paging_overlap_ratio_sync  the same with every paging buffer waited for
//   paging_ahead_speedup       workload time (simulated) waited ÷ run ahead
#include <algorithm>
#include <cstdio>
#include <map>
#include <random>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_must.hpp"
#include "backends/backends.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/trace/timeline.hpp"
#include "sgpu/umd/command_list.hpp"

namespace {

using namespace sgpu;
using namespace std::chrono_literals;

using bench::must;

using Interval = std::pair<std::int64_t, std::int64_t>;  // [begin, end) ns on the transport's axis

std::int64_t covered(const Interval& x, const std::vector<Interval>& merged) {
  std::int64_t n = 0;
  for (const auto& [b, e] : merged) n += std::max<std::int64_t>(0, std::min(e, x.second) - std::max(b, x.first));
  return n;
}

struct Outcome {
  double ratio = 0;
  std::chrono::nanoseconds time{0};
  std::uint64_t paging_buffers = 0;
};

std::int64_t arg(const trace::Args& args, const char* key) {
  for (const auto& a : args)
    if (a.key == key)
      if (auto* v = std::get_if<std::int64_t>(&a.value)) return *v;
  return -1;
}

Outcome run(TransportRegistry& registry, bool ahead) {
  constexpr std::uint32_t kAllocBytes = 64 * 1024, kQuarter = kAllocBytes / 4;
  constexpr unsigned kAllocs = 16, kCopies = 48;
  sched::RuntimeOptions o;
  o.device.aperture.table_pages = 2048;
  o.memory_segment_bytes = 256 * 1024;
  o.kernel_window_pages = sched::kernel_window_pages_for(16);
  o.scheduler.tdr_delay = 1s;
  o.paging.run_ahead = ahead;
  auto rt = must(sched::Runtime::open(must(registry.open("sim"), "open sim"), o), "runtime");
  auto& s = rt->scheduler();
  trace::Timeline timeline;
  must(s.set_trace(&timeline), "trace");
  kmd::Device dev = must(rt->adapter().create_device({}), "device");
  auto ctx = must(rt->create_context(dev), "context");
  std::vector<kmd::Allocation> allocs;
  for (unsigned i = 0; i < kAllocs; ++i) {
    auto info = kmd::AllocationInfo::placed(kAllocBytes, kmd::SegmentSet::of(1), 1);
    if (i % 2 == 0) info.eviction_segments = kmd::SegmentSet::of(2);
    allocs.push_back(must(dev.create_allocation(info), "allocation"));
  }
  const auto t0 = rt->device().transport().now();
  for (unsigned i = 0; i < kAllocs; ++i) {
    umd::CommandList cl;
    must(cl.fill(allocs[i].handle(), 0, kAllocBytes, 0xA000'0000u | i), "fill");
    must(s.submit(ctx->get(), cl), "submit");
  }
  std::mt19937 rng(20261124);
  for (unsigned n = 0; n < kCopies; ++n) {
    const unsigned src = rng() % kAllocs;
    const unsigned dst = (src + 1 + rng() % (kAllocs - 1)) % kAllocs;
    umd::CommandList cl;
    must(cl.copy(allocs[src].handle(), (rng() % 4) * kQuarter, allocs[dst].handle(), (rng() % 4) * kQuarter, kQuarter),
         "copy");
    must(s.submit(ctx->get(), cl), "submit");
  }
  must(s.idle(10s), "idle");
  Outcome out;
  out.time = rt->device().transport().now() - t0;
  must(s.set_trace(nullptr), "trace off");

  // Each ring entry: written (ring track slice begin) .. finished (engine track slice end).
  std::map<std::int64_t, std::int64_t> written;  // fence -> host ns
  for (const auto& e : timeline.events())
    if (e.track.kind == trace::TrackKind::HardwareQueue) written[arg(e.args, "fence")] = e.begin.value;
  std::vector<Interval> paging, render;
  for (const auto& e : timeline.events()) {
    if (e.track.kind != trace::TrackKind::Engine) continue;
    const auto w = written.find(arg(e.args, "fence"));
    if (w == written.end()) continue;
    const Interval life{w->second, timeline.to_time(e.end).count()};
    (arg(e.args, "context") == 0 ? paging : render).push_back(life);
  }
  std::sort(render.begin(), render.end());
  std::vector<Interval> merged;
  for (const auto& r : render) {
    if (!merged.empty() && r.first <= merged.back().second) merged.back().second = std::max(merged.back().second, r.second);
    else merged.push_back(r);
  }
  std::int64_t total = 0, hidden = 0;
  for (const auto& p : paging) {
    total += std::max<std::int64_t>(0, p.second - p.first);
    hidden += covered(p, merged);
  }
  out.paging_buffers = paging.size();
  out.ratio = total > 0 ? static_cast<double>(hidden) / static_cast<double>(total) : 0.0;
  if (paging.empty() || rt->executor().counters().buffers != paging.size()) {
    fmt::print(stderr, "bench_paging_overlap: {} paging buffers ran, {} traced\n", rt->executor().counters().buffers,
               paging.size());
    std::exit(1);
  }
  return out;
}

}  // namespace

int main() {
  TransportRegistry registry;
  must(tb::register_backends(registry), "register the testbench's backends");
  const Outcome ahead = run(registry, true);
  const Outcome sync = run(registry, false);
  nlohmann::json j;
  j["paging_overlap_ratio"] = ahead.ratio;
  j["paging_overlap_ratio_sync"] = sync.ratio;
  j["paging_ahead_speedup"] = static_cast<double>(sync.time.count()) / static_cast<double>(ahead.time.count());
  std::printf("%s\n", j.dump().c_str());
  fmt::print(stderr, "bench_paging_overlap: {} paging buffers; {:.1f} us ahead, {:.1f} us waited\n",
             ahead.paging_buffers, static_cast<double>(ahead.time.count()) / 1000.0,
             static_cast<double>(sync.time.count()) / 1000.0);
  return 0;
}
