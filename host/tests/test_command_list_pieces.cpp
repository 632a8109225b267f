// umd::CommandList records long operations as chains of packets of at most kMaxPacketBytes
// (whole rows for the 2-D ones), so that they make progress across preemptions (a cut COPY,
// FILL, BLIT_RECT or FILL_RECT restarts from its header); a chain that cannot be expressed in the
// 32-bit offsets is refused before anything is recorded.
#include <catch2/catch.hpp>

#include <vector>

#include "sgpu/gen/abi.hpp"
#include "sgpu/umd/command_list.hpp"

using namespace sgpu;

namespace {

const AllocationHandle kA{1}, kB{2};
constexpr std::uint32_t kPiece = umd::CommandList::kMaxPacketBytes;

struct Packet {
  abi::Opcode op;
  std::vector<std::uint32_t> words;
};

std::vector<Packet> packets(const umd::CommandList& cl) {
  std::vector<Packet> out;
  const auto& c = cl.commands();
  for (std::size_t at = 0; at < c.size();) {
    const std::uint32_t n = abi::header_dwords(c[at]);
    REQUIRE(n > 0);
    out.push_back({static_cast<abi::Opcode>(abi::header_opcode(c[at])), {c.begin() + at, c.begin() + at + n}});
    at += n;
  }
  return out;
}

}  // namespace

TEST_CASE("command list pieces: a long COPY or FILL is a chain of packets of at most kMaxPacketBytes",
          "[command_list][preempt]") {
  umd::CommandList cl;
  REQUIRE(cl.copy(kA, 8, kB, 16, 2 * kPiece + 100));
  REQUIRE(cl.fill(kB, 4, kPiece + 4, 0xabcdef01u));
  CHECK(cl.operations() == 2);
  const auto p = packets(cl);
  REQUIRE(p.size() == 5);
  namespace c = abi::payload::copy;
  namespace f = abi::payload::fill;
  const std::uint32_t copy_bytes[] = {kPiece, kPiece, 100};
  for (int i = 0; i < 3; ++i) {
    CHECK(p[i].op == abi::Opcode::Copy);
    CHECK(p[i].words[c::kBytes] == copy_bytes[i]);
  }
  CHECK(p[3].op == abi::Opcode::Fill);
  CHECK(p[3].words[f::kBytes] == kPiece);
  CHECK(p[4].words[f::kBytes] == 4);
  CHECK(p[4].words[f::kPattern] == 0xabcdef01u);  // pieces start at multiples of 4: the same pattern
  // One patch entry per address field, each piece at its offset in the allocation.
  const auto& pl = cl.patch_locations();
  REQUIRE(pl.size() == 8);
  for (std::uint32_t i = 0; i < 3; ++i) {
    CHECK(pl[2 * i].allocation_offset == 8 + i * kPiece);       // source
    CHECK(pl[2 * i + 1].allocation_offset == 16 + i * kPiece);  // destination
  }
  CHECK(pl[6].allocation_offset == 4);
  CHECK(pl[7].allocation_offset == 4 + kPiece);
}

TEST_CASE("command list pieces: BLIT_RECT and FILL_RECT are split by whole rows", "[command_list][preempt]") {
  umd::CommandList cl;
  const std::uint32_t width = 100 * 1024, rows = 5;  // two rows a piece (200 KiB), then one
  REQUIRE(cl.blit(kA, 0, 128 * 1024, kB, 64, 256 * 1024, width, rows));
  REQUIRE(cl.fill_rect(kB, 0, 4 * kPiece, 2 * kPiece, 2, 7));  // rows wider than a piece: one each
  const auto p = packets(cl);
  REQUIRE(p.size() == 5);
  namespace b = abi::payload::blit_rect;
  const std::uint32_t heights[] = {2, 2, 1};
  for (int i = 0; i < 3; ++i) {
    CHECK(p[i].op == abi::Opcode::BlitRect);
    CHECK(p[i].words[b::kHeight] == heights[i]);
    CHECK(p[i].words[b::kWidth] == width);
  }
  const auto& pl = cl.patch_locations();
  CHECK(pl[2].allocation_offset == 2 * 128 * 1024);       // second blit piece: source row 2
  CHECK(pl[3].allocation_offset == 64 + 2 * 256 * 1024);  // its destination row 2
  CHECK(p[4].words[abi::payload::fill_rect::kHeight] == 1);
  CHECK(pl[7].allocation_offset == 4 * kPiece);  // second FILL_RECT piece: row 1
}

TEST_CASE("command list pieces: short and empty operations stay one packet", "[command_list][preempt]") {
  umd::CommandList cl;
  REQUIRE(cl.copy(kA, 0, kB, 0, kPiece));
  REQUIRE(cl.fill(kA, 0, 0, 0));
  REQUIRE(cl.fill_rect(kA, 0, 16, 16, 0, 0));
  CHECK(packets(cl).size() == 3);
}

TEST_CASE("command list pieces: a chain whose last piece would start past the 32-bit offset is refused, nothing "
          "recorded",
          "[command_list][preempt]") {
  umd::CommandList cl;
  REQUIRE(cl.copy(kA, 0, kB, 0, 16));
  const auto before = cl.commands();
  const auto patches = cl.patch_locations().size();
  auto e = cl.copy(kA, 0xffff'0000u, kB, 0, 2 * kPiece);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == Errc::InvalidArgument);
  CHECK_THAT(e.error().message, Catch::Contains("past the 32-bit AllocationOffset"));
  auto r = cl.blit(kA, 0, 0x8000'0000u, kB, 0, 4096, kPiece, 3);  // rows 2 GiB apart
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK(cl.commands() == before);
  CHECK(cl.patch_locations().size() == patches);
  CHECK(cl.operations() == 1);
}
