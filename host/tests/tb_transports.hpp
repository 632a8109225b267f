// The testbench's transports for the end-to-end tests, registered the way every program does
// it (a registry of its own, tb::register_backends), with the short host-memory latencies that
// keep the tests fast (the benchmarks use realistic ones).
#pragma once

#include <catch2/catch.hpp>

#include <memory>
#include <string_view>

#include "backends/backends.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::test {

inline TransportRegistry tb_registry() {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  sim::SimConfig& board = *registry.options<sim::SimConfig>("sim");
  board.read_latency = 16;
  board.write_latency = 8;
  return registry;
}

/// Opens "sim" or "model" from tb_registry().
inline std::unique_ptr<Transport> open_tb_transport(std::string_view spec) {
  auto t = tb_registry().open(spec);
  if (!t) FAIL(to_string(t.error()));
  return std::move(*t);
}

}  // namespace sgpu::test
