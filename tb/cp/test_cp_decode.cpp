// The command processor's decoder (sgpu_cp_decode) alone.
//
// Header check: every opcode with every flags byte and every length near a bound, every opcode
// with every length, privileged and not, against the reference model's check_header, which reads
// the generated packet table (abi::kPackets). SGPU_SOAK=1 sweeps all 2^32 header values.
// Payload routing: random payloads of every packet through the decoder's slots land in the
// fields of the same names (sgpu_abi_pkg::pld_<packet>_t) of their class's argument view.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <verilated.h>

#include "Vsgpu_cp_decode_tb_top.h"
#include "common/test_seed.hpp"
#include "model/exec.hpp"
#include "sgpu/diag/progress.hpp"
#include "sgpu/gen/abi.hpp"

using namespace sgpu;

namespace {

/// The decoder on its own context (combinational: every eval settles it).
struct Decoder {
  std::unique_ptr<VerilatedContext> context = std::make_unique<VerilatedContext>();
  std::unique_ptr<Vsgpu_cp_decode_tb_top> dut =
      std::make_unique<Vsgpu_cp_decode_tb_top>(context.get(), "decode");
  ~Decoder() { dut->final(); }

  abi::Fault header_fault(std::uint32_t header, bool privileged, std::uint32_t buf_left) {
    dut->hdr_i = header;
    dut->privileged_i = privileged;
    dut->buf_left_i = buf_left;
    dut->eval();
    return static_cast<abi::Fault>(dut->hdr_fault_o);
  }
};

constexpr std::uint32_t kBufLeftMax = (1u << 30) - 1;

/// Compares one header; collects the first few mismatches.
struct Sweep {
  Decoder dec;
  std::uint64_t checked = 0;
  std::vector<std::string> mismatches;

  void check(std::uint32_t header, bool privileged, std::uint32_t buf_left) {
    const abi::Fault rtl = dec.header_fault(header, privileged, buf_left);
    const abi::Fault ref = model::check_header(header, buf_left, privileged);
    ++checked;
    if (rtl != ref && mismatches.size() < 10) {
      std::ostringstream s;
      s << "header 0x" << std::hex << header << std::dec << (privileged ? " privileged" : "")
        << " buf_left " << buf_left << ": RTL " << abi::to_string(rtl) << ", table " << abi::to_string(ref);
      mismatches.push_back(s.str());
    }
  }
};

/// Lengths where a check can change its answer for this opcode's packet (or none known).
std::vector<std::uint32_t> boundary_lengths(const abi::PacketInfo* p) {
  std::vector<std::uint32_t> d = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 65534, 65535};
  if (p != nullptr) {
    for (std::uint32_t v : {p->min_dwords - 1, p->min_dwords, p->min_dwords + 1, p->max_dwords - 1,
                            p->max_dwords, p->max_dwords + 1}) {
      if (v <= 0xffff) d.push_back(v);
    }
  }
  return d;
}

}  // namespace

TEST_CASE("header check: every opcode and flags byte at every length bound, privilege and room", "[cp]") {
  Sweep sw;
  for (std::uint32_t op = 0; op < 256; ++op) {
    const abi::PacketInfo* p = abi::find_packet(static_cast<std::uint8_t>(op));
    const auto lengths = boundary_lengths(p);
    for (std::uint32_t flags = 0; flags < 256; ++flags) {
      for (const std::uint32_t dwords : lengths) {
        const std::uint32_t header = (dwords << 16) | (flags << 8) | op;
        for (const bool priv : {false, true}) {
          for (const std::uint32_t left : {dwords == 0 ? 0u : dwords - 1, dwords, kBufLeftMax}) {
            sw.check(header, priv, left);
          }
        }
      }
    }
  }
  INFO(sw.checked << " headers checked");
  for (const auto& m : sw.mismatches) INFO(m);
  CHECK(sw.checked > 5'000'000);  // 256 opcodes x 256 flags x ~13-19 lengths x 2 x 3
  REQUIRE(sw.mismatches.empty());
}

TEST_CASE("header check: every opcode at every length", "[cp]") {
  Sweep sw;
  for (std::uint32_t op = 0; op < 256; ++op) {
    const abi::PacketInfo* p = abi::find_packet(static_cast<std::uint8_t>(op));
    const std::uint32_t mask = p != nullptr ? p->flags_mask : 0;
    for (std::uint32_t dwords = 0; dwords <= 0xffff; ++dwords) {
      sw.check((dwords << 16) | (mask << 8) | op, true, kBufLeftMax);
      sw.check((dwords << 16) | op, false, dwords);
    }
  }
  for (const auto& m : sw.mismatches) INFO(m);
  CHECK(sw.checked == 2u * 256 * 65536);
  REQUIRE(sw.mismatches.empty());
}

TEST_CASE("header check: all 2^32 header values (SGPU_SOAK)", "[cp][soak]") {
  const char* soak = std::getenv("SGPU_SOAK");
  if (soak == nullptr || *soak == '\0') {
    SUCCEED("set SGPU_SOAK=1 to sweep every header value");
    return;
  }
  Sweep sw;
  std::uint32_t header = 0;
  diag::Progress progress("header sweep", std::uint64_t{1} << 32);  // quiet unless on a terminal
  do {
    if ((header & 0xfffff) == 0) progress.update(header);
    // Privilege and room vary with the header so every combination meets many headers.
    const bool priv = ((header >> 5) ^ (header >> 13) ^ (header >> 21)) & 1u;
    const std::uint32_t dwords = header >> 16;
    const std::uint32_t left = (header & 0x100) ? kBufLeftMax : (dwords == 0 ? 0 : dwords - (header >> 9 & 1u));
    sw.check(header, priv, left);
  } while (++header != 0);
  progress.update(std::uint64_t{1} << 32);
  progress.finish();
  for (const auto& m : sw.mismatches) INFO(m);
  CHECK(sw.checked == (std::uint64_t{1} << 32));
  REQUIRE(sw.mismatches.empty());
}

TEST_CASE("payload routing: every packet's fields land in its class's view", "[cp]") {
  Decoder dec;
  std::mt19937_64 rng(tb::test_seed(15));
  auto& t = *dec.dut;
  for (const abi::PacketInfo& p : abi::kPackets) {
    CAPTURE(p.name);
    // A packet of the longest length the eight routed dwords see.
    const std::uint32_t dwords = std::min<std::uint32_t>(p.max_dwords, 9);
    t.pkt_i = abi::make_header(p.opcode, dwords);
    t.eval();
    CHECK(t.known_o);
    CHECK(bool(t.privileged_o) == p.privileged);
    for (int round = 0; round < 200; ++round) {
      for (unsigned w = 0; w < 8; ++w) t.payload_i[w] = static_cast<std::uint32_t>(rng());
      t.eval();
      REQUIRE(t.route_ok_o);
    }
    // Payload dword k+1 is the last of a packet of k+2 dwords.
    for (std::uint32_t d = 2; d <= 9; ++d) {
      t.pkt_i = abi::make_header(p.opcode, d);
      t.eval();
      CHECK(t.last_o == (1u << (d - 2)));
    }
  }
}

TEST_CASE("header class and privilege at the header are the packet's table row", "[cp]") {
  Decoder dec;
  auto& t = *dec.dut;
  for (const abi::PacketInfo& p : abi::kPackets) {
    CAPTURE(p.name);
    t.hdr_i = abi::make_header(p.opcode, p.min_dwords);
    t.pkt_i = abi::make_header(p.opcode, p.min_dwords);
    t.eval();
    CHECK(t.hdr_class_o == t.pkt_class_o);
    CHECK(bool(t.hdr_privileged_o) == p.privileged);
  }
}

TEST_CASE("payload routing: data dwords are written, NOP's payload dropped, INDIRECT's bytes kept", "[cp]") {
  Decoder dec;
  auto& t = *dec.dut;
  auto route = [&](abi::Opcode op) {
    t.pkt_i = abi::make_header(op, 9);
    t.eval();
    return std::pair<unsigned, unsigned>{t.data_o, t.dropped_o};
  };
  // Everything from the variable part on is data; the fixed part is kept.
  const auto from = [](unsigned first_dword) { return 0xffu & ~((1u << (first_dword - 1)) - 1); };
  CHECK(route(abi::Opcode::WriteData) == std::pair<unsigned, unsigned>{from(abi::payload::write_data::kData), 0});
  CHECK(route(abi::Opcode::WritePhysical) ==
        std::pair<unsigned, unsigned>{from(abi::payload::write_physical::kData), 0});
  CHECK(route(abi::Opcode::Map) == std::pair<unsigned, unsigned>{from(abi::payload::map::kBusAddr), 0});
  CHECK(route(abi::Opcode::Nop) == std::pair<unsigned, unsigned>{0, 0xff});
  // The fixed payload of every other packet is kept, dword by dword (INDIRECT's bytes too: the
  // call is made from the packet register when the stream stop ends).
  for (const abi::PacketInfo& p : abi::kPackets) {
    if (p.min_dwords != p.max_dwords) continue;
    CAPTURE(p.name);
    t.pkt_i = abi::make_header(p.opcode, p.max_dwords);
    t.eval();
    const unsigned fixed = (1u << (p.max_dwords - 1)) - 1;
    CHECK((t.data_o & fixed) == 0);
    CHECK((t.dropped_o & fixed) == 0);
  }
}
