#include "workload.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include <fmt/format.h>

#include "sgpu/umd/command_list.hpp"

namespace sgpu::demo {
namespace {

constexpr std::uint32_t kChunk = 64 * 1024;

// Every allocation may live in the memory segment or the aperture (memory preferred); CpuVisible
// so the demo can read results back with a lock.
kmd::AllocationInfo info(const kmd::Adapter& adapter, std::uint64_t bytes) {
  const auto mem = adapter.memory_segment();
  return kmd::AllocationInfo::placed((bytes + 4095) & ~std::uint64_t{4095}, adapter.allocation_segments(),
                                     mem ? *mem : adapter.allocation_segments().first(), kmd::AllocationInfoFlags::kCpuVisible);
}

Error at(const std::string& step, const Error& e) {
  return Error{e.code, fmt::format("{}: {}", step, e.message), Touched{e.hardware_touched}};
}

class Run {
 public:
  Run(sched::Runtime& rt, const WorkloadOptions& o) : rt_(rt), s_(rt.scheduler()), o_(o) {}

  Result<WorkloadReport> go() {
    const auto t0 = now();
    auto c0 = rt_.device().cycle_counter();
    if (!c0) return at("cycle counter", c0.error());
    auto dev = rt_.adapter().create_device({});
    if (!dev) return at("create device", dev.error());
    if (o_.trace) {
      if (Status st = s_.set_trace(o_.trace); !st) return at("start the trace", st.error());
    }
    log_start_ = s_.counters().resumed_packets;
    Status body_status = body(*dev);
    if (o_.trace) (void)s_.set_trace(nullptr);
    SGPU_RETURN_IF_ERROR(body_status);
    auto c1 = rt_.device().cycle_counter();
    if (!c1) return at("cycle counter", c1.error());
    report_.cycles = *c1 - *c0;
    report_.simulated = now() - t0;
    report_.counters = s_.counters();
    report_.dma_completed_reports = s_.reporter().counters().reported;
    collect_preemptions();
    return std::move(report_);
  }

 private:
  std::chrono::nanoseconds now() { return rt_.device().transport().now(); }
  void step(std::string what, SubmissionId fence = {}) {
    report_.steps.push_back({std::move(what), now(), fence});
    if (o_.on_step) o_.on_step(report_.steps.size(), expected_steps(o_));
  }
  // Names the context in the trace and the report; sets its priority.
  Status role(const kmd::Context& ctx, const char* role, int priority) {
    if (o_.trace) o_.trace->name_context(ctx.id(), fmt::format("context {} ({}) queue", ++named_, role));
    roles_[ctx.id()] = {role, priority};
    if (Status st = s_.set_priority(ctx, priority); !st) return at(fmt::format("set the {} context's priority", role), st.error());
    return ok_status();
  }
  unsigned named_ = 0;
  std::map<std::uint64_t, std::pair<std::string, int>> roles_;
  std::uint64_t log_start_ = 0;  // Counters::resumed_packets when the workload began

  // The scheduler's preemption log entries made during the workload (it keeps the last
  // kPreemptionLogSize: older ones are gone).
  void collect_preemptions() {
    const auto& log = s_.preemption_log();
    const std::uint64_t made = s_.counters().resumed_packets - log_start_;
    const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(made, log.size()));
    for (std::size_t i = log.size() - n; i < log.size(); ++i) {
      PreemptionReport p;
      p.record = log[i];
      if (auto it = roles_.find(log[i].context); it != roles_.end()) {
        p.context = it->second.first;
        p.priority = it->second.second;
      }
      report_.preemptions.push_back(std::move(p));
    }
  }

  Result<kmd::Allocation> allocate(kmd::Device& dev, std::uint64_t bytes, const char* what) {
    auto a = dev.create_allocation(info(rt_.adapter(), bytes));
    if (!a) return at(fmt::format("create allocation '{}'", what), a.error());
    return a;
  }

  Result<SubmissionId> submit(kmd::Context& ctx, const umd::CommandList& cl, const std::string& what) {
    auto f = s_.submit(ctx, cl);
    if (!f) return at("submit " + what, f.error());
    step("submitted " + what, *f);
    return f;
  }

  Status wait(SubmissionId f, const std::string& what) {
    if (Status st = s_.wait(f, o_.timeout); !st) return at("wait for " + what, st.error());
    step("completed " + what, f);
    return ok_status();
  }

  Status body(kmd::Device& dev) {
    const SceneGeometry& g = o_.geometry;
    if (o_.frames == 0) return Error::invalid("demo: frames must be at least 1");
    auto render = rt_.create_context(dev);
    auto copy = rt_.create_context(dev);
    auto present = rt_.create_context(dev);
    for (auto* c : {&render, &copy, &present})
      if (!*c) return at("create context", c->error());
    SGPU_RETURN_IF_ERROR(role((*render)->get(), "render", kRenderPriority));
    SGPU_RETURN_IF_ERROR(role((*copy)->get(), "copy", kCopyPriority));
    SGPU_RETURN_IF_ERROR(role((*present)->get(), "present", kPresentPriority));
    auto frame = allocate(dev, g.frame_bytes(), "back buffer");
    auto sprite = allocate(dev, g.sprite_bytes(), "sprite");
    auto status = allocate(dev, kStatusBytes, "status");
    auto src = allocate(dev, std::uint64_t{kChunk} * o_.copy_chunks, "copy source");
    auto dst = allocate(dev, std::uint64_t{kChunk} * o_.copy_chunks, "copy destination");
    for (auto* a : {&frame, &sprite, &status, &src, &dst})
      if (!*a) return std::move(*a).error();
    sched::FlipQueueOptions fo;
    fo.surface = kmd::SurfaceDesc{g.width, g.height, g.pitch(), 4};
    fo.vsync_period = o_.vsync_period;
    fo.capture = true;  // each frame as the display showed it
    auto flips_or = sched::FlipQueue::create(rt_, dev, (*present)->get(), fo);
    if (!flips_or) return at("create the flip queue", flips_or.error());
    sched::FlipQueue& flips = **flips_or;
    step(fmt::format("created 3 contexts, 5 allocations and a flip queue of 2 primaries (vsync every {} us)",
                     std::chrono::duration_cast<std::chrono::microseconds>(o_.vsync_period).count()));

    const SceneAllocations sa{frame->handle(), sprite->handle(), status->handle()};
    umd::CommandList background;
    SGPU_RETURN_IF_ERROR(record_background(g, sa, background));
    std::unique_ptr<sched::ScheduledContext> hang;
    std::optional<kmd::Allocation> word;
    SubmissionId f_hang;
    sched::PresentFence last;
    SubmissionId f_copy;
    std::vector<std::pair<std::chrono::nanoseconds, std::chrono::nanoseconds>> render_times;
    for (std::uint32_t n = 0; n < o_.frames; ++n) {
      const std::uint32_t number = n + 1;
      // Vsync-paced: the next frame renders once the previous one is on screen (its Present,
      // which reads the back buffer, is done by then). The copy streams meanwhile, and this
      // frame's render preempts it.
      if (n > 0) {
        if (Status st = flips.wait(flips.history()[n - 1].fence, o_.timeout); !st)
          return at(fmt::format("wait for frame {} on screen", n), st.error());
      }
      // render: the scene, two lists on one context (in order).
      umd::CommandList sprites;
      SGPU_RETURN_IF_ERROR(record_sprites(g, sa, sprites, n));
      const auto render_at = now();
      SGPU_RETURN_IF_ERROR(submit((*render)->get(), background,
                                  fmt::format("render frame {}: background ({} ops)", number, background.operations())));
      SGPU_ASSIGN_OR_RETURN(
          const SubmissionId f_sp,
          submit((*render)->get(), sprites, fmt::format("render frame {}: sprites ({} ops)", number, sprites.operations())));
      if (n == 0) {
        SGPU_ASSIGN_OR_RETURN(f_copy, copy_and_hang(dev, (*copy)->get(), *src, *dst, hang, word, f_hang));
      }

      // present: after the render fence, blt the back buffer into the back primary; the flip
      // queue waits first until that primary has left the screen.
      SGPU_RETURN_IF_ERROR(wait(f_sp, fmt::format("render frame {}", number)));
      render_times.emplace_back(render_at, now());
      sched::PresentRequest pr;
      pr.kind = kmd::PresentKind::Blt;
      pr.src = frame->handle();
      pr.dst = flips.back();
      pr.src_desc = pr.dst_desc = fo.surface;
      pr.src_rect = pr.dst_rect =
          kmd::Rect{0, 0, static_cast<std::int32_t>(g.width), static_cast<std::int32_t>(g.height)};
      const unsigned into = flips.back() == flips.primary(0) ? 0 : 1;
      auto pf = flips.present(pr, o_.timeout);
      if (!pf) return at(fmt::format("present frame {}", number), pf.error());
      last = *pf;
      step(fmt::format("presented frame {}: blt back buffer -> primary {} (present fence {})", number, into, *pf),
           flips.history().back().submission);
    }
    if (Status st = flips.wait(last, o_.timeout); !st) return at("wait for the last flip", st.error());
    step(fmt::format("frame {} on screen: {} frames presented in {} vsyncs", o_.frames, flips.frames_presented(),
                     flips.vsyncs()),
         flips.history().back().submission);
    SGPU_RETURN_IF_ERROR(wait(f_copy, fmt::format("copy: {} x 64 KiB", o_.copy_chunks)));
    report_.copy = f_copy;
    report_.copy_completed_at = now();

    if (o_.inject_hang) {
      // The hang runs only when nothing else waits (the lowest priority): its two overruns come
      // after everything else. Its wait ends with its abort (DeviceLost), or Timeout.
      (void)s_.wait(f_hang, o_.timeout);
      auto q = s_.query(f_hang);
      umd::CommandList again;
      SGPU_RETURN_IF_ERROR(again.nop());
      auto next = s_.submit(hang->get(), again);
      report_.hang_recovered = q && *q == sched::FenceStatus::Aborted && !next &&
                               next.error().code == Errc::DeviceLost && s_.context_lost(hang->get());
      if (!next) report_.hang_context_error = to_string(next.error());
      step(report_.hang_recovered ? "hang: submission aborted, context lost, others unaffected"
                                  : "hang: NOT recovered as expected",
           f_hang);
    }

    // The frames as the display showed them; the copies and the user fence read back.
    for (const sched::FlipRecord& r : flips.history()) {
      FrameReport f;
      f.index = static_cast<std::uint32_t>(report_.frames.size());
      f.fence = r.fence;
      f.present = r.submission;
      f.primary = r.primary;
      f.requested_at = r.requested_at;
      f.presented_at = r.presented_at;
      f.flipped_at = r.flipped_at;
      f.vsync = r.vsync;
      f.bytes = r.scanout;
      if (f.index < render_times.size()) std::tie(f.render_submitted_at, f.render_completed_at) = render_times[f.index];
      report_.frames.push_back(std::move(f));
    }
    report_.frame = report_.frames.back().bytes;
    report_.frames_presented = flips.frames_presented();
    report_.vsyncs = flips.vsyncs();
    auto sp = src->lock();
    auto dp = dst->lock();
    if (!sp || !dp) return at("lock copy allocations", sp ? dp.error() : sp.error());
    // Every word of the destination as the stream wrote it: the pattern, each even chunk's
    // first word stamped with its number (and the source the same).
    const auto* dw = static_cast<const std::uint32_t*>(*dp);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < std::size_t{kChunk} / 4 * o_.copy_chunks; ++i) {
      const std::size_t chunk = i / (kChunk / 4);
      const bool stamped = i % (kChunk / 4) == 0 && chunk % 2 == 0;
      wrong += dw[i] != (stamped ? (0xc0de0000u | static_cast<std::uint32_t>(chunk)) : 0x9e3779b9u);
    }
    report_.copies_ok = wrong == 0 && std::memcmp(*sp, *dp, std::size_t{kChunk} * o_.copy_chunks) == 0;
    SGPU_RETURN_IF_ERROR(src->unlock());
    SGPU_RETURN_IF_ERROR(dst->unlock());
    auto st = status->lock();
    if (!st) return at("lock status", st.error());
    std::memcpy(&report_.user_fence, static_cast<const std::uint8_t*>(*st) + kUserFenceOffset, 8);
    SGPU_RETURN_IF_ERROR(status->unlock());
    step("read back the copies and the user fence");
    return ok_status();
  }

  // During the first frame: the copy stream (one submission: per 64 KiB chunk, fill the source
  // chunk, stamp every other one, copy it: packets of at most 64 KiB, so a preemption stops it
  // soon and it resumes at the chunk it reached) and the hang (a wait nobody satisfies).
  Result<SubmissionId> copy_and_hang(kmd::Device& dev, kmd::Context& copy, kmd::Allocation& src, kmd::Allocation& dst,
                                     std::unique_ptr<sched::ScheduledContext>& hang,
                                     std::optional<kmd::Allocation>& word, SubmissionId& f_hang) {
    umd::CommandList stream;
    for (std::uint32_t i = 0; i < o_.copy_chunks; ++i) {
      SGPU_RETURN_IF_ERROR(stream.fill(src.handle(), i * kChunk, kChunk, 0x9e3779b9u));
      if (i % 2 == 0) {
        const std::uint32_t w = 0xc0de0000u | i;
        SGPU_RETURN_IF_ERROR(stream.write_data(src.handle(), i * kChunk, &w, 1));
      }
      SGPU_RETURN_IF_ERROR(stream.copy(src.handle(), i * kChunk, dst.handle(), i * kChunk, kChunk));
    }
    report_.copy_submitted_at = now();
    SGPU_ASSIGN_OR_RETURN(const SubmissionId f_copy,
                          submit(copy, stream, fmt::format("copy: {} x 64 KiB (fill, stamp, copy)", o_.copy_chunks)));
    if (o_.inject_hang) {
      auto h = rt_.create_context(dev);
      if (!h) return at("create context", h.error());
      hang = std::move(*h);
      SGPU_RETURN_IF_ERROR(role(hang->get(), "hang", kHangPriority));
      SGPU_ASSIGN_OR_RETURN(word, allocate(dev, 4096, "hang word"));
      umd::CommandList stuck;
      SGPU_RETURN_IF_ERROR(stuck.wait(word->handle(), 0, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 64));
      SGPU_ASSIGN_OR_RETURN(f_hang, submit(hang->get(), stuck, "hang: WAIT_MEM on a word nobody writes"));
    }
    return f_copy;
  }

  sched::Runtime& rt_;
  sched::Scheduler& s_;
  const WorkloadOptions& o_;
  WorkloadReport report_;
};

}  // namespace

void configure_scheduler(sched::SchedulerOptions& options) {
  options.tdr_delay = kTdrDelay;
  options.preempt_timeout = kPreemptTimeout;
  options.preempt_quantum = kPreemptQuantum;
}

std::size_t expected_steps(const WorkloadOptions& options) {
  // Set-up; per frame background and sprites submitted, render completed, presented; the copy
  // submitted and completed; the last flip; read-back. The hang adds its submission and its
  // recovery.
  return 4 * std::size_t{options.frames} + 5 + (options.inject_hang ? 2 : 0);
}

Result<WorkloadReport> run_workload(sched::Runtime& runtime, const WorkloadOptions& options) {
  return Run(runtime, options).go();
}

}  // namespace sgpu::demo
