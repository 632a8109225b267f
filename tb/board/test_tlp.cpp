// The testbench's own PCIe pieces: TLP encoding and the rules it checks, and the endpoint's
// configuration space. The root-complex model is only as good as these.
#include <catch2/catch.hpp>

#include "board/config_space.hpp"
#include "board/pci_function.hpp"
#include "board/tlp.hpp"
#include "sgpu/gen/abi.hpp"

using namespace sgpu::board;

TEST_CASE("Memory requests encode to the header layout of the specification", "[tlp]") {
  const Tlp rd = Tlp::mem_read(0x1234'5678'9abc'def0, 16, 0x0100, 7);
  const auto dw = rd.encode();
  REQUIRE(dw.size() == 4);
  CHECK(dw[0] == 0x2000'0010);                 // Fmt 01 (4-dword, no data), Type 0, length 16
  CHECK(dw[1] == 0x0100'07ff);                 // requester, tag, last/first BE
  CHECK(dw[2] == 0x1234'5678);
  CHECK(dw[3] == 0x9abc'def0);

  const Tlp wr = Tlp::mem_write(0x8000'0004, {1, 2, 3, 4}, 0x0100, 0x6, 0xf);
  const auto w = wr.encode();
  REQUIRE(w.size() == 4);
  CHECK(w[0] == 0x4000'0001);                  // Fmt 10 (3-dword, data), length 1
  CHECK((w[1] & 0xff) == 0x06);                // one dword: last BE forced to 0
  CHECK(w[2] == 0x8000'0004);
  CHECK(w[3] == 0x0102'0304);                  // first byte in bits 31:24
  const Tlp back = Tlp::decode(w);
  CHECK(back.kind == TlpKind::MemWrite);
  CHECK(back.payload == std::vector<std::uint8_t>{1, 2, 3, 4});
  CHECK(back.first_be == 0x6);
}

TEST_CASE("Decoding rejects what the header contradicts", "[tlp]") {
  auto dw = Tlp::mem_write(0x1000, std::vector<std::uint8_t>(8, 0), 1).encode();
  dw.pop_back();
  CHECK_THROWS_WITH(Tlp::decode(dw), Catch::Contains("header says"));
  // A 4-dword header for an address below 4 GiB is malformed.
  auto four = Tlp::mem_read(0x1'0000'0000, 1, 1, 0).encode();
  four[2] = 0;
  CHECK_THROWS_WITH(Tlp::decode(four), Catch::Contains("3-dword header"));
}

TEST_CASE("Read byte count and lower address follow the byte enables", "[tlp]") {
  CHECK(read_byte_count(1, 0xf, 0) == 4);
  CHECK(read_byte_count(1, 0x6, 0) == 2);
  CHECK(read_byte_count(1, 0x0, 0) == 1);   // zero-length read
  CHECK(read_byte_count(2, 0xc, 0x3) == 4);
  CHECK(read_byte_count(16, 0xf, 0xf) == 64);
  CHECK(read_lower_address(0x1044, 0x4) == 0x46);
  CHECK(read_lower_address(0x10c0, 0x0) == 0x40);
}

TEST_CASE("Request checks: byte enables, 4 KiB boundary, payload sizes", "[tlp]") {
  CHECK(check_request(Tlp::mem_read(0x1000, 128, 1, 0), 256, 512) == "");
  CHECK_THAT(check_request(Tlp::mem_read(0x1f00, 128, 1, 0), 256, 512), Catch::Contains("4 KiB"));
  CHECK_THAT(check_request(Tlp::mem_read(0x1000, 256, 1, 0), 256, 512), Catch::Contains("Max_Read_Request_Size"));
  CHECK_THAT(check_request(Tlp::mem_write(0x1000, std::vector<std::uint8_t>(512, 0), 1), 256, 512),
             Catch::Contains("Max_Payload_Size"));
  // Holes: allowed in a single dword, and in a quadword-aligned 2-dword request; not elsewhere.
  CHECK(check_request(Tlp::mem_write(0x1000, std::vector<std::uint8_t>(4, 0), 1, 0x5, 0), 256, 512) == "");
  CHECK(check_request(Tlp::mem_write(0x1000, std::vector<std::uint8_t>(8, 0), 1, 0x5, 0xa), 256, 512) == "");
  CHECK_THAT(check_request(Tlp::mem_write(0x1004, std::vector<std::uint8_t>(8, 0), 1, 0x5, 0x1), 256, 512),
             Catch::Contains("first byte enables"));
  CHECK_THAT(check_request(Tlp::mem_write(0x1000, std::vector<std::uint8_t>(12, 0), 1, 0xf, 0x2), 256, 512),
             Catch::Contains("last byte enables"));
}

TEST_CASE("Configuration space: the softgpu's identity from the spec", "[config]") {
  // FunctionIds' defaults come from boards.py's header; sgpu::abi::pci from tools/gen_abi.py. Both
  // read spec/abi.toml [pci]: a drift between the Vivado flow's values and the host's shows here.
  ConfigSpace c(FunctionIds{}, 4096, LinkCaps{4, 2, 512});
  CHECK(c.read32(0x00) == ((std::uint32_t{sgpu::abi::pci::kDeviceId} << 16) | sgpu::abi::pci::kVendorId));
  CHECK(c.read32(0x08) >> 8 == sgpu::abi::pci::kClassCode);
  CHECK(c.read32(0x08) >> 24 == 0x03);  // base class: display controller
  CHECK(c.read32(0x2c) == ((std::uint32_t{hard_block::kSubsystemId} << 16) | hard_block::kSubsystemVendorId));
}

TEST_CASE("Configuration space: BAR sizing, capabilities, write masks", "[config]") {
  ConfigSpace c(FunctionIds{}, 4096, LinkCaps{4, 2, 512});
  const std::uint32_t ids = c.read32(0);
  c.write32(ConfigSpace::kBar0, 0xffff'ffff);
  CHECK(c.read32(ConfigSpace::kBar0) == 0xffff'f000);  // 4 KiB, 32-bit memory
  c.write32(ConfigSpace::kBar0, 0xf000'0000);
  CHECK(c.bar0_base() == 0xf000'0000u);
  c.write32(0x00, 0);  // IDs are read-only
  CHECK(c.read32(0) == ids);
  CHECK_FALSE(c.bus_master());
  c.write32(ConfigSpace::kCommand, 0x6);
  CHECK(c.bus_master());
  CHECK(c.memory_enabled());
  CHECK(c.max_payload() == 128);
  CHECK(c.max_read_request() == 512);
  c.write32(ConfigSpace::kDeviceControl, (2u << 5) | (3u << 12));
  CHECK(c.max_payload() == 512);
  CHECK(c.max_read_request() == 1024);
}
