// The "pcie-sim" transport: libsgpu's pcie transport (register access, DMA pool and IOVA
// allocator, MSI wait, liveness checks: the code that drives a card) over the simulated PCI
// function (SimPciFunction), i.e. over the Verilated RTL. Programs reach it through a
// TransportRegistry (tb/backends/backends.hpp); tests that pull the card or inspect its
// configuration space open it directly and get the function too.
#pragma once

#include <memory>

#include "pcie/sim_pci_function.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/transport/pcie.hpp"

namespace sgpu::pcie {

/// The options of the registry's "pcie-sim" backend.
struct PcieSimOptions {
  /// The simulated card (and, in card.sim, the simulated board it wraps).
  SimPciConfig card;
  /// The transport above the seam, as for a real card (PcieOptions::transport).
  PcieTransportOptions transport;
};

/// The pcie transport over a fresh simulated function; it names itself "pcie-sim". `function`
/// (optional) receives a pointer to the function, valid while the transport lives, for tests
/// that pull the card or inspect it. TransportError when the simulated device cannot start.
Result<std::unique_ptr<Transport>> open_pcie_sim(const PcieSimOptions& options, SimPciFunction** function = nullptr);

}  // namespace sgpu::pcie
