// sgpu: command-line front end of libsgpu.
//
//   sgpu info                  what the device reports (ID, capabilities, segments)
//   sgpu demo                  the demo workload through the driver stack; writes the frame as a PNG
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
