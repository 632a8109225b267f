// Verilator's headers first: included after SystemC's they take the model for a --sc one
// (SYSTEMC_VERSION) and want a global sc_time_stamp(). This model is --cc: its time is ours.
#include <verilated.h>

#include "Vsgpu_top.h"
#include "common/sim_clock.hpp"

#include "systemc/rtl_device.hpp"

#include <sstream>
#include <type_traits>

#include <tlm_utils/tlm_quantumkeeper.h>

#include "common/axi_checker.hpp"
#include "common/axi_verilator.hpp"
#include "systemc/axi_tlm_bridge.hpp"

namespace sgpu::systemc {
namespace {

/// Longest a register access may take before the register slave counts as hung (as tb/sim).
constexpr std::uint64_t kMmioTimeoutCycles = 1000;
/// Cycles of reset at start-up (as tb/sim).
constexpr unsigned kResetCycles = 8;

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

/// The device's own quantum (DeviceConfig::quantum_cycles, else the global one, else the
/// default), on the grid of its core cycles.
class CycleQuantumKeeper final : public tlm_utils::tlm_quantumkeeper {
 public:
  explicit CycleQuantumKeeper(sc_core::sc_time quantum) : quantum_(quantum) {}
  sc_core::sc_time quantum() const { return quantum_; }

 protected:
  sc_core::sc_time compute_local_quantum() override { return quantum_; }

 private:
  sc_core::sc_time quantum_;
};

sc_core::sc_time pick_quantum(const DeviceConfig& c, sc_core::sc_time period) {
  if (c.quantum_cycles != 0) return period * static_cast<double>(c.quantum_cycles);
  const sc_core::sc_time global = tlm::tlm_global_quantum::instance().get();
  if (global != sc_core::SC_ZERO_TIME) return global < period ? period : global;
  return period * static_cast<double>(kDefaultQuantumCycles);
}

}  // namespace

struct RtlDevice::Impl final : AxiTlmBridge::Memory {
  Impl(RtlDevice& d, const DeviceConfig& c)
      : dev(d),
        context(std::make_unique<VerilatedContext>()),
        bridge(*this, sizeof(Vsgpu_top::m_axi_rdata), d.clock_period()),
        checker(sizeof(Vsgpu_top::m_axi_rdata), "dma"),
        qk(pick_quantum(c, d.clock_period())) {
    context->randReset(2);  // every uninitialised flop starts random: reset bugs show up
    context->randSeed(static_cast<int>(c.seed & 0x7fffffff));
    context->assertOn(true);
    top = std::make_unique<Vsgpu_top>(context.get(), "sgpu_top");
    trace = std::make_unique<tb::Trace<Vsgpu_top>>(*top, c.fst_path);
  }
  ~Impl() override {
    trace.reset();
    top->final();
  }

  RtlDevice& dev;
  std::unique_ptr<VerilatedContext> context;
  std::unique_ptr<Vsgpu_top> top;
  std::unique_ptr<tb::Trace<Vsgpu_top>> trace;
  AxiTlmBridge bridge;
  tb::AxiChecker checker;
  tb::AxiManagerOut sampled{};
  CycleQuantumKeeper qk;
  std::uint64_t cycle = 0;
  bool in_reset = false;
  bool irq_published = false;

  // One register access in progress on the AXI4-Lite slave.
  struct Lite {
    bool active = false;
    bool done = false;
    std::uint32_t rdata = 0;
    std::uint8_t resp = 0;
  } lite;

  sc_core::sc_time rtl_time() const { return sc_core::sc_time::from_value(cycle * dev.clock_period().value()); }
  // AxiTlmBridge::Memory: DMA at the RTL's local time.
  sc_core::sc_time local_time() const override {
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    return rtl_time() > now ? rtl_time() - now : sc_core::SC_ZERO_TIME;
  }
  std::uint8_t read(std::uint64_t addr, std::uint8_t* dst, std::size_t n, sc_core::sc_time& delay) override {
    return dev.dma_read(addr, dst, n, delay);
  }
  std::uint8_t write(std::uint64_t addr, const std::uint8_t* src, const std::uint8_t* be, std::size_t n,
                     sc_core::sc_time& delay) override {
    return dev.dma_write(addr, src, be, n, delay);
  }

  // One clock cycle in the order every harness uses (tb/common/sim_clock.hpp): drive, settle,
  // sample + check, edge, the bridge's edge.
  void tick() {
    Vsgpu_top& t = *top;
    t.rst_ni = !in_reset;
    tb::drive_axi_read(t, bridge.outputs());
    tb::drive_axi_write(t, bridge.outputs());
    t.clk_i = 0;
    t.eval();
    trace->dump(2 * cycle);
    tb::sample_axi_read(t, sampled);
    tb::sample_axi_write(t, sampled);
    if (dev.config().check_axi && t.rst_ni) {
      checker.tick(sampled, bridge.outputs());
      if (!checker.ok()) dev.fail("AXI protocol violation on the DMA port: " + checker.violations().front());
    }
    bool aw = false, w = false, b = false, ar = false, r = false;
    if (lite.active) {
      aw = t.s_axil_awvalid && t.s_axil_awready;
      w = t.s_axil_wvalid && t.s_axil_wready;
      b = t.s_axil_bvalid && t.s_axil_bready;
      ar = t.s_axil_arvalid && t.s_axil_arready;
      r = t.s_axil_rvalid && t.s_axil_rready;
      if (b) lite.resp = t.s_axil_bresp;
      if (r) {
        lite.rdata = t.s_axil_rdata;
        lite.resp = t.s_axil_rresp;
      }
    }
    t.clk_i = 1;
    t.eval();
    trace->dump(2 * cycle + 1);
    ++cycle;
    if (in_reset) {
      bridge.reset();
    } else {
      bridge.tick(sampled);
    }
    if (lite.active) {
      if (aw || ar) {
        t.s_axil_awvalid = 0;
        t.s_axil_arvalid = 0;
      }
      if (w) t.s_axil_wvalid = 0;
      if (b || r) {
        lite.done = true;
        lite.active = false;
        t.s_axil_bready = 0;
        t.s_axil_rready = 0;
      }
    }
  }

  bool irq_changed() const { return static_cast<bool>(top->irq_o) != irq_published; }
  void publish_irq(sc_core::sc_time delay) {
    irq_published = top->irq_o;
    dev.set_irq(irq_published, delay);
  }
};

RtlDevice::RtlDevice(const sc_core::sc_module_name& name, const DeviceConfig& config)
    : Device(name, config), impl_(std::make_unique<Impl>(*this, config_)) {
  auto& d = *impl_;
  Vsgpu_top& t = *d.top;
  // Inputs start random under --x-initial unique: the register port must start idle.
  t.s_axil_awvalid = 0;
  t.s_axil_wvalid = 0;
  t.s_axil_bready = 0;
  t.s_axil_arvalid = 0;
  t.s_axil_rready = 0;
  // A real falling edge of the asynchronous reset, so every flop is reset before the first clock.
  t.clk_i = 0;
  t.rst_ni = 1;
  t.eval();
  t.rst_ni = 0;
  t.eval();
  d.in_reset = true;
  for (unsigned i = 0; i < kResetCycles; ++i) d.tick();
  d.in_reset = false;
  d.tick();
  SC_HAS_PROCESS(RtlDevice);
  SC_THREAD(clock_thread);
}

RtlDevice::~RtlDevice() = default;

std::uint64_t RtlDevice::cycles() const { return impl_->cycle; }

unsigned RtlDevice::quantum_cycles() const {
  return static_cast<unsigned>(impl_->qk.quantum().value() / clock_period().value());
}

// Runs the RTL a quantum ahead of SystemC time; waits (syncs) at the end of each quantum and at
// every edge of the interrupt, which is published at its own cycle.
void RtlDevice::clock_thread() {
  auto& d = *impl_;
  d.qk.reset();
  sc_core::sc_event never;
  for (;;) {
    if (!failure().empty()) sc_core::wait(never);  // a broken device stops its clock
    d.qk.set(d.local_time());
    while (!d.qk.need_sync() && failure().empty()) {
      d.tick();
      d.qk.set(d.local_time());
      if (d.irq_changed()) {
        d.qk.sync();
        d.publish_irq(sc_core::SC_ZERO_TIME);
        d.qk.set(d.local_time());
      }
    }
    d.qk.sync();
  }
}

bool RtlDevice::register_access(bool write, std::uint32_t offset, std::uint32_t& data, sc_core::sc_time& delay) {
  auto& d = *impl_;
  Vsgpu_top& t = *d.top;
  // The access starts no earlier than the caller's local time (the RTL may be ahead already).
  const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
  while (d.rtl_time() < start && failure().empty()) d.tick();
  if (d.in_reset) {
    fail("register access while the device is held in reset");
    return false;
  }
  d.lite = {};
  d.lite.active = true;
  if (write) {
    t.s_axil_awaddr = static_cast<std::remove_reference_t<decltype(t.s_axil_awaddr)>>(offset);
    t.s_axil_awprot = 0;
    t.s_axil_awvalid = 1;
    t.s_axil_wdata = data;
    t.s_axil_wstrb = 0xf;
    t.s_axil_wvalid = 1;
    t.s_axil_bready = 1;
  } else {
    t.s_axil_araddr = static_cast<std::remove_reference_t<decltype(t.s_axil_araddr)>>(offset);
    t.s_axil_arprot = 0;
    t.s_axil_arvalid = 1;
    t.s_axil_rready = 1;
  }
  for (std::uint64_t n = 0; !d.lite.done && failure().empty(); ++n) {
    if (n == kMmioTimeoutCycles) {
      fail("register " + std::string(write ? "write" : "read") + " at " + hex(offset) + " got no response within " +
           std::to_string(kMmioTimeoutCycles) + " cycles");
      break;
    }
    d.tick();
  }
  d.lite.active = false;
  delay = d.local_time();
  if (d.irq_changed()) d.publish_irq(delay);
  if (!failure().empty()) return false;
  if (!write) data = d.lite.rdata;
  return d.lite.resp == 0;
}

void RtlDevice::reset_changed(bool asserted) {
  auto& d = *impl_;
  if (asserted == d.in_reset) return;
  d.in_reset = asserted;
  if (asserted) {
    // The reset is asynchronous: every flop clears now; the bus forgets what was in flight.
    d.top->rst_ni = 0;
    d.top->eval();
    d.bridge.reset();
    d.checker.reset();
    d.lite = {};
    if (d.irq_changed()) d.publish_irq(d.local_time());
  }
}

}  // namespace sgpu::systemc
