// The one clock loop of every Verilator testbench: a Bench owns the Verilated model, its
// context and its waveform, and runs the cycle order below; the models around the DUT (AXI
// memory and protocol checker, translator, register master, a test's own scoreboard) plug in as
// Agents. Like OpenTitan's simulation controller with its extensions.
//
// One clock cycle, in this order (so bus models, checkers and the DUT agree on what a handshake
// is):
//
//   1. agents' drive():  each agent puts this cycle's outputs on the DUT's inputs; clk = 0; eval
//   2. agents' sample(): each agent reads the DUT's outputs (combinational, for the values driven
//                        in step 1) and decides what happens at the edge; checkers check here
//   3. clk = 1; eval                       -- the DUT's rising edge
//   4. agents' edge():   each agent's rising edge, on what it sampled in step 2
//
// Agents run in the order they were added, in every step. A handshake happened in a cycle iff
// valid and ready are both high in step 2; agents never look at the DUT after step 3.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "common/agent.hpp"
#include "common/test_seed.hpp"
#include "common/verilated_thread.hpp"

namespace sgpu::tb {

/// FST waveform of one Verilated model, written only when SGPU_FST=<path> is set (or a path is
/// given explicitly), so tests and benchmarks pay nothing by default. The file is closed when
/// the Trace is destroyed. Dump once per half cycle with the simulation time in ticks.
template <class V>
class Trace {
 public:
  /// `path`: empty = use $SGPU_FST; if that is unset too, tracing is off.
  explicit Trace(V& top, std::string path = {}) {
    if (path.empty()) {
      if (const char* env = std::getenv("SGPU_FST"); env != nullptr) path = env;
    }
    if (path.empty()) return;
    top.contextp()->traceEverOn(true);
    fst_ = std::make_unique<VerilatedFstC>();
    top.trace(fst_.get(), 99);
    fst_->open(path.c_str());
  }
  ~Trace() {
    if (fst_) fst_->close();
  }
  Trace(const Trace&) = delete;
  Trace& operator=(const Trace&) = delete;

  bool enabled() const { return fst_ != nullptr; }
  void dump(uint64_t time) {
    if (fst_) fst_->dump(time);
  }

 private:
  std::unique_ptr<VerilatedFstC> fst_;
};

/// Cycles of reset a device top gets at start-up (Bench::reset), wherever it is simulated.
inline constexpr unsigned kDeviceResetCycles = 8;

/// A Verilated model `V` (any top with clk_i and rst_ni) on a clock with its agents.
template <class V>
class Bench {
 public:
  struct Options {
    std::string name = "dut";
    /// Verilator's initial values of registers without reset: 2 = random (reset bugs show up),
    /// 0 = zero.
    int rand_reset = 2;
    uint64_t seed = 1;
    /// Waveform path; empty = $SGPU_FST, else none.
    std::string fst_path;
  };

  explicit Bench(Options options) : context_(std::make_unique<VerilatedContext>()) {
    context_->randReset(options.rand_reset);
    context_->randSeed(static_cast<int>(options.seed & 0x7fffffff));
    context_->assertOn(true);
    dut_ = std::make_unique<V>(context_.get(), options.name.c_str());
    trace_ = std::make_unique<Trace<V>>(*dut_, options.fst_path);
  }
  // Verilator (5.006) keeps a current context per thread and a last one per process, and parts
  // of its runtime use that one instead of the model's own: a model's scopes unregister from it
  // when the model is destroyed. With several benches in a process, tearing one down while
  // another's context is current (or one already freed) locks the wrong, possibly freed, mutex
  // and hangs. So a bench makes its context current whenever it hands control to Verilator, and
  // leaves no freed context current behind it.
  ~Bench() {
    make_current();
    trace_.reset();  // the waveform closes before the model goes
    dut_->final();
    dut_.reset();
    context_.reset();
    set_thread_context(nullptr);  // the next use falls back to Verilator's default context
  }
  Bench(const Bench&) = delete;
  Bench& operator=(const Bench&) = delete;

  V& dut() { return *dut_; }
  const V& dut() const { return *dut_; }
  /// Clock cycles run by tick() since construction.
  uint64_t cycle() const { return cycle_; }

  /// Adds an agent (owned by the caller; it must outlive the bench's use of it).
  void add(Agent& agent) { agents_.push_back(&agent); }

  /// One clock cycle in the documented order.
  void tick() {
    make_current();
    for (Agent* a : agents_) a->drive();
    dut_->clk_i = 0;
    dut_->eval();
    trace_->dump(2 * cycle_);
    for (Agent* a : agents_) a->sample();
    dut_->clk_i = 1;
    dut_->eval();
    trace_->dump(2 * cycle_ + 1);
    for (Agent* a : agents_) a->edge();
    ++cycle_;
  }

  void run(uint64_t cycles) {
    for (uint64_t i = 0; i < cycles; ++i) tick();
  }
  /// Ticks until done() holds (checked before each cycle) or `max_cycles` passed; done()'s
  /// last value.
  template <class Done>
  bool run_until(Done done, uint64_t max_cycles) {
    for (uint64_t i = 0; i < max_cycles; ++i) {
      if (done()) return true;
      tick();
    }
    return done();
  }

  /// A real falling edge of the asynchronous reset (every register is reset before the first
  /// clock), then `cycles` cycles with reset held, then reset released and `after` more cycles.
  /// With `with_agents` the cycles are tick()s (agents run, cycle() counts); without, they are
  /// bare clock pulses.
  void reset(unsigned cycles, unsigned after, bool with_agents) {
    make_current();
    dut_->clk_i = 0;
    dut_->rst_ni = 1;
    dut_->eval();
    dut_->rst_ni = 0;
    dut_->eval();
    for (unsigned i = 0; i < cycles; ++i) pulse(with_agents);
    dut_->rst_ni = 1;
    if (!with_agents) dut_->eval();
    for (unsigned i = 0; i < after; ++i) pulse(with_agents);
  }

  /// Drives the asynchronous reset between cycles (a platform's reset pin): asserting clears
  /// every flop at once; releasing takes effect from the next tick's edge.
  void set_reset(bool asserted) {
    make_current();
    dut_->rst_ni = !asserted;
    dut_->eval();
  }

 private:
  void make_current() {
    if (thread_context() != context_.get()) set_thread_context(context_.get());
  }
  void pulse(bool with_agents) {
    if (with_agents) {
      tick();
      return;
    }
    dut_->clk_i = 1;
    dut_->eval();
    dut_->clk_i = 0;
    dut_->eval();
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<V> dut_;
  std::unique_ptr<Trace<V>> trace_;
  std::vector<Agent*> agents_;
  uint64_t cycle_ = 0;
};

}  // namespace sgpu::tb
