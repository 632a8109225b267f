// The SystemC backends for a TransportRegistry, for the programs that link them
// (sgpu_systemc_backend: the sgpu CLI, the end-to-end tests, the benchmarks):
//   "systemc"        the example platform with the Verilated RTL inside the TLM device
//   "systemc-model"  the same platform with the reference model inside (loosely timed)
// both with options sgpu::systemc::PlatformConfig. One of them per process (SystemC elaborates
// once): opening a second is an Unsupported error.
#pragma once

#include "sgpu/result.hpp"
#include "sgpu/transport/registry.hpp"

namespace sgpu::systemc {

/// Adds "systemc" and "systemc-model". InvalidArgument if either name is taken.
Status register_backends(TransportRegistry& registry);

}  // namespace sgpu::systemc
