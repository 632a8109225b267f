// Context allocations (DXGKARGCB_CREATECONTEXTALLOCATION): every field's rule, residency with
// their context/device, INIT_CONTEXT_RESOURCE, content across eviction, destroy.
#include "sgpu/kmd/context_allocation.hpp"
#include "vidmm_fixture.hpp"

using namespace vidmm_test;
using T = vidmm::PagingOperationType;

namespace {
CreateContextAllocationArgs args_for(const kmd::Device& d, const Context* c, SegmentSet segs = SegmentSet::of(kMem)) {
  CreateContextAllocationArgs a;
  a.context_allocation_flags.value = c ? 0 : CreateContextAllocationFlags::kSharedAcrossContexts;
  a.device = d.id();
  a.context = c ? c->id() : 0;
  a.driver_allocation = 0xc5a;
  a.size = 8192;
  a.supported_segment_set = segs;
  return a;
}
}  // namespace

TEST_CASE("context allocation rules: each violation named, nothing created", "[kmd][context_allocation]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  auto other = f.adapter->create_device({});
  auto sys = f.adapter->create_device({CreateDeviceFlags::kSystemDevice});
  REQUIRE((dev && other && sys));
  auto ctx = dev->create_context({});
  auto other_ctx = other->create_context({});
  auto sys_ctx = sys->create_context({0, 1, {CreateContextFlags::kSystemContext}, {}});
  REQUIRE((ctx && other_ctx && sys_ctx));
  struct Case {
    const char* name;
    CreateContextAllocationArgs args;
    const char* expect;
  };
  auto shared = args_for(*dev, nullptr);
  auto gpu = args_for(*dev, &*ctx);
  std::vector<Case> cases;
  auto c1 = shared; c1.context = ctx->id(); cases.push_back({"shared with hContext", c1, "must be null when SharedAcrossContexts = 1"});
  auto c2 = gpu; c2.context = 0; cases.push_back({"per-context without hContext", c2, "hContext is null"});
  auto c3 = gpu; c3.context = other_ctx->id(); cases.push_back({"context of another device", c3, "belongs to device"});
  auto c4 = args_for(*sys, &*sys_ctx); c4.context_allocation_flags.value = 0; cases.push_back({"system device", c4, "system device"});
  auto c5 = shared; c5.device = 0; cases.push_back({"null device", c5, "hDevice is null"});
  auto c6 = shared; c6.context_allocation_flags.value |= 2; cases.push_back({"MapGpuVirtualAddress", c6, "undefined bits 0x2"});
  auto c7 = shared; c7.physical_adapter_index = 1; cases.push_back({"adapter index", c7, "PhysicalAdapterIndex 1"});
  auto c8 = shared; c8.size = 0; cases.push_back({"size 0", c8, "Size is 0"});
  auto c9 = shared; c9.alignment = 12288; cases.push_back({"alignment", c9, "Alignment 12288"});
  auto c10 = shared; c10.eviction_segment_set = SegmentSet::of(kMem); cases.push_back({"eviction into memory", c10, "EvictionSegmentSet"});
  auto c11 = shared; c11.preferred_segment = SegmentPreference::of({kAp}); cases.push_back({"preferred unsupported", c11, "PreferredSegment"});
  auto c12 = shared; c12.hinted_bank = BankPreference::of({1}); cases.push_back({"bank", c12, "HintedBank"});
  auto c13 = shared; c13.flags.value = AllocationInfoFlags::kCached; cases.push_back({"flags", c13, "Cached requires CpuVisible"});
  for (const auto& c : cases) {
    INFO(c.name);
    const auto before = f.mm().allocator(kMem);
    auto r = f.adapter->create_context_allocation(c.args);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK_THAT(r.error().message, Catch::Contains(c.expect));
    CHECK(f.mm().live_allocations() == 0);
    CHECK(f.mm().allocator(kMem) == before);
  }
  CHECK(f.adapter->create_context_allocation(shared));
  CHECK(f.adapter->create_context_allocation(gpu));
}

TEST_CASE("context allocations come along with their context's submissions, initialised once", "[kmd][context_allocation]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  auto ctx = dev->create_context({});
  auto ctx2 = dev->create_context({});
  REQUIRE((dev && ctx && ctx2));
  auto per_ctx = f.adapter->create_context_allocation(args_for(*dev, &*ctx));
  auto per_dev = f.adapter->create_context_allocation(args_for(*dev, nullptr));
  REQUIRE((per_ctx && per_dev));
  CHECK(per_ctx->state()->placement.segment == 0);
  REQUIRE(f.mm().make_resident({}, ctx2->residency_scope()));  // other context: only the device one
  CHECK(per_ctx->state()->placement.segment == 0);
  CHECK(per_dev->state()->placement.segment == kMem);
  REQUIRE(f.mm().make_resident({}, ctx->residency_scope()));
  auto where = per_ctx->state()->placement;
  CHECK(where.segment == kMem);
  CHECK(f.executor.counters().count(T::InitContextResource) == 2);
  CHECK(f.executor.counters().count(T::Fill) == 0);
  // The GPU saves context state into it; it survives eviction and comes back in place of a new INIT.
  gpu_fill(f.executor, where.gpu_address, 8192, 11);
  REQUIRE(f.mm().evict(per_ctx->handle()));
  CHECK(per_ctx->state()->placement.segment == 0);
  REQUIRE(f.mm().make_resident({}, ctx->residency_scope()));
  CHECK(gpu_check(f.executor, per_ctx->state()->placement.gpu_address, 8192, 11));
  CHECK(f.executor.counters().count(T::InitContextResource) == 2);
}

TEST_CASE("only CpuVisible + Protected aperture-only context allocations get a CPU address", "[kmd][context_allocation]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  auto ctx = dev->create_context({});
  auto with_cpu = args_for(*dev, &*ctx, SegmentSet::of(kAp));
  with_cpu.flags.value = AllocationInfoFlags::kCpuVisible | AllocationInfoFlags::kProtected;
  auto no_cpu = args_for(*dev, &*ctx, SegmentSet::of(kAp));
  no_cpu.flags.value = AllocationInfoFlags::kCpuVisible;
  auto a = f.adapter->create_context_allocation(with_cpu);
  auto b = f.adapter->create_context_allocation(no_cpu);
  REQUIRE((a && b));
  REQUIRE(f.mm().make_resident({}, ctx->residency_scope()));
  int with = 0, without = 0;
  for (const auto& op : f.executor.log())
    if (auto* i = std::get_if<vidmm::InitContextResourceOp>(&op)) (i->cpu_address ? with : without)++;
  CHECK(with == 1);
  CHECK(without == 1);
}

TEST_CASE("destroying a context allocation or its context returns everything", "[kmd][context_allocation]") {
  Fixture f;
  const auto empty_mem = f.mm().allocator(kMem);
  const auto empty_ap = f.mm().allocator(kAp);
  auto dev = f.adapter->create_device({});
  {
    auto ctx = dev->create_context({});
    auto a = f.adapter->create_context_allocation(args_for(*dev, &*ctx, SegmentSet::of(kAp)));
    auto b = f.adapter->create_context_allocation(args_for(*dev, &*ctx));
    REQUIRE((a && b));
    REQUIRE(f.mm().make_resident({}, ctx->residency_scope()));
    a->reset();
    CHECK(f.executor.mapped_pages(kAp) == 0);
    CHECK(f.mm().aperture_committed() == 0);
  }  // the context goes, taking b with it
  CHECK(f.mm().live_allocations() == 0);
  CHECK(f.mm().allocator(kMem) == empty_mem);
  CHECK(f.mm().allocator(kAp) == empty_ap);
}

TEST_CASE("handles are the adapter's own: another adapter's hDevice/hContext and destroyed ones are refused",
          "[kmd][context_allocation][handles]") {
  Fixture a, b;
  auto a_dev = a.adapter->create_device({});
  auto b_dev = b.adapter->create_device({});
  REQUIRE((a_dev && b_dev));
  auto a_ctx = a_dev->create_context({});
  auto b_ctx = b_dev->create_context({});
  REQUIRE((a_ctx && b_ctx));
  // Both adapters are at their first device and context: only the adapter tag tells them apart.
  CHECK((a_dev->id() & 0xffffffffu) == (b_dev->id() & 0xffffffffu));
  CHECK(a_dev->id() != b_dev->id());
  CHECK(a_ctx->id() != b_ctx->id());
  CHECK(a.adapter->owns_context(a_ctx->id()));
  CHECK_FALSE(a.adapter->owns_context(b_ctx->id()));

  const auto refused = [&](const CreateContextAllocationArgs& args, const char* expect) {
    auto r = a.adapter->create_context_allocation(args);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK_THAT(r.error().message, Catch::Contains(expect));
    CHECK(a.mm().live_allocations() == 0);  // nothing recorded, nothing for a later context to inherit
  };
  SECTION("another adapter's device") { refused(args_for(*b_dev, nullptr), "is not a live device of this adapter"); }
  SECTION("another adapter's context on our device") {
    auto args = args_for(*a_dev, &*a_ctx);
    args.context = b_ctx->id();
    refused(args, "is not a live context of this adapter");
  }
  SECTION("a destroyed context, then a destroyed device") {
    const auto args = args_for(*a_dev, &*a_ctx);
    *a_ctx = Context(std::move(*a_ctx));  // a move keeps the handle alive
    REQUIRE(a.adapter->create_context_allocation(args));
    { Context gone = std::move(*a_ctx); }
    CHECK_FALSE(a_ctx->live());
    refused(args, "is not a live context of this adapter");
    // A new context never gets the destroyed one's handle back.
    auto next = a_dev->create_context({});
    REQUIRE(next);
    CHECK(next->id() != args.context);
    const auto shared = args_for(*a_dev, nullptr);
    { kmd::Device gone = std::move(*a_dev); }
    refused(shared, "is not a live device of this adapter");
    CHECK_FALSE(a_dev->create_context({}));
  }
}

TEST_CASE("allocation handles are the memory manager's own: another adapter's and destroyed ones are refused",
          "[vidmm][handles]") {
  Fixture a, b;
  auto a_dev = a.adapter->create_device({});
  auto b_dev = b.adapter->create_device({});
  auto mine = a_dev->create_allocation(alloc_info(4096));
  auto theirs = b_dev->create_allocation(alloc_info(4096));
  REQUIRE((mine && theirs));
  CHECK((mine->handle().value & 0xffffffffu) == (theirs->handle().value & 0xffffffffu));  // same slot
  auto q = a.mm().query(theirs->handle());
  REQUIRE_FALSE(q);
  CHECK_THAT(q.error().message, Catch::Contains("belongs to another adapter's memory manager"));
  CHECK_FALSE(a.mm().destroy_allocation(theirs->handle()));
  CHECK_FALSE(a.mm().evict(theirs->handle()));
  CHECK(a.mm().live_allocations() == 1);
  CHECK(b.mm().live_allocations() == 1);
  const AllocationHandle old = mine->handle();
  mine->reset();
  auto again = a_dev->create_allocation(alloc_info(4096));  // the same record, a new generation
  REQUIRE(again);
  CHECK((again->handle().value & 0xffffffffu) == (old.value & 0xffffffffu));
  q = a.mm().query(old);
  REQUIRE_FALSE(q);
  CHECK_THAT(q.error().message, Catch::Contains("is not a live allocation"));
}
