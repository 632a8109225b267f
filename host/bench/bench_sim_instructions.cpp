// Host instructions per simulated device cycle, counted by valgrind's callgrind (an instruction
// count does not depend on the machine's load, unlike the wall-clock speed keys of bench_sim and
// bench_demo). Prints one JSON object (see cmake/SgpuBench.cmake):
//   sim_instructions_per_cycle          the demo workload on the fast model (what `sgpu demo`,
//                                       the benchmarks and co-simulation run): instructions
//                                       executed inside the workload / its device cycles
//                                       (idle skipping on, as there: skipped cycles count as
//                                       simulated cycles)
//   sim_instructions_per_active_cycle   the same instructions / the cycles actually evaluated
//                                       (the skipped ones left out): the model's cost per cycle
//   sim_skipped_cycle_share             skipped cycles / the workload's device cycles
//   sim_instructions_per_cycle_checked  the same on the checked model with the AXI checker (what
//                                       the tests and `sgpu --checked` run; never skips)
// Without valgrind on PATH it prints `{}` (the keys are skipped) and says so on stderr.
//
// How: the program runs itself under `valgrind --tool=callgrind --collect-atstart=no
// --toggle-collect=sgpu_bench_measured_workload`, so only the workload is counted (not start-up,
// model construction and reset, nor tear-down), in a child given `--worker fast|checked`; the
// child prints the workload's device cycles and how many of them were skipped, the parent reads the instruction total from
// callgrind's output file. About 20 s (fast) + 35 s (checked) under callgrind.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backends.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_transport.hpp"
#include "workload.hpp"

namespace {

// The demo workload on a fresh device of the given model; its device cycles, or 0 on failure.
// The function callgrind counts (by name: keep it extern "C" and out of line).
extern "C" __attribute__((noinline)) std::uint64_t sgpu_bench_measured_workload(sgpu::sched::Runtime& rt) {
  auto r = sgpu::demo::run_workload(rt, {});
  if (!r) {
    std::fprintf(stderr, "bench_sim_instructions: %s\n", to_string(r.error()).c_str());
    return 0;
  }
  return r->cycles;
}

int worker(std::string_view model) {
  sgpu::TransportRegistry registry;
  if (auto s = sgpu::tb::register_backends(registry); !s) return std::fprintf(stderr, "%s\n", to_string(s.error()).c_str()), 1;
  sgpu::sim::SimConfig board = *registry.options<sgpu::sim::SimConfig>("sim");  // the registry's defaults
  const bool checked = model == "checked";
  board.model = checked ? sgpu::sim::SimModel::Checked : sgpu::sim::SimModel::Fast;
  board.check_axi = checked;
  // The device kept here too, for its count of skipped cycles.
  auto device = std::make_shared<sgpu::sim::SimDevice>(board);
  sgpu::sched::RuntimeOptions ro;  // as bench_demo and `sgpu demo`
  sgpu::demo::configure_scheduler(ro.scheduler);
  auto rt = sgpu::sched::Runtime::open(sgpu::sim::open_sim_transport_over(device), ro);
  if (!rt) return std::fprintf(stderr, "%s\n", to_string(rt.error()).c_str()), 1;
  const std::uint64_t skipped_before = device->skipped_cycles();
  const std::uint64_t cycles = sgpu_bench_measured_workload(**rt);
  if (cycles == 0) return 1;
  std::printf("%llu %llu\n", static_cast<unsigned long long>(cycles),
              static_cast<unsigned long long>(device->skipped_cycles() - skipped_before));
  return 0;
}

bool have_valgrind() { return std::system("command -v valgrind >/dev/null 2>&1") == 0; }

struct Measured {
  double per_cycle = 0;         ///< instructions / device cycles of the workload
  double per_active_cycle = 0;  ///< instructions / the cycles evaluated (skipped ones left out)
  double skipped_share = 0;     ///< skipped / device cycles
};

// Instructions per device cycle of one model, or nothing (with the reason on stderr).
std::optional<Measured> measure(const std::string& self, std::string_view model) {
  const auto out = std::filesystem::temp_directory_path() / fmt::format("sgpu_bench_callgrind.{}.{}.out", getpid(), model);
  const std::string cmd = fmt::format(
      "valgrind --tool=callgrind --callgrind-out-file='{}' --collect-atstart=no "
      "--toggle-collect=sgpu_bench_measured_workload '{}' --worker {} 2>/dev/null",
      out.string(), self, model);
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return std::nullopt;
  unsigned long long cycles = 0, skipped = 0;
  const int fields = std::fscanf(pipe, "%llu %llu", &cycles, &skipped);
  const int status = pclose(pipe);
  std::uint64_t instructions = 0;
  std::ifstream profile(out);
  for (std::string line; std::getline(profile, line);) {
    // "summary: <Ir>" (one event: instructions), or "totals:" in older formats.
    if (line.rfind("summary:", 0) == 0 || line.rfind("totals:", 0) == 0) instructions = std::stoull(line.substr(line.find(':') + 1));
  }
  std::error_code ignored;
  std::filesystem::remove(out, ignored);
  if (status != 0 || fields != 2 || cycles == 0 || skipped >= cycles || instructions == 0) {
    std::fprintf(stderr, "bench_sim_instructions: the %.*s run under callgrind failed (status %d)\n",
                 static_cast<int>(model.size()), model.data(), status);
    return std::nullopt;
  }
  const auto ir = static_cast<double>(instructions);
  return Measured{ir / static_cast<double>(cycles), ir / static_cast<double>(cycles - skipped),
                  static_cast<double>(skipped) / static_cast<double>(cycles)};
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 3 && std::string_view(argv[1]) == "--worker") return worker(argv[2]);
  nlohmann::json out = nlohmann::json::object();
  if (!have_valgrind()) {
    std::fprintf(stderr, "bench_sim_instructions: valgrind not found; sim_instructions_per_cycle skipped\n");
  } else {
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    const auto fast = measure(self, "fast");
    const auto checked = measure(self, "checked");
    if (!fast || !checked) return 1;
    out["sim_instructions_per_cycle"] = fast->per_cycle;
    out["sim_instructions_per_active_cycle"] = fast->per_active_cycle;
    out["sim_skipped_cycle_share"] = fast->skipped_share;
    out["sim_instructions_per_cycle_checked"] = checked->per_cycle;
  }
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
