// The testbench's transport backends for libsgpu, for the programs that link them (the sgpu
// CLI, the benchmarks, the end-to-end tests): libsgpu itself never includes tb/.
//
//   sgpu::TransportRegistry registry;        // libsgpu's own: mock, pcie
//   sgpu::tb::register_backends(registry);   // + sim, model
//   auto t = registry.open("sim");
//
// Each backend keeps its own options in the registry:
//   "sim"    the Verilated RTL in process (tb/sim)          options sgpu::sim::SimConfig
//   "model"  the C++ reference model (tb/model)             options sgpu::model::Config
#pragma once

#include "sgpu/result.hpp"
#include "sgpu/transport/registry.hpp"

namespace sgpu::tb {

/// Adds "sim" and "model" to `registry` with default options. InvalidArgument if either name
/// is taken already (nothing is added then).
Status register_backends(TransportRegistry& registry);

}  // namespace sgpu::tb
