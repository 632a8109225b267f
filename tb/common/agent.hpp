// An agent of tb::Bench (bench.hpp): something on the DUT's ports that takes part in every clock
// cycle. Plain C++ (no Verilator headers), so agents' logic can live in tb/common's library.
#pragma once

namespace sgpu::tb {

/// Every hook is optional; bench.hpp documents the cycle order they run in.
class Agent {
 public:
  virtual ~Agent() = default;
  /// Step 1: drive this cycle's inputs of the DUT.
  virtual void drive() {}
  /// Step 2: read the DUT's outputs; check; decide.
  virtual void sample() {}
  /// Step 4: the rising edge, on what sample() saw.
  virtual void edge() {}
};

}  // namespace sgpu::tb
