// sgpu: command-line front end of libsgpu.
//
//   sgpu info                  what the device reports (ID, capabilities, segments)
//   sgpu demo                  submit a few DMA buffers to the simulated device and check them
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
  app.add_option("--backend", common.backend, "Transport backend: sim (Verilated RTL), model (C++ reference model), pcie, mock")
      ->capture_default_str();
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
      "demo", "Submit DMA buffers (WRITE_DATA, FENCE, NOP) to the device, wait for their fences, "
              "verify the data and report cycles");
  demo_cmd->add_option("-n,--submissions", demo.submissions, "Number of DMA buffers to submit")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000u));
  demo_cmd->add_option("--timeout-us", demo.timeout_us,
                       "Longest wait for one fence, microseconds of device time")
      ->capture_default_str()
      ->check(CLI::Range(1u, 10000000u));

  CLI11_PARSE(app, argc, argv);
  common.transport.clock_hz = clock_mhz * 1e6;

  try {
    if (*info) return sgpu::cli::run_info(common);
    if (*demo_cmd) return sgpu::cli::run_demo(common, demo);
  } catch (const std::exception& e) {
    fmt::print(stderr, "sgpu: internal error: {}\n", e.what());
    return 3;
  }
  return 2;
}
