// The SystemC backends for a TransportRegistry, for the programs that link them
// (sgpu_systemc_backend: the sgpu CLI, the end-to-end tests, the benchmarks):
//   "systemc"        the example platform with the Verilated RTL inside the TLM device
//   "systemc-model"  the same platform with the reference model inside (loosely timed)
// both with options sgpu::systemc::PlatformConfig. One of them per process (SystemC elaborates
// once): opening a second is an Unsupported error.
//
// They live apart from tb::register_backends so that a program without SystemC links none of
// it; the functions below are tb/backends' counterparts for these two backends (a program that
// registers both calls both).
#pragma once

#include <string_view>

#include "sgpu/result.hpp"
#include "sgpu/transport/registry.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::systemc {

/// Adds "systemc" and "systemc-model". InvalidArgument if either name is taken.
Status register_backends(TransportRegistry& registry);

/// Gives the simulated board's settings (clock, memory latencies, seed, waveform, AXI checking)
/// to both platforms, as tb::set_board does for the backends that run the board itself.
void set_board(TransportRegistry& registry, const sim::SimConfig& board);

/// Whether backend `name` shows the interrupt as a level: a systemc platform unless its options
/// ask for MSI; any other name counts as a level (tb::interrupt_is_level says for those).
bool interrupt_is_level(TransportRegistry& registry, std::string_view name);

/// Whether backend `name` builds a SystemC platform (one per process).
bool builds_platform(std::string_view name);

/// Whether the device behind backend `name` stops inside a ring entry for a preemption. The
/// reference model is untimed: it preempts between entries only (docs/reference-model.md).
/// Names other than the two systemc backends count as yes (tb::preempts_inside_entries).
bool preempts_inside_entries(TransportRegistry& registry, std::string_view name);

}  // namespace sgpu::systemc
