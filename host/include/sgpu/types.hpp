// The vocabulary every layer of libsgpu shares: allocation handles and the list entries that
// carry them, patch locations, segment IDs, and the two fence number spaces. Small value types
// only, so the user-mode side (umd), the kernel-mode driver (kmd), the memory manager (vidmm) and
// the scheduler (sched) can all name them without including each other.
//
// Fences. Two number spaces that must never mix, hence two types:
//  - RingFence: one per ring entry (render, present and paging alike), written into the entry
//    and by the device into the write-back record when the entry retires. Strictly increasing,
//    never reused; the scheduler gives them out at one place (Scheduler's emission point), a
//    Device used on its own numbers them itself (Device::submit_next).
//  - SubmissionId: one per Scheduler::submit()/present() call, what query() and wait() take.
//    A submission may become several ring entries (passes, split portions) and, after a hang
//    recovery, new ring fences: its SubmissionId stays the same.
// Both are 64-bit counters starting at 1 (0 = none). A number of one kind never converts to the
// other or to a plain integer; it compares with its own kind and with plain numbers, and steps
// by plain numbers (f + 1 is the fence after f).
#pragma once

#include <cstdint>
#include <ostream>

#include <fmt/core.h>

namespace sgpu {

// ---- segments (DXGK_SEGMENTDESCRIPTOR IDs)

/// 1-based segment ID; 0 is "system memory" (or "no preference"), never a real segment.
using SegmentId = std::uint32_t;
inline constexpr SegmentId kSystemMemory = 0;   ///< "segment 0": page-locked system memory
inline constexpr SegmentId kMaxSegmentId = 31;  ///< 5-bit IDs in DXGK_SEGMENTPREFERENCE

// ---- allocations and the lists that name them

/// The memory manager's handle of an allocation (hAllocation on the OS side). 0 is null.
/// Carries a generation, so a destroyed handle is detected, never confused with a new one.
struct AllocationHandle {
  std::uint64_t value = 0;
  explicit operator bool() const { return value != 0; }
  bool operator==(AllocationHandle o) const { return value == o.value; }
  bool operator!=(AllocationHandle o) const { return value != o.value; }
};

/// One element of a submission's allocation list (the input half of DXGK_ALLOCATIONLIST,
/// D3DDDI_ALLOCATIONLIST): element 0 is the null element by convention.
struct AllocationListEntry {
  AllocationHandle allocation;
  bool write = false;  ///< WriteOperation
};

/// D3DDDI_PATCHLOCATIONLIST: one GPU address field of a command or DMA buffer.
struct PatchLocation {
  std::uint32_t allocation_index = 0;
  std::uint32_t slot_id_and_reserved = 0;  ///< SlotId bits 0-23, Reserved bits 24-31 (must be 0)
  std::uint32_t driver_id = 0;
  std::uint32_t allocation_offset = 0;
  std::uint32_t patch_offset = 0;
  std::uint32_t split_offset = 0;
};

// ---- fences

/// A 64-bit sequence number of one kind (`Tag`). Explicit from a number, read with value();
/// numbers of different kinds do not compare or convert.
template <class Tag>
class Sequence {
 public:
  constexpr Sequence() = default;
  constexpr explicit Sequence(std::uint64_t value) : value_(value) {}
  constexpr std::uint64_t value() const { return value_; }
  /// False for 0, "none".
  constexpr explicit operator bool() const { return value_ != 0; }
  /// The number after this one.
  constexpr Sequence next() const { return Sequence(value_ + 1); }
  constexpr Sequence& operator++() {
    ++value_;
    return *this;
  }

  friend constexpr bool operator==(Sequence a, Sequence b) { return a.value_ == b.value_; }
  friend constexpr bool operator!=(Sequence a, Sequence b) { return a.value_ != b.value_; }
  friend constexpr bool operator<(Sequence a, Sequence b) { return a.value_ < b.value_; }
  friend constexpr bool operator<=(Sequence a, Sequence b) { return a.value_ <= b.value_; }
  friend constexpr bool operator>(Sequence a, Sequence b) { return a.value_ > b.value_; }
  friend constexpr bool operator>=(Sequence a, Sequence b) { return a.value_ >= b.value_; }
  friend constexpr bool operator==(Sequence a, std::uint64_t b) { return a.value_ == b; }
  friend constexpr bool operator!=(Sequence a, std::uint64_t b) { return a.value_ != b; }
  friend constexpr bool operator<(Sequence a, std::uint64_t b) { return a.value_ < b; }
  friend constexpr bool operator<=(Sequence a, std::uint64_t b) { return a.value_ <= b; }
  friend constexpr bool operator>(Sequence a, std::uint64_t b) { return a.value_ > b; }
  friend constexpr bool operator>=(Sequence a, std::uint64_t b) { return a.value_ >= b; }
  friend constexpr bool operator==(std::uint64_t a, Sequence b) { return a == b.value_; }
  friend constexpr bool operator!=(std::uint64_t a, Sequence b) { return a != b.value_; }
  friend constexpr bool operator<(std::uint64_t a, Sequence b) { return a < b.value_; }
  friend constexpr bool operator<=(std::uint64_t a, Sequence b) { return a <= b.value_; }
  friend constexpr bool operator>(std::uint64_t a, Sequence b) { return a > b.value_; }
  friend constexpr bool operator>=(std::uint64_t a, Sequence b) { return a >= b.value_; }
  /// The number `n` after / before this one (of the same kind).
  friend constexpr Sequence operator+(Sequence a, std::uint64_t n) { return Sequence(a.value_ + n); }
  friend constexpr Sequence operator-(Sequence a, std::uint64_t n) { return Sequence(a.value_ - n); }
  friend std::ostream& operator<<(std::ostream& os, Sequence s) { return os << s.value_; }

 private:
  std::uint64_t value_ = 0;
};

/// The fence of one ring entry (the device's SubmissionFenceId). See the file comment.
using RingFence = Sequence<struct RingFenceTag>;
/// What Scheduler::submit()/present() return and query()/wait() take. See the file comment.
using SubmissionId = Sequence<struct SubmissionIdTag>;

}  // namespace sgpu

/// Fences format as their number: fmt::format("fence {}", f).
template <class Tag>
struct fmt::formatter<sgpu::Sequence<Tag>> : fmt::formatter<std::uint64_t> {
  template <class Context>
  auto format(sgpu::Sequence<Tag> s, Context& ctx) const {
    return fmt::formatter<std::uint64_t>::format(s.value(), ctx);
  }
};
