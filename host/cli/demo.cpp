// `sgpu demo`: the main job. Opens the device through the whole driver stack (Runtime: device,
// kernel window, memory manager with device paging, scheduler), runs the demo workload (four
// contexts: render, copy, an injected hang, present through a flip queue of two primaries at
// vsync), writes the last frame on screen as a PNG and every frame side by side as a strip,
// checks each frame against the one the C++ reference model computes from the same command
// lists, and prints a readable report (also written next to the PNG).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backends/backends.hpp"
#include "cli.hpp"
#include "png.hpp"
#include "reference.hpp"
#include "sgpu/diag/postmortem.hpp"
#include "sgpu/diag/progress.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/trace/timeline.hpp"
#include "sgpu/transport/timed.hpp"
#include "sim/sim_device.hpp"
#include "timeline_svg.hpp"
#include "workload.hpp"

namespace sgpu::cli {
namespace {

using Clock = std::chrono::steady_clock;

std::string duration_str(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  if (ns < 1e3) return fmt::format("{} ns", d.count());
  if (ns < 1e6) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

// FNV-1a of the frame: a short fingerprint for the report.
std::uint64_t fingerprint(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

// "" if equal, else where the first differing pixel is.
std::string compare(const std::vector<std::uint8_t>& a, const std::vector<std::uint8_t>& b,
                    const demo::SceneGeometry& g) {
  if (a.size() != b.size()) return fmt::format("sizes differ ({} vs {} bytes)", a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); i += 4)
    if (std::memcmp(&a[i], &b[i], 4) != 0) {
      std::uint32_t pa = 0, pb = 0;
      std::memcpy(&pa, &a[i], 4);
      std::memcpy(&pb, &b[i], 4);
      return fmt::format("pixel ({}, {}) is {:#010x}, the model says {:#010x}", i / 4 % g.width, i / 4 / g.width, pa,
                         pb);
    }
  return "";
}

class Report {
 public:
  template <class... A>
  void line(fmt::format_string<A...> f, A&&... a) {
    text_ += fmt::format(f, std::forward<A>(a)...);
    text_ += '\n';
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace

int run_demo(const CommonOptions& options, const DemoOptions& demo) {
  const auto wall0 = Clock::now();
  auto transport = options.registry->open(options.backend);
  if (!transport) {
    fmt::print(stderr, "sgpu demo: cannot open the '{}' transport: {}\n", options.backend, to_string(transport.error()));
    return 1;
  }
  auto timed_owner = std::make_unique<TimedTransport>(std::move(*transport));
  TimedTransport& timed = *timed_owner;
  sched::RuntimeOptions ro;
  demo::configure_scheduler(ro.scheduler);  // then the flags
  ro.scheduler.tdr_delay = std::chrono::microseconds(demo.tdr_us);
  ro.scheduler.preempt_timeout = std::chrono::microseconds(demo.tdr_us) / 4;
  ro.scheduler.preempt_quantum = std::chrono::microseconds(demo.quantum_us);
  // --postmortem: one dump per recovery, written when the scheduler takes it (before the reset).
  std::vector<std::string> postmortems;
  std::string postmortem_error;
  if (!demo.postmortem_dir.empty())
    ro.scheduler.postmortem = [&](const diag::PostMortem& pm) {
      auto files = diag::write_files(pm, demo.postmortem_dir, fmt::format("postmortem-{}", postmortems.size() + 1));
      if (!files) postmortem_error = files.error().message;
      else postmortems.push_back(files->back());  // the .txt
    };
  auto rt = sched::Runtime::open(std::move(timed_owner), ro);
  if (!rt) {
    fmt::print(stderr, "sgpu demo: cannot bring up the driver stack: {}\n", to_string(rt.error()));
    return 1;
  }
  demo::WorkloadOptions wo;
  wo.inject_hang = !demo.no_hang;
  wo.timeout = std::chrono::milliseconds(demo.timeout_ms);
  wo.frames = demo.frames;
  wo.vsync_period = std::chrono::microseconds(demo.vsync_us);
  trace::Timeline timeline;
  if (demo.trace_path) wo.trace = &timeline;
  // A status line on a terminal (the demo takes minutes on the board and SystemC backends).
  diag::Progress progress("demo", demo::expected_steps(wo));
  if (progress.enabled()) wo.on_step = [&](std::size_t done, std::size_t) { progress.update(done); };
  const auto inside0 = timed.inside();
  const auto work0 = Clock::now();
  auto result = demo::run_workload(**rt, wo);
  const auto work_wall = Clock::now() - work0;
  progress.finish();  // ends the line before the report
  if (!result) {
    fmt::print(stderr, "sgpu demo: FAILED: {}\n", to_string(result.error()));
    return 1;
  }
  const double host_share = 1.0 - std::chrono::duration<double>(timed.inside() - inside0).count() /
                                      std::chrono::duration<double>(work_wall).count();
  const demo::WorkloadReport& r = *result;
  const demo::SceneGeometry& g = wo.geometry;
  Device& dev = (*rt)->device();
  const DeviceInfo& i = dev.info();
  int failures = 0;

  Report rep;
  // The simulated board's settings, for the backends that run one.
  const std::string_view backend = dev.transport().name();
  if (const sim::SimConfig* board = tb::board_options(*options.registry, backend))
    rep.line("softgpu demo on transport '{}' ({} read / {} write latency cycles, {:.0f} MHz, {} model)", backend,
             board->read_latency, board->write_latency, board->clock_hz / 1e6, sim::to_string(sim::model_for(*board)));
  else if (backend == "pcie")
    rep.line("softgpu demo on transport 'pcie' (a card; times below are real time)");
  else
    rep.line("softgpu demo on transport '{}'", backend);
  rep.line("device: interface {}.{}, {}-bit bus, {} reads in flight; memory segment {} MiB, aperture {} MiB "
           "({} pages kept for the kernel window)",
           i.version_major, i.version_minor, i.bus_data_bytes * 8, i.outstanding_reads,
           i.memory_segment.size >> 20, i.aperture_segment.size >> 20, (*rt)->window().pages());
  const kmd::Adapter& adapter = (*rt)->adapter();
  for (SegmentId id = 1; id <= adapter.description().segments.size(); ++id) {
    const auto& seg = adapter.description().segments[id - 1];
    rep.line("segment {}: [{:#x}, {:#x}) {}", id, seg.base_address, seg.end_address(),
             id == adapter.dma_buffer_segment() ? "aperture: DMA buffers (the kernel window)"
             : seg.is_aperture()                ? "aperture: allocations"
                                                : "memory: allocations");
  }
  rep.line("DMA buffers: segment {} (every context's DmaBufferSegmentSet names it; SubmitCommand's DmaBufferSegmentId), "
           "fetched through the GART; paging buffers: system memory at bus addresses (privileged)",
           adapter.dma_buffer_segment());
  rep.line("");
  rep.line("  {:>10}  {:>6}  {}", "simulated", "fence", "step");
  const auto start = r.steps.empty() ? std::chrono::nanoseconds{} : r.steps.front().at;
  for (const auto& s : r.steps)
    rep.line("  {:>10}  {:>6}  {}", duration_str(s.at - start), s.fence ? fmt::format("{}", s.fence) : "-", s.what);
  rep.line("");
  const auto& c = r.counters;
  rep.line("scheduler: {} submissions -> {} render ring entries ({} Render/Present passes, {} split), "
           "{} paging buffers; {} interrupts, {} DMA_COMPLETED reports (never stale, never twice)",
           c.submissions, c.render_packets, c.passes, c.splits, c.paging_packets, c.interrupts,
           r.dma_completed_reports);
  rep.line("recovery:  {} engine resets, {} preemptions answered, {} paging buffers resubmitted with their "
           "original fences, {} render packets requeued for new fences, {} cancelled (TDR delay {})",
           c.recoveries, c.preemptions, c.resubmitted_paging, c.requeued_packets, c.cancelled_packets,
           duration_str(ro.scheduler.tdr_delay));
  if (wo.inject_hang) {
    // How it was recovered depends on the engine: the RTL answers the preemption inside the wait
    // (put back, then a second overrun without progress); the reference model preempts only
    // between entries, so the request goes unanswered.
    const std::string how = c.overruns > 0 ? "put back at its first TdrDelay overrun, recovered at its second without progress"
                            : c.preempt_timeouts > 0
                                ? fmt::format("recovered at its TdrDelay overrun: the engine did not answer the "
                                              "preemption request within {}", duration_str(ro.scheduler.preempt_timeout))
                                : std::string("recovered");
    rep.line("hang:      {}; the lost context now gets: {}",
             r.hang_recovered ? how + " (submission aborted, every other context completed)" : std::string("NOT RECOVERED"),
             r.hang_context_error);
    failures += !r.hang_recovered;
  }
  if (!demo.postmortem_dir.empty()) {
    rep.line("postmortem: {} written to {}{}{}", postmortems.size(), demo.postmortem_dir,
             postmortems.empty() ? "" : fmt::format(" (first: {})", postmortems.front()),
             postmortem_error.empty() ? "" : "; WRITING FAILED: " + postmortem_error);
    failures += !postmortem_error.empty() || (wo.inject_hang && postmortems.empty());
  }
  std::size_t copy_preempted = 0;
  for (const auto& p : r.preemptions) copy_preempted += p.record.submission == r.copy;
  rep.line("copies:    {} x 64 KiB on the copy context (priority {}, submission {}, submitted at {}) {}, every byte "
           "checked; preempted {} times",
           wo.copy_chunks, demo::kCopyPriority, r.copy, duration_str(r.copy_submitted_at - start),
           r.copies_ok ? "arrived intact" : "CORRUPT", copy_preempted);
  failures += !r.copies_ok;
  // Each packet put back: whose, why, where it resumed and how long it waited (preemption
  // request to the head of the ring again).
  rep.line("preemption: quantum {}, priorities present {} > render {} > copy {} > hang {}; {} packets put back "
           "({} for higher-priority work, {} at TdrDelay overruns)",
           duration_str(ro.scheduler.preempt_quantum), demo::kPresentPriority, demo::kRenderPriority,
           demo::kCopyPriority, demo::kHangPriority, r.preemptions.size(), c.priority_preemptions, c.overruns);
  for (const auto& p : r.preemptions) {
    const auto& rec = p.record;
    std::string why = "at a TdrDelay overrun";
    if (!rec.overrun) {
      why = "for higher-priority work";
      for (const auto& f : r.frames) {
        if (rec.requested_at >= f.render_submitted_at && rec.requested_at <= f.render_completed_at) {
          why = fmt::format("for render frame {} (priority {}; submitted to completed {})", f.index + 1,
                            demo::kRenderPriority, duration_str(f.render_completed_at - f.render_submitted_at));
          break;
        }
        if (rec.requested_at >= f.requested_at && rec.requested_at <= f.flipped_at) {
          why = fmt::format("for the Present of frame {} (priority {})", f.index + 1, demo::kPresentPriority);
          break;
        }
      }
    }
    rep.line("  {:>10}  submission {} ({}, priority {}, ring fence {}) preempted {}: resumed at offset {} {}", 
             duration_str(rec.requested_at - start), rec.submission, p.context.empty() ? "?" : p.context, p.priority,
             rec.fence, why, rec.resume_offset,
             rec.resumed_at ? fmt::format("as ring fence {} at {}, {} after the preemption request", rec.resumed_fence,
                                          duration_str(*rec.resumed_at - start),
                                          duration_str(*rec.resumed_at - rec.requested_at))
                            : std::string("(never ran again: recovered)"));
  }
  rep.line("semaphore: WAIT_MEM on the render context's own WRITE_DATA passed; user fence {:#018x} {}", r.user_fence,
           r.user_fence == demo::kUserFenceValue ? "written" : "WRONG");
  failures += r.user_fence != demo::kUserFenceValue;

  // The frames: PNGs, fingerprints, and the reference model's opinion of each.
  const std::string png = demo.png_path;
  const std::string stem = png.size() > 4 && png.substr(png.size() - 4) == ".png" ? png.substr(0, png.size() - 4) : png;
  const std::string strip = stem + ".frames.png";
  std::vector<std::vector<std::uint8_t>> shown;
  for (const auto& f : r.frames) shown.push_back(f.bytes);
  for (Status s : {demo::write_png(png, r.frame.data(), g.width, g.height, g.pitch()),
                   demo::write_png_strip(strip, shown, g.width, g.height, g.pitch())}) {
    if (!s) {
      fmt::print(stderr, "sgpu demo: {}\n", to_string(s.error()));
      return 1;
    }
  }
  std::vector<std::vector<std::uint8_t>> reference;
  std::string reference_error;
  if (!demo.no_reference) {
    auto ref = demo::reference_frames(g, *options.registry, static_cast<std::uint32_t>(r.frames.size()));
    if (ref) reference = std::move(*ref);
    else reference_error = to_string(ref.error());
  }
  rep.line("frames:    {} presented through a flip queue of 2 primaries, vsync every {}: frame counter {} after {} "
           "vsyncs",
           r.frames.size(), duration_str(wo.vsync_period), r.frames_presented, r.vsyncs);
  failures += r.frames_presented != wo.frames || r.frames.size() != wo.frames;
  rep.line("  {:>5}  {:>13}  {:>14}  {:>7}  {:>10}  {:>18}  {:>17}  {:>16}  {}", "frame", "present fence",
           "render latency", "primary", "presented", "waited off-screen", "on screen (vsync)", "fingerprint",
           "reference model");
  std::size_t identical = 0;
  for (const auto& f : r.frames) {
    std::string verdict = "-";
    if (!demo.no_reference && f.index < reference.size()) {
      const std::string diff = compare(f.bytes, reference[f.index], g);
      verdict = diff.empty() ? "identical" : "DIFFERS: " + diff;
      identical += diff.empty();
      failures += !diff.empty();
    }
    rep.line("  {:>5}  {:>13}  {:>14}  {:>7}  {:>10}  {:>18}  {:>17}  {:016x}  {}", f.index + 1, f.fence,
             duration_str(f.render_completed_at - f.render_submitted_at), f.primary, duration_str(f.presented_at - start), duration_str(f.presented_at - f.requested_at),
             fmt::format("{} ({})", duration_str(f.flipped_at - start), f.vsync), fingerprint(f.bytes), verdict);
  }
  rep.line("frame:     {}x{} A8R8G8B8; the last frame on screen written to {}, every frame side by side to {}",
           g.width, g.height, png, strip);
  if (!demo.no_reference) {
    if (!reference_error.empty()) {
      rep.line("reference: the C++ model could not compute the frames: {}", reference_error);
      ++failures;
    } else {
      rep.line("reference: {} of {} frames identical to the frames the C++ reference model computes from the same "
               "command lists",
               identical, r.frames.size());
    }
  }
  if (demo.trace_path) {
    // x.png -> x.trace.json; the picture drops ".json" and ".trace": x.timeline.svg.
    namespace fs = std::filesystem;
    const std::string json =
        demo.trace_path->empty() ? fs::path(png).replace_extension(".trace.json").string() : *demo.trace_path;
    fs::path picture = fs::path(json).replace_extension();
    if (picture.extension() == ".trace") picture.replace_extension();
    const std::string svg = picture.string() + ".timeline.svg";
    for (Status s : {timeline.write(json), demo::write_timeline_svg(svg, timeline)}) {
      if (!s) {
        fmt::print(stderr, "sgpu demo: {}\n", to_string(s.error()));
        return 1;
      }
    }
    rep.line("trace:     {} events written to {} (open it in ui.perfetto.dev or chrome://tracing), picture {}",
             timeline.events().size(), json, svg);
  }
  const double wall_s = std::chrono::duration<double>(work_wall).count();
  rep.line("time:      {} device cycles = {} simulated in {:.2f} s wall ({:.0f} simulated cycles per second); "
           "host library share of the wall time {:.1f} %",
           r.cycles, duration_str(r.simulated), wall_s, static_cast<double>(r.cycles) / wall_s, 100.0 * host_share);
  rep.line("total wall time including set-up and the reference: {:.2f} s",
           std::chrono::duration<double>(Clock::now() - wall0).count());
  rep.line("{}", failures ? fmt::format("demo FAILED ({} checks)", failures) : std::string("demo passed"));

  fmt::print("{}", rep.text());
  const std::string report_path = stem + ".txt";
  if (std::FILE* f = std::fopen(report_path.c_str(), "w")) {
    std::fputs(rep.text().c_str(), f);
    std::fclose(f);
    fmt::print("report written to {}\n", report_path);
  }
  return failures ? 1 : 0;
}

}  // namespace sgpu::cli
