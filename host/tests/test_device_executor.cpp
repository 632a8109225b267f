// vidmm::DeviceExecutor's encoder on the mock transport: the exact packets each paging operation
// becomes, and the typed errors of records the device must never see.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "sgpu/aperture.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/umd/command_list.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/vidmm/device_executor.hpp"

using namespace sgpu;
using namespace sgpu::vidmm;

namespace {

constexpr std::uint64_t kMemBase = 0x0010'0000'0000'0000ull;
constexpr std::uint64_t kApBase = 0x0018'0000'0000'0000ull;
constexpr std::uint64_t kDummy = 0x7000'0000ull;

PagingTarget target() {
  PagingTarget t;
  kmd::SegmentDescriptor mem;
  mem.base_address = kMemBase;
  mem.size = mem.commit_limit = 1 << 20;
  kmd::SegmentDescriptor ap;
  ap.base_address = kApBase + 16 * 4096;  // the segment starts at aperture page 16
  ap.size = ap.commit_limit = 64 * 4096;
  ap.flags.value = kmd::SegmentFlags::kAperture;
  t.segments = {mem, ap};
  t.aperture_base = kApBase;
  t.aperture_pages = 80;
  t.dummy_page = kDummy;
  t.dummy_pte = kDummy | Aperture::kPteValid;
  t.system_limit = std::uint64_t{1} << 52;
  return t;
}

PagingLocation seg(SegmentId s, std::uint64_t addr) {
  PagingLocation l;
  l.segment = s;
  l.segment_address = addr;
  return l;
}
PagingLocation sys(const DmaMemory& m, std::uint64_t off) {
  PagingLocation l;
  l.system = &m;
  l.system_offset = off;
  return l;
}

std::vector<std::uint32_t> dwords(const void* p, std::size_t bytes) {
  std::vector<std::uint32_t> v(bytes / 4);
  std::memcpy(v.data(), p, bytes);
  return v;
}

}  // namespace

TEST_CASE("device executor: each paging operation becomes its packets, closed by the paging FENCE",
          "[vidmm][device_executor]") {
  MockTransport mock;
  auto store = mock.alloc_dma(3 * 4096);
  REQUIRE(store);
  const PagingTarget t = target();

  PagingBuffer pb;
  TransferOp tr;
  tr.allocation = 7;
  tr.transfer_size = 8192;
  tr.source = seg(1, kMemBase + 0x2000);
  tr.destination = sys(*store, 4096);
  pb.operations.push_back(tr);
  FillOp fill;
  fill.fill_size = 4096;
  fill.fill_pattern = 0xabcd1234;
  fill.destination = seg(1, kMemBase);
  pb.operations.push_back(fill);
  DiscardContentOp discard;
  discard.segment = 1;
  discard.segment_address = kMemBase + 0x8000;
  discard.size = 4096;
  pb.operations.push_back(discard);
  MapApertureSegmentOp map;
  map.segment = 2;
  map.offset_in_pages = 3;
  map.number_of_pages = 2;
  map.pages = &*store;
  map.mdl_offset = 1;
  map.cache_coherent = true;
  pb.operations.push_back(map);
  UnmapApertureSegmentOp unmap;
  unmap.segment = 2;
  unmap.offset_in_pages = 10;
  unmap.number_of_pages = 4;
  unmap.dummy_page = kDummy;
  pb.operations.push_back(unmap);
  InitContextResourceOp init;
  init.size = 4096;
  init.initial_pattern = 0x5a5a5a5a;
  init.destination = seg(2, kApBase + 16 * 4096 + 4 * 4096);
  pb.operations.push_back(init);

  std::vector<std::uint32_t> got(paging_buffer_bytes(pb) / 4 + 1);
  auto n = encode_paging_buffer(t, pb, got.data(), got.size() * 4, 0x1000, 42);
  if (!n) FAIL(to_string(n.error()));

  std::vector<std::uint32_t> want(got.size());
  PacketWriter w(want.data(), want.size() * 4);
  REQUIRE(w.copy(kMemBase + 0x2000, store->bus_addr() + 4096, 8192));
  REQUIRE(w.fill(kMemBase, 4096, 0xabcd1234));
  const std::uint64_t bus[] = {store->bus_addr() + 4096, store->bus_addr() + 8192};
  REQUIRE(w.map_pages(16 + 3, 7, bus, 2));  // valid | writable | snoop
  REQUIRE(w.unmap_pages(16 + 10, 4, kDummy | Aperture::kPteValid));
  REQUIRE(w.fill(kApBase + 20 * 4096, 4096, 0x5a5a5a5a));
  REQUIRE(w.fence(0x1000, 42, abi::fence_flags::kValue64));
  REQUIRE(*n == w.offset());
  CHECK(dwords(got.data(), *n) == dwords(want.data(), w.offset()));
}

TEST_CASE("device executor: large transfers and fills are split into packets the device accepts",
          "[vidmm][device_executor]") {
  PagingTarget t = target();
  t.segments[0].size = t.segments[0].commit_limit = std::uint64_t{4} << 30;
  PagingBuffer pb;
  FillOp fill;
  // Pieces of CommandList::kMaxPacketBytes, as the UMD records long operations: each makes
  // progress across a preemption (a cut FILL restarts from its header).
  constexpr std::uint64_t kPiece = umd::CommandList::kMaxPacketBytes;
  fill.fill_size = 3 * kPiece + 4096;
  fill.destination = seg(1, kMemBase);
  pb.operations.push_back(fill);
  std::vector<std::uint32_t> got(paging_buffer_bytes(pb) / 4);
  auto n = encode_paging_buffer(t, pb, got.data(), got.size() * 4, 0x1000, 1);
  REQUIRE(n);
  std::vector<std::uint32_t> want(got.size());
  PacketWriter w(want.data(), want.size() * 4);
  for (std::uint64_t i = 0; i < 3; ++i) REQUIRE(w.fill(kMemBase + i * kPiece, kPiece, 0));
  REQUIRE(w.fill(kMemBase + 3 * kPiece, 4096, 0));
  REQUIRE(w.fence(0x1000, 1, abi::fence_flags::kValue64));
  CHECK(dwords(got.data(), *n) == dwords(want.data(), w.offset()));
}

TEST_CASE("device executor: bad records are typed errors naming the operation, nothing encoded",
          "[vidmm][device_executor]") {
  MockTransport mock;
  auto store = mock.alloc_dma(4096);
  REQUIRE(store);
  const PagingTarget t = target();
  auto one = [](PagingOperation op) {
    PagingBuffer pb;
    pb.operations.push_back(std::move(op));
    return pb;
  };
  TransferOp past;
  past.transfer_size = 8192;
  past.source = seg(1, kMemBase + (1 << 20) - 4096);
  past.destination = sys(*store, 0);
  TransferOp overlap;
  overlap.transfer_size = 8192;
  overlap.source = seg(1, kMemBase);
  overlap.destination = seg(1, kMemBase + 4096);
  TransferOp no_mdl;
  no_mdl.transfer_size = 4096;
  no_mdl.source = seg(1, kMemBase);
  no_mdl.destination = PagingLocation{};
  FillOp fill_ap;
  fill_ap.fill_size = 4096;
  fill_ap.destination = seg(2, kApBase + 16 * 4096);
  MapApertureSegmentOp map_far;
  map_far.segment = 2;
  map_far.offset_in_pages = 63;
  map_far.number_of_pages = 2;
  map_far.pages = &*store;
  MapApertureSegmentOp map_mdl;
  map_mdl.segment = 2;
  map_mdl.number_of_pages = 2;  // the MDL has one page
  map_mdl.pages = &*store;
  MapApertureSegmentOp map_mem;
  map_mem.segment = 1;
  map_mem.number_of_pages = 1;
  map_mem.pages = &*store;
  UnmapApertureSegmentOp unmap_dummy;
  unmap_dummy.segment = 2;
  unmap_dummy.number_of_pages = 1;
  unmap_dummy.dummy_page = kDummy + 4096;
  struct Case {
    PagingOperation op;
    const char* says;
  } cases[] = {
      {past, "outside segment 1"},       {overlap, "overlap"},
      {no_mdl, "without a backing store"}, {fill_ap, "not a memory segment"},
      {map_far, "pass segment 2's 64 pages"}, {map_mdl, "pass its 1 pages"},
      {map_mem, "not an aperture segment"},   {unmap_dummy, "not the aperture's dummy page"},
  };
  for (const auto& c : cases) {
    std::vector<std::uint32_t> buf(256, 0xcccccccc);
    auto n = encode_paging_buffer(t, one(c.op), buf.data(), buf.size() * 4, 0x1000, 1);
    INFO(to_string(c.op));
    REQUIRE_FALSE(n);
    CHECK(n.error().code == Errc::InvalidArgument);
    CHECK_FALSE(n.error().hardware_touched);
    CHECK_THAT(n.error().message, Catch::Contains(c.says));
    CHECK(std::all_of(buf.begin(), buf.end(), [](std::uint32_t d) { return d == 0xcccccccc; }));
  }
}
