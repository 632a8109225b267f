// The example virtual platform (docs/systemc.md is its guide): a host CPU, an address-decoding
// interconnect, host memory, and the softgpu device (RTL or reference model inside) with its
// interrupt wired to the CPU, as a level line or as MSI writes.
//
//   HostCpu ──┐                    ┌──▶ host memory   [0, 2^48)             (HostMemoryTarget)
//             ├──▶ Router ─────────┼──▶ device BAR0  [kBar0Base, +4 KiB)   (Device::bar0)
//   Device.dma┘   (address decode) └──▶ MSI doorbell [kMsiBase, +4 KiB)    (with msi)
//   Device.irq ──▶ sc_signal<bool> ──▶ HostCpu (level)
//
// SystemC elaborates once per process: a process builds at most one Platform (a second one is
// refused: PlatformError).
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "systemc/device.hpp"
#include "systemc/host_cpu.hpp"
#include "systemc/memory.hpp"
#include "systemc/router.hpp"

namespace sgpu::systemc {

/// Bus addresses of the example platform.
inline constexpr std::uint64_t kHostMemoryBase = 0;
inline constexpr std::uint64_t kHostMemoryBytes = std::uint64_t{1} << 48;
inline constexpr std::uint64_t kBar0Base = std::uint64_t{1} << 48;
inline constexpr std::uint64_t kMsiBase = kBar0Base + 0x10'0000;

struct PlatformConfig {
  enum class Implementation { Rtl, Model };
  /// What is inside the device.
  Implementation implementation = Implementation::Rtl;
  /// The device's options (clock, DMA limits, DMI, RTL seed/waveform/AXI checking, ...).
  DeviceConfig device;
  /// Temporal-decoupling quantum in core cycles: the global quantum (host CPU) and the RTL's.
  unsigned quantum_cycles = kDefaultQuantumCycles;
  /// Host-memory latencies in core cycles (the sim backend's defaults).
  unsigned read_latency = 64;
  unsigned write_latency = 32;
  /// Interrupts as MSI writes to the MSI doorbell (else the level line).
  bool msi = false;
};

/// Building a second platform in one process, or one after the kernel started elsewhere.
struct PlatformError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Platform final : public sc_core::sc_module {
 public:
  /// Throws PlatformError unless this process may build its platform now (before any module
  /// exists: a kernel that started refuses new modules with a SystemC error).
  static void check_can_build();

  /// Throws PlatformError when this process already built a platform or started SystemC, and
  /// std::invalid_argument for bad options.
  Platform(const sc_core::sc_module_name& name, const PlatformConfig& config);
  ~Platform() override;

  HostCpu& cpu() { return *cpu_; }
  Device& device() { return *device_; }
  HostMemoryTarget& memory() { return *memory_; }
  Router& router() { return *router_; }
  const PlatformConfig& config() const { return config_; }
  /// MSI writes received (with msi).
  std::uint64_t msi_count() const;

 private:
  class Interrupts;
  PlatformConfig config_;
  std::unique_ptr<Interrupts> interrupts_;
  std::unique_ptr<HostCpu> cpu_;
  std::unique_ptr<Router> router_;
  std::unique_ptr<HostMemoryTarget> memory_;
  std::unique_ptr<Device> device_;
  sc_core::sc_signal<bool> irq_;
};

}  // namespace sgpu::systemc
