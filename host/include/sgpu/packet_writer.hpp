// Builds a DMA buffer: appends NOP, WRITE_DATA, FENCE, COPY, FILL, BLIT_RECT, FILL_RECT, WAIT_MEM,
// TIMESTAMP, INDIRECT, TLB_INVALIDATE and the other privileged packets (spec/abi.toml) to a block
// of memory. A pure encoder: it checks what the packet format defines (lengths from the generated
// packet table, flag bits, field alignment and ranges) before writing a byte, and encodes any
// packet the format can express. What the device would do with it is the caller's business:
// e.g. overlapping COPY ranges or BLIT_RECT extents encode fine and fault COPY_OVERLAP on the
// device; callers that must not produce them check first (sgpu/overlap.hpp).
//
//   PacketWriter w(buffer);                   // a DmaMemory
//   SGPU_RETURN_IF_ERROR(w.write_data(dst.bus_addr(), words));
//   SGPU_RETURN_IF_ERROR(w.fence(fence_slot.bus_addr(), 42, abi::fence_flags::kIrq));
//   device.submit({&buffer, 0, w.offset()});
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>

#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"

namespace sgpu {

class PacketWriter {
 public:
  /// Writes into [cpu, cpu + bytes); `cpu` must be 4-byte aligned.
  PacketWriter(void* cpu, std::size_t bytes, std::size_t start_offset = 0);
  /// Writes into a DMA buffer, starting at `start_offset`.
  explicit PacketWriter(const DmaMemory& buffer, std::size_t start_offset = 0)
      : PacketWriter(buffer.cpu(), buffer.size(), start_offset) {}

  /// A NOP of `dwords` dwords (header included), e.g. to pad.
  Status nop(std::uint32_t dwords = 1);
  /// WRITE_DATA: the device writes `count` dwords from `data` to GPU address `addr` (4-aligned).
  Status write_data(std::uint64_t addr, const std::uint32_t* data, std::size_t count);
  Status write_data(std::uint64_t addr, std::initializer_list<std::uint32_t> data) {
    return write_data(addr, data.begin(), data.size());
  }
  /// FENCE: after all earlier writes of the submission, the device writes `value` to `addr`
  /// (8-aligned for kValue64, else 4-aligned); flags from abi::fence_flags.
  Status fence(std::uint64_t addr, std::uint64_t value, std::uint8_t flags = 0);
  /// COPY: the device copies `bytes` bytes from GPU address `src` to `dst` (any alignment) after
  /// every earlier write of the submission. Overlapping ranges fault COPY_OVERLAP on the device
  /// (copy_overlaps()).
  Status copy(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes);
  /// FILL: `bytes` bytes at `dst` get the 32-bit pattern (byte i = pattern byte i mod 4).
  Status fill(std::uint64_t dst, std::uint32_t bytes, std::uint32_t pattern);
  /// BLIT_RECT: `height` rows of `width` bytes from src + r * src_pitch to dst + r * dst_pitch.
  /// Source and destination extents ((height - 1) * pitch + width bytes from the first row) that
  /// overlap fault COPY_OVERLAP on the device (blit_overlaps()).
  Status blit_rect(std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                   std::uint32_t src_pitch, std::uint32_t dst_pitch);
  /// FILL_RECT: `height` rows of `width` bytes at dst + r * dst_pitch get the pattern.
  Status fill_rect(std::uint64_t dst, std::uint32_t width, std::uint32_t height, std::uint32_t dst_pitch,
                   std::uint32_t pattern);
  /// WAIT_MEM: after every earlier write of the submission, the device polls the dword at `addr`
  /// (4-aligned) until (value & mask) `func` ref holds (unsigned), waiting at least `interval`
  /// cycles between reads. A wait that is never satisfied ends only by the watchdog
  /// (CP_WATCHDOG, fault WATCHDOG) or an engine reset.
  Status wait_mem(std::uint64_t addr, abi::WaitMemFunc func, std::uint32_t ref, std::uint32_t mask = 0xffffffffu,
                  std::uint32_t interval = 0);
  /// INDIRECT: the device executes the `bytes` bytes of the buffer at `addr` (both 4-aligned),
  /// then continues after this packet. Nesting is limited to CAP_MEM.max_indirect_depth levels
  /// (deeper: fault INDIRECT_DEPTH); the writer cannot see the called buffer, so it does not check.
  Status indirect(std::uint64_t addr, std::uint32_t bytes);
  /// TIMESTAMP: after every earlier write of the submission, the device writes its 64-bit cycle
  /// counter (CYCLE_LO/HI) to `addr` (8-aligned).
  Status timestamp(std::uint64_t addr);
  /// TLB_INVALIDATE (privileged: only in a submission with the privileged or paging flag):
  /// after every earlier write of the submission, the GART forgets the aperture pages
  /// [first_page, first_page + count); later packets see the page table as it is in memory.
  Status tlb_invalidate(std::uint32_t first_page, std::uint32_t count);
  /// TLB_INVALIDATE with the `all` flag: every TLB entry.
  Status tlb_invalidate_all();
  /// MAP (privileged): PTE first_page + i = (bus[i] & ~0xfff) | (pte_flags & 7), written to the
  /// page table (GART_TABLE_BASE), then the range is invalidated: later packets see the mapping.
  /// Bus addresses must be 4 KiB aligned and pte_flags use bits 2:0 only (valid, writable,
  /// snoop); at most 32765 pages per packet. The device faults MAP_RANGE when the range passes
  /// GART_TABLE_SIZE (the writer cannot see the register).
  Status map_pages(std::uint32_t first_page, std::uint32_t pte_flags, const std::uint64_t* bus, std::size_t count);
  /// UNMAP (privileged): every PTE of [first_page, first_page + count) becomes `dummy_pte` (the
  /// dummy page: an unmapped page is never a hole), then the range is invalidated.
  Status unmap_pages(std::uint32_t first_page, std::uint32_t count, std::uint64_t dummy_pte);
  /// WRITE_PHYSICAL (privileged): WRITE_DATA to a system-physical (bus) address, never
  /// translated; [addr, addr + 4 count) must lie below 2^GART_CAP.sys_addr_bits (the device
  /// faults PHYSICAL_RANGE otherwise).
  Status write_physical(std::uint64_t addr, const std::uint32_t* data, std::size_t count);
  /// READ_PHYSICAL (privileged): COPY of `bytes` bytes from the system-physical address `src`
  /// to the GPU address `dst` (same ordering and overlap rule as COPY).
  Status read_physical(std::uint64_t src, std::uint64_t dst, std::uint32_t bytes);
  /// Appends dwords without any check: for tests that feed the device bad packets on purpose.
  Status raw(const std::uint32_t* dwords, std::size_t count);
  Status raw(std::initializer_list<std::uint32_t> dwords) { return raw(dwords.begin(), dwords.size()); }

  /// Byte offset after the last packet written (use as the submission's end_offset).
  std::uint32_t offset() const { return static_cast<std::uint32_t>(offset_); }
  /// Bytes still free.
  std::size_t remaining() const { return capacity_ - offset_; }
  /// Packets written so far.
  std::size_t packets() const { return packets_; }

 private:
  /// WRITE_DATA and WRITE_PHYSICAL: an address and dwords to write there.
  Status dword_write(abi::Opcode op, std::uint64_t addr, const std::uint32_t* data, std::size_t count);
  /// COPY and READ_PHYSICAL: {src, dst, bytes}.
  Status linear_copy(abi::Opcode op, std::uint64_t src, std::uint64_t dst, std::uint32_t bytes);
  Status reserve(abi::Opcode op, std::size_t dwords);
  void put(std::uint32_t dword);

  std::uint32_t* base_;
  std::size_t capacity_;
  std::size_t offset_;
  std::size_t packets_ = 0;
};

}  // namespace sgpu
