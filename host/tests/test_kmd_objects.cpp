// Adapter, devices and contexts: description from the device's capabilities, DXGK_DEVICEINFO /
// DXGK_CONTEXTINFO sizing and its rules, creation flags, command pools.
#include <cstring>

#include "sgpu/kmd/context_allocation.hpp"
#include "sgpu/kmd/render.hpp"
#include "vidmm_fixture.hpp"

using namespace vidmm_test;

namespace {
// A policy that returns the default values with one field broken.
struct BrokenPolicy : DefaultSizingPolicy {
  std::function<void(DxgkContextInfo&)> ctx = [](auto&) {};
  std::function<void(DxgkDeviceInfo&)> dev = [](auto&) {};
  DxgkDeviceInfo device_info(const Adapter& a, CreateDeviceFlags f) const override {
    auto d = DefaultSizingPolicy::device_info(a, f);
    dev(d);
    return d;
  }
  DxgkContextInfo context_info(const Adapter& a, CreateDeviceFlags df, CreateContextFlags f, std::uint32_t n) const override {
    auto c = DefaultSizingPolicy::context_info(a, df, f, n);
    ctx(c);
    return c;
  }
};
}  // namespace

TEST_CASE("adapter: described from DeviceInfo, absent segments are typed errors", "[kmd][adapter]") {
  sgpu::DeviceInfo info;
  info.page_shift = 12;
  info.bus_addr_bits = 40;
  MockTransport mock;
  TransportSystemMemory sys(mock);
  {  // today's device: no segments reported
    auto d = describe(info);
    CHECK(d.segments.empty());
    vidmm::ReferenceExecutor ex(d.segments, 4096);
    auto a = Adapter::create(d, ex, sys);
    REQUIRE_FALSE(a);
    CHECK(a.error().code == Errc::Unsupported);
  }
  info.has_gart = true;
  info.aperture_segment = {0x8000'0000, 16 << 20};
  auto d = describe(info);
  REQUIRE(d.segments.size() == 1);
  CHECK(d.segments[0].is_aperture());
  CHECK(d.caps.highest_acceptable_address == (std::uint64_t{1} << 40) - 1);
  CHECK(d.caps.aperture_segment_commit_limit == 16u << 20);
  vidmm::ReferenceExecutor ex(d.segments, 4096);
  auto a = Adapter::create(d, ex, sys);
  REQUIRE(a);
  CHECK(*(*a)->aperture_segment() == 1);
  CHECK((*a)->memory_segment().error().code == Errc::Unsupported);
  CHECK((*a)->segment(2).error().code == Errc::InvalidArgument);
  info.has_memory_segment = true;
  info.memory_segment = {0x4000'0000, 8 << 20};
  auto both = describe(info);
  REQUIRE(both.segments.size() == 2);
  CHECK_FALSE(both.segments[0].is_aperture());  // memory segment is ID 1
}

TEST_CASE("adapter: driver caps dependencies", "[kmd][adapter]") {
  MockTransport mock;
  TransportSystemMemory sys(mock);
  auto with = [&](auto mutate) {
    auto d = two_segments();
    mutate(d);
    vidmm::ReferenceExecutor ex(d.segments, 4096);
    return Adapter::create(d, ex, sys);
  };
  CHECK_THAT(with([](auto& d) { d.caps.scheduling_caps.value = VidSchCaps::kPreemptionAware; }).error().message,
             Catch::Contains("requires MultiEngineAware"));
  CHECK_THAT(with([](auto& d) { d.caps.scheduling_caps.value = VidSchCaps::kMultiEngineAware | VidSchCaps::kNoDmaPatching; }).error().message,
             Catch::Contains("NoDmaPatching"));
  CHECK_THAT(with([](auto& d) { d.caps.paging_node = 1; }).error().message, Catch::Contains("PagingNode"));
  CHECK_THAT(with([](auto& d) { d.caps.max_allocation_list_slot_id = 0; }).error().message, Catch::Contains("MaxAllocationListSlotId"));
  CHECK_THAT(with([](auto& d) { d.paging_buffer_segment_id = kMem; }).error().message, Catch::Contains("PagingBufferSegmentId"));
  CHECK(with([](auto& d) { d.paging_buffer_segment_id = kAp; }));
}

TEST_CASE("sizing: one DMA buffer holds the largest packet plus a Present of a RECT", "[kmd][sizing]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  REQUIRE(dev);
  auto ctx = dev->create_context({});
  REQUIRE(ctx);
  std::uint32_t largest = 0;
  for (const auto& p : abi::kPackets) largest = std::max(largest, p.max_dwords * 4);
  const auto& ci = ctx->info();
  CHECK(ci.dma_buffer_size >= largest + command_sizes().present_rect_bytes);
  CHECK(ci.dma_buffer_size % kPage == 0);
  CHECK(ci.dma_buffer_segment_set == SegmentSet::of(kAp));
  CHECK(ci.dma_buffer_private_data_size == sizeof(RenderPrivateData));
  CHECK(ci.allocation_list_size >= command_sizes().present_allocations);
  CHECK(ci.patch_location_list_size >= command_sizes().present_patch_locations);
  CHECK(ci.reserved == 0);
  CHECK(ci.caps.value == 0);
  CHECK(ci.paging_companion_node_id == f.adapter->caps().paging_node);
  CHECK(dev->info().dma_buffer_size == ci.dma_buffer_size);
  CHECK(dev->info().flags.value == 0);
}

TEST_CASE("sizing: a GDI context's allocation list is exactly 256", "[kmd][sizing]") {
  Fixture f;
  auto gdi = f.adapter->create_device({CreateDeviceFlags::kGdiDevice});
  REQUIRE(gdi);
  auto ctx = gdi->create_context({0, 1, {CreateContextFlags::kGdiContext}, {}});
  REQUIRE(ctx);
  CHECK(ctx->info().allocation_list_size == 256);
  auto policy = std::make_shared<BrokenPolicy>();
  policy->ctx = [](auto& c) { c.allocation_list_size = 255; };
  Fixture g(two_segments(), policy);
  auto gdi2 = g.adapter->create_device({CreateDeviceFlags::kGdiDevice});
  REQUIRE(gdi2);
  auto bad = gdi2->create_context({0, 1, {CreateContextFlags::kGdiContext}, {}});
  REQUIRE_FALSE(bad);
  CHECK_THAT(bad.error().message, Catch::Contains("AllocationListSize 255 of a GDI context must be exactly 256"));
  CHECK(gdi2->create_context({}));  // a non-GDI context may use 255
  CHECK(g.adapter->live_contexts() == 0);
}

TEST_CASE("sizing rules: broken DXGK_CONTEXTINFO / DXGK_DEVICEINFO values fail creation, naming field and value", "[kmd][sizing]") {
  struct Case {
    const char* name;
    std::function<void(DxgkContextInfo&)> ctx;
    const char* expect;
  };
  std::vector<Case> cases = {
      {"memory segment", [](auto& c) { c.dma_buffer_segment_set = SegmentSet::of(kMem); }, "names segment 1, a memory segment"},
      {"unknown segment", [](auto& c) { c.dma_buffer_segment_set = SegmentSet(0x10); }, "do not exist"},
      {"reserved", [](auto& c) { c.reserved = 7; }, "Reserved is 0x7, must be 0"},
      {"caps", [](auto& c) { c.caps.value = ContextInfoCaps::kDriverManagesResidency; }, "Caps 0x2"},
      {"companion node", [](auto& c) { c.paging_companion_node_id = 3; }, "PagingCompanionNodeId 3"},
      {"too small", [](auto& c) { c.dma_buffer_size = 4096; }, "DmaBufferSize 4096 is smaller"},
      {"allocation list", [](auto& c) { c.allocation_list_size = 2; }, "AllocationListSize 2"},
      {"patch list", [](auto& c) { c.patch_location_list_size = 1; }, "PatchLocationListSize 1"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    auto policy = std::make_shared<BrokenPolicy>();
    policy->ctx = c.ctx;
    Fixture f(two_segments(), policy);
    auto dev = f.adapter->create_device({});
    REQUIRE(dev);
    const std::size_t created_before = f.mock.log().size();
    auto ctx = dev->create_context({});
    REQUIRE_FALSE(ctx);
    CHECK(ctx.error().code == Errc::InvalidArgument);
    CHECK_FALSE(ctx.error().hardware_touched);
    CHECK_THAT(ctx.error().message, Catch::Contains(c.expect));
    CHECK(f.adapter->live_contexts() == 0);
    CHECK(f.mock.log().size() == created_before);
  }
  auto policy = std::make_shared<BrokenPolicy>();
  policy->dev = [](auto& d) { d.dma_buffer_segment_set = SegmentSet::of(kMem); };
  Fixture f(two_segments(), policy);
  auto dev = f.adapter->create_device({});
  REQUIRE_FALSE(dev);
  CHECK_THAT(dev.error().message, Catch::Contains("DXGK_DEVICEINFO.DmaBufferSegmentSet 0x1 names segment 1"));
  policy->dev = [](auto& d) { d.flags.value = 2; };
  CHECK_THAT(f.adapter->create_device({}).error().message, Catch::Contains("reserved bits"));
  CHECK(f.adapter->live_devices() == 0);
}

TEST_CASE("sizing: DmaBufferSegmentSet 0 (contiguous system memory) without an aperture", "[kmd][sizing]") {
  auto d = two_segments();
  d.segments.pop_back();
  d.caps.aperture_segment_commit_limit = 0;
  Fixture f(d);
  auto dev = f.adapter->create_device({});
  REQUIRE(dev);
  auto ctx = dev->create_context({});
  REQUIRE(ctx);
  CHECK(ctx->info().dma_buffer_segment_set.empty());
}

TEST_CASE("creation flags: undefined bits, exclusivity, system/GDI pairing, node and affinity", "[kmd][flags]") {
  Fixture f;
  CHECK_THAT(f.adapter->create_device({4}).error().message, Catch::Contains("undefined bits 0x4"));
  CHECK_THAT(f.adapter->create_device({3}).error().message, Catch::Contains("exclusive"));
  auto dev = f.adapter->create_device({});
  REQUIRE(dev);
  CHECK_THAT(dev->create_context({0, 1, {4}, {}}).error().message, Catch::Contains("undefined bits 0x4"));
  CHECK_THAT(dev->create_context({0, 1, {CreateContextFlags::kSystemContext}, {}}).error().message,
             Catch::Contains("not the system device"));
  CHECK_THAT(dev->create_context({0, 1, {CreateContextFlags::kGdiContext}, {}}).error().message,
             Catch::Contains("not a GDI device"));
  CHECK_THAT(dev->create_context({1, 1, {}, {}}).error().message, Catch::Contains("NodeOrdinal 1"));
  CHECK_THAT(dev->create_context({0, 3, {}, {}}).error().message, Catch::Contains("EngineAffinity 0x3"));
  auto sys = f.adapter->create_device({CreateDeviceFlags::kSystemDevice});
  REQUIRE(sys);
  CHECK(sys->create_context({0, 1, {CreateContextFlags::kSystemContext}, {}}));
}

TEST_CASE("pools: never below the starting sizes, grow on demand, trim back, private data zeroed once",
          "[kmd][pools]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  auto ctx = dev->create_context({});
  REQUIRE(ctx);
  auto& pool = ctx->dma_buffers();
  auto b = pool.acquire();
  REQUIRE(b);
  CHECK(b->memory.size() >= ctx->info().dma_buffer_size);
  REQUIRE(b->private_data.size() == sizeof(RenderPrivateData));
  for (auto x : b->private_data) CHECK(x == std::byte{0});
  b->private_data[0] = std::byte{0x42};  // Render's business; nobody clears it on reuse
  REQUIRE(pool.release(std::move(*b)));
  auto again = pool.acquire();
  CHECK(again->private_data[0] == std::byte{0x42});
  auto big = pool.acquire(4 * ctx->info().dma_buffer_size);
  REQUIRE(big);
  CHECK(big->memory.size() >= 4 * ctx->info().dma_buffer_size);
  REQUIRE(pool.release(std::move(*big)));
  REQUIRE(pool.release(std::move(*again)));
  pool.trim();
  CHECK(pool.free_count() == 1);
  CHECK(pool.acquire(0)->memory.size() >= pool.starting_size());

  auto& lists = ctx->allocation_lists();
  auto l = lists.acquire();
  CHECK(l.capacity() >= ctx->info().allocation_list_size);
  auto bigger = lists.acquire(1000);
  CHECK(bigger.capacity() >= 1000);
  REQUIRE(lists.release(std::move(bigger)));
  REQUIRE(lists.release(std::move(l)));
  CHECK(lists.lent_count() == 0);
  lists.trim();
  CHECK(lists.acquire().capacity() >= lists.starting_size());
  CHECK(ctx->patch_location_lists().acquire().capacity() >= ctx->info().patch_location_list_size);
}

TEST_CASE("pools take back only what they lent, unchanged, and a refusal leaves the argument with the caller",
          "[kmd][pools]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  auto ctx = dev->create_context({});
  REQUIRE(ctx);
  auto& pool = ctx->dma_buffers();
  auto b = pool.acquire();
  REQUIRE(b);
  CHECK(pool.lent_count() == 1);

  SECTION("private data cut short") {
    b->private_data.resize(4);
    auto st = pool.release(std::move(*b));
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::InvalidArgument);
    CHECK_THAT(st.error().message, Catch::Contains("comes back with 4 bytes of private data; it was lent with 16"));
    CHECK(b->memory);  // still the caller's
    CHECK(pool.free_count() == 0);
    CHECK(pool.lent_count() == 1);
    b->private_data.resize(sizeof(RenderPrivateData));
    REQUIRE(pool.release(std::move(*b)));  // put right, it is taken
    CHECK(pool.free_count() == 1);
    CHECK(pool.acquire()->private_data.size() == sizeof(RenderPrivateData));
  }
  SECTION("given back twice") {
    const auto bus = b->memory.bus_addr();
    REQUIRE(pool.release(std::move(*b)));
    kmd::DmaBuffer forged;
    auto st = pool.release(std::move(forged));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("was not lent by this pool"));
    auto again = pool.acquire();
    REQUIRE(again);
    CHECK(again->memory.bus_addr() == bus);
    REQUIRE(pool.release(std::move(*again)));
  }
  SECTION("a buffer of another pool, or another size") {
    auto other_ctx = dev->create_context({});
    REQUIRE(other_ctx);
    auto theirs = other_ctx->dma_buffers().acquire();
    REQUIRE(theirs);
    auto st = pool.release(std::move(*theirs));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("was not lent by this pool"));
    REQUIRE(other_ctx->dma_buffers().release(std::move(*theirs)));
    b->gpu_address = 0x1000;
    st = pool.release(std::move(*b));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("comes back at GPU address 0x1000; it was lent at 0x0"));
  }
  SECTION("lists: none lent, or shrunk below the starting size") {
    auto& lists = ctx->patch_location_lists();
    std::vector<PatchLocation> stray(lists.starting_size());
    auto st = lists.release(std::move(stray));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("none is lent"));
    CHECK(stray.size() == lists.starting_size());  // left with the caller
    auto l = lists.acquire();
    l.clear();
    l.shrink_to_fit();
    st = lists.release(std::move(l));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("lists are at least the starting size"));
    CHECK(lists.free_count() == 0);
  }
}

TEST_CASE("device owns its allocations: destroying the device returns everything", "[kmd][device]") {
  Fixture f;
  const auto empty = f.mm().allocator(kMem);
  {
    auto dev = f.adapter->create_device({});
    REQUIRE(dev);
    auto a = dev->create_allocation(alloc_info(8192));
    REQUIRE(a);
    REQUIRE(f.mm().make_resident({{a->handle(), true}}));
    auto kept = std::move(*a);  // outlives the device: resetting it later is harmless
    dev = f.adapter->create_device({});
    CHECK(f.mm().live_allocations() == 0);
  }
  CHECK(f.mm().allocator(kMem) == empty);
  CHECK(f.adapter->live_devices() == 0);
}
