// The testbench's transports for the end-to-end tests, registered the way every program does
// it (a registry of its own, tb::register_backends and systemc::register_backends), with the
// short host-memory latencies that keep the tests fast (the benchmarks use realistic ones) on
// every backend that runs the simulated board or a platform (tb::set_board, systemc::set_board).
//
// Backend parity. The end-to-end tests tagged [parity] do not name a backend: they open
// open_e2e_transport(), i.e. the backend SGPU_E2E_BACKEND names ("sim" when it is unset).
// CTest runs them on "sim" and once more on every backend host/tests/CMakeLists.txt lists with
// sgpu_e2e_backend(<name>), with the CTest label <name>: the same assertions through another
// transport. Nothing here names a backend: what tells backends apart (the board they run, an
// interrupt that is a message rather than a level) is said where they are registered
// (tb/backends).
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "backends/backends.hpp"
#include "sim/sim_device.hpp"
#include "systemc/backend.hpp"

namespace sgpu::test {

/// Every backend the end-to-end tests may run on, with the options they are registered with.
inline void register_e2e_backends(TransportRegistry& registry) {
  REQUIRE(tb::register_backends(registry));
  REQUIRE(systemc::register_backends(registry));
}

inline void fast_board(sim::SimConfig& board) {
  board.read_latency = 16;
  board.write_latency = 8;
}

inline TransportRegistry tb_registry() {
  TransportRegistry registry;
  register_e2e_backends(registry);
  sim::SimConfig board;
  fast_board(board);
  tb::set_board(registry, board);
  systemc::set_board(registry, board);
  return registry;
}

/// Opens a backend ("sim", "model", "pcie-sim", "systemc"...) from tb_registry().
inline std::unique_ptr<Transport> open_tb_transport(std::string_view spec) {
  auto t = tb_registry().open(spec);
  if (!t) FAIL(to_string(t.error()));
  return std::move(*t);
}

/// The spec of the backend the [parity] tests run on: $SGPU_E2E_BACKEND, "sim" by default.
inline std::string e2e_backend() {
  const char* spec = std::getenv("SGPU_E2E_BACKEND");
  return spec && *spec ? spec : "sim";
}

/// Its name as the transport reports it (the spec without an argument).
inline std::string e2e_backend_name() {
  const std::string spec = e2e_backend();
  return spec.substr(0, spec.find(':'));
}

/// Opens the backend the [parity] tests run on.
inline std::unique_ptr<Transport> open_e2e_transport() { return open_tb_transport(e2e_backend()); }

/// Whether the backend shows the interrupt line as a level (wait_irq() stays true until the
/// status is acknowledged), or delivers it as messages (MSI: each wait_irq() consumes one).
inline bool e2e_interrupt_is_level() {
  TransportRegistry registry = tb_registry();
  const std::string name = e2e_backend_name();
  return tb::interrupt_is_level(registry, name) && systemc::interrupt_is_level(registry, name);
}

/// Whether the device stops inside an entry for a preemption; the reference model (also inside
/// a platform) preempts between entries only, and the tests assert that instead.
inline bool e2e_preempts_inside_entries() {
  TransportRegistry registry = tb_registry();
  const std::string name = e2e_backend_name();
  return tb::preempts_inside_entries(registry, name) && systemc::preempts_inside_entries(registry, name);
}

/// A backend that builds a SystemC platform: one per process (the tests that need two devices
/// at once take the second from "sim", see test_sched_sim.cpp).
inline bool e2e_backend_is_systemc() { return systemc::builds_platform(e2e_backend_name()); }

}  // namespace sgpu::test
