#include "pcie/pcie_sim_transport.hpp"

#include <exception>

namespace sgpu::pcie {

Result<std::unique_ptr<Transport>> open_pcie_sim(const PcieSimOptions& options, SimPciFunction** function) {
  if (!(options.card.sim.clock_hz > 0))
    return Error::invalid("pcie-sim: clock_hz {} is not positive", options.card.sim.clock_hz);
  std::unique_ptr<SimPciFunction> f;
  try {
    f = std::make_unique<SimPciFunction>(options.card);
  } catch (const std::exception& e) {
    return Error::make(Errc::TransportError, Touched::Nothing, "cannot start the simulated card: {}", e.what());
  }
  if (function) *function = f.get();
  return open_pcie_transport(std::move(f), options.transport, "pcie-sim");
}

}  // namespace sgpu::pcie
