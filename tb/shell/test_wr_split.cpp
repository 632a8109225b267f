// sgpu_axi_wr_split on its own: random write bursts with holes, whole beats without strobes
// and unaligned starts go in; every burst that comes out must have contiguous strobes starting
// at its address, carry its byte count on awuser, and stay inside one window of the piece
// limit; memory must end exactly as the input strobes say; one B per input burst.
#include <catch2/catch.hpp>

#include <deque>

#include <verilated.h>

#include "Vsgpu_axi_wr_split.h"
#include "axi_traffic.hpp"
#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/axi_verilator.hpp"
#include "common/test_seed.hpp"

using namespace sgpu::tb;

namespace {

using detail::set_port;
constexpr unsigned kBytes = 16;

struct Piece {
  std::uint64_t addr;
  unsigned beats, bytes;
  std::uint64_t next;  // the next byte a strobe may enable
  unsigned seen_bytes = 0, seen_beats = 0;
  bool started = false;
};

void run(unsigned max_bytes, double hole_prob, std::uint64_t seed, unsigned bursts) {
  VerilatedContext ctx;
  ctx.randReset(2);
  ctx.randSeed(static_cast<int>(seed & 0x7fffffff));
  Vsgpu_axi_wr_split v(&ctx);
  HostMemory mem;
  TrafficConfig tc;
  tc.data_bytes = kBytes;
  tc.max_len = 64;
  tc.strobe_hole_prob = hole_prob;
  tc.seed = seed;
  AxiTraffic traffic(mem, tc);
  traffic.add_writes(bursts);
  AxiMemoryModel::Config mc;
  mc.data_bytes = kBytes;
  mc.aw_ready_prob = mc.w_ready_prob = 0.7;
  mc.seed = seed + 7;
  AxiMemoryModel far(mem, mc);
  AxiChecker near_check(kBytes, "input"), far_check(kBytes, "output");
  const unsigned limit = max_bytes == 0 ? 512 : max_bytes;

  auto drive_in = [&](const AxiManagerOut& o) {
    set_port(v.s_axi_awvalid, o.awvalid);
    set_port(v.s_axi_awid, o.awid);
    set_port(v.s_axi_awaddr, o.awaddr);
    set_port(v.s_axi_awlen, o.awlen);
    set_port(v.s_axi_awsize, o.awsize);
    set_port(v.s_axi_awburst, o.awburst);
    set_port(v.s_axi_wvalid, o.wvalid);
    detail::bytes_to_bus(o.wdata.data(), o.wdata.size(), v.s_axi_wdata);
    set_port(v.s_axi_wstrb, o.wstrb);
    set_port(v.s_axi_wlast, o.wlast);
    set_port(v.s_axi_bready, o.bready);
  };
  v.clk_i = 0;
  set_port(v.max_bytes_i, max_bytes);
  drive_in(AxiManagerOut{});
  drive_axi_write(v, AxiSubordinateOut{});
  v.rst_ni = 1;
  v.eval();
  v.rst_ni = 0;
  v.eval();
  for (int i = 0; i < 4; ++i) {
    v.clk_i = 1;
    v.eval();
    v.clk_i = 0;
    v.eval();
  }
  v.rst_ni = 1;
  drive_in(traffic.outputs());
  drive_axi_write(v, far.outputs());

  std::deque<Piece> pieces;
  std::uint64_t cycles = 0, out_bursts = 0;
  while (!(traffic.done() && far.idle())) {
    REQUIRE(++cycles < 500'000);
    v.eval();
    AxiSubordinateOut in_s;
    in_s.awready = v.s_axi_awready;
    in_s.wready = v.s_axi_wready;
    in_s.bvalid = v.s_axi_bvalid;
    in_s.bid = v.s_axi_bid;
    in_s.bresp = v.s_axi_bresp;
    AxiManagerOut out_m;
    sample_axi_write(v, out_m);
    const unsigned awuser = v.m_axi_awuser;
    near_check.tick(traffic.outputs(), in_s);
    far_check.tick(out_m, far.outputs());
    // ---- the pieces
    if (out_m.awvalid && far.outputs().awready) {
      ++out_bursts;
      CHECK(out_m.awid == 0);
      CHECK(awuser > 0);
      CHECK(awuser <= limit);
      // Inside one window of the limit.
      CHECK(out_m.awaddr / limit == (out_m.awaddr + awuser - 1) / limit);
      pieces.push_back({out_m.awaddr, out_m.awlen + 1u, awuser, out_m.awaddr});
    }
    if (out_m.wvalid && far.outputs().wready) {
      REQUIRE_FALSE(pieces.empty());
      Piece& p = pieces.front();
      const std::uint64_t base = (p.addr & ~std::uint64_t{kBytes - 1}) + std::uint64_t{p.seen_beats} * kBytes;
      for (unsigned i = 0; i < kBytes; ++i) {
        if (!(out_m.wstrb >> i & 1)) continue;
        if (base + i != p.next) FAIL("a hole in the strobes of the piece at " << p.addr);
        p.next = base + i + 1;
        ++p.seen_bytes;
      }
      ++p.seen_beats;
      if (out_m.wlast) {
        CHECK(p.seen_beats == p.beats);
        CHECK(p.seen_bytes == p.bytes);
        pieces.pop_front();
      }
    }
    v.clk_i = 1;
    v.eval();
    traffic.tick(in_s);
    far.tick(out_m);
    v.clk_i = 0;
    drive_in(traffic.outputs());
    drive_axi_write(v, far.outputs());
  }
  INFO(near_check.report() << far_check.report());
  CHECK(near_check.ok());
  CHECK(far_check.ok());
  for (const auto& e : traffic.errors()) FAIL_CHECK(e);
  CHECK(traffic.write_responses() == bursts);
  std::vector<std::uint8_t> got(tc.write_size);
  mem.read(tc.write_base, got.data(), got.size());
  CHECK(got == traffic.expected_writes());
  CHECK(out_bursts >= bursts / 2);
}

}  // namespace

TEST_CASE("Write splitter: contiguous pieces, exact bytes, one response per burst", "[shell][split]") {
  const auto seed = test_seed(1);
  CAPTURE(seed);
  SECTION("holes everywhere, 512-byte limit") { run(0, 0.7, seed, 300); }
  SECTION("mostly whole beats, 128-byte limit (a small Max_Payload_Size)") { run(128, 0.1, seed, 300); }
  SECTION("one-beat limit") { run(16, 0.3, seed, 200); }
  SECTION("whole beats only: each burst becomes pieces at the limit") { run(256, 0.0, seed, 200); }
}
