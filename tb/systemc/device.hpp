// The softgpu as a TLM-2.0 device of a virtual platform, shaped like a PCIe function
// (libsystemctlm-soc's pci_device_base): a target socket for the register BAR (BAR0), an
// initiator socket through which the device masters host memory (DMA; also MSI writes when the
// platform gives an MSI address), an interrupt line and a reset. Two implementations sit behind
// the same sockets (docs/systemc.md says which to pick):
//
//   RtlDevice    the Verilated sgpu_top (C++ model) clocked from an SC_THREAD with temporal
//                decoupling: cycle-accurate device, approximately-timed platform.
//   ModelDevice  the C++ reference model, loosely timed: the same registers, packets, faults
//                and GART, executed at once; time passes by the memory traffic's annotations.
//
// Everything is blocking-transport (LT): b_transport on BAR0 returns with the access's time
// annotated; DMA uses b_transport, or DMI where the target grants it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

namespace sgpu::systemc {

/// Options shared by both implementations.
struct DeviceConfig {
  /// Core clock: the RTL's cycle time, and the unit of the model's timing.
  double clock_hz = 250e6;
  /// Temporal-decoupling quantum of the RTL's clock thread, in core cycles (0: the platform's
  /// global quantum, tlm_global_quantum). See docs/systemc.md for how the default was chosen.
  unsigned quantum_cycles = 0;
  /// The largest DMA transaction the platform accepts (bytes, a power of two >= the bus width):
  /// longer bursts are split. Transactions never cross 4 KiB.
  unsigned max_transaction_bytes = 256;
  /// Use DMI when the DMA target grants it (else every access is a b_transport).
  bool dmi = true;
  /// MSI: when non-zero, every rising edge of the interrupt also writes msi_data (32-bit,
  /// little-endian) to this bus address through the DMA socket.
  std::uint64_t msi_address = 0;
  std::uint32_t msi_data = 0;
  /// BAR0 access time the model annotates (the RTL's is its AXI4-Lite handshake).
  unsigned model_register_cycles = 8;
  /// RTL only: seed of Verilator's X randomisation, waveform path (empty: $SGPU_FST, else none),
  /// AXI protocol checker on the DMA port.
  std::uint64_t seed = 1;
  std::string fst_path;
  bool check_axi = true;
};

/// The default RTL quantum in core cycles (measured: docs/systemc.md, bench key
/// tlm_quantum_cycles).
inline constexpr unsigned kDefaultQuantumCycles = 256;

/// BAR0's size: the register file (sgpu_regs_t) with room to grow.
inline constexpr std::uint64_t kBar0Bytes = 0x1000;

/// Counters of the DMA socket's traffic.
struct DmaStats {
  std::uint64_t transactions = 0;  ///< b_transport calls (data)
  std::uint64_t dmi_accesses = 0;  ///< accesses served through a DMI pointer
  std::uint64_t split = 0;         ///< bursts cut at max_transaction_bytes or a page
  std::uint64_t errors = 0;        ///< responses other than TLM_OK_RESPONSE
  std::uint64_t msi_writes = 0;
};

class Device : public sc_core::sc_module {
 public:
  /// BAR0: 32-bit register accesses (4 bytes, aligned, all bytes enabled); other shapes get
  /// TLM_BURST_ERROR_RESPONSE / TLM_BYTE_ENABLE_ERROR_RESPONSE, offsets with no register
  /// TLM_ADDRESS_ERROR_RESPONSE (the RTL's SLVERR).
  tlm_utils::simple_target_socket<Device> bar0;
  /// DMA initiator into host memory (bus addresses). Target errors are bus errors to the
  /// device: TLM_ADDRESS_ERROR_RESPONSE is DECERR, every other error SLVERR.
  tlm_utils::simple_initiator_socket<Device> dma;
  /// The interrupt line (level: INT_STATUS & INT_ENABLE != 0).
  sc_core::sc_out<bool> irq;
  /// Optional function reset, active low: while low the device is held in reset (the RTL's
  /// rst_ni; the model's engine and registers return to their reset values).
  sc_core::sc_port<sc_core::sc_signal_in_if<bool>, 1, sc_core::SC_ZERO_OR_MORE_BOUND> reset_n;

  Device(const sc_core::sc_module_name& name, const DeviceConfig& config);
  ~Device() override;

  /// "rtl" or "model".
  virtual std::string_view implementation() const = 0;
  /// Core clock cycles the device has run (the RTL's) or would have (the model's time / period).
  virtual std::uint64_t cycles() const = 0;
  /// A broken rule inside the device (AXI protocol violation on its DMA port, a register
  /// access that never answered); empty while healthy. BAR0 then answers
  /// TLM_GENERIC_ERROR_RESPONSE.
  const std::string& failure() const { return failure_; }

  const DeviceConfig& config() const { return config_; }
  const DmaStats& dma_stats() const { return stats_; }
  sc_core::sc_time clock_period() const { return period_; }

 protected:
  /// One register access from BAR0 (offset checked: 4-byte aligned, below kBar0Bytes).
  /// Returns false if no register answers there. `delay` is the caller's annotation, to
  /// which the access's time is added.
  virtual bool register_access(bool write, std::uint32_t offset, std::uint32_t& data, sc_core::sc_time& delay) = 0;
  /// The reset pin changed (low: hold in reset).
  virtual void reset_changed(bool asserted) = 0;

  /// DMA through the socket: [addr, addr + n) split at the platform's limits, through DMI
  /// where granted. `byte_enable` (writes; nullptr = all) holds 0xff for bytes to write.
  /// Returns the AXI response (0 OKAY, 2 SLVERR, 3 DECERR) and adds the time to `delay`.
  std::uint8_t dma_read(std::uint64_t addr, std::uint8_t* dst, std::size_t n, sc_core::sc_time& delay);
  std::uint8_t dma_write(std::uint64_t addr, const std::uint8_t* src, const std::uint8_t* byte_enable, std::size_t n,
                         sc_core::sc_time& delay);
  /// The response a read (write) of [addr, addr + n) would get, without moving data where the
  /// target can tell (DMI, a write with no byte enabled).
  std::uint8_t dma_probe(std::uint64_t addr, std::size_t n, bool write, sc_core::sc_time& delay);

  /// Drives the interrupt line `delay` from now; on a rising edge with MSI configured, writes
  /// the message (annotated with `delay`).
  void set_irq(bool level, sc_core::sc_time& delay);

  void fail(std::string what);

  DeviceConfig config_;
  sc_core::sc_time period_;
  DmaStats stats_;

 private:
  void bar0_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  void invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end);
  void end_of_elaboration() override;
  void watch_reset();
  std::uint8_t transact(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data, const std::uint8_t* byte_enable,
                        std::size_t n, sc_core::sc_time& delay);
  const tlm::tlm_dmi* find_dmi(std::uint64_t addr, std::size_t n, bool write);

  std::vector<tlm::tlm_dmi> dmi_;  ///< regions granted by the DMA target
  std::size_t dmi_hit_ = 0;        ///< the region used last
  bool irq_level_ = false;
  sc_core::sc_event irq_changed_;
  std::string failure_;
  tlm::tlm_generic_payload gp_;
};

}  // namespace sgpu::systemc
