// What Render and Present share: the DMA-buffer checks, the room test, the output patch
// entries and the end of a pass (the submission-fence packet and the private data).
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

#include "sgpu/gen/abi.hpp"
#include "sgpu/kmd/render.hpp"
#include "sgpu/overlap.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::kmd::detail {

/// DXGKARG_RENDER/PRESENT: pDmaBuffer starts 4 KiB aligned.
inline constexpr std::uintptr_t kDmaBufferAlign = 4096;

inline const abi::PacketInfo& packet_info(abi::Opcode op) { return *abi::find_packet(static_cast<std::uint8_t>(op)); }

/// Writes a 64-bit GPU address into dwords [dword, dword + 1] of a packet.
inline void put_address(std::uint32_t* pkt, unsigned dword, std::uint64_t address) {
  pkt[dword] = static_cast<std::uint32_t>(address);
  pkt[dword + 1] = static_cast<std::uint32_t>(address >> 32);
}

/// What a packet touches through one of its address fields, and the alignment the device
/// requires of that address (1 = any).
struct Access {
  std::uint64_t extent = 0;
  std::uint32_t align = 1;
};

/// The access through address field `field` of the packet `pkt` (header included, `dwords`
/// long, already checked against the packet's min/max), as spec/abi.toml describes the field
/// (`extent`, `align`; abi::AddressField). The ABI generator refuses an address field without
/// both, so a new packet cannot slip through Render or Patch unchecked.
[[gnu::always_inline]] inline Access access_of(const abi::AddressField& field, const std::uint32_t* pkt, std::uint32_t dwords) {
  const std::uint8_t flags = abi::header_flags(pkt[0]);
  const auto& d = field.extent_dwords;
  std::uint64_t extent = 0;
  switch (field.extent) {
    case abi::ExtentKind::Constant:
      extent = field.value.get(flags);
      break;
    case abi::ExtentKind::Field:
      extent = pkt[d[0]];
      break;
    case abi::ExtentKind::Variable:  // dwords >= min_dwords > d[0]
      extent = 4ull * (dwords - d[0]);
      break;
    case abi::ExtentKind::Rect:
      extent = rect_extent(pkt[d[0]], pkt[d[1]], pkt[d[2]]);
      break;
  }
  return Access{extent, field.align.get(flags)};
}

/// The largest alignment an address field may require. An allocation whose GPU address is aligned
/// to it gives an address with AllocationOffset's alignment, so one compare checks both.
inline constexpr std::uint32_t kMaxFieldAlign = [] {
  std::uint32_t max = 1;
  for (const abi::PacketInfo& p : abi::kPackets)
    for (unsigned f = 0; f < p.address_count; ++f) {
      for (std::uint32_t align : {p.addresses[f].align.clear, p.addresses[f].align.set}) {
        if (align == 0 || (align & (align - 1)) != 0) throw "an address field's alignment is not a power of two";
        max = std::max(max, align);
      }
    }
  return max;
}();


/// The checks Render and Present share on the DMA buffer and its private data.
Status check_dma(const char* ddi, const void* dma_buffer, std::uint32_t dma_size, const void* private_data,
                 std::uint32_t private_data_size);

/// This pass's DMA buffer (keeping the submission fence's room) and output patch list have room
/// for a `bytes`-byte packet `p`. (Inline, like the helpers below: Render calls them per packet.)
inline bool room_for(const RenderOutput& out, const abi::PacketInfo& p, std::uint32_t bytes,
                     std::uint32_t dma_capacity, std::uint32_t patch_out_size) {
  return std::uint64_t{out.dma_bytes} + bytes + submission_fence_bytes() <= dma_capacity &&
         std::uint64_t{out.patch_count} + p.address_count <= patch_out_size;
}

/// The output patch-location entry for address field `f` of the packet `p` at DMA byte offset
/// `packet_offset`. Every reference is listed even when pre-patched: the allocation may move
/// before submission.
inline PatchLocation output_entry(const abi::PacketInfo& p, unsigned f, std::uint32_t allocation_index,
                                  std::uint32_t allocation_offset, std::uint32_t packet_offset) {
  PatchLocation o;
  o.allocation_index = allocation_index;
  o.allocation_offset = allocation_offset;
  o.slot_id_and_reserved = f;  // each packet rebinds its slots: what the previous one held is free
  o.driver_id = p.addresses[f].access == abi::AddressAccess::Write ? driver_id::kWrite : driver_id::kRead;
  o.patch_offset = packet_offset + 4 * p.addresses[f].dword;
  o.split_offset = packet_offset;
  return o;
}

/// Starts a pass. Returns the capacity room_for() works with: the DMA buffer, or with the
/// timestamp bracket (render.hpp) the bytes below the landing area less the closing TIMESTAMP,
/// after writing the opening TIMESTAMP (address 0 until Patch) at offset 0. InvalidArgument when
/// the buffer cannot hold the bracket and the fence.
Result<std::uint32_t> begin_pass(const char* ddi, void* dma_buffer, std::uint32_t dma_size, bool timestamps,
                                 RenderOutput& out);

/// Ends a pass: with the timestamp bracket, the closing TIMESTAMP; on the final pass the
/// submission fence (a FENCE with value64, address and value 0 until Patch fills them in); both
/// recorded in the private data (an earlier pass records that its buffer has no fence: the
/// private data is reused from buffer to buffer).
Status finish_pass(void* dma_buffer, std::uint32_t dma_size, void* private_data, bool final_pass, bool timestamps,
                   RenderOutput& out);

/// A call's allocation list worked out once into one `Element` per list element, for Render's
/// in-order path and Patch's quick check: `make(list[i])` for each element, padded to a power of
/// two (at least `min_size`, and one more than the list) with `failing` elements. An entry reads
/// element AllocationIndex & index_mask() without a branch: an index past the list but below the
/// padded size reads a failing element, and one at or past it must be caught by the caller (the
/// OR of all indices at most index_mask()). Tables up to StackElements live on the stack; their
/// elements are not initialised beyond the padded size (no member initializers in Element, so
/// nothing is cleared per call).
template <class Element, std::size_t StackElements>
class PaddedAllocationTable {
 public:
  template <class Make>
  PaddedAllocationTable(const DxgkAllocationListEntry* list, std::uint32_t count, std::size_t min_size,
                        const Element& failing, Make&& make) {
    std::size_t size = 1;
    while (size < min_size || size <= count) size *= 2;
    Element* t = local_.data();
    if (size > local_.size()) {
      heap_.resize(size);
      t = heap_.data();
    }
    for (std::uint32_t i = 0; i < count; ++i) t[i] = make(list[i]);
    for (std::size_t i = count; i < size; ++i) t[i] = failing;
    table_ = t;
    index_mask_ = static_cast<std::uint32_t>(size - 1);
  }
  PaddedAllocationTable(const PaddedAllocationTable&) = delete;
  PaddedAllocationTable& operator=(const PaddedAllocationTable&) = delete;
  const Element* table() const { return table_; }
  std::uint32_t index_mask() const { return index_mask_; }

 private:
  std::array<Element, StackElements> local_;  // most lists: no heap per call
  std::vector<Element> heap_;
  const Element* table_ = nullptr;
  std::uint32_t index_mask_ = 0;
};

}  // namespace sgpu::kmd::detail
