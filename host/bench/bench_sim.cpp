// Simulation-speed benchmark of the whole Verilated design driven by libsgpu.
//
// Prints one JSON object (see cmake/SgpuBench.cmake); the fast model (sim::SimModel::Fast):
//   sim_cycles_per_second        simulated core cycles per wall second while the engine streams
//                                submissions (ring kept full of 4 KiB DMA buffers)
//   sim_cycles_per_second_idle   the same with the engine idle (the clock just runs)
//   submissions_per_s_sim        submissions retired per simulated second at the model's clock
//   sim_host_library_wall_share  share of the busy run's wall time spent outside the transport,
//                                i.e. in libsgpu and this program rather than in the simulator
#include <chrono>
#include <cstdio>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backends.hpp"
#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/transport/timed.hpp"
#include "sim/sim_device.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

[[noreturn]] void die(std::string_view what, const sgpu::Error& e) {
  fmt::print(stderr, "bench_sim: {}: {}\n", what, to_string(e));
  std::exit(1);
}

template <class T>
T check(sgpu::Result<T> r, std::string_view what) {
  if (!r) die(what, r.error());
  return std::move(r).value();
}
void check(sgpu::Status s, std::string_view what) {
  if (!s) die(what, s.error());
}

double seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

int main() {
  sgpu::TransportRegistry registry;
  check(sgpu::tb::register_backends(registry), "register the testbench's backends");
  sgpu::sim::SimConfig& options = *registry.options<sgpu::sim::SimConfig>("sim");  // 64-cycle reads, 250 MHz
  // The fast model, as `sgpu` runs it by default (bench_sim_instructions compares the checked one).
  options.model = sgpu::sim::SimModel::Fast;
  options.check_axi = false;
  // Idle skipping off: these keys are the model's speed per simulated cycle (with skipping, the
  // idle clock would run at whatever rate a skip costs; its effect on a workload is
  // bench_sim_instructions' sim_instructions_per_cycle).
  options.idle_skip = sgpu::sim::IdleSkip::Off;
  auto timed_owner = std::make_unique<sgpu::TimedTransport>(check(registry.open("sim"), "open sim"));
  sgpu::TimedTransport* timed = timed_owner.get();
  sgpu::DeviceOptions dopt;
  dopt.ring_log2_entries = 5;
  sgpu::Device dev = check(sgpu::Device::open(std::move(timed_owner), dopt), "open device");
  sgpu::Transport& t = dev.transport();

  // ---- idle: the clock runs, nothing to do
  constexpr std::uint64_t kIdleCycles = 1'000'000;
  const auto idle_timeout =
      std::chrono::nanoseconds(static_cast<std::int64_t>(static_cast<double>(kIdleCycles) * 1e9 / options.clock_hz));
  const std::uint64_t i0 = check(dev.cycle_counter(), "cycle counter");
  const auto w0 = Clock::now();
  (void)t.wait_irq(idle_timeout);
  const auto w1 = Clock::now();
  const std::uint64_t i1 = check(dev.cycle_counter(), "cycle counter");
  const double idle_cps = static_cast<double>(i1 - i0) / seconds(w1 - w0);

  // ---- busy: a ring full of 4 KiB buffers (WRITE_DATA + NOP padding + FENCE)
  constexpr unsigned kBuffers = 8;
  constexpr unsigned kSubmissions = 800;
  auto target = check(t.alloc_dma(kBuffers * 256), "alloc target");
  std::vector<sgpu::DmaMemory> buffers;
  std::vector<std::uint32_t> ends;
  for (unsigned b = 0; b < kBuffers; ++b) {
    auto buf = check(t.alloc_dma(4096), "alloc buffer");
    sgpu::PacketWriter w(buf);
    std::vector<std::uint32_t> data(60, 0x1000u + b);
    check(w.write_data(target.bus_addr() + 256u * b, data.data(), data.size()), "write_data");
    check(w.nop(static_cast<std::uint32_t>(w.remaining() / 4 - 5)), "nop");
    check(w.fence(target.bus_addr() + 256u * b + 240, b, 0), "fence");
    ends.push_back(w.offset());
    buffers.push_back(std::move(buf));
  }
  const std::uint64_t b0 = check(dev.cycle_counter(), "cycle counter");
  const auto inside0 = timed->inside();
  const auto bw0 = Clock::now();
  sgpu::RingFence last;
  for (unsigned s = 0; s < kSubmissions; ++s) {
    const unsigned b = s % kBuffers;
    for (;;) {
      // Driver-built buffers in system memory: privileged (system-physical with the GART on).
      auto fence = dev.submit_next({&buffers[b], 0, ends[b], 0, sgpu::abi::ring_flags::kPrivileged});
      if (fence) {
        last = *fence;
        break;
      }
      if (fence.error().code != sgpu::Errc::Busy) die("submit", fence.error());
      check(dev.wait_fence(dev.completed_fence().next(), 10ms), "wait for ring space");
    }
  }
  check(dev.wait_fence(last, 100ms), "wait for the last fence");
  const auto bw1 = Clock::now();
  const std::uint64_t b1 = check(dev.cycle_counter(), "cycle counter");
  const double busy_wall = seconds(bw1 - bw0);
  const double busy_cycles = static_cast<double>(b1 - b0);

  nlohmann::json out;
  out["sim_cycles_per_second"] = busy_cycles / busy_wall;
  out["sim_cycles_per_second_idle"] = idle_cps;
  out["submissions_per_s_sim"] = kSubmissions / (busy_cycles / options.clock_hz);
  out["sim_host_library_wall_share"] = 1.0 - seconds(timed->inside() - inside0) / busy_wall;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
