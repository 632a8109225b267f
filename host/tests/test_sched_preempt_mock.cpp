// Preemption and recovery on the mock transport, with the exact register traffic: a FakeEngine
// (fake_engine.hpp) that also answers PREEMPT.request — it stops inside a hung entry at a
// scripted PREEMPT_OFFSET, writes the preemption record and raises the preempted interrupt —
// plays the device. Priority preemption (the quantum), the TdrDelay overrun rule (put back and
// resumed, recovered only on a second overrun without progress or an unanswered request), the
// paging buffers that go back first with their own fences, and Counters.splits.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fake_engine.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/sizing.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/umd/command_list.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPagingFlags = abi::ring_flags::kPaging | abi::ring_flags::kPrivileged;
constexpr std::uint32_t kIntPreempted = SGPU_FIELD(INT_STATUS, PREEMPTED).mask;

/// FakeEngine plus the preemption protocol (docs/programming-guide.md, "Preemption").
struct PreemptEngine : test::FakeEngine {
  std::uint64_t record = 0, preempt_fence = 0;
  std::uint32_t tail = 0;
  bool preempted = false;
  bool answer = true;                    // answer PREEMPT.request at once (else: stop() by hand)
  std::vector<std::uint32_t> offsets;    // PREEMPT_OFFSET of successive stops inside an entry
  std::uint32_t stops = 0;
  std::function<void()> on_reset;        // after RESET.engine (e.g. a hang that goes away)
  std::uint32_t status_override = ~0u;   // PREEMPT_STATUS to report instead (error tests)
  std::vector<abi::RingEntry> published; // every entry a doorbell published, in ring order

  explicit PreemptEngine(MockTransport& mock) : FakeEngine(mock) {
    m.on_write = [this](std::uint32_t off, std::uint32_t v) { on_write(off, v); };
  }

  void on_write(std::uint32_t off, std::uint32_t v) {
    if (off == SGPU_REG(PREEMPT_ADDR_LO)) lo(record, v);
    if (off == SGPU_REG(PREEMPT_ADDR_HI)) hi(record, v);
    if (off == SGPU_REG(PREEMPT_FENCE_LO)) lo(preempt_fence, v);
    if (off == SGPU_REG(PREEMPT_FENCE_HI)) hi(preempt_fence, v);
    if (off == SGPU_REG(RING_TAIL)) {
      for (std::uint32_t i = tail; i != v; i = (i + 1) & ((1u << log2) - 1)) published.push_back(entry(i));
      tail = v;
    }
    if (off == SGPU_REG(PREEMPT) && (v & SGPU_FIELD(PREEMPT, REQUEST).mask) && answer) stop();
    if (off == SGPU_REG(PREEMPT) && (v & SGPU_FIELD(PREEMPT, RESUME).mask)) {
      preempted = false;
      m.set_reg(SGPU_REG(PREEMPT_STATUS), 0);
      run(tail);
      return;
    }
    if (off == SGPU_REG(RESET) && (v & 1)) {
      tail = 0;
      preempted = false;
      m.set_reg(SGPU_REG(PREEMPT_STATUS), 0);
    }
    if (off == SGPU_REG(RING_TAIL) && preempted) return;  // a doorbell only moves the tail
    write(off, v);
    if (off == SGPU_REG(RESET) && (v & 1) && on_reset) on_reset();
  }

  /// Stops at the next packet boundary: inside the entry at the head if it is hung (at the next
  /// scripted offset, else where the entry starts), else between entries.
  void stop() {
    const bool in_entry = head != tail && hung.count(entry(head).context_id) != 0;
    std::uint32_t offset = 0;
    if (in_entry) offset = stops < offsets.size() ? offsets[stops] : entry(head).start_offset;
    if (in_entry) ++stops;
    preempted = true;
    m.set_reg(SGPU_REG(PREEMPT_STATUS), status_override != ~0u ? status_override
                                        : SGPU_FIELD(PREEMPT_STATUS, PREEMPTED).mask |
                                              (in_entry ? SGPU_FIELD(PREEMPT_STATUS, IN_ENTRY).mask : 0u));
    m.set_reg(SGPU_REG(PREEMPT_OFFSET), offset);
    m.set_reg(SGPU_REG(RING_HEAD), head);
    abi::Writeback w;
    std::memcpy(&w, m.dma_cpu(wb), sizeof w);
    const abi::PreemptRecord r{preempt_fence, w.fence};
    std::memcpy(m.dma_cpu(record), &r, sizeof r);
    int_status |= kIntPreempted;
    update_irq();
  }
};

std::unique_ptr<PreemptEngine> preempting_device(MockTransport& m) {
  auto engine = std::make_unique<PreemptEngine>(m);
  test::describe_gart_device(m, test::kGartDevice, SGPU_FIELD(CAP_FEATURES, PREEMPTION).mask);
  return engine;
}

struct Rig {
  MockTransport* mock = nullptr;
  std::unique_ptr<PreemptEngine> engine;
  std::unique_ptr<Runtime> rt;
  std::unique_ptr<kmd::Device> dev;

  explicit Rig(const std::function<void(RuntimeOptions&)>& tune = {}) {
    auto t = std::make_unique<MockTransport>();
    mock = t.get();
    engine = preempting_device(*mock);
    RuntimeOptions o = test::mock_runtime_options(8);
    o.scheduler.preempt_quantum = 20us;
    if (tune) tune(o);
    auto r = Runtime::open(std::move(t), o);
    if (!r) FAIL(to_string(r.error()));
    rt = std::move(*r);
    auto d = rt->adapter().create_device({});
    REQUIRE(d);
    dev = std::make_unique<kmd::Device>(std::move(*d));
  }
  Scheduler& sched() { return rt->scheduler(); }
  std::unique_ptr<ScheduledContext> context(int priority = 0) {
    auto c = rt->create_context(*dev);
    if (!c) FAIL(to_string(c.error()));
    REQUIRE(sched().set_priority((*c)->get(), priority));
    return std::move(*c);
  }
  kmd::Allocation allocation(std::uint64_t bytes) {
    auto a = dev->create_allocation(kmd::AllocationInfo::placed(bytes, kmd::SegmentSet::of(1), 1));  // memory segment only
    if (!a) FAIL(to_string(a.error()));
    return std::move(*a);
  }
  std::vector<std::string> writes() const {
    std::vector<std::string> out;
    for (const auto& a : mock->writes()) out.push_back(fmt::format("{}={:#x}", regs::register_name(a.offset), a.value));
    return out;
  }
  /// The register writes of Device::reset_engine() on this device (the ring set up again).
  std::vector<std::string> reset_writes() const {
    return {"CTRL=0x0", "RESET=0x1", "INT_ENABLE=0x0", "INT_STATUS=0x7",
            fmt::format("RING_BASE_LO={:#x}", static_cast<std::uint32_t>(engine->ring)),
            fmt::format("RING_BASE_HI={:#x}", static_cast<std::uint32_t>(engine->ring >> 32)),
            fmt::format("RING_SIZE={:#x}", engine->log2),
            fmt::format("WB_ADDR_LO={:#x}", static_cast<std::uint32_t>(engine->wb)),
            fmt::format("WB_ADDR_HI={:#x}", static_cast<std::uint32_t>(engine->wb >> 32)), "RING_TAIL=0x0",
            fmt::format("PREEMPT_ADDR_LO={:#x}", static_cast<std::uint32_t>(engine->record)),
            fmt::format("PREEMPT_ADDR_HI={:#x}", static_cast<std::uint32_t>(engine->record >> 32)), "INT_ENABLE=0x7",
            "CTRL=0x1"};
  }
  std::vector<std::string> window_map_writes(std::uint32_t n) const {
    const std::uint64_t pages = kmd::DefaultSizingPolicy::dma_buffer_bytes(Aperture::kPageSize) / Aperture::kPageSize;
    const std::uint64_t first = rt->window().first_page() + 1 + n * pages;
    return {fmt::format("GART_INV_FIRST={:#x}", first), fmt::format("GART_INV_COUNT={:#x}", pages),
            fmt::format("GART_CMD={:#x}", SGPU_FIELD(GART_CMD, INV_RANGE).mask)};
  }
  /// Lets a hung context run: what is on the ring retires.
  void unhang() {
    engine->hung.clear();
    engine->run(engine->tail);
  }
};

void append(std::vector<std::string>& to, const std::vector<std::string>& more) { to.insert(to.end(), more.begin(), more.end()); }

/// Two WRITE_DATA packets (16 bytes each: the second at offset 16), then Render's FENCE.
umd::CommandList two_writes(const kmd::Allocation& a) {
  umd::CommandList cl;
  const std::uint32_t v[2] = {0x11, 0x22};
  REQUIRE(cl.write_data(a.handle(), 0, &v[0], 1));
  REQUIRE(cl.write_data(a.handle(), 4, &v[1], 1));
  return cl;
}

std::uint64_t fence_value(const Rig& r, const abi::RingEntry& e) {
  Aperture& ap = *r.rt->device().aperture();
  const std::uint64_t at = e.buf_addr + e.end_offset - 20;
  const std::uint64_t page = (at - ap.base()) / Aperture::kPageSize;
  const auto* pkt = static_cast<const std::uint32_t*>(
      r.mock->dma_cpu(*ap.bus_page(static_cast<std::uint32_t>(page)) + at % Aperture::kPageSize));
  namespace f = abi::payload::fence;
  return pkt[f::kValueLo] | (std::uint64_t{pkt[f::kValueHi]} << 32);
}

}  // namespace

TEST_CASE("preempt mock: higher-priority work past the quantum preempts, then paging goes back first with its fence, "
          "then the high-priority packet, then the preempted one from PREEMPT_OFFSET",
          "[sched][preempt]") {
  // A ring of 4 entries (3 in flight), so the high-priority packet cannot follow its paging
  // buffer onto the ring before the preemption, whether paging is waited for or runs ahead.
  Rig r([](RuntimeOptions& o) { o.device.ring_log2_entries = 2; });
  auto& s = r.sched();
  auto low = r.context(0);
  auto high = r.context(1);
  auto a = r.allocation(4096);
  auto b = r.allocation(4096);
  const auto low_id = static_cast<std::uint32_t>(low->get().id());
  const auto high_id = static_cast<std::uint32_t>(high->get().id());

  // Low: its paging (fence 1) retires, its two two-packet buffers (fences 2, 3) keep the engine
  // busy.
  r.engine->hung.insert(low_id);
  r.engine->offsets = {16};  // stopped before the second packet of the first
  auto low_sub = s.submit(low->get(), two_writes(a));
  REQUIRE(low_sub);
  auto low_sub2 = s.submit(low->get(), two_writes(a));
  REQUIRE(low_sub2);
  REQUIRE(s.flush());
  REQUIRE(s.last_ring_fence() == 3);
  const abi::RingEntry low_entry = r.engine->entry(1);

  // High: its allocation's paging buffer takes fence 4 behind them and fills the ring; while
  // the scheduler waits (for the paging or for ring room) the quantum passes, the engine is
  // asked to stop, stops in the first low entry at offset 16 and is reset; the paging buffer
  // goes back with fence 4, the high packet gets fence 5, the low ones 6 (from offset 16) and 7.
  r.mock->clear_log();
  umd::CommandList hcl;
  const std::uint32_t hv = 0x33;
  REQUIRE(hcl.write_data(b.handle(), 0, &hv, 1));
  auto high_sub = s.submit(high->get(), hcl);
  REQUIRE(high_sub);
  REQUIRE(s.wait(*high_sub, 1ms));
  REQUIRE(s.flush());
  std::vector<std::string> expected = r.window_map_writes(2);  // low has the first two DMA buffers
  append(expected, {"RING_TAIL=0x0",  // paging, fence 4, behind the low entries at indices 1, 2
                    "PREEMPT_FENCE_LO=0x5", "PREEMPT_FENCE_HI=0x0", "PREEMPT=0x1",  // PreemptionFenceId 5
                    "INT_STATUS=0x4"});                                             // DMA_PREEMPTED taken
  append(expected, r.reset_writes());
  append(expected, {"RING_TAIL=0x1",    // the paging buffer again, fence 4
                    "RING_TAIL=0x2",    // the high packet, fence 5
                    "RING_TAIL=0x3",    // the first low packet from offset 16, fence 6
                    "RING_TAIL=0x0"});  // the second low packet, fence 7
  // DMA_COMPLETED acknowledgements left out: when they come depends on who waits for what.
  std::vector<std::string> got = r.writes();
  got.erase(std::remove(got.begin(), got.end(), "INT_STATUS=0x1"), got.end());
  CHECK(got == expected);
  const abi::RingEntry paging = r.engine->entry(0), hi = r.engine->entry(1), resumed = r.engine->entry(2),
                       second = r.engine->entry(3);
  CHECK(paging.fence == 4);
  CHECK(paging.flags == kPagingFlags);
  CHECK(hi.fence == 5);
  CHECK(hi.context_id == high_id);
  CHECK(resumed.fence == 6);
  CHECK(resumed.context_id == low_id);
  CHECK(resumed.buf_addr == low_entry.buf_addr);
  CHECK(resumed.start_offset == 16);
  CHECK(resumed.end_offset == low_entry.end_offset);
  CHECK(fence_value(r, resumed) == 6);  // Patch gave the resumed packet its new fence
  CHECK(second.fence == 7);
  CHECK(second.start_offset == 0);

  const auto& c = s.counters();
  CHECK(c.priority_preemptions == 1);
  CHECK(c.preemptions == 1);
  CHECK(c.preempt_requeues == 1);
  CHECK(c.resumed_packets == 1);
  CHECK(c.resubmitted_paging == 1);
  CHECK(c.recoveries == 0);
  CHECK(c.overruns == 0);
  CHECK_FALSE(s.context_lost(low->get()));
  CHECK(s.preemption_times().answered == 1);
  // The high packet retired; the low one is at the head again.
  CHECK(s.preemption_times().resumed == 1);
  CHECK(s.preemption_times().last_request_to_resume > 0ns);
  r.unhang();
  REQUIRE(s.wait(*low_sub, 1ms));
  REQUIRE(s.wait(*low_sub2, 1ms));
  CHECK(s.counters().recoveries == 0);
}

TEST_CASE("preempt mock: a TdrDelay overrun the engine answers is put back, not guilty, then a second one without "
          "progress is the hang",
          "[sched][preempt][tdr]") {
  Rig r;
  auto& s = r.sched();
  auto ctx = r.context();
  auto a = r.allocation(4096);
  const auto id = static_cast<std::uint32_t>(ctx->get().id());
  r.engine->hung.insert(id);

  SECTION("progress between overruns: put back again; then it completes") {
    r.engine->offsets = {0, 16};  // first stop before packet 1, then before packet 2
    auto sub = s.submit(ctx->get(), two_writes(a));
    REQUIRE(sub);
    auto w = s.wait(*sub, 250us);  // two overruns of 100 us
    REQUIRE_FALSE(w);
    CHECK(w.error().code == Errc::Timeout);
    CHECK(s.counters().overruns == 2);
    CHECK(s.counters().preempt_requeues == 2);
    CHECK(s.counters().recoveries == 0);
    CHECK_FALSE(s.context_lost(ctx->get()));
    const abi::RingEntry e = r.engine->entry(0);
    CHECK(e.start_offset == 16);
    r.unhang();
    REQUIRE(s.wait(*sub, 1ms));
    CHECK(s.counters().recoveries == 0);
  }

  SECTION("stopped at the same offset twice: recovered, the context is lost") {
    r.engine->offsets = {16, 16};
    auto sub = s.submit(ctx->get(), two_writes(a));
    REQUIRE(sub);
    r.mock->clear_log();
    auto w = s.wait(*sub, 1ms);
    REQUIRE_FALSE(w);
    CHECK(w.error().code == Errc::DeviceLost);
    CHECK_THAT(w.error().message, Catch::Contains("twice, stopped at offset 16 both times"));
    CHECK(s.counters().overruns == 1);
    CHECK(s.counters().preemptions == 2);
    CHECK(s.counters().recoveries == 1);
    CHECK(s.context_lost(ctx->get()));
    // The traffic: request, DMA_PREEMPTED, reset, the packet from 16 with fence 3 (fence 2
    // aborted); then the second request, DMA_PREEMPTED and the recovery's reset.
    std::vector<std::string> expected{"PREEMPT_FENCE_LO=0x3", "PREEMPT_FENCE_HI=0x0", "PREEMPT=0x1", "INT_STATUS=0x4"};
    append(expected, r.reset_writes());
    append(expected, {"RING_TAIL=0x1", "PREEMPT_FENCE_LO=0x4", "PREEMPT_FENCE_HI=0x0", "PREEMPT=0x1", "INT_STATUS=0x4"});
    append(expected, r.reset_writes());
    std::vector<std::string> got = r.writes();  // DMA_COMPLETED acknowledgements left out
    got.erase(std::remove(got.begin(), got.end(), "INT_STATUS=0x1"), got.end());
    CHECK(got == expected);
  }
}

TEST_CASE("preempt mock: an unanswered request ends in recovery after preempt_timeout, for an overrun and for a "
          "priority request whose head then overruns",
          "[sched][preempt][tdr]") {
  Rig r;
  auto& s = r.sched();
  r.engine->answer = false;
  auto low = r.context(0);
  auto a = r.allocation(4096);
  r.engine->hung.insert(static_cast<std::uint32_t>(low->get().id()));
  auto sub = s.submit(low->get(), two_writes(a));
  REQUIRE(sub);

  SECTION("overrun") {
    auto w = s.wait(*sub, 1ms);
    REQUIRE_FALSE(w);
    CHECK(w.error().code == Errc::DeviceLost);
    CHECK_THAT(w.error().message, Catch::Contains("did not answer the preemption request"));
    CHECK(s.counters().preempt_timeouts == 1);
    CHECK(s.counters().recoveries == 1);
  }
  SECTION("priority request first") {
    auto high = r.context(2);
    auto b = r.allocation(4096);
    umd::CommandList hcl;
    REQUIRE(hcl.fill(b.handle(), 0, 4, 1));
    auto hs = s.submit(high->get(), hcl);  // its paging waits behind the hung entry
    REQUIRE(hs);
    REQUIRE(s.wait(*hs, 1ms));
    CHECK(s.counters().priority_preemptions == 1);
    CHECK(s.counters().preempt_timeouts == 1);
    CHECK(s.counters().recoveries == 1);
    CHECK(s.context_lost(low->get()));
    CHECK_FALSE(s.context_lost(high->get()));
  }
}

TEST_CASE("preempt mock: an answer that comes after preempt_timeout for a priority request is still handled",
          "[sched][preempt]") {
  Rig r([](RuntimeOptions& o) { o.scheduler.tdr_delay = 10ms; });
  auto& s = r.sched();
  r.engine->answer = false;
  auto low = r.context(0);
  auto high = r.context(1);
  auto a = r.allocation(4096);
  auto b = r.allocation(4096);
  // Both allocations resident first: the high packet then goes on the ring behind the busy entry.
  umd::CommandList warm;
  REQUIRE(warm.fill(b.handle(), 0, 4, 1));
  REQUIRE(s.wait(*s.submit(high->get(), warm), 1ms));
  REQUIRE(s.wait(*s.submit(low->get(), two_writes(a)), 1ms));
  r.engine->hung.insert(static_cast<std::uint32_t>(low->get().id()));
  auto ls2 = s.submit(low->get(), two_writes(a));
  REQUIRE(ls2);
  auto hs = s.submit(high->get(), warm);
  REQUIRE(hs);
  CHECK_FALSE(s.wait(*hs, 100us));  // quantum passed, the request is not answered yet
  CHECK(s.counters().priority_preemptions == 1);
  r.engine->offsets = {16};
  r.engine->stop();  // the engine reaches a packet boundary at last
  REQUIRE(s.wait(*hs, 1ms));
  CHECK(s.counters().preempt_requeues == 1);
  CHECK(s.counters().recoveries == 0);
  r.unhang();
  REQUIRE(s.wait(*ls2, 1ms));
}

TEST_CASE("preempt mock: a paging packet that overruns continues where it stopped, then overrunning again without "
          "progress is fatal",
          "[sched][preempt][tdr]") {
  Rig r;
  auto& s = r.sched();
  auto ctx = r.context();
  auto a = r.allocation(4096);
  r.engine->hung.insert(0);  // the memory manager's paging buffers (context 0) never retire
  r.engine->offsets = {0, 0};
  umd::CommandList cl;
  REQUIRE(cl.fill(a.handle(), 0, 4, 1));
  r.mock->clear_log();
  auto sub = s.submit(ctx->get(), cl);  // queued; its paging never completes
  REQUIRE(sub);
  CHECK(s.wait(*sub, 1ms).error().code == Errc::DeviceLost);
  REQUIRE(s.fatal_error());
  CHECK_THAT(s.fatal_error()->message, Catch::Contains("a hung paging packet"));
  CHECK_THAT(s.fatal_error()->message, Catch::Contains("twice"));
  CHECK(s.counters().overruns == 1);
  const auto w = r.writes();
  CHECK(std::count(w.begin(), w.end(), "PREEMPT=0x2") == 1);  // resumed once, in place
  CHECK(std::count(w.begin(), w.end(), "RESET=0x1") == 0);
}

TEST_CASE("preempt mock: a preemption answer the scheduler cannot place is fatal, naming it", "[sched][preempt]") {
  Rig r;
  auto& s = r.sched();
  auto ctx = r.context();
  auto a = r.allocation(4096);
  r.engine->hung.insert(static_cast<std::uint32_t>(ctx->get().id()));
  SECTION("PREEMPT_OFFSET outside the entry") {
    r.engine->offsets = {0x10000};
    auto sub = s.submit(ctx->get(), two_writes(a));
    REQUIRE(sub);
    REQUIRE_FALSE(s.wait(*sub, 1ms));
    REQUIRE(s.fatal_error());
    CHECK_THAT(s.fatal_error()->message, Catch::Contains("stopped in ring entry 1 at offset 65536"));
  }
  SECTION("the preempted interrupt without PREEMPT_STATUS.preempted") {
    r.engine->status_override = 0;
    auto sub = s.submit(ctx->get(), two_writes(a));
    REQUIRE(sub);
    REQUIRE_FALSE(s.wait(*sub, 1ms));
    REQUIRE(s.fatal_error());
    CHECK_THAT(s.fatal_error()->message, Catch::Contains("PREEMPT_STATUS.preempted is 0"));
  }
}

TEST_CASE("preempt mock: priorities are checked, set and honoured by the pump", "[sched][preempt]") {
  Rig r;
  auto& s = r.sched();
  auto c = r.context();
  CHECK(*s.priority(c->get()) == 0);
  for (int bad : {Scheduler::kMinPriority - 1, Scheduler::kMaxPriority + 1}) {
    auto e = s.set_priority(c->get(), bad);
    REQUIRE_FALSE(e);
    CHECK(e.error().code == Errc::InvalidArgument);
    CHECK(*s.priority(c->get()) == 0);
  }
  REQUIRE(s.set_priority(c->get(), Scheduler::kMaxPriority));
  CHECK(*s.priority(c->get()) == Scheduler::kMaxPriority);
  auto other = r.rt->adapter().create_device({});
  REQUIRE(other);
  auto unregistered = other->create_context({});
  REQUIRE(unregistered);
  CHECK(s.set_priority(*unregistered, 1).error().code == Errc::InvalidArgument);
  CHECK(s.priority(*unregistered).error().code == Errc::InvalidArgument);
  auto e = s.add_context(*unregistered, 8);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == Errc::InvalidArgument);
  CHECK(s.priority(*unregistered).error().code == Errc::InvalidArgument);  // not registered

  SchedulerOptions bad;
  bad.preempt_quantum = 0ns;
  auto created = Scheduler::create(r.rt->device(), r.rt->adapter(), r.rt->window(), nullptr, bad);
  REQUIRE_FALSE(created);
  CHECK(created.error().code == Errc::InvalidArgument);

}

TEST_CASE("preempt mock: the pump serves the highest priority first, round robin within one priority",
          "[sched][preempt]") {
  // A ring of 4 entries (3 in flight), filled by a hung context, so the later work waits in the
  // software queues until it is let go all at once.
  Rig r([](RuntimeOptions& o) {
    o.device.ring_log2_entries = 2;
    o.kernel_window_pages = kernel_window_pages_for(10);
  });
  auto& s = r.sched();
  auto busy = r.context(0);
  auto lo1 = r.context(-1), lo2 = r.context(-1), hi = r.context(3);
  auto x = r.allocation(4096);
  umd::CommandList one;
  const std::uint32_t v = 1;
  REQUIRE(one.write_data(x.handle(), 0, &v, 1));
  REQUIRE(s.wait(*s.submit(busy->get(), one), 1ms));
  r.engine->hung.insert(static_cast<std::uint32_t>(busy->get().id()));
  while (s.hardware_queue_depth() < r.rt->device().ring_entries() - 1) REQUIRE(s.submit(busy->get(), one));
  const RingFence last_busy = s.last_ring_fence();
  for (auto* c : {lo1.get(), lo2.get(), lo1.get(), hi.get(), lo2.get(), hi.get()}) REQUIRE(s.submit(c->get(), one));
  REQUIRE(s.software_queue_depth() == 6);
  r.unhang();
  REQUIRE(s.idle(10ms));
  std::vector<std::uint64_t> order;
  for (const auto& e : r.engine->published)
    if (e.fence > last_busy.value()) order.push_back(e.context_id);
  // The ring entry carries the context handle's low 32 bits.
  const std::uint64_t h = static_cast<std::uint32_t>(hi->get().id()), l1 = static_cast<std::uint32_t>(lo1->get().id()),
                      l2 = static_cast<std::uint32_t>(lo2->get().id());
  CHECK(order == std::vector<std::uint64_t>{h, h, l1, l2, l1, l2});
}

TEST_CASE("preempt mock: a split packet whose walk a preemption interrupted is counted once in Counters.splits",
          "[sched][preempt][split]") {
  Rig r;
  auto& s = r.sched();
  auto ctx = r.context();
  // Five 400 KiB allocations, two of which fit the 1 MiB memory segment at once: the packet is
  // split. The first portion overruns TdrDelay while the walk waits for the paging of the next;
  // the preemption puts the portion back (the hang goes away with the reset) and the rest of
  // the walk starts over, splitting again.
  std::vector<kmd::Allocation> al;
  umd::CommandList cl;
  for (int i = 0; i < 5; ++i) {
    al.push_back(r.allocation(400 * 1024));
    REQUIRE(cl.fill(al.back().handle(), 0, 4, static_cast<std::uint32_t>(i)));
  }
  r.engine->hung.insert(static_cast<std::uint32_t>(ctx->get().id()));
  r.engine->on_reset = [&] { r.engine->hung.clear(); };
  auto sub = s.submit(ctx->get(), cl);
  REQUIRE(sub);
  REQUIRE(s.wait(*sub, 5ms));
  CHECK(s.counters().overruns == 1);
  CHECK(s.counters().preempt_requeues == 1);
  CHECK(s.counters().recoveries == 0);
  // Portions [0, 1], then (the put-back rest of it fits whole) [2, 3] and [4] of the second walk.
  CHECK(s.counters().portions == 3);
  CHECK(s.counters().splits == 1);  // was 2: the second walk counted the packet again
}
