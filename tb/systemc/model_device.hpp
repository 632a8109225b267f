// The TLM device around the C++ reference model (tb/model): see device.hpp. Loosely timed: a
// register write that may start work (any write) wakes the device's thread, which runs the
// model until it is idle, its bus going through the DMA socket (model::Port); the work then
// takes the time its transactions annotated before the interrupt line follows. Register
// accesses take DeviceConfig::model_register_cycles. CYCLE_LO/HI read SystemC time in core
// cycles. The model's rules, and where its timing differs from the RTL's, are in
// docs/reference-model.md and docs/systemc.md.
#pragma once

#include <memory>

#include "systemc/device.hpp"

namespace sgpu::systemc {

class ModelDevice final : public Device {
 public:
  ModelDevice(const sc_core::sc_module_name& name, const DeviceConfig& config);
  ~ModelDevice() override;

  std::string_view implementation() const override { return "model"; }
  std::uint64_t cycles() const override;

 private:
  bool register_access(bool write, std::uint32_t offset, std::uint32_t& data, sc_core::sc_time& delay) override;
  void reset_changed(bool asserted) override;
  void run_thread();

  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sgpu::systemc
