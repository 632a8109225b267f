// The extent of a COPY's or BLIT_RECT's source or destination (sgpu_cp_extent) alone.
//
// (rows - 1) * pitch + width in three stages: ext_o is the extent of the inputs two cycles
// before. Against 128-bit arithmetic, for the values at the edges of the 16-bit halves the
// multiply is split at, and random ones, with the inputs changing every cycle.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdio>
#include <deque>
#include <iterator>
#include <random>
#include <string>

#include <verilated.h>

#include "Vsgpu_cp_extent.h"
#include "common/block_harness.hpp"
#include "common/test_seed.hpp"

namespace {

__extension__ typedef unsigned __int128 u128;  // GCC's and Clang's

struct Inputs {
  std::uint32_t rows_m1, pitch, width;
  u128 extent() const { return u128{rows_m1} * pitch + width; }
};

// A datapath block without a reset.
struct Extent : sgpu::tb::BlockHarness<Vsgpu_cp_extent> {
  Extent() : BlockHarness("extent") {}

  void drive(const Inputs& in) {
    dut->rows_m1_i = in.rows_m1;
    dut->pitch_i = in.pitch;
    dut->width_i = in.width;
    dut->eval();
  }
  u128 ext() const {
    return u128{dut->ext_o[0]} | (u128{dut->ext_o[1]} << 32) | (u128{dut->ext_o[2] & 1u} << 64);
  }
};

std::string hex(u128 v) {
  char s[40];
  std::snprintf(s, sizeof s, "%x_%016llx", static_cast<unsigned>(v >> 64), static_cast<unsigned long long>(v));
  return s;
}

}  // namespace

TEST_CASE("the extent is (rows - 1) * pitch + width of the inputs two cycles before", "[cp][extent]") {
  const std::uint64_t seed = sgpu::tb::test_seed(13);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // The edges of the 16-bit halves and of the 65-bit result: carries out of each partial sum.
  constexpr std::uint32_t kEdges[] = {0, 1, 2, 0xffff, 0x10000, 0x10001, 0x7fffffff, 0x80000000, 0xfffeffff,
                                      0xffff0000, 0xfffffffe, 0xffffffff};
  auto pick = [&]() -> std::uint32_t {
    return rng() % 2 ? kEdges[rng() % std::size(kEdges)] : static_cast<std::uint32_t>(rng());
  };

  Extent e;
  std::deque<Inputs> sent;
  unsigned top_bit = 0;
  for (unsigned cycle = 0; cycle < 20000; ++cycle) {
    const Inputs in{pick(), pick(), pick()};
    e.drive(in);
    sent.push_back(in);
    if (sent.size() == 3) {
      const Inputs& then = sent.front();
      INFO("cycle " << cycle << " rows-1 " << then.rows_m1 << " pitch " << then.pitch << " width " << then.width);
      REQUIRE(hex(e.ext()) == hex(then.extent()));
      top_bit += (then.extent() >> 63) != 0 ? 1u : 0u;
      sent.pop_front();
    }
    e.clock();
  }
  // The largest operands were reached: results at 2^63 and above (the largest, 2^64 - 2^32).
  CHECK(top_bit > 10);
}
