// A clocked RTL block verilated alone (its own top: clk_i, rst_ni first), for the block's unit
// test: the model in a context of its own, a reset with the inputs as the test set them, and one
// clock cycle at a time. A datapath block without rst_ni has everything but reset().
#pragma once

#include <memory>
#include <type_traits>
#include <utility>

#include <verilated.h>

namespace sgpu::tb {

template <class Model, class = void>
struct HasReset : std::false_type {};
template <class Model>
struct HasReset<Model, std::void_t<decltype(std::declval<Model&>().rst_ni)>> : std::true_type {};

template <class Model>
struct BlockHarness {
  std::unique_ptr<VerilatedContext> context = std::make_unique<VerilatedContext>();
  std::unique_ptr<Model> dut;

  explicit BlockHarness(const char* name) : dut(std::make_unique<Model>(context.get(), name)) {
    dut->clk_i = 0;
    if constexpr (HasReset<Model>::value) dut->rst_ni = 0;
  }
  ~BlockHarness() { dut->final(); }
  BlockHarness(const BlockHarness&) = delete;
  BlockHarness& operator=(const BlockHarness&) = delete;

  /// Holds reset over one rising edge with the inputs as the test set them, then releases it.
  /// The edge matters: a model whose rst_ni starts low sees no falling edge of it, so the
  /// asynchronous resets act only when a clock edge finds rst_ni low.
  void reset() {
    dut->rst_ni = 0;
    dut->eval();
    clock();
    dut->rst_ni = 1;
    dut->eval();
  }

  /// One rising and one falling edge.
  void clock() {
    dut->clk_i = 1;
    dut->eval();
    dut->clk_i = 0;
    dut->eval();
  }
};

}  // namespace sgpu::tb
