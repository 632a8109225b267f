// Shared pieces of the `sgpu` command-line tool.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "sgpu/device.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/transport/pcie.hpp"

namespace sgpu::cli {

/// Options every subcommand understands (they may appear before or after the subcommand).
struct CommonOptions {
  std::string backend = "sim";  ///< sim, model, mock, pcie[:address], pcie-sim
  TransportOptions transport;   ///< the simulated device's options
  pcie::PcieOptions pcie;       ///< the card's options (pcie backend)
};

struct DemoOptions {
  std::string png_path = "sgpu-demo.png";  ///< the presented frame; the report goes beside it (.txt)
  bool no_hang = false;                    ///< skip the injected hang and its recovery
  bool no_reference = false;               ///< skip the comparison with the C++ reference model
  unsigned tdr_us = 1000;                  ///< TdrDelay for the demo, microseconds of device time
  unsigned timeout_ms = 50;                ///< longest wait for one fence, device time
};

/// Opens the transport `options.backend` names (printing the pcie backend's warnings).
Result<std::unique_ptr<Transport>> open_cli_transport(const CommonOptions& options);

/// Opens the transport and the device, or prints the error and returns nullopt.
std::optional<Device> open_device(const CommonOptions& options);

int run_info(const CommonOptions& options);
int run_demo(const CommonOptions& options, const DemoOptions& demo);
int run_list(const CommonOptions& options, bool all);
int run_bind(const std::string& address, bool bind);

}  // namespace sgpu::cli
