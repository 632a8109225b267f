// Clocking discipline and waveform tracing shared by every Verilator testbench.
//
// One clock cycle, in this order (every harness does exactly this, so bus models, checkers and
// the DUT agree on what a handshake is):
//
//   1. drive the subordinate models' outputs (mem.outputs(), ...) into the DUT; clk = 0; eval
//   2. sample the DUT's outputs into plain structs (sample_axi_read/write);
//      checker.tick(sample, mem.outputs())
//   3. clk = 1; eval                       -- the DUT's rising edge
//   4. mem.tick(sample)                    -- the models' rising edge, on the same values
//
// Step 2 samples after the falling-edge eval, so the sample holds the DUT's combinational
// outputs for the values driven in step 1; models never look at the DUT after step 3. A
// handshake happened in the cycle iff valid and ready are both high in the (sample, outputs)
// pair of step 2.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include <verilated.h>
#include <verilated_fst_c.h>

#include "common/test_seed.hpp"

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

}  // namespace sgpu::tb
