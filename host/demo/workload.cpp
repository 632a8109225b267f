#include "workload.hpp"

#include <cstring>

#include <fmt/format.h>

#include "sgpu/umd/command_list.hpp"

namespace sgpu::demo {
namespace {

constexpr std::uint32_t kChunk = 64 * 1024;

// Every allocation may live in the memory segment or the aperture (memory preferred); CpuVisible
// so the demo can read results back with a lock.
kmd::AllocationInfo info(const kmd::Adapter& adapter, std::uint64_t bytes) {
  kmd::AllocationInfo i;
  i.size = (bytes + 4095) & ~std::uint64_t{4095};
  i.supported_read_segments = i.supported_write_segments = adapter.allocation_segments();
  auto mem = adapter.memory_segment();
  i.preferred_segment = kmd::SegmentPreference::of({mem ? *mem : adapter.allocation_segments().first()});
  i.flags.value = kmd::AllocationInfoFlags::kCpuVisible;
  return i;
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
    Status body_status = body(*dev);
    if (o_.trace) (void)s_.set_trace(nullptr);
    SGPU_RETURN_IF_ERROR(body_status);
    auto c1 = rt_.device().cycle_counter();
    if (!c1) return at("cycle counter", c1.error());
    report_.cycles = *c1 - *c0;
    report_.simulated = now() - t0;
    report_.counters = s_.counters();
    report_.dma_completed_reports = s_.reporter().counters().reported;
    return std::move(report_);
  }

 private:
  std::chrono::nanoseconds now() { return rt_.device().transport().now(); }
  void step(std::string what, SubmissionId fence = {}) {
    report_.steps.push_back({std::move(what), now(), fence});
    if (o_.on_step) o_.on_step(report_.steps.size(), expected_steps(o_));
  }
  void name(const kmd::Context& ctx, const char* role) {
    if (o_.trace) o_.trace->name_context(ctx.id(), fmt::format("context {} ({}) queue", ++named_, role));
  }
  unsigned named_ = 0;

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
    name((*render)->get(), "render");
    name((*copy)->get(), "copy");
    name((*present)->get(), "present");
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
    for (std::uint32_t n = 0; n < o_.frames; ++n) {
      const std::uint32_t number = n + 1;
      // The previous frame's Present reads the back buffer: it must be done before this frame
      // overwrites it (its flip need not be: that frame stays on screen meanwhile).
      // Asking the flip queue right after arms that frame's flip at once (it sees Presents
      // complete only when called), so it goes on screen at the next vsync.
      if (n > 0) {
        if (Status st = s_.wait(flips.history()[n - 1].submission, o_.timeout); !st)
          return at(fmt::format("wait for the Present of frame {}", n), st.error());
        if (auto q = flips.query(flips.history()[n - 1].fence); !q)
          return at(fmt::format("query the flip of frame {}", n), q.error());
      }
      // render: the scene, two lists on one context (in order).
      umd::CommandList sprites;
      SGPU_RETURN_IF_ERROR(record_sprites(g, sa, sprites, n));
      SGPU_RETURN_IF_ERROR(submit((*render)->get(), background,
                                  fmt::format("render frame {}: background ({} ops)", number, background.operations())));
      SGPU_ASSIGN_OR_RETURN(
          const SubmissionId f_sp,
          submit((*render)->get(), sprites, fmt::format("render frame {}: sprites ({} ops)", number, sprites.operations())));
      SubmissionId f_copy;
      if (n == 0) {
        SGPU_ASSIGN_OR_RETURN(f_copy, copy_and_hang(dev, (*copy)->get(), *src, *dst, hang, word, f_hang));
      }

      // present: after the render fence, blt the back buffer into the back primary; the flip
      // queue waits first until that primary has left the screen.
      SGPU_RETURN_IF_ERROR(wait(f_sp, fmt::format("render frame {}", number)));
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
      if (n == 0) SGPU_RETURN_IF_ERROR(wait(f_copy, "copy"));
    }
    if (Status st = flips.wait(last, o_.timeout); !st) return at("wait for the last flip", st.error());
    step(fmt::format("frame {} on screen: {} frames presented in {} vsyncs", o_.frames, flips.frames_presented(),
                     flips.vsyncs()),
         flips.history().back().submission);

    if (o_.inject_hang) {
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
      report_.frames.push_back(std::move(f));
    }
    report_.frame = report_.frames.back().bytes;
    report_.frames_presented = flips.frames_presented();
    report_.vsyncs = flips.vsyncs();
    auto sp = src->lock();
    auto dp = dst->lock();
    if (!sp || !dp) return at("lock copy allocations", sp ? dp.error() : sp.error());
    report_.copies_ok = std::memcmp(*sp, *dp, std::size_t{kChunk} * o_.copy_chunks) == 0 &&
                        static_cast<const std::uint32_t*>(*dp)[kChunk / 4 * 2] == (0xc0de0000u | 2);
    SGPU_RETURN_IF_ERROR(src->unlock());
    SGPU_RETURN_IF_ERROR(dst->unlock());
    auto st = status->lock();
    if (!st) return at("lock status", st.error());
    std::memcpy(&report_.user_fence, static_cast<const std::uint8_t*>(*st) + kUserFenceOffset, 8);
    SGPU_RETURN_IF_ERROR(status->unlock());
    step("read back the copies and the user fence");
    return ok_status();
  }

  // During the first frame: the copy context's source pattern, the hang (a wait nobody
  // satisfies, between the copy context's two submissions), the chunked copies.
  Result<SubmissionId> copy_and_hang(kmd::Device& dev, kmd::Context& copy, kmd::Allocation& src, kmd::Allocation& dst,
                                     std::unique_ptr<sched::ScheduledContext>& hang,
                                     std::optional<kmd::Allocation>& word, SubmissionId& f_hang) {
    umd::CommandList fill, chunks;
    SGPU_RETURN_IF_ERROR(fill.fill(src.handle(), 0, kChunk * o_.copy_chunks, 0x9e3779b9u));
    for (std::uint32_t i = 0; i < o_.copy_chunks; i += 2) {
      const std::uint32_t w = 0xc0de0000u | i;
      SGPU_RETURN_IF_ERROR(fill.write_data(src.handle(), i * kChunk, &w, 1));
    }
    for (std::uint32_t i = 0; i < o_.copy_chunks; ++i)
      SGPU_RETURN_IF_ERROR(chunks.copy(src.handle(), i * kChunk, dst.handle(), i * kChunk, kChunk));
    SGPU_RETURN_IF_ERROR(submit(copy, fill, "copy: source pattern"));
    if (o_.inject_hang) {
      auto h = rt_.create_context(dev);
      if (!h) return at("create context", h.error());
      hang = std::move(*h);
      name(hang->get(), "hang");
      SGPU_ASSIGN_OR_RETURN(word, allocate(dev, 4096, "hang word"));
      umd::CommandList stuck;
      SGPU_RETURN_IF_ERROR(stuck.wait(word->handle(), 0, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 64));
      SGPU_ASSIGN_OR_RETURN(f_hang, submit(hang->get(), stuck, "hang: WAIT_MEM on a word nobody writes"));
    }
    return submit(copy, chunks, fmt::format("copy: {} x 64 KiB", o_.copy_chunks));
  }

  sched::Runtime& rt_;
  sched::Scheduler& s_;
  const WorkloadOptions& o_;
  WorkloadReport report_;
};

}  // namespace

std::size_t expected_steps(const WorkloadOptions& options) {
  // Set-up; per frame background and sprites submitted, render completed, presented; copy
  // pattern and chunks submitted, copy completed; the last flip; read-back. The hang adds its
  // submission and its recovery.
  return 4 * std::size_t{options.frames} + 6 + (options.inject_hang ? 2 : 0);
}

Result<WorkloadReport> run_workload(sched::Runtime& runtime, const WorkloadOptions& options) {
  return Run(runtime, options).go();
}

}  // namespace sgpu::demo
