// The demo workload on the TLM-2.0 platform against the plain simulator. Prints one JSON object
// (see cmake/SgpuBench.cmake):
//   tlm_vs_sim_wall_ratio     wall time of the demo on `systemc` (the Verilated RTL inside the TLM
//                             device, temporal decoupling at the default quantum) / on `sim`, the
//                             same program, back to back; target <= 1.25
//   tlm_model_vs_sim_speedup  wall time on `sim` / on `systemc-model` (the reference model inside)
//   tlm_quantum_cycles        the default quantum (core cycles) the systemc backends use
// SystemC elaborates once per process, so every run is a child process of this program
// (`bench_systemc --run <backend> [--quantum N]` prints that run's wall seconds). Each backend
// runs kRuns times and the fastest run counts (the machine is shared and noisy).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>
#include <string>

#include <nlohmann/json.hpp>

#include "backends/backends.hpp"
#include "sgpu/sched/runtime.hpp"
#include "systemc/backend.hpp"
#include "systemc/platform.hpp"
#include "workload.hpp"

namespace {

constexpr int kRuns = 3;

// One demo on `backend` (the default board, as `sgpu demo`); prints its wall seconds.
int run_one(const char* backend, unsigned quantum) {
  sgpu::TransportRegistry registry;
  if (!sgpu::tb::register_backends(registry) || !sgpu::systemc::register_backends(registry)) return 1;
  for (const char* name : {"systemc", "systemc-model"}) {
    if (quantum != 0) registry.options<sgpu::systemc::PlatformConfig>(name)->quantum_cycles = quantum;
  }
  const auto t0 = std::chrono::steady_clock::now();
  auto t = registry.open(backend);
  if (!t) return std::fprintf(stderr, "%s\n", to_string(t.error()).c_str()), 1;
  sgpu::sched::RuntimeOptions ro;
  sgpu::demo::configure_scheduler(ro.scheduler);  // as `sgpu demo`
  auto rt = sgpu::sched::Runtime::open(std::move(*t), ro);
  if (!rt) return std::fprintf(stderr, "%s\n", to_string(rt.error()).c_str()), 1;
  auto r = sgpu::demo::run_workload(**rt, {});
  if (!r) return std::fprintf(stderr, "%s\n", to_string(r.error()).c_str()), 1;
  if (!r->copies_ok || !r->hang_recovered) return std::fprintf(stderr, "%s: the demo failed its checks\n", backend), 1;
  std::printf("%.6f\n", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return 0;
}

// The fastest of kRuns child runs, in seconds (negative on failure).
double fastest(const char* self, const char* backend) {
  double best = -1;
  for (int i = 0; i < kRuns; ++i) {
    const std::string cmd = std::string("'") + self + "' --run " + backend;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) return -1;
    double s = -1;
    if (std::fscanf(p, "%lf", &s) != 1) s = -1;
    if (pclose(p) != 0 || s <= 0) return -1;
    best = best < 0 ? s : std::min(best, s);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc >= 3 && std::strcmp(argv[1], "--run") == 0) {
    const unsigned quantum = argc >= 5 && std::strcmp(argv[3], "--quantum") == 0 ? static_cast<unsigned>(std::stoul(argv[4])) : 0;
    return run_one(argv[2], quantum);
  }
  // The children inherit this: the SystemC banner would land in the numbers' pipe.
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  const char* self = "/proc/self/exe";
  char path[4096];
  const ssize_t n = readlink(self, path, sizeof path - 1);
  if (n <= 0) return 1;
  path[n] = '\0';
  // Interleaved, so that a slow phase of the machine hits every backend alike.
  const double sim = fastest(path, "sim");
  const double tlm = fastest(path, "systemc");
  const double tlm_model = fastest(path, "systemc-model");
  if (sim <= 0 || tlm <= 0 || tlm_model <= 0) return std::fprintf(stderr, "bench_systemc: a demo run failed\n"), 1;
  nlohmann::json out;
  out["tlm_vs_sim_wall_ratio"] = tlm / sim;
  out["tlm_model_vs_sim_speedup"] = sim / tlm_model;
  out["tlm_quantum_cycles"] = sgpu::systemc::kDefaultQuantumCycles;
  std::printf("%s\n", out.dump().c_str());
  std::fprintf(stderr, "bench_systemc: demo wall time sim %.3f s, systemc %.3f s, systemc-model %.3f s\n", sim, tlm,
               tlm_model);
  return 0;
}
