// Paging operations (DxgkDdiBuildPagingBuffer) as typed records, and the executor seam.
//
// The memory manager decides *what* moves where; a PagingExecutor makes it happen. Every
// operation of one decision (one make-resident, one eviction, one lock...) is handed over as one
// PagingBuffer, in order: the executor must complete them in that order and before any later
// buffer. Two executors exist or are planned:
//   - ReferenceExecutor (reference_executor.hpp): executes in process over a byte-exact model
//     of the segments, so paging policy and "contents survive eviction" are testable without
//     device paging;
//   - the device executor (docs/memory-manager.md): encodes each buffer as privileged packets
//     (COPY / FILL / MAP / UNMAP / TLB_INVALIDATE) and submits it on the ring with the paging
//     flag and its own fence.
//
// Operation codes and field names follow DXGK_BUILDPAGINGBUFFER_OPERATION and DXGKARG_BUILD-
// PAGINGBUFFER. Addresses on the segment side are GPU addresses (segment BaseAddress + offset);
// the system side is the allocation's backing store (the MDL), given as memory + byte offset.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/types.hpp"

namespace sgpu::vidmm {

/// DXGK_BUILDPAGINGBUFFER_OPERATION values of the operations a WDDM 1.x driver implements.
enum class PagingOperationType : std::uint32_t {
  Transfer = 0,
  Fill = 1,
  DiscardContent = 2,
  MapApertureSegment = 5,
  UnmapApertureSegment = 6,
  InitContextResource = 10,
};
std::string_view to_string(PagingOperationType t);

/// One side of a transfer: a segment address, or system memory (the backing store).
struct PagingLocation {
  SegmentId segment = kSystemMemory;
  std::uint64_t segment_address = 0;   ///< segment != 0: GPU address (BaseAddress + offset)
  const DmaMemory* system = nullptr;   ///< segment == 0: the backing store (the MDL)
  std::uint64_t system_offset = 0;     ///< segment == 0: byte offset into `system`
};

/// DXGK_TRANSFERFLAGS (the bits a physical-addressing driver sees).
struct TransferFlags {
  bool transfer_start = false;      ///< first piece of the allocation's move
  bool transfer_end = false;        ///< last piece (both set for a single-piece move)
  bool allocation_is_idle = false;  ///< no submitted work references the allocation any more
};

/// TRANSFER: copy `transfer_size` bytes of the allocation. A large move is split into pieces;
/// `transfer_offset` is the piece's offset inside the allocation, and source/destination are
/// already advanced by it.
struct TransferOp {
  std::uint64_t allocation = 0;  ///< the driver's handle (hAllocation)
  std::uint64_t transfer_offset = 0;
  std::uint64_t transfer_size = 0;
  PagingLocation source;
  PagingLocation destination;
  TransferFlags flags;
};

/// FILL: initial content of a content-less allocation on its first page-in to a memory segment.
struct FillOp {
  std::uint64_t allocation = 0;
  std::uint64_t fill_size = 0;
  std::uint32_t fill_pattern = 0;
  PagingLocation destination;  ///< always a memory segment
};

/// DISCARD_CONTENT: the allocation leaves the segment and its content is not needed.
struct DiscardContentOp {
  std::uint64_t allocation = 0;
  bool allocation_is_idle = false;
  SegmentId segment = 0;
  std::uint64_t segment_address = 0;
  std::uint64_t size = 0;
};

/// MAP_APERTURE_SEGMENT: aperture pages [offset_in_pages, +number_of_pages) -> the pages of
/// `pages` starting at page `mdl_offset`.
struct MapApertureSegmentOp {
  std::uint64_t device = 0;      ///< hDevice (0 for DMA buffers / system objects)
  std::uint64_t allocation = 0;  ///< 0 when a DMA buffer is mapped
  SegmentId segment = 0;
  std::uint64_t offset_in_pages = 0;
  std::uint64_t number_of_pages = 0;
  const DmaMemory* pages = nullptr;
  std::uint64_t mdl_offset = 0;  ///< in pages
  bool cache_coherent = false;
};

/// UNMAP_APERTURE_SEGMENT: re-point the range at the dummy page (never leave a hole).
struct UnmapApertureSegmentOp {
  std::uint64_t device = 0;
  std::uint64_t allocation = 0;
  SegmentId segment = 0;
  std::uint64_t offset_in_pages = 0;
  std::uint64_t number_of_pages = 0;
  std::uint64_t dummy_page = 0;  ///< bus address of the dummy page
};

/// INIT_CONTEXT_RESOURCE: first content of a context allocation (the context's initial state).
struct InitContextResourceOp {
  std::uint64_t allocation = 0;
  std::uint64_t size = 0;
  PagingLocation destination;
  void* cpu_address = nullptr;  ///< valid only for CpuVisible + Protected aperture-only allocations
  std::uint32_t initial_pattern = 0;
};

using PagingOperation = std::variant<TransferOp, FillOp, DiscardContentOp, MapApertureSegmentOp,
                                     UnmapApertureSegmentOp, InitContextResourceOp>;
PagingOperationType type_of(const PagingOperation& op);
/// One line for logs and test failures, e.g. "TRANSFER alloc 0x7 [start,end] 4096 B seg 1 0x1000 -> sys +0".
std::string to_string(const PagingOperation& op);

/// The operations of one memory-manager decision, to be executed in order.
struct PagingBuffer {
  std::vector<PagingOperation> operations;
  bool empty() const { return operations.empty(); }
};

/// Where paging operations run. Implementations must execute a buffer's operations in order
/// and finish a buffer before any work handed to the device afterwards starts.
class PagingExecutor {
 public:
  virtual ~PagingExecutor() = default;
  /// Runs (or queues in order) the buffer. An error means the device did not do it; the memory
  /// manager then reports the error with hardware_touched set.
  virtual Status execute(const PagingBuffer& buffer) = 0;
  /// Bus address of the page unmapped aperture pages point at.
  virtual std::uint64_t dummy_page() const = 0;
  /// The ring fence the last execute() put its buffer under, when the buffer may still be
  /// running (paging runs ahead: the memory manager treats what it moved as busy until that
  /// fence completes). 0 (the default): execute() returned only once the buffer had run.
  virtual RingFence last_paging_fence() const { return RingFence{}; }
  /// Waits until `fence` (one last_paging_fence() returned) completed: Errc::Timeout naming the
  /// fence after `timeout` (the transport's time), Errc::DeviceLost once the device is gone.
  virtual Status wait_paging(RingFence fence, std::chrono::nanoseconds timeout) {
    (void)fence, (void)timeout;
    return ok_status();
  }
  /// CPU pointer to `bytes` at `offset` of a CpuVisible memory segment, or nullptr when the CPU
  /// cannot reach it (then Lock pages the allocation out to system memory first).
  virtual void* cpu_address(SegmentId segment, std::uint64_t offset, std::uint64_t bytes) {
    (void)segment, (void)offset, (void)bytes;
    return nullptr;
  }
};

}  // namespace sgpu::vidmm
