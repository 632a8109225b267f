#include "sim/sim_device.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <sstream>
#include <type_traits>

#include <verilated.h>

#include "Vsgpu_top.h"
#include "Vsgpu_top_fast.h"
#include "Vsgpu_top_fast___024root.h"
#include "common/axi_lite_master.hpp"
#include "common/axi_memory_agent.hpp"
#include "common/bench.hpp"

namespace sgpu::sim {
namespace {

tb::AxiMemoryModel::Config memory_config(const SimConfig& c) {
  tb::AxiMemoryModel::Config m;
  m.read_latency = c.read_latency;
  m.write_latency = c.write_latency;
  m.ar_ready_prob = c.memory_ready_prob;
  m.r_valid_prob = c.memory_ready_prob;
  m.aw_ready_prob = c.memory_ready_prob;
  m.w_ready_prob = c.memory_ready_prob;
  m.seed = c.seed;
  return m;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

}  // namespace

std::string_view to_string(SimModel model) { return model == SimModel::Fast ? "fast" : "checked"; }

SimModel model_for(const SimConfig& config) {
  return tb::requested_fst(config.fst_path).empty() ? config.model : SimModel::Checked;
}

// The board around one model configuration. The clock loops (step, run_until_irq, a register
// access) are inside, one virtual call per loop rather than per cycle.
struct SimDevice::Impl {
  explicit Impl(SimConfig c) : config(std::move(c)) {}
  virtual ~Impl() = default;
  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;

  virtual void reset() = 0;
  virtual std::uint32_t read(std::uint32_t offset) = 0;
  virtual void write(std::uint32_t offset, std::uint32_t value) = 0;
  virtual bool irq() const = 0;
  virtual void step(std::uint64_t cycles) = 0;
  virtual bool run_until_irq(std::uint64_t max_cycles) = 0;
  virtual std::uint64_t cycle() const = 0;
  virtual std::uint64_t skipped_cycles() const = 0;
  virtual tb::AxiMemoryModel& memory_port() = 0;

  SimConfig config;
  tb::HostMemory memory;
};

namespace {

template <class V>
struct Board final : SimDevice::Impl {
  explicit Board(SimConfig c)
      : Impl(std::move(c)),
        bench({"sgpu_top", 2, config.seed, config.fst_path}),
        port(bench.dut(), memory, memory_config(config), {config.check_axi, "axi"}),
        lite(bench.dut()) {
    bench.add(port);
    bench.add(lite);
    if constexpr (std::is_same_v<V, Vsgpu_top_fast>) {
      if (config.idle_skip != IdleSkip::Off) skipper = std::make_unique<FastIdleSkip>(bench.dut());
    }
  }

  tb::Bench<V> bench;
  tb::AxiMemoryAgent<V> port;
  tb::AxiLiteMaster<V> lite;
  std::unique_ptr<FastIdleSkip> skipper;  // null: every cycle simulated
  std::uint64_t skipped = 0;
  std::uint64_t retry_at = 0;  // no skip is tried before this cycle
  std::uint64_t backoff = kMinBackoff;

  // The shortest skip taken. A skip costs a state copy and compare (≈ 1 k instructions) and one
  // combinational evaluation (≈ 7 k); a cycle ≈ 11 k: even one skipped cycle pays (the demo
  // measured 9.96 G instructions at 2, 10.16 G at 4, 10.27 G at 8).
  static constexpr std::uint64_t kMinSkip = 1;
  // After a failed try, the next waits this long, doubling up to the maximum while tries fail.
  static constexpr std::uint64_t kMinBackoff = 1;
  static constexpr std::uint64_t kMaxBackoff = 64;

  // A real falling edge of the asynchronous reset, so every flop is reset before the first clock.
  void reset() override { bench.reset(tb::kDeviceResetCycles, 1, /*with_agents=*/true); }

  std::uint32_t read(std::uint32_t offset) override {
    lite.start_read(offset);
    return access(offset);
  }
  void write(std::uint32_t offset, std::uint32_t value) override {
    lite.start_write(offset, value);
    access(offset);
  }
  bool irq() const override { return bench.dut().irq_o; }
  void step(std::uint64_t cycles) override {
    for (std::uint64_t done = 0; done < cycles;) done += advance(cycles - done);
  }
  bool run_until_irq(std::uint64_t max_cycles) override {
    const auto& top = bench.dut();
    for (std::uint64_t done = 0; done < max_cycles && !top.irq_o;) done += advance(max_cycles - done);
    return top.irq_o;
  }
  std::uint64_t cycle() const override { return bench.cycle(); }
  std::uint64_t skipped_cycles() const override { return skipped; }
  tb::AxiMemoryModel& memory_port() override { return port.model(); }

  void tick() {
    bench.tick();
    if (!port.checker().ok()) {
      throw SimError("AXI protocol violation on the host-memory port: " + port.checker().violations().front());
    }
  }

  // At most `limit` (>= 1) cycles: one simulated, plus an idle stretch after it if the skipper
  // proves one (tb/sim/idle_skip.hpp). The cycles that passed.
  std::uint64_t advance(std::uint64_t limit) {
    // Inputs that change on their own rule a skip out: a register access, an AXI valid of either
    // side but a write stream's W, a response falling due (the port's quiet or write-stream
    // cycles).
    if (!skipper || limit <= kMinSkip || lite.busy() || bench.cycle() < retry_at ||
        std::max(port.quiet_cycles(), port.write_stream_cycles()) < kMinSkip) {
      tick();
      return 1;
    }
    skipper->before_tick();
    tick();
    // Idle (nothing on the bus) or a write stream (the DUT offers the same W beat every cycle and
    // the memory takes it): the port's side of those cycles is skipped or replayed.
    const std::uint64_t quiet = port.quiet_cycles();
    const bool streaming = quiet == 0;
    const std::uint64_t n = std::min({skipper->window(), streaming ? port.write_stream_cycles() : quiet, limit - 1});
    if (n < kMinSkip) {
      retry_at = bench.cycle() + backoff;
      backoff = std::min(2 * backoff, kMaxBackoff);
      return 1;
    }
    backoff = kMinBackoff;
    if (config.idle_skip == IdleSkip::Verify) {
      verify_skip(n);
    } else {
      skipper->skip(n);
      bench.skip(n);
      if (streaming) {
        port.replay(n);
      } else {
        port.skip(n);
      }
    }
    skipped += n;
    return 1 + n;
  }

  // IdleSkip::Verify: the skip's state, then the same cycles simulated one by one from where it
  // started; the model's whole state must agree.
  void verify_skip(std::uint64_t n) {
    const std::uint64_t at = bench.cycle();
    const auto start = skipper->state();
    skipper->skip(n);
    const auto skipped_state = skipper->state();
    skipper->restore(start);
    for (std::uint64_t i = 0; i < n; ++i) tick();
    if (const auto diff = skipper->first_difference(skipped_state); diff != FastIdleSkip::npos) {
      throw SimError("idle skip of " + std::to_string(n) + " cycles from cycle " + std::to_string(at) +
                     " differs from cycle-by-cycle simulation (model state byte " + std::to_string(diff) + ")");
    }
  }

  // One register access: the clock runs until its response; a response that never comes or a
  // slave error is the simulated hardware's failure.
  std::uint32_t access(std::uint32_t offset) {
    constexpr std::uint64_t kMmioTimeoutCycles = tb::AxiLiteMaster<V>::kTimeoutCycles;
    const bool write = lite.write();
    for (std::uint64_t n = 0; !lite.done(); ++n) {
      if (n == kMmioTimeoutCycles) {
        lite.idle();
        throw SimError("MMIO " + std::string(write ? "write" : "read") + " at " + hex(offset) +
                       " got no response within " + std::to_string(kMmioTimeoutCycles) + " cycles");
      }
      tick();
    }
    if (lite.resp() != 0) {
      throw SimError("MMIO " + std::string(write ? "write" : "read") + " at " + hex(offset) +
                     " answered with AXI response " + std::to_string(lite.resp()) + " (no register there)");
    }
    return lite.rdata();
  }
};

// The fast model runs one eval() per cycle (Bench::set_one_eval_per_cycle): every output of
// sgpu_top is a flop's (its input-combinational region assigns no output port; the demo's cycle
// count and frame are those of the two-eval schedule, checked by host.demo and test_sim_device).
// Verilator 5.006 detects the rising edge against `__Vtrigrprev__TOP__clk_i`, the level at the
// last eval; another Verilator names it differently and this stops compiling, not silently
// misbehaving.
void rearm_clock(Vsgpu_top_fast& top) { top.rootp->__Vtrigrprev__TOP__clk_i = 0; }

}  // namespace
}  // namespace sgpu::sim

// Verilator 5.006's regions of the fast model (generated code; declared only in its
// Vsgpu_top_fast.cpp). Another Verilator that renames them stops this from linking.
void Vsgpu_top_fast___024root___eval_triggers__act(Vsgpu_top_fast___024root* vlSelf);
void Vsgpu_top_fast___024root___eval_act(Vsgpu_top_fast___024root* vlSelf);
void Vsgpu_top_fast___024root___eval_nba(Vsgpu_top_fast___024root* vlSelf);

namespace sgpu::sim {
namespace {

// The rising edge of the fast model without its input-combinational region when no input
// changed since the last evaluation. Verilator 5.006's eval() runs that region (every process
// that reads an input) on every call, whether or not an input changed; a process that also reads
// a register is in the NBA region as well, so after the last edge its values are current, and
// with the same inputs the region would compute them again. What follows is the generated eval()
// from its active region on (Vsgpu_top_fast___024root___eval).
class FastEdgeEval {
 public:
  void operator()(Vsgpu_top_fast& top) {
    const Inputs now = inputs(top);
    if (!valid_ || !(now == last_)) {
      last_ = now;
      valid_ = true;
      top.eval();
      return;
    }
    edge_regions(top.rootp);
  }

 private:
  // Every input port but the clock (1 at each edge in the one-eval schedule), compared as bytes.
  struct Inputs {
    std::uint64_t m_axi_rdata;
    std::uint32_t s_axil_wdata;
    std::uint16_t s_axil_awaddr, s_axil_araddr;
    std::uint8_t bits[24];  // 40 bytes: no padding
    bool operator==(const Inputs& o) const { return std::memcmp(this, &o, sizeof *this) == 0; }
  };
  static Inputs inputs(const Vsgpu_top_fast& t) {
    Inputs in{};
    in.m_axi_rdata = t.m_axi_rdata;
    in.s_axil_wdata = t.s_axil_wdata;
    in.s_axil_awaddr = t.s_axil_awaddr;
    in.s_axil_araddr = t.s_axil_araddr;
    const std::uint8_t bits[] = {t.rst_ni,         t.s_axil_awvalid, t.s_axil_awprot, t.s_axil_wvalid,
                                 t.s_axil_wstrb,   t.s_axil_bready,  t.s_axil_arvalid, t.s_axil_arprot,
                                 t.s_axil_rready,  t.m_axi_arready,  t.m_axi_rvalid,  t.m_axi_rid,
                                 t.m_axi_rresp,    t.m_axi_rlast,    t.m_axi_awready, t.m_axi_wready,
                                 t.m_axi_bvalid,   t.m_axi_bid,      t.m_axi_bresp};
    static_assert(sizeof bits <= sizeof in.bits);
    std::memcpy(in.bits, bits, sizeof bits);
    return in;
  }
  static void edge_regions(Vsgpu_top_fast___024root* r) {
    constexpr unsigned kConverge = 100;  // as the generated code's 0x64
    unsigned nba_iterations = 0;
    for (bool nba_again = true; nba_again;) {
      nba_again = false;
      r->__VnbaTriggered.clear();
      r->__VactIterCount = 0;
      r->__VactContinue = 1;
      while (r->__VactContinue) {
        r->__VactContinue = 0;
        Vsgpu_top_fast___024root___eval_triggers__act(r);
        if (r->__VactTriggered.any()) {
          r->__VactContinue = 1;
          if (r->__VactIterCount > kConverge) throw SimError("the fast model's active region did not converge");
          ++r->__VactIterCount;
          r->__VnbaTriggered.set(r->__VactTriggered);
          Vsgpu_top_fast___024root___eval_act(r);
        }
      }
      if (r->__VnbaTriggered.any()) {
        nba_again = true;
        if (nba_iterations++ > kConverge) throw SimError("the fast model's NBA region did not converge");
        Vsgpu_top_fast___024root___eval_nba(r);
      }
    }
  }

  Inputs last_{};
  bool valid_ = false;
};

std::unique_ptr<SimDevice::Impl> make_board(SimConfig config) {
  if (model_for(config) == SimModel::Fast) {
    auto board = std::make_unique<Board<Vsgpu_top_fast>>(std::move(config));
    board->bench.set_one_eval_per_cycle(&rearm_clock);
    board->bench.set_edge_eval(FastEdgeEval{});
    return board;
  }
  return std::make_unique<Board<Vsgpu_top>>(std::move(config));
}

}  // namespace

SimDevice::SimDevice(SimConfig config) : impl_(make_board(std::move(config))) { impl_->reset(); }

SimDevice::~SimDevice() = default;

std::uint32_t SimDevice::mmio_read32(std::uint32_t offset) { return impl_->read(offset); }

void SimDevice::mmio_write32(std::uint32_t offset, std::uint32_t value) { impl_->write(offset, value); }

tb::HostMemory& SimDevice::memory() { return impl_->memory; }

bool SimDevice::irq() const { return impl_->irq(); }

void SimDevice::step(std::uint64_t cycles) { impl_->step(cycles); }

bool SimDevice::run_until_irq(std::uint64_t max_cycles) { return impl_->run_until_irq(max_cycles); }

std::uint64_t SimDevice::cycle() const { return impl_->cycle(); }

std::uint64_t SimDevice::skipped_cycles() const { return impl_->skipped_cycles(); }

const SimConfig& SimDevice::config() const { return impl_->config; }

SimModel SimDevice::model() const { return model_for(impl_->config); }

const tb::AxiMemoryModel& SimDevice::memory_port() const { return impl_->memory_port(); }

tb::AxiMemoryModel& SimDevice::memory_port() { return impl_->memory_port(); }

}  // namespace sgpu::sim
