// The testbench's transports for the end-to-end tests, registered the way every program does
// it (a registry of its own, tb::register_backends and systemc::register_backends), with the
// short host-memory latencies that keep the tests fast (the benchmarks use realistic ones).
//
// Backend parity. The end-to-end tests tagged [parity] do not name a backend: they open
// open_e2e_transport(), i.e. the backend SGPU_E2E_BACKEND names ("sim" when it is unset).
// CTest runs them on "sim" and once more on every backend host/tests/CMakeLists.txt lists with
// sgpu_e2e_backend(<name>), with the CTest label <name>: the same assertions through another
// transport. A backend whose interrupt is a message, not a level, is listed in
// e2e_interrupt_is_level().
#pragma once

#include <catch2/catch.hpp>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "backends/backends.hpp"
#include "sim/sim_device.hpp"
#include "systemc/backend.hpp"
#include "systemc/platform.hpp"

namespace sgpu::test {

/// Every backend the end-to-end tests may run on, with the options they are registered with.
inline void register_e2e_backends(TransportRegistry& registry) {
  REQUIRE(tb::register_backends(registry));
  REQUIRE(systemc::register_backends(registry));
}

inline TransportRegistry tb_registry() {
  TransportRegistry registry;
  register_e2e_backends(registry);
  sim::SimConfig& board = *registry.options<sim::SimConfig>("sim");
  board.read_latency = 16;
  board.write_latency = 8;
  for (const char* name : {"systemc", "systemc-model"}) {
    systemc::PlatformConfig& platform = *registry.options<systemc::PlatformConfig>(name);
    platform.read_latency = 16;
    platform.write_latency = 8;
  }
  return registry;
}

/// Opens a backend ("sim", "model", "systemc", ...) from tb_registry().
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
/// Every backend here has a level line (the systemc ones unless --msi).
inline bool e2e_interrupt_is_level() { return true; }

/// Whether the device stops inside an entry for a preemption (the RTL: a hung WAIT_MEM ends and
/// is saved at its packet). The reference model ("model", "systemc-model") is untimed: it
/// preempts between entries only, and a request while it is hung in a wait stays pending until
/// the engine reset (docs/reference-model.md, preemption); the tests assert that instead.
inline bool e2e_preempts_inside_entries() {
  const std::string name = e2e_backend_name();
  return name != "model" && name != "systemc-model";
}

/// A backend that builds a SystemC platform: one per process (the tests that need two devices
/// at once take the second from "sim", see test_sched_sim.cpp).
inline bool e2e_backend_is_systemc() { return e2e_backend_name().rfind("systemc", 0) == 0; }

}  // namespace sgpu::test
