#include "board/usp_board.hpp"

#include <cmath>
#include <cstring>
#include <deque>
#include <optional>

#include <verilated.h>

#include "Vsgpu_usp_shell.h"
#include "board/s7_root_complex.hpp"  // BoardError
#include "common/axi_checker.hpp"
#include "common/axi_verilator.hpp"
#include "common/bench.hpp"  // Trace (the boards run two clocks, so their own loop)

namespace sgpu::board {
namespace {

constexpr unsigned kBytes = 32;  // the 256-bit AXI bus

std::uint64_t period_ps(double hz) {
  if (hz <= 0) throw std::invalid_argument("clock frequency must be positive");
  return static_cast<std::uint64_t>(std::llround(1e12 / hz));
}

using tb::detail::set_port;

// The shell's s_axib manager port, bound like axi_verilator.hpp binds m_axi_*.
template <class V>
void sample_host_port(const V& t, tb::AxiManagerOut& o) {
  o.arvalid = t.s_axib_arvalid;
  o.arid = t.s_axib_arid;
  o.araddr = t.s_axib_araddr;
  o.arlen = t.s_axib_arlen;
  o.arsize = t.s_axib_arsize;
  o.arburst = t.s_axib_arburst;
  o.rready = t.s_axib_rready;
  o.awvalid = t.s_axib_awvalid;
  o.awid = t.s_axib_awid;
  o.awaddr = t.s_axib_awaddr;
  o.awlen = t.s_axib_awlen;
  o.awsize = t.s_axib_awsize;
  o.awburst = t.s_axib_awburst;
  o.wvalid = t.s_axib_wvalid;
  o.wdata.fill(0);
  tb::detail::bus_to_bytes(t.s_axib_wdata, o.wdata.data(), o.wdata.size());
  o.wstrb = t.s_axib_wstrb;
  o.wlast = t.s_axib_wlast;
  o.bready = t.s_axib_bready;
}

template <class V>
void drive_host_port(V& t, const tb::AxiSubordinateOut& in) {
  set_port(t.s_axib_arready, in.arready);
  set_port(t.s_axib_rvalid, in.rvalid);
  set_port(t.s_axib_rid, in.rid);
  tb::detail::bytes_to_bus(in.rdata.data(), in.rdata.size(), t.s_axib_rdata);
  set_port(t.s_axib_rresp, in.rresp);
  set_port(t.s_axib_rlast, in.rlast);
  set_port(t.s_axib_awready, in.awready);
  set_port(t.s_axib_wready, in.wready);
  set_port(t.s_axib_bvalid, in.bvalid);
  set_port(t.s_axib_bid, in.bid);
  set_port(t.s_axib_bresp, in.bresp);
}

}  // namespace

struct UspBoard::Impl {
  // A host access of BAR0 as XDMA's m_axib presents it.
  struct BarAccess {
    bool write = false;
    std::uint32_t offset = 0;
    std::uint32_t data = 0;
    std::uint8_t be = 0xf;
    std::uint64_t due_ps = 0;  // when it reaches m_axib
    std::uint64_t id = 0;
  };
  // What the shell drives on m_axib and usr_irq_req, sampled before a rising edge.
  struct ShellSample {
    bool awready, wready, bvalid, arready, rvalid, rlast, irq_req;
    std::uint8_t bresp, rresp;
    std::uint32_t rdata[8];
  };
  struct WriteBurst {
    std::uint64_t base;
    bool started = false;
    std::uint64_t next = 0;
  };

  explicit Impl(UspBoardConfig c)
      : config(std::move(c)),
        cfg(config.ids, config.bar0_bytes, LinkCaps{config.lanes, config.gen, 512}),
        memory_model(memory, memory_config(config)),
        checker(kBytes, "s_axib"),
        context(std::make_unique<VerilatedContext>()),
        axi_half(period_ps(config.axi_clock_hz) / 2),
        core_half(period_ps(config.core_clock_hz) / 2) {
    cfg.set_link(config.lanes, config.gen);
  }

  static tb::AxiMemoryModel::Config memory_config(const UspBoardConfig& c) {
    tb::AxiMemoryModel::Config m;
    m.data_bytes = kBytes;
    m.read_latency = static_cast<unsigned>(std::llround(c.read_latency_ns * c.axi_clock_hz / 1e9));
    m.write_latency = 8;
    m.max_reads_in_flight = c.max_reads;
    m.seed = c.seed;
    return m;
  }

  UspBoardConfig config;
  tb::HostMemory memory;
  ConfigSpace cfg;
  tb::AxiMemoryModel memory_model;
  tb::AxiChecker checker;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vsgpu_usp_shell> top;
  std::unique_ptr<tb::Trace<Vsgpu_usp_shell>> trace;

  std::uint64_t axi_half, core_half;
  std::uint64_t axi_next = 0, core_next = 0, now_ps = 0;
  std::uint64_t axi_cycles = 0, core_cycles = 0, reg_writes = 0;
  UspBridgeStats stats;

  // s_axib bookkeeping.
  std::uint64_t writes_in_flight = 0;
  std::deque<WriteBurst> w_bursts;  // AW accepted, data not complete
  bool errors_injected = false;
  bool checking = false;  // AXI rules apply out of reset

  // m_axib (BAR) side.
  std::deque<BarAccess> bar_queue;
  std::optional<BarAccess> bar_cur;
  bool ar_done = false, aw_done = false, w_done = false;
  std::uint64_t next_access_id = 1;
  std::deque<std::pair<std::uint64_t, std::pair<std::uint64_t, std::uint32_t>>> read_results;  // (ready ps, (id, data))
  std::optional<std::pair<std::uint64_t, std::uint32_t>> last_read;  // (id, data) delivered

  // MSI.
  bool irq_req_prev = false, msi_pending = false, ack_now = false;
  std::uint64_t ack_due = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw BoardError("XDMA bridge model at " + std::to_string(now_ps / 1000) + " ns: " + what);
  }

  void check_contiguous(const tb::AxiManagerOut& m) {
    if (w_bursts.empty()) fail("write data before its address (W without AW)");
    WriteBurst& b = w_bursts.front();
    for (unsigned i = 0; i < kBytes; ++i) {
      if (!(m.wstrb >> i & 1)) continue;
      const std::uint64_t a = b.base + i;
      if (b.started && a != b.next)
        fail("write strobes with a hole inside one burst (XDMA's bridge needs contiguous strobes): byte " +
             std::to_string(a) + " after " + std::to_string(b.next - 1));
      b.started = true;
      b.next = a + 1;
    }
    b.base += kBytes;
    if (m.wlast) w_bursts.pop_front();
  }

  // One rising edge of axi_aclk: the XDMA side of every port.
  static ShellSample sample_shell(const Vsgpu_usp_shell& v) {
    ShellSample s{};
    s.awready = v.m_axib_awready;
    s.wready = v.m_axib_wready;
    s.bvalid = v.m_axib_bvalid;
    s.bresp = v.m_axib_bresp;
    s.arready = v.m_axib_arready;
    s.rvalid = v.m_axib_rvalid;
    s.rresp = v.m_axib_rresp;
    s.rlast = v.m_axib_rlast;
    for (unsigned i = 0; i < 8; ++i) s.rdata[i] = v.m_axib_rdata[i];
    s.irq_req = v.usr_irq_req & 1;
    return s;
  }

  void tick_bridge(const tb::AxiManagerOut& host, const ShellSample& sh, std::uint64_t t) {
    auto& v = *top;
    // ---- s_axib: the core's host-memory traffic.
    const bool bme = cfg.bus_master();
    if (!bme && !errors_injected) {
      memory_model.inject_error(0, ~std::uint64_t{0}, tb::kAxiRespDecErr);
      errors_injected = true;
    } else if (bme && errors_injected) {
      memory_model.clear_errors();
      errors_injected = false;
    }
    // At the write limit the model's AW channel is closed: the shell sees awready low and the
    // memory model does not see the address.
    const bool write_limit = writes_in_flight >= config.max_writes;
    tb::AxiSubordinateOut out = memory_model.outputs();
    if (write_limit) out.awready = false;
    if (checking) checker.tick(host, out);
    if (!checker.ok()) fail("AXI protocol violation on s_axib: " + checker.violations().front());
    if (host.awvalid && out.awready) {
      w_bursts.push_back({host.awaddr & ~std::uint64_t{kBytes - 1}});
      ++writes_in_flight;
      ++stats.write_bursts;
      stats.max_writes_in_flight = std::max(stats.max_writes_in_flight, writes_in_flight);
    }
    if (host.wvalid && out.wready) check_contiguous(host);
    if (host.bready && out.bvalid) --writes_in_flight;
    if (host.arvalid && out.arready) ++stats.read_bursts;
    tb::AxiManagerOut to_model = host;
    if (write_limit) to_model.awvalid = false;
    memory_model.tick(to_model);
    stats.max_reads_in_flight = std::max(stats.max_reads_in_flight, memory_model.stats().max_reads_in_flight);
    tb::AxiSubordinateOut next = memory_model.outputs();
    if (writes_in_flight >= config.max_writes) next.awready = false;
    drive_host_port(v, next);

    // ---- m_axib: BAR0 accesses, one at a time, in order.
    if (bar_cur) {
      BarAccess& a = *bar_cur;
      if (a.write) {
        if (v.m_axib_awvalid && sh.awready) aw_done = true;
        if (v.m_axib_wvalid && sh.wready) w_done = true;
        if (sh.bvalid && v.m_axib_bready) {
          if (sh.bresp != 0) fail("BAR0 write answered with AXI response " + std::to_string(sh.bresp));
          bar_cur.reset();
        }
      } else {
        if (v.m_axib_arvalid && sh.arready) ar_done = true;
        if (sh.rvalid && v.m_axib_rready) {
          if (!sh.rlast) fail("BAR0 read of one beat without rlast");
          const unsigned lane = (a.offset % kBytes) / 4;
          const std::uint32_t data = sh.rresp == 0 ? sh.rdata[lane] : 0xffffffffu;
          read_results.push_back({t + static_cast<std::uint64_t>(config.mmio_latency_ns * 1000), {a.id, data}});
          bar_cur.reset();
        }
      }
    }
    if (!bar_cur && !bar_queue.empty() && bar_queue.front().due_ps <= t) {
      bar_cur = bar_queue.front();
      bar_queue.pop_front();
      ar_done = aw_done = w_done = false;
    }
    set_port(v.m_axib_awvalid, bar_cur && bar_cur->write && !aw_done);
    set_port(v.m_axib_wvalid, bar_cur && bar_cur->write && !w_done);
    set_port(v.m_axib_arvalid, bar_cur && !bar_cur->write && !ar_done);
    set_port(v.m_axib_bready, 1);
    set_port(v.m_axib_rready, 1);
    if (bar_cur) {
      const BarAccess& a = *bar_cur;
      const unsigned lane = (a.offset % kBytes) / 4;
      set_port(v.m_axib_awid, 0);
      set_port(v.m_axib_arid, 0);
      set_port(v.m_axib_awaddr, a.offset & ~3u);
      set_port(v.m_axib_araddr, a.offset & ~3u);
      set_port(v.m_axib_awlen, 0);
      set_port(v.m_axib_arlen, 0);
      set_port(v.m_axib_awsize, 2);
      set_port(v.m_axib_arsize, 2);
      set_port(v.m_axib_awburst, 1);
      set_port(v.m_axib_arburst, 1);
      for (unsigned i = 0; i < kBytes / 4; ++i) v.m_axib_wdata[i] = i == lane ? a.data : 0;
      set_port(v.m_axib_wstrb, std::uint64_t{a.be} << (4 * lane));
      set_port(v.m_axib_wlast, 1);
    }
    while (!read_results.empty() && read_results.front().first <= t) {
      last_read = read_results.front().second;
      read_results.pop_front();
    }

    // ---- MSI: one message per rising edge of usr_irq_req, acknowledged on usr_irq_ack.
    const bool req = sh.irq_req;
    if (ack_now) {
      if (!req) fail("usr_irq_req dropped before usr_irq_ack");
      ack_now = false;
      msi_pending = false;
      ++stats.msis;
    } else if (msi_pending && !req) {
      fail("usr_irq_req dropped before usr_irq_ack");
    } else if (req && !irq_req_prev && !msi_pending) {
      if (!cfg.msi_enabled() || !cfg.bus_master()) fail("interrupt requested while MSI or bus mastering is off");
      msi_pending = true;
      ack_due = t + static_cast<std::uint64_t>(config.msi_latency_ns * 1000);
    }
    irq_req_prev = req;
    set_port(v.usr_irq_ack, 0);
    if (msi_pending && !ack_now && t >= ack_due) {
      set_port(v.usr_irq_ack, 1);
      ack_now = true;
    }
    set_port(v.msi_enable, cfg.msi_enabled() && cfg.bus_master());
  }

  void step() {
    const std::uint64_t t = std::min(axi_next, core_next);
    const bool axi_edge = axi_next == t;
    const bool core_edge = core_next == t;
    now_ps = t;
    auto& v = *top;
    const bool axi_rising = axi_edge && !v.axi_aclk;
    tb::AxiManagerOut host{};
    ShellSample sh{};
    if (axi_rising) {
      v.eval();
      sample_host_port(v, host);
      sh = sample_shell(v);
      if (v.reg_write_o) ++reg_writes;
    }
    if (axi_edge) {
      v.axi_aclk = !v.axi_aclk;
      axi_next += axi_half;
    }
    if (core_edge) {
      v.core_clk_i = !v.core_clk_i;
      if (v.core_clk_i) ++core_cycles;
      core_next += core_half;
    }
    v.eval();
    trace->dump(t);
    if (axi_rising) {
      ++axi_cycles;
      tick_bridge(host, sh, t);
    }
  }

  void run_until_ps(std::uint64_t t) {
    while (std::min(axi_next, core_next) <= t) step();
  }
};

UspBoard::UspBoard(UspBoardConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  auto& d = *impl_;
  d.context->randReset(2);
  d.context->randSeed(static_cast<int>(d.config.seed & 0x7fffffff));
  d.context->assertOn(true);
  d.top = std::make_unique<Vsgpu_usp_shell>(d.context.get(), "sgpu_usp_shell");
  d.trace = std::make_unique<tb::Trace<Vsgpu_usp_shell>>(*d.top, d.config.fst_path);
  d.core_next = static_cast<std::uint64_t>(d.config.core_phase * 2.0 * static_cast<double>(d.core_half)) + 1;
  d.axi_next = d.axi_half;
  auto& v = *d.top;
  v.axi_aclk = 0;
  v.core_clk_i = 0;
  v.user_lnk_up = 0;
  v.m_axib_awvalid = v.m_axib_wvalid = v.m_axib_arvalid = 0;
  v.m_axib_bready = v.m_axib_rready = 0;
  v.usr_irq_ack = 0;
  v.msi_enable = 0;
  drive_host_port(v, tb::AxiSubordinateOut{});
  // A real falling edge of both reset sources (the flops start random), after clocking the
  // reset synchronisers' outputs high (see S7Board: a random 0 there would never fall).
  v.axi_aresetn = 1;
  v.core_rst_ni = 1;
  d.context->assertOn(false);
  for (int i = 0; i < 16; ++i) {
    v.axi_aclk = !v.axi_aclk;
    v.core_clk_i = !v.core_clk_i;
    v.eval();
  }
  d.context->assertOn(true);
  v.axi_aresetn = 0;
  v.core_rst_ni = 0;
  v.eval();
  for (int i = 0; i < 40; ++i) d.step();
  v.core_rst_ni = 1;
  v.axi_aresetn = 1;
  v.user_lnk_up = 1;
  for (int i = 0; i < 80; ++i) d.step();
  d.reg_writes = 0;
  d.checker.reset();
  d.checking = true;
}

UspBoard::~UspBoard() {
  impl_->trace.reset();
  impl_->top->final();
}

std::uint32_t UspBoard::config_read32(std::uint16_t offset) { return impl_->cfg.read32(offset); }
void UspBoard::config_write32(std::uint16_t offset, std::uint32_t value) { impl_->cfg.write32(offset, value); }

std::uint32_t UspBoard::bar0_read32(std::uint32_t offset) {
  auto& d = *impl_;
  if (!d.cfg.memory_enabled()) throw BoardError("BAR0 read while Memory Space Enable is off");
  const std::uint64_t id = d.next_access_id++;
  d.bar_queue.push_back({false, offset, 0, 0xf, d.now_ps + static_cast<std::uint64_t>(d.config.mmio_latency_ns * 1000), id});
  const std::uint64_t deadline = d.now_ps + static_cast<std::uint64_t>(d.config.mmio_timeout_ns * 1000);
  while (!(d.last_read && d.last_read->first == id)) {
    if (d.now_ps > deadline) throw BoardError("BAR0 read at offset " + std::to_string(offset) + " got no answer");
    d.step();
  }
  return d.last_read->second;
}

void UspBoard::bar0_write32(std::uint32_t offset, std::uint32_t value) {
  auto& d = *impl_;
  if (!d.cfg.memory_enabled()) throw BoardError("BAR0 write while Memory Space Enable is off");
  d.bar_queue.push_back({true, offset, value, 0xf, d.now_ps + static_cast<std::uint64_t>(d.config.mmio_latency_ns * 1000),
                         d.next_access_id++});
}

void UspBoard::bar0_write(std::uint32_t offset, const void* data, std::size_t bytes) {
  auto& d = *impl_;
  check_bar0_write(offset, bytes);
  // XDMA presents each dword of a store as a beat with its strobes (a two-dword store is split).
  std::uint32_t a = offset;
  const auto* p = static_cast<const std::uint8_t*>(data);
  while (a < offset + bytes) {
    const std::uint32_t dw = a & ~3u;
    std::uint32_t value = 0;
    std::uint8_t be = 0;
    for (; a < offset + bytes && (a & ~3u) == dw; ++a, ++p) {
      value |= std::uint32_t{*p} << (8 * (a & 3));
      be |= static_cast<std::uint8_t>(1u << (a & 3));
    }
    d.bar_queue.push_back({true, dw, value, be, d.now_ps + static_cast<std::uint64_t>(d.config.mmio_latency_ns * 1000),
                           d.next_access_id++});
  }
}

tb::HostMemory& UspBoard::host_memory() { return impl_->memory; }
std::uint64_t UspBoard::msi_count() const { return impl_->stats.msis; }

bool UspBoard::wait_msi(std::uint64_t seen, std::chrono::nanoseconds timeout) {
  auto& d = *impl_;
  const std::uint64_t deadline = d.now_ps + static_cast<std::uint64_t>(timeout.count()) * 1000;
  while (d.stats.msis <= seen) {
    if (std::min(d.axi_next, d.core_next) > deadline) return false;
    d.step();
  }
  return true;
}

void UspBoard::run_for(std::chrono::nanoseconds t) {
  impl_->run_until_ps(impl_->now_ps + static_cast<std::uint64_t>(t.count()) * 1000);
}
std::chrono::nanoseconds UspBoard::now() const { return std::chrono::nanoseconds(impl_->now_ps / 1000); }
std::uint64_t UspBoard::core_cycles() const { return impl_->core_cycles; }
double UspBoard::core_clock_hz() const { return impl_->config.core_clock_hz; }

std::string UspBoard::describe() const {
  const auto& c = impl_->config;
  return "UltraScale+ shell (XDMA AXI Bridge model, 256-bit), Gen" + std::to_string(c.gen) + " x" +
         std::to_string(c.lanes) + ", AXI clock " + std::to_string(static_cast<int>(c.axi_clock_hz / 1e6)) +
         " MHz, core clock " + std::to_string(static_cast<int>(c.core_clock_hz / 1e6)) + " MHz";
}

const UspBridgeStats& UspBoard::bridge_stats() const { return impl_->stats; }
tb::AxiMemoryModel& UspBoard::host_port() { return impl_->memory_model; }
std::uint64_t UspBoard::register_writes() const { return impl_->reg_writes; }
bool UspBoard::irq() const { return impl_->top->irq_o; }

}  // namespace sgpu::board
