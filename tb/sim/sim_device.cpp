#include "sim/sim_device.hpp"

#include <sstream>
#include <type_traits>

#include <verilated.h>

#include "Vsgpu_top.h"
#include "common/axi_verilator.hpp"
#include "common/sim_clock.hpp"

namespace sgpu::sim {
namespace {

/// Longest an MMIO access may take before the register slave counts as hung.
constexpr std::uint64_t kMmioTimeoutCycles = 1000;
/// Cycles of reset at start-up.
constexpr unsigned kResetCycles = 8;

tb::AxiMemoryModel::Config memory_config(const SimConfig& c) {
  tb::AxiMemoryModel::Config m;
  // The model's data port is QData or VlWide<N>: its size is the bus width in bytes.
  m.data_bytes = sizeof(Vsgpu_top::m_axi_rdata);
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

/// One AXI4-Lite access in progress. The register slave sees valid/ready handshakes exactly as a
/// PCIe-to-AXI bridge would drive them.
struct LiteAccess {
  bool write = false;
  bool addr_done = false;
  bool data_done = false;  // writes only
  bool done = false;
  std::uint32_t rdata = 0;
  std::uint8_t resp = 0;
};

struct SimDevice::Impl {
  explicit Impl(SimConfig c)
      : config(std::move(c)),
        context(std::make_unique<VerilatedContext>()),
        memory_model(memory, memory_config(config)) {}

  SimConfig config;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vsgpu_top> top;
  std::unique_ptr<tb::Trace<Vsgpu_top>> trace;
  tb::HostMemory memory;
  tb::AxiMemoryModel memory_model;
  tb::AxiChecker checker;
  tb::AxiManagerOut sampled{};
  std::uint64_t cycle = 0;
  LiteAccess* lite = nullptr;

  void dump(std::uint64_t time) { trace->dump(time); }

  // One clock cycle in the order every harness uses: drive, settle, sample, edge, model edge.
  void tick() {
    tb::drive_axi_read(*top, memory_model.outputs());
    tb::drive_axi_write(*top, memory_model.outputs());
    top->clk_i = 0;
    top->eval();
    dump(2 * cycle);

    tb::sample_axi_read(*top, sampled);
    tb::sample_axi_write(*top, sampled);
    // Bus rules apply out of reset only.
    if (config.check_axi && top->rst_ni) {
      checker.tick(sampled, memory_model.outputs());
      if (!checker.ok()) throw SimError("AXI protocol violation on the host-memory port: " + checker.violations().front());
    }
    bool aw_fire = false, w_fire = false, b_fire = false, ar_fire = false, r_fire = false;
    if (lite) {
      aw_fire = top->s_axil_awvalid && top->s_axil_awready;
      w_fire = top->s_axil_wvalid && top->s_axil_wready;
      b_fire = top->s_axil_bvalid && top->s_axil_bready;
      ar_fire = top->s_axil_arvalid && top->s_axil_arready;
      r_fire = top->s_axil_rvalid && top->s_axil_rready;
      if (b_fire) lite->resp = top->s_axil_bresp;
      if (r_fire) {
        lite->rdata = top->s_axil_rdata;
        lite->resp = top->s_axil_rresp;
      }
    }

    top->clk_i = 1;
    top->eval();
    dump(2 * cycle + 1);
    memory_model.tick(sampled);
    ++cycle;

    if (lite) {
      if (aw_fire || ar_fire) {
        lite->addr_done = true;
        top->s_axil_awvalid = 0;
        top->s_axil_arvalid = 0;
      }
      if (w_fire) {
        lite->data_done = true;
        top->s_axil_wvalid = 0;
      }
      if (b_fire || r_fire) {
        lite->done = true;
        top->s_axil_bready = 0;
        top->s_axil_rready = 0;
      }
    }
  }

  void run_access(LiteAccess& access, std::uint32_t offset) {
    lite = &access;
    for (std::uint64_t n = 0; !access.done; ++n) {
      if (n == kMmioTimeoutCycles) {
        lite = nullptr;
        throw SimError("MMIO " + std::string(access.write ? "write" : "read") + " at " + hex(offset) +
                       " got no response within " + std::to_string(kMmioTimeoutCycles) + " cycles");
      }
      tick();
    }
    lite = nullptr;
    if (access.resp != 0) {
      throw SimError("MMIO " + std::string(access.write ? "write" : "read") + " at " + hex(offset) +
                     " answered with AXI response " + std::to_string(access.resp) + " (no register there)");
    }
  }
};

SimDevice::SimDevice(SimConfig config) : impl_(std::make_unique<Impl>(std::move(config))) {
  auto& d = *impl_;
  d.context->randReset(2);  // every uninitialised flop starts random: reset bugs show up
  d.context->randSeed(static_cast<int>(d.config.seed & 0x7fffffff));
  d.context->assertOn(true);
  d.top = std::make_unique<Vsgpu_top>(d.context.get(), "sgpu_top");
  d.trace = std::make_unique<tb::Trace<Vsgpu_top>>(*d.top, d.config.fst_path);

  // Inputs start random under --x-initial unique: the register port must start idle.
  auto& t = *d.top;
  t.s_axil_awvalid = 0;
  t.s_axil_wvalid = 0;
  t.s_axil_bready = 0;
  t.s_axil_arvalid = 0;
  t.s_axil_rready = 0;
  // A real falling edge of the asynchronous reset, so every flop is reset before the first clock.
  d.top->clk_i = 0;
  d.top->rst_ni = 1;
  d.top->eval();
  d.top->rst_ni = 0;
  d.top->eval();
  for (unsigned i = 0; i < kResetCycles; ++i) d.tick();
  d.top->rst_ni = 1;
  d.tick();
}

SimDevice::~SimDevice() {
  impl_->trace.reset();  // closes the waveform before the model goes
  impl_->top->final();
}

std::uint32_t SimDevice::mmio_read32(std::uint32_t offset) {
  auto& top = *impl_->top;
  LiteAccess access;
  top.s_axil_araddr = static_cast<std::remove_reference_t<decltype(top.s_axil_araddr)>>(offset);
  top.s_axil_arprot = 0;
  top.s_axil_arvalid = 1;
  top.s_axil_rready = 1;
  impl_->run_access(access, offset);
  return access.rdata;
}

void SimDevice::mmio_write32(std::uint32_t offset, std::uint32_t value) {
  auto& top = *impl_->top;
  LiteAccess access;
  access.write = true;
  top.s_axil_awaddr = static_cast<std::remove_reference_t<decltype(top.s_axil_awaddr)>>(offset);
  top.s_axil_awprot = 0;
  top.s_axil_awvalid = 1;
  top.s_axil_wdata = value;
  top.s_axil_wstrb = 0xf;
  top.s_axil_wvalid = 1;
  top.s_axil_bready = 1;
  impl_->run_access(access, offset);
}

tb::HostMemory& SimDevice::memory() { return impl_->memory; }

bool SimDevice::irq() const { return impl_->top->irq_o; }

void SimDevice::step(std::uint64_t cycles) {
  for (std::uint64_t i = 0; i < cycles; ++i) impl_->tick();
}

bool SimDevice::run_until_irq(std::uint64_t max_cycles) {
  for (std::uint64_t i = 0; i < max_cycles && !impl_->top->irq_o; ++i) impl_->tick();
  return impl_->top->irq_o;
}

std::uint64_t SimDevice::cycle() const { return impl_->cycle; }

const SimConfig& SimDevice::config() const { return impl_->config; }

const tb::AxiMemoryModel& SimDevice::memory_port() const { return impl_->memory_model; }

tb::AxiMemoryModel& SimDevice::memory_port() { return impl_->memory_model; }

}  // namespace sgpu::sim
