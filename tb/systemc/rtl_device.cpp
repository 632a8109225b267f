// Verilator's headers first: included after SystemC's they take the model for a --sc one
// (SYSTEMC_VERSION) and want a global sc_time_stamp(). This model is --cc: its time is ours.
#include <verilated.h>

#include "Vsgpu_top.h"
#include "common/axi_lite_master.hpp"
#include "common/bench.hpp"

#include "systemc/rtl_device.hpp"

#include <sstream>

#include <tlm_utils/tlm_quantumkeeper.h>

#include "common/axi_checker.hpp"
#include "common/axi_verilator.hpp"
#include "systemc/axi_tlm_bridge.hpp"

namespace sgpu::systemc {
namespace {

constexpr std::uint64_t kMmioTimeoutCycles = tb::AxiLiteMaster<Vsgpu_top>::kTimeoutCycles;

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
  // The AXI4 subordinate on the RTL's host-memory port as a bench agent: the bridge answers, the
  // checker checks every cycle out of reset; in reset the bridge forgets what was in flight.
  struct DmaPort final : tb::Agent {
    DmaPort(Vsgpu_top& t, RtlDevice& d, AxiTlmBridge& b, std::uint64_t& c)
        : top(t), dev(d), bridge(b), cycle(c), checker(sizeof(Vsgpu_top::m_axi_rdata), "dma") {}

    void drive() override {
      tb::drive_axi_read(top, bridge.outputs());
      tb::drive_axi_write(top, bridge.outputs());
    }
    void sample() override {
      tb::sample_axi_read(top, sampled);
      tb::sample_axi_write(top, sampled);
      in_reset = !top.rst_ni;
      if (dev.config().check_axi && !in_reset) {
        checker.tick(sampled, bridge.outputs());
        if (!checker.ok()) dev.fail("AXI protocol violation on the DMA port: " + checker.violations().front());
      }
    }
    // The bridge annotates its transactions at the RTL's time after this edge.
    void edge() override {
      ++cycle;
      if (in_reset) {
        bridge.reset();
      } else {
        bridge.tick(sampled);
      }
    }

    Vsgpu_top& top;
    RtlDevice& dev;
    AxiTlmBridge& bridge;
    std::uint64_t& cycle;
    tb::AxiChecker checker;
    tb::AxiManagerOut sampled{};
    bool in_reset = false;
  };

  Impl(RtlDevice& d, const DeviceConfig& c)
      : dev(d),
        bench({"sgpu_top", 2, c.seed, c.fst_path}),
        bridge(*this, sizeof(Vsgpu_top::m_axi_rdata), d.clock_period()),
        dma(bench.dut(), d, bridge, cycle),
        lite(bench.dut()),
        qk(pick_quantum(c, d.clock_period())) {
    bench.add(dma);
    bench.add(lite);
  }

  RtlDevice& dev;
  tb::Bench<Vsgpu_top> bench;
  AxiTlmBridge bridge;
  std::uint64_t cycle = 0;  // the bench's cycle, counted from inside the edge
  DmaPort dma;
  tb::AxiLiteMaster<Vsgpu_top> lite;
  CycleQuantumKeeper qk;
  bool in_reset = false;
  bool irq_published = false;

  Vsgpu_top& top() { return bench.dut(); }
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

  void tick() { bench.tick(); }

  bool irq_changed() { return static_cast<bool>(top().irq_o) != irq_published; }
  void publish_irq(sc_core::sc_time delay) {
    irq_published = top().irq_o;
    dev.set_irq(irq_published, delay);
  }
};

RtlDevice::RtlDevice(const sc_core::sc_module_name& name, const DeviceConfig& config)
    : Device(name, config), impl_(std::make_unique<Impl>(*this, config_)) {
  // A real falling edge of the asynchronous reset, so every flop is reset before the first clock.
  impl_->bench.reset(tb::kDeviceResetCycles, 1, /*with_agents=*/true);
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
  // The access starts no earlier than the caller's local time (the RTL may be ahead already).
  const sc_core::sc_time start = sc_core::sc_time_stamp() + delay;
  while (d.rtl_time() < start && failure().empty()) d.tick();
  if (d.in_reset) {
    fail("register access while the device is held in reset");
    return false;
  }
  if (write) {
    d.lite.start_write(offset, data);
  } else {
    d.lite.start_read(offset);
  }
  for (std::uint64_t n = 0; !d.lite.done() && failure().empty(); ++n) {
    if (n == kMmioTimeoutCycles) {
      fail("register " + std::string(write ? "write" : "read") + " at " + hex(offset) + " got no response within " +
           std::to_string(kMmioTimeoutCycles) + " cycles");
      break;
    }
    d.tick();
  }
  const bool done = d.lite.done();
  if (!done) d.lite.idle();
  delay = d.local_time();
  if (d.irq_changed()) d.publish_irq(delay);
  if (!failure().empty() || !done) return false;
  if (!write) data = d.lite.rdata();
  return d.lite.resp() == 0;
}

void RtlDevice::reset_changed(bool asserted) {
  auto& d = *impl_;
  if (asserted == d.in_reset) return;
  d.in_reset = asserted;
  // The reset is asynchronous: asserted, every flop clears now and the bus forgets what was in
  // flight (the DMA port sees rst_ni low from the next cycle on); released, the RTL leaves reset
  // at its next clock edge.
  d.bench.set_reset(asserted);
  if (asserted) {
    d.bridge.reset();
    d.dma.checker.reset();
    d.lite.idle();
    if (d.irq_changed()) d.publish_irq(d.local_time());
  }
}

}  // namespace sgpu::systemc
