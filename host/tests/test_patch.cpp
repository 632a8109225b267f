// DxgkDdiPatch (kmd::patch): the submitted part of the patch list only, re-patching after a
// move, the submission fence, and refusal of inputs that would write out of bounds.
#include <catch2/catch.hpp>

#include <vector>

#include <fmt/format.h>

#include "render_rig.hpp"

using namespace sgpu;
using namespace sgpu::test;
using sgpu::AllocationHandle;
using sgpu::PatchLocation;

namespace {

const AllocationHandle kA{1}, kB{2};

/// A rendered buffer: COPY kA -> kB, FILL kB, TIMESTAMP kA, with the allocations not resident at
/// Render time (so every address is 0 until Patch).
struct Rendered {
  umd::CommandList cl;
  RenderRig rig;
  kmd::RenderOutput out;
  Rendered() : cl(make()), rig(cl, [](AllocationHandle h) {
    FakeAllocation f = default_placement(h);
    f.segment = kSystemMemory;
    return f;
  }) {
    auto r = rig.render();
    REQUIRE(r);
    out = *r;
  }
  static umd::CommandList make() {
    umd::CommandList cl;
    REQUIRE(cl.copy(kA, 0x10, kB, 0x20, 64));
    REQUIRE(cl.fill(kB, 0x100, 32, 0x1234));
    REQUIRE(cl.timestamp(kA, 0x40));
    return cl;
  }
  /// The allocation list as VidMm hands it to Patch: each allocation placed.
  std::vector<kmd::DxgkAllocationListEntry> placed(std::uint64_t a_addr, std::uint64_t b_addr) const {
    auto list = rig.list;
    list[1].segment = 1;
    list[1].gpu_address = a_addr;
    list[2].segment = 2;
    list[2].gpu_address = b_addr;
    return list;
  }
  kmd::PatchArgs args(const std::vector<kmd::DxgkAllocationListEntry>& list) {
    return rig.patch_args(out, rig.patch_out.data(), out.patch_count, list);
  }
  std::uint64_t at(std::uint32_t byte_offset) const {
    return rig.dma.dword(byte_offset / 4) | (std::uint64_t{rig.dma.dword(byte_offset / 4 + 1)} << 32);
  }
};

}  // namespace

TEST_CASE("patch: writes allocation address + AllocationOffset at every PatchOffset", "[patch]") {
  Rendered b;
  REQUIRE(b.out.patch_count == 4);  // COPY src, COPY dst, FILL dst, TIMESTAMP addr
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  auto r = kmd::patch(b.args(list));
  REQUIRE(r);
  CHECK(r->patched == 4);
  for (std::uint32_t i = 0; i < b.out.patch_count; ++i) {
    const PatchLocation& e = b.rig.patch_out[i];
    CHECK(b.at(e.patch_offset) == list[e.allocation_index].gpu_address + e.allocation_offset);
  }
  const auto pk = decode(b.rig.dma.dwords(), b.out.dma_bytes);
  REQUIRE(pk[0].info->opcode == abi::Opcode::Copy);
  CHECK(pk[0].address(0) == 0x1'0000'0010ull);
  CHECK(pk[0].address(1) == 0x2'0000'0020ull);
}

TEST_CASE("patch: only the entries from patch_start for patch_length are applied", "[patch]") {
  Rendered b;
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  auto a = b.args(list);
  a.patch_start = 1;
  a.patch_length = 2;
  auto r = kmd::patch(a);
  REQUIRE(r);
  CHECK(r->patched == 2);
  for (std::uint32_t i = 0; i < b.out.patch_count; ++i) {
    const PatchLocation& e = b.rig.patch_out[i];
    INFO("entry " << i);
    const bool applied = i >= 1 && i < 3;
    CHECK(b.at(e.patch_offset) == (applied ? list[e.allocation_index].gpu_address + e.allocation_offset : 0));
  }
}

TEST_CASE("patch: entries in any order, a packet's entries apart, are checked and applied", "[patch]") {
  // Patch decodes a packet once for the entries with its SplitOffset that follow one another; a
  // list in another order decodes it again, with the same result.
  Rendered b;
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  std::vector<PatchLocation> shuffled(b.rig.patch_out.begin(), b.rig.patch_out.begin() + b.out.patch_count);
  REQUIRE(shuffled.size() == 4);
  std::swap(shuffled[1], shuffled[3]);  // COPY src, TIMESTAMP, FILL, COPY dst
  auto a = b.args(list);
  a.patch_list = shuffled.data();
  auto r = kmd::patch(a);
  REQUIRE(r);
  CHECK(r->patched == 4);
  for (const PatchLocation& e : shuffled)
    CHECK(b.at(e.patch_offset) == list[e.allocation_index].gpu_address + e.allocation_offset);
  // A bad entry between the two of the COPY is still found, and nothing is written.
  const std::vector<PatchLocation> applied = shuffled;
  const auto moved = b.placed(0x3'0000'0000ull, 0x4'0000'0000ull);
  a.allocation_list = moved.data();
  shuffled[2].allocation_offset = 0x1'0000;  // FILL kB past its 64 KiB
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 2: FILL field 'dst' would touch bytes"));
  for (const PatchLocation& e : applied)
    CHECK(b.at(e.patch_offset) == list[e.allocation_index].gpu_address + e.allocation_offset);  // as before
}

TEST_CASE("patch: an allocation ending exactly at 2^64 is patched when no access wraps", "[patch]") {
  // base + size wraps to 0, so Patch's quick check leaves the entries to the full check, which
  // passes them: the accesses end at or below 2^64 - 1.
  Rendered b;
  auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  list[1].size = 0x1'0000;
  list[1].gpu_address = ~std::uint64_t{0} - 0xffff;  // [2^64 - 64 KiB, 2^64)
  auto r = kmd::patch(b.args(list));
  REQUIRE(r);
  CHECK(r->patched == 4);
  for (std::uint32_t i = 0; i < b.out.patch_count; ++i) {
    const PatchLocation& e = b.rig.patch_out[i];
    CHECK(b.at(e.patch_offset) == list[e.allocation_index].gpu_address + e.allocation_offset);
  }
}

TEST_CASE("patch: patching again after the allocations moved rewrites the addresses", "[patch]") {
  Rendered b;
  const auto first = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  REQUIRE(kmd::patch(b.args(first)));
  const auto moved = b.placed(0x3'0000'0000ull, 0x0'8000'0000ull);
  REQUIRE(kmd::patch(b.args(moved)));
  for (std::uint32_t i = 0; i < b.out.patch_count; ++i) {
    const PatchLocation& e = b.rig.patch_out[i];
    CHECK(b.at(e.patch_offset) == moved[e.allocation_index].gpu_address + e.allocation_offset);
  }
}

TEST_CASE("patch: the submission fence is written iff it lies between dma_start and dma_end", "[patch]") {
  using namespace abi::payload;
  Rendered b;
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  const std::uint32_t fence_at = b.rig.priv().fence_offset;
  REQUIRE(fence_at + kmd::submission_fence_bytes() == b.out.dma_bytes);

  SECTION("in range") {
    auto r = kmd::patch(b.args(list));
    REQUIRE(r);
    CHECK(r->fence_written);
    CHECK(b.at(fence_at + 4 * fence::kAddrLo) == 0x7'0000'1000ull);
    CHECK(b.rig.dma.dword(fence_at / 4 + fence::kValueLo) == 0x42);
    CHECK(b.rig.dma.dword(fence_at / 4 + fence::kValueHi) == 0x1);
  }
  SECTION("a submission that ends before the fence") {
    auto a = b.args(list);
    a.dma_end = fence_at;
    auto r = kmd::patch(a);
    REQUIRE(r);
    CHECK_FALSE(r->fence_written);
    CHECK(b.at(fence_at + 4 * fence::kAddrLo) == 0);
    CHECK(b.at(fence_at + 4 * fence::kValueLo) == 0);
  }
  SECTION("a submission that starts after the fence") {
    auto a = b.args(list);
    a.dma_start = fence_at + 4;
    a.patch_length = 0;
    auto r = kmd::patch(a);
    REQUIRE(r);
    CHECK_FALSE(r->fence_written);
  }
  SECTION("no fence recorded (a non-final multipass buffer, or no private data)") {
    auto a = b.args(list);
    kmd::RenderPrivateData none;
    none.magic = kmd::RenderPrivateData::kMagic;
    a.private_data = &none;
    a.private_data_size = sizeof none;
    CHECK_FALSE(kmd::patch(a)->fence_written);
    a.private_data = nullptr;
    a.private_data_size = 0;
    CHECK_FALSE(kmd::patch(a)->fence_written);
  }
}

TEST_CASE("patch: a PatchOffset outside the DMA buffer is refused and nothing is written", "[patch]") {
  Rendered b;
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  auto bad = std::vector<PatchLocation>(b.rig.patch_out.begin(), b.rig.patch_out.begin() + b.out.patch_count);
  bad[3].patch_offset = static_cast<std::uint32_t>(b.rig.dma.capacity()) - 4;  // 8 bytes do not fit
  auto a = b.args(list);
  a.patch_list = bad.data();
  auto r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK(contains(r.error().message, "entry 3: PatchOffset"));
  for (std::uint32_t i = 0; i < 3; ++i) CHECK(b.at(bad[i].patch_offset) == 0);  // checked before any write
  bad[3].patch_offset = 2;
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 3: PatchOffset 2"));
}

TEST_CASE("patch: a non-resident or null allocation is refused naming the entry", "[patch]") {
  Rendered b;
  auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  list[2].segment = kSystemMemory;  // kB not resident
  auto r = kmd::patch(b.args(list));
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK(contains(r.error().message, "entry 1: allocation-list element 2 is not resident"));
  for (std::uint32_t i = 0; i < b.out.patch_count; ++i) CHECK(b.at(b.rig.patch_out[i].patch_offset) == 0);

  auto list2 = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  auto bad = std::vector<PatchLocation>(b.rig.patch_out.begin(), b.rig.patch_out.begin() + b.out.patch_count);
  bad[2].allocation_index = 0;
  auto a = b.args(list2);
  a.patch_list = bad.data();
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 2: allocation-list element 0 is null"));
  bad[2].allocation_index = 7;
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 2: AllocationIndex 7"));
}

TEST_CASE("patch: a patch range or submission range outside the lists is refused", "[patch]") {
  Rendered b;
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  auto a = b.args(list);
  a.patch_start = 3;
  a.patch_length = 2;
  auto r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entries [3, 5)"));
  a = b.args(list);
  a.dma_end = a.dma_size + 4;
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
}

TEST_CASE("patch: every entry's access stays inside its allocation, whatever AllocationOffset says", "[patch]") {
  Rendered b;
  auto bad = std::vector<PatchLocation>(b.rig.patch_out.begin(), b.rig.patch_out.begin() + b.out.patch_count);
  // Entry 3 is the TIMESTAMP at kA + 0x40 (8 bytes); kA shrinks to one 4 KiB page.
  auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  list[1].size = 4096;
  auto a = b.args(list);
  a.patch_list = bad.data();
  for (std::uint32_t offset : {4096u, 0x1000'0000u, 0xFFFF'FFF0u, 4092u}) {
    INFO("AllocationOffset " << offset);
    bad[3].allocation_offset = offset;
    auto r = kmd::patch(a);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK(contains(r.error().message, "entry 3: TIMESTAMP field 'addr' would touch bytes"));
    CHECK(contains(r.error().message, "which has 4096 bytes"));
    for (std::uint32_t i = 0; i < b.out.patch_count; ++i) CHECK(b.at(bad[i].patch_offset) == 0);  // nothing written
  }
  bad[3].allocation_offset = 4088;  // the last 8 bytes: fits exactly
  REQUIRE(kmd::patch(a));
  CHECK(b.at(bad[3].patch_offset) == 0x1'0000'0000ull + 4088);

  SECTION("a COPY's extent counts, not just its first byte") {
    bad[3].allocation_offset = 0x40;
    bad[0].allocation_offset = 4096 - 32;  // COPY reads 64 bytes from its source
    auto r = kmd::patch(a);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "entry 0: COPY field 'src' would touch bytes [4064, 4128)"));
  }
  SECTION("an address that wraps past 2^64") {
    bad[3].allocation_offset = 0x40;
    list[1].gpu_address = ~std::uint64_t{0} - 0x3f;  // + 0x40 = 2^64
    auto r = kmd::patch(a);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "wraps past 2^64"));
  }
  SECTION("an address without the field's alignment") {
    bad[3].allocation_offset = 0x44;  // TIMESTAMP needs 8
    auto r = kmd::patch(a);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "entry 3: address 0x100000044 is not 8-byte aligned"));
  }
  SECTION("a write through an element without WriteOperation") {
    bad[3].allocation_offset = 0x40;
    list[1].write = false;
    auto r = kmd::patch(a);
    REQUIRE_FALSE(r);
    CHECK(contains(r.error().message, "entry 3: TIMESTAMP writes through allocation-list element 1"));
  }
}

TEST_CASE("patch: an entry must name an address field of the packet at its SplitOffset", "[patch]") {
  Rendered b;
  const auto list = b.placed(0x1'0000'0000ull, 0x2'0000'0000ull);
  auto bad = std::vector<PatchLocation>(b.rig.patch_out.begin(), b.rig.patch_out.begin() + b.out.patch_count);
  auto a = b.args(list);
  a.patch_list = bad.data();
  const PatchLocation good = bad[1];  // COPY dst

  bad[1].slot_id_and_reserved = 2;  // COPY has two address fields
  auto r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 1: SlotId/Reserved 0x2 is not an address field of the COPY"));
  bad[1] = good;
  bad[1].slot_id_and_reserved = 1u << 24;
  CHECK_FALSE(kmd::patch(a));

  bad[1] = good;
  bad[1].slot_id_and_reserved = 0;  // the source field's slot with the destination's PatchOffset
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 1: PatchOffset"));
  CHECK(contains(r.error().message, "is not COPY field 'src'"));

  bad[1] = good;
  bad[1].split_offset = good.split_offset + 4;  // the middle of a packet
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "entry 1: SplitOffset"));

  bad[1] = good;
  bad[1].split_offset = static_cast<std::uint32_t>(b.rig.dma.capacity());
  r = kmd::patch(a);
  REQUIRE_FALSE(r);
  CHECK(contains(r.error().message, "not a 4-aligned packet offset inside"));
  for (std::uint32_t i = 0; i < b.out.patch_count; ++i) CHECK(b.at(good.patch_offset) == 0);
}
