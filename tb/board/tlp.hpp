// PCIe transaction layer packets as the testbench builds and checks them (PCIe Base
// Specification, chapter 2): memory reads and writes with 32- or 64-bit addresses, and
// completions with and without data.
//
// A TLP is held as its header fields plus the payload bytes in address order. On the wire of a
// Xilinx hard block's AXI-Stream interface it is a sequence of dwords: header dwords are 32-bit
// values with the specification's bit numbering (Fmt in bits 30:29 of dword 0), payload dwords
// carry their first byte (lowest address) in bits 31:24. encode()/decode() convert.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace sgpu::board {

enum class TlpKind : std::uint8_t { MemRead, MemWrite, Completion, CompletionData, Other };

/// Completion status (PCIe 2.2.9).
enum class CplStatus : std::uint8_t { Success = 0, UnsupportedRequest = 1, Retry = 2, CompleterAbort = 4 };

struct Tlp {
  TlpKind kind = TlpKind::Other;
  bool addr64 = false;          ///< 4-dword header (memory requests)
  std::uint16_t length_dw = 0;  ///< 1..1024 (0 on the wire means 1024); 0 for no-data TLPs
  std::uint8_t fmt = 0, type = 0;
  // Memory requests.
  std::uint16_t requester_id = 0;
  std::uint8_t tag = 0;
  std::uint8_t first_be = 0, last_be = 0;
  std::uint64_t address = 0;    ///< byte address of dword 0 (bits 1:0 are 0)
  // Completions.
  std::uint16_t completer_id = 0;
  CplStatus status = CplStatus::Success;
  std::uint16_t byte_count = 0;   ///< 1..4096 (0 on the wire means 4096)
  std::uint8_t lower_address = 0;
  /// Payload, length_dw * 4 bytes in address order (bytes outside the byte enables included).
  std::vector<std::uint8_t> payload;

  bool has_data() const { return kind == TlpKind::MemWrite || kind == TlpKind::CompletionData; }
  unsigned header_dw() const { return (kind == TlpKind::MemRead || kind == TlpKind::MemWrite) && addr64 ? 4 : 3; }
  /// Bytes on the wire before link-layer framing: header + payload.
  unsigned tlp_bytes() const { return 4 * (header_dw() + (has_data() ? length_dw : 0)); }

  static Tlp mem_read(std::uint64_t addr, std::uint16_t length_dw, std::uint16_t requester, std::uint8_t tag,
                      std::uint8_t first_be = 0xf, std::uint8_t last_be = 0xf);
  static Tlp mem_write(std::uint64_t addr, const std::vector<std::uint8_t>& payload, std::uint16_t requester,
                       std::uint8_t first_be = 0xf, std::uint8_t last_be = 0xf);
  static Tlp completion(std::uint16_t completer, std::uint16_t requester, std::uint8_t tag, CplStatus status,
                        std::uint16_t byte_count, std::uint8_t lower_address,
                        const std::vector<std::uint8_t>& payload = {});

  /// Dwords as on the hard block's stream.
  std::vector<std::uint32_t> encode() const;
  /// Parses dwords from the stream; throws std::runtime_error naming what is malformed.
  static Tlp decode(const std::vector<std::uint32_t>& dws);
  std::string describe() const;
};

/// Byte enables of dword i of a request with these first/last byte enables.
inline std::uint8_t dword_enables(const Tlp& t, unsigned i) {
  if (i == 0) return t.first_be;
  if (i + 1 == t.length_dw) return t.last_be;
  return 0xf;
}

/// Byte count and lower address a completer returns for a read (PCIe 2.3.1.1, table 2-39).
std::uint16_t read_byte_count(std::uint16_t length_dw, std::uint8_t first_be, std::uint8_t last_be);
std::uint8_t read_lower_address(std::uint64_t address, std::uint8_t first_be);

/// Checks the rules a requester owes for a memory request (byte enables, 4 KiB boundary,
/// payload size). Returns "" or what is wrong.
std::string check_request(const Tlp& t, unsigned max_payload, unsigned max_read_request);

}  // namespace sgpu::board
