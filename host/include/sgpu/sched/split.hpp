// DMA-buffer splitting (wddm-semantics §2.3): the walk VidMm makes over a packet's patch-location
// list when the whole allocation list cannot be resident at once.
//
// The walk goes front to back, in SplitOffset order, over groups of entries sharing one
// SplitOffset (one device packet: Render gives every address field of a packet the packet's
// offset). Each entry binds its allocation into row SlotId of a slot table of
// MaxAllocationListSlotId rows (a later entry with the same SlotId replaces it). A portion grows
// group by group while its working set (the allocations its entries reference) still fits; when
// the next group does not fit, the portion [previous split, group's SplitOffset) is emitted with
// its patch sub-range (PatchLocationListSubmissionStart/Length), and the next portion starts at
// that group. A group that does not fit even alone cannot run at all: typed error.
//
// Pure logic: whether a set fits and what to do with a portion are the caller's callbacks (the
// scheduler makes the set resident and submits the portion; unit tests use a capacity model).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "sgpu/kmd/command_pools.hpp"
#include "sgpu/result.hpp"

namespace sgpu::sched {

/// One portion of a split DMA buffer.
struct SplitPortion {
  std::uint32_t dma_start = 0;    ///< DmaBufferSubmissionStartOffset
  std::uint32_t dma_end = 0;      ///< DmaBufferSubmissionEndOffset
  std::uint32_t patch_start = 0;  ///< PatchLocationListSubmissionStart
  std::uint32_t patch_length = 0; ///< PatchLocationListSubmissionLength
  /// Allocation-list indices the portion's entries reference (sorted, unique): its working set.
  std::vector<std::uint32_t> allocations;
  /// Allocation-list indices still bound in the slot table at the end of the portion (what a
  /// following portion may keep resident), sorted, unique.
  std::vector<std::uint32_t> still_bound;
};

/// Answers whether the allocations (allocation-list indices) can be resident together. An
/// error other than OutOfMemory stops the walk with that error; OutOfMemory means "no".
using FitsFn = std::function<Result<bool>(const std::vector<std::uint32_t>& allocations)>;
/// Receives each portion as soon as it is closed (the scheduler submits it before the walk
/// continues, so the paging for the next portion runs after it). An error stops the walk.
using EmitFn = std::function<Status(const SplitPortion& portion)>;

/// Walks patches [0, count) (SplitOffset must be non-decreasing and inside [dma_start,
/// dma_end], SlotId < max_slot_id, Reserved bits 0: InvalidArgument naming the entry) and
/// emits the portions covering [dma_start, dma_end). With no patch entries the whole range is
/// one portion. Returns how many portions were emitted. A group that does not fit alone:
/// OutOfMemory naming its SplitOffset, the entries and the allocations.
Result<std::uint32_t> walk_split(const PatchLocation* patches, std::uint32_t count, std::uint32_t max_slot_id,
                                 std::uint32_t dma_start, std::uint32_t dma_end, const FitsFn& fits,
                                 const EmitFn& emit);

}  // namespace sgpu::sched
