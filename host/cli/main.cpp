// sgpu: command-line front end of libsgpu.
//
//   sgpu info                  what the device reports (ID, capabilities, segments)
//   sgpu demo                  the demo workload through the driver stack; writes the frame as a PNG
//
// The composition root: it owns the transport registry, adds the testbench's backends to
// libsgpu's own and binds the simulated board's options to the flags below.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "backends/backends.hpp"
#include "cli.hpp"
#include "sim/sim_device.hpp"

int main(int argc, char** argv) {
  using sgpu::cli::CommonOptions;
  sgpu::TransportRegistry registry;
  if (auto s = sgpu::tb::register_backends(registry); !s) {
    fmt::print(stderr, "sgpu: {}\n", to_string(s.error()));
    return 3;
  }
  sgpu::sim::SimConfig& board = *registry.options<sgpu::sim::SimConfig>("sim");
  CommonOptions common;
  common.registry = &registry;
  sgpu::cli::DemoOptions demo;

  std::string backends;
  for (const auto& b : registry.backends()) backends += fmt::format("\n  {:<6} {}", b.name, b.summary);
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
  app.add_option("--fst", board.fst_path, "Write an FST waveform of the simulated device to this file");
  app.add_option("--seed", board.seed, "Seed for random stalls and X initialisation")->capture_default_str();
  double clock_mhz = board.clock_hz / 1e6;
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
  board.clock_hz = clock_mhz * 1e6;

  try {
    if (*info) return sgpu::cli::run_info(common);
    if (*demo_cmd) return sgpu::cli::run_demo(common, demo);
  } catch (const std::exception& e) {
    fmt::print(stderr, "sgpu: internal error: {}\n", e.what());
    return 3;
  }
  return 2;
}
