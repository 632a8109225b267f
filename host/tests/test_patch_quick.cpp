// kmd::patch's quick check against its full check (patch.cpp, "the quick check"): the quick
// check takes a list in Render's order and checks every rule as compares ORed into one word,
// with the allocation list worked out into one range compare per access (a padded table read
// without a bounds check, AllocationIndex and SlotId checked on their OR). The same call with its
// range reversed goes to the full check, which decides: a COPY's two entries, reversed, are not
// in field order. Both must give the same verdict, error code, output and DMA buffer — a refusal
// leaves the buffer as it was — on the cases the quick check works out differently and on
// random mutations of a rendered list.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <vector>

#include "render_rig.hpp"

using namespace sgpu;
using namespace sgpu::test;

namespace {

const AllocationHandle kA{1}, kB{2}, kC{3};

/// Every packet kind with an address field on three allocations, then the COPY whose two
/// entries, reversed, send a call to the full check (the last two entries of the list).
umd::CommandList every_address_kind() {
  umd::CommandList cl;
  REQUIRE(record_every_address_kind(cl, kA, kB, kC));
  REQUIRE(cl.copy(kC, 0x3000, kA, 0x4000, 128));  // the full check's trigger
  return cl;
}

/// A rendered buffer and what Patch gets for it: the entries, the allocations moved.
struct PatchRig {
  umd::CommandList cl = every_address_kind();
  RenderRig rig{cl};
  kmd::RenderOutput out;
  std::vector<PatchLocation> entries;
  std::vector<kmd::DxgkAllocationListEntry> list;
  std::vector<std::byte> rendered;  ///< the DMA buffer as Render left it

  PatchRig() {
    auto r = rig.render();
    REQUIRE(r);
    out = *r;
    entries.assign(rig.patch_out.begin(), rig.patch_out.begin() + out.patch_count);
    list = rig.list;
    for (auto& e : list)
      if (e.allocation) e.gpu_address += 0x40000;  // moved
    const auto* dma = static_cast<const std::byte*>(rig.dma.data());
    rendered.assign(dma, dma + rig.dma.capacity());
  }
  std::uint32_t dma_size() const { return static_cast<std::uint32_t>(rig.dma.capacity()); }
  kmd::PatchArgs args(const std::vector<PatchLocation>& e, const std::vector<kmd::DxgkAllocationListEntry>& l,
                      std::uint32_t start) {
    return rig.patch_args(out, e.data(), static_cast<std::uint32_t>(e.size()), l, start);
  }
  std::vector<std::byte> dma_now() {
    const auto* dma = static_cast<const std::byte*>(rig.dma.data());
    return {dma, dma + rig.dma.capacity()};
  }
  void reset_dma(const std::vector<std::byte>& bytes) { std::memcpy(rig.dma.data(), bytes.data(), bytes.size()); }
};

/// Patches `dma` (the buffer's contents before the call) with `entries` from `start` as they are
/// and with that range reversed (the full check); both must agree, and a refusal must leave the
/// buffer as it was. Returns the first call's result.
Result<kmd::PatchOutput> patch_both_ways(PatchRig& r, const std::vector<PatchLocation>& entries,
                                         const std::vector<kmd::DxgkAllocationListEntry>& list,
                                         const std::vector<std::byte>& dma, std::uint32_t start = 0) {
  REQUIRE(entries.size() >= start + 2);
  r.reset_dma(dma);
  const auto in_order = kmd::patch(r.args(entries, list, start));
  const std::vector<std::byte> in_order_dma = r.dma_now();

  std::vector<PatchLocation> reversed = entries;
  std::reverse(reversed.begin() + start, reversed.end());
  r.reset_dma(dma);
  const auto full = kmd::patch(r.args(reversed, list, start));
  REQUIRE(static_cast<bool>(in_order) == static_cast<bool>(full));
  CHECK(in_order_dma == r.dma_now());
  if (!in_order) {
    INFO(in_order.error().message);
    CHECK(in_order.error().code == full.error().code);
    CHECK(in_order_dma == dma);  // nothing written
    return in_order;
  }
  CHECK(in_order->patched == full->patched);
  CHECK(in_order->fence_written == full->fence_written);
  CHECK(in_order->timestamps_written == full->timestamps_written);
  return in_order;
}

/// A small deterministic generator (the same cases on every run and library).
struct SplitMix {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  std::uint32_t below(std::uint32_t n) { return static_cast<std::uint32_t>(next() % n); }
};

}  // namespace

TEST_CASE("patch quick check: a rendered list is accepted by both checks with the same output", "[patch]") {
  PatchRig r;
  const auto p = patch_both_ways(r, r.entries, r.list, r.rendered);
  REQUIRE(p);
  CHECK(p->patched == r.entries.size());
  CHECK(p->fence_written);
}

TEST_CASE("patch quick check: the range starting inside a packet or out of field order goes to the full check",
          "[patch]") {
  PatchRig r;
  // Entry 2 is the COPY's destination: a range from there starts inside the packet.
  REQUIRE(r.entries[2].slot_id_and_reserved == 1);
  CHECK(patch_both_ways(r, r.entries, r.list, r.rendered, 2));
  auto swapped = r.entries;
  std::swap(swapped[1], swapped[2]);  // COPY dst, COPY src
  CHECK(patch_both_ways(r, swapped, r.list, r.rendered));
}

TEST_CASE("patch quick check: allocation-list elements it leaves to the full check", "[patch]") {
  PatchRig r;
  const std::uint32_t a = 1;  // kA's element
  REQUIRE(r.list[a].allocation == kA);
  auto list = r.list;
  SECTION("a GPU address of odd alignment") {
    list[a].gpu_address += 4;
    (void)patch_both_ways(r, r.entries, list, r.rendered);  // either verdict, the same from both
  }
  SECTION("an allocation ending exactly at 2^64") {
    list[a].gpu_address = 0 - list[a].size;
    CHECK(patch_both_ways(r, r.entries, list, r.rendered));
  }
  SECTION("an allocation ending at 2^64 where an access ends: the address wraps") {
    list[a].size = 0x4000 + 128;  // the trigger COPY writes kA's last 128 bytes
    list[a].gpu_address = 0 - list[a].size;
    CHECK_FALSE(patch_both_ways(r, r.entries, list, r.rendered));
  }
  SECTION("sizes past 2^62, up to 2^64 - 1") {
    for (std::uint64_t size : {(std::uint64_t{1} << 62) + 4096, ~std::uint64_t{0} - 4096, ~std::uint64_t{0}}) {
      INFO("size " << size);
      list[a].size = size;
      list[a].gpu_address = 0;
      CHECK(patch_both_ways(r, r.entries, list, r.rendered));
    }
  }
  SECTION("not resident, null, without WriteOperation") {
    list[a].segment = kSystemMemory;
    CHECK_FALSE(patch_both_ways(r, r.entries, list, r.rendered));
    list = r.list;
    list[a].allocation = AllocationHandle{};
    CHECK_FALSE(patch_both_ways(r, r.entries, list, r.rendered));
    list = r.list;
    list[a].write = false;  // WRITE_DATA writes kA
    CHECK_FALSE(patch_both_ways(r, r.entries, list, r.rendered));
  }
  SECTION("an allocation that ends where the access ends, and one byte sooner") {
    // WRITE_DATA writes 12 bytes at kA + 0x40; WAIT reads 4 at kA + 0x44; COPY reads 64 at kA +
    // 0x100 and writes 128 at kA + 0x4000; BLIT reads (8 - 1) * 256 + 64 at kA + 0x1000.
    list[a].size = 0x4000 + 128;
    CHECK(patch_both_ways(r, r.entries, list, r.rendered));
    list[a].size -= 1;
    CHECK_FALSE(patch_both_ways(r, r.entries, list, r.rendered));
  }
}

TEST_CASE("patch quick check: an AllocationIndex past the list, inside and past the padded table", "[patch]") {
  PatchRig r;
  REQUIRE(r.list.size() == 4);  // the null element and kA, kB, kC: padded to 64
  for (std::uint32_t index : {4u, 7u, 63u, 64u, 65u, 0x8000'0000u, 0xffff'ffffu}) {
    INFO("AllocationIndex " << index);
    auto entries = r.entries;
    entries[3].allocation_index = index;
    CHECK_FALSE(patch_both_ways(r, entries, r.list, r.rendered));
  }
}

TEST_CASE("patch quick check: a long allocation list is worked out on the heap with the same verdicts", "[patch]") {
  PatchRig r;
  auto list = r.list;
  list.resize(200, list[1]);  // copies of kA's element after the list
  auto entries = r.entries;
  entries[0].allocation_index = 150;  // WRITE_DATA through a copy of kA
  CHECK(patch_both_ways(r, entries, list, r.rendered));
  for (std::uint32_t index : {200u, 255u, 256u, 257u, 256u + 150, 0xffff'ffffu}) {  // in the padded table, past it
    INFO("AllocationIndex " << index);
    entries[0].allocation_index = index;
    CHECK_FALSE(patch_both_ways(r, entries, list, r.rendered));
  }
}

TEST_CASE("patch quick check: a WRITE_DATA's dword count below its minimum or past the DMA buffer", "[patch]") {
  PatchRig r;
  REQUIRE(r.entries[0].split_offset == 0);  // the WRITE_DATA (3 data dwords) opens the buffer
  const auto& info = *abi::find_packet(static_cast<std::uint8_t>(abi::Opcode::WriteData));
  auto list = r.list;
  list[1].size = 1u << 20;  // kA is large enough for any data the count could mean
  auto dma = r.rendered;
  const auto with_dwords = [&](std::uint32_t dwords) {
    const std::uint32_t header = abi::make_header(abi::Opcode::WriteData, dwords);
    std::memcpy(dma.data(), &header, 4);
  };
  with_dwords(info.min_dwords - 1);
  CHECK_FALSE(patch_both_ways(r, r.entries, list, dma));
  with_dwords(r.dma_size() / 4 + 1);  // ends one dword past the buffer
  CHECK_FALSE(patch_both_ways(r, r.entries, list, dma));
  with_dwords(r.dma_size() / 4);  // ends with it
  CHECK(patch_both_ways(r, r.entries, list, dma));
}

TEST_CASE("patch quick check: a packet at a SplitOffset that is not 4-aligned", "[patch]") {
  // The first COPY copied whole to 2 bytes past a dword boundary, after the rendered packets,
  // and its two entries moved with it: a whole COPY, but not at a packet offset.
  PatchRig r;
  auto entries = r.entries;
  const std::uint32_t copy_at = entries[1].split_offset;
  REQUIRE(entries[2].split_offset == copy_at);
  const std::uint32_t moved_to = 0x8002;
  auto dma = r.rendered;
  std::memcpy(dma.data() + moved_to, r.rendered.data() + copy_at, 4 * 6);
  for (std::size_t i : {1, 2}) {
    entries[i].patch_offset = entries[i].patch_offset - copy_at + moved_to;
    entries[i].split_offset = moved_to;
  }
  CHECK_FALSE(patch_both_ways(r, entries, r.list, dma));
}

TEST_CASE("patch quick check: random mutations of a rendered list get the full check's verdict", "[patch]") {
  PatchRig r;
  SplitMix rng{0x5eed};
  // The trigger COPY's entries (the last two) stay as rendered, so the reversed call always goes
  // to the full check.
  const auto mutable_entries = static_cast<std::uint32_t>(r.entries.size()) - 2;
  std::uint32_t accepted = 0, refused = 0;
  for (int round = 0; round < 4000; ++round) {
    auto entries = r.entries;
    auto list = r.list;
    auto dma = r.rendered;
    const std::uint32_t mutations = 1 + rng.below(3);
    for (std::uint32_t m = 0; m < mutations; ++m) {
      PatchLocation& e = entries[rng.below(mutable_entries)];
      kmd::DxgkAllocationListEntry& al = list[1 + rng.below(3)];
      const std::uint32_t small = rng.below(9) * 4 + rng.below(2) * rng.below(4);  // 0..35, some unaligned
      switch (rng.below(14)) {
        case 0: e.allocation_index = rng.below(10); break;
        case 1: e.slot_id_and_reserved = rng.below(2) ? rng.below(3) : 1u << (24 + rng.below(8)); break;
        case 2: e.allocation_offset = rng.below(2) ? e.allocation_offset + small : e.allocation_offset - small; break;
        case 3: e.allocation_offset = static_cast<std::uint32_t>(al.size) - small; break;
        case 4: e.patch_offset += rng.below(2) ? small : 0 - small; break;
        case 5: e.split_offset += rng.below(2) ? small : 0 - small; break;
        case 6: e.split_offset = r.dma_size() - small; break;
        case 7: e.split_offset = static_cast<std::uint32_t>(rng.next()); break;
        case 8: al.size = rng.below(2) ? al.size - small : 0x4000 + rng.below(0x4000); break;
        case 9: al.write = !al.write; break;
        case 10: al.segment = rng.below(2) ? kSystemMemory : SegmentId{2}; break;
        case 11: al.gpu_address += rng.below(2) ? small : 0 - al.gpu_address - al.size + small; break;
        case 12: {  // a dword of the rendered packets: a header, a length, a flag, an address
          const std::uint32_t at = 4 * rng.below(r.out.dma_bytes / 4);
          std::uint32_t v;
          std::memcpy(&v, dma.data() + at, 4);
          v ^= 1u << rng.below(32);
          std::memcpy(dma.data() + at, &v, 4);
          break;
        }
        default: al.allocation = rng.below(4) ? al.allocation : AllocationHandle{}; break;
      }
    }
    INFO("round " << round);
    if (patch_both_ways(r, entries, list, dma))
      ++accepted;
    else
      ++refused;
  }
  // Both verdicts are well represented.
  CHECK(accepted > 400);
  CHECK(refused > 400);
}
