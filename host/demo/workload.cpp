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
    auto render = rt_.create_context(dev);
    auto copy = rt_.create_context(dev);
    auto present = rt_.create_context(dev);
    for (auto* c : {&render, &copy, &present})
      if (!*c) return at("create context", c->error());
    name((*render)->get(), "render");
    name((*copy)->get(), "copy");
    name((*present)->get(), "present");
    auto frame = allocate(dev, g.frame_bytes(), "back buffer");
    auto primary = allocate(dev, g.frame_bytes(), "primary");
    auto sprite = allocate(dev, g.sprite_bytes(), "sprite");
    auto status = allocate(dev, kStatusBytes, "status");
    auto src = allocate(dev, std::uint64_t{kChunk} * o_.copy_chunks, "copy source");
    auto dst = allocate(dev, std::uint64_t{kChunk} * o_.copy_chunks, "copy destination");
    for (auto* a : {&frame, &primary, &sprite, &status, &src, &dst})
      if (!*a) return std::move(*a).error();
    step("created 3 contexts and 6 allocations");

    // render: the scene, two lists on one context (in order).
    const SceneAllocations sa{frame->handle(), sprite->handle(), status->handle()};
    umd::CommandList background, sprites;
    SGPU_RETURN_IF_ERROR(record_background(g, sa, background));
    SGPU_RETURN_IF_ERROR(record_sprites(g, sa, sprites));
    SGPU_RETURN_IF_ERROR(
        submit((*render)->get(), background, fmt::format("render: background ({} ops)", background.operations())));
    SGPU_ASSIGN_OR_RETURN(
        const SubmissionId f_sp,
        submit((*render)->get(), sprites, fmt::format("render: sprites ({} ops)", sprites.operations())));

    // copy: a source pattern, then chunked copies, on its own context.
    umd::CommandList fill, chunks;
    SGPU_RETURN_IF_ERROR(fill.fill(src->handle(), 0, kChunk * o_.copy_chunks, 0x9e3779b9u));
    for (std::uint32_t i = 0; i < o_.copy_chunks; i += 2) {
      const std::uint32_t word = 0xc0de0000u | i;
      SGPU_RETURN_IF_ERROR(fill.write_data(src->handle(), i * kChunk, &word, 1));
    }
    for (std::uint32_t i = 0; i < o_.copy_chunks; ++i)
      SGPU_RETURN_IF_ERROR(chunks.copy(src->handle(), i * kChunk, dst->handle(), i * kChunk, kChunk));
    SGPU_RETURN_IF_ERROR(submit((*copy)->get(), fill, "copy: source pattern"));

    // hang: a wait nobody satisfies, between the copy context's two submissions.
    std::unique_ptr<sched::ScheduledContext> hang;
    std::optional<kmd::Allocation> word;
    SubmissionId f_hang;
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
    SGPU_ASSIGN_OR_RETURN(auto f_copy,
                          submit((*copy)->get(), chunks, fmt::format("copy: {} x 64 KiB", o_.copy_chunks)));

    // present: after the render fence, blt the back buffer to the primary.
    SGPU_RETURN_IF_ERROR(wait(f_sp, "render"));
    sched::PresentRequest pr;
    pr.kind = kmd::PresentKind::Blt;
    pr.src = frame->handle();
    pr.dst = primary->handle();
    pr.src_desc = pr.dst_desc = kmd::SurfaceDesc{g.width, g.height, g.pitch(), 4};
    pr.src_rect = pr.dst_rect = kmd::Rect{0, 0, static_cast<std::int32_t>(g.width), static_cast<std::int32_t>(g.height)};
    auto f_present = s_.present((*present)->get(), pr);
    if (!f_present) return at("present", f_present.error());
    step("submitted present: blt back buffer -> primary", *f_present);
    SGPU_RETURN_IF_ERROR(wait(f_copy, "copy"));
    SGPU_RETURN_IF_ERROR(wait(*f_present, "present"));

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

    // Read back: the primary, the copies, the user fence.
    auto p = primary->lock();
    if (!p) return at("lock primary", p.error());
    const auto* bytes = static_cast<const std::uint8_t*>(*p);
    report_.frame.assign(bytes, bytes + g.frame_bytes());
    SGPU_RETURN_IF_ERROR(primary->unlock());
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
    step("read back the primary surface, the copies and the user fence");
    return ok_status();
  }

  sched::Runtime& rt_;
  sched::Scheduler& s_;
  const WorkloadOptions& o_;
  WorkloadReport report_;
};

}  // namespace

std::size_t expected_steps(const WorkloadOptions& options) {
  // Set-up; background, sprites, copy pattern, copy chunks and present submitted; render, copy
  // and present completed; read-back. The hang adds its submission and its recovery.
  return 10 + (options.inject_hang ? 2 : 0);
}

Result<WorkloadReport> run_workload(sched::Runtime& runtime, const WorkloadOptions& options) {
  return Run(runtime, options).go();
}

}  // namespace sgpu::demo
