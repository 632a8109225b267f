// Device: the kernel-mode-driver core of libsgpu for one softgpu.
//
// Opening checks the ID block and reads the capabilities, then resets the engine and sets up the
// ring (entries + write-back record in DMA memory). submit() follows etnaviv's small steps:
// validate (no hardware touched) → write the ring entry → ring the doorbell. Every ring entry
// carries a RingFence (sgpu/types.hpp) the caller gives: fences are 64-bit, start at 1 and only
// grow, across engine resets too; whoever owns the ring numbers them (the scheduler at its
// emission point), and submit_next() numbers for a program that drives the Device alone.
// Completion is read from the write-back record in host memory; wait_fence() sleeps on the
// interrupt. An entry retires exactly when the device's write of the record's fence word is
// acknowledged (docs/programming-guide.md, "Retiring"): a faulting entry never completes, and
// the entries before it all did.
//
// A Device owns its Transport. No global state: two Devices on two transports are independent.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sgpu/aperture.hpp"
#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/types.hpp"

namespace sgpu {

/// A segment of the GPU address space as the device reports it.
struct SegmentInfo {
  std::uint64_t base = 0;
  std::uint64_t size = 0;  ///< 0 = segment absent
};

/// What the device reports in its ID and capability registers.
struct DeviceInfo {
  std::uint32_t magic = 0;
  std::uint32_t version_major = 0;
  std::uint32_t version_minor = 0;
  std::uint32_t build_id = 0;
  // CAP_BUS
  std::uint32_t bus_data_bytes = 0;     ///< data bus width in bytes
  std::uint32_t bus_addr_bits = 0;      ///< bus address width in bits
  std::uint32_t max_burst = 0;          ///< longest read burst, beats
  std::uint32_t outstanding_reads = 0;  ///< reads the fetch engine keeps in flight
  // CAP_MEM
  std::uint32_t page_shift = 0;         ///< log2 of the GPU page size
  std::uint32_t max_ring_log2 = 0;      ///< log2 of the largest ring, entries
  std::uint32_t max_indirect_depth = 0;
  // CAP_FEATURES
  std::uint32_t feature_bits = 0;
  bool has_gart = false;
  bool has_copy_engine = false;
  bool has_preemption = false;
  bool has_memory_segment = false;
  SegmentInfo memory_segment;
  SegmentInfo aperture_segment;  ///< GPU range the GART translates (CAP_APSEG_*)
  // GART_CAP (0 without a GART)
  std::uint32_t gart_tlb_entries = 0;
  std::uint32_t gart_sys_addr_bits = 0;  ///< system-physical GPU addresses are below 2^this

  std::uint64_t page_size() const { return page_shift < 64 ? std::uint64_t{1} << page_shift : 0; }
};

/// The GART's record of a refused translation (GART_FAULT_*).
struct GartFaultRecord {
  std::uint32_t reason = 0;  ///< a regs::GartFault (sgpu/gen/sgpu_reg_enums.hpp), as read
  std::uint32_t client = 0;  ///< a regs::GartClient: fetch engine, CP write path, copy engine read/write
  bool write = false;
  bool privileged = false;
  bool more_faults = false;
  std::uint64_t page_address = 0;  ///< GPU address of the refused page
  RingFence fence;
  std::uint32_t context_id = 0;
};
/// E.g. "WRITE_PROTECT on a write by the CP write path, page 0x18000000003000".
std::string to_string(const GartFaultRecord& g);

/// Why and where the engine stopped (FAULT_* registers), valid while STATUS.faulted.
struct FaultRecord {
  abi::Fault reason = abi::Fault::None;
  std::uint32_t raw_reason = 0;   ///< the code as read, also when it is not a known abi::Fault
  std::uint32_t ring_index = 0;
  std::uint64_t address = 0;
  RingFence fence;
  std::uint32_t detail = 0;
  /// The GART's record, when the device has a GART and it recorded a fault.
  std::optional<GartFaultRecord> gart;
};
/// One line, e.g. "ILLEGAL_OPCODE at ring index 3 (fence 4), address 0x..., detail 0x...".
std::string to_string(const FaultRecord& f);

struct DeviceOptions {
  /// Ring size as log2 of entries; clamped to the device's CAP_MEM.max_ring_log2.
  unsigned ring_log2_entries = 6;
  /// Longest wait for an engine reset to drain, in the transport's time.
  std::chrono::nanoseconds reset_timeout = std::chrono::milliseconds(1);
  /// Set up the aperture (page table, dummy page) and enable the GART when the device has one
  /// (CAP_FEATURES.gart). With the GART on, ordinary submissions reach memory only through
  /// the aperture or the memory segment; system-physical addresses need the privileged or
  /// paging flag. false = leave it off (bring-up: every GPU address is a bus address).
  bool gart = true;
  /// The aperture manager's options.
  ApertureOptions aperture;
};

/// One submission: bytes [start_offset, end_offset) of the DMA buffer are executed as packets.
/// The buffer is either `buffer` (system memory, reached at its bus address: needs the
/// privileged or paging flag while the GART is on) or, with `buffer` null, the GPU address
/// `gpu_address` (e.g. Aperture::gpu_addr() of pages the buffer is mapped to).
struct Submission {
  const DmaMemory* buffer = nullptr;
  std::uint32_t start_offset = 0;
  std::uint32_t end_offset = 0;
  std::uint32_t context_id = 0;
  std::uint32_t flags = 0;  ///< abi::ring_flags
  std::uint64_t gpu_address = 0;  ///< used when buffer is null
};

/// INT_STATUS events one acknowledge_interrupts() call took.
struct InterruptEvents {
  bool dma_completed = false;  ///< a fence retired (DMA_COMPLETED)
  bool fault = false;          ///< the engine stopped on a fault (record latched)
  bool preempted = false;      ///< a requested preemption completed (DMA_PREEMPTED)
  bool any() const { return dma_completed || fault || preempted; }
};

/// PREEMPT_STATUS, PREEMPT_OFFSET, RING_HEAD and the preemption record.
struct PreemptionState {
  bool pending = false;      ///< requested, not yet stopped
  bool preempted = false;    ///< stopped; the record below is valid
  bool in_entry = false;     ///< stopped inside the entry at ring_index (it did not retire)
  std::uint32_t ring_index = 0;  ///< RING_HEAD at the stop
  std::uint32_t offset = 0;      ///< PREEMPT_OFFSET: first packet of that entry not completed
  RingFence preemption_fence;    ///< record: PREEMPT_FENCE at the request
  RingFence last_completed;      ///< record: latest retired fence (LastCompletedFenceId)
};

class Device {
 public:
  /// Checks the ID (magic, major version), reads the capabilities, resets the engine and sets up
  /// the ring. DeviceMismatch names the expected and the found value.
  static Result<Device> open(std::unique_ptr<Transport> transport, const DeviceOptions& options = {});

  Device(Device&&) noexcept;
  Device& operator=(Device&&) noexcept;
  ~Device();

  const DeviceInfo& info() const;
  Transport& transport();
  /// The aperture manager, or nullptr if the device has no GART or DeviceOptions::gart is off.
  Aperture* aperture();
  /// Ring size in entries; at most entries() - 1 submissions can be in flight.
  std::uint32_t ring_entries() const;

  /// Validates the submission (alignment, bounds, flags, ring space: errors touch no hardware),
  /// writes its ring entry with `fence` and rings the doorbell; returns `fence`. The fence must
  /// be greater than the fence of every entry written to the ring since the last reset and than
  /// completed_fence(), so completion stays monotonic (InvalidArgument otherwise); an aborted
  /// fence may be given again after a reset (the scheduler resubmits paging buffers with their
  /// fences) and is then live again.
  Result<RingFence> submit(const Submission& submission, RingFence fence);
  /// The numbering convenience for a program that drives the Device alone (tools, tests):
  /// submit(submission, next_fence()).
  Result<RingFence> submit_next(const Submission& submission);
  /// last_submitted_fence().next(): the fence submit_next() would give.
  RingFence next_fence() const;

  /// Waits until `fence` has completed. Timeout names the fence and the last fence seen;
  /// DeviceFault carries the fault record (the faulting entry's fence and every later one,
  /// also when the fault happened while the entry was retiring); Aborted if an engine reset
  /// discarded the fence.
  Status wait_fence(RingFence fence, std::chrono::nanoseconds timeout);

  /// Latest completed fence, from the write-back record in host memory (no MMIO). Once the ISR
  /// latched a fault, never the faulting entry's fence (a failed write of the record's fence
  /// word may still have reached memory): the fence of the entry before it.
  RingFence completed_fence() const;
  /// Fence of the latest submission (0 before the first).
  RingFence last_submitted_fence() const;
  /// Ring head from the write-back record (no MMIO).
  std::uint32_t ring_head() const;
  /// Ring tail as last written to the doorbell.
  std::uint32_t ring_tail() const;
  /// The ring entry in slot `index` (modulo the ring size) as it is in host memory (no MMIO);
  /// slots are cleared at every reset (diagnostics: diag/postmortem.hpp).
  abi::RingEntry ring_entry(std::uint32_t index) const;

  /// The fault record if the engine is stopped on a fault, else nullopt.
  Result<std::optional<FaultRecord>> fault();

  /// Resets the engine (RESET.engine), waits for it to drain, and sets the ring up again.
  /// Submissions not completed before the reset are aborted (a faulting entry always is: the
  /// fault record is read first if the ISR has not latched it); fence numbering continues and
  /// completed_fence() stays at the last fence that really retired.
  Status reset_engine();
  /// LastAbortedFenceId of the latest reset: the last fence written to the ring if the reset
  /// discarded anything, else the completed fence (0 before any reset).
  RingFence last_aborted_fence() const;

  // ---- interrupt path (the scheduler's ISR; wait_fence() does this itself)
  /// Waits up to `timeout` in the transport's time (the simulator runs instead of sleeping)
  /// for the interrupt line; true if it is high.
  Result<bool> wait_interrupt(std::chrono::nanoseconds timeout);
  /// The ISR: reads INT_STATUS, acknowledges the bits it read and latches the fault record on
  /// a fault. Acknowledge first, then look at memory: an event after this raises the line again.
  Result<InterruptEvents> acknowledge_interrupts();
  /// Whether the device still answers: one read of ID_MAGIC. Errc::DeviceLost if it reads all
  /// ones (the card is gone: surprise removal, a dead link) or another value than the magic;
  /// TransportError if the transport fails. acknowledge_interrupts() reports an all-ones
  /// INT_STATUS as DeviceLost too.
  Status check_present();
  /// An all-ones read was seen (check_present() or acknowledge_interrupts()).
  bool lost() const;
  /// The fault record the ISR latched (cleared by reset_engine()).
  const std::optional<FaultRecord>& latched_fault() const;

  // ---- preemption (CAP_FEATURES.preemption; Unsupported otherwise)
  /// DxgkDdiPreemptCommand: asks the engine to stop at the next packet boundary; completion is
  /// the preempted interrupt and the record at PREEMPT_ADDR (set up by the device itself).
  Status request_preemption(RingFence preemption_fence);
  Result<PreemptionState> preemption_state();
  /// Continues where the engine stopped (the alternative is reset_engine()).
  Status resume_from_preemption();

  /// The device's free-running cycle counter (CYCLE_LO/HI).
  Result<std::uint64_t> cycle_counter();

 private:
  struct State;
  explicit Device(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

}  // namespace sgpu
