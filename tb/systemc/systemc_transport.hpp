// The "systemc" and "systemc-model" transports: libsgpu as the host CPU of the example virtual
// platform (platform.hpp), with the RTL or the reference model inside the device. MMIO is
// b_transport on the BAR through the interconnect, DMA memory is host pages attached into the
// platform's memory target at bus addresses, wait_irq() is wait(timeout, interrupt) and now()
// is SystemC time.
//
// The same transport serves both ways a host stack runs: inside an SC_THREAD of the platform
// (the example's host thread, examples/sgpu_platform.cpp) the operations run right there; from
// ordinary code (a program that opened the backend through the registry) each operation is
// handed to the host CPU's proxy thread and the kernel is stepped until it is done (HostCpu::run).
#pragma once

#include <memory>
#include <string>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "systemc/platform.hpp"

namespace sgpu::systemc {

/// Builds the platform and its transport, named "systemc" (RTL inside) or "systemc-model".
/// Unsupported when this process built its platform already (SystemC elaborates once per
/// process), InvalidArgument for bad options, TransportError when the device cannot start.
Result<std::unique_ptr<Transport>> open_systemc_transport(const PlatformConfig& config);

/// The transport of a platform someone else built and runs (the example's sc_main): the host
/// thread calls it from inside the simulation. The platform must outlive every DmaMemory.
std::unique_ptr<Transport> make_platform_transport(std::shared_ptr<Platform> platform);

}  // namespace sgpu::systemc
