// vidmm::MemoryManager: DXGK_ALLOCATIONINFO rules, placement, residency, eviction and the paging
// operations it hands the reference executor.
#include <cstring>
#include <functional>

#include "vidmm_fixture.hpp"

using namespace vidmm_test;
using vidmm::PagingOperationType;
using T = vidmm::PagingOperationType;

namespace {


bool same_state(vidmm::MemoryManager& mm, const std::vector<vidmm::SegmentAllocator>& allocs, std::size_t live) {
  for (SegmentId id = 1; id <= mm.segment_count(); ++id)
    if (mm.allocator(id) != allocs[id - 1]) return false;
  return mm.live_allocations() == live;
}
std::vector<vidmm::SegmentAllocator> allocators(vidmm::MemoryManager& mm) {
  std::vector<vidmm::SegmentAllocator> v;
  for (SegmentId id = 1; id <= mm.segment_count(); ++id) v.push_back(mm.allocator(id));
  return v;
}

}  // namespace

TEST_CASE("allocation info: every broken rule is a typed error naming the field, and changes nothing", "[vidmm][rules]") {
  Fixture f;
  auto& mm = f.mm();
  auto keep = mm.create_allocation(alloc_info(8192));  // some state to preserve
  REQUIRE(keep);
  REQUIRE(mm.make_resident({{*keep, true}}));
  const auto before = allocators(mm);
  const std::size_t live = mm.live_allocations();
  const auto ops = f.executor.log().size();

  using F = AllocationInfoFlags;
  struct Case {
    const char* name;
    std::function<void(AllocationInfo&)> breakit;
    const char* field;
  };
  const SegmentSet ap = SegmentSet::of(kAp);
  std::vector<Case> cases = {
      {"size 0", [](auto& i) { i.size = 0; }, "Size"},
      {"alignment not a power of two", [](auto& i) { i.alignment = 3 * 4096; }, "Alignment"},
      {"priority 0", [](auto& i) { i.priority = 0; }, "AllocationPriority"},
      {"undefined flag bit", [](auto& i) { i.flags.value = 1u << 20; }, "Flags"},
      {"unknown segment in read set", [](auto& i) { i.supported_read_segments = SegmentSet(0x8); }, "SupportedReadSegmentSet"},
      {"no supported segment", [](auto& i) { i.supported_read_segments = i.supported_write_segments = {}; i.preferred_segment = {}; }, "SupportedReadSegmentSet"},
      {"eviction into a memory segment", [](auto& i) { i.eviction_segments = SegmentSet::of(kMem); }, "EvictionSegmentSet"},
      {"preferred not supported", [](auto& i) { i.preferred_segment = SegmentPreference::of({kAp}); }, "PreferredSegment"},
      {"preference gap", [](auto& i) { i.preferred_segment.value = kMem << 6; }, "PreferredSegment"},
      {"preference reserved bits", [](auto& i) { i.preferred_segment.value |= 0x80000000u; }, "PreferredSegment"},
      {"bank without banking", [](auto& i) { i.hinted_bank = BankPreference::of({1}); }, "HintedBank"},
      {"Cached without CpuVisible", [](auto& i) { i.flags.value = F::kCached; }, "Cached requires CpuVisible"},
      {"PermanentSysMem without CpuVisible", [](auto& i) { i.flags.value = F::kPermanentSysMem; }, "PermanentSysMem requires CpuVisible"},
      {"Protected + PermanentSysMem", [](auto& i) { i.flags.value = F::kCpuVisible | F::kProtected | F::kPermanentSysMem; }, "Protected excludes"},
      {"ExistingSysMem + ExistingKernelSysMem", [](auto& i) { i.flags.value = F::kExistingSysMem | F::kExistingKernelSysMem; }, "mutually exclusive"},
      {"ExistingSysMem + PermanentSysMem", [](auto& i) { i.flags.value = F::kCpuVisible | F::kExistingSysMem | F::kPermanentSysMem; }, "exclude PermanentSysMem"},
      {"UseAlternateVA", [](auto& i) { i.flags.value = F::kUseAlternateVA; }, "UseAlternateVA"},
      {"LinkMirrored", [](auto& i) { i.flags.value = F::kLinkMirrored; }, "LinkMirrored"},
      {"PermanentSysMem in a memory segment", [](auto& i) { i.flags.value = F::kCpuVisible | F::kPermanentSysMem; }, "only use aperture segments"},
      {"ExistingSysMem without memory", [ap](auto& i) { i.flags.value = F::kExistingSysMem; i.supported_read_segments = i.supported_write_segments = ap; i.preferred_segment = {}; }, "without existing memory"},
  };
  for (const auto& c : cases) {
    INFO(c.name);
    AllocationInfo info = alloc_info(4096);
    c.breakit(info);
    auto r = mm.create_allocation(info);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK(r.error().hardware_touched == false);
    CHECK_THAT(r.error().message, Catch::Contains(c.field));
    CHECK(same_state(mm, before, live));
  }
  CHECK(f.executor.log().size() == ops);
}

TEST_CASE("allocation info: valid combinations are accepted", "[vidmm][rules]") {
  Fixture f;
  using F = AllocationInfoFlags;
  auto ap_only = alloc_info(4096, {kAp});
  ap_only.flags.value = F::kCpuVisible | F::kPermanentSysMem | F::kCached;
  CHECK(f.mm().create_allocation(ap_only));
  auto prot = alloc_info(4096);
  prot.flags.value = F::kCpuVisible | F::kProtected | F::kFromEndOfSegment | F::kSynchronousPaging | F::kSwizzled;
  CHECK(f.mm().create_allocation(prot));
  auto five = alloc_info(4096, {kMem, kAp});
  five.eviction_segments = SegmentSet::of(kAp);
  CHECK(f.mm().create_allocation(five));
}

TEST_CASE("AllocationInfo::placed: the segments for reading and writing, the preferred one first, the flags", "[vidmm][rules]") {
  Fixture f;
  const auto both = SegmentSet::of(kMem) | SegmentSet::of(kAp);
  const auto info = AllocationInfo::placed(4096, both, kAp, AllocationInfoFlags::kCpuVisible);
  CHECK(info.size == 4096);
  CHECK(info.supported_read_segments == both);
  CHECK(info.supported_write_segments == both);
  CHECK(info.preferred_segment.segment(0) == kAp);
  CHECK(info.preferred_segment.segment(1) == 0);
  CHECK(info.flags.value == AllocationInfoFlags::kCpuVisible);
  auto h = f.mm().create_allocation(info);
  REQUIRE(h);
  auto placed = f.mm().pin(*h);
  REQUIRE(placed);
  CHECK(placed->segment == kAp);

  // A preferred segment outside the set is refused like any other description.
  auto bad = f.mm().create_allocation(AllocationInfo::placed(4096, SegmentSet::of(kMem), kAp));
  REQUIRE_FALSE(bad);
  CHECK(to_string(bad.error()).find("PreferredSegment") != std::string::npos);
}

TEST_CASE("allocation size is rounded to the page and alignment honoured", "[vidmm]") {
  Fixture f;
  auto info = alloc_info(100);
  info.alignment = 64 * 1024;
  auto a = f.mm().create_allocation(alloc_info(4096));
  auto h = f.mm().create_allocation(info);
  REQUIRE((a && h));
  auto p = f.mm().make_resident({{*a, false}, {*h, false}});
  REQUIRE(p);
  CHECK(f.mm().query(*h)->size == kPage);
  CHECK((*p)[1].gpu_address % (64 * 1024) == 0);
  CHECK((*p)[1].segment == kMem);
}

TEST_CASE("too large for every segment, or a list that cannot fit: OutOfMemory, not a crash", "[vidmm][oom]") {
  Fixture f;
  auto big = f.mm().create_allocation(alloc_info(4 << 20));
  REQUIRE_FALSE(big);
  CHECK(big.error().code == Errc::OutOfMemory);
  auto a = f.mm().create_allocation(alloc_info(768 * 1024));
  auto b = f.mm().create_allocation(alloc_info(768 * 1024));
  REQUIRE((a && b));
  auto r = f.mm().make_resident({{*a, true}, {*b, true}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::OutOfMemory);
  CHECK_THAT(r.error().message, Catch::Contains("no room"));
  // Each alone still works: the manager is intact.
  CHECK(f.mm().make_resident({{*b, true}}));
}

TEST_CASE("placement follows the preference order, FromEndOfSegment and bank hints", "[vidmm][placement]") {
  auto d = two_segments();
  d.segments[0].flags.value |= SegmentFlags::kUseBanking;
  d.segments[0].bank_range_table = {256 * 1024, 512 * 1024};  // three banks
  Fixture f(d);
  auto ap_first = f.mm().create_allocation(alloc_info(4096, {kAp, kMem}));
  auto top = alloc_info(4096);
  top.flags.value = AllocationInfoFlags::kFromEndOfSegment;
  auto top_h = f.mm().create_allocation(top);
  auto banked = alloc_info(4096);
  banked.hinted_bank = BankPreference::of({2});
  auto banked_h = f.mm().create_allocation(banked);
  auto bad_bank = alloc_info(4096);
  bad_bank.hinted_bank = BankPreference::of({4});
  CHECK_THAT(f.mm().create_allocation(bad_bank).error().message, Catch::Contains("has 3 banks"));
  REQUIRE((ap_first && top_h && banked_h));
  auto p = f.mm().make_resident({{*ap_first, false}, {*top_h, false}, {*banked_h, false}});
  REQUIRE(p);
  CHECK((*p)[0].segment == kAp);
  CHECK((*p)[1].gpu_address == kMemBase + (1 << 20) - kPage);
  CHECK((*p)[2].gpu_address == kMemBase + 256 * 1024);
}

TEST_CASE("first touch of a memory-segment allocation is one FILL, aperture page-in maps", "[vidmm][paging]") {
  Fixture f;
  auto m = f.mm().create_allocation(alloc_info(8192));
  auto a = f.mm().create_allocation(alloc_info(8192, {kAp}));
  REQUIRE((m && a));
  REQUIRE(f.mm().make_resident({{*m, true}, {*a, true}}));
  CHECK(f.executor.counters().count(T::Fill) == 1);
  CHECK(f.executor.counters().count(T::MapApertureSegment) == 1);
  CHECK(f.executor.mapped_pages(kAp) == 2);
  // Written, evicted, restored: TRANSFERs, never a second FILL.
  REQUIRE(f.mm().evict(*m));
  REQUIRE(f.mm().make_resident({{*m, false}}));
  CHECK(f.executor.counters().count(T::Fill) == 1);
  CHECK(f.executor.counters().count(T::Transfer) == 2);
}

TEST_CASE("eviction of content nobody wrote is DISCARD_CONTENT and the FILL repeats on return", "[vidmm][paging]") {
  Fixture f;
  auto m = f.mm().create_allocation(alloc_info(8192));
  REQUIRE(m);
  REQUIRE(f.mm().make_resident({{*m, false}}));
  REQUIRE(f.mm().evict(*m));
  CHECK(f.executor.counters().count(T::DiscardContent) == 1);
  CHECK(f.executor.counters().count(T::Transfer) == 0);
  auto p = f.mm().make_resident({{*m, false}});
  REQUIRE(p);
  CHECK(f.executor.counters().count(T::Fill) == 2);
  std::uint32_t word = 1;
  REQUIRE(f.executor.gpu_read((*p)[0].gpu_address, &word, 4));
  CHECK(word == 0);  // the fill pattern, not the discard poison
}

TEST_CASE("large transfers come in TransferStart ... TransferEnd pieces", "[vidmm][paging]") {
  Fixture f;
  auto m = f.mm().create_allocation(alloc_info(640 * 1024));  // 2.5 pieces of 256 KiB
  REQUIRE(m);
  auto p = f.mm().make_resident({{*m, true}});
  REQUIRE(p);
  gpu_fill(f.executor, (*p)[0].gpu_address, 640 * 1024, 7);
  f.executor.clear_log();
  REQUIRE(f.mm().evict(*m));
  std::vector<vidmm::TransferOp> pieces;
  for (const auto& op : f.executor.log())
    if (auto* t = std::get_if<vidmm::TransferOp>(&op)) pieces.push_back(*t);
  REQUIRE(pieces.size() == 3);
  CHECK(pieces[0].flags.transfer_start);
  CHECK_FALSE(pieces[0].flags.transfer_end);
  CHECK_FALSE(pieces[1].flags.transfer_start);
  CHECK(pieces[2].flags.transfer_end);
  CHECK(pieces[2].transfer_offset == 512 * 1024);
  CHECK(pieces[2].transfer_size == 128 * 1024);
  CHECK(pieces[1].source.segment_address == (*p)[0].gpu_address + 256 * 1024);
  auto back = f.mm().make_resident({{*m, false}});
  REQUIRE(back);
  CHECK(gpu_check(f.executor, (*back)[0].gpu_address, 640 * 1024, 7));
}

TEST_CASE("eviction: least recently used and idle first, pinned and locked never move", "[vidmm][eviction]") {
  Fixture f;
  auto& mm = f.mm();
  std::vector<AllocationHandle> h;
  for (int i = 0; i < 4; ++i) h.push_back(*mm.create_allocation(alloc_info(256 * 1024)));
  for (int i = 0; i < 4; ++i) REQUIRE(mm.make_resident({{h[i], true}}));
  // h0 busy (fence 5 not completed), h1 pinned, h2 idle, h3 most recent.
  mm.note_submitted({{h[0], true}}, {}, sgpu::RingFence{5});
  REQUIRE(mm.pin(h[1]));
  auto extra = *mm.create_allocation(alloc_info(256 * 1024));
  REQUIRE(mm.make_resident({{extra, true}}));
  CHECK(mm.query(h[2])->placement.segment == 0);     // idle LRU went first
  CHECK(mm.query(h[0])->placement.segment == kMem);  // busy stayed
  CHECK(mm.query(h[1])->placement.segment == kMem);  // pinned stayed
  CHECK(mm.evict(h[1]).error().code == Errc::Busy);
  REQUIRE(mm.unpin(h[1]));
  CHECK(mm.unpin(h[1]).error().code == Errc::InvalidArgument);
}

TEST_CASE("eviction to an aperture eviction segment maps, transfers, and later unmaps to the dummy page", "[vidmm][eviction]") {
  Fixture f;
  auto& mm = f.mm();
  auto h = *mm.create_allocation(alloc_info(16384, {kMem}, SegmentSet::of(kAp)));
  auto p = mm.make_resident({{h, true}});
  REQUIRE(p);
  gpu_fill(f.executor, (*p)[0].gpu_address, 16384, 3);
  REQUIRE(mm.evict(h));
  auto s = mm.query(h);
  CHECK(s->placement.segment == kAp);
  CHECK(f.executor.mapped_pages(kAp) == 4);
  CHECK(gpu_check(f.executor, s->placement.gpu_address, 16384, 3));
  REQUIRE(mm.evict(h));  // out of the aperture: unmap only, bytes stay in the backing store
  CHECK(f.executor.mapped_pages(kAp) == 0);
  CHECK(f.executor.counters().count(T::UnmapApertureSegment) == 1);
  auto back = mm.make_resident({{h, false}});
  REQUIRE(back);
  CHECK((*back)[0].segment == kMem);
  CHECK(gpu_check(f.executor, (*back)[0].gpu_address, 16384, 3));
  CHECK(f.executor.counters().dummy_page_writes == 0);
}

TEST_CASE("lock: CpuVisible only, not while busy, CPU bytes are the GPU's bytes", "[vidmm][lock]") {
  Fixture f;
  auto& mm = f.mm();
  auto plain = *mm.create_allocation(alloc_info(4096));
  CHECK_THAT(mm.lock(plain).error().message, Catch::Contains("CpuVisible"));
  auto info = alloc_info(8192);
  info.flags.value = AllocationInfoFlags::kCpuVisible;
  auto h = *mm.create_allocation(info);
  auto cpu = mm.lock(h);  // not resident yet: the backing store
  REQUIRE(cpu);
  std::memset(*cpu, 0x5c, 8192);
  REQUIRE(mm.unlock(h));
  CHECK(mm.unlock(h).error().code == Errc::InvalidArgument);
  auto p = mm.make_resident({{h, false}});
  REQUIRE(p);
  std::uint8_t byte = 0;
  REQUIRE(f.executor.gpu_read((*p)[0].gpu_address + 100, &byte, 1));
  CHECK(byte == 0x5c);
  mm.note_submitted({{h, false}}, {}, sgpu::RingFence{9});
  CHECK(mm.lock(h).error().code == Errc::Busy);
  mm.set_completed_fence(sgpu::RingFence{9});
  auto cpu2 = mm.lock(h);  // resident in a CPU-visible memory segment: its bytes directly
  REQUIRE(cpu2);
  CHECK(static_cast<std::uint8_t*>(*cpu2)[100] == 0x5c);
  CHECK(mm.destroy_allocation(h).error().code == Errc::Busy);  // locked
  REQUIRE(mm.unlock(h));
  REQUIRE(mm.destroy_allocation(h));
}

TEST_CASE("stale handles and bad list entries are rejected without effect", "[vidmm][rules]") {
  Fixture f;
  auto& mm = f.mm();
  auto h = *mm.create_allocation(alloc_info(4096));
  REQUIRE(mm.destroy_allocation(h));
  auto again = *mm.create_allocation(alloc_info(4096));  // reuses the slot, new generation
  CHECK(again != h);
  CHECK_THAT(mm.make_resident({{h, false}}).error().message, Catch::Contains("entry 0"));
  CHECK(mm.destroy_allocation(h).error().code == Errc::InvalidArgument);
  auto ro = alloc_info(4096);
  ro.supported_write_segments = {};
  auto r = *mm.create_allocation(ro);
  const auto before = allocators(mm);
  auto w = mm.make_resident({{again, false}, {r, true}});
  REQUIRE_FALSE(w);
  CHECK_THAT(w.error().message, Catch::Contains("SupportedWriteSegmentSet is 0"));
  CHECK(same_state(mm, before, mm.live_allocations()));
}

TEST_CASE("destroy returns the range, the aperture pages and (after its fence) the backing store", "[vidmm]") {
  Fixture f;
  auto& mm = f.mm();
  const auto empty = allocators(mm);
  auto h = *mm.create_allocation(alloc_info(8192, {kAp}));
  REQUIRE(mm.make_resident({{h, true}}));
  mm.note_submitted({{h, true}}, {}, sgpu::RingFence{3});
  REQUIRE(mm.destroy_allocation(h));
  CHECK(same_state(mm, empty, 0));
  CHECK(mm.aperture_committed() == 0);
  CHECK(f.executor.mapped_pages(kAp) == 0);
  CHECK(mm.deferred_frees() == 1);
  mm.set_completed_fence(sgpu::RingFence{3});
  CHECK(mm.deferred_frees() == 0);
}

TEST_CASE("an executor failure is reported with hardware_touched", "[vidmm][paging]") {
  Fixture f;
  auto h = *f.mm().create_allocation(alloc_info(4096));
  f.executor.fail_next_buffer();
  auto r = f.mm().make_resident({{h, true}});
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::DeviceFault);
  CHECK(r.error().hardware_touched);
}

TEST_CASE("segment table checks: overlap, commit limit, flags", "[vidmm][rules]") {
  MockTransport mock;
  TransportSystemMemory sys(mock);
  auto try_config = [&](auto mutate) {
    auto d = two_segments();
    mutate(d);
    vidmm::ReferenceExecutor ex(d.segments, 4096);
    return Adapter::create(d, ex, sys);
  };
  CHECK_THAT(try_config([](auto& d) { d.segments[1].base_address = kMemBase + 4096; }).error().message, Catch::Contains("overlap"));
  CHECK_THAT(try_config([](auto& d) { d.segments[0].commit_limit = 4096; }).error().message, Catch::Contains("CommitLimit"));
  CHECK_THAT(try_config([](auto& d) { d.segments[0].flags.value |= SegmentFlags::kCacheCoherent; }).error().message, Catch::Contains("CacheCoherent"));
  CHECK_THAT(try_config([](auto& d) { d.segments[0].size = 1000; }).error().message, Catch::Contains("Size"));
  CHECK_THAT(try_config([](auto& d) { d.segments[0].flags.value |= 1u << 20; }).error().message, Catch::Contains("undefined"));
  CHECK(try_config([](auto& d) { d.segments[0].flags.value |= SegmentFlags::kAgp; }).error().code == Errc::Unsupported);
}
