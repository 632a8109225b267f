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
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "common/agent.hpp"
#include "common/test_seed.hpp"
#include "common/verilated_thread.hpp"

namespace sgpu::tb {

/// Whether model `V` was verilated with trace code (the checked configuration; the fast one has
/// none, see cmake/SgpuVerilate.cmake).
template <class V, class = void>
struct HasTrace : std::false_type {};
template <class V>
struct HasTrace<V, std::void_t<decltype(std::declval<V&>().trace(std::declval<VerilatedFstC*>(), 0))>>
    : std::true_type {};

/// The waveform a bench was asked for: `path`, else $SGPU_FST, else none (empty).
inline std::string requested_fst(std::string path) {
  if (path.empty()) {
    if (const char* env = std::getenv("SGPU_FST"); env != nullptr) path = env;
  }
  return path;
}

/// FST waveform of one Verilated model, written only when SGPU_FST=<path> is set (or a path is
/// given explicitly), so tests and benchmarks pay nothing by default. The file is closed when
/// the Trace is destroyed. Dump once per half cycle with the simulation time in ticks.
template <class V>
class Trace {
 public:
  /// `path`: empty = use $SGPU_FST; if that is unset too, tracing is off. A waveform asked of a
  /// model without trace code is an error (std::invalid_argument), not a silent empty file.
  explicit Trace(V& top, std::string path = {}) {
    path = requested_fst(std::move(path));
    if (path.empty()) return;
    if constexpr (HasTrace<V>::value) {
      top.contextp()->traceEverOn(true);
      fst_ = std::make_unique<VerilatedFstC>();
      top.trace(fst_.get(), 99);
      fst_->open(path.c_str());
    } else {
      (void)top;
      throw std::invalid_argument("a waveform (" + path +
                                  ") was asked of a model built without trace code (the fast configuration); "
                                  "use the checked model");
    }
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
    // Refused before the model exists (Trace would refuse too, but a half-built bench's model
    // would then be torn down without the context handling of ~Bench).
    if (!HasTrace<V>::value && !requested_fst(options.fst_path).empty()) {
      throw std::invalid_argument("a waveform (" + requested_fst(options.fst_path) +
                                  ") was asked of a model built without trace code (the fast configuration); "
                                  "use the checked model");
    }
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

  /// Function that makes the model see the next `clk_i = 1; eval()` as a rising edge without a
  /// `clk_i = 0; eval()` before it (it clears the model's record of the clock's last level).
  using ClockRearm = void (*)(V&);

  /// One eval() per cycle instead of two: drive(), sample(), then the rising edge. Each eval()
  /// re-evaluates all logic fed by the DUT's inputs (Verilator 5's input-combinational region
  /// runs on every call), so the falling-edge eval costs as much as a third of a cycle while
  /// deciding nothing. Valid only for a DUT none of whose outputs depends combinationally on an
  /// input (sample() then reads the outputs the last edge left, which are this cycle's): the
  /// caller vouches for that (sgpu_top: tb/sim/sim_device.cpp). Not with a waveform (one dump
  /// per cycle would hide the clock).
  void set_one_eval_per_cycle(ClockRearm rearm) { rearm_ = trace_->enabled() ? nullptr : rearm; }
  /// With one eval() per cycle: the function that evaluates the rising edge instead of eval()
  /// (one that leaves out what it proves unchanged, tb/sim/sim_device.cpp); empty = eval().
  void set_edge_eval(std::function<void(V&)> eval) { edge_eval_ = std::move(eval); }

  /// One clock cycle in the documented order.
  void tick() {
    make_current();
    if (rearm_ != nullptr) {
      for (Agent* a : agents_) a->drive();
      for (Agent* a : agents_) a->sample();
      rearm_(*dut_);
      dut_->clk_i = 1;
      if (edge_eval_) {
        edge_eval_(*dut_);
      } else {
        dut_->eval();
      }
      for (Agent* a : agents_) a->edge();
      ++cycle_;
      return;
    }
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

  /// Counts `cycles` cycles the caller advanced the model's state over without ticking (idle
  /// skipping, tb/sim/idle_skip.hpp): cycle() goes on as if they had run. The agents are the
  /// caller's to advance.
  void skip(uint64_t cycles) { cycle_ += cycles; }

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
  ClockRearm rearm_ = nullptr;
  std::function<void(V&)> edge_eval_;
  uint64_t cycle_ = 0;
};

}  // namespace sgpu::tb
