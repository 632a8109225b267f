// CommandList: the user-mode side of a submission. It records copy, fill, blit, colour-fill,
// write-data, fence, wait and timestamp operations on allocations named by handle and produces
// what the user-mode driver hands to the kernel (D3DDDICB_RENDER): the command buffer in the
// device's packet format with every GPU address left 0, the allocation list (element 0 the null
// element, each allocation once, WriteOperation merged over all its uses) and the patch-location
// list (one entry per address field: AllocationIndex, AllocationOffset, PatchOffset; SlotId,
// SplitOffset and DriverId are left to Render, which regenerates them).
//
// The list checks what it can see (null handles, offsets and sizes that do not fit the 32-bit
// fields, zero-sized or overlapping operations the device refuses) with InvalidArgument naming the
// operation; whether an access stays inside its allocation is Render's job (it knows the sizes).
//
//   umd::CommandList cl;
//   SGPU_RETURN_IF_ERROR(cl.fill_rect(frame, 0, pitch, width * 4, height, 0xff202020));
//   SGPU_RETURN_IF_ERROR(cl.blit(sprite, 0, 64 * 4, frame, offset, pitch, 64 * 4, 64));
//   auto fence = scheduler.submit(context, cl);
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::umd {

class CommandList {
 public:
  /// Long operations are recorded as a chain of packets that each move at most this many bytes
  /// (COPY, FILL; BLIT_RECT and FILL_RECT by whole rows, at least one row a packet). The engine
  /// preempts at packet boundaries and restarts a cut COPY/FILL/BLIT_RECT/FILL_RECT from its
  /// header, so a long operation makes progress across preemptions one piece at a time and a
  /// preemption redoes at most one piece (docs/submission.md, "Preemption").
  static constexpr std::uint32_t kMaxPacketBytes = 256 * 1024;

  CommandList();

  /// COPY `bytes` from src + src_offset to dst + dst_offset (same allocation: ranges must not
  /// overlap), as COPY packets of at most kMaxPacketBytes.
  Status copy(AllocationHandle src, std::uint32_t src_offset, AllocationHandle dst, std::uint32_t dst_offset,
              std::uint32_t bytes);
  /// FILL `bytes` at dst + offset with the 32-bit pattern (FILL packets of at most kMaxPacketBytes).
  Status fill(AllocationHandle dst, std::uint32_t offset, std::uint32_t bytes, std::uint32_t pattern);
  /// BLIT_RECT: `height` rows of `width_bytes` from src (+ r * src_pitch) to dst (+ r * dst_pitch),
  /// as BLIT_RECT packets of whole rows, at most kMaxPacketBytes of them (one row at least).
  Status blit(AllocationHandle src, std::uint32_t src_offset, std::uint32_t src_pitch, AllocationHandle dst,
              std::uint32_t dst_offset, std::uint32_t dst_pitch, std::uint32_t width_bytes, std::uint32_t height);
  /// FILL_RECT: colour fill of `height` rows of `width_bytes` at dst + offset (+ r * pitch), in
  /// pieces of whole rows like blit().
  Status fill_rect(AllocationHandle dst, std::uint32_t offset, std::uint32_t pitch, std::uint32_t width_bytes,
                   std::uint32_t height, std::uint32_t pattern);
  /// WRITE_DATA: `count` dwords to dst + offset (4-aligned).
  Status write_data(AllocationHandle dst, std::uint32_t offset, const std::uint32_t* data, std::size_t count);
  /// FENCE: after every earlier write, the 64-bit `value` to dst + offset (8-aligned); `irq`
  /// also raises the DMA-completed interrupt.
  Status fence(AllocationHandle dst, std::uint32_t offset, std::uint64_t value, bool irq = false);
  /// WAIT_MEM: wait until (dword at src + offset & mask) `func` ref.
  Status wait(AllocationHandle src, std::uint32_t offset, abi::WaitMemFunc func, std::uint32_t ref,
              std::uint32_t mask = 0xffffffffu, std::uint32_t interval = 0);
  /// TIMESTAMP: the device's cycle counter to dst + offset (8-aligned).
  Status timestamp(AllocationHandle dst, std::uint32_t offset);
  /// NOP of `dwords` dwords.
  Status nop(std::uint32_t dwords = 1);

  /// For tests of Render: append dwords and patch entries exactly as given (no checks).
  void append_raw(const std::uint32_t* dwords, std::size_t count);
  void append_raw_patch(const PatchLocation& location);
  /// Index of `allocation` in the allocation list, adding it (write flag merged) if new.
  std::uint32_t reference(AllocationHandle allocation, bool write);

  const std::vector<std::uint32_t>& commands() const { return commands_; }
  std::uint32_t command_bytes() const { return static_cast<std::uint32_t>(commands_.size() * 4); }
  /// D3DDDI_ALLOCATIONLIST: element 0 is the null element.
  const std::vector<AllocationListEntry>& allocations() const { return allocations_; }
  /// D3DDDI_PATCHLOCATIONLIST, in stream order.
  const std::vector<PatchLocation>& patch_locations() const { return patches_; }
  std::size_t operations() const { return operations_; }
  bool empty() const { return commands_.empty(); }
  /// Forget everything recorded (keeps the capacity).
  void reset();

 private:
  std::vector<std::uint32_t> commands_;
  std::vector<AllocationListEntry> allocations_;
  std::vector<PatchLocation> patches_;
  std::size_t operations_ = 0;
};

}  // namespace sgpu::umd
