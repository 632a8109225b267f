// FlipQueue: two primaries, present fences, vsync (see sgpu/sched/flip_queue.hpp).
#include "sgpu/sched/flip_queue.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

std::string_view to_string(PresentStatus status) {
  switch (status) {
    case PresentStatus::Rendering: return "rendering";
    case PresentStatus::Armed: return "armed";
    case PresentStatus::OnScreen: return "on screen";
    case PresentStatus::Replaced: return "replaced";
    case PresentStatus::Dropped: return "dropped";
  }
  return "?";
}

Result<std::unique_ptr<FlipQueue>> FlipQueue::create(Runtime& runtime, kmd::Device& device, kmd::Context& context,
                                                     FlipQueueOptions o) {
  const kmd::SurfaceDesc& s = o.surface;
  if (s.width == 0 || s.height == 0 || s.bytes_per_pixel == 0)
    return Error::invalid("flip queue: the primaries must have pixels ({}x{}, {} bytes per pixel)", s.width, s.height,
                          s.bytes_per_pixel);
  if (std::uint64_t{s.pitch} < std::uint64_t{s.width} * s.bytes_per_pixel)
    return Error::invalid("flip queue: pitch {} is below width {} x {} bytes per pixel", s.pitch, s.width,
                          s.bytes_per_pixel);
  if (o.vsync_period < std::chrono::nanoseconds{0})
    return Error::invalid("flip queue: negative vsync period {} ns", o.vsync_period.count());
  const kmd::Adapter& adapter = runtime.adapter();
  const kmd::SegmentSet scan_out = adapter.aperture_segments() & adapter.allocation_segments();
  if (scan_out.empty())
    return Error::unsupported("flip queue: the adapter has no aperture segment for allocations to scan out from");

  std::unique_ptr<FlipQueue> q(new FlipQueue(runtime, context, std::move(o)));
  const std::uint64_t bytes = (std::uint64_t{s.pitch} * s.height + adapter.page_size() - 1) / adapter.page_size() * adapter.page_size();
  const auto info = kmd::AllocationInfo::placed(bytes, scan_out, scan_out.first(), kmd::AllocationInfoFlags::kCpuVisible);
  for (unsigned i = 0; i < 2; ++i) {
    auto a = device.create_allocation(info);
    if (!a) return Error{a.error().code, fmt::format("flip queue: primary {}: {}", i, a.error().message),
                         Touched{a.error().hardware_touched}};
    q->primaries_[i] = std::move(*a);
    // The display reads a primary while it is on screen: it must not move (WDDM pins the primary).
    if (auto pinned = runtime.memory_manager().pin(q->primaries_[i].handle()); !pinned)
      return Error{pinned.error().code, fmt::format("flip queue: pin primary {}: {}", i, pinned.error().message),
                   Touched{pinned.error().hardware_touched}};
  }
  return q;
}

FlipQueue::FlipQueue(Runtime& runtime, kmd::Context& context, FlipQueueOptions options)
    : runtime_(runtime), scheduler_(runtime.scheduler()), context_(context), options_(std::move(options)) {
  epoch_ = now();
  next_vsync_ = epoch_ + options_.vsync_period;
}

FlipQueue::~FlipQueue() {
  for (auto& p : primaries_)
    if (p) (void)runtime_.memory_manager().unpin(p.handle());
}

std::chrono::nanoseconds FlipQueue::now() const { return runtime_.device().transport().now(); }

std::optional<std::chrono::nanoseconds> FlipQueue::next_vsync_at() const {
  if (options_.vsync_period.count() == 0) return std::nullopt;
  return next_vsync_;
}

Status FlipQueue::capture(FlipRecord& r) {
  kmd::Allocation& p = primaries_[r.primary];
  SGPU_ASSIGN_OR_RETURN(void* cpu, p.lock());
  const auto* bytes = static_cast<const std::uint8_t*>(cpu);
  r.scanout.assign(bytes, bytes + std::size_t{options_.surface.pitch} * options_.surface.height);
  return p.unlock();
}

Status FlipQueue::on_vsync(std::chrono::nanoseconds at) {
  ++vsyncs_;
  // One flip per vsync, in present order: the oldest, once its Present has completed.
  if (unflipped_.empty()) return ok_status();
  FlipRecord& r = records_[unflipped_.front().value() - 1];
  if (r.status != PresentStatus::Armed) return ok_status();
  unflipped_.pop_front();
  if (screen_fence_) records_[screen_fence_->value() - 1].status = PresentStatus::Replaced;
  r.status = PresentStatus::OnScreen;
  r.flipped_at = at;
  r.vsync = vsyncs_;
  screen_ = r.primary;
  screen_fence_ = r.fence;
  ++frames_;
  // On the present context's row of a timeline trace: when each frame went on screen.
  if (trace::Recorder* tr = scheduler_.trace())
    tr->instant(trace::Track::context_queue(context_.id()), "flip (vsync)", trace::TracePoint::host(at),
                {{"present_fence", static_cast<std::int64_t>(r.fence.value())},
                 {"primary", static_cast<std::int64_t>(r.primary)},
                 {"vsync", static_cast<std::int64_t>(vsyncs_)}});
  return options_.capture ? capture(r) : ok_status();
}

Status FlipQueue::observe() {
  SGPU_RETURN_IF_ERROR(scheduler_.flush());  // interrupts pending: Presents that completed
  const auto t = now();
  // Vsyncs that passed since the last call: flips armed before them take effect at them (a flip
  // armed now was seen complete only now, after those vsyncs).
  const auto period = options_.vsync_period;
  while (period.count() > 0 && next_vsync_ <= t) {
    const bool armed = !unflipped_.empty() && records_[unflipped_.front().value() - 1].status == PresentStatus::Armed;
    if (armed) {
      SGPU_RETURN_IF_ERROR(on_vsync(next_vsync_));
      next_vsync_ += period;
    } else {  // nothing can flip at any of them: count them at once (a long idle, a short period)
      const std::uint64_t passed = static_cast<std::uint64_t>((t - next_vsync_) / period) + 1;
      vsyncs_ += passed;
      next_vsync_ += period * static_cast<std::int64_t>(passed);
    }
  }
  for (auto it = unflipped_.begin(); it != unflipped_.end();) {
    FlipRecord& r = records_[it->value() - 1];
    if (r.status == PresentStatus::Rendering) {
      SGPU_ASSIGN_OR_RETURN(const FenceStatus s, scheduler_.query(r.submission));
      if (s == FenceStatus::Completed) {
        r.status = PresentStatus::Armed;
        r.armed_at = t;
      } else if (s == FenceStatus::Aborted) {
        r.status = PresentStatus::Dropped;
        Status why = scheduler_.wait(r.submission, std::chrono::nanoseconds{0});
        dropped_.emplace(r.fence, why ? Error::make(Errc::Aborted, Touched::Hardware, "aborted") : why.error());
        // The newest present's primary is written next again (nothing will flip to it).
        if (r.fence.value() == records_.size()) next_ = r.primary;
        it = unflipped_.erase(it);
        continue;
      }
    }
    ++it;
  }
  return ok_status();
}

std::optional<PresentFence> FlipQueue::holder(unsigned index) const {
  if (screen_ == index) return screen_fence_;
  for (PresentFence f : unflipped_)
    if (records_[f.value() - 1].primary == index) return f;
  return std::nullopt;
}

Status FlipQueue::advance(PresentFence fence, std::chrono::nanoseconds deadline, const char* what) {
  const FlipRecord& r = records_[fence.value() - 1];
  const auto t = now();
  if (r.status == PresentStatus::Rendering) {
    Status s = scheduler_.wait(r.submission, std::max(deadline - t, std::chrono::nanoseconds{0}));
    if (s) return s;
    if (s.error().code == Errc::Timeout)
      return Error::make(Errc::Timeout, Touched::Hardware, "flip queue: {}: present fence {} (submission {}) still "
                         "rendering: {}", what, fence, r.submission, s.error().message);
    return ok_status();  // aborted: the next observe() drops it
  }
  if (r.status != PresentStatus::Armed) return ok_status();
  if (options_.vsync_period.count() == 0)
    return Error::busy("flip queue: {}: present fence {} is armed and flips at the next vsync, which only vsync() "
                       "gives (the queue has no vsync period)", what, fence);
  if (t >= deadline)
    return Error::make(Errc::Timeout, Touched::Hardware,
                       "flip queue: {}: present fence {} is armed, its vsync at {} ns is after the deadline", what,
                       fence, next_vsync_.count());
  return scheduler_.run_until(std::min(next_vsync_, deadline));
}

Result<AllocationHandle> FlipQueue::acquire(std::chrono::nanoseconds timeout) {
  const auto deadline = now() + timeout;
  for (;;) {
    SGPU_RETURN_IF_ERROR(observe());
    const auto h = holder(next_);
    if (!h) return back();
    // Held by a frame not yet on screen: wait for its flip; on screen: for the next flip.
    const bool shown = records_[h->value() - 1].status == PresentStatus::OnScreen;
    if (shown && unflipped_.empty())
      return Error::busy("flip queue: primary {} is on screen and no flip is queued to replace it", next_);
    const PresentFence target = shown ? unflipped_.front() : *h;
    const std::string what = fmt::format("primary {} is {} (present fence {})", next_,
                                         shown ? "on screen" : "waiting for its flip", *h);
    if (now() >= deadline)
      return Error::make(Errc::Timeout, Touched::Hardware,
                         "flip queue: {} after {} ns: the flip of present fence {} has not happened ({})", what,
                         timeout.count(), target, to_string(records_[target.value() - 1].status));
    SGPU_RETURN_IF_ERROR(advance(target, deadline, what.c_str()));
  }
}

Result<PresentFence> FlipQueue::present(const PresentRequest& r, std::chrono::nanoseconds timeout) {
  if (r.dst != primary(0) && r.dst != primary(1))
    return Error::invalid("flip queue: present into allocation {:#x}, which is not one of its primaries ({:#x}, {:#x})",
                          r.dst.value, primary(0).value, primary(1).value);
  if (r.dst != back())
    return Error::invalid("flip queue: present into primary {}, which holds the last presented frame; the next "
                          "present writes primary {} (back())", next_ ^ 1, next_);
  const kmd::SurfaceDesc& s = options_.surface;
  if (r.dst_desc.width != s.width || r.dst_desc.height != s.height || r.dst_desc.pitch != s.pitch ||
      r.dst_desc.bytes_per_pixel != s.bytes_per_pixel)
    return Error::invalid("flip queue: present destination described as {}x{} pitch {} ({} B/pixel); the primaries "
                          "are {}x{} pitch {} ({} B/pixel)", r.dst_desc.width, r.dst_desc.height, r.dst_desc.pitch,
                          r.dst_desc.bytes_per_pixel, s.width, s.height, s.pitch, s.bytes_per_pixel);
  const auto requested = now();
  SGPU_RETURN_IF_ERROR(acquire(timeout));
  if (r.dst != back())  // a dropped present gave its primary back while we waited
    return Error::invalid("flip queue: the back primary changed to {} while waiting (a present was dropped)", next_);
  SGPU_ASSIGN_OR_RETURN(const SubmissionId sub, scheduler_.present(context_, r));
  FlipRecord rec;
  rec.fence = PresentFence{records_.size() + 1};
  rec.submission = sub;
  rec.primary = next_;
  rec.requested_at = requested;
  rec.presented_at = now();
  records_.push_back(std::move(rec));
  unflipped_.push_back(records_.back().fence);
  next_ ^= 1;
  return records_.back().fence;
}

Result<PresentStatus> FlipQueue::query(PresentFence fence) {
  if (!fence || fence.value() > records_.size())
    return Error::invalid("flip queue: present fence {} was never handed out (last {})", fence, records_.size());
  SGPU_RETURN_IF_ERROR(observe());
  return records_[fence.value() - 1].status;
}

Status FlipQueue::wait(PresentFence fence, std::chrono::nanoseconds timeout) {
  SGPU_RETURN_IF_ERROR(query(fence));
  const auto deadline = now() + timeout;
  for (;;) {
    SGPU_RETURN_IF_ERROR(observe());
    const FlipRecord& r = records_[fence.value() - 1];
    if (r.status == PresentStatus::OnScreen || r.status == PresentStatus::Replaced) return ok_status();
    if (r.status == PresentStatus::Dropped) return dropped_.at(fence);
    if (now() >= deadline)
      return Error::make(Errc::Timeout, Touched::Hardware, "flip queue: present fence {} not flipped within {} ns ({})",
                         fence, timeout.count(), to_string(r.status));
    SGPU_RETURN_IF_ERROR(advance(fence, deadline, "wait"));
  }
}

Status FlipQueue::vsync() {
  SGPU_RETURN_IF_ERROR(observe());
  return on_vsync(now());
}

}  // namespace sgpu::sched
