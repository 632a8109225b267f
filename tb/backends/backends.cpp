#include "backends/backends.hpp"

#include "model/model_transport.hpp"
#include "sim/sim_transport.hpp"

namespace sgpu::tb {

Status register_backends(TransportRegistry& registry) {
  for (const char* name : {"sim", "model"})
    if (registry.contains(name)) return Error::invalid("register_backends: a '{}' backend is already registered", name);
  SGPU_RETURN_IF_ERROR(registry.add("sim", "the Verilated RTL (sgpu_top) and its host memory, in process",
                                    sim::SimConfig{}, &sim::open_sim_transport));
  return registry.add("model", "the C++ reference model (untimed)", model::Config{},
                      &model::open_model_transport);
}

}  // namespace sgpu::tb
