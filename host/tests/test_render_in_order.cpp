// kmd::render's in-order path against its full path on the inputs the in-order path works out
// differently (render.cpp, "the in-order path"): the allocation list precomputed into one range
// compare per access (system memory, a GPU address the path leaves to the full one, sizes near
// 2^64, a list longer than its table kept on the stack), AllocationIndex clamped into a padded
// table and checked on the OR of all indices, SlotIds checked on their OR. Reversing the input
// list sends the same call down the full path, which decides: both must give the same verdict,
// error code, DMA bytes, output entries and private data.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include "render_rig.hpp"

using namespace sgpu;
using namespace sgpu::test;

namespace {

const AllocationHandle kA{1}, kB{2}, kC{3};

/// Every packet kind with an address field, on three allocations (kA read and written, kB and
/// kC too), in an order that makes the input list's reversal a different list.
umd::CommandList every_address_kind() {
  umd::CommandList cl;
  REQUIRE(record_every_address_kind(cl, kA, kB, kC));
  return cl;
}

/// Renders `rig` with its input list as it is and reversed (the full path); both must agree.
/// Returns the in-order call's result.
Result<kmd::RenderOutput> render_both_ways(RenderRig& rig, std::uint32_t max_slot_id = 256) {
  auto a = rig.args();
  a.max_slot_id = max_slot_id;
  const auto in_order = kmd::render(a);
  const std::vector<std::uint32_t> in_order_bytes = rig.dma.first(in_order ? in_order->dma_bytes : 0);
  const std::vector<PatchLocation> in_order_out = rig.patch_out;
  const kmd::RenderPrivateData in_order_priv = rig.priv();

  RenderRig full = rig;
  std::reverse(full.patch_in.begin(), full.patch_in.end());
  auto b = full.args();
  b.max_slot_id = max_slot_id;
  const auto reversed = kmd::render(b);
  REQUIRE(static_cast<bool>(in_order) == static_cast<bool>(reversed));
  if (!in_order) {
    INFO(in_order.error().message);
    CHECK(in_order.error().code == reversed.error().code);
    return in_order;
  }
  CHECK(in_order->dma_bytes == reversed->dma_bytes);
  CHECK(in_order->patch_count == reversed->patch_count);
  CHECK(in_order->packets == reversed->packets);
  CHECK(in_order->complete == reversed->complete);
  CHECK(in_order_bytes == full.dma.first(reversed->dma_bytes));
  for (std::uint32_t i = 0; i < in_order->patch_count; ++i) {
    INFO("entry " << i);
    CHECK(std::memcmp(&in_order_out[i], &full.patch_out[i], sizeof(PatchLocation)) == 0);
  }
  const kmd::RenderPrivateData full_priv = full.priv();
  CHECK(std::memcmp(&in_order_priv, &full_priv, sizeof full_priv) == 0);
  return in_order;
}

/// The element of `rig`'s allocation list that `h` is.
kmd::DxgkAllocationListEntry& element(RenderRig& rig, AllocationHandle h) {
  for (auto& e : rig.list)
    if (e.allocation == h) return e;
  FAIL("no element for the handle");
  return rig.list.front();
}

}  // namespace

TEST_CASE("render in order: an allocation in system memory is pre-patched to 0 as on the full path", "[render]") {
  RenderRig rig(every_address_kind());
  element(rig, kB).segment = kSystemMemory;
  const auto r = render_both_ways(rig);
  REQUIRE(r);
  CHECK(r->complete);
}

TEST_CASE("render in order: allocations it leaves to the full path render as there", "[render]") {
  RenderRig rig(every_address_kind());
  SECTION("a GPU address only 4-byte aligned (TIMESTAMP and FENCE value64 need 8): refused on both paths") {
    element(rig, kC).gpu_address += 4;
    const auto r = render_both_ways(rig);
    CHECK_FALSE(r);
  }
  SECTION("a GPU address 1-byte aligned used only by byte-aligned fields: accepted on both paths") {
    umd::CommandList cl;
    REQUIRE(cl.copy(kA, 0x100, kB, 0x201, 63));
    REQUIRE(cl.fill_rect(kB, 0x8001, 511, 127, 3, 1));
    RenderRig odd(cl);
    element(odd, kB).gpu_address += 1;
    const auto r = render_both_ways(odd);
    REQUIRE(r);
    CHECK(r->complete);
  }
  SECTION("a size past 2^62 whose accesses stay inside: accepted on both paths") {
    element(rig, kA).size = std::uint64_t{1} << 63;
    element(rig, kA).gpu_address = 0x1000;
    const auto r = render_both_ways(rig);
    REQUIRE(r);
  }
  SECTION("an allocation that wraps past 2^64: the access that wraps is refused on both paths") {
    element(rig, kC).gpu_address = ~std::uint64_t{0} - 0x8000 - 7;
    element(rig, kC).size = 0x10000;
    const auto r = render_both_ways(rig);
    CHECK_FALSE(r);
  }
  SECTION("an allocation at GPU address 0") {
    element(rig, kA).gpu_address = 0;
    const auto r = render_both_ways(rig);
    REQUIRE(r);
  }
}

TEST_CASE("render in order: an allocation list longer than the in-order path keeps on the stack", "[render]") {
  // 100 elements: the in-order path's table of them is on the heap, padded to 128.
  umd::CommandList cl;
  for (std::uint32_t i = 1; i <= 100; ++i) REQUIRE(cl.copy(AllocationHandle{i}, 0x100, AllocationHandle{101 - i}, 0x200, 64));
  RenderRig rig(cl);
  REQUIRE(rig.list.size() == 101);
  SECTION("accepted") {
    const auto r = render_both_ways(rig);
    REQUIRE(r);
    CHECK(r->patch_count == 200);
  }
  SECTION("an index past the list, inside the padded table, is refused naming it") {
    rig.patch_in[57].allocation_index = 101;
    const auto r = render_both_ways(rig);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "AllocationIndex 101"));
  }
  SECTION("an index past the padded table is refused naming it") {
    rig.patch_in[57].allocation_index = 128 + 3;
    const auto r = render_both_ways(rig);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "AllocationIndex 131"));
  }
}

TEST_CASE("render in order: a list longer than the entries that use it is left to the full path, same output",
          "[render]") {
  umd::CommandList cl;
  for (std::uint32_t i = 1; i <= 80; ++i) cl.reference(AllocationHandle{i}, true);
  REQUIRE(cl.copy(AllocationHandle{3}, 0x100, AllocationHandle{77}, 0x200, 64));
  REQUIRE(cl.timestamp(AllocationHandle{80}, 0x10));
  RenderRig rig(cl);
  REQUIRE(rig.list.size() == 81);
  const auto r = render_both_ways(rig);
  REQUIRE(r);
  CHECK(r->patch_count == 3);
}

TEST_CASE("render in order: AllocationIndex past the list is refused at every distance", "[render]") {
  const auto cl = every_address_kind();
  // The list has 4 elements (null + 3): the in-order path's table is padded to 8.
  for (std::uint32_t index : {4u, 7u, 8u, 9u, 0x8000'0000u, 0xffff'ffffu}) {
    INFO("AllocationIndex " << index);
    RenderRig rig(cl);
    REQUIRE(rig.list.size() == 4);
    rig.patch_in[3].allocation_index = index;
    const auto r = render_both_ways(rig);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK(contains(r.error().message, "patch entry 3"));
  }
}

TEST_CASE("render in order: SlotIds are checked on their OR, also under a MaxAllocationListSlotId not a power of two",
          "[render]") {
  const auto cl = every_address_kind();
  SECTION("SlotIds 1 and 2 under a maximum of 3: their OR is 3, the full path accepts") {
    RenderRig rig(cl);
    for (std::size_t i = 0; i < rig.patch_in.size(); ++i) rig.patch_in[i].slot_id_and_reserved = 1 + i % 2;
    const auto r = render_both_ways(rig, 3);
    REQUIRE(r);
    CHECK(r->complete);
  }
  SECTION("one SlotId equal to the maximum is refused naming it") {
    RenderRig rig(cl);
    rig.patch_in[2].slot_id_and_reserved = 5;
    const auto r = render_both_ways(rig, 5);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "SlotId 5"));
  }
  SECTION("a Reserved bit is refused") {
    RenderRig rig(cl);
    rig.patch_in[4].slot_id_and_reserved = 0x0100'0000;
    const auto r = render_both_ways(rig);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "Reserved"));
  }
}

TEST_CASE("render in order: each field rule broken alone is refused as on the full path", "[render]") {
  const auto cl = every_address_kind();
  const std::size_t entries = cl.patch_locations().size();
  for (std::size_t i = 0; i < entries; ++i) {
    INFO("entry " << i);
    {
      RenderRig rig(cl);  // past the allocation's end
      rig.patch_in[i].allocation_offset = 0x10000 - 3;
      CHECK_FALSE(render_both_ways(rig));
    }
    {
      RenderRig rig(cl);  // the null element
      rig.patch_in[i].allocation_index = 0;
      CHECK_FALSE(render_both_ways(rig));
    }
    {
      RenderRig rig(cl);  // not on its field's low dword
      rig.patch_in[i].patch_offset += 4;
      CHECK_FALSE(render_both_ways(rig));
    }
    {
      RenderRig rig(cl);  // misaligned where the field needs alignment, else one byte further: same verdict
      rig.patch_in[i].allocation_offset += 1;
      (void)render_both_ways(rig);
    }
  }
  for (auto h : {kA, kB, kC}) {
    RenderRig rig(cl);  // every allocation is written through somewhere
    element(rig, h).write = false;
    CHECK_FALSE(render_both_ways(rig));
  }
}
