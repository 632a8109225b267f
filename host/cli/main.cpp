// sgpu: command-line front end of libsgpu.
//
//   sgpu info                  what the device reports (ID, capabilities, segments)
//   sgpu demo                  the demo workload through the driver stack; writes the frame as a PNG
//   sgpu list                  PCI functions that may be a softgpu card (libpciaccess)
//   sgpu bind-vfio <address>   hand a card to vfio-pci (unbind-vfio gives it back)
//
//   --backend pcie[:<address>] drives a card (docs/pcie.md); pcie-sim the same code on the simulation
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli.hpp"

int main(int argc, char** argv) {
  using sgpu::cli::CommonOptions;
  CommonOptions common;
  sgpu::cli::DemoOptions demo;

  CLI::App app{"sgpu: drive a softgpu (the simulated RTL by default) through libsgpu"};
  app.require_subcommand(1);
  app.fallthrough();  // common options may also follow the subcommand
  app.add_option("--backend", common.backend,
                 "Transport backend: sim (Verilated RTL), model (C++ reference model), pcie[:<address>] (a card, "
                 "docs/pcie.md), pcie-sim (the pcie transport over the simulated card), mock")
      ->capture_default_str();
  app.add_flag("--unsafe-no-iommu", common.pcie.unsafe_no_iommu,
               "pcie without an IOMMU: sysfs BAR, hugepages at physical addresses, fence polling. The card can "
               "then write anywhere in memory (docs/pcie.md)");
  std::vector<std::string> pci_ids;
  app.add_option("--pci-id", pci_ids, "Also treat vendor:device (hex, e.g. 10ee:7024) as a softgpu candidate");
  app.add_option("--dma-bits", common.pcie.dma_address_bits,
                 "pcie: the device's DMA address width if narrower than CAP_BUS says (e.g. 32 for a LitePCIe bridge)")
      ->check(CLI::Range(21u, 64u));
  app.add_option("--latency", common.transport.read_latency,
                 "Host-memory read latency of the simulated device, in core cycles")
      ->capture_default_str();
  app.add_option("--write-latency", common.transport.write_latency,
                 "Host-memory write latency of the simulated device, in core cycles")
      ->capture_default_str();
  app.add_option("--fst", common.transport.fst_path,
                 "Write an FST waveform of the simulated device to this file");
  app.add_option("--seed", common.transport.seed, "Seed for random stalls and X initialisation")
      ->capture_default_str();
  double clock_mhz = common.transport.clock_hz / 1e6;
  app.add_option("--clock-mhz", clock_mhz, "Core clock of the simulated device, MHz")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);

  auto* info = app.add_subcommand("info", "Print what the device reports: ID, capabilities, segments");
  auto* demo_cmd = app.add_subcommand(
      "demo", "Run the demo workload through the whole driver stack (render, copy and present contexts, an "
              "injected hang and its recovery), write the presented frame as a PNG with a report beside it, "
              "and check the frame against the C++ reference model");
  demo_cmd->add_option("--png", demo.png_path, "Where to write the presented frame (the report goes to .txt beside it)")
      ->capture_default_str();
  demo_cmd->add_flag("--no-hang", demo.no_hang, "Do not inject the hung submission");
  demo_cmd->add_flag("--no-reference", demo.no_reference, "Do not compare with the C++ reference model");
  demo_cmd->add_option("--tdr-us", demo.tdr_us, "TdrDelay: how long a packet may run, microseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(10u, 10000000u));
  demo_cmd->add_option("--timeout-ms", demo.timeout_ms, "Longest wait for one fence, milliseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(1u, 100000u));

  bool list_all = false;
  auto* list = app.add_subcommand("list", "List PCI functions that may be a softgpu card: address, IDs, driver, "
                                          "IOMMU group, link, and whether BAR0 answers with the softgpu magic");
  list->add_flag("--all", list_all, "Also list every other PCI function");
  std::string bind_address;
  auto* bind = app.add_subcommand("bind-vfio", "Hand a PCI function to vfio-pci (driver_override, unbind, probe)");
  bind->add_option("address", bind_address, "domain:bus:device.function")->required();
  auto* unbind = app.add_subcommand("unbind-vfio", "Give a PCI function back to its kernel driver");
  unbind->add_option("address", bind_address, "domain:bus:device.function")->required();

  CLI11_PARSE(app, argc, argv);
  for (const std::string& id : pci_ids) {
    unsigned v = 0, d = 0;
    char tail = 0;
    if (std::sscanf(id.c_str(), "%x:%x%c", &v, &d, &tail) != 2 || v > 0xffff || d > 0xffff) {
      fmt::print(stderr, "sgpu: --pci-id '{}' is not vendor:device in hex (e.g. 10ee:7024)\n", id);
      return 2;
    }
    common.pcie.extra_ids.push_back({static_cast<std::uint16_t>(v), static_cast<std::uint16_t>(d)});
  }
  common.transport.clock_hz = clock_mhz * 1e6;

  try {
    if (*info) return sgpu::cli::run_info(common);
    if (*demo_cmd) return sgpu::cli::run_demo(common, demo);
    if (*list) return sgpu::cli::run_list(common, list_all);
    if (*bind) return sgpu::cli::run_bind(bind_address, true);
    if (*unbind) return sgpu::cli::run_bind(bind_address, false);
  } catch (const std::exception& e) {
    fmt::print(stderr, "sgpu: internal error: {}\n", e.what());
    return 3;
  }
  return 2;
}
