// The timeline trace of the demo workload on the Verilated RTL (render, copy, present, an
// injected hang with its TDR), parsed back from its JSON: the tracks, the device's own execution
// times, and the ordering guarantees.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sgpu/trace/timeline.hpp"
#include "tb_transports.hpp"
#include "timeline_svg.hpp"
#include "workload.hpp"

using namespace sgpu;
using nlohmann::json;

namespace {

struct Parsed {
  json doc;
  std::map<std::pair<int, int>, std::string> threads;  // (pid, tid) -> name
  std::vector<json> events;                            // everything but metadata, in file order

  std::string thread(const json& e) const {
    auto it = threads.find({e.at("pid").get<int>(), e.at("tid").get<int>()});
    return it == threads.end() ? std::string() : it->second;
  }
  std::vector<json> on(const std::string& prefix, const char* phase) const {
    std::vector<json> v;
    for (const auto& e : events)
      if (e.at("ph") == phase && e.contains("tid") && thread(e).rfind(prefix, 0) == 0) v.push_back(e);
    return v;
  }
};

Parsed parse(const std::string& text) {
  Parsed p;
  p.doc = json::parse(text);
  for (const auto& e : p.doc.at("traceEvents")) {
    if (e.at("ph") == "M") {
      if (e.at("name") == "thread_name")
        p.threads[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
    } else {
      p.events.push_back(e);
    }
  }
  return p;
}

}  // namespace

TEST_CASE("trace of the demo on the Verilated RTL: tracks, device execution times and ordering guarantees",
          "[trace][sim]") {
  sched::RuntimeOptions ro;
  demo::configure_scheduler(ro.scheduler);  // as `sgpu demo`
  TransportRegistry registry;
  test::register_e2e_backends(registry);
  auto transport = registry.open("sim");
  REQUIRE(transport);
  auto rt = sched::Runtime::open(std::move(*transport), std::move(ro));
  if (!rt) FAIL(to_string(rt.error()));
  trace::Timeline timeline;
  demo::WorkloadOptions wo;
  wo.trace = &timeline;
  auto r = demo::run_workload(**rt, wo);
  if (!r) FAIL(to_string(r.error()));
  REQUIRE(r->hang_recovered);
  REQUIRE(r->copies_ok);
  CHECK((*rt)->scheduler().trace() == nullptr);  // the workload stops tracing when it ends

  // The device's own times, before any conversion: every execution slice runs from the opening
  // timestamp to the closing one (or, aborted, to the reset), start <= end.
  std::size_t device_slices = 0;
  for (const auto& e : timeline.events()) {
    if (e.track.kind != trace::TrackKind::Engine) continue;
    ++device_slices;
    REQUIRE(e.begin.device_cycles);
    if (e.end.device_cycles) CHECK(e.begin.value <= e.end.value);
    CHECK(timeline.to_time(e.begin) <= timeline.to_time(e.end));
  }
  CHECK(device_slices > 0);
  CHECK(timeline.cycles_per_us() > 0);

  const Parsed p = parse(timeline.to_json());

  SECTION("one named track per context queue, the hardware queue, the ring, the engine, paging, interrupts") {
    std::set<std::string> names;
    for (const auto& [key, n] : p.threads) names.insert(n);
    for (const char* want : {"context 1 (render) queue", "context 2 (copy) queue", "context 3 (present) queue",
                             "context 4 (hang) queue", "hardware queue (ring entries, write to retirement)",
                             "ring (SubmitCommand: entry + doorbell)", "engine (CP + copy engine), device timestamps",
                             "paging (memory manager's paging buffers)", "interrupts, reports and TDR"})
      CHECK(names.count(want) == 1);
    std::set<std::string> counters;
    for (const auto& e : p.events)
      if (e.at("ph") == "C") counters.insert(e.at("name").get<std::string>());
    for (const char* want : {"ring occupancy (entries)", "memory segments (bytes used)", "evictions"})
      CHECK(counters.count(want) == 1);
    for (const char* step : {"Render", "Present", "queued", "residency", "Patch", "retired"}) {
      const bool found = std::any_of(p.events.begin(), p.events.end(), [&](const json& e) { return e.at("name") == step; });
      CHECK(found);
    }
  }

  // The flips: one instant per frame on the present context's row, in present order.
  std::vector<std::int64_t> flips, want_flips;
  for (const auto& e : p.on("context 3 (present) queue", "i"))
    if (e.at("name") == "flip (vsync)") flips.push_back(e.at("args").at("present_fence").get<std::int64_t>());
  for (std::uint32_t n = 1; n <= wo.frames; ++n) want_flips.push_back(n);
  CHECK(flips == want_flips);

  // Ring fences: written (ring track), aborted by the reset (hardware queue, "aborted"), completed.
  std::map<std::int64_t, int> written, completed;
  std::map<std::int64_t, std::string> aborted;
  for (const auto& e : p.on("ring", "X")) ++written[e.at("args").at("fence").get<std::int64_t>()];
  for (const auto& e : p.on("hardware queue", "X"))
    if (e.at("args").contains("aborted"))
      aborted[e.at("args").at("fence").get<std::int64_t>()] = e.at("args").at("aborted").get<std::string>();
  std::map<std::int64_t, double> completed_at;
  for (const auto& e : p.on("interrupts", "i"))
    if (e.at("name") == "DMA_COMPLETED") {
      const auto f = e.at("args").at("fence").get<std::int64_t>();
      ++completed[f];
      completed_at[f] = e.at("ts").get<double>();
    }

  SECTION("exactly one DMA_COMPLETED per ring fence that completed, none for one the reset discarded") {
    REQUIRE_FALSE(written.empty());
    REQUIRE_FALSE(aborted.empty());
    for (const auto& [fence, times] : written) {
      INFO("ring fence " << fence);
      const bool discarded = aborted.count(fence) && aborted.at(fence) != "resubmitted with its fence";
      CHECK(completed[fence] == (discarded ? 0 : 1));
    }
    for (const auto& [fence, n] : completed) CHECK(written.count(fence) == 1);
  }

  SECTION("every submission executed on the device, and no retirement before its execution ended") {
    std::set<std::int64_t> submissions, executed;
    for (const auto& e : p.events)
      if (e.at("ph") == "X" && (e.at("name") == "Render" || e.at("name") == "Present"))
        submissions.insert(e.at("args").at("submission").get<std::int64_t>());
    for (const auto& e : p.on("engine", "X")) {
      CHECK(e.at("dur").get<double>() >= 0);
      const auto& a = e.at("args");
      if (a.contains("aborted")) continue;
      const auto f = a.at("fence").get<std::int64_t>();
      INFO("engine slice " << e.at("name").get<std::string>());
      REQUIRE(completed_at.count(f) == 1);
      // Device end (converted) <= the DPC's retirement, within the conversion's rounding.
      CHECK(e.at("ts").get<double>() + e.at("dur").get<double>() <= completed_at.at(f) + 0.002);
      if (a.contains("submission")) executed.insert(a.at("submission").get<std::int64_t>());
    }
    // Every submission but the hung one ran to its end on the device.
    std::size_t missing = 0;
    for (auto s : submissions) missing += executed.count(s) == 0;
    CHECK(missing == 1);
  }

  SECTION("the copy context's row shows each preemption and the resumption after it") {
    std::vector<std::string> marks;
    std::vector<std::int64_t> offsets;
    for (const auto& e : p.on("context 2 (copy) queue", "i")) {
      const std::string n = e.at("name");
      if (n != "preempted" && n != "resumed") continue;
      marks.push_back(n);
      CHECK(e.at("args").at("submission").get<std::int64_t>() == static_cast<std::int64_t>(r->copy.value()));
      if (n == "resumed") offsets.push_back(e.at("args").at("offset").get<std::int64_t>());
    }
    std::size_t copy_records = 0;
    std::vector<std::int64_t> want_offsets;
    for (const auto& pr : r->preemptions)
      if (pr.record.submission == r->copy) {
        ++copy_records;
        want_offsets.push_back(pr.record.resume_offset);
      }
    REQUIRE(copy_records >= 1);
    REQUIRE(marks.size() == 2 * copy_records);
    for (std::size_t i = 0; i < marks.size(); ++i) CHECK(marks[i] == (i % 2 ? "resumed" : "preempted"));
    CHECK(offsets == want_offsets);  // it resumed where the scheduler's log says
    // On the engine row: its runs before each preemption ("… preempted", not "aborted": it
    // loses nothing) and its last run from the resumption to its closing timestamp.
    const std::string label = fmt::format("submission {} ", r->copy.value());
    std::size_t preempted_runs = 0, resumed_runs = 0;
    for (const auto& e : p.on("engine", "X")) {
      const std::string n = e.at("name");
      if (n.rfind(label, 0) != 0) continue;
      CHECK(n.find("aborted") == std::string::npos);
      preempted_runs += n.size() > 10 && n.substr(n.size() - 10) == " preempted";
      resumed_runs += n.find("(resumed)") != std::string::npos;
    }
    CHECK(preempted_runs >= 1);  // a run stopped before its opening TIMESTAMP leaves no slice
    CHECK(preempted_runs <= copy_records);
    CHECK(resumed_runs == 1);
  }

  SECTION("the TDR steps in order: the first overrun put back, the second one recovered") {
    std::vector<std::string> steps;
    double last = -1;
    for (const auto& e : p.on("interrupts", "i")) {
      const std::string n = e.at("name");
      if (n.rfind("TDR: ", 0) != 0) continue;
      steps.push_back(n.substr(5));
      CHECK(e.at("ts").get<double>() >= last);
      last = e.at("ts").get<double>();
    }
    // The hung wait overruns TdrDelay, is preempted and put back (not guilty); it overruns again
    // stopped at the same packet: the recovery (reset, resubmission, context lost).
    CHECK(steps == std::vector<std::string>{"preempt request", "overrun: requeued", "preempt request", "engine reset",
                                            "resubmission", "context lost"});
    const bool preempted = std::any_of(p.events.begin(), p.events.end(), [](const json& e) {
      return e.at("name") == "DMA_PREEMPTED";
    });
    CHECK(preempted);
  }
}

TEST_CASE("timeline picture: an SVG with one row per track, errors name the path", "[trace][demo]") {
  trace::Timeline tl;
  tl.name_context(5, "context 1 (render) queue");
  tl.slice(trace::Track::context_queue(5), "Render", trace::TracePoint::host(std::chrono::nanoseconds{0}),
           trace::TracePoint::host(std::chrono::nanoseconds{2000}));
  tl.instant(trace::Track::of(trace::TrackKind::Interrupts), "TDR: engine reset",
             trace::TracePoint::host(std::chrono::nanoseconds{1000}));
  const std::string svg = demo::timeline_svg(tl);
  CHECK(svg.rfind("<svg", 0) == 0);
  CHECK(svg.find("context 1 (render) queue") != std::string::npos);
  CHECK(svg.find("interrupts, reports and TDR") != std::string::npos);
  CHECK(svg.find("<title>TDR: engine reset</title>") != std::string::npos);
  auto bad = demo::write_timeline_svg("/nonexistent-dir/t.svg", tl);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("/nonexistent-dir/t.svg") != std::string::npos);
}
