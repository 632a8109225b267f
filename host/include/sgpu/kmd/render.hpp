// DxgkDdiRender: validate an untrusted command buffer and translate it into a DMA buffer plus the
// patch-location list the memory manager and Patch work from. (DxgkDdiPresent, which produces
// the same kind of output from a present request, is in kmd/present.hpp.)
//
// The user command buffer is written in the device's own packet format (spec/abi.toml), with
// every GPU address field left for the driver: each address field (abi::PacketInfo::addresses)
// must be covered by exactly one entry of the input patch-location list whose PatchOffset is the
// byte offset of the field's low dword. Render never trusts a byte of the command buffer or of the
// input list: the command bytes are copied into the DMA buffer first and every rule below is
// checked on that copy (the user cannot change a packet after it was checked), each input entry is
// read once, and a rejection leaves the DMA buffer's bytes before the packet as they were written
// by earlier packets of this call (the call fails as a whole; the caller discards the DMA buffer).
//
// Output: the DMA buffer holds the same packets, each address field written with
//   allocation GPU address + AllocationOffset   when the allocation list names a segment for it
//                                                (pre-patch: Patch may be skipped), else 0;
// and one output patch-location entry per address field, in stream order, with
//   PatchOffset  = byte offset of the field in the DMA buffer,
//   SplitOffset  = byte offset of the packet in the DMA buffer (non-decreasing),
//   SlotId       = ordinal of the field within its packet (0 = first address of the packet), so
//                  each packet rebinds the slots it uses and frees what the previous one held,
//   DriverId     = access kind (DriverId::kRead / kWrite),
//   AllocationIndex, AllocationOffset copied from the input entry.
// When the final pass completes, Render appends the submission-fence packet (a FENCE with the
// value64 flag; address and value 0) and records its offset in the DMA buffer's private data
// (RenderPrivateData); Patch fills it in.
//
// Timestamp bracket (tracing, RenderArgs::reserve_timestamps): every pass then starts with a
// TIMESTAMP packet and ends with one (before the submission fence on the final pass), both with
// address 0 until Patch fills in the DMA buffer's landing area (its last 16 bytes, below every
// packet: timestamp_landing_offset()): the engine itself writes when it started and finished the
// buffer. Without the flag the DMA buffer is byte for byte what it is without tracing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"
#include "sgpu/types.hpp"

namespace sgpu::kmd {

/// One element of DXGK_ALLOCATIONLIST as Render, Present and Patch see it: the handle and write
/// flag from the user's list, where the allocation was last paged in, and (the driver's own
/// allocation object) its size. Element 0 is the null element by convention.
struct DxgkAllocationListEntry {
  AllocationHandle allocation;         ///< null: an unbound slot; referencing it is an error
  bool write = false;                  ///< WriteOperation
  SegmentId segment = kSystemMemory;   ///< 0 = not resident (no pre-patch)
  std::uint64_t gpu_address = 0;       ///< segment BaseAddress + offset, valid when segment != 0
  std::uint64_t size = 0;              ///< allocation bytes: every access must stay inside
};

/// PatchLocation::driver_id values Render writes.
namespace driver_id {
inline constexpr std::uint32_t kRead = 0;     ///< the packet reads through this address
inline constexpr std::uint32_t kWrite = 1;    ///< the packet writes through this address
}  // namespace driver_id

/// What Render leaves in the DMA buffer's private data (DmaBufferPrivateDataSize >= its size).
struct RenderPrivateData {
  static constexpr std::uint32_t kMagic = 0x53475052;  ///< "RPGS"
  std::uint32_t magic = 0;
  std::uint32_t fence_offset = 0;  ///< byte offset of the submission-fence FENCE packet
  std::uint32_t flags = 0;         ///< kHasFence once the final pass wrote the fence packet
  /// kHasTimestamps: byte offset of the closing TIMESTAMP (the opening one is at offset 0).
  std::uint32_t timestamp_end_offset = 0;
  static constexpr std::uint32_t kHasFence = 1;
  static constexpr std::uint32_t kHasTimestamps = 2;  ///< the pass carries the timestamp bracket
};

/// Where a pass stopped (RenderOutput::resume), handed back with the next call (RenderArgs::resume)
/// so that pass starts there at once. Without it a continuing pass walks the packet headers from
/// offset 0 to prove MultipassOffset a packet boundary and reads the whole input patch list again,
/// so N passes cost O(N^2). Opaque to the caller: Render refuses (InvalidArgument) a cursor it did
/// not issue for this command buffer, this input patch list (their addresses and sizes) and this
/// MultipassOffset. (The check value catches a caller's mistake, not an attacker: the caller is
/// the kernel. Whatever the cursor, every packet of the pass is still checked in full.)
struct RenderCursor {
  std::uint32_t command_offset = 0;  ///< = RenderOutput::multipass_offset
  std::uint32_t patch_index = 0;     ///< the first input patch entry the pass has not bound
  std::uint32_t flags = 0;           ///< kSortedList: the list is not in PatchOffset order
  std::uint64_t check = 0;           ///< 0 = no cursor
  static constexpr std::uint32_t kSortedList = 1;
};

/// DXGKARG_RENDER.
struct RenderArgs {
  const void* command = nullptr;  ///< pCommand: the user command buffer (untrusted)
  std::uint32_t command_length = 0;  ///< CommandLength, bytes (a multiple of 4)
  void* dma_buffer = nullptr;     ///< pDmaBuffer, 4 KiB aligned
  std::uint32_t dma_size = 0;     ///< DmaSize, bytes
  void* private_data = nullptr;   ///< pDmaBufferPrivateData
  std::uint32_t private_data_size = 0;
  const DxgkAllocationListEntry* allocation_list = nullptr;
  std::uint32_t allocation_list_size = 0;
  const PatchLocation* patch_in = nullptr;  ///< pPatchLocationListIn (untrusted)
  std::uint32_t patch_in_size = 0;
  PatchLocation* patch_out = nullptr;       ///< pPatchLocationListOut
  std::uint32_t patch_out_size = 0;
  /// MultipassOffset: 0 on the first call for a command buffer; a call that returned
  /// complete == false set it to the command byte offset to continue from.
  std::uint32_t multipass_offset = 0;
  /// With multipass_offset: the previous pass's RenderOutput::resume (check = 0: none; the pass
  /// then proves multipass_offset a packet boundary by walking the headers from offset 0).
  RenderCursor resume;
  std::uint32_t max_slot_id = 256;          ///< DXGK_DRIVERCAPS.MaxAllocationListSlotId
  /// Tracing: reserve the timestamp bracket (header comment) in this pass.
  bool reserve_timestamps = false;
};

/// What one Render (or Present) call produced.
struct RenderOutput {
  std::uint32_t dma_bytes = 0;      ///< bytes written to the DMA buffer (pDmaBuffer advanced)
  std::uint32_t patch_count = 0;    ///< output patch-location entries written
  /// false = STATUS_GRAPHICS_INSUFFICIENT_DMA_BUFFER: the DMA buffer or the output patch list
  /// is full; submit what was produced and call again with RenderArgs::multipass_offset =
  /// multipass_offset and a fresh DMA buffer / list.
  bool complete = true;
  std::uint32_t multipass_offset = 0;
  RenderCursor resume;              ///< when !complete: for RenderArgs::resume of the next call
  std::uint32_t packets = 0;        ///< packets translated by this call
};

/// DxgkDdiRender. Errors (InvalidArgument unless noted), each naming the command byte offset of
/// the packet and/or the patch-list index:
///  - command_length not a multiple of 4, or multipass_offset not on a packet boundary reached by
///    an earlier pass (checked: it must be < command_length and a multiple of 4, and either the
///    resume cursor is the one Render issued for it or the headers before it lead to it);
///  - a header with dwords = 0, a length past the end of the command buffer, fewer or more dwords
///    than the packet's min/max, flag bits the packet does not define;
///  - an unknown opcode (PermissionDenied is not used: ILLEGAL_INSTRUCTION maps to InvalidArgument);
///  - a privileged packet (Errc::PermissionDenied: PRIVILEGED_INSTRUCTION);
///  - INDIRECT (PermissionDenied: the called buffer could not be validated);
///  - an address field without a patch entry, a patch entry on something that is not the low
///    dword of an address field (misaligned or wrong dword), two entries on one field;
///  - AllocationIndex >= allocation_list_size or naming a null element; SlotId >= max_slot_id or
///    Reserved bits set;
///  - an access outside the allocation: [AllocationOffset, AllocationOffset + extent) must lie in
///    [0, size), where extent is what the packet touches from that address, as the field's
///    `extent` in spec/abi.toml says (abi::AddressField; WRITE_DATA: 4 x data dwords; FENCE: 8
///    with value64 else 4; COPY/FILL: bytes; BLIT_RECT/FILL_RECT: (height - 1) x pitch + width,
///    0 when width or height is 0; WAIT_MEM: 4; TIMESTAMP: 8); arithmetic that overflows 64 bits
///    is an error too;
///  - a write through an allocation whose list entry lacks WriteOperation;
///  - alignment the device requires (the field's `align`: WRITE_DATA/WAIT_MEM address 4,
///    TIMESTAMP 8, FENCE 8 with value64 else 4) of gpu_address + AllocationOffset when
///    pre-patching, and of AllocationOffset itself always (allocations are page aligned);
///  - the DMA buffer cannot hold even one packet plus the fence, or dma_buffer not 4 KiB aligned,
///    or private data too small for RenderPrivateData.
/// Unused input patch entries are an error too (every entry must patch an address field).
Result<RenderOutput> render(const RenderArgs& args);

/// How many bytes present()/render() need after the last packet for the submission fence.
std::uint32_t submission_fence_bytes();

/// The timestamp bracket's landing area in a DMA buffer of `dma_size` bytes: 16 bytes (opening
/// then closing timestamp), 8-byte aligned, at the end of the buffer. Needs dma_size >= 16.
inline std::uint32_t timestamp_landing_offset(std::uint32_t dma_size) { return (dma_size & ~7u) - 16; }
/// What the timestamp bracket takes from a DMA buffer at most: two TIMESTAMP packets, the landing
/// area and its alignment. DMA buffer sizes (kmd/sizing.hpp) include it, so tracing can be turned
/// on at any time.
std::uint32_t timestamp_reserve_bytes();

}  // namespace sgpu::kmd
