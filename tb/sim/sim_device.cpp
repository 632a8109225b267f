#include "sim/sim_device.hpp"

#include <sstream>
#include <type_traits>

#include <verilated.h>

#include "Vsgpu_top.h"
#include "common/axi_lite_master.hpp"
#include "common/axi_memory_agent.hpp"
#include "common/bench.hpp"

namespace sgpu::sim {
namespace {

constexpr std::uint64_t kMmioTimeoutCycles = tb::AxiLiteMaster<Vsgpu_top>::kTimeoutCycles;

tb::AxiMemoryModel::Config memory_config(const SimConfig& c) {
  tb::AxiMemoryModel::Config m;
  m.read_latency = c.read_latency;
  m.write_latency = c.write_latency;
  m.ar_ready_prob = c.memory_ready_prob;
  m.r_valid_prob = c.memory_ready_prob;
  m.aw_ready_prob = c.memory_ready_prob;
  m.w_ready_prob = c.memory_ready_prob;
  m.seed = c.seed;
  return m;
}

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

}  // namespace

struct SimDevice::Impl {
  explicit Impl(SimConfig c)
      : config(std::move(c)),
        bench({"sgpu_top", 2, config.seed, config.fst_path}),
        memory_port(bench.dut(), memory, memory_config(config), {config.check_axi, "axi"}),
        lite(bench.dut()) {
    bench.add(memory_port);
    bench.add(lite);
  }

  SimConfig config;
  tb::Bench<Vsgpu_top> bench;
  tb::HostMemory memory;
  tb::AxiMemoryAgent<Vsgpu_top> memory_port;
  tb::AxiLiteMaster<Vsgpu_top> lite;

  void tick() {
    bench.tick();
    if (!memory_port.checker().ok()) {
      throw SimError("AXI protocol violation on the host-memory port: " +
                     memory_port.checker().violations().front());
    }
  }

  // One register access: the clock runs until its response; a response that never comes or a
  // slave error is the simulated hardware's failure.
  std::uint32_t access(std::uint32_t offset) {
    const bool write = lite.write();
    for (std::uint64_t n = 0; !lite.done(); ++n) {
      if (n == kMmioTimeoutCycles) {
        lite.idle();
        throw SimError("MMIO " + std::string(write ? "write" : "read") + " at " + hex(offset) +
                       " got no response within " + std::to_string(kMmioTimeoutCycles) + " cycles");
      }
      tick();
    }
    if (lite.resp() != 0) {
      throw SimError("MMIO " + std::string(write ? "write" : "read") + " at " + hex(offset) +
                     " answered with AXI response " + std::to_string(lite.resp()) + " (no register there)");
    }
    return lite.rdata();
  }
};

SimDevice::SimDevice(SimConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  // A real falling edge of the asynchronous reset, so every flop is reset before the first clock.
  impl_->bench.reset(tb::kDeviceResetCycles, 1, /*with_agents=*/true);
}

SimDevice::~SimDevice() = default;

std::uint32_t SimDevice::mmio_read32(std::uint32_t offset) {
  impl_->lite.start_read(offset);
  return impl_->access(offset);
}

void SimDevice::mmio_write32(std::uint32_t offset, std::uint32_t value) {
  impl_->lite.start_write(offset, value);
  impl_->access(offset);
}

tb::HostMemory& SimDevice::memory() { return impl_->memory; }

bool SimDevice::irq() const { return impl_->bench.dut().irq_o; }

void SimDevice::step(std::uint64_t cycles) {
  for (std::uint64_t i = 0; i < cycles; ++i) impl_->tick();
}

bool SimDevice::run_until_irq(std::uint64_t max_cycles) {
  const auto& top = impl_->bench.dut();
  for (std::uint64_t i = 0; i < max_cycles && !top.irq_o; ++i) impl_->tick();
  return top.irq_o;
}

std::uint64_t SimDevice::cycle() const { return impl_->bench.cycle(); }

const SimConfig& SimDevice::config() const { return impl_->config; }

const tb::AxiMemoryModel& SimDevice::memory_port() const { return impl_->memory_port.model(); }

tb::AxiMemoryModel& SimDevice::memory_port() { return impl_->memory_port.model(); }

}  // namespace sgpu::sim
