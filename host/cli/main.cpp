// sgpu: command-line front end of libsgpu.
//
//   sgpu info                  what the device reports (ID, capabilities, segments)
//   sgpu demo                  the demo workload through the driver stack; writes the frame as a PNG
//   sgpu disasm FILE           a DMA buffer or command buffer dump as named packets
//   sgpu list                  PCI functions that may be a softgpu card (libpciaccess)
//   sgpu bind-vfio <address>   hand a card to vfio-pci (unbind-vfio gives it back)
//
// The composition root: it owns the transport registry, adds the testbench's backends to
// libsgpu's own and binds each backend's options to the flags below (the simulated board's to
// --latency..., the card's to --unsafe-no-iommu, --pci-id, --dma-bits). --help lists the
// registered backends.
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "backends/backends.hpp"
#include "cli.hpp"
#include "pcie/pcie_sim_transport.hpp"
#include "sgpu/transport/pcie.hpp"
#include "sim/sim_device.hpp"
#include "systemc/backend.hpp"
#include "systemc/platform.hpp"

int main(int argc, char** argv) {
  using sgpu::cli::CommonOptions;
  sgpu::TransportRegistry registry;
  for (auto s : {sgpu::tb::register_backends(registry), sgpu::systemc::register_backends(registry)}) {
    if (!s) {
      fmt::print(stderr, "sgpu: {}\n", to_string(s.error()));
      return 3;
    }
  }
  // The simulated board of every backend that runs one (sim, pcie-sim, the systemc
  // platforms), and the card's options.
  sgpu::sim::SimConfig board;
  sgpu::pcie::PcieOptions& card = *registry.options<sgpu::pcie::PcieOptions>("pcie");
  sgpu::pcie::PcieSimOptions& simulated_card = *registry.options<sgpu::pcie::PcieSimOptions>("pcie-sim");
  card.transport.warn = [](std::string_view w) { fmt::print(stderr, "sgpu: warning: {}\n", w); };
  unsigned quantum = sgpu::systemc::kDefaultQuantumCycles;
  bool msi = false;
  CommonOptions common;
  common.registry = &registry;
  sgpu::cli::DemoOptions demo;

  std::string backends;
  for (const auto& b : registry.backends()) backends += fmt::format("\n  {:<13} {}", b.name, b.summary);
  CLI::App app{"sgpu: drive a softgpu (the simulated RTL by default) through libsgpu"};
  app.require_subcommand(1);
  app.fallthrough();  // common options may also follow the subcommand
  app.add_option("--backend", common.backend, "Transport backend, name[:argument]:" + backends)
      ->capture_default_str();
  app.add_option("--latency", board.read_latency, "Host-memory read latency of the simulated device, in core cycles")
      ->capture_default_str();
  app.add_option("--write-latency", board.write_latency,
                 "Host-memory write latency of the simulated device, in core cycles")
      ->capture_default_str();
  bool checked = false;
  app.add_flag("--checked", checked,
               "Simulate the checked model (RTL assertions, AXI protocol checker, waveform support) instead of the "
               "fast one: several times slower, for debugging");
  app.add_option("--fst", board.fst_path,
                 "Write an FST waveform of the simulated device to this file (implies --checked)");
  const std::map<std::string, sgpu::sim::IdleSkip> idle_skip_modes = {
      {"on", sgpu::sim::IdleSkip::On}, {"off", sgpu::sim::IdleSkip::Off}, {"verify", sgpu::sim::IdleSkip::Verify}};
  app.add_option("--idle-skip", board.idle_skip,
                 "Fast model: advance over stretches in which the device only counts (waiting for memory, a WAIT_MEM "
                 "poll interval, nothing to do) at once instead of cycle by cycle, with the same result (on); simulate "
                 "every cycle (off); or skip and also simulate every skipped stretch, comparing the model's state "
                 "(verify)")
      ->transform(CLI::CheckedTransformer(idle_skip_modes, CLI::ignore_case))
      ->default_str("on");
  app.add_option("--seed", board.seed, "Seed for random stalls and X initialisation")->capture_default_str();
  double clock_mhz = board.clock_hz / 1e6;
  app.add_option("--clock-mhz", clock_mhz, "Core clock of the simulated device, MHz")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  app.add_option("--quantum", quantum, "systemc backends: temporal-decoupling quantum, core cycles")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  app.add_flag("--msi", msi, "systemc backends: the device signals interrupts as MSI writes instead of a line");
  app.add_flag("--unsafe-no-iommu", card.unsafe_no_iommu,
               "pcie without an IOMMU: sysfs BAR, hugepages at physical addresses, fence polling. The card can "
               "then write anywhere in memory (docs/pcie.md)");
  std::vector<std::string> pci_ids;
  app.add_option("--pci-id", pci_ids, "Also treat vendor:device (hex, e.g. 10ee:7024) as a softgpu candidate")
      ->check([](const std::string& text) {
        auto id = sgpu::pcie::parse_pci_id(text);
        return id ? std::string() : id.error().message;
      });
  app.add_option("--dma-bits", card.transport.dma_address_bits,
                 "pcie, pcie-sim: the device's DMA address width if narrower than CAP_BUS says (e.g. 32 for a "
                 "LitePCIe bridge)")
      ->check(CLI::Range(sgpu::pcie::kMinDmaAddressBits, 64u));

  auto* info = app.add_subcommand("info", "Print what the device reports: ID, capabilities, segments");
  auto* demo_cmd = app.add_subcommand(
      "demo", "Run the demo workload through the whole driver stack (render, copy and present contexts, an "
              "injected hang and its recovery; several frames presented through a flip queue at vsync), write the "
              "frames as PNGs with a report beside them, and check every frame against the C++ reference model");
  demo_cmd->add_option("--png", demo.png_path,
                       "Where to write the last presented frame (the report goes to .txt beside it, every frame side "
                       "by side to .frames.png)")
      ->capture_default_str();
  demo_cmd->add_option("--frames", demo.frames, "Frames rendered and presented through the flip queue")
      ->capture_default_str()
      ->check(CLI::Range(1u, 99u));
  demo_cmd->add_option("--vsync-us", demo.vsync_us, "The display's refresh period, microseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  demo_cmd->add_flag("--no-hang", demo.no_hang, "Do not inject the hung submission");
  demo_cmd->add_flag("--no-reference", demo.no_reference, "Do not compare with the C++ reference model");
  demo_cmd->add_option("--tdr-us", demo.tdr_us, "TdrDelay: how long a packet may run, microseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(10u, 10000000u));
  demo_cmd->add_option("--quantum-us", demo.quantum_us,
                       "The scheduling quantum: how long the low-priority copy may hold the engine while render or "
                       "present work waits, microseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000000u));
  demo_cmd->add_option("--timeout-ms", demo.timeout_ms, "Longest wait for one fence, milliseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));
  std::string trace_path;
  auto* trace_opt = demo_cmd->add_option("--trace", trace_path,
                                         "Write the timeline trace (open it in ui.perfetto.dev or chrome://tracing) to "
                                         "this file, or without a file beside the PNG; a picture of it (.timeline.svg) "
                                         "goes beside it")
                        ->expected(0, 1);

  demo_cmd->add_option("--postmortem", demo.postmortem_dir,
                       "Write a post-mortem (JSON, text, DMA buffer dump) per fault or hang recovery to this directory");
  sgpu::cli::DisasmOptions disasm;
  auto* disasm_cmd = app.add_subcommand("disasm", "Disassemble a DMA buffer or command buffer dump (raw little-endian "
                                                  "dwords, e.g. a post-mortem's .dma.bin); needs no device");
  disasm_cmd->add_option("file", disasm.path, "The dump file")->required();
  disasm_cmd->add_option("--offset", disasm.offset, "First byte to decode (a multiple of 4)")->capture_default_str();
  disasm_cmd->add_option("--end", disasm.end, "Byte after the last to decode (default: the end of the file)");
  disasm_cmd->add_flag("--command-buffer", disasm.command_buffer,
                       "The file is a user-mode command buffer: GPU addresses are unpatched");
  disasm_cmd->add_flag("--raw", disasm.raw, "Also print each packet's dwords");

  bool list_all = false;
  auto* list = app.add_subcommand("list", "List PCI functions that may be a softgpu card: address, IDs, driver, "
                                          "IOMMU group, link, and whether BAR0 answers with the softgpu magic");
  list->add_flag("--all", list_all, "Also list every other PCI function");
  std::string address;
  auto* bind = app.add_subcommand("bind-vfio", "Hand a PCI function to vfio-pci (driver_override, unbind, probe)");
  bind->add_option("address", address, "domain:bus:device.function")->required();
  auto* unbind = app.add_subcommand("unbind-vfio", "Give a PCI function back to its kernel driver");
  unbind->add_option("address", address, "domain:bus:device.function")->required();

  CLI11_PARSE(app, argc, argv);
  if (trace_opt->count() > 0) demo.trace_path = trace_path;
  board.clock_hz = clock_mhz * 1e6;
  // The fast model by default; a waveform needs the checked one's trace code (so does $SGPU_FST,
  // which sim::model_for() honours; the AXI checker then stays off unless --checked).
  if (!board.fst_path.empty()) checked = true;
  board.model = checked ? sgpu::sim::SimModel::Checked : sgpu::sim::SimModel::Fast;
  board.check_axi = checked;
  for (const std::string& id : pci_ids) card.extra_ids.push_back(sgpu::pcie::parse_pci_id(id).value());
  sgpu::tb::set_board(registry, board);
  // pcie-sim runs the simulated board under the same transport (and its flags) as a card.
  simulated_card.transport = card.transport;
  sgpu::systemc::set_board(registry, board);
  for (const char* name : {"systemc", "systemc-model"}) {
    auto& platform = *registry.options<sgpu::systemc::PlatformConfig>(name);
    platform.quantum_cycles = quantum;
    platform.msi = msi;
  }

  try {
    if (*info) return sgpu::cli::run_info(common);
    if (*demo_cmd) return sgpu::cli::run_demo(common, demo);
    if (*disasm_cmd) return sgpu::cli::run_disasm(disasm);
    if (*list) return sgpu::cli::run_list(common, list_all);
    if (*bind) return sgpu::cli::run_bind(common, address, true);
    if (*unbind) return sgpu::cli::run_bind(common, address, false);
  } catch (const std::exception& e) {
    fmt::print(stderr, "sgpu: internal error: {}\n", e.what());
    return 3;
  }
  return 2;
}
