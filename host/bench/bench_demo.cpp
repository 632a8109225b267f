// The demo workload as a benchmark, on the fast model (sim::SimModel::Fast, as `sgpu demo`).
// Prints one JSON object (see cmake/SgpuBench.cmake):
//   host_wall_share              fraction of the demo's wall time spent in the host library (and
//                                this program) rather than inside the transport, i.e. the
//                                Verilated model; the brief's target is <= 0.10
//   demo_sim_cycles_per_second   simulated device cycles per wall second over the demo
//   demo_cycles                  device cycles the demo workload takes (hang recovery included)
//   sched_submissions_per_s_sim  small command lists (one 256-byte FILL each) through the whole
//                                path (Render, residency, Patch, SubmitCommand, interrupt,
//                                retire) per simulated second, 512 in a row on one context
//   sched_submit_wall_us         wall time per such submission spent in libsgpu (outside the
//                                simulator): Render, residency, Patch, SubmitCommand, ISR, retire
//   trace_off_overhead           the timeline trace compiled in but off (Scheduler::set_trace not
//                                called: every trace point is a null test): host wall time per
//                                small submission in rounds A / the same in rounds B, the two
//                                interleaved (A B A B ...), medians. Off means no code path
//                                changes, so this is the noise band "within noise" is measured
//                                against (1.0 +- noise); the device side is exact: DMA buffers and
//                                register traffic are byte for byte those of an untraced run
//                                (the exact-traffic tests), so simulated time is unchanged
//   trace_on_overhead            host wall time per small submission with tracing on / off
//                                (interleaved rounds, medians): recording, the timestamp bracket
//                                and the calibration reads at each interrupt
//   trace_on_sim_overhead        simulated time of the same submissions on / off (deterministic:
//                                the TIMESTAMP packets and the cycle-counter reads)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include <nlohmann/json.hpp>

#include "backends/backends.hpp"
#include "sim/sim_device.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/trace/timeline.hpp"
#include "sgpu/transport/timed.hpp"
#include "sgpu/umd/command_list.hpp"
#include "workload.hpp"

int main() {
  using Clock = std::chrono::steady_clock;
  sgpu::TransportRegistry registry;
  if (auto s = sgpu::tb::register_backends(registry); !s) return std::fprintf(stderr, "%s\n", to_string(s.error()).c_str()), 1;
  // The fast model, as `sgpu demo` runs it.
  sgpu::sim::SimConfig& board = *registry.options<sgpu::sim::SimConfig>("sim");
  board.model = sgpu::sim::SimModel::Fast;
  board.check_axi = false;
  auto t = registry.open("sim");
  if (!t) return std::fprintf(stderr, "%s\n", to_string(t.error()).c_str()), 1;
  auto timed_owner = std::make_unique<sgpu::TimedTransport>(std::move(*t));
  sgpu::TimedTransport& timed = *timed_owner;
  sgpu::sched::RuntimeOptions ro;
  sgpu::demo::configure_scheduler(ro.scheduler);  // as `sgpu demo`
  auto rt = sgpu::sched::Runtime::open(std::move(timed_owner), ro);
  if (!rt) return std::fprintf(stderr, "%s\n", to_string(rt.error()).c_str()), 1;
  const auto inside0 = timed.inside();
  const auto t0 = Clock::now();
  auto r = sgpu::demo::run_workload(**rt, {});
  const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!r) return std::fprintf(stderr, "%s\n", to_string(r.error()).c_str()), 1;
  const double inside = std::chrono::duration<double>(timed.inside() - inside0).count();
  // Small submissions through the scheduler.
  constexpr int kSmall = 512;
  auto dev = (*rt)->adapter().create_device({});
  if (!dev) return std::fprintf(stderr, "%s\n", to_string(dev.error()).c_str()), 1;
  auto ctx = (*rt)->create_context(*dev);
  if (!ctx) return std::fprintf(stderr, "%s\n", to_string(ctx.error()).c_str()), 1;
  sgpu::kmd::AllocationInfo info;
  info.size = 64 * 1024;
  info.supported_read_segments = info.supported_write_segments = (*rt)->adapter().allocation_segments();
  auto target = dev->create_allocation(info);
  if (!target) return std::fprintf(stderr, "%s\n", to_string(target.error()).c_str()), 1;
  auto& sched = (*rt)->scheduler();
  sgpu::SubmissionId last;
  const auto sim0 = (*rt)->device().transport().now();
  const auto inside1 = timed.inside();
  const auto w0 = Clock::now();
  for (int i = 0; i < kSmall; ++i) {
    sgpu::umd::CommandList cl;
    if (!cl.fill(target->handle(), static_cast<std::uint32_t>(i % 256) * 256, 256, static_cast<std::uint32_t>(i)))
      return 1;
    auto f = sched.submit((*ctx)->get(), cl);
    if (!f) return std::fprintf(stderr, "%s\n", to_string(f.error()).c_str()), 1;
    last = *f;
  }
  if (!sched.wait(last, std::chrono::milliseconds(100))) return 1;
  const double small_wall = std::chrono::duration<double>(Clock::now() - w0).count();
  const double small_host = small_wall - std::chrono::duration<double>(timed.inside() - inside1).count();
  const double small_sim = std::chrono::duration<double>((*rt)->device().transport().now() - sim0).count();

  // Tracing: interleaved rounds of small submissions, each on a fresh context.
  constexpr int kRounds = 5, kPerRound = 128;
  sgpu::trace::Timeline timeline;
  std::vector<double> host_a, host_b, host_on, sim_off, sim_on;
  const auto round = [&](bool traced, std::vector<double>& host, std::vector<double>* sim) -> bool {
    auto c = (*rt)->create_context(*dev);
    if (!c) return false;
    if (traced && !sched.set_trace(&timeline)) return false;
    const auto s0 = (*rt)->device().transport().now();
    const auto in0 = timed.inside();
    const auto start = Clock::now();
    sgpu::SubmissionId id;
    for (int i = 0; i < kPerRound; ++i) {
      sgpu::umd::CommandList cl;
      if (!cl.fill(target->handle(), static_cast<std::uint32_t>(i % 256) * 256, 256, static_cast<std::uint32_t>(i)))
        return false;
      auto f = sched.submit((*c)->get(), cl);
      if (!f) return false;
      id = *f;
    }
    if (!sched.wait(id, std::chrono::milliseconds(100))) return false;
    const double w = std::chrono::duration<double>(Clock::now() - start).count();
    host.push_back((w - std::chrono::duration<double>(timed.inside() - in0).count()) / kPerRound);
    if (sim) sim->push_back(std::chrono::duration<double>((*rt)->device().transport().now() - s0).count());
    return !traced || sched.set_trace(nullptr);
  };
  for (int i = 0; i < kRounds; ++i)
    if (!round(false, host_a, &sim_off) || !round(true, host_on, &sim_on) || !round(false, host_b, nullptr))
      return std::fprintf(stderr, "trace rounds failed\n"), 1;
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };

  nlohmann::json out;
  out["trace_off_overhead"] = median(host_a) / median(host_b);
  out["trace_on_overhead"] = median(host_on) / median(host_a);
  out["trace_on_sim_overhead"] = median(sim_on) / median(sim_off);
  out["sched_submissions_per_s_sim"] = kSmall / small_sim;
  out["sched_submit_wall_us"] = 1e6 * small_host / kSmall;
  out["host_wall_share"] = 1.0 - inside / wall;
  out["demo_sim_cycles_per_second"] = static_cast<double>(r->cycles) / wall;
  out["demo_cycles"] = r->cycles;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
