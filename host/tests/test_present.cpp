// DxgkDdiPresent (kmd::present): blt and colour fill as BLIT_RECT / FILL_RECT with pitches and
// patch entries, the rules on lists and rectangles, and multipass over sub-rectangles.
#include <catch2/catch.hpp>

#include <vector>

#include <fmt/format.h>

#include "render_rig.hpp"

using namespace sgpu;
using namespace sgpu::test;
using kmd::Rect;
using sgpu::AllocationHandle;
using sgpu::PatchLocation;

namespace {

const abi::PacketInfo& info(abi::Opcode op) { return *abi::find_packet(static_cast<std::uint8_t>(op)); }

struct PresentRig {
  DmaBlock dma{16 * 1024};
  std::vector<std::byte> private_data = std::vector<std::byte>(sizeof(kmd::RenderPrivateData), std::byte{0});
  std::vector<kmd::DxgkAllocationListEntry> list;
  std::vector<PatchLocation> patch_out = std::vector<PatchLocation>(256);
  std::vector<Rect> subs;
  kmd::PresentArgs a;

  explicit PresentRig(kmd::PresentKind kind) {
    // Source: a 64x32 back buffer (pitch 320); destination: a 128x64 primary (pitch 512).
    list.resize(3);
    list[1] = {AllocationHandle{11}, false, 1, 0x1'0000'0000ull, 320 * 32};
    list[2] = {AllocationHandle{12}, true, 1, 0x2'0000'0000ull, 512 * 64};
    a.kind = kind;
    a.dma_buffer = dma.data();
    a.dma_size = static_cast<std::uint32_t>(dma.capacity());
    a.private_data = private_data.data();
    a.private_data_size = static_cast<std::uint32_t>(private_data.size());
    a.allocation_list = list.data();
    a.allocation_list_size = 3;
    a.patch_out = patch_out.data();
    a.patch_out_size = static_cast<std::uint32_t>(patch_out.size());
    a.src = {64, 32, 320, 4};
    a.dst = {128, 64, 512, 4};
    a.src_rect = {0, 0, 64, 32};
    a.dst_rect = {10, 20, 74, 52};
    a.color = 0xff336699;
  }
  void use_subs(std::vector<Rect> rects) {
    subs = std::move(rects);
    a.sub_rects = subs.data();
    a.sub_rect_count = static_cast<std::uint32_t>(subs.size());
  }
  Result<kmd::RenderOutput> run() { return kmd::present(a); }
};

void check_error(const Result<kmd::RenderOutput>& r, Errc code, const std::string& needle) {
  REQUIRE_FALSE(r);
  INFO(to_string(r.error()));
  CHECK(r.error().code == code);
  CHECK(contains(r.error().message, needle));
}

}  // namespace

TEST_CASE("present: a blt is one BLIT_RECT with pitches, pre-patched, and src/dst patch entries", "[present]") {
  using namespace abi::payload;
  PresentRig rig(kmd::PresentKind::Blt);
  auto r = rig.run();
  REQUIRE(r);
  CHECK(r->complete);
  CHECK(r->packets == 1);
  const auto pk = decode(rig.dma.dwords(), r->dma_bytes);
  REQUIRE(pk.size() == 2);
  REQUIRE(pk[0].info->opcode == abi::Opcode::BlitRect);
  CHECK(pk[0].words[blit_rect::kWidth] == 64 * 4);
  CHECK(pk[0].words[blit_rect::kHeight] == 32);
  CHECK(pk[0].words[blit_rect::kSrcPitch] == 320);
  CHECK(pk[0].words[blit_rect::kDstPitch] == 512);
  const std::uint64_t dst_off = 20 * 512 + 10 * 4;
  CHECK(pk[0].address(0) == 0x1'0000'0000ull);
  CHECK(pk[0].address(1) == 0x2'0000'0000ull + dst_off);
  CHECK(pk[1].info->opcode == abi::Opcode::Fence);  // the submission fence
  CHECK(rig.private_data.size() >= sizeof(kmd::RenderPrivateData));

  REQUIRE(r->patch_count == 2);
  const auto& src = rig.patch_out[0];
  const auto& dst = rig.patch_out[1];
  CHECK(src.allocation_index == 1);
  CHECK(src.allocation_offset == 0);
  CHECK(src.patch_offset == 4 * blit_rect::kSrcLo);
  CHECK(src.driver_id == kmd::driver_id::kRead);
  CHECK(src.slot_id_and_reserved == 0);
  CHECK(dst.allocation_index == 2);
  CHECK(dst.allocation_offset == dst_off);
  CHECK(dst.patch_offset == 4 * blit_rect::kDstLo);
  CHECK(dst.driver_id == kmd::driver_id::kWrite);
  CHECK(dst.slot_id_and_reserved == 1);
  CHECK(src.split_offset == 0);
  CHECK(dst.split_offset == 0);
}

TEST_CASE("present: sub-rectangles map to the source by dst_rect's offset", "[present]") {
  using namespace abi::payload;
  PresentRig rig(kmd::PresentKind::Blt);
  rig.list[1].segment = kSystemMemory;  // not resident: address 0, still listed
  rig.use_subs({{12, 22, 20, 30}, {40, 40, 74, 52}});
  auto r = rig.run();
  REQUIRE(r);
  CHECK(r->packets == 2);
  REQUIRE(r->patch_count == 4);
  // Sub-rect 1 starts at (40, 40) in the destination = (30, 20) in the source.
  CHECK(rig.patch_out[2].allocation_offset == 20 * 320 + 30 * 4);
  CHECK(rig.patch_out[3].allocation_offset == 40 * 512 + 40 * 4);
  const auto pk = decode(rig.dma.dwords(), r->dma_bytes);
  CHECK(pk[1].address(0) == 0);
  CHECK(pk[1].words[blit_rect::kWidth] == 34 * 4);
  CHECK(pk[1].words[blit_rect::kHeight] == 12);
  CHECK(rig.patch_out[2].split_offset == pk[1].offset);
  CHECK(rig.patch_out[2].patch_offset == pk[1].offset + 4 * blit_rect::kSrcLo);
}

TEST_CASE("present: a colour fill is one FILL_RECT with the colour and the destination entry", "[present]") {
  using namespace abi::payload;
  PresentRig rig(kmd::PresentKind::ColorFill);
  rig.list[1] = {};  // colour fill: no source
  auto r = rig.run();
  REQUIRE(r);
  const auto pk = decode(rig.dma.dwords(), r->dma_bytes);
  REQUIRE(pk.size() == 2);
  REQUIRE(pk[0].info->opcode == abi::Opcode::FillRect);
  CHECK(pk[0].words[fill_rect::kWidth] == 64 * 4);
  CHECK(pk[0].words[fill_rect::kHeight] == 32);
  CHECK(pk[0].words[fill_rect::kDstPitch] == 512);
  CHECK(pk[0].words[fill_rect::kPattern] == 0xff336699);
  CHECK(pk[0].address(0) == 0x2'0000'0000ull + 20 * 512 + 10 * 4);
  REQUIRE(r->patch_count == 1);
  CHECK(rig.patch_out[0].allocation_index == 2);
  CHECK(rig.patch_out[0].patch_offset == 4 * fill_rect::kDstLo);
  CHECK(rig.patch_out[0].driver_id == kmd::driver_id::kWrite);
}

TEST_CASE("present: rectangles outside their surface are refused", "[present]") {
  SECTION("dst_rect past the destination's right edge") {
    PresentRig rig(kmd::PresentKind::ColorFill);
    rig.a.dst_rect = {100, 0, 129, 10};
    check_error(rig.run(), Errc::InvalidArgument, "dst_rect [100, 0, 129, 10)");
    check_error(rig.run(), Errc::InvalidArgument, "128x64");
  }
  SECTION("src_rect with a negative corner") {
    PresentRig rig(kmd::PresentKind::Blt);
    rig.a.src_rect = {-1, 0, 63, 32};
    check_error(rig.run(), Errc::InvalidArgument, "src_rect [-1, 0, 63, 32)");
  }
  SECTION("a sub-rectangle outside dst_rect") {
    PresentRig rig(kmd::PresentKind::Blt);
    rig.use_subs({{10, 20, 20, 30}, {70, 50, 80, 52}});
    check_error(rig.run(), Errc::InvalidArgument, "sub-rectangle 1 [70, 50, 80, 52) is not inside dst_rect");
  }
  SECTION("a surface bigger than its allocation") {
    PresentRig rig(kmd::PresentKind::Blt);
    rig.list[1].size = 31 * 320 + 64 * 4 - 1;  // the last row ends one byte past it
    check_error(rig.run(), Errc::InvalidArgument, "source surface 64x32 (pitch 320)");
  }
}

TEST_CASE("present: source and destination rectangles of different sizes are refused", "[present]") {
  PresentRig rig(kmd::PresentKind::Blt);
  rig.a.src_rect = {0, 0, 32, 32};
  check_error(rig.run(), Errc::InvalidArgument, "no stretching");
}

TEST_CASE("present: the allocation list must be null, source, destination", "[present]") {
  PresentRig rig(kmd::PresentKind::Blt);
  rig.a.allocation_list_size = 2;
  check_error(rig.run(), Errc::InvalidArgument, "the allocation list has 2 elements");
  PresentRig rig2(kmd::PresentKind::Blt);
  rig2.list[0] = rig2.list[1];
  check_error(rig2.run(), Errc::InvalidArgument, "element 0");
  PresentRig rig3(kmd::PresentKind::Blt);
  rig3.list[1] = {};
  check_error(rig3.run(), Errc::InvalidArgument, "element 1 is null");
}

TEST_CASE("present: a blt within one allocation whose extents overlap is refused", "[present]") {
  PresentRig rig(kmd::PresentKind::Blt);
  rig.list[1] = rig.list[2];
  rig.a.src = rig.a.dst;
  rig.a.src_rect = {0, 0, 64, 32};
  rig.a.dst_rect = {8, 8, 72, 40};
  check_error(rig.run(), Errc::InvalidArgument, "sub-rectangle 0");
  check_error(rig.run(), Errc::InvalidArgument, "overlap");
}

TEST_CASE("present: many sub-rectangles over a small DMA buffer take several passes", "[present]") {
  PresentRig big(kmd::PresentKind::Blt);
  std::vector<Rect> subs;
  for (int i = 0; i < 16; ++i) subs.push_back({10 + 4 * i, 20, 14 + 4 * i, 52});
  big.use_subs(subs);
  auto one = big.run();
  REQUIRE(one);
  REQUIRE(one->packets == 16);
  const auto whole = big.dma.first(one->dma_bytes);
  const std::vector<PatchLocation> whole_patches(big.patch_out.begin(), big.patch_out.begin() + one->patch_count);

  PresentRig rig(kmd::PresentKind::Blt);
  rig.use_subs(subs);
  const std::uint32_t packet = 4 * info(abi::Opcode::BlitRect).min_dwords;
  rig.a.dma_size = 3 * packet + kmd::submission_fence_bytes();  // three rectangles a pass
  std::vector<std::uint32_t> joined;
  std::vector<PatchLocation> patches;
  int passes = 0;
  for (;;) {
    auto r = rig.run();
    REQUIRE(r);
    ++passes;
    REQUIRE(passes < 20);
    const auto base = static_cast<std::uint32_t>(joined.size() * 4);
    const auto chunk = rig.dma.first(r->dma_bytes);
    joined.insert(joined.end(), chunk.begin(), chunk.end());
    for (std::uint32_t i = 0; i < r->patch_count; ++i) {
      PatchLocation p = rig.patch_out[i];
      p.patch_offset += base;
      p.split_offset += base;
      patches.push_back(p);
    }
    kmd::RenderPrivateData priv;
    std::memcpy(&priv, rig.private_data.data(), sizeof priv);
    CHECK(priv.flags == (r->complete ? kmd::RenderPrivateData::kHasFence : 0u));
    if (r->complete) break;
    CHECK(r->packets == 3);
    CHECK(r->multipass_offset == rig.a.multipass_offset + 3);
    rig.a.multipass_offset = r->multipass_offset;
  }
  CHECK(passes == 6);
  CHECK(joined == whole);
  REQUIRE(patches.size() == whole_patches.size());
  for (std::size_t i = 0; i < patches.size(); ++i) {
    CHECK(patches[i].patch_offset == whole_patches[i].patch_offset);
    CHECK(patches[i].allocation_offset == whole_patches[i].allocation_offset);
  }
}

TEST_CASE("present: MultipassOffset past the sub-rectangles and a DMA buffer too small for one are refused",
          "[present]") {
  PresentRig rig(kmd::PresentKind::Blt);
  rig.use_subs({{10, 20, 20, 30}});
  rig.a.multipass_offset = 1;
  check_error(rig.run(), Errc::InvalidArgument, "MultipassOffset 1");
  rig.a.multipass_offset = 0;
  rig.a.dma_size = 4 * info(abi::Opcode::BlitRect).min_dwords + kmd::submission_fence_bytes() - 4;
  check_error(rig.run(), Errc::InvalidArgument, "sub-rectangle 0");
}
