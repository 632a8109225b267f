#include "backends/backends.hpp"

#include "model/model_transport.hpp"
#include "sim/sim_transport.hpp"
#if SGPU_TB_HAVE_BOARD
#include "board/board_transport.hpp"
#endif

namespace sgpu::tb {

Status register_backends(TransportRegistry& registry) {
  for (const char* name : {"sim", "model", "board"})
    if (registry.contains(name)) return Error::invalid("register_backends: a '{}' backend is already registered", name);
  SGPU_RETURN_IF_ERROR(registry.add("sim", "the Verilated RTL (sgpu_top) and its host memory, in process",
                                    sim::SimConfig{}, &sim::open_sim_transport));
  SGPU_RETURN_IF_ERROR(registry.add("model", "the C++ reference model (untimed)", model::Config{},
                                    &model::open_model_transport));
#if SGPU_TB_HAVE_BOARD
  SGPU_RETURN_IF_ERROR(registry.add("board",
                                    "a co-simulated PCIe board: Artix-7 shell over generated LitePCIe + core, "
                                    "root-complex model (board:usp: Alveo shell, XDMA model)",
                                    board::BoardTransportOptions{}, &board::open_board_backend));
#endif
  return {};
}

}  // namespace sgpu::tb
