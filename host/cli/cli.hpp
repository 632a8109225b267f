// Shared pieces of the `sgpu` command-line tool.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "sgpu/device.hpp"
#include "sgpu/transport.hpp"

namespace sgpu::cli {

/// Options every subcommand understands (they may appear before or after the subcommand).
struct CommonOptions {
  std::string backend = "sim";
  TransportOptions transport;
};

struct DemoOptions {
  unsigned submissions = 6;
  unsigned timeout_us = 1000;  ///< per fence, in the transport's time
};

/// Opens the transport and the device, or prints the error and returns nullopt.
std::optional<Device> open_device(const CommonOptions& options);

int run_info(const CommonOptions& options);
int run_demo(const CommonOptions& options, const DemoOptions& demo);

}  // namespace sgpu::cli
