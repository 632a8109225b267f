// The "sim" backend: the Verilated RTL (tb/sim SimDevice) in this process.
#pragma once

#include <memory>

#include "sgpu/transport.hpp"

namespace sgpu::detail {

std::unique_ptr<Transport> make_sim_transport(const TransportOptions& options);

}  // namespace sgpu::detail
