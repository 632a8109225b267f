// Disassembler: DMA buffers and command buffers as named packets, from the generated packet
// table alone (abi::kPackets: opcode names, payload dword names, the variable part's name, header
// flag fields and their enumerated values, GPU address fields with their extents). A packet
// added to spec/abi.toml is decoded with no change here.
//
// Malformed input is decoded, never refused: an unknown opcode, a dword count outside the
// packet's [min, max] (or 0), flag bits the packet does not define, and a packet that runs past
// the end of the bytes given are each reported on the packet (PacketProblem) and decoding goes
// on where the device's decoder would have had to: after `dwords` dwords when that fits, else
// one dword on (a zero count) or at the end (a truncated packet).
//
// Dump files (`sgpu disasm FILE`, the post-mortem's buffer dumps): raw little-endian dwords,
// the buffer's bytes as the device reads them, nothing else (no header): a file of N bytes is
// N / 4 dwords, byte offset 0 of the file is byte offset 0 of the buffer.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sgpu/gen/abi.hpp"
#include "sgpu/result.hpp"

namespace sgpu::diag {

enum class PacketProblem {
  None,
  UnknownOpcode,  ///< no packet has this opcode (the device faults ILLEGAL_OPCODE)
  BadLength,      ///< dwords outside [min_dwords, max_dwords], or 0 (BAD_LENGTH)
  ReservedFlags,  ///< flag bits the packet does not define (RESERVED_BITS)
  Truncated,      ///< the packet runs past the end of the bytes given (BUFFER_OVERRUN)
};
std::string_view to_string(PacketProblem p);

/// One decoded payload field: a fixed dword (or a _lo/_hi pair as one 64-bit value) or one
/// dword of the variable part ("data[3]").
struct DecodedField {
  std::string name;          ///< "addr" for an addr_lo/addr_hi pair, "bytes", "data[3]"
  std::uint32_t dword = 0;   ///< first dword of the field in the packet (header = 0)
  std::uint64_t value = 0;
  bool wide = false;         ///< a 64-bit _lo/_hi pair
  /// For a GPU address field: how the packet uses it, and the bytes it touches from it
  /// (computed only when the dwords the extent depends on are present).
  const abi::AddressField* address = nullptr;
  std::uint64_t extent = 0;
  bool extent_known = false;
};

/// One header flag field and its value (with the enumerated value's name, if it has one).
struct DecodedFlag {
  std::string_view name;
  std::uint8_t value = 0;
  std::string_view value_name;  ///< empty for a plain bit or an unnamed value
};

struct DecodedPacket {
  std::uint32_t offset = 0;   ///< byte offset of the header in the buffer (base offset added)
  std::uint32_t header = 0;
  std::uint8_t opcode = 0;
  const abi::PacketInfo* info = nullptr;  ///< null: unknown opcode
  std::uint32_t dwords = 0;   ///< as the header says
  std::uint32_t present = 0;  ///< dwords of it the buffer holds (header included)
  std::uint8_t flags = 0;
  std::vector<DecodedFlag> flag_fields;
  std::vector<DecodedField> fields;
  std::vector<std::uint32_t> raw;  ///< the packet's dwords as present
  PacketProblem problem = PacketProblem::None;

  std::string_view name() const { return info ? info->name : std::string_view{"UNKNOWN"}; }
  /// True if `byte_offset` (buffer offset) lies in this packet.
  bool contains(std::uint32_t byte_offset) const {
    return byte_offset >= offset && byte_offset - offset < 4ull * std::max<std::uint32_t>(present, 1);
  }
};

/// Decodes `count` dwords; `base_offset` is the byte offset of dwords[0] in its buffer (packet
/// offsets are reported with it added).
std::vector<DecodedPacket> disassemble(const std::uint32_t* dwords, std::size_t count, std::uint32_t base_offset = 0);

/// What the text view says after a GPU address field (e.g. which allocation it belongs to):
/// gets the byte offset of the field's _lo dword in the buffer and the address; empty = nothing.
using AddressNote = std::function<std::string(std::uint32_t field_offset, std::uint64_t address)>;

struct TextOptions {
  AddressNote note;
  /// Variable-part dwords shown before "... (N more)".
  std::size_t max_variable_dwords = 8;
  /// Also print each packet's raw dwords.
  bool raw = false;
  /// Byte offset of a packet to mark with "=>" (e.g. the one that faulted); none if unset.
  std::optional<std::uint32_t> mark;
};

/// One line per packet (plus raw dwords with TextOptions::raw):
///   "  0x00000040  WRITE_DATA dwords=5 addr=0x0000000100003000 (write 8 B) data=[0x1, 0x2]"
std::string to_text(const DecodedPacket& packet, const TextOptions& options = {});
std::string to_text(const std::vector<DecodedPacket>& packets, const TextOptions& options = {});

/// Reads a dump file (raw little-endian dwords). A file that cannot be read, or whose size is
/// not a multiple of 4, is InvalidArgument naming the path.
Result<std::vector<std::uint32_t>> read_dword_file(const std::string& path);
/// Writes raw little-endian dwords.
Status write_dword_file(const std::string& path, const std::vector<std::uint32_t>& dwords);

}  // namespace sgpu::diag
