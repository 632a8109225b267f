// DeviceExecutor: runs the memory manager's paging buffers on the device.
//
// Each PagingBuffer becomes one privileged DMA buffer (ring flags paging | privileged) with its
// own fence, executed in ring order. With a queue that retires by fence (the GPU scheduler:
// PagingQueue::retired_fence()), execute() returns once the buffer is on the ring: paging runs
// ahead, overlapping the rendering before it, and last_paging_fence() names the fence that
// retires it. Without one (the device alone), execute() waits for each buffer as before:
//   TRANSFER piece          -> COPY src -> dst (segment side: GPU address; system side: the
//                              backing store's bus address, system physical, allowed because the
//                              buffer is privileged)
//   FILL                    -> FILL with the 32-bit pattern
//   INIT_CONTEXT_RESOURCE   -> FILL with the initial pattern at the destination
//   DISCARD_CONTENT         -> nothing (bookkeeping only)
//   MAP_APERTURE_SEGMENT    -> MAP of the backing-store pages (PTE valid | writable | snoop if
//                              CacheCoherent); the packet invalidates the TLB range itself
//   UNMAP_APERTURE_SEGMENT  -> UNMAP to the aperture's dummy PTE
//   end of buffer           -> FENCE (value64) of the paging fence ID into the executor's record
//
// Every record is validated before a byte is written or a register touched (InvalidArgument
// naming the operation, hardware_touched == false). A device fault or a timeout while waiting is
// reported with hardware_touched == true and the fault record in the message; the engine is then
// stopped and the caller (the scheduler's recovery) resets it.
//
// Paging buffers are contiguous system memory fetched at their bus address. They come from the
// DMA-buffer pool set_buffer_pool() installs (sched::Runtime installs the system device's: the
// paging buffers then follow that device's DXGK_DEVICEINFO: never below its DmaBufferSize,
// private data zeroed at creation; one is acquired per paging buffer, large enough for it, and
// given back once its own fence retired, not before and not waiting for anything else), else
// from buffers of the executor's own (one, reused, when every paging buffer is waited for; one
// per paging buffer in flight, reused once retired, when paging runs ahead). Retired buffers are
// reclaimed at the next execute() or wait_paging().
//
// The aperture pages the memory manager's aperture segment covers belong to the memory manager:
// they are written by MAP/UNMAP packets, so the Aperture object's own bookkeeping (is_mapped())
// does not see them; do not map those pages through Aperture::map as well.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "sgpu/device.hpp"
#include "sgpu/kmd/command_pools.hpp"
#include "sgpu/kmd/segments.hpp"
#include "sgpu/vidmm/paging.hpp"

namespace sgpu::kmd {
class DmaBufferPool;
}

namespace sgpu::vidmm {

/// What the encoder needs to know about the device (no Device needed: unit tests build it).
struct PagingTarget {
  std::vector<kmd::SegmentDescriptor> segments;  ///< segments[i] = segment ID i + 1
  std::uint64_t aperture_base = 0;               ///< GPU address of aperture page 0
  std::uint32_t aperture_pages = 0;              ///< GART_TABLE_SIZE (0: no aperture)
  std::uint64_t dummy_page = 0;                  ///< bus address of the dummy page
  std::uint64_t dummy_pte = 0;                   ///< the PTE unmapped pages get
  std::uint64_t system_limit = ~std::uint64_t{0};  ///< system-physical addresses must be below this
};

/// The PagingTarget of an opened device: its aperture (if any) and `segments`.
PagingTarget paging_target(Device& device, std::vector<kmd::SegmentDescriptor> segments);

/// Upper bound of the bytes encode_paging_buffer() writes for `buffer` (fence included; with
/// `timestamps`, the timestamp bracket and its 16-byte landing area too).
std::size_t paging_buffer_bytes(const PagingBuffer& buffer, bool timestamps = false);

/// Checks every operation of `buffer` against `target` (typed errors naming the operation and
/// the field, hardware_touched == false).
Status validate_paging_buffer(const PagingTarget& target, const PagingBuffer& buffer);

/// Validates, then encodes `buffer` into [cpu, cpu + bytes) followed by a FENCE writing
/// `fence_value` (64-bit) to `fence_addr`. Returns the bytes written. With a `timestamp_addr`
/// (tracing; 8-byte aligned), the operations are bracketed by two TIMESTAMPs writing to
/// timestamp_addr and timestamp_addr + 8 (the engine's start and end of the buffer), the
/// closing one before the FENCE.
Result<std::uint32_t> encode_paging_buffer(const PagingTarget& target, const PagingBuffer& buffer, void* cpu,
                                           std::size_t bytes, std::uint64_t fence_addr, std::uint64_t fence_value,
                                           std::uint64_t timestamp_addr = 0);

/// A paging buffer ready for the ring: bytes [0, end_offset) of a system-memory DMA buffer (the
/// entry is paging + privileged, so the device fetches it at its bus address), run under
/// `context_id`.
struct PagingSubmission {
  const DmaMemory* buffer = nullptr;
  std::uint32_t end_offset = 0;
  std::uint32_t context_id = 0;
  /// Tracing: byte offset of the timestamp bracket's landing area in `buffer` (start, end:
  /// 2 x 64-bit device cycles, 0 until written); 0 = no bracket.
  std::uint32_t timestamp_landing = 0;
};

/// Writes the ring fence a paging buffer was given into the buffer itself (its closing FENCE
/// packet: the paging buffer's Patch). Called by the queue once it has taken the fence, before
/// the ring entry is written.
using PagingStamp = std::function<Status(RingFence fence)>;

/// Where the executor puts its paging buffers on the ring and waits for them. Without one, the
/// executor numbers with Device::next_fence() and uses Device::submit and Device::wait_fence
/// itself. The GPU scheduler installs one (sched/scheduler.hpp) so paging packets take their
/// fences at its emission point, in ring order with render packets, share its interrupt
/// handling and its hang recovery (an engine reset resubmits them with their original fences).
class PagingQueue {
 public:
  virtual ~PagingQueue() = default;
  /// Puts the buffer on the ring with the next ring fence, calling `stamp(fence)` first.
  /// Returns the fence.
  virtual Result<RingFence> submit_paging(const PagingSubmission& submission, const PagingStamp& stamp) = 0;
  /// Returns when `fence` completed (recovering from hangs meanwhile), or the error.
  virtual Status wait_paging(RingFence fence, std::chrono::nanoseconds timeout) = 0;
  /// The newest ring fence retired (every ring entry up to it ran), for a queue that retires its
  /// entries by fence: the executor then does not wait for each paging buffer (paging runs
  /// ahead) and gives a buffer back once this reaches its fence. nullopt (the default): the
  /// executor waits for every paging buffer before execute() returns.
  virtual std::optional<RingFence> retired_fence() const { return std::nullopt; }
};

struct DeviceExecutorOptions {
  /// Longest wait for one paging buffer, in the transport's time.
  std::chrono::nanoseconds timeout = std::chrono::milliseconds(200);
  std::uint32_t context_id = 0;
  /// With a queue that retires by fence, leave paging buffers running (false: wait for each
  /// one, as without a scheduler; benchmarks compare the two).
  bool run_ahead = true;
};

class DeviceExecutor final : public PagingExecutor {
 public:
  /// `segments` are the adapter's segments (segment ID i + 1 = segments[i]); the device must
  /// outlive the executor. InvalidArgument if an aperture segment lies outside the device's
  /// aperture table.
  static Result<std::unique_ptr<DeviceExecutor>> create(Device& device, std::vector<kmd::SegmentDescriptor> segments,
                                                        DeviceExecutorOptions options = {});

  Status execute(const PagingBuffer& buffer) override;
  std::uint64_t dummy_page() const override { return target_.dummy_page; }
  RingFence last_paging_fence() const override { return last_in_flight_; }
  /// Waits (through the queue) until `fence` retired, then reclaims retired buffers.
  Status wait_paging(RingFence fence, std::chrono::nanoseconds timeout) override;
  /// Gives back the buffers of paging buffers whose fence retired (the queue's retired_fence()).
  /// An error if a retired buffer's closing FENCE did not write its fence (DeviceFault).
  Status reclaim();
  /// Paging buffers on the ring whose buffers are not reclaimed yet.
  std::size_t in_flight() const { return in_flight_.size(); }

  const PagingTarget& target() const { return target_; }
  /// Routes submissions and waits through `queue` (nullptr: back to the device directly). The
  /// queue must outlive the executor or be removed first.
  /// Buffers still in flight when the queue changes stay with the executor until destruction
  /// (only the old queue could say when they retire).
  void set_queue(PagingQueue* queue);
  /// Takes paging buffers from `pool` (nullptr: the executor's own buffer). The pool must hand
  /// out buffers the device fetches at their bus address (no mapper: Unsupported otherwise,
  /// nothing changed), and outlive the executor or be removed first. A buffer whose paging
  /// failed is kept by the executor (the engine may still hold it), not given back.
  Status set_buffer_pool(kmd::DmaBufferPool* pool);
  kmd::DmaBufferPool* buffer_pool() const { return pool_; }
  /// Tracing: bracket every paging buffer with TIMESTAMPs into its own landing area (the last
  /// 16 bytes of the buffer; PagingSubmission::timestamp_landing). Off: buffers as without it.
  void set_timestamps(bool on) { timestamps_ = on; }

  struct Counters {
    std::uint64_t buffers = 0;           ///< submitted paging buffers
    std::uint64_t copy_bytes = 0;        ///< bytes moved by COPY
    std::uint64_t fill_bytes = 0;        ///< bytes written by FILL
    std::uint64_t mapped_pages = 0;      ///< pages written by MAP
    std::uint64_t unmapped_pages = 0;    ///< pages written by UNMAP
    RingFence last_fence;                ///< fence of the last paging buffer
    std::uint64_t ran_ahead = 0;         ///< buffers execute() left running (not waited for)
    std::uint64_t reclaimed = 0;         ///< buffers of retired paging given back / reused
  };
  const Counters& counters() const { return counters_; }

 private:
  DeviceExecutor(Device& device, PagingTarget target, DeviceExecutorOptions options, DmaMemory fence_record);

  Device& device_;
  PagingTarget target_;
  DeviceExecutorOptions options_;
  DmaMemory fence_record_;
  std::optional<DmaMemory> buffer_;
  PagingQueue* queue_ = nullptr;
  kmd::DmaBufferPool* pool_ = nullptr;
  std::vector<DmaMemory> stranded_;  ///< pool buffers of failed paging, kept until destruction
  /// A paging buffer that ran ahead: its memory (pooled or the executor's) until its fence retired.
  struct InFlight {
    RingFence fence;
    std::optional<kmd::DmaBuffer> pooled;
    std::optional<DmaMemory> own;
  };
  std::vector<std::unique_ptr<InFlight>> in_flight_;  // ring order
  std::vector<DmaMemory> spare_;     // the executor's own buffers, retired, for reuse
  RingFence last_in_flight_;         // fence of the last buffer execute() left running
  std::optional<Error> broken_;      // a retired buffer's FENCE record disagreed: every execute() fails
  void count(const PagingBuffer& buffer, RingFence fence);
  bool timestamps_ = false;
  Counters counters_;
};

}  // namespace sgpu::vidmm
