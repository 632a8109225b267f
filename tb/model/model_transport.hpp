// The "model" transport: libsgpu driving the C++ reference model (model::Model) instead of the
// RTL. Its options are the model's Config (bus width, ring and indirect limits, page size).
// Programs usually reach it through a TransportRegistry (tb/backends/backends.hpp).
#pragma once

#include <memory>

#include "model/model.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"

namespace sgpu::model {

Result<std::unique_ptr<Transport>> open_model_transport(const Config& config = {});

}  // namespace sgpu::model
