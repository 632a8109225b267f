#include "backends/backends.hpp"

#include "model/model_transport.hpp"
#include "pcie/pcie_sim_transport.hpp"
#include "sim/sim_transport.hpp"
#if SGPU_TB_HAVE_BOARD
#include "board/board_transport.hpp"
#endif

namespace sgpu::tb {

Status register_backends(TransportRegistry& registry) {
  for (const char* name : {"sim", "model", "pcie-sim", "board"})
    if (registry.contains(name)) return Error::invalid("register_backends: a '{}' backend is already registered", name);
  SGPU_RETURN_IF_ERROR(registry.add("sim", "the Verilated RTL (sgpu_top) and its host memory, in process",
                                    sim::SimConfig{}, &sim::open_sim_transport));
  SGPU_RETURN_IF_ERROR(registry.add("model", "the C++ reference model (untimed)", model::Config{},
                                    &model::open_model_transport));
  SGPU_RETURN_IF_ERROR(registry.add(
      "pcie-sim", "the pcie transport (what drives a card) over a simulated PCI function on the RTL",
      pcie::PcieSimOptions{}, [](const pcie::PcieSimOptions& options) { return pcie::open_pcie_sim(options); }));
#if SGPU_TB_HAVE_BOARD
  SGPU_RETURN_IF_ERROR(registry.add("board",
                                    "a co-simulated PCIe board: Artix-7 shell over generated LitePCIe + core, "
                                    "root-complex model (board:usp: Alveo shell, XDMA model)",
                                    board::BoardTransportOptions{}, &board::open_board_backend));
#endif
  return {};
}

sim::SimConfig* board_options(TransportRegistry& registry, std::string_view name) {
  if (name == "sim") return registry.options<sim::SimConfig>(name);
  if (name == "pcie-sim") {
    auto* card = registry.options<pcie::PcieSimOptions>(name);
    return card ? &card->card.sim : nullptr;
  }
  return nullptr;
}

void set_board(TransportRegistry& registry, const sim::SimConfig& board) {
  for (const auto& backend : registry.backends())
    if (sim::SimConfig* b = board_options(registry, backend.name)) *b = board;
}

bool interrupt_is_level(TransportRegistry& registry, std::string_view name) {
  // The pcie transport over the simulated card hands on MSIs, or polls fences (no IOMMU): never a level.
  if (name == "pcie-sim") return !registry.contains(name);
  return true;
}

bool preempts_inside_entries(TransportRegistry& registry, std::string_view name) {
  return !(name == "model" && registry.contains(name));
}

}  // namespace sgpu::tb
