// One interface over the two implementations of the front end that the differential tests
// compare: the reference model and the Verilated RTL (sim::SimDevice). Both see the same MMIO
// writes, the same host-memory contents and the same injected bus errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/host_memory.hpp"
#include "model/model.hpp"
#include "sim/sim_device.hpp"

namespace sgpu::diff {

class Device {
 public:
  virtual ~Device() = default;
  virtual std::string name() const = 0;
  virtual std::uint32_t mmio_read32(std::uint32_t offset) = 0;
  virtual void mmio_write32(std::uint32_t offset, std::uint32_t value) = 0;
  virtual tb::HostMemory& memory() = 0;
  virtual void inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp) = 0;
  virtual void clear_errors() = 0;
  /// Runs until nothing is left to do: the ring is empty, fetching is disabled, or the engine
  /// faulted, and no transaction is in flight. Throws if that does not happen.
  virtual void settle() = 0;
  virtual bool irq() const = 0;
  /// Fences of retired entries in retirement order.
  virtual const std::vector<std::uint64_t>& retired_fences() const = 0;
};

class ModelDevice final : public Device {
 public:
  explicit ModelDevice(model::Config config) : model_(memory_, config) {}
  std::string name() const override { return "model"; }
  std::uint32_t mmio_read32(std::uint32_t offset) override { return model_.mmio_read32(offset); }
  void mmio_write32(std::uint32_t offset, std::uint32_t value) override { model_.mmio_write32(offset, value); }
  tb::HostMemory& memory() override { return memory_; }
  void inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp) override { model_.inject_error(lo, hi, resp); }
  void clear_errors() override { model_.clear_errors(); }
  void settle() override { model_.run_until_idle(); }
  bool irq() const override { return model_.irq(); }
  const std::vector<std::uint64_t>& retired_fences() const override { return model_.retired_fences(); }
  model::Model& model() { return model_; }

 private:
  tb::HostMemory memory_;  // declared before the model, which keeps a reference
  model::Model model_;
};

class RtlDevice final : public Device {
 public:
  /// `wb_addr`: where the write-back record lives; settle() watches it every cycle to see
  /// every retirement in order (each one writes a new fence there).
  RtlDevice(sim::SimConfig config, std::uint64_t wb_addr, std::uint64_t max_settle_cycles);
  std::string name() const override { return "rtl"; }
  std::uint32_t mmio_read32(std::uint32_t offset) override;
  void mmio_write32(std::uint32_t offset, std::uint32_t value) override;
  tb::HostMemory& memory() override { return dev_.memory(); }
  void inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp) override {
    dev_.memory_port().inject_error(lo, hi, resp);
  }
  void clear_errors() override { dev_.memory_port().clear_errors(); }
  void settle() override;
  bool irq() const override { return dev_.irq(); }
  const std::vector<std::uint64_t>& retired_fences() const override { return retired_; }
  sim::SimDevice& sim() { return dev_; }

 private:
  void watch_writeback();

  sim::SimDevice dev_;
  std::uint64_t wb_addr_;
  std::uint64_t max_settle_cycles_;
  std::uint64_t last_wb_fence_ = 0;
  std::vector<std::uint64_t> retired_;
};

}  // namespace sgpu::diff
