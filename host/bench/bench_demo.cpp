// The demo workload as a benchmark. Prints one JSON object (see cmake/SgpuBench.cmake):
//   host_wall_share              fraction of the demo's wall time spent in the host library (and
//                                this program) rather than inside the transport, i.e. the
//                                Verilated model; the brief's target is <= 0.10
//   demo_sim_cycles_per_second   simulated device cycles per wall second over the demo
//   demo_cycles                  device cycles the demo workload takes (hang recovery included)
#include <chrono>
#include <cstdio>

#include <nlohmann/json.hpp>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/transport/timed.hpp"
#include "workload.hpp"

int main() {
  using Clock = std::chrono::steady_clock;
  auto t = sgpu::open_transport("sim", {});
  if (!t) return std::fprintf(stderr, "%s\n", to_string(t.error()).c_str()), 1;
  auto timed_owner = std::make_unique<sgpu::TimedTransport>(std::move(*t));
  sgpu::TimedTransport& timed = *timed_owner;
  sgpu::sched::RuntimeOptions ro;
  ro.scheduler.tdr_delay = std::chrono::milliseconds(1);
  ro.scheduler.preempt_timeout = std::chrono::microseconds(250);
  auto rt = sgpu::sched::Runtime::open(std::move(timed_owner), ro);
  if (!rt) return std::fprintf(stderr, "%s\n", to_string(rt.error()).c_str()), 1;
  const auto inside0 = timed.inside();
  const auto t0 = Clock::now();
  auto r = sgpu::demo::run_workload(**rt, {});
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!r) return std::fprintf(stderr, "%s\n", to_string(r.error()).c_str()), 1;
  const double inside = std::chrono::duration<double>(timed.inside() - inside0).count();
  nlohmann::json out;
  out["host_wall_share"] = 1.0 - inside / wall;
  out["demo_sim_cycles_per_second"] = static_cast<double>(r->cycles) / wall;
  out["demo_cycles"] = r->cycles;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
