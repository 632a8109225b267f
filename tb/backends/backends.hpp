// The testbench's transport backends for libsgpu, for the programs that link them (the sgpu
// CLI, the benchmarks, the end-to-end tests): libsgpu itself never includes tb/.
//
//   sgpu::TransportRegistry registry;        // libsgpu's own: mock, pcie
//   sgpu::tb::register_backends(registry);   // + sim, model, board
//   auto t = registry.open("sim");
//
// Each backend keeps its own options in the registry:
//   "sim"    the Verilated RTL in process (tb/sim)          options sgpu::sim::SimConfig
//   "model"  the C++ reference model (tb/model)             options sgpu::model::Config
//   "board"  a co-simulated PCIe board (tb/board): the       options sgpu::board::BoardTransportOptions
//            Artix-7 design (generated LitePCIe, shell,
//            core) against a root-complex model; "board:usp"
//            the Alveo shell against an XDMA model. Built when
//            the Python environment is (SGPU_TB_HAVE_BOARD).
#pragma once

#include "sgpu/result.hpp"
#include "sgpu/transport/registry.hpp"

namespace sgpu::tb {

/// Adds "sim", "model" and (SGPU_TB_HAVE_BOARD) "board" to `registry` with default options.
/// InvalidArgument if any of the names is taken already (nothing is added then).
Status register_backends(TransportRegistry& registry);

}  // namespace sgpu::tb
