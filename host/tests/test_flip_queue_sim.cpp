// The flip queue (present with vsync semantics) end to end on the Verilated RTL: two primaries
// alternate, present fences complete in present order at vsyncs, the frame counter counts,
// presenting into the primary on screen waits until a flip takes it off, and misuse is refused
// with a typed error before anything is submitted.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "sgpu/sched/flip_queue.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kWidth = 64, kHeight = 16;

struct Rig {
  std::unique_ptr<Runtime> rt;
  std::optional<kmd::Device> dev;
  std::unique_ptr<ScheduledContext> ctx;
  std::unique_ptr<FlipQueue> queue;

  explicit Rig(std::chrono::nanoseconds period = {}, bool capture = true) {
    RuntimeOptions o;
    o.device.aperture.table_pages = 2048;
    o.kernel_window_pages = kernel_window_pages_for(16);
    o.scheduler.tdr_delay = 300us;
    o.scheduler.preempt_timeout = 50us;
    auto r = Runtime::open(test::open_tb_transport(test::e2e_backend()), std::move(o));
    if (!r) FAIL(to_string(r.error()));
    rt = std::move(*r);
    auto d = rt->adapter().create_device({});
    if (!d) FAIL(to_string(d.error()));
    dev.emplace(std::move(*d));
    auto c = rt->create_context(*dev);
    if (!c) FAIL(to_string(c.error()));
    ctx = std::move(*c);
    auto q = FlipQueue::create(*rt, *dev, ctx->get(), options(period, capture));
    if (!q) FAIL(to_string(q.error()));
    queue = std::move(*q);
  }
  ~Rig() {
    queue.reset();
    ctx.reset();
    dev.reset();
  }

  static FlipQueueOptions options(std::chrono::nanoseconds period, bool capture) {
    FlipQueueOptions o;
    o.surface = kmd::SurfaceDesc{kWidth, kHeight, kWidth * 4, 4};
    o.vsync_period = period;
    o.capture = capture;
    return o;
  }

  // A colour fill of the whole back primary.
  static PresentRequest fill(AllocationHandle dst, std::uint32_t colour) {
    PresentRequest r;
    r.kind = kmd::PresentKind::ColorFill;
    r.dst = dst;
    r.color = colour;
    r.dst_desc = kmd::SurfaceDesc{kWidth, kHeight, kWidth * 4, 4};
    r.dst_rect = kmd::Rect{0, 0, kWidth, kHeight};
    return r;
  }
  PresentFence present(std::uint32_t colour) {
    auto f = queue->present(fill(queue->back(), colour), 5ms);
    if (!f) FAIL(to_string(f.error()));
    return *f;
  }
};

std::uint32_t first_pixel(const FlipRecord& r) {
  std::uint32_t v = 0;
  REQUIRE(r.scanout.size() == std::size_t{kWidth} * 4 * kHeight);
  std::memcpy(&v, r.scanout.data() + r.scanout.size() - 4, 4);  // the last pixel: the whole fill ran
  return v;
}

}  // namespace

TEST_CASE("flip queue sim: explicit vsync: primaries alternate, fences complete in order, the frame counter counts",
          "[flip][sim]") {
  Rig rig;
  FlipQueue& q = *rig.queue;
  Scheduler& s = rig.rt->scheduler();
  CHECK(q.back() == q.primary(0));
  CHECK_FALSE(q.on_screen());
  CHECK_FALSE(q.next_vsync_at());

  const PresentFence f1 = rig.present(0xff100000u);
  CHECK(f1 == 1);
  CHECK(q.back() == q.primary(1));
  // With no vsync period the flip needs a tick: waiting says so once the Present completed.
  auto w = q.wait(f1, 5ms);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::Busy);
  CHECK(*q.query(f1) == PresentStatus::Armed);
  CHECK(q.frames_presented() == 0);
  REQUIRE(q.vsync());
  CHECK(*q.query(f1) == PresentStatus::OnScreen);
  CHECK(q.on_screen() == 0u);
  CHECK(q.frames_presented() == 1);
  REQUIRE(q.wait(f1, 1ms));

  // Frame 2 into primary 1 while frame 1 is on screen.
  const PresentFence f2 = rig.present(0xff200000u);
  REQUIRE_FALSE(q.wait(f2, 5ms));  // its Present completed; armed
  // Frame 3 would go into primary 0, still on screen until frame 2 flips: only a tick frees it.
  const auto submissions = s.counters().submissions;
  auto busy = q.present(Rig::fill(q.back(), 0xff300000u), 5ms);
  REQUIRE_FALSE(busy);
  CHECK(busy.error().code == Errc::Busy);
  CHECK(busy.error().message.find("primary 0 is on screen") != std::string::npos);
  CHECK(s.counters().submissions == submissions);  // nothing was submitted
  auto acq = q.acquire(1ms);
  REQUIRE_FALSE(acq);
  CHECK(acq.error().code == Errc::Busy);

  REQUIRE(q.vsync());
  CHECK(*q.query(f1) == PresentStatus::Replaced);
  CHECK(*q.query(f2) == PresentStatus::OnScreen);
  CHECK(q.on_screen() == 1u);
  auto acquired = q.acquire(1ms);
  REQUIRE(acquired);
  CHECK(*acquired == q.primary(0));
  const PresentFence f3 = rig.present(0xff300000u);
  REQUIRE_FALSE(q.wait(f3, 5ms));
  REQUIRE(q.vsync());
  REQUIRE(q.wait(f3, 1ms));
  // A vsync with nothing armed flips nothing.
  REQUIRE(q.vsync());
  CHECK(q.frames_presented() == 3);
  CHECK(q.vsyncs() == 4);

  const auto& h = q.history();
  REQUIRE(h.size() == 3);
  const unsigned primaries[] = {0, 1, 0};
  const std::uint32_t colours[] = {0xff100000u, 0xff200000u, 0xff300000u};
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(h[i].fence == i + 1);
    CHECK(h[i].primary == primaries[i]);
    CHECK(h[i].vsync == i + 1);
    CHECK(first_pixel(h[i]) == colours[i]);  // what the display showed is what that present drew
    CHECK(h[i].armed_at >= h[i].presented_at);
    CHECK(h[i].flipped_at >= h[i].armed_at);
    if (i > 0) CHECK(h[i].flipped_at > h[i - 1].flipped_at);
  }
}

TEST_CASE("flip queue sim: periodic vsync: presenting into the primary on screen waits until it leaves the screen",
          "[flip][sim]") {
  constexpr auto kPeriod = 40us;
  Rig rig(kPeriod);
  FlipQueue& q = *rig.queue;
  REQUIRE(q.next_vsync_at());
  const auto first_vsync = *q.next_vsync_at();
  const PresentFence f1 = rig.present(0xff010101u);
  const PresentFence f2 = rig.present(0xff020202u);  // primary 1: nothing is on screen yet
  // Primary 0 holds frame 1: frame 3 waits until frame 1 flipped and frame 2 replaced it.
  const PresentFence f3 = rig.present(0xff030303u);
  const auto& h = q.history();
  REQUIRE(h.size() == 3);
  CHECK(h[1].status == PresentStatus::OnScreen);
  CHECK(h[0].status == PresentStatus::Replaced);
  CHECK(h[2].presented_at >= h[1].flipped_at);  // rendering into primary 0 started after it left the screen
  REQUIRE(q.wait(f3, 5ms));
  CHECK(q.frames_presented() == 3);
  CHECK(*q.query(f1) == PresentStatus::Replaced);
  CHECK(*q.query(f2) == PresentStatus::Replaced);
  CHECK(q.on_screen() == 0u);
  for (std::size_t i = 0; i < 3; ++i) {
    // Each flip took effect at a vsync: a whole number of periods after the first, one per vsync.
    CHECK((h[i].flipped_at - first_vsync) % kPeriod == std::chrono::nanoseconds{0});
    CHECK(h[i].flipped_at > h[i].armed_at);
    CHECK(first_pixel(h[i]) == (0xff000000u | 0x010101u * static_cast<std::uint32_t>(i + 1)));
    if (i > 0) CHECK(h[i].vsync > h[i - 1].vsync);
  }
  // A deadline before the next vsync: a typed timeout naming the fence.
  const PresentFence f4 = rig.present(0xff040404u);
  auto t = q.wait(f4, 1us);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::Timeout);
  CHECK(t.error().message.find("present fence 4") != std::string::npos);
  REQUIRE(q.wait(f4, 5ms));
  CHECK(q.frames_presented() == 4);
  // Every vsync up to now is counted, also those that passed while nothing was armed.
  Transport& clock = rig.rt->device().transport();
  REQUIRE(rig.rt->scheduler().run_until(clock.now() + 10 * kPeriod));
  REQUIRE(q.query(f4));
  CHECK(q.vsyncs() == static_cast<std::uint64_t>((clock.now() - first_vsync) / kPeriod) + 1);
  CHECK(q.frames_presented() == 4);
  CHECK(*q.next_vsync_at() > clock.now());
}

TEST_CASE("flip queue sim: misuse is refused with a typed error and submits nothing", "[flip][sim]") {
  Rig rig;
  FlipQueue& q = *rig.queue;
  Scheduler& s = rig.rt->scheduler();
  const auto segments = rig.rt->adapter().allocation_segments();
  auto other = rig.dev->create_allocation(kmd::AllocationInfo::placed(4096, segments, segments.first(), kmd::AllocationInfoFlags::kCpuVisible));
  REQUIRE(other);
  const auto submissions = s.counters().submissions;

  auto not_primary = q.present(Rig::fill(other->handle(), 1), 1ms);
  REQUIRE_FALSE(not_primary);
  CHECK(not_primary.error().code == Errc::InvalidArgument);
  CHECK(not_primary.error().message.find("not one of its primaries") != std::string::npos);

  auto front = q.present(Rig::fill(q.primary(1), 1), 1ms);  // the back primary is 0
  REQUIRE_FALSE(front);
  CHECK(front.error().code == Errc::InvalidArgument);
  CHECK(front.error().message.find("the next present writes primary 0") != std::string::npos);

  PresentRequest wrong = Rig::fill(q.back(), 1);
  wrong.dst_desc.pitch = kWidth * 8;
  auto size = q.present(wrong, 1ms);
  REQUIRE_FALSE(size);
  CHECK(size.error().code == Errc::InvalidArgument);

  auto never = q.query(PresentFence{1});
  REQUIRE_FALSE(never);
  CHECK(never.error().code == Errc::InvalidArgument);
  CHECK_FALSE(q.wait(PresentFence{}, 1ms));
  CHECK(s.counters().submissions == submissions);
  CHECK(q.history().empty());
  CHECK(q.back() == q.primary(0));

  // Bad surfaces and periods at creation.
  for (auto bad : {kmd::SurfaceDesc{0, 16, 256, 4}, kmd::SurfaceDesc{64, 16, 128, 4}}) {
    FlipQueueOptions o = Rig::options({}, false);
    o.surface = bad;
    auto r = FlipQueue::create(*rig.rt, *rig.dev, rig.ctx->get(), o);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
  }
  FlipQueueOptions negative = Rig::options(-1us, false);
  auto r = FlipQueue::create(*rig.rt, *rig.dev, rig.ctx->get(), negative);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
}

TEST_CASE("flip queue sim: a present whose context is lost is dropped: its fence fails, its primary is reused",
          "[flip][sim][tdr]") {
  Rig rig(40us);
  FlipQueue& q = *rig.queue;
  Scheduler& s = rig.rt->scheduler();
  const PresentFence f1 = rig.present(0xff0000ffu);
  REQUIRE(q.wait(f1, 5ms));
  // A WAIT_MEM nobody satisfies ahead of the next Present on the same context: TDR puts the
  // context in error and its queued Present is cancelled.
  const auto segments = rig.rt->adapter().allocation_segments();
  auto word = rig.dev->create_allocation(kmd::AllocationInfo::placed(4096, segments, segments.first()));
  REQUIRE(word);
  umd::CommandList stuck;
  REQUIRE(stuck.wait(word->handle(), 0, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 64));
  auto hang = s.submit(rig.ctx->get(), stuck);
  REQUIRE(hang);
  const PresentFence f2 = rig.present(0xff00ff00u);
  CHECK(q.history()[1].primary == 1);
  auto w = q.wait(f2, 5ms);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::DeviceLost);
  CHECK(*q.query(f2) == PresentStatus::Dropped);
  CHECK(q.back() == q.primary(1));  // nothing flips to primary 1: the next present writes it again
  CHECK(q.on_screen() == 0u);
  CHECK(q.frames_presented() == 1);
}

TEST_CASE("flip queue sim: deadlines: a primary that stays on screen and a Present still running time out, named",
          "[flip][sim]") {
  Rig rig(200us);
  FlipQueue& q = *rig.queue;
  Scheduler& s = rig.rt->scheduler();
  const PresentFence f1 = rig.present(0xff111111u);
  // Right after present(): the Present cannot have run yet.
  auto early = q.wait(f1, 1ns);
  REQUIRE_FALSE(early);
  CHECK(early.error().code == Errc::Timeout);
  CHECK(early.error().message.find("present fence 1") != std::string::npos);
  rig.present(0xff222222u);
  // Primary 0 holds frame 1 until frame 2's flip, at the earliest two vsyncs away.
  const auto submissions = s.counters().submissions;
  auto held = q.present(Rig::fill(q.back(), 0xff333333u), 1us);
  REQUIRE_FALSE(held);
  CHECK(held.error().code == Errc::Timeout);
  CHECK(held.error().message.find("primary 0") != std::string::npos);
  CHECK(s.counters().submissions == submissions);
  auto acq = q.acquire(1us);
  REQUIRE_FALSE(acq);
  CHECK(acq.error().code == Errc::Timeout);
  REQUIRE(q.acquire(5ms));
  CHECK(q.on_screen() == 1u);
}
