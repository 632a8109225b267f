// The scheduler's emission point on the mock transport: every ring entry (a render packet, a
// paging buffer, a paging buffer resubmitted after a reset) is made in one place, which takes the
// ring fence, has it written into the DMA buffer and rings the doorbell. These tests pin the
// exact register writes and ring entries of each, with a small fake engine (fake_engine.hpp)
// playing the device's side of the ring.
#include <catch2/catch.hpp>

#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "fake_engine.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/sizing.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/sched/flip_queue.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/umd/command_list.hpp"
#include "sgpu/vidmm/reference_executor.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPagingFlags = abi::ring_flags::kPaging | abi::ring_flags::kPrivileged;

/// A healthy idle device with a GART (4 MiB aperture) and a 1 MiB memory segment, whose ring a
/// FakeEngine plays (fake_engine.hpp): the engine retires entries in order at the doorbell,
/// except those of a context in `hung`, and executes paging buffers' closing FENCE.
std::unique_ptr<test::FakeEngine> gart_device(MockTransport& m) {
  auto engine = std::make_unique<test::FakeEngine>(m);
  test::describe_gart_device(m, test::kGartDevice);
  return engine;
}

/// The driver stack on the mock: Runtime (device, window, memory manager, scheduler).
struct Stack {
  MockTransport* mock = nullptr;
  std::unique_ptr<test::FakeEngine> engine;
  std::unique_ptr<Runtime> rt;

  Stack() {
    auto t = std::make_unique<MockTransport>();
    mock = t.get();
    engine = gart_device(*mock);
    auto r = Runtime::open(std::move(t), test::mock_runtime_options(8));
    if (!r) FAIL(to_string(r.error()));
    rt = std::move(*r);
  }
  Scheduler& sched() { return rt->scheduler(); }

  /// The writes that map a context's `n`-th DMA buffer into the kernel window (the first time
  /// Render acquires one): invalidating exactly its pages.
  std::vector<std::string> window_map_writes(std::uint32_t n) const {
    const std::uint64_t pages = kmd::DefaultSizingPolicy::dma_buffer_bytes(Aperture::kPageSize) / Aperture::kPageSize;
    const std::uint64_t first = rt->window().first_page() + 1 + n * pages;  // after the fence page
    return {fmt::format("GART_INV_FIRST={:#x}", first), fmt::format("GART_INV_COUNT={:#x}", pages),
            fmt::format("GART_CMD={:#x}", SGPU_FIELD(GART_CMD, INV_RANGE).mask)};
  }

  /// The writes since the last clear_log(), as "REGISTER=value".
  std::vector<std::string> writes() const {
    std::vector<std::string> out;
    for (const auto& a : mock->writes()) out.push_back(fmt::format("{}={:#x}", regs::register_name(a.offset), a.value));
    return out;
  }
  /// The host bytes behind a GPU address of the kernel window (through the aperture's PTEs).
  const std::uint32_t* window_dwords(std::uint64_t gpu_address) const {
    Aperture& ap = *rt->device().aperture();
    const std::uint64_t page = (gpu_address - ap.base()) / Aperture::kPageSize;
    const std::uint64_t bus = *ap.bus_page(static_cast<std::uint32_t>(page)) + gpu_address % Aperture::kPageSize;
    return static_cast<const std::uint32_t*>(mock->dma_cpu(bus));
  }
};

kmd::AllocationInfo memory_allocation(const kmd::Adapter& adapter, std::uint64_t bytes) {
  // Preferably the memory segment: the first touch is a FILL.
  return kmd::AllocationInfo::placed(bytes, adapter.allocation_segments(), 1);
}

/// The value and address the FENCE packet at `pkt` writes.
std::pair<std::uint64_t, std::uint64_t> fence_packet(const std::uint32_t* pkt) {
  namespace f = abi::payload::fence;
  REQUIRE(abi::header_opcode(pkt[0]) == static_cast<std::uint8_t>(abi::Opcode::Fence));
  return {pkt[f::kAddrLo] | (std::uint64_t{pkt[f::kAddrHi]} << 32),
          pkt[f::kValueLo] | (std::uint64_t{pkt[f::kValueHi]} << 32)};
}

void check_entry(const abi::RingEntry& e, std::uint64_t fence, std::uint32_t context, std::uint32_t flags) {
  CHECK(e.fence == fence);
  CHECK(e.context_id == context);
  CHECK(e.flags == flags);
  CHECK(e.start_offset == 0);
  CHECK(e.end_offset > e.start_offset);
}

}  // namespace

TEST_CASE("emission: a paging buffer and a render packet each take the next ring fence and one doorbell",
          "[sched][emit]") {
  Stack st;
  auto& s = st.sched();
  auto dev = st.rt->adapter().create_device({});
  REQUIRE(dev);
  auto ctx = st.rt->create_context(*dev);
  REQUIRE(ctx);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  umd::CommandList cl;
  REQUIRE(cl.fill(a->handle(), 0, 4096, 0x5a5a5a5au));
  const std::uint32_t ctx_id = static_cast<std::uint32_t>((*ctx)->get().id());
  REQUIRE(s.last_ring_fence() == 0);
  st.mock->clear_log();

  auto sub = s.submit((*ctx)->get(), cl);
  REQUIRE(sub);
  // Render maps the context's first DMA buffer into the kernel window. First touch of the
  // allocation: the executor's paging buffer (FILL + FENCE) goes on the ring with fence 1 and,
  // paging running ahead, is not waited for: the render packet follows at once, fence 2.
  std::vector<std::string> expected = st.window_map_writes(0);
  for (const char* w : {"RING_TAIL=0x1", "RING_TAIL=0x2"}) expected.push_back(w);
  CHECK(st.writes() == expected);
  const abi::RingEntry paging = st.engine->entry(0);
  check_entry(paging, 1, 0, kPagingFlags);
  const abi::RingEntry render = st.engine->entry(1);
  check_entry(render, 2, ctx_id, 0);
  CHECK(s.last_ring_fence() == 2);
  CHECK(st.rt->device().last_submitted_fence() == 2);
  CHECK(s.counters().paging_packets == 1);
  CHECK(s.counters().render_packets == 1);

  // Each buffer carries the fence it was given at the emission point: the paging buffer's closing
  // FENCE (stamped by the executor's stamp) and the render buffer's submission fence (by Patch),
  // which writes the context's slot of the kernel fence page.
  const auto* paging_buffer = static_cast<const std::uint32_t*>(st.mock->dma_cpu(paging.buf_addr));
  CHECK(fence_packet(paging_buffer + (paging.end_offset - 20) / 4).second == 1);
  const auto [slot, value] = fence_packet(st.window_dwords(render.buf_addr + render.end_offset - 20));
  CHECK(value == 2);
  CHECK(slot == st.rt->window().fence_slot_gpu(0));

  REQUIRE(s.wait(*sub, 1ms));
  CHECK(s.reporter().last_reported() == 2);
  CHECK(st.rt->executor().counters().last_fence == 1);
}

TEST_CASE("emission: after a hang, the paging buffer behind it goes back on the ring with its own fence",
          "[sched][emit][tdr]") {
  Stack st;
  auto& s = st.sched();
  auto dev = st.rt->adapter().create_device({});
  REQUIRE(dev);
  auto hang = st.rt->create_context(*dev);
  auto work = st.rt->create_context(*dev);
  REQUIRE(hang);
  REQUIRE(work);
  auto a = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  auto b = dev->create_allocation(memory_allocation(st.rt->adapter(), 4096));
  REQUIRE(a);
  REQUIRE(b);
  const std::uint32_t hang_id = static_cast<std::uint32_t>((*hang)->get().id());
  const std::uint32_t work_id = static_cast<std::uint32_t>((*work)->get().id());

  // The hanging context: its paging (fence 1) retires, its render packet (fence 2) never does.
  st.engine->hung.insert(hang_id);
  umd::CommandList stuck;
  REQUIRE(stuck.fill(a->handle(), 0, 4096, 1));
  auto lost = s.submit((*hang)->get(), stuck);
  REQUIRE(lost);
  REQUIRE(s.last_ring_fence() == 2);
  REQUIRE(st.rt->device().ring_tail() == 2);

  // The other context's allocation must be paged in: its paging buffer takes fence 3 behind the
  // hung packet and runs ahead: submit() does not wait for it, the render packet takes fence 4
  // and submit() returns, the submitter's thread never blocked behind the hang.
  umd::CommandList cl;
  REQUIRE(cl.fill(b->handle(), 0, 4096, 2));
  st.mock->clear_log();
  const auto before = st.mock->now();
  auto sub = s.submit((*work)->get(), cl);
  REQUIRE(sub);
  CHECK(st.mock->now() - before < 100us);  // less than TdrDelay: no TDR inside submit()
  std::vector<std::string> expected = st.window_map_writes(1);  // the second context's DMA buffer
  for (const char* w : {"RING_TAIL=0x3", "RING_TAIL=0x4"}) expected.push_back(w);
  CHECK(st.writes() == expected);
  CHECK(s.counters().recoveries == 0);
  CHECK(*s.query(*sub) == FenceStatus::Pending);
  // Both paging buffers (fences 1 and 3) are in flight: nothing has been reported yet.
  REQUIRE(st.rt->executor().in_flight() == 2);

  // Waiting for it runs TDR: the engine is reset, the paging buffer is resubmitted with fence 3
  // and the innocent render packet, requeued, takes fence 5.
  st.mock->clear_log();
  if (Status w = s.wait(*sub, 1ms); !w) FAIL(to_string(w.error()));
  expected.clear();
  const std::vector<std::string> emissions{
      "INT_STATUS=0x1",  // fence 1 (the hung context's paging) retired
      // TDR: engine reset and the ring set up again (Device::reset_engine)
      "CTRL=0x0", "RESET=0x1", "INT_ENABLE=0x0", "INT_STATUS=0x7",
      fmt::format("RING_BASE_LO={:#x}", static_cast<std::uint32_t>(st.engine->ring)),
      fmt::format("RING_BASE_HI={:#x}", static_cast<std::uint32_t>(st.engine->ring >> 32)), "RING_SIZE=0x6",
      fmt::format("WB_ADDR_LO={:#x}", static_cast<std::uint32_t>(st.engine->wb)),
      fmt::format("WB_ADDR_HI={:#x}", static_cast<std::uint32_t>(st.engine->wb >> 32)), "RING_TAIL=0x0",
      "INT_ENABLE=0x3", "CTRL=0x1",
      "RING_TAIL=0x1",   // the resubmitted paging buffer, fence 3 again
      "RING_TAIL=0x2",   // the requeued render packet, fence 5
      "INT_STATUS=0x1",  // their completion acknowledged
  };
  expected.insert(expected.end(), emissions.begin(), emissions.end());
  CHECK(st.writes() == expected);
  const abi::RingEntry resubmitted = st.engine->entry(0);
  check_entry(resubmitted, 3, 0, kPagingFlags);
  check_entry(st.engine->entry(1), 5, work_id, 0);
  CHECK(s.counters().recoveries == 1);
  CHECK(s.counters().resubmitted_paging == 1);
  CHECK(s.counters().cancelled_packets == 1);
  CHECK(s.last_ring_fence() == 5);
  CHECK(st.rt->executor().counters().last_fence == 3);
  CHECK(st.rt->executor().in_flight() == 0);  // its buffer went back once fence 3 retired
  CHECK(s.wait(*lost, 1ms).error().code == Errc::DeviceLost);
}

TEST_CASE("emission: a paging submission without a buffer is refused before anything is touched", "[sched][emit]") {
  Stack st;
  st.mock->clear_log();
  bool stamped = false;
  auto r = st.sched().submit_paging({}, [&](RingFence) {
    stamped = true;
    return ok_status();
  });
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK_FALSE(r.error().hardware_touched);
  CHECK_FALSE(stamped);
  CHECK(st.mock->log().empty());
  CHECK(st.sched().last_ring_fence() == 0);
}

TEST_CASE("scheduler: DMA buffers live in the DMA-buffer segment, which must be the kernel window",
          "[sched][emit][dma_segment]") {
  auto t = std::make_unique<MockTransport>();
  MockTransport& m = *t;
  auto engine = gart_device(m);
  auto device = Device::open(std::move(t));
  REQUIRE(device);
  auto window = KernelWindow::create(*device->aperture(), device->transport(), 4);
  REQUIRE(window);
  TransportSystemMemory system(device->transport());
  const auto scheduler_for = [&](const kmd::AdapterDescription& desc) {
    vidmm::ReferenceExecutor executor(desc.segments, desc.page_size);
    auto adapter = kmd::Adapter::create(desc, executor, system);
    REQUIRE(adapter);
    m.clear_log();
    auto s = Scheduler::create(*device, **adapter, **window, nullptr);
    CHECK(m.log().empty());
    return s ? Status{} : Status{s.error()};
  };
  SECTION("no DMA-buffer segment described: Unsupported") {
    auto st = scheduler_for(kmd::describe(device->info()));
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::Unsupported);
    CHECK_FALSE(st.error().hardware_touched);
    CHECK_THAT(st.error().message, Catch::Contains("no DMA-buffer segment"));
  }
  SECTION("a DMA-buffer segment that is not the window: InvalidArgument") {
    auto desc = kmd::describe(device->info(), 8);  // 8 pages described, the window has 4
    REQUIRE(desc.dma_buffer_segment_id != kSystemMemory);
    auto st = scheduler_for(desc);
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::InvalidArgument);
    CHECK_THAT(st.error().message, Catch::Contains("DMA buffers must lie inside the segment SubmitCommand names"));
  }
  SECTION("the window's own range: accepted") {
    auto desc = kmd::describe(device->info(), 4);
    REQUIRE(desc.dma_buffer_segment_id != kSystemMemory);
    CHECK(desc.segments[desc.dma_buffer_segment_id - 1].base_address == (*window)->gpu_base());
    CHECK(scheduler_for(desc));
  }
}

TEST_CASE("scheduler: every DMA buffer lies in the segment SubmitCommand names, which the context's set names",
          "[sched][dma_segment]") {
  Stack st;
  kmd::Adapter& adapter = st.rt->adapter();
  const SegmentId dma = adapter.dma_buffer_segment();
  REQUIRE(dma != kSystemMemory);
  const kmd::SegmentDescriptor& seg = **adapter.segment(dma);
  CHECK(seg.base_address == st.rt->window().gpu_base());
  CHECK(seg.size == st.rt->window().bytes());
  CHECK_FALSE(adapter.allocation_segments().contains(dma));
  auto dev = adapter.create_device({});
  REQUIRE(dev);
  CHECK(dev->info().dma_buffer_segment_set == kmd::SegmentSet::of(dma));
  auto ctx = st.rt->create_context(*dev);
  REQUIRE(ctx);
  CHECK((*ctx)->get().info().dma_buffer_segment_set == kmd::SegmentSet::of(dma));

  // Allocations cannot be placed in it.
  auto info = memory_allocation(adapter, 4096);
  info.supported_read_segments = info.supported_read_segments | kmd::SegmentSet::of(dma);
  auto refused = dev->create_allocation(info);
  REQUIRE_FALSE(refused);
  CHECK_THAT(refused.error().message, Catch::Contains("the kernel's DMA-buffer segment"));

  auto a = dev->create_allocation(memory_allocation(adapter, 4096));
  REQUIRE(a);
  umd::CommandList cl;
  REQUIRE(cl.fill(a->handle(), 0, 4096, 0x11223344u));
  auto sub = st.sched().submit((*ctx)->get(), cl);
  REQUIRE(sub);
  REQUIRE(st.sched().wait(*sub, 1ms));
  bool render_seen = false;
  for (std::uint32_t i = 0; i < 2; ++i) {
    const abi::RingEntry e = st.engine->entry(i);
    if (e.flags & abi::ring_flags::kPaging) continue;
    render_seen = true;
    CHECK(e.buf_addr >= seg.base_address);
    CHECK(e.buf_addr + e.end_offset <= seg.base_address + seg.size);
  }
  CHECK(render_seen);
}

TEST_CASE("scheduler: DmaBufferSegmentSet 0 puts DMA buffers in system memory, a set without the window is refused",
          "[sched][dma_segment]") {
  struct Policy : kmd::DefaultSizingPolicy {
    kmd::SegmentSet set;
    kmd::DxgkContextInfo context_info(const kmd::Adapter& a, kmd::CreateDeviceFlags d, kmd::CreateContextFlags c,
                                      std::uint32_t node) const override {
      auto info = kmd::DefaultSizingPolicy::context_info(a, d, c, node);
      info.dma_buffer_segment_set = set;
      return info;
    }
  };
  auto policy = std::make_shared<Policy>();
  auto t = std::make_unique<MockTransport>();
  MockTransport* mock = t.get();
  auto engine = gart_device(*mock);
  RuntimeOptions o;
  o.kernel_window_pages = kernel_window_pages_for(8);
  o.sizing_policy = policy;
  auto rt = Runtime::open(std::move(t), o);
  REQUIRE(rt);
  auto dev = (*rt)->adapter().create_device({});
  REQUIRE(dev);
  SECTION("0: contiguous system memory, fetched at its bus address by a privileged entry") {
    policy->set = {};
    auto ctx = (*rt)->create_context(*dev);
    REQUIRE(ctx);
    auto a = dev->create_allocation(memory_allocation((*rt)->adapter(), 4096));
    REQUIRE(a);
    umd::CommandList cl;
    REQUIRE(cl.fill(a->handle(), 0, 4096, 0x0badf00du));
    const std::uint32_t window_maps_before = (*rt)->window().mapped_buffers();
    auto sub = (*rt)->scheduler().submit((*ctx)->get(), cl);
    REQUIRE(sub);
    REQUIRE((*rt)->scheduler().wait(*sub, 1ms));
    CHECK((*rt)->window().mapped_buffers() == window_maps_before);  // nothing went into the window
    bool render_seen = false;
    for (std::uint32_t i = 0; i < 2; ++i) {
      const abi::RingEntry e = engine->entry(i);
      if (e.flags & abi::ring_flags::kPaging) continue;
      render_seen = true;
      CHECK(e.flags == abi::ring_flags::kPrivileged);
      CHECK_FALSE((*rt)->device().aperture()->contains(e.buf_addr));  // a bus address, not the aperture
      CHECK(mock->dma_cpu(e.buf_addr) != nullptr);
    }
    CHECK(render_seen);
    ctx->reset();
  }
  SECTION("the memory manager's aperture segment only") {
    policy->set = kmd::SegmentSet::of(*(*rt)->adapter().aperture_segment());
    auto ctx = (*rt)->create_context(*dev);
    REQUIRE_FALSE(ctx);
    CHECK(ctx.error().code == Errc::InvalidArgument);
    CHECK_THAT(ctx.error().message, Catch::Contains("does not name segment"));
  }
  CHECK((*rt)->adapter().live_contexts() == 0);
}

TEST_CASE("scheduler: a context of another adapter is neither registered nor served", "[sched][handles]") {
  Stack a, b;
  auto a_dev = a.rt->adapter().create_device({});
  auto b_dev = b.rt->adapter().create_device({});
  REQUIRE((a_dev && b_dev));
  auto a_ctx = a.rt->create_context(*a_dev);
  auto b_ctx = b.rt->create_context(*b_dev);
  REQUIRE((a_ctx && b_ctx));
  auto alloc = b_dev->create_allocation(memory_allocation(b.rt->adapter(), 4096));
  REQUIRE(alloc);
  umd::CommandList cl;
  REQUIRE(cl.fill(alloc->handle(), 0, 4096, 0x5a5a5a5au));
  a.mock->clear_log();

  auto added = a.sched().add_context((*b_ctx)->get());
  REQUIRE_FALSE(added);
  CHECK_THAT(added.error().message, Catch::Contains("belongs to another adapter"));
  auto sub = a.sched().submit((*b_ctx)->get(), cl);
  REQUIRE_FALSE(sub);
  CHECK_THAT(sub.error().message, Catch::Contains("is not registered with this scheduler"));
  // On its own adapter, B's allocation handle is not A's either.
  sub = a.sched().submit((*a_ctx)->get(), cl);
  REQUIRE_FALSE(sub);
  CHECK_THAT(sub.error().message, Catch::Contains("belongs to another adapter's memory manager"));
  auto cross = a.rt->create_context(*b_dev);
  REQUIRE_FALSE(cross);
  CHECK_THAT(cross.error().message, Catch::Contains("is not a live device of this runtime's adapter"));
  CHECK(b.rt->adapter().live_contexts() == 1);
  CHECK(a.writes().empty());  // nothing reached A's device
  CHECK(b.sched().submit((*b_ctx)->get(), cl));
}

TEST_CASE("flip queue: an adapter whose whole aperture is the kernel's window has nowhere to scan out from: Unsupported",
          "[flip][sched]") {
  // The window takes every aperture page, so no aperture segment is left for allocations and the
  // primaries could only live in the memory segment, which the display cannot read.
  auto t = std::make_unique<MockTransport>();
  MockTransport* mock = t.get();
  auto engine = std::make_unique<test::FakeEngine>(*mock);
  const std::uint32_t window_pages = kernel_window_pages_for(8);
  test::MockSegments segments = test::kGartDevice;
  segments.aperture_pages = window_pages;
  test::describe_gart_device(*mock, segments);
  RuntimeOptions o;
  o.kernel_window_pages = window_pages;
  auto rt = Runtime::open(std::move(t), o);
  if (!rt) FAIL(to_string(rt.error()));
  REQUIRE((*rt)->adapter().aperture_segments() == kmd::SegmentSet::of((*rt)->adapter().description().dma_buffer_segment_id));
  auto dev = (*rt)->adapter().create_device({});
  REQUIRE(dev);
  auto ctx = (*rt)->create_context(*dev);
  REQUIRE(ctx);
  mock->clear_log();

  FlipQueueOptions fo;
  fo.surface = kmd::SurfaceDesc{64, 16, 256, 4};
  auto q = FlipQueue::create(**rt, *dev, (*ctx)->get(), fo);
  REQUIRE_FALSE(q);
  CHECK(q.error().code == Errc::Unsupported);
  CHECK(q.error().message.find("no aperture segment") != std::string::npos);
  CHECK_FALSE(q.error().hardware_touched);
  CHECK(mock->log().empty());  // refused before any allocation was made or mapped
}
