#include "systemc/model_device.hpp"

#include <cstddef>
#include <cstring>
#include <stdexcept>

#include "model/model.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::systemc {
namespace {

constexpr std::uint32_t kCycleLo = offsetof(sgpu_regs_t, CYCLE_LO);
constexpr std::uint32_t kCycleHi = offsetof(sgpu_regs_t, CYCLE_HI);

}  // namespace

struct ModelDevice::Impl final : model::Port {
  explicit Impl(ModelDevice& d) : dev(d) { make_model(); }

  void make_model() { model = std::make_unique<model::Model>(*this, model::Config{}); }

  // model::Port: the model's bus is the DMA socket. The model touches memory in pieces as small
  // as a byte, so the time of the work is not the sum of the targets' per-access latencies: it
  // is one bus beat per cycle for the bytes moved, plus the latency of the first access (the
  // pipelined bus of the RTL). Probes move nothing and cost nothing.
  std::uint8_t probe(std::uint64_t lo, std::uint64_t hi, bool write) override {
    sc_core::sc_time ignored;
    return dev.dma_probe(lo, static_cast<std::size_t>(hi - lo), write, ignored);
  }
  void read(std::uint64_t addr, void* dst, std::size_t n) override {
    // Errors were probed per beat before data is taken; a read that still fails reads zeros.
    sc_core::sc_time latency;
    if (dev.dma_read(addr, static_cast<std::uint8_t*>(dst), n, latency) != 0) std::memset(dst, 0, n);
    charge(n, latency);
  }
  void write(std::uint64_t addr, const void* src, std::size_t n) override {
    sc_core::sc_time latency;
    (void)dev.dma_write(addr, static_cast<const std::uint8_t*>(src), nullptr, n, latency);
    charge(n, latency);
  }
  void charge(std::size_t n, const sc_core::sc_time& latency) {
    if (busy == sc_core::SC_ZERO_TIME) busy = latency;
    bytes += n;
  }
  sc_core::sc_time work_time() const {
    const std::uint64_t beats = (bytes + kBusBytes - 1) / kBusBytes;
    return busy + dev.clock_period() * static_cast<double>(beats);
  }
  static constexpr std::uint64_t kBusBytes = 8;  // model::Config's bus_bytes

  ModelDevice& dev;
  std::unique_ptr<model::Model> model;
  sc_core::sc_event kick;
  bool work = false;  ///< a register write since the thread last looked
  sc_core::sc_time busy;   ///< latency of the first access of the work in progress
  std::uint64_t bytes = 0;  ///< bytes it moved
  bool in_reset = false;
};

ModelDevice::ModelDevice(const sc_core::sc_module_name& name, const DeviceConfig& config)
    : Device(name, config), impl_(std::make_unique<Impl>(*this)) {
  sc_core::sc_spawn_options o;
  o.set_stack_size(1 << 20);  // the model's packet handlers recurse through INDIRECT
  sc_core::sc_spawn([this] { run_thread(); }, "run", &o);
}

ModelDevice::~ModelDevice() = default;

std::uint64_t ModelDevice::cycles() const { return sc_core::sc_time_stamp().value() / clock_period().value(); }

void ModelDevice::run_thread() {
  auto& d = *impl_;
  for (;;) {
    while (!d.work) sc_core::wait(d.kick);
    d.work = false;
    if (d.in_reset) continue;
    d.busy = sc_core::SC_ZERO_TIME;
    d.bytes = 0;
    d.model->run_until_idle();
    // The work took the time of its memory traffic; then the line follows the model.
    if (const sc_core::sc_time t = d.work_time(); t != sc_core::SC_ZERO_TIME) sc_core::wait(t);
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    set_irq(d.model->irq(), zero);
  }
}

bool ModelDevice::register_access(bool write, std::uint32_t offset, std::uint32_t& data, sc_core::sc_time& delay) {
  auto& d = *impl_;
  delay += clock_period() * static_cast<double>(config_.model_register_cycles);
  if (d.in_reset) {
    fail("register access while the device is held in reset");
    return false;
  }
  try {
    if (write) {
      d.model->mmio_write32(offset, data);
      // INT_STATUS / INT_ENABLE change the line at once; anything may start work.
      set_irq(d.model->irq(), delay);
      d.work = true;  // seen by the thread also if it is busy with earlier work now
      d.kick.notify(delay);
    } else if (offset == kCycleLo || offset == kCycleHi) {
      const std::uint64_t c = (sc_core::sc_time_stamp() + delay).value() / clock_period().value();
      data = static_cast<std::uint32_t>(offset == kCycleLo ? c : c >> 32);
    } else {
      data = d.model->mmio_read32(offset);
    }
  } catch (const std::out_of_range&) {
    return false;  // no register there: the RTL's SLVERR
  }
  return true;
}

void ModelDevice::reset_changed(bool asserted) {
  auto& d = *impl_;
  d.in_reset = asserted;
  if (asserted) {
    d.make_model();  // every register back to its reset value
    sc_core::sc_time zero = sc_core::SC_ZERO_TIME;
    set_irq(false, zero);
  }
}

}  // namespace sgpu::systemc
