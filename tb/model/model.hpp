// Reference model of the softgpu front end: the functional twin of sgpu_top's command
// processor. It executes the same ring entries and packets over a memory image, with the same
// register file, fault records, fences, write-back records and interrupts as the RTL, but
// untimed: everything runs to completion inside run_until_idle(). docs/reference-model.md lists
// every rule it shares with the RTL and why.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/host_memory.hpp"
#include "model/bus.hpp"
#include "model/gart.hpp"
#include "sgpu/gen/abi.hpp"

namespace sgpu::model {

struct Config {
  /// Host-memory bus width in bytes (CAP_BUS.data_bytes of the device being mirrored).
  unsigned bus_bytes = 8;
  /// Largest ring (CAP_MEM.max_ring_log2); larger RING_SIZE values are clamped like the RTL.
  unsigned max_ring_log2 = 16;
  /// Longest write burst of the copy engine (CAP_BUS.max_burst_m1 + 1).
  unsigned max_burst_beats = 256;
  /// Deepest INDIRECT nesting (CAP_MEM.max_indirect_depth).
  unsigned max_indirect_depth = 4;
  /// log2 of the GPU page size (CAP_MEM.page_shift of the device being mirrored).
  unsigned page_shift = 12;
  /// System-physical addresses are [0, 2^sys_addr_bits) (GART_CAP.sys_addr_bits): the bound of
  /// READ_PHYSICAL and WRITE_PHYSICAL, and of what the GART passes as identity.
  unsigned sys_addr_bits = 52;
  /// The GPU address map and the GART (sgpu_top's defaults).
  AddressMap map;
};

/// FAULT_* registers as one value.
struct FaultRecord {
  abi::Fault reason = abi::Fault::None;
  std::uint32_t ring_index = 0;
  std::uint64_t addr = 0;
  std::uint64_t fence = 0;
  std::uint32_t detail = 0;

  bool operator==(const FaultRecord& o) const {
    return reason == o.reason && ring_index == o.ring_index && addr == o.addr && fence == o.fence &&
           detail == o.detail;
  }
  bool operator!=(const FaultRecord& o) const { return !(*this == o); }
  std::string to_string() const;
};

/// Counters of what the model executed (for test coverage reports).
struct Stats {
  std::uint64_t entries = 0;                       ///< ring entries fetched
  std::uint64_t retired = 0;                       ///< entries retired
  std::uint64_t faults = 0;
  std::uint64_t packets = 0;                       ///< packet headers decoded
  std::uint64_t packets_by_opcode[256] = {};       ///< headers that passed the checks
  std::uint64_t faults_by_reason[256] = {};
};

class Model {
 public:
  /// `memory`: the image the device masters (ring, buffers, data); the model keeps a reference.
  Model(tb::HostMemory& memory, Config config = {});
  /// A model whose bus is someone else's `port` (kept by reference): a virtual platform's DMA
  /// socket. inject_error() and memory() are not available then.
  Model(Port& port, Config config = {});

  /// Register access at BAR0 offsets (sgpu_regs_t). Registers the model does not implement
  /// (capabilities, cycle counter, GART) read 0 and ignore writes; an offset with no register
  /// throws std::out_of_range, as the RTL answers SLVERR.
  std::uint32_t mmio_read32(std::uint32_t offset) const;
  void mmio_write32(std::uint32_t offset, std::uint32_t value);

  /// Executes ring entries until the ring is empty, CTRL.enable is 0 or the engine faulted.
  void run_until_idle();

  /// Mirrors tb::AxiMemoryModel::inject_error / clear_errors on the device under test.
  void inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp) { bus_.inject_error(lo, hi, resp); }
  void clear_errors() { bus_.clear_errors(); }

  /// A timing outcome the untimed model takes from outside: the watchdog expires while the
  /// entry with this fence retires, before its fence word is issued (the RTL's stall there is
  /// the write latency, which the model does not know). It faults WATCHDOG with FAULT_ADDR =
  /// WB_ADDR, detail 0; the head word of the record becomes uncertain, the fence stays
  /// unwritten. nullopt (the default): retirement never meets the watchdog.
  void set_retire_watchdog(std::optional<std::uint64_t> fence) { retire_watchdog_ = fence; }

  // ---- observable results
  bool irq() const { return (int_status_ & int_enable_) != 0; }
  std::uint32_t int_status() const { return int_status_; }
  bool faulted() const { return faulted_; }
  /// A WAIT_MEM that is never satisfied with the watchdog off: the engine waits (STATUS.idle
  /// = 0) until an engine reset.
  bool hung() const { return hung_; }
  /// Stopped by a completed preemption (until PREEMPT.resume or an engine reset).
  bool preempted() const { return preempted_; }
  std::uint32_t head() const { return head_; }
  std::uint64_t fence_done() const { return fence_done_; }
  const FaultRecord& fault() const { return fault_; }
  /// Fences of retired entries, in retirement order (never cleared).
  const std::vector<std::uint64_t>& retired_fences() const { return retired_; }
  /// Bytes whose final content the RTL leaves to timing (writes after a failed write that the
  /// engine had not noticed yet); a comparison must skip them.
  const std::set<std::uint64_t>& uncertain_bytes() const { return bus_.uncertain_bytes(); }
  /// True once a fault happened whose reason depends on timing in the RTL (a failed write
  /// pending while a later packet of the same submission also faulted). A generator that
  /// wants exact comparisons avoids such streams; tests assert it stays false.
  bool ambiguous() const { return ambiguous_; }
  const Stats& stats() const { return stats_; }
  /// The GART's fault record (GART_FAULT_*).
  const GartRecord& gart_record() const { return gart_.record(); }
  const Config& config() const { return config_; }
  tb::HostMemory& memory() { return bus_.memory(); }

 private:
  friend class Exec;

  std::uint32_t ring_mask() const;
  void execute_entry();
  void reset_engine();
  void raise_fault(const FaultRecord& record);
  void preempt();

  Config config_;
  Gart gart_;
  Bus bus_;

  // Registers written by software.
  bool enable_ = false;
  std::uint64_t ring_base_ = 0;
  std::uint32_t ring_log2_ = 0;
  std::uint32_t ring_tail_ = 0;
  std::uint64_t wb_addr_ = 0;
  std::uint32_t int_enable_ = 0;
  std::uint32_t watchdog_ = 0;  ///< CP_WATCHDOG
  std::uint64_t preempt_fence_ = 0;
  std::uint64_t preempt_addr_ = 0;

  // Engine state.
  std::uint64_t last_fence_ = 0;     ///< the entry executed last (the GART's record of a preemption write)
  std::uint32_t last_context_ = 0;
  std::uint32_t head_ = 0;
  std::uint64_t fence_done_ = 0;
  std::uint32_t int_status_ = 0;
  bool faulted_ = false;
  bool hung_ = false;
  bool preempt_pending_ = false;  ///< requested while faulted: waits for the engine reset (which drops it)
  bool preempted_ = false;
  bool ambiguous_ = false;
  FaultRecord fault_{};
  std::optional<std::uint64_t> retire_watchdog_;
  std::vector<std::uint64_t> retired_;
  Stats stats_{};
};

}  // namespace sgpu::model
