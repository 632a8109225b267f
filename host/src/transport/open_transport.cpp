// Chooses a backend by name. The only place that knows which backends exist.
#include <fmt/format.h>

#include "sgpu/transport.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/transport/pcie.hpp"
#if SGPU_HAVE_SIM
#include "pcie/sim_pci_function.hpp"
#include "transport/model/model_transport.hpp"
#include "transport/sim/sim_transport.hpp"
#endif

namespace sgpu {

Result<std::unique_ptr<Transport>> open_transport(std::string_view backend,
                                                  const TransportOptions& options) {
  if (backend == "mock") return std::unique_ptr<Transport>(std::make_unique<MockTransport>());
  if (backend == "sim") {
#if SGPU_HAVE_SIM
    if (options.clock_hz <= 0)
      return Error{Errc::InvalidArgument, fmt::format("clock_hz {} is not positive", options.clock_hz), false};
    try {
      return detail::make_sim_transport(options);
    } catch (const std::exception& e) {
      return Error{Errc::TransportError, fmt::format("cannot start the simulated device: {}", e.what()), false};
    }
#else
    return Error{Errc::Unsupported, "this libsgpu was built without the simulated device", false};
#endif
  }
  if (backend == "model") {
#if SGPU_HAVE_SIM
    return detail::make_model_transport(options);
#else
    return Error{Errc::Unsupported, "this libsgpu was built without the testbench's reference model", false};
#endif
  }
  if (backend == "pcie" || backend.substr(0, 5) == "pcie:") {
    pcie::PcieOptions po;
    po.slot = backend.size() > 5 ? std::string(backend.substr(5)) : options.pci_slot;
    return pcie::open_pcie(po);
  }
  if (backend == "pcie-sim") {
    // The pcie transport over the simulated function: the code that drives a card, on the RTL.
#if SGPU_HAVE_SIM
    pcie::SimPciConfig c;
    c.sim.read_latency = options.read_latency;
    c.sim.write_latency = options.write_latency;
    c.sim.memory_ready_prob = options.memory_ready_prob;
    c.sim.seed = options.seed;
    c.sim.clock_hz = options.clock_hz;
    c.sim.fst_path = options.fst_path;
    c.sim.check_axi = options.check_axi;
    return pcie::open_pcie_sim(c, pcie::PcieOptions{});
#else
    return Error{Errc::Unsupported, "this libsgpu was built without the simulated device", false};
#endif
  }
  return Error{Errc::InvalidArgument,
               fmt::format("unknown transport backend '{}' (known: sim, model, mock, pcie[:address], pcie-sim)",
                           backend),
               false};
}

}  // namespace sgpu
