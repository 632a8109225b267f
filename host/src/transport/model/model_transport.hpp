// The "model" backend: libsgpu driving the C++ reference model (tb/model) instead of the RTL.
#pragma once

#include <memory>

#include "sgpu/transport.hpp"

namespace sgpu::detail {

std::unique_ptr<Transport> make_model_transport(const TransportOptions& options);

}  // namespace sgpu::detail
