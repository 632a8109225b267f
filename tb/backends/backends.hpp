// The testbench's transport backends for libsgpu, for the programs that link them (the sgpu
// CLI, the benchmarks, the end-to-end tests): libsgpu itself never includes tb/.
//
//   sgpu::TransportRegistry registry;        // libsgpu's own: mock, pcie
//   sgpu::tb::register_backends(registry);   // + sim, model, pcie-sim, board
//   auto t = registry.open("sim");
//
// Each backend keeps its own options in the registry:
//   "sim"       the Verilated RTL in process (tb/sim)              options sgpu::sim::SimConfig
//   "model"     the C++ reference model (tb/model)                 options sgpu::model::Config
//   "pcie-sim"  libsgpu's pcie transport over the simulated PCI    options sgpu::pcie::PcieSimOptions
//               function wrapping the Verilated RTL (tb/pcie)
//   "board"     a co-simulated PCIe board (tb/board): the Artix-7  options sgpu::board::BoardTransportOptions
//               design (generated LitePCIe, shell, core) against a
//               root-complex model; "board:usp" the Alveo shell
//               against an XDMA model. Built when the Python
//               environment is (SGPU_TB_HAVE_BOARD).
//
// Several backends run the same simulated board (its memory latencies, clock, seed, waveform)
// under different transports. board_options() finds the board inside a backend's options and
// set_board() sets it on all of them at once, so the CLI's --latency... flags and the tests'
// fast memory reach every such backend without naming them. interrupt_is_level() says how a
// backend delivers the interrupt, preempts_inside_entries() whether its device can stop inside
// an entry (the behaviours the end-to-end tests tell apart). A backend registered here is added
// to them where it differs from "sim". ("board" models its own memory
// timing in the root-complex model, so it has no sim::SimConfig.)
#pragma once

#include <string_view>

#include "sgpu/result.hpp"
#include "sgpu/transport/registry.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::tb {

/// Adds "sim", "model", "pcie-sim" and (SGPU_TB_HAVE_BOARD) "board" to `registry` with default
/// options. InvalidArgument if any name is taken already (nothing is added then).
Status register_backends(TransportRegistry& registry);

/// The simulated board backend `name` runs, inside its options in `registry`, to read or change
/// before opening it; nullptr for a backend that runs none ("mock", "pcie", "model") or that is
/// not registered.
sim::SimConfig* board_options(TransportRegistry& registry, std::string_view name);

/// Gives `board` to every registered backend that runs the simulated board.
void set_board(TransportRegistry& registry, const sim::SimConfig& board);

/// Whether backend `name`, opened with its options in `registry`, shows the device's interrupt
/// as a level (Transport::wait_irq() stays true until the status is acknowledged: "sim",
/// "model"), or delivers it as messages (each wait_irq() consumes one: "pcie-sim" with MSI).
/// A backend that is not registered counts as a level.
bool interrupt_is_level(TransportRegistry& registry, std::string_view name);

/// Whether the device behind backend `name` stops inside a ring entry for a preemption (the RTL:
/// a long COPY is cut, a hung WAIT_MEM ends and is saved at its packet). The reference model
/// ("model") is untimed: it preempts between entries only, and a request while it is hung in a
/// wait stays pending until the engine reset (docs/reference-model.md). A backend that is not
/// registered counts as yes.
bool preempts_inside_entries(TransportRegistry& registry, std::string_view name);

}  // namespace sgpu::tb
