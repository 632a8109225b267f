// Paging that runs ahead and waits that end: the memory manager's paging fences (what a paging
// buffer still in flight moved is busy for the CPU until it retires), the scheduler's caller
// deadlines (a DMA buffer, ring room, a submission), and device loss (all-ones reads, a failing
// transport) ending every wait with DeviceLost. On the mock transport, with the fake engine
// (fake_engine.hpp) playing the ring.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "fake_engine.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/umd/command_list.hpp"
#include "vidmm_fixture.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

/// The reference executor, but each buffer "runs ahead" under the next fence: the memory manager
/// must wait for that fence before the CPU sees what the buffer moved.
class AheadExecutor final : public vidmm::PagingExecutor {
 public:
  explicit AheadExecutor(vidmm::ReferenceExecutor& ref) : ref_(ref) {}
  Status execute(const vidmm::PagingBuffer& buffer) override {
    SGPU_RETURN_IF_ERROR(ref_.execute(buffer));
    last_ = last_.next();
    return ok_status();
  }
  std::uint64_t dummy_page() const override { return ref_.dummy_page(); }
  void* cpu_address(SegmentId segment, std::uint64_t offset, std::uint64_t bytes) override {
    return ref_.cpu_address(segment, offset, bytes);
  }
  RingFence last_paging_fence() const override { return last_; }
  Status wait_paging(RingFence fence, std::chrono::nanoseconds timeout) override {
    waits.push_back(fence);
    if (hang) return Error::make(Errc::Timeout, Touched::Hardware, "paging fence {} not complete within {} ns", fence, timeout.count());
    return ok_status();
  }
  std::vector<RingFence> waits;
  bool hang = false;

 private:
  vidmm::ReferenceExecutor& ref_;
  RingFence last_;
};

struct AheadFixture {
  AheadFixture() : ref(vidmm_test::two_segments().segments, 4096), ahead(ref), system(mock) {
    auto a = kmd::Adapter::create(vidmm_test::two_segments(), ahead, system);
    if (!a) FAIL(to_string(a.error()));
    adapter = std::move(*a);
  }
  vidmm::MemoryManager& mm() { return adapter->memory_manager(); }
  MockTransport mock;
  vidmm::ReferenceExecutor ref;
  AheadExecutor ahead;
  TransportSystemMemory system;
  std::unique_ptr<kmd::Adapter> adapter;
};

kmd::AllocationInfo visible(std::uint64_t bytes) {
  auto i = vidmm_test::alloc_info(bytes, {vidmm_test::kMem});
  i.flags.value = kmd::AllocationInfoFlags::kCpuVisible;
  return i;
}

}  // namespace

TEST_CASE("paging ahead: lock waits for the allocation's own paging fence, then sees the bytes",
          "[vidmm][paging_ahead]") {
  AheadFixture f;
  auto& mm = f.mm();
  auto a = mm.create_allocation(visible(8192));
  auto b = mm.create_allocation(visible(4096));
  REQUIRE(a);
  REQUIRE(b);
  REQUIRE(mm.make_resident({{*a, true}}));  // paging buffer 1: FILL a
  REQUIRE(mm.make_resident({{*b, true}}));  // paging buffer 2: FILL b
  CHECK(mm.query(*a)->paging_fence == 1);
  CHECK(mm.query(*b)->paging_fence == 2);
  // Nothing rendered with them: only paging is outstanding. Locking `a` waits for fence 1 (its
  // own paging), not for fence 2.
  auto p = mm.lock(*a);
  REQUIRE(p);
  CHECK(f.ahead.waits == std::vector<RingFence>{RingFence{1}});
  CHECK(mm.completed_fence() == 1);
  REQUIRE(mm.unlock(*a));
  // Once it completed, no more waiting.
  REQUIRE(mm.lock(*a));
  CHECK(f.ahead.waits.size() == 1);
  REQUIRE(mm.unlock(*a));
}

TEST_CASE("paging ahead: a lock whose paging does not finish in time is a Timeout naming the allocation and fence",
          "[vidmm][paging_ahead][deadline]") {
  AheadFixture f;
  auto& mm = f.mm();
  auto a = mm.create_allocation(visible(4096));
  REQUIRE(a);
  REQUIRE(mm.make_resident({{*a, true}}));
  f.ahead.hang = true;
  auto p = mm.lock(*a, 5ms);
  REQUIRE_FALSE(p);
  CHECK(p.error().code == Errc::Timeout);
  CHECK_THAT(p.error().message, Catch::Contains(fmt::format("allocation {:#x}", a->value)) &&
                                    Catch::Contains("paging fence 1"));
  CHECK(mm.query(*a)->lock_count == 0);  // not locked
  f.ahead.hang = false;
  REQUIRE(mm.lock(*a));
}

TEST_CASE("paging ahead: a destroyed allocation's backing store lives until its paging fence", "[vidmm][paging_ahead]") {
  AheadFixture f;
  auto& mm = f.mm();
  auto a = mm.create_allocation(visible(4096));
  REQUIRE(a);
  REQUIRE(mm.make_resident({{*a, true}}));
  REQUIRE(mm.evict(*a));  // paging buffer 2: TRANSFER into the backing store, in flight
  CHECK(mm.query(*a)->paging_fence == 2);
  REQUIRE(mm.destroy_allocation(*a));
  CHECK(mm.deferred_frees() == 1);
  mm.set_completed_fence(RingFence{1});
  CHECK(mm.deferred_frees() == 1);
  mm.set_completed_fence(RingFence{2});
  CHECK(mm.deferred_frees() == 0);
}

// ---------------------------------------------------------------- the scheduler on the mock

namespace {

/// A transport in front of the mock that can go away like a surprise-removed PCIe card (every
/// register read all ones, no interrupt) or fail (every access throws TransportFailure).
class BreakableTransport final : public Transport {
 public:
  explicit BreakableTransport(std::unique_ptr<MockTransport> inner) : inner_(std::move(inner)) {}
  MockTransport& mock() { return *inner_; }
  bool removed = false;
  bool failing = false;

  std::uint32_t read32(std::uint32_t offset) override {
    if (failing) throw TransportFailure("read of BAR0 offset " + std::to_string(offset) + " failed: link error");
    if (removed) {
      inner_->advance(100ns);  // the read still takes its time on the link
      return 0xFFFF'FFFFu;
    }
    return inner_->read32(offset);
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    if (failing) throw TransportFailure("write of BAR0 offset " + std::to_string(offset) + " failed: link error");
    if (removed) return;  // posted writes to a missing card vanish
    inner_->write32(offset, value);
  }
  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return inner_->alloc_dma(bytes, align); }
  bool wait_irq(std::chrono::nanoseconds timeout) override {
    if (failing) throw TransportFailure("interrupt wait failed: link error");
    if (removed) {
      inner_->advance(timeout);
      return false;
    }
    return inner_->wait_irq(timeout);
  }
  std::chrono::nanoseconds now() override { return inner_->now(); }
  std::string_view name() const override { return "breakable-mock"; }

 private:
  std::unique_ptr<MockTransport> inner_;
};

struct Stack {
  BreakableTransport* transport = nullptr;
  std::unique_ptr<test::FakeEngine> engine;
  std::unique_ptr<Runtime> rt;

  explicit Stack(RuntimeOptions o = options()) {
    auto mock = std::make_unique<MockTransport>();
    engine = std::make_unique<test::FakeEngine>(*mock);
    test::describe_gart_device(*mock, test::kGartDevice);
    auto t = std::make_unique<BreakableTransport>(std::move(mock));
    transport = t.get();
    auto r = Runtime::open(std::move(t), o);
    if (!r) FAIL(to_string(r.error()));
    rt = std::move(*r);
  }
  static RuntimeOptions options() { return test::mock_runtime_options(4); }
  Scheduler& sched() { return rt->scheduler(); }
};

kmd::AllocationInfo memory_allocation(const kmd::Adapter& adapter, std::uint64_t bytes) {
  return kmd::AllocationInfo::placed(bytes, adapter.allocation_segments(), 1, kmd::AllocationInfoFlags::kCpuVisible);
}

umd::CommandList fill(const kmd::Allocation& a, std::uint32_t value) {
  umd::CommandList cl;
  REQUIRE(cl.fill(a.handle(), 0, 4096, value));
  return cl;
}

}  // namespace

TEST_CASE("deadlines: a submit that finds no DMA buffer by submit_timeout is a Timeout naming the context",
          "[sched][deadline]") {
  RuntimeOptions o = Stack::options();
  o.scheduler.submit_timeout = 20us;  // shorter than TdrDelay: the hang is not cleared in time
  Stack st(o);
  auto& s = st.sched();
  auto dev = st.rt->adapter().create_device({});
  auto hang = st.rt->create_context(*dev);
  REQUIRE(dev);
  REQUIRE(hang);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  const std::uint64_t id = (*hang)->get().id();
  st.engine->hung.insert(static_cast<std::uint32_t>(id));
  // The window holds 4 DMA buffers; the hung context's submissions keep every one.
  std::vector<SubmissionId> subs;
  for (int i = 0; i < 4; ++i) {
    auto r = s.submit((*hang)->get(), fill(*a, i));
    REQUIRE(r);
    subs.push_back(*r);
  }
  const std::uint64_t submissions = s.counters().submissions;
  const auto before = st.transport->now();
  auto r = s.submit((*hang)->get(), fill(*a, 9));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::Timeout);
  CHECK_FALSE(r.error().hardware_touched);
  CHECK_THAT(r.error().message, Catch::Contains(fmt::format("context {}", id)) && Catch::Contains("no DMA buffer"));
  CHECK(st.transport->now() - before < 100us);  // it gave up at its deadline, before TDR
  CHECK(s.counters().submissions == submissions);  // nothing queued
  CHECK(s.software_queue_depth() == 0);
  CHECK(s.counters().recoveries == 0);
}

TEST_CASE("deadlines: a render packet that finds no ring room by the deadline stays queued, submit returns",
          "[sched][deadline]") {
  RuntimeOptions o = Stack::options();
  o.device.ring_log2_entries = 2;   // 4 entries, 3 usable
  o.kernel_window_pages = kernel_window_pages_for(8);
  o.scheduler.submit_timeout = 20us;
  Stack st(o);
  auto& s = st.sched();
  REQUIRE(st.rt->device().ring_entries() == 4);
  auto dev = st.rt->adapter().create_device({});
  auto hang = st.rt->create_context(*dev);
  auto work = st.rt->create_context(*dev);
  REQUIRE(hang);
  REQUIRE(work);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  auto b = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  REQUIRE(b);
  st.engine->hung.insert(static_cast<std::uint32_t>((*hang)->get().id()));
  // Ring: paging (a, fence 1, retired by flush()), then two hung render packets (fences 2, 3).
  auto lost = s.submit((*hang)->get(), fill(*a, 1));
  REQUIRE(lost);
  REQUIRE(s.flush());
  REQUIRE(s.submit((*hang)->get(), fill(*a, 2)));
  REQUIRE(s.hardware_queue_depth() == 2);
  // b's paging takes the last slot; its render packet finds the ring full until the deadline:
  // it stays queued and submit() returns the id.
  const auto before = st.transport->now();
  auto sub = s.submit((*work)->get(), fill(*b, 2));
  REQUIRE(sub);
  CHECK(st.transport->now() - before < 100us);
  CHECK(*s.query(*sub) == FenceStatus::Pending);
  CHECK(s.software_queue_depth() == 1);
  CHECK(s.counters().paging_packets == 2);
  // A wait shorter than TdrDelay names the submission.
  auto w = s.wait(*sub, 20us);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::Timeout);
  CHECK_THAT(w.error().message, Catch::Contains(fmt::format("submission fence {}", *sub)));
  // A longer one lets TDR clear the hang: the queued packet goes on and completes.
  if (Status done = s.wait(*sub, 2ms); !done) FAIL(to_string(done.error()));
  CHECK(s.counters().recoveries == 1);
  CHECK(s.wait(*lost, 1ms).error().code == Errc::DeviceLost);
}

TEST_CASE("device lost: all-ones reads end a submission wait, a paging wait and a lock with DeviceLost",
          "[sched][device_lost]") {
  Stack st;
  auto& s = st.sched();
  auto dev = st.rt->adapter().create_device({});
  auto hang = st.rt->create_context(*dev);
  auto other = st.rt->create_context(*dev);
  REQUIRE(hang);
  REQUIRE(other);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  auto b = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  REQUIRE(b);
  st.engine->hung.insert(static_cast<std::uint32_t>((*hang)->get().id()));
  auto c = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(c);
  auto stuck = s.submit((*hang)->get(), fill(*a, 1));
  REQUIRE(stuck);
  // b's paging (fence 3) runs ahead behind the hung packet, then its render packet (fence 4).
  auto sub = s.submit((*other)->get(), fill(*b, 2));
  REQUIRE(sub);
  REQUIRE(st.rt->memory_manager().query(b->handle())->paging_fence == 3);
  // c is only paged in (fence 5), not rendered with: a lock waits for its paging alone.
  auto& mm = st.rt->memory_manager();
  REQUIRE(mm.make_resident({{c->handle(), true}}));
  const RingFence paging = mm.query(c->handle())->paging_fence;
  REQUIRE(paging == 5);

  st.transport->removed = true;  // surprise removal
  auto w = s.wait(*sub, 10ms);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::DeviceLost);
  CHECK_THAT(w.error().message, Catch::Contains("all ones"));
  REQUIRE(s.fatal_error());
  CHECK(s.counters().recoveries == 0);  // lost before TdrDelay: no reset of a missing engine
  // Every other wait ends the same way, at once.
  auto pw = s.wait_paging(paging, 10ms);
  REQUIRE_FALSE(pw);
  CHECK(pw.error().code == Errc::DeviceLost);
  auto lk = c->lock();
  REQUIRE_FALSE(lk);
  CHECK(lk.error().code == Errc::DeviceLost);
  CHECK_THAT(lk.error().message, Catch::Contains("all ones"));
  CHECK(s.idle(10ms).error().code == Errc::DeviceLost);
  auto again = s.submit((*other)->get(), fill(*b, 3));
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::DeviceLost);
  CHECK(st.rt->device().lost());
}

TEST_CASE("device lost: an all-ones INT_STATUS in the ISR is device loss, not an event", "[sched][device_lost]") {
  Stack st;
  auto& s = st.sched();
  auto dev = st.rt->adapter().create_device({});
  auto ctx = st.rt->create_context(*dev);
  REQUIRE(ctx);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  st.engine->retire = false;  // the entries stay on the ring
  auto sub = s.submit((*ctx)->get(), fill(*a, 1));
  REQUIRE(sub);
  // The line is up and INT_STATUS reads all ones, as from a card that just went away.
  st.transport->mock().set_irq(true);
  st.transport->mock().queue_read(SGPU_REG(INT_STATUS), 0xFFFF'FFFFu);
  auto w = s.wait(*sub, 10ms);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::DeviceLost);
  CHECK_THAT(w.error().message, Catch::Contains("INT_STATUS reads 0xffffffff"));
  CHECK(s.counters().interrupts == 0);  // no event taken from it
}

TEST_CASE("device lost: a transport error ends every wait with DeviceLost naming the transport's error",
          "[sched][device_lost]") {
  Stack st;
  auto& s = st.sched();
  auto dev = st.rt->adapter().create_device({});
  auto ctx = st.rt->create_context(*dev);
  REQUIRE(ctx);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  st.engine->retire = false;
  auto sub = s.submit((*ctx)->get(), fill(*a, 1));
  REQUIRE(sub);
  st.transport->failing = true;
  auto w = s.wait(*sub, 10ms);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::DeviceLost);
  CHECK_THAT(w.error().message, Catch::Contains("link error"));
  REQUIRE(s.fatal_error());
  CHECK(s.wait_paging(RingFence{1}, 1ms).error().code == Errc::DeviceLost);
  CHECK(s.flush().error().code == Errc::DeviceLost);
  CHECK(s.idle(1ms).error().code == Errc::DeviceLost);
}
