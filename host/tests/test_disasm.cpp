// The generic disassembler (sgpu/diag/disasm.hpp): every packet of the generated table decodes
// by its table entry alone, and malformed input is shown, never refused or overrun.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "sgpu/diag/disasm.hpp"
#include "sgpu/packet_writer.hpp"

using namespace sgpu;
using namespace sgpu::diag;

namespace {

// A packet of `info` at its minimum length whose payload dword i holds 0x1000 + i.
std::vector<std::uint32_t> sample(const abi::PacketInfo& info) {
  std::vector<std::uint32_t> w(info.min_dwords);
  w[0] = abi::make_header(info.opcode, info.min_dwords);
  for (std::uint32_t i = 1; i < w.size(); ++i) w[i] = 0x1000 + i;
  return w;
}

bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("disasm: every packet of the generated table decodes by its table entry alone", "[disasm]") {
  // Generic over abi::kPackets: a packet added to spec/abi.toml is covered with no test change.
  for (const auto& info : abi::kPackets) {
    INFO(info.name);
    const auto w = sample(info);
    const auto out = disassemble(w.data(), w.size(), 0x40);
    REQUIRE(out.size() == 1);
    const DecodedPacket& p = out[0];
    CHECK(p.info == &info);
    CHECK(p.name() == info.name);
    CHECK(p.offset == 0x40);
    CHECK(p.dwords == info.min_dwords);
    CHECK(p.present == info.min_dwords);
    CHECK(p.problem == PacketProblem::None);
    CHECK(p.flag_fields.size() == info.flag_fields.size);
    // Each payload dword is in exactly one field, named after the table (a _lo/_hi pair as one).
    std::size_t covered = 0;
    for (const auto& f : p.fields) {
      covered += f.wide ? 2 : 1;
      if (f.wide) {
        CHECK(info.payload[f.dword - 1] == f.name + "_lo");
        CHECK(f.value == ((std::uint64_t{0x1000 + f.dword + 1} << 32) | (0x1000 + f.dword)));
      } else if (f.dword <= info.payload.size) {
        CHECK(info.payload[f.dword - 1] == f.name);
        CHECK(f.value == 0x1000 + f.dword);
      } else {
        CHECK(has(f.name, std::string(info.variable) + "["));
      }
    }
    CHECK(covered == info.min_dwords - 1);
    // Every address field of the table is decoded as one, with its extent.
    std::size_t addresses = 0;
    for (const auto& f : p.fields)
      if (f.address) {
        ++addresses;
        CHECK(f.extent_known);
      }
    CHECK(addresses == info.address_count);
    const std::string text = to_text(p);
    CHECK(has(text, std::string(info.name)));
    CHECK_FALSE(has(text, "!!"));
  }
}

TEST_CASE("disasm: fields, flags, enumerated flag values and extents are named", "[disasm]") {
  std::uint32_t buf[64] = {};
  PacketWriter w(buf, sizeof buf);
  REQUIRE(w.write_data(0x1'0000'1000, {0xaa, 0xbb, 0xcc}));
  REQUIRE(w.fence(0x2'0000'0008, 7, abi::fence_flags::kIrq));
  REQUIRE(w.wait_mem(0x3000, abi::WaitMemFunc::Ge, 5, 0xff, 16));
  REQUIRE(w.blit_rect(0x10000, 0x20000, 64, 4, 256, 512));
  const auto out = disassemble(buf, w.offset() / 4);
  REQUIRE(out.size() == 4);
  const auto& wd = out[0];
  CHECK(wd.name() == "WRITE_DATA");
  REQUIRE(wd.fields.size() == 4);
  CHECK(wd.fields[0].name == "addr");
  CHECK(wd.fields[0].value == 0x1'0000'1000);
  CHECK(wd.fields[0].extent == 12);
  CHECK(wd.fields[1].name == "data[0]");
  CHECK(wd.fields[3].value == 0xcc);
  CHECK(out[1].offset == 24);
  CHECK(out[1].flag_fields[0].name == "irq");
  CHECK(out[1].flag_fields[0].value == 1);
  CHECK(out[1].fields[0].extent == 4);  // 32-bit value without value64
  CHECK(out[2].flag_fields[0].value_name == "GE");
  CHECK(out[3].fields[0].extent == 3 * 256 + 64);
  CHECK(out[3].fields[1].extent == 3 * 512 + 64);
  const std::string text = to_text(out, {});
  CHECK(has(text, "WRITE_DATA dwords=6 addr=0x0000000100001000 (write 12 B) data=[0xaa, 0xbb, 0xcc]"));
  CHECK(has(text, "FENCE dwords=5 flags=0x01 +irq"));
  CHECK(has(text, "WAIT_MEM dwords=6 flags=0x05 func=GE"));
  CHECK(has(text, "ref=0x5 mask=0xff interval=0x10"));
}

TEST_CASE("disasm: address notes, marks, raw dwords and long variable parts in the text view", "[disasm]") {
  std::vector<std::uint32_t> data(20, 0x5);
  std::uint32_t buf[64] = {};
  PacketWriter w(buf, sizeof buf);
  REQUIRE(w.nop(1));
  REQUIRE(w.write_data(0x8000, data.data(), data.size()));
  const auto out = disassemble(buf, w.offset() / 4);
  TextOptions o;
  o.mark = 4;
  o.raw = true;
  o.note = [](std::uint32_t field_offset, std::uint64_t address) {
    return field_offset == 8 ? "alloc at " + std::to_string(address) : std::string{};
  };
  const std::string text = to_text(out, o);
  CHECK(has(text, "=> 0x00000004  WRITE_DATA"));
  CHECK(has(text, "(write 80 B, alloc at 32768)"));
  CHECK(has(text, "... (12 more)]"));
  CHECK(has(text, "00170001 00008000 00000000 00000005"));
}

TEST_CASE("disasm: malformed input is shown, not refused", "[disasm]") {
  SECTION("unknown opcode: skipped by its dword count") {
    const std::uint32_t w[] = {0x0002007f, 0x1234, abi::make_header(abi::Opcode::Nop, 1)};
    const auto out = disassemble(w, 3);
    REQUIRE(out.size() == 2);
    CHECK(out[0].problem == PacketProblem::UnknownOpcode);
    CHECK(out[0].info == nullptr);
    CHECK(out[0].present == 2);
    CHECK(has(to_text(out[0]), "UNKNOWN opcode=0x7f dwords=2"));
    CHECK(has(to_text(out[0]), "!! unknown opcode"));
    CHECK(out[1].name() == "NOP");
  }
  SECTION("a dword count of 0 takes one dword") {
    const std::uint32_t w[] = {abi::make_header(abi::Opcode::Fence, 0), abi::make_header(abi::Opcode::Nop, 1)};
    const auto out = disassemble(w, 2);
    REQUIRE(out.size() == 2);
    CHECK(out[0].problem == PacketProblem::BadLength);
    CHECK(out[1].name() == "NOP");
  }
  SECTION("a length outside [min, max]") {
    const std::uint32_t w[] = {abi::make_header(abi::Opcode::WriteData, 3), 0x1000, 0};
    const auto out = disassemble(w, 3);
    REQUIRE(out.size() == 1);
    CHECK(out[0].problem == PacketProblem::BadLength);
    CHECK(has(to_text(out[0]), "!! bad length (allowed 4..65535)"));
  }
  SECTION("flag bits the packet does not define") {
    const std::uint32_t w[] = {abi::make_header(abi::Opcode::Nop, 1, 0x80)};
    const auto out = disassemble(w, 1);
    CHECK(out[0].problem == PacketProblem::ReservedFlags);
    CHECK(has(to_text(out[0]), "(0x80 undefined)"));
  }
  SECTION("a packet that runs past the end: the fields present, no extent read from missing dwords") {
    const std::uint32_t w[] = {abi::make_header(abi::Opcode::Copy, 6), 0x100, 0, 0x200};
    const auto out = disassemble(w, 4);
    REQUIRE(out.size() == 1);
    CHECK(out[0].problem == PacketProblem::Truncated);
    CHECK(out[0].present == 4);
    REQUIRE(out[0].fields.size() == 2);
    CHECK(out[0].fields[0].name == "src");
    CHECK_FALSE(out[0].fields[0].extent_known);  // `bytes` is missing
    CHECK(out[0].fields[1].name == "dst_lo");    // its _hi dword is missing
    CHECK(has(to_text(out[0]), "!! truncated (4 of 6 dwords present)"));
  }
  SECTION("random dwords never read past the buffer") {
    std::vector<std::uint32_t> w(97);
    std::uint32_t x = 12345;
    for (int round = 0; round < 200; ++round) {
      for (auto& d : w) d = (x = x * 1664525u + 1013904223u);
      const auto out = disassemble(w.data(), w.size());
      std::size_t total = 0;
      for (const auto& p : out) total += p.present;
      CHECK(total == w.size());
      (void)to_text(out);
    }
  }
  SECTION("nothing to decode") { CHECK(disassemble(nullptr, 0).empty()); }
}

TEST_CASE("disasm: dump files are raw little-endian dwords", "[disasm]") {
  const auto dir = std::filesystem::temp_directory_path() / "sgpu_test_disasm";
  std::filesystem::create_directories(dir);
  const std::string path = (dir / "buf.bin").string();
  const std::vector<std::uint32_t> w{abi::make_header(abi::Opcode::Nop, 2), 0x11223344};
  REQUIRE(write_dword_file(path, w));
  {
    std::ifstream in(path, std::ios::binary);
    char b[8];
    in.read(b, 8);
    CHECK(static_cast<unsigned char>(b[4]) == 0x44);
    CHECK(static_cast<unsigned char>(b[7]) == 0x11);
  }
  auto back = read_dword_file(path);
  REQUIRE(back);
  CHECK(*back == w);

  const std::string odd = (dir / "odd.bin").string();
  std::ofstream(odd, std::ios::binary) << "abcde";
  auto e = read_dword_file(odd);
  REQUIRE_FALSE(e);
  CHECK(e.error().code == Errc::InvalidArgument);
  CHECK_THAT(e.error().message, Catch::Contains("5 bytes"));
  auto missing = read_dword_file((dir / "missing.bin").string());
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::Contains("missing.bin"));
  auto unwritable = write_dword_file((dir / "no" / "such" / "dir.bin").string(), w);
  REQUIRE_FALSE(unwritable);
  CHECK(unwritable.error().code == Errc::InvalidArgument);
  std::filesystem::remove_all(dir);
}
