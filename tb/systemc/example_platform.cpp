// sgpu_platform: the example virtual platform (docs/systemc.md walks through it). sc_main builds
// the platform (host CPU, interconnect, host memory, the softgpu with the RTL or the reference
// model inside) and a host thread that runs the driver stack and the demo workload literally
// inside the simulation, then checks every presented frame against the reference model.
//
//   sgpu_platform [--model] [--msi] [--quantum CYCLES] [--png PATH]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include <systemc>

#include "backends/backends.hpp"
#include "png.hpp"
#include "reference.hpp"
#include "sgpu/sched/runtime.hpp"
#include "systemc/platform.hpp"
#include "systemc/systemc_transport.hpp"
#include "workload.hpp"

namespace {

using sgpu::systemc::Platform;
using sgpu::systemc::PlatformConfig;

// What the host thread found; sc_main reports it after the simulation.
struct Outcome {
  int status = EXIT_FAILURE;
  std::string message;
};

// The host CPU's software: libsgpu and the demo workload, on the platform's transport.
void host_software(std::shared_ptr<Platform> platform, const std::string& png, Outcome& out) {
  namespace demo = sgpu::demo;
  // Hang detection as `sgpu demo` sets it: a packet may run 1 ms of device time (TdrDelay).
  sgpu::sched::RuntimeOptions ro;
  sgpu::demo::configure_scheduler(ro.scheduler);  // as `sgpu demo`
  auto rt = sgpu::sched::Runtime::open(sgpu::systemc::make_platform_transport(platform), ro);
  if (!rt) {
    out.message = "driver stack: " + to_string(rt.error());
    return;
  }
  demo::WorkloadOptions wo;
  auto report = demo::run_workload(**rt, wo);
  if (!report) {
    out.message = "workload: " + to_string(report.error());
    return;
  }
  const demo::SceneGeometry& g = wo.geometry;
  if (auto s = demo::write_png(png, report->frame.data(), g.width, g.height, g.pitch()); !s) {
    out.message = to_string(s.error());
    return;
  }
  // The reference: the C++ model outside the platform, through the testbench's "model" backend.
  sgpu::TransportRegistry registry;
  if (auto s = sgpu::tb::register_backends(registry); !s) {
    out.message = to_string(s.error());
    return;
  }
  auto ref = demo::reference_frames(g, registry, wo.frames);
  if (!ref) {
    out.message = "reference: " + to_string(ref.error());
    return;
  }
  bool same = ref->size() == report->frames.size();
  for (std::size_t i = 0; same && i < ref->size(); ++i) same = (*ref)[i] == report->frames[i].bytes;
  out.status = same && report->copies_ok && report->hang_recovered ? EXIT_SUCCESS : EXIT_FAILURE;
  out.message = std::to_string(report->frames.size()) + " frames " + (same ? "identical to" : "DIFFER from") +
                " the reference model's; copies " +
                (report->copies_ok ? "intact" : "CORRUPT") + "; hang " +
                (report->hang_recovered ? "recovered" : "NOT recovered") + "; " + std::to_string(report->cycles) +
                " device cycles in " + sc_core::sc_time_stamp().to_string() + " of SystemC time";
}

}  // namespace

int sc_main(int argc, char** argv) {
  PlatformConfig config;  // the RTL inside, the level interrupt, the default quantum
  std::string png = "sgpu-platform.png";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--model") {
      config.implementation = PlatformConfig::Implementation::Model;
    } else if (a == "--msi") {
      config.msi = true;
    } else if (a == "--quantum" && i + 1 < argc) {
      config.quantum_cycles = static_cast<unsigned>(std::strtoul(argv[++i], nullptr, 0));
    } else if (a == "--png" && i + 1 < argc) {
      png = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--model] [--msi] [--quantum CYCLES] [--png PATH]\n", argv[0]);
      return 2;
    }
  }

  auto platform = std::make_shared<Platform>("platform", config);
  Outcome outcome;
  // The host thread needs a real stack: the whole driver stack runs on it.
  sc_core::sc_spawn_options host;
  host.set_stack_size(16 << 20);
  sc_core::sc_spawn(
      [&] {
        host_software(platform, png, outcome);
        sc_core::sc_stop();
      },
      "host_software", &host);
  sc_core::sc_start();

  std::printf("sgpu_platform (%s inside, %s, quantum %u cycles): %s\n", platform->device().implementation().data(),
              config.msi ? "MSI" : "interrupt line", config.quantum_cycles, outcome.message.c_str());
  return outcome.status;
}
