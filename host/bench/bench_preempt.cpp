// Preemption benchmark on the Verilated design (fast model, the sim board's default 64-cycle
// reads, 250 MHz), through the whole host library (sched::Runtime, default SchedulerOptions:
// TdrDelay 2 s, quantum 2 ms). A low-priority context copies 64 MiB between two allocations of
// the memory segment (one command list: 256 COPY packets of 256 KiB); once the copy has held the
// engine for 3 ms (past the quantum) a priority-1 context submits one WRITE_DATA. Prints one
// JSON object (see cmake/SgpuBench.cmake), simulated time:
//   high_priority_latency_us  the high-priority submission: submit() -> wait() returned
//   preempt_to_resume_us      the preemption request -> the copy at the head of the ring again,
//                             running from the packet it stopped at
//   preempt_answer_us         the preemption request -> DMA_PREEMPTED handled
// and checks that the copy completes with the right bytes (exit 1 otherwise).
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_must.hpp"
#include "backends/backends.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "sim/sim_device.hpp"

namespace {

using namespace sgpu;
using namespace std::chrono_literals;

using bench::must;

constexpr std::uint32_t kCopyBytes = 64u << 20;
double us(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1000.0; }
std::uint32_t word(std::uint32_t i) { return i * 2654435761u; }

}  // namespace

int main() {
  TransportRegistry registry;
  must(tb::register_backends(registry), "register the testbench's backends");
  sim::SimConfig& board = *registry.options<sim::SimConfig>("sim");
  board.model = sim::SimModel::Fast;
  board.check_axi = false;
  sched::RuntimeOptions o;
  o.kernel_window_pages = sched::kernel_window_pages_for(8);
  auto rt = must(sched::Runtime::open(must(registry.open("sim"), "open sim"), o), "runtime");
  Transport& t = rt->device().transport();
  auto& s = rt->scheduler();
  auto dev = must(rt->adapter().create_device({}), "device");
  auto low = must(rt->create_context(dev), "low context");
  auto high = must(rt->create_context(dev), "high context");
  must(s.set_priority(high->get(), 1), "priority");

  std::vector<kmd::Allocation> al;
  for (std::uint32_t bytes : {kCopyBytes, kCopyBytes, 4096u}) {
    const auto i = kmd::AllocationInfo::placed(bytes, kmd::SegmentSet::of(1), 1, kmd::AllocationInfoFlags::kCpuVisible);
    al.push_back(must(dev.create_allocation(i), "allocation"));
  }
  {
    auto* w = static_cast<std::uint32_t*>(must(al[0].lock(), "lock source"));
    for (std::uint32_t i = 0; i < kCopyBytes / 4; ++i) w[i] = word(i);
    must(al[0].unlock(), "unlock source");
  }
  // Everything resident before the measurement.
  umd::CommandList warm;
  must(warm.copy(al[0].handle(), 0, al[2].handle(), 0, 4096), "record");
  must(warm.fill(al[1].handle(), 0, 4096, 0), "record");
  must(s.wait(must(s.submit(low->get(), warm), "submit warm-up"), 10s), "warm-up");

  umd::CommandList copy;
  must(copy.copy(al[0].handle(), 0, al[1].handle(), 0, kCopyBytes), "record copy");
  const SubmissionId c = must(s.submit(low->get(), copy), "submit copy");
  if (auto r = s.wait(c, 3ms); r || r.error().code != Errc::Timeout) {
    fmt::print(stderr, "bench_preempt: the 64 MiB copy finished within 3 ms\n");
    return 1;
  }
  umd::CommandList one;
  const std::uint32_t v = 0x600d;
  must(one.write_data(al[2].handle(), 0, &v, 1), "record");
  const auto t0 = t.now();
  const SubmissionId h = must(s.submit(high->get(), one), "submit high");
  must(s.wait(h, 100ms), "high-priority wait");
  const auto latency = t.now() - t0;
  if (must(s.query(c), "query") != sched::FenceStatus::Pending) {
    fmt::print(stderr, "bench_preempt: the copy was not running any more\n");
    return 1;
  }
  must(s.wait(c, 10s), "copy wait");
  const auto& pt = s.preemption_times();
  if (s.counters().priority_preemptions != 1 || pt.resumed != 1 || s.counters().recoveries != 0) {
    fmt::print(stderr, "bench_preempt: expected one preemption, resumed, no recovery ({} / {} / {})\n",
               s.counters().priority_preemptions, pt.resumed, s.counters().recoveries);
    return 1;
  }
  {
    const auto* w = static_cast<const std::uint32_t*>(must(al[1].lock(), "lock destination"));
    for (std::uint32_t i = 0; i < kCopyBytes / 4; ++i)
      if (w[i] != word(i)) {
        fmt::print(stderr, "bench_preempt: the copy's word {} is {:#x}, not {:#x}\n", i, w[i], word(i));
        return 1;
      }
    must(al[1].unlock(), "unlock destination");
  }
  nlohmann::json j;
  j["high_priority_latency_us"] = us(latency);
  j["preempt_to_resume_us"] = us(pt.last_request_to_resume);
  j["preempt_answer_us"] = us(pt.last_request_to_answer);
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
