#include "board/s7_board.hpp"

#include <cmath>
#include <cstring>
#include <type_traits>

#include <verilated.h>

#include "Vsgpu_s7_shell.h"
#include "common/bench.hpp"  // Trace (the boards run two clocks, so their own loop)

namespace sgpu::board {
namespace {

template <class Port, class Value>
void set_port(Port& port, Value value) {
  port = static_cast<Port>(value);
}

std::uint64_t period_ps(double hz) {
  if (hz <= 0) throw std::invalid_argument("clock frequency must be positive");
  return static_cast<std::uint64_t>(std::llround(1e12 / hz));
}

}  // namespace

struct S7Board::Impl {
  explicit Impl(S7BoardConfig c)
      : config(std::move(c)),
        cfg(config.ids, config.bar0_bytes, LinkCaps{config.rc.lanes, config.rc.gen, 512}),
        rc(memory, cfg, config.rc),
        context(std::make_unique<VerilatedContext>()),
        user_half(period_ps(config.user_clock_hz) / 2),
        core_half(period_ps(config.core_clock_hz) / 2) {}

  S7BoardConfig config;
  tb::HostMemory memory;
  ConfigSpace cfg;
  S7RootComplex rc;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vsgpu_s7_shell> top;
  std::unique_ptr<tb::Trace<Vsgpu_s7_shell>> trace;

  std::uint64_t user_half, core_half;
  std::uint64_t user_next = 0, core_next = 0;  // time of each clock's next edge
  std::uint64_t now_ps = 0;
  std::uint64_t user_cycles = 0, core_cycles = 0;
  std::uint64_t reg_writes = 0, posted_writes = 0;

  void drive(const HardBlockToShell& o) {
    auto& t = *top;
    set_port(t.user_reset_i, o.user_reset);
    set_port(t.user_lnk_up_i, o.link_up);
    set_port(t.m_axis_rx_tvalid, o.rx_valid);
    for (unsigned i = 0; i < 4; ++i) t.m_axis_rx_tdata[i] = o.rx_data[i];
    set_port(t.m_axis_rx_tkeep, o.rx_keep);
    set_port(t.m_axis_rx_tlast, o.rx_last);
    set_port(t.m_axis_rx_tuser, o.rx_user);
    set_port(t.s_axis_tx_tready, o.tx_ready);
    set_port(t.cfg_interrupt_rdy, o.interrupt_rdy);
    set_port(t.cfg_interrupt_msienable, o.msi_enable);
    set_port(t.cfg_command, o.command);
    set_port(t.cfg_dcommand, o.dcommand);
    set_port(t.cfg_bus_number, o.bus);
    set_port(t.cfg_device_number, o.device);
    set_port(t.cfg_function_number, o.function);
  }

  ShellToHardBlock sample() const {
    const auto& t = *top;
    ShellToHardBlock s;
    s.tx_valid = t.s_axis_tx_tvalid;
    for (unsigned i = 0; i < 4; ++i) s.tx_data[i] = t.s_axis_tx_tdata[i];
    s.tx_keep = t.s_axis_tx_tkeep;
    s.tx_last = t.s_axis_tx_tlast;
    s.rx_ready = t.m_axis_rx_tready;
    s.interrupt = t.cfg_interrupt;
    s.interrupt_assert = t.cfg_interrupt_assert;
    s.interrupt_di = t.cfg_interrupt_di;
    return s;
  }

  /// Advances to the next clock edge (either clock, or both).
  void step() {
    const std::uint64_t t = std::min(user_next, core_next);
    const bool user_edge = user_next == t;
    const bool core_edge = core_next == t;
    now_ps = t;
    auto& top_ = *top;
    const bool user_rising = user_edge && !top_.user_clk_i;
    ShellToHardBlock sampled;
    if (user_rising) {
      // Settle the inputs driven after the last edge, then sample what the shell drives.
      top_.eval();
      sampled = sample();
      if (top_.reg_write_o) ++reg_writes;
    }
    if (user_edge) {
      top_.user_clk_i = !top_.user_clk_i;
      user_next += user_half;
    }
    if (core_edge) {
      top_.core_clk_i = !top_.core_clk_i;
      if (top_.core_clk_i) ++core_cycles;
      core_next += core_half;
    }
    top_.eval();
    trace->dump(t);
    if (user_rising) {
      ++user_cycles;
      rc.tick(sampled, t);
      drive(rc.outputs());
    }
  }

  void run_until_ps(std::uint64_t t) {
    while (std::min(user_next, core_next) <= t) step();
  }

  void run_user_cycles(std::uint64_t n) {
    const std::uint64_t target = user_cycles + n;
    while (user_cycles < target) step();
  }
};

S7Board::S7Board(S7BoardConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  auto& d = *impl_;
  d.context->randReset(2);
  d.context->randSeed(static_cast<int>(d.config.seed & 0x7fffffff));
  d.context->assertOn(true);
  d.top = std::make_unique<Vsgpu_s7_shell>(d.context.get(), "sgpu_s7_shell");
  d.trace = std::make_unique<tb::Trace<Vsgpu_s7_shell>>(*d.top, d.config.fst_path);
  d.core_next = static_cast<std::uint64_t>(d.config.core_phase * 2.0 * static_cast<double>(d.core_half)) + 1;
  d.user_next = d.user_half;

  // Power-up: the core clock's MMCM is not locked, the link trains (user_reset high). The
  // flops start random (Verilator), and an asynchronous reset acts on its edge in simulation
  // (in the FPGA it is a level): make a real falling edge so every reset flop is reset. The
  // reset synchronisers' outputs must be high first, or a random 0 there never falls and the
  // flops behind stay random: clock them out of reset (models idle, assertions off) before.
  d.top->user_clk_i = 0;
  d.top->core_clk_i = 0;
  d.drive(d.rc.outputs());
  d.top->user_reset_i = 0;
  d.top->core_rst_ni = 1;
  d.context->assertOn(false);
  for (int i = 0; i < 16; ++i) {
    d.top->user_clk_i = !d.top->user_clk_i;
    d.top->core_clk_i = !d.top->core_clk_i;
    d.top->eval();
  }
  d.context->assertOn(true);
  d.top->core_rst_ni = 0;
  d.drive(d.rc.outputs());
  d.top->eval();
  d.run_user_cycles(8);
  d.top->core_rst_ni = 1;
  d.run_user_cycles(d.config.link_training_cycles);
  d.rc.set_link_up(true);
  d.drive(d.rc.outputs());
  d.run_user_cycles(16);  // reset synchronisers release
  d.reg_writes = 0;       // before reset, the flops (and the pulse) were random
}

S7Board::~S7Board() {
  impl_->trace.reset();
  impl_->top->final();
}

std::uint32_t S7Board::config_read32(std::uint16_t offset) { return impl_->cfg.read32(offset); }

void S7Board::config_write32(std::uint16_t offset, std::uint32_t value) {
  impl_->cfg.write32(offset, value);
}

std::vector<std::uint8_t> S7Board::bar0_read(std::uint32_t offset, std::uint16_t dwords, std::uint8_t first_be,
                                             std::uint8_t last_be) {
  auto& d = *impl_;
  const std::uint8_t tag = d.rc.host_read(std::uint64_t{d.cfg.bar0_base()} + offset, dwords, first_be, last_be);
  const std::uint64_t deadline = d.now_ps + static_cast<std::uint64_t>(d.config.mmio_timeout_ns * 1000);
  for (;;) {
    if (auto data = d.rc.take_host_read(tag)) return *data;
    if (d.now_ps > deadline)
      throw BoardError("BAR0 read at offset " + std::to_string(offset) + " got no completion within " +
                       std::to_string(static_cast<long long>(d.config.mmio_timeout_ns)) + " ns");
    d.step();
  }
}

std::uint32_t S7Board::bar0_read32(std::uint32_t offset) {
  const auto b = bar0_read(offset, 1);
  std::uint32_t v;
  std::memcpy(&v, b.data(), 4);
  return v;
}

void S7Board::bar0_write32(std::uint32_t offset, std::uint32_t value) { bar0_write(offset, &value, 4); }

void S7Board::bar0_write(std::uint32_t offset, const void* data, std::size_t bytes) {
  auto& d = *impl_;
  check_bar0_write(offset, bytes);
  const std::uint32_t first_dw = offset & ~3u;
  const std::uint32_t end = offset + static_cast<std::uint32_t>(bytes);
  const std::uint32_t dws = (((end + 3) & ~3u) - first_dw) / 4;
  std::vector<std::uint8_t> payload(4 * dws, 0);
  std::memcpy(payload.data() + (offset - first_dw), data, bytes);
  std::uint8_t fbe = 0, lbe = 0;
  for (std::uint32_t a = offset; a < end; ++a) {
    const std::uint32_t dw = (a - first_dw) / 4;
    if (dw == 0) fbe |= static_cast<std::uint8_t>(1u << (a & 3));
    if (dw == dws - 1 && dws > 1) lbe |= static_cast<std::uint8_t>(1u << (a & 3));
  }
  d.rc.host_write(std::uint64_t{d.cfg.bar0_base()} + first_dw, payload, fbe, lbe);
  d.posted_writes += dws;
}

void S7Board::drain() {
  auto& d = *impl_;
  const std::uint64_t deadline = d.now_ps + static_cast<std::uint64_t>(d.config.mmio_timeout_ns * 1000);
  while (!(d.rc.idle() && d.reg_writes >= d.posted_writes)) {
    if (d.now_ps > deadline) throw BoardError("posted BAR0 writes did not reach the registers");
    d.step();
  }
}

tb::HostMemory& S7Board::host_memory() { return impl_->memory; }

std::uint64_t S7Board::msi_count() const { return impl_->rc.stats().msis; }

bool S7Board::wait_msi(std::uint64_t seen, std::chrono::nanoseconds timeout) {
  auto& d = *impl_;
  const std::uint64_t deadline = d.now_ps + static_cast<std::uint64_t>(timeout.count()) * 1000;
  while (d.rc.stats().msis <= seen) {
    if (std::min(d.user_next, d.core_next) > deadline) return false;
    d.step();
  }
  return true;
}

void S7Board::run_for(std::chrono::nanoseconds t) {
  impl_->run_until_ps(impl_->now_ps + static_cast<std::uint64_t>(t.count()) * 1000);
}

std::chrono::nanoseconds S7Board::now() const { return std::chrono::nanoseconds(impl_->now_ps / 1000); }

std::uint64_t S7Board::core_cycles() const { return impl_->core_cycles; }

double S7Board::core_clock_hz() const { return impl_->config.core_clock_hz; }

std::string S7Board::describe() const {
  const auto& c = impl_->config;
  return "7-series shell (LitePCIe transaction layer, 128-bit), Gen" + std::to_string(c.rc.gen) + " x" +
         std::to_string(c.rc.lanes) + ", user clock " + std::to_string(static_cast<int>(c.user_clock_hz / 1e6)) +
         " MHz, core clock " + std::to_string(static_cast<int>(c.core_clock_hz / 1e6)) + " MHz";
}

S7RootComplex& S7Board::root_complex() { return impl_->rc; }

std::uint64_t S7Board::user_cycles() const { return impl_->user_cycles; }

std::uint64_t S7Board::register_writes() const { return impl_->reg_writes; }

bool S7Board::irq() const { return impl_->top->irq_o; }

const S7BoardConfig& S7Board::config() const { return impl_->config; }

}  // namespace sgpu::board
