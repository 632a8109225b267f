#include "systemc/platform.hpp"

#include <atomic>
#include <cstdlib>

#include "systemc/model_device.hpp"
#include "systemc/rtl_device.hpp"

namespace sgpu::systemc {
namespace {

/// SystemC's kernel is one per process and elaborates once: the one piece of process-wide
/// state here, so that a second platform is refused with an error instead of a kernel abort.
std::atomic<bool> g_platform_built{false};

constexpr std::uint32_t kMsiData = 0x5347;  // "GS": any value; the doorbell ignores it

}  // namespace

// The CPU's interrupt: the device's level line, or MSI writes into a small doorbell target.
class Platform::Interrupts final : public sc_core::sc_module, public InterruptSource {
 public:
  tlm_utils::simple_target_socket<Interrupts> msi;

  Interrupts(const sc_core::sc_module_name& name, const sc_core::sc_signal<bool>& line, bool use_msi)
      : sc_core::sc_module(name), msi("msi"), line_(line), use_msi_(use_msi) {
    msi.register_b_transport(this, &Interrupts::b_transport);
  }
  bool take() override {
    if (!use_msi_) return line_.read();
    const bool p = pending_;
    pending_ = false;
    return p;
  }
  const sc_core::sc_event& arrived() const override { return use_msi_ ? event_ : line_.posedge_event(); }
  std::uint64_t count = 0;

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    if (!gp.is_write() || gp.get_data_length() != 4) {
      gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
      return;
    }
    ++count;
    pending_ = true;
    event_.notify(delay);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
  }

  const sc_core::sc_signal<bool>& line_;
  bool use_msi_;
  bool pending_ = false;
  sc_core::sc_event event_;
};

void Platform::check_can_build() {
  if (g_platform_built.load())
    throw PlatformError(
        "this process has built its SystemC platform already: SystemC elaborates once per process, so "
        "there is one platform (and one systemc transport) per process");
  if (sc_core::sc_get_status() != sc_core::SC_ELABORATION)
    throw PlatformError("the SystemC kernel has started already: a platform is built before sc_start()");
}

Platform::Platform(const sc_core::sc_module_name& name, const PlatformConfig& config)
    : sc_core::sc_module(name), config_(config), irq_("irq") {
  check_can_build();
  g_platform_built = true;
  if (config_.quantum_cycles == 0) throw std::invalid_argument("quantum_cycles must be at least 1");

  DeviceConfig dc = config_.device;
  if (dc.quantum_cycles == 0) dc.quantum_cycles = config_.quantum_cycles;
  if (config_.msi) {
    dc.msi_address = kMsiBase;
    dc.msi_data = kMsiData;
  }
  const sc_core::sc_time period(1.0 / dc.clock_hz, sc_core::SC_SEC);
  tlm::tlm_global_quantum::instance().set(period * static_cast<double>(config_.quantum_cycles));

  interrupts_ = std::make_unique<Interrupts>("interrupts", irq_, config_.msi);
  cpu_ = std::make_unique<HostCpu>("cpu", *interrupts_);
  router_ = std::make_unique<Router>("router");
  HostMemoryTarget::Config mc;
  mc.size = kHostMemoryBytes;
  mc.read_latency = period * static_cast<double>(config_.read_latency);
  mc.write_latency = period * static_cast<double>(config_.write_latency);
  memory_ = std::make_unique<HostMemoryTarget>("memory", mc);
  if (config_.implementation == PlatformConfig::Implementation::Rtl) {
    device_ = std::make_unique<RtlDevice>("sgpu", dc);
  } else {
    device_ = std::make_unique<ModelDevice>("sgpu", dc);
  }

  // Initiators, then targets in window order.
  cpu_->socket.bind(router_->in);
  device_->dma.bind(router_->in);
  router_->map("memory", kHostMemoryBase, kHostMemoryBytes);
  router_->out.bind(memory_->socket);
  router_->map("sgpu.bar0", kBar0Base, kBar0Bytes);
  router_->out.bind(device_->bar0);
  router_->map("msi", kMsiBase, 0x1000);
  router_->out.bind(interrupts_->msi);
  device_->irq.bind(irq_);
}

Platform::~Platform() = default;

std::uint64_t Platform::msi_count() const { return interrupts_->count; }

}  // namespace sgpu::systemc
