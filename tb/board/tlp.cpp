#include "board/tlp.hpp"

#include <cstdio>
#include <stdexcept>

namespace sgpu::board {
namespace {

constexpr std::uint8_t kTypeMem = 0x00;
constexpr std::uint8_t kTypeCpl = 0x0a;

std::uint32_t payload_dw(const std::vector<std::uint8_t>& p, std::size_t i) {
  return (std::uint32_t{p[4 * i]} << 24) | (std::uint32_t{p[4 * i + 1]} << 16) | (std::uint32_t{p[4 * i + 2]} << 8) |
         std::uint32_t{p[4 * i + 3]};
}

bool contiguous(std::uint8_t be) {
  // A run of ones with no hole (0 counts as contiguous).
  if (be == 0) return true;
  while ((be & 1) == 0) be >>= 1;
  return (be & (be + 1)) == 0;
}

std::string hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
  return b;
}

}  // namespace

Tlp Tlp::mem_read(std::uint64_t addr, std::uint16_t length_dw, std::uint16_t requester, std::uint8_t tag,
                  std::uint8_t first_be, std::uint8_t last_be) {
  Tlp t;
  t.kind = TlpKind::MemRead;
  t.addr64 = (addr >> 32) != 0;
  t.fmt = t.addr64 ? 1 : 0;
  t.type = kTypeMem;
  t.length_dw = length_dw;
  t.requester_id = requester;
  t.tag = tag;
  t.first_be = first_be;
  t.last_be = length_dw == 1 ? 0 : last_be;
  t.address = addr & ~std::uint64_t{3};
  return t;
}

Tlp Tlp::mem_write(std::uint64_t addr, const std::vector<std::uint8_t>& payload, std::uint16_t requester,
                   std::uint8_t first_be, std::uint8_t last_be) {
  Tlp t;
  t.kind = TlpKind::MemWrite;
  t.addr64 = (addr >> 32) != 0;
  t.fmt = t.addr64 ? 3 : 2;
  t.type = kTypeMem;
  t.length_dw = static_cast<std::uint16_t>(payload.size() / 4);
  t.requester_id = requester;
  t.first_be = first_be;
  t.last_be = t.length_dw == 1 ? 0 : last_be;
  t.address = addr & ~std::uint64_t{3};
  t.payload = payload;
  return t;
}

Tlp Tlp::completion(std::uint16_t completer, std::uint16_t requester, std::uint8_t tag, CplStatus status,
                    std::uint16_t byte_count, std::uint8_t lower_address, const std::vector<std::uint8_t>& payload) {
  Tlp t;
  t.kind = payload.empty() ? TlpKind::Completion : TlpKind::CompletionData;
  t.fmt = payload.empty() ? 0 : 2;
  t.type = kTypeCpl;
  t.length_dw = static_cast<std::uint16_t>(payload.size() / 4);
  t.completer_id = completer;
  t.requester_id = requester;
  t.tag = tag;
  t.status = status;
  t.byte_count = byte_count;
  t.lower_address = lower_address & 0x7f;
  t.payload = payload;
  return t;
}

std::vector<std::uint32_t> Tlp::encode() const {
  std::vector<std::uint32_t> dw;
  const std::uint32_t len = has_data() || kind == TlpKind::MemRead ? (length_dw & 0x3ffu) : 0u;
  dw.push_back((std::uint32_t{fmt} << 29) | (std::uint32_t{type} << 24) | len);
  if (kind == TlpKind::MemRead || kind == TlpKind::MemWrite) {
    dw.push_back((std::uint32_t{requester_id} << 16) | (std::uint32_t{tag} << 8) |
                 (std::uint32_t{last_be} << 4) | first_be);
    if (addr64) {
      dw.push_back(static_cast<std::uint32_t>(address >> 32));
      dw.push_back(static_cast<std::uint32_t>(address) & ~3u);
    } else {
      dw.push_back(static_cast<std::uint32_t>(address) & ~3u);
    }
  } else {
    dw.push_back((std::uint32_t{completer_id} << 16) | (std::uint32_t(static_cast<std::uint8_t>(status)) << 13) |
                 (byte_count & 0xfffu));
    dw.push_back((std::uint32_t{requester_id} << 16) | (std::uint32_t{tag} << 8) | (lower_address & 0x7fu));
  }
  if (has_data())
    for (std::size_t i = 0; i < payload.size() / 4; ++i) dw.push_back(payload_dw(payload, i));
  return dw;
}

Tlp Tlp::decode(const std::vector<std::uint32_t>& dws) {
  if (dws.size() < 3) throw std::runtime_error("TLP shorter than a header (" + std::to_string(dws.size()) + " dwords)");
  Tlp t;
  t.fmt = static_cast<std::uint8_t>((dws[0] >> 29) & 3);
  if ((dws[0] >> 31) != 0) throw std::runtime_error("TLP with a prefix (Fmt bit 2 set) is not supported");
  t.type = static_cast<std::uint8_t>((dws[0] >> 24) & 0x1f);
  const std::uint16_t len = static_cast<std::uint16_t>(dws[0] & 0x3ff);
  const bool data = (t.fmt & 2) != 0;
  std::size_t hdr = 3;
  if (t.type == kTypeMem) {
    t.kind = data ? TlpKind::MemWrite : TlpKind::MemRead;
    t.addr64 = (t.fmt & 1) != 0;
    hdr = t.addr64 ? 4 : 3;
    if (dws.size() < hdr) throw std::runtime_error("memory request shorter than its 4-dword header");
    t.length_dw = len == 0 ? 1024 : len;
    t.requester_id = static_cast<std::uint16_t>(dws[1] >> 16);
    t.tag = static_cast<std::uint8_t>(dws[1] >> 8);
    t.last_be = static_cast<std::uint8_t>((dws[1] >> 4) & 0xf);
    t.first_be = static_cast<std::uint8_t>(dws[1] & 0xf);
    if ((dws[hdr - 1] & 3) != 0) throw std::runtime_error("memory request address bits 1:0 are not 0");
    t.address = t.addr64 ? (std::uint64_t{dws[2]} << 32) | dws[3] : dws[2];
    if (t.addr64 && (t.address >> 32) == 0)
      throw std::runtime_error("64-bit memory request for an address below 4 GiB (must use a 3-dword header)");
  } else if (t.type == kTypeCpl) {
    if ((t.fmt & 1) != 0) throw std::runtime_error("completion with a 4-dword header");
    t.kind = data ? TlpKind::CompletionData : TlpKind::Completion;
    t.length_dw = data ? (len == 0 ? 1024 : len) : 0;
    t.completer_id = static_cast<std::uint16_t>(dws[1] >> 16);
    t.status = static_cast<CplStatus>((dws[1] >> 13) & 7);
    const std::uint16_t bc = static_cast<std::uint16_t>(dws[1] & 0xfff);
    t.byte_count = bc == 0 ? 4096 : bc;
    t.requester_id = static_cast<std::uint16_t>(dws[2] >> 16);
    t.tag = static_cast<std::uint8_t>(dws[2] >> 8);
    t.lower_address = static_cast<std::uint8_t>(dws[2] & 0x7f);
  } else {
    throw std::runtime_error("unsupported TLP type " + hex(t.type) + " (Fmt " + std::to_string(t.fmt) + ")");
  }
  const std::size_t want = hdr + (data ? t.length_dw : 0);
  if (dws.size() != want)
    throw std::runtime_error("TLP of " + std::to_string(dws.size()) + " dwords, header says " + std::to_string(want) +
                             " (" + t.describe() + ")");
  if (data) {
    t.payload.resize(4 * std::size_t{t.length_dw});
    for (std::size_t i = 0; i < t.length_dw; ++i) {
      const std::uint32_t v = dws[hdr + i];
      t.payload[4 * i] = static_cast<std::uint8_t>(v >> 24);
      t.payload[4 * i + 1] = static_cast<std::uint8_t>(v >> 16);
      t.payload[4 * i + 2] = static_cast<std::uint8_t>(v >> 8);
      t.payload[4 * i + 3] = static_cast<std::uint8_t>(v);
    }
  }
  return t;
}

std::string Tlp::describe() const {
  char b[160];
  switch (kind) {
    case TlpKind::MemRead:
    case TlpKind::MemWrite:
      std::snprintf(b, sizeof b, "%s%d addr %#llx len %u tag %u req %04x be %x/%x",
                    kind == TlpKind::MemRead ? "MRd" : "MWr", addr64 ? 64 : 32,
                    static_cast<unsigned long long>(address), length_dw, tag, requester_id, first_be, last_be);
      break;
    case TlpKind::Completion:
    case TlpKind::CompletionData:
      std::snprintf(b, sizeof b, "%s status %u len %u bc %u la %#x tag %u req %04x cpl %04x",
                    kind == TlpKind::Completion ? "Cpl" : "CplD", static_cast<unsigned>(status), length_dw,
                    byte_count, lower_address, tag, requester_id, completer_id);
      break;
    default:
      std::snprintf(b, sizeof b, "TLP fmt %u type %#x", fmt, type);
  }
  return b;
}

std::uint16_t read_byte_count(std::uint16_t length_dw, std::uint8_t first_be, std::uint8_t last_be) {
  auto low = [](std::uint8_t be) { unsigned i = 0; while (i < 4 && !(be >> i & 1)) ++i; return i; };
  auto high = [](std::uint8_t be) { int i = 3; while (i >= 0 && !(be >> i & 1)) --i; return i; };
  if (length_dw == 1) {
    if (first_be == 0) return 1;
    return static_cast<std::uint16_t>(high(first_be) - static_cast<int>(low(first_be)) + 1);
  }
  return static_cast<std::uint16_t>(4 * length_dw - low(first_be) - (3 - high(last_be)));
}

std::uint8_t read_lower_address(std::uint64_t address, std::uint8_t first_be) {
  unsigned off = 0;
  while (off < 4 && first_be != 0 && !(first_be >> off & 1)) ++off;
  if (first_be == 0) off = 0;
  return static_cast<std::uint8_t>(((address & 0x7c) | off) & 0x7f);
}

std::string check_request(const Tlp& t, unsigned max_payload, unsigned max_read_request) {
  if (t.kind != TlpKind::MemRead && t.kind != TlpKind::MemWrite) return "";
  const std::uint64_t first = t.address;
  const std::uint64_t last = t.address + 4 * std::uint64_t{t.length_dw} - 1;
  if ((first >> 12) != (last >> 12)) return "crosses a 4 KiB boundary";
  if (t.length_dw == 1) {
    if (t.last_be != 0) return "last byte enables must be 0 for a 1-dword request";
  } else {
    if (t.first_be == 0 || t.last_be == 0) return "first and last byte enables must not be 0 for a multi-dword request";
    // Holes in the byte enables only for 1-dword requests, or 2-dword requests that are
    // quadword aligned (PCIe 2.2.5); otherwise first_be must end at byte 3 and last_be start at 0.
    const bool qw_exception = t.length_dw == 2 && (t.address & 7) == 0;
    if (!qw_exception) {
      if (!contiguous(t.first_be) || !(t.first_be & 8)) return "first byte enables are not contiguous up to byte 3";
      if (!contiguous(t.last_be) || !(t.last_be & 1)) return "last byte enables are not contiguous from byte 0";
    }
  }
  if (t.kind == TlpKind::MemWrite && 4u * t.length_dw > max_payload)
    return "payload of " + std::to_string(4u * t.length_dw) + " bytes exceeds Max_Payload_Size " +
           std::to_string(max_payload);
  if (t.kind == TlpKind::MemRead && 4u * t.length_dw > max_read_request)
    return "read of " + std::to_string(4u * t.length_dw) + " bytes exceeds Max_Read_Request_Size " +
           std::to_string(max_read_request);
  return "";
}

}  // namespace sgpu::board
