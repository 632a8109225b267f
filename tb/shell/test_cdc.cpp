// The shells' clock-domain crossings on their own: AXI4 (sgpu_cdc_axi, the core's host-memory
// port) and AXI4-Lite (sgpu_cdc_axil, the register port), each with unrelated clocks on its two
// sides: faster, slower, equal with a phase offset, and drifting. Random traffic with random
// back-pressure goes through; every response is checked, both sides run the AXI protocol
// checker, and the written memory must end exactly as the strobes say.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>

#include <verilated.h>

#include "Vsgpu_cdc_axi.h"
#include "Vsgpu_cdc_axil.h"
#include "axi_traffic.hpp"
#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/axi_verilator.hpp"
#include "common/test_seed.hpp"

using namespace sgpu::tb;

namespace {

using detail::set_port;

/// Two unrelated clocks: calls on_s / on_m at each rising edge, in time order.
struct TwoClocks {
  std::uint64_t s_half, m_half, s_next, m_next, now = 0;
  TwoClocks(std::uint64_t s_period, std::uint64_t m_period, std::uint64_t m_phase)
      : s_half(s_period / 2), m_half(m_period / 2), s_next(s_period / 2), m_next(m_phase + 1) {}
};

template <class V>
void drive_s(V& v, const AxiManagerOut& o) {
  set_port(v.s_axi_arvalid, o.arvalid);
  set_port(v.s_axi_arid, o.arid);
  set_port(v.s_axi_araddr, o.araddr);
  set_port(v.s_axi_arlen, o.arlen);
  set_port(v.s_axi_arsize, o.arsize);
  set_port(v.s_axi_arburst, o.arburst);
  set_port(v.s_axi_rready, o.rready);
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
}

template <class V>
AxiSubordinateOut sample_s(const V& v) {
  AxiSubordinateOut s;
  s.arready = v.s_axi_arready;
  s.rvalid = v.s_axi_rvalid;
  s.rid = v.s_axi_rid;
  detail::bus_to_bytes(v.s_axi_rdata, s.rdata.data(), s.rdata.size());
  s.rresp = v.s_axi_rresp;
  s.rlast = v.s_axi_rlast;
  s.awready = v.s_axi_awready;
  s.wready = v.s_axi_wready;
  s.bvalid = v.s_axi_bvalid;
  s.bid = v.s_axi_bid;
  s.bresp = v.s_axi_bresp;
  return s;
}

struct AxiRun {
  std::uint64_t s_cycles = 0, m_cycles = 0;
};

/// Runs `traffic` through the AXI4 crossing against a memory model on the far side.
AxiRun run_axi(std::uint64_t s_period, std::uint64_t m_period, std::uint64_t phase, TrafficConfig tc,
               unsigned reads, unsigned writes, double mem_ready_prob, std::uint64_t seed) {
  VerilatedContext ctx;
  ctx.randReset(2);
  ctx.randSeed(static_cast<int>(seed & 0x7fffffff));
  Vsgpu_cdc_axi v(&ctx);
  HostMemory mem;
  tc.data_bytes = 8;
  tc.seed = seed;
  AxiTraffic traffic(mem, tc);
  AxiMemoryModel::Config mc;
  mc.data_bytes = 8;
  mc.read_latency = 4;
  mc.write_latency = 3;
  mc.ar_ready_prob = mc.aw_ready_prob = mc.w_ready_prob = mc.r_valid_prob = mem_ready_prob;
  mc.seed = seed + 1;
  AxiMemoryModel far(mem, mc);
  AxiChecker near_check(8, "s side"), far_check(8, "m side");
  traffic.add_reads(reads);
  traffic.add_writes(writes);

  // Reset both sides together (a real falling edge: the flops start random).
  v.s_clk_i = v.m_clk_i = 0;
  drive_s(v, AxiManagerOut{});
  drive_axi_read(v, AxiSubordinateOut{});
  drive_axi_write(v, AxiSubordinateOut{});
  v.s_rst_ni = v.m_rst_ni = 1;
  v.eval();
  v.s_rst_ni = v.m_rst_ni = 0;
  v.eval();
  TwoClocks c(s_period, m_period, phase);
  AxiRun r;
  bool in_reset = true;
  std::uint64_t edges = 0;
  while (true) {
    const std::uint64_t t = std::min(c.s_next, c.m_next);
    const bool s_edge = c.s_next == t, m_edge = c.m_next == t;
    const bool s_rise = s_edge && !v.s_clk_i, m_rise = m_edge && !v.m_clk_i;
    AxiSubordinateOut s_sample{};
    AxiManagerOut m_sample{};
    if (s_rise || m_rise) {
      v.eval();
      if (s_rise) s_sample = sample_s(v);
      if (m_rise) {
        sample_axi_read(v, m_sample);
        sample_axi_write(v, m_sample);
      }
    }
    if (s_edge) { v.s_clk_i = !v.s_clk_i; c.s_next += c.s_half; }
    if (m_edge) { v.m_clk_i = !v.m_clk_i; c.m_next += c.m_half; }
    v.eval();
    if (!in_reset) {
      if (s_rise) {
        ++r.s_cycles;
        near_check.tick(traffic.outputs(), s_sample);
        traffic.tick(s_sample);
        drive_s(v, traffic.outputs());
      }
      if (m_rise) {
        ++r.m_cycles;
        far_check.tick(m_sample, far.outputs());
        far.tick(m_sample);
        drive_axi_read(v, far.outputs());
        drive_axi_write(v, far.outputs());
      }
    }
    if (in_reset && ++edges == 40) {
      v.s_rst_ni = v.m_rst_ni = 1;
      in_reset = false;
      drive_s(v, traffic.outputs());
      drive_axi_read(v, far.outputs());
      drive_axi_write(v, far.outputs());
    }
    if (!in_reset && traffic.done() && far.idle()) break;
    if (r.s_cycles > 2'000'000) FAIL("the crossing stopped moving");
  }
  INFO(near_check.report() << far_check.report());
  CHECK(near_check.ok());
  CHECK(far_check.ok());
  for (const auto& e : traffic.errors()) FAIL_CHECK(e);
  std::vector<std::uint8_t> got(tc.write_size);
  mem.read(tc.write_base, got.data(), got.size());
  CHECK(got == traffic.expected_writes());
  return r;
}

}  // namespace

TEST_CASE("AXI4 crossing: random traffic at four clock relations", "[cdc][axi]") {
  const auto seed = test_seed(1);
  CAPTURE(seed);
  struct Clocks { std::uint64_t s, m, phase; const char* what; };
  const Clocks cases[] = {{8000, 8000, 2961, "equal, phase offset"},
                          {8000, 5000, 1234, "far side faster"},
                          {4000, 9000, 777, "near side faster"},
                          {8000, 8013, 100, "drifting"}};
  for (const auto& k : cases) {
    SECTION(k.what) {
      TrafficConfig tc;
      run_axi(k.s, k.m, k.phase, tc, 300, 300, 0.7, seed);
    }
  }
}

TEST_CASE("AXI4 crossing streams a beat per cycle", "[cdc][axi][throughput]") {
  TrafficConfig tc;
  tc.valid_prob = 1.0;
  tc.ready_prob = 1.0;
  tc.max_len = 16;
  tc.id_bits = 0;
  const AxiRun r = run_axi(8000, 8000, 2961, tc, 400, 0, 1.0, test_seed(2));
  // 400 bursts of 1..16 beats: about 3400 beats; the crossing adds latency, not gaps.
  CHECK(static_cast<double>(r.s_cycles) < 1.15 * 400 * 8.5 + 200);
}

namespace {

/// Register-port crossing: sequential accesses (as the BAR bridges make them) against a
/// register file on the far side.
void run_axil(std::uint64_t s_period, std::uint64_t m_period, std::uint64_t phase, std::uint64_t seed) {
  VerilatedContext ctx;
  ctx.randReset(2);
  ctx.randSeed(static_cast<int>(seed & 0x7fffffff));
  Vsgpu_cdc_axil v(&ctx);
  std::mt19937_64 rng(seed);
  std::map<std::uint32_t, std::uint32_t> regs, model;  // far-side registers, and what they must hold

  v.s_clk_i = v.m_clk_i = 0;
  v.s_axil_awvalid = v.s_axil_wvalid = v.s_axil_arvalid = 0;
  v.s_axil_bready = v.s_axil_rready = 1;
  v.m_axil_awready = v.m_axil_wready = v.m_axil_arready = 0;
  v.m_axil_bvalid = v.m_axil_rvalid = 0;
  v.s_rst_ni = v.m_rst_ni = 1;
  v.eval();
  v.s_rst_ni = v.m_rst_ni = 0;
  v.eval();
  TwoClocks c(s_period, m_period, phase);
  // Far side: an AXI-Lite register file with one-cycle responses and random readiness.
  bool far_aw = false, far_w = false, far_b = false, far_r = false;
  std::uint32_t far_addr = 0, far_data = 0, far_rdata = 0;
  std::uint8_t far_strb = 0;
  int accesses = 0, edges = 0;
  bool busy = false, write = false;
  std::uint32_t addr = 0, wdata = 0, want = 0;
  std::uint8_t strb = 0;
  bool aw_sent = false, w_sent = false, ar_sent = false;
  while (accesses < 600) {
    const std::uint64_t t = std::min(c.s_next, c.m_next);
    const bool s_edge = c.s_next == t, m_edge = c.m_next == t;
    const bool s_rise = s_edge && !v.s_clk_i, m_rise = m_edge && !v.m_clk_i;
    v.eval();
    // Sample both sides before the edge.
    const bool s_aw = v.s_axil_awvalid && v.s_axil_awready, s_w = v.s_axil_wvalid && v.s_axil_wready;
    const bool s_ar = v.s_axil_arvalid && v.s_axil_arready;
    const bool s_b = v.s_axil_bvalid && v.s_axil_bready, s_r = v.s_axil_rvalid && v.s_axil_rready;
    const std::uint32_t s_rdata = v.s_axil_rdata;
    const bool m_aw = v.m_axil_awvalid && v.m_axil_awready, m_w = v.m_axil_wvalid && v.m_axil_wready;
    const bool m_ar = v.m_axil_arvalid && v.m_axil_arready;
    const bool m_b = v.m_axil_bvalid && v.m_axil_bready, m_r = v.m_axil_rvalid && v.m_axil_rready;
    const std::uint32_t m_awaddr = v.m_axil_awaddr, m_araddr = v.m_axil_araddr, m_wdata = v.m_axil_wdata;
    const std::uint8_t m_wstrb = v.m_axil_wstrb;
    if (s_edge) { v.s_clk_i = !v.s_clk_i; c.s_next += c.s_half; }
    if (m_edge) { v.m_clk_i = !v.m_clk_i; c.m_next += c.m_half; }
    v.eval();
    if (edges < 40) {
      if (++edges == 40) v.s_rst_ni = v.m_rst_ni = 1;
      continue;
    }
    if (m_rise) {
      if (m_aw) { far_aw = true; far_addr = m_awaddr; }
      if (m_w) { far_w = true; far_data = m_wdata; far_strb = m_wstrb; }
      if (m_b) far_b = false;
      if (m_r) far_r = false;
      if (far_aw && far_w && !far_b) {
        std::uint32_t& r = regs[far_addr];
        for (int i = 0; i < 4; ++i)
          if (far_strb >> i & 1) r = (r & ~(0xffu << (8 * i))) | (far_data & (0xffu << (8 * i)));
        far_aw = far_w = false;
        far_b = true;
      }
      if (m_ar) { far_rdata = regs[m_araddr]; far_r = true; }
      const bool ready = rng() % 4 != 0;
      set_port(v.m_axil_awready, ready && !far_aw);
      set_port(v.m_axil_wready, ready && !far_w);
      set_port(v.m_axil_arready, ready && !far_r);
      set_port(v.m_axil_bvalid, far_b);
      set_port(v.m_axil_bresp, 0);
      set_port(v.m_axil_rvalid, far_r);
      set_port(v.m_axil_rdata, far_rdata);
      set_port(v.m_axil_rresp, 0);
    }
    if (s_rise) {
      if (s_aw) aw_sent = true;
      if (s_w) w_sent = true;
      if (s_ar) ar_sent = true;
      if (busy && write && s_b) busy = false, ++accesses;
      if (busy && !write && s_r) {
        CHECK(s_rdata == want);
        busy = false;
        ++accesses;
      }
      if (!busy) {
        busy = true;
        write = rng() % 2;
        addr = static_cast<std::uint32_t>(rng() % 16) * 4;
        wdata = static_cast<std::uint32_t>(rng());
        strb = static_cast<std::uint8_t>(rng() % 16);
        aw_sent = w_sent = ar_sent = false;
        if (write) {
          std::uint32_t& r = model[addr];
          for (int i = 0; i < 4; ++i)
            if (strb >> i & 1) r = (r & ~(0xffu << (8 * i))) | (wdata & (0xffu << (8 * i)));
        } else {
          want = model[addr];
        }
      }
      set_port(v.s_axil_awvalid, busy && write && !aw_sent);
      set_port(v.s_axil_wvalid, busy && write && !w_sent);
      set_port(v.s_axil_arvalid, busy && !write && !ar_sent);
      set_port(v.s_axil_awaddr, addr);
      set_port(v.s_axil_araddr, addr);
      set_port(v.s_axil_wdata, wdata);
      set_port(v.s_axil_wstrb, strb);
    }
  }
}

}  // namespace

TEST_CASE("AXI4-Lite crossing: register accesses at four clock relations", "[cdc][axil]") {
  const auto seed = test_seed(3);
  CAPTURE(seed);
  SECTION("equal, phase offset") { run_axil(8000, 8000, 2961, seed); }
  SECTION("far side faster") { run_axil(8000, 4000, 1234, seed); }
  SECTION("near side faster") { run_axil(4000, 10000, 777, seed); }
  SECTION("drifting") { run_axil(8000, 8013, 100, seed); }
}
