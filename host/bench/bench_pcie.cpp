// The pcie transport over the simulated card (pcie-sim), against the sim transport on the same RTL.
//
// Prints one JSON object (see cmake/SgpuBench.cmake):
//   pcie_submit_mmio_reads            register reads per submission on the submit path (Device::submit):
//                                     the target is 0, fences come from host memory
//   pcie_wait_mmio_reads_per_fence    register reads per submission while waiting for its fence
//                                     (the interrupt status, read once per MSI)
//   pcie_sim_submissions_per_s        submit + wait_fence round trips per wall second through the pcie
//                                     transport over the simulated card (MSI, DMA pool, liveness checks)
//   pcie_sim_vs_sim_speed             the same loop's speed over pcie-sim / over sim: the cost of the
//                                     layer above the seam (1.0 = free)
#include <chrono>
#include <cstdio>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "backends/backends.hpp"
#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

template <class T>
T check(sgpu::Result<T> r, const char* what) {
  if (!r) {
    fmt::print(stderr, "bench_pcie: {}: {}\n", what, to_string(r.error()));
    std::exit(1);
  }
  return std::move(r).value();
}

class Counting final : public sgpu::Transport {
 public:
  explicit Counting(std::unique_ptr<sgpu::Transport> t) : t_(std::move(t)) {}
  std::uint32_t read32(std::uint32_t o) override {
    ++reads;
    return t_->read32(o);
  }
  void write32(std::uint32_t o, std::uint32_t v) override { t_->write32(o, v); }
  sgpu::Result<sgpu::DmaMemory> alloc_dma(std::size_t b, std::size_t a) override { return t_->alloc_dma(b, a); }
  bool wait_irq(std::chrono::nanoseconds d) override { return t_->wait_irq(d); }
  std::chrono::nanoseconds now() override { return t_->now(); }
  std::string_view name() const override { return t_->name(); }
  std::uint64_t reads = 0;

 private:
  std::unique_ptr<sgpu::Transport> t_;
};

struct Run {
  double per_s = 0;
  double submit_reads = 0;
  double wait_reads = 0;
};

Run run(std::unique_ptr<sgpu::Transport> transport, int n) {
  auto owner = std::make_unique<Counting>(std::move(transport));
  Counting& cnt = *owner;
  sgpu::DeviceOptions o;
  o.gart = false;
  sgpu::Device dev = check(sgpu::Device::open(std::move(owner), o), "open device");
  auto slot = check(dev.transport().alloc_dma(4096), "alloc");
  auto buf = check(dev.transport().alloc_dma(4096), "alloc");
  sgpu::PacketWriter w(buf);
  if (!w.fence(slot.bus_addr(), 1, sgpu::abi::fence_flags::kValue64)) std::exit(1);
  std::uint64_t submit_reads = 0, wait_reads = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < n; ++i) {
    const auto r0 = cnt.reads;
    const auto f = check(dev.submit_next({&buf, 0, w.offset(), 0, 0}), "submit");
    const auto r1 = cnt.reads;
    if (auto s = dev.wait_fence(f, 10ms); !s) {
      fmt::print(stderr, "bench_pcie: wait: {}\n", to_string(s.error()));
      std::exit(1);
    }
    submit_reads += r1 - r0;
    wait_reads += cnt.reads - r1;
  }
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  return {n / secs, static_cast<double>(submit_reads) / n, static_cast<double>(wait_reads) / n};
}

}  // namespace

int main() {
  constexpr int kSubmissions = 2000;
  sgpu::TransportRegistry registry;  // default boards (latencies), as the sim benchmark
  if (auto s = sgpu::tb::register_backends(registry); !s) {
    fmt::print(stderr, "bench_pcie: {}\n", to_string(s.error()));
    return 1;
  }
  const Run pcie = run(check(registry.open("pcie-sim"), "open pcie-sim"), kSubmissions);
  const Run sim = run(check(registry.open("sim"), "open sim"), kSubmissions);
  nlohmann::json j;
  j["pcie_submit_mmio_reads"] = pcie.submit_reads;
  j["pcie_wait_mmio_reads_per_fence"] = pcie.wait_reads;
  j["pcie_sim_submissions_per_s"] = pcie.per_s;
  j["pcie_sim_vs_sim_speed"] = pcie.per_s / sim.per_s;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
