// The "sim" transport: libsgpu driving the Verilated RTL (SimDevice) in this process. Its
// options are the simulated board's (SimConfig: memory latencies, back-pressure, seed, clock,
// waveform, AXI checking). Programs usually reach it through a TransportRegistry
// (tb/backends/backends.hpp); tests that want one particular board may open it directly.
#pragma once

#include <memory>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::sim {

/// Builds the simulated device and its transport. InvalidArgument for a clock that is not
/// positive; TransportError when the model cannot start (e.g. the waveform file).
Result<std::unique_ptr<Transport>> open_sim_transport(const SimConfig& config = {});

/// The transport over a device the caller keeps too: a test that drives libsgpu and also
/// reaches the board underneath (bus-error injection on the host-memory port, the cycle count).
std::unique_ptr<Transport> open_sim_transport_over(std::shared_ptr<SimDevice> device);

}  // namespace sgpu::sim
