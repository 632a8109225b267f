// The generic decoder over abi::kPackets: nothing here names a packet.
#include "sgpu/diag/disasm.hpp"
#include "sgpu/file_output.hpp"

#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "kmd/dma_pass.hpp"

namespace sgpu::diag {

std::string_view to_string(PacketProblem p) {
  switch (p) {
    case PacketProblem::None: return "none";
    case PacketProblem::UnknownOpcode: return "unknown opcode";
    case PacketProblem::BadLength: return "bad length";
    case PacketProblem::ReservedFlags: return "reserved flag bits";
    case PacketProblem::Truncated: return "truncated";
  }
  return "unknown problem";
}

namespace {

bool ends_with(std::string_view s, std::string_view tail) {
  return s.size() >= tail.size() && s.substr(s.size() - tail.size()) == tail;
}

const abi::AddressField* address_at(const abi::PacketInfo& info, std::uint32_t dword) {
  for (std::size_t i = 0; i < info.address_count; ++i)
    if (info.addresses[i].dword == dword) return &info.addresses[i];
  return nullptr;
}

// The extent of address field `f` when every dword it depends on is present.
void compute_extent(DecodedField& field, const abi::AddressField& f, const std::uint32_t* pkt, std::uint32_t present,
                    std::uint32_t dwords) {
  std::uint32_t needed = 1;
  switch (f.extent) {
    case abi::ExtentKind::Constant: break;
    case abi::ExtentKind::Field: needed = f.extent_dwords[0] + 1u; break;
    case abi::ExtentKind::Variable: needed = f.extent_dwords[0]; break;  // from the header's count
    case abi::ExtentKind::Rect:
      needed = std::max({f.extent_dwords[0], f.extent_dwords[1], f.extent_dwords[2]}) + 1u;
      break;
  }
  if (present < std::min(needed, dwords) || dwords < needed) return;
  field.extent = kmd::detail::access_of(f, pkt, dwords).extent;
  field.extent_known = true;
}

void decode_payload(DecodedPacket& d, const std::uint32_t* pkt) {
  const abi::PacketInfo& info = *d.info;
  const std::uint32_t fixed = static_cast<std::uint32_t>(info.payload.size) + 1;
  std::uint32_t i = 1;
  while (i < fixed && i < d.present) {
    const std::string_view name = info.payload[i - 1];
    DecodedField f;
    f.dword = i;
    const bool pair = ends_with(name, "_lo") && i < fixed - 1 && info.payload[i] == std::string(name.substr(0, name.size() - 3)) + "_hi";
    if (pair && i + 1 < d.present) {
      f.name = std::string(name.substr(0, name.size() - 3));
      f.value = pkt[i] | (std::uint64_t{pkt[i + 1]} << 32);
      f.wide = true;
      if ((f.address = address_at(info, i)) != nullptr) compute_extent(f, *f.address, pkt, d.present, d.dwords);
      i += 2;
    } else {
      f.name = std::string(name);  // a lone _lo of a truncated pair keeps its dword name
      f.value = pkt[i];
      i += 1;
    }
    d.fields.push_back(std::move(f));
  }
  if (info.variable.empty()) return;
  for (std::uint32_t v = fixed; v < d.present; ++v) {
    DecodedField f;
    f.name = fmt::format("{}[{}]", info.variable, v - fixed);
    f.dword = v;
    f.value = pkt[v];
    d.fields.push_back(std::move(f));
  }
}

}  // namespace

std::vector<DecodedPacket> disassemble(const std::uint32_t* dwords, std::size_t count, std::uint32_t base_offset) {
  std::vector<DecodedPacket> out;
  std::size_t at = 0;
  while (at < count) {
    DecodedPacket d;
    const std::uint32_t* pkt = dwords + at;
    const std::size_t left = count - at;
    d.offset = base_offset + static_cast<std::uint32_t>(at * 4);
    d.header = pkt[0];
    d.opcode = abi::header_opcode(d.header);
    d.flags = abi::header_flags(d.header);
    d.dwords = abi::header_dwords(d.header);
    d.info = abi::find_packet(d.opcode);
    // How far the device's decoder would get: `dwords` if the buffer holds them, else the rest;
    // a zero count still takes its header dword.
    std::size_t advance = d.dwords == 0 ? 1 : std::min<std::size_t>(d.dwords, left);
    d.present = static_cast<std::uint32_t>(advance);
    d.raw.assign(pkt, pkt + advance);
    if (d.info == nullptr) {
      d.problem = PacketProblem::UnknownOpcode;
    } else {
      if (d.dwords < d.info->min_dwords || d.dwords > d.info->max_dwords)
        d.problem = PacketProblem::BadLength;
      else if ((d.flags & ~d.info->flags_mask) != 0)
        d.problem = PacketProblem::ReservedFlags;
      else if (d.dwords > left)
        d.problem = PacketProblem::Truncated;
      for (const auto& fl : d.info->flag_fields) {
        DecodedFlag f{fl.name, fl.get(d.flags), {}};
        for (const auto& v : fl.values)
          if (v.value == f.value) f.value_name = v.name;
        d.flag_fields.push_back(f);
      }
      decode_payload(d, pkt);
    }
    if (d.problem == PacketProblem::None && d.dwords > left) d.problem = PacketProblem::Truncated;
    out.push_back(std::move(d));
    at += advance;
  }
  return out;
}

std::string to_text(const DecodedPacket& p, const TextOptions& o) {
  std::string s = fmt::format("{} 0x{:08x}  {}", o.mark && *o.mark == p.offset ? "=>" : "  ", p.offset, p.name());
  if (!p.info) s += fmt::format(" opcode=0x{:02x}", p.opcode);
  s += fmt::format(" dwords={}", p.dwords);
  if (p.flags != 0 || !p.flag_fields.empty()) s += fmt::format(" flags=0x{:02x}", p.flags);
  for (const auto& f : p.flag_fields) {
    if (f.value == 0 && f.value_name.empty()) continue;
    s += f.value_name.empty() ? fmt::format(" +{}", f.name) : fmt::format(" {}={}", f.name, f.value_name);
  }
  std::size_t shown_var = 0, hidden_var = 0;
  bool in_var = false;
  for (const auto& f : p.fields) {
    const bool var = p.info && f.dword > p.info->payload.size;
    if (var) {
      if (shown_var == o.max_variable_dwords) {
        ++hidden_var;
        continue;
      }
      s += in_var ? ", " : fmt::format(" {}=[", p.info->variable);
      s += fmt::format("0x{:x}", f.value);
      in_var = true;
      ++shown_var;
      continue;
    }
    if (f.wide) {
      s += fmt::format(" {}=0x{:016x}", f.name, f.value);
    } else {
      s += fmt::format(" {}=0x{:x}", f.name, f.value);
    }
    if (f.address) {
      const char* acc = f.address->access == abi::AddressAccess::Read    ? "read"
                        : f.address->access == abi::AddressAccess::Write ? "write"
                                                                          : "execute";
      s += f.extent_known ? fmt::format(" ({} {} B", acc, f.extent) : fmt::format(" ({}", acc);
      if (o.note) {
        const std::string n = o.note(p.offset + 4 * f.dword, f.value);
        if (!n.empty()) s += ", " + n;
      }
      s += ")";
    }
  }
  if (in_var) s += hidden_var ? fmt::format(", ... ({} more)]", hidden_var) : "]";
  if (p.problem != PacketProblem::None) {
    s += fmt::format("  !! {}", to_string(p.problem));
    if (p.problem == PacketProblem::BadLength && p.info)
      s += fmt::format(" (allowed {}..{})", p.info->min_dwords, p.info->max_dwords);
    if (p.problem == PacketProblem::ReservedFlags && p.info)
      s += fmt::format(" (0x{:02x} undefined)", p.flags & ~p.info->flags_mask);
    if (p.problem == PacketProblem::Truncated) s += fmt::format(" ({} of {} dwords present)", p.present, p.dwords);
  }
  s += "\n";
  if (o.raw) {
    s += "              ";
    for (std::size_t i = 0; i < p.raw.size(); ++i) s += fmt::format("{}{:08x}", i ? " " : "", p.raw[i]);
    s += "\n";
  }
  return s;
}

std::string to_text(const std::vector<DecodedPacket>& packets, const TextOptions& o) {
  std::string s;
  for (const auto& p : packets) s += to_text(p, o);
  return s;
}

Result<std::vector<std::uint32_t>> read_dword_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error::invalid("cannot open dump file '{}'", path);
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Error::invalid("cannot read dump file '{}'", path);
  if (bytes.size() % 4 != 0)
    return Error::invalid("dump file '{}' has {} bytes, not a whole number of dwords", path, bytes.size());
  std::vector<std::uint32_t> dwords(bytes.size() / 4);
  for (std::size_t i = 0; i < dwords.size(); ++i) {
    const auto* b = reinterpret_cast<const unsigned char*>(bytes.data() + 4 * i);
    dwords[i] = std::uint32_t{b[0]} | (std::uint32_t{b[1]} << 8) | (std::uint32_t{b[2]} << 16) | (std::uint32_t{b[3]} << 24);
  }
  return dwords;
}

Status write_dword_file(const std::string& path, const std::vector<std::uint32_t>& dwords) {
  std::string bytes;
  bytes.reserve(4 * dwords.size());
  for (const std::uint32_t w : dwords)  // little-endian whatever the host
    for (unsigned shift = 0; shift < 32; shift += 8) bytes.push_back(static_cast<char>((w >> shift) & 0xff));
  return write_file(path, bytes, "dump file");
}

}  // namespace sgpu::diag
