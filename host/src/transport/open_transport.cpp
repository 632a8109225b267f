// Chooses a backend by name. The only place that knows which backends exist.
#include <fmt/format.h>

#include "sgpu/transport.hpp"
#include "sgpu/transport/mock.hpp"
#if SGPU_HAVE_SIM
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
  if (backend == "pcie")
    return Error{Errc::Unsupported,
                 fmt::format("the pcie backend (libpciaccess + VFIO) is not implemented yet{}",
                             options.pci_slot.empty() ? "" : fmt::format(" (asked for slot {})", options.pci_slot)),
                 false};
  return Error{Errc::InvalidArgument,
               fmt::format("unknown transport backend '{}' (known: sim, model, mock, pcie)", backend), false};
}

}  // namespace sgpu
