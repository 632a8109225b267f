// Post-mortem: what the device and the driver knew at the moment of a fault or a hang (TDR),
// taken BEFORE the engine reset that recovers from it clears the fault record and restarts the
// ring.
//
// A PostMortem holds the fault record decoded with the names of spec/abi.toml (abi::Fault, the
// packet header in FAULT_DETAIL, the fetch error) and spec/registers.rdl (the GART's record), the
// ring entries around head and tail, the DMA buffer of the faulting (or hung) entry with the
// offending packet located and disassembled around it (diag/disasm.hpp: opcode names, fields,
// and which allocation of the submission each patched address belongs to), the GART entries the
// fault involves, and the last interrupts the ISR took.
//
// Who takes it:
//  - the scheduler, when SchedulerOptions::postmortem is set (sched/scheduler.hpp): at every
//    recovery (fault or TDR) and at a fatal fault/hang of a paging buffer, before the reset. It
//    keeps the interrupt history only then: with the option unset nothing is recorded or read;
//  - a program that drives the Device itself: capture(device, input) while the engine is
//    stopped, with the CPU view of the buffer it submitted.
//
// Renderings: to_json() (machine-readable, schema in docs/debugging.md) and to_text() (for a
// person); write_files() puts both, plus the buffer as a raw dump `sgpu disasm` reads, in a
// directory.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "sgpu/device.hpp"
#include "sgpu/diag/disasm.hpp"
#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::diag {

/// One interrupt the ISR took: when (transport time), what INT_STATUS said, and the write-back
/// fence right after.
struct InterruptRecord {
  std::chrono::nanoseconds time{0};
  InterruptEvents events;
  RingFence completed;
};

/// The last `capacity` interrupts, oldest first (a bounded history: recording never allocates
/// once it is full).
class InterruptHistory {
 public:
  explicit InterruptHistory(std::size_t capacity = 16) : capacity_(capacity) {}
  void record(const InterruptRecord& r);
  std::vector<InterruptRecord> snapshot() const { return {items_.begin(), items_.end()}; }
  std::size_t capacity() const { return capacity_; }

 private:
  std::size_t capacity_;
  std::deque<InterruptRecord> items_;
};

enum class PostMortemCause {
  Fault,    ///< the engine stopped on a fault (the fault record is set)
  Timeout,  ///< the running entry exceeded the TDR delay (a hang)
};
std::string_view to_string(PostMortemCause c);

/// One entry of the faulting submission's allocation list as it was placed for it.
struct AllocationRef {
  std::uint32_t index = 0;        ///< in the allocation list
  AllocationHandle handle;
  bool write = false;
  SegmentId segment = kSystemMemory;
  std::uint64_t gpu_address = 0;
  std::uint64_t size = 0;
  bool contains(std::uint64_t a) const { return segment != kSystemMemory && a >= gpu_address && a - gpu_address < size; }
};

/// One patch-location entry: the address field at `patch_offset` (byte offset in the DMA buffer)
/// was patched with allocation `allocation_index` + `allocation_offset`.
struct PatchRef {
  std::uint32_t patch_offset = 0;
  std::uint32_t allocation_index = 0;
  std::uint32_t allocation_offset = 0;
};

/// A ring slot as it was in memory.
struct RingSlot {
  std::uint32_t index = 0;
  abi::RingEntry entry{};
};

/// One GART page-table entry and why the post-mortem shows it.
struct GartEntry {
  std::uint32_t page = 0;
  std::uint64_t gpu_address = 0;  ///< of the page
  std::uint64_t pte = 0;
  bool valid = false, writable = false, snoop = false;
  bool dummy = false;             ///< unmapped: points at the dummy page
  std::uint64_t bus_page = 0;     ///< where it points
  std::string why;                ///< e.g. "GART fault page", "COPY.dst"
};

/// The DMA buffer of the faulting or hung ring entry.
struct FaultingBuffer {
  std::uint32_t ring_index = 0;
  abi::RingEntry entry{};
  std::vector<std::uint32_t> dwords;  ///< bytes [0, end_offset) of the buffer (empty if unknown)
  std::vector<DecodedPacket> packets; ///< [start_offset, end_offset) decoded
  std::optional<std::uint32_t> offending_offset;  ///< byte offset of the packet the fault names
  std::string located_by;             ///< how it was found (or why none was)
  std::vector<AllocationRef> allocations;
  std::vector<PatchRef> patches;
  /// "allocation #2 (handle 0x..) +0x40" for a patched field at `field_offset`, else the
  /// allocation whose range holds `address`, else "".
  std::string describe_address(std::uint32_t field_offset, std::uint64_t address) const;
};

struct PostMortem {
  PostMortemCause cause = PostMortemCause::Fault;
  std::string summary;                  ///< the scheduler's reason, e.g. "device fault: ..."
  std::chrono::nanoseconds time{0};     ///< transport time of the capture
  std::optional<FaultRecord> fault;
  RingFence completed_fence, last_submitted_fence;
  std::uint32_t ring_entries = 0, ring_head = 0, ring_tail = 0;
  std::vector<RingSlot> ring;           ///< the slots around head and tail, in ring order from head
  std::optional<FaultingBuffer> buffer;
  std::vector<GartEntry> gart;
  std::vector<InterruptRecord> interrupts;
  std::optional<AllocationRef> fault_allocation;  ///< the listed allocation holding FAULT_ADDR
};

/// What the caller knows beyond the device's registers and ring.
struct CaptureInput {
  PostMortemCause cause = PostMortemCause::Fault;
  std::string summary;
  /// The entry to dump: by default the fault record's ring index, else the ring head.
  std::optional<std::uint32_t> ring_index;
  /// The CPU view of that entry's DMA buffer (null: no disassembly).
  const void* buffer = nullptr;
  std::size_t buffer_bytes = 0;
  /// For a hang: the byte offset where the engine stopped (PreemptionState::offset), if known.
  std::optional<std::uint32_t> stopped_at;
  std::vector<AllocationRef> allocations;
  std::vector<PatchRef> patches;
  std::vector<InterruptRecord> interrupts;
};

/// Reads what it needs while the engine is still stopped (the latched fault record, or
/// FAULT_* if the ISR has not latched it; the ring and GART table from host memory).
PostMortem capture(Device& device, const CaptureInput& input);

/// FAULT_DETAIL in words: the packet header ("WRITE_DATA dwords=3"), the fetch error, or the
/// ring entry's flags, depending on the fault.
std::string describe_detail(const FaultRecord& fault);

/// Pretty-printed JSON (docs/debugging.md has the schema).
std::string to_json(const PostMortem& pm);
/// The readable view.
std::string to_text(const PostMortem& pm);

/// Writes <dir>/<stem>.json, <stem>.txt and, if the buffer is known, <stem>.dma.bin (raw
/// little-endian dwords, `sgpu disasm` input; its name is in the JSON). Creates `dir`.
/// Returns the paths written. InvalidArgument naming the path on an I/O error.
Result<std::vector<std::string>> write_files(const PostMortem& pm, const std::string& dir, const std::string& stem);

}  // namespace sgpu::diag
