// The TLM device around the Verilated sgpu_top (its C++ model, not pin-level SystemC): see
// device.hpp. One SC_THREAD is the clock: it runs the RTL a quantum ahead of SystemC time
// (tlm_utils::tlm_quantumkeeper; DeviceConfig::quantum_cycles) and synchronises at every edge
// of the interrupt line, so the line changes at the cycle the RTL raised it. A BAR0 access
// first brings the RTL up to the caller's local time, then runs the AXI4-Lite handshake cycle
// by cycle and returns with the time it took annotated. The RTL's host-memory port is an
// AxiTlmBridge on the DMA socket, checked every cycle by tb::AxiChecker.
#pragma once

#include <memory>

#include "systemc/device.hpp"

namespace sgpu::systemc {

class RtlDevice final : public Device {
 public:
  RtlDevice(const sc_core::sc_module_name& name, const DeviceConfig& config);
  ~RtlDevice() override;

  std::string_view implementation() const override { return "rtl"; }
  std::uint64_t cycles() const override;
  /// The quantum in use, in core cycles.
  unsigned quantum_cycles() const;

 private:
  bool register_access(bool write, std::uint32_t offset, std::uint32_t& data, sc_core::sc_time& delay) override;
  void reset_changed(bool asserted) override;
  void clock_thread();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgpu::systemc
