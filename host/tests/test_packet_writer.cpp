#include <catch2/catch.hpp>

#include <array>
#include <vector>

#include "sgpu/overlap.hpp"
#include "sgpu/packet_writer.hpp"

using namespace sgpu;
namespace ff = abi::fence_flags;

TEST_CASE("packet writer encodes NOP, WRITE_DATA and FENCE", "[packet_writer]") {
  std::array<std::uint32_t, 32> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.nop(2));
  REQUIRE(w.write_data(0x1'2345'6780, {0xaa, 0xbb}));
  REQUIRE(w.fence(0x2'0000'0008, 0x1'0000'0007, ff::kIrq | ff::kValue64));
  CHECK(w.packets() == 3);
  CHECK(w.offset() == 4 * (2 + 5 + 5));

  CHECK(abi::header_opcode(buf[0]) == static_cast<std::uint8_t>(abi::Opcode::Nop));
  CHECK(abi::header_dwords(buf[0]) == 2);
  CHECK(buf[1] == 0);

  CHECK(buf[2] == abi::make_header(abi::Opcode::WriteData, 5));
  CHECK(buf[3] == 0x2345'6780);
  CHECK(buf[4] == 0x1);
  CHECK(buf[5] == 0xaa);
  CHECK(buf[6] == 0xbb);

  CHECK(abi::header_opcode(buf[7]) == static_cast<std::uint8_t>(abi::Opcode::Fence));
  CHECK(abi::header_flags(buf[7]) == (ff::kIrq | ff::kValue64));
  CHECK(abi::header_dwords(buf[7]) == 5);
  CHECK(buf[8] == 0x8);
  CHECK(buf[9] == 0x2);
  CHECK(buf[10] == 0x7);
  CHECK(buf[11] == 0x1);
}

TEST_CASE("packet writer rejects bad packets and writes nothing", "[packet_writer]") {
  std::array<std::uint32_t, 8> buf{};
  PacketWriter w(buf.data(), sizeof buf);

  auto check_invalid = [&](Status s, Errc code) {
    REQUIRE_FALSE(s);
    CHECK(s.error().code == code);
    CHECK_FALSE(s.error().hardware_touched);
    CHECK(w.offset() == 0);
    CHECK(w.packets() == 0);
    for (auto d : buf) CHECK(d == 0);
  };
  check_invalid(w.nop(0), Errc::InvalidArgument);
  check_invalid(w.write_data(0x1002, {1}), Errc::InvalidArgument);
  check_invalid(w.write_data(0x1000, nullptr, 0), Errc::InvalidArgument);
  check_invalid(w.fence(0x1004, 1, ff::kValue64), Errc::InvalidArgument);  // 8-byte alignment
  check_invalid(w.fence(0x1000, 1, 0x80), Errc::InvalidArgument);          // undefined flag
  check_invalid(w.fence(0x1000, 1ull << 40, 0), Errc::InvalidArgument);    // needs value64
  check_invalid(w.nop(9), Errc::OutOfMemory);                              // does not fit
  const std::vector<std::uint32_t> big(6, 1);
  check_invalid(w.write_data(0x1000, big.data(), big.size()), Errc::OutOfMemory);
}

TEST_CASE("packet writer fills a buffer exactly", "[packet_writer]") {
  std::array<std::uint32_t, 10> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.fence(0x1000, 1));
  REQUIRE(w.fence(0x1000, 2));
  CHECK(w.remaining() == 0);
  CHECK_FALSE(w.nop());
  REQUIRE(w.raw({}));
}

TEST_CASE("packet writer encodes TLB_INVALIDATE (range and all)", "[packet_writer]") {
  std::array<std::uint32_t, 8> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.tlb_invalidate(40, 4));
  REQUIRE(w.tlb_invalidate_all());
  CHECK(w.packets() == 2);
  CHECK(w.offset() == 4 * 6);
  CHECK(buf[0] == abi::make_header(abi::Opcode::TlbInvalidate, 3));
  CHECK(buf[1] == 40);
  CHECK(buf[2] == 4);
  CHECK(buf[3] == abi::make_header(abi::Opcode::TlbInvalidate, 3, abi::tlb_invalidate_flags::kAll));
  CHECK(buf[4] == 0);
  CHECK(buf[5] == 0);
  CHECK_FALSE(w.tlb_invalidate(0xffff'fff0u, 0x20));  // the page range wraps
  CHECK(w.offset() == 4 * 6);
  CHECK_FALSE(w.tlb_invalidate(1, 1));  // 2 dwords left: does not fit
  CHECK(w.offset() == 4 * 6);
}

TEST_CASE("packet writer encodes MAP/UNMAP and READ/WRITE_PHYSICAL", "[packet_writer]") {
  std::array<std::uint32_t, 32> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  const std::uint64_t bus[2] = {0x1'2345'6000ull, 0x7000};
  REQUIRE(w.map_pages(10, 3, bus, 2));
  CHECK(buf[0] == abi::make_header(abi::Opcode::Map, 8));
  CHECK(buf[1] == 10);
  CHECK(buf[2] == 2);
  CHECK(buf[3] == 3);
  CHECK(buf[4] == 0x2345'6000u);
  CHECK(buf[5] == 1);
  CHECK(buf[6] == 0x7000);
  CHECK(buf[7] == 0);
  REQUIRE(w.unmap_pages(10, 2, 0xabc'0000'1001ull));
  CHECK(buf[8] == abi::make_header(abi::Opcode::Unmap, 5));
  CHECK(buf[11] == 0x1001u);
  CHECK(buf[12] == 0xabcu);
  const std::uint32_t data[2] = {5, 6};
  REQUIRE(w.write_physical(0x1000, data, 2));
  CHECK(buf[13] == abi::make_header(abi::Opcode::WritePhysical, 5));
  CHECK(buf[17] == 6);
  REQUIRE(w.read_physical(0x2000, 0x3000, 16));
  CHECK(buf[18] == abi::make_header(abi::Opcode::ReadPhysical, 6));
  CHECK(buf[23] == 16);
  CHECK(w.packets() == 4);
  const std::uint32_t at = w.offset();
  const std::uint64_t misaligned = 0x1234;
  CHECK_FALSE(w.map_pages(0, 1, &misaligned, 1));  // bus address not 4 KiB aligned
  CHECK_FALSE(w.map_pages(0, 8, bus, 1));          // flags beyond bits 2:0
  CHECK_FALSE(w.unmap_pages(0xffff'fff0u, 0x20, 0));
  CHECK_FALSE(w.write_physical(0x1002, data, 1));
  CHECK(w.offset() == at);
  CHECK(copy_overlaps(0x2000, 0x2008, 16));  // READ_PHYSICAL has COPY's overlap rule (the caller's check)
}

TEST_CASE("packet writer encodes COPY and FILL, overlapping copies are the caller's rule", "[packet_writer]") {
  std::array<std::uint32_t, 32> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.copy(0x1'0000'0003, 0x2'0000'0005, 77));
  REQUIRE(w.fill(0x3'0000'0001, 9, 0xa1b2c3d4));
  CHECK(w.offset() == 4 * 11);
  CHECK(buf[0] == abi::make_header(abi::Opcode::Copy, 6));
  CHECK(buf[1] == 3);
  CHECK(buf[2] == 1);
  CHECK(buf[3] == 5);
  CHECK(buf[4] == 2);
  CHECK(buf[5] == 77);
  CHECK(buf[6] == abi::make_header(abi::Opcode::Fill, 5));
  CHECK(buf[7] == 1);
  CHECK(buf[8] == 3);
  CHECK(buf[9] == 9);
  CHECK(buf[10] == 0xa1b2c3d4);
  // The device's COPY_OVERLAP rule (sgpu/overlap.hpp), which callers apply before encoding.
  CHECK(copy_overlaps(0x1000, 0x1010, 0x11));  // overlap by one byte
  CHECK(copy_overlaps(0x1010, 0x1000, 0x11));
  CHECK_FALSE(copy_overlaps(0x1000, 0x1010, 0x10));  // adjacent
  CHECK_FALSE(copy_overlaps(0x1000, 0x1010, 0));     // nothing to copy: no overlap
  // The writer is a pure encoder: it encodes what the caller asks (a test may want the fault).
  REQUIRE(w.copy(0x1000, 0x1010, 0x11));
  CHECK(w.offset() == 4 * 17);
  CHECK(buf[16] == 0x11);
}

TEST_CASE("packet writer encodes BLIT_RECT and FILL_RECT, overlapping extents are the caller's rule",
          "[packet_writer]") {
  std::array<std::uint32_t, 48> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.blit_rect(0x1'0000'0000, 0x2'0000'0004, 1024, 256, 8192, 5120));
  REQUIRE(w.fill_rect(0x3'0000'0000, 12, 3, 64, 0xff00ff00));
  CHECK(w.offset() == 4 * 16);
  CHECK(buf[0] == abi::make_header(abi::Opcode::BlitRect, 9));
  CHECK(buf[1] == 0);
  CHECK(buf[2] == 1);
  CHECK(buf[3] == 4);
  CHECK(buf[4] == 2);
  CHECK(buf[5] == 1024);
  CHECK(buf[6] == 256);
  CHECK(buf[7] == 8192);
  CHECK(buf[8] == 5120);
  CHECK(buf[9] == abi::make_header(abi::Opcode::FillRect, 7));
  CHECK(buf[10] == 0);
  CHECK(buf[11] == 3);
  CHECK(buf[12] == 12);
  CHECK(buf[13] == 3);
  CHECK(buf[14] == 64);
  CHECK(buf[15] == 0xff00ff00);
  CHECK(blit_overlaps(0x1000, 0x1040, 0x20, 4, 0x100, 0x100));  // interleaved rows: extents overlap
  CHECK_FALSE(blit_overlaps(0x1000, 0x1000 + 3 * 0x100 + 0x20, 0x20, 4, 0x100, 0x100));  // adjacent extents
  CHECK_FALSE(blit_overlaps(0x1000, 0x1000, 0, 4, 0x100, 0x100));                        // empty: nothing to overlap
  CHECK(blit_overlaps(0, 0, 1, 1, 0, 0));  // both sides not yet placed (address 0): Present checks offsets
  CHECK(w.blit_rect(0x1000, 0x1000 + 3 * 0x100 + 0x20, 0x20, 4, 0x100, 0x100));
  CHECK(w.blit_rect(0x1000, 0x1040, 0x20, 4, 0x100, 0x100));  // encoded as asked: the device would fault
  CHECK(w.offset() == 4 * 34);
}

TEST_CASE("packet writer encodes WAIT_MEM and TIMESTAMP and refuses misaligned addresses", "[packet_writer]") {
  std::array<std::uint32_t, 16> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.wait_mem(0x1'0000'0004, abi::WaitMemFunc::Ge, 7, 0xff, 100));
  REQUIRE(w.timestamp(0x2'0000'0008));
  CHECK(w.offset() == 4 * (6 + 3));
  CHECK(buf[0] == abi::make_header(abi::Opcode::WaitMem, 6, static_cast<std::uint8_t>(abi::WaitMemFunc::Ge)));
  CHECK(buf[1] == 4);
  CHECK(buf[2] == 1);
  CHECK(buf[3] == 7);
  CHECK(buf[4] == 0xff);
  CHECK(buf[5] == 100);
  CHECK(buf[6] == abi::make_header(abi::Opcode::Timestamp, 3));
  CHECK(buf[7] == 8);
  CHECK(buf[8] == 2);

  const std::uint32_t before = w.offset();
  CHECK_FALSE(w.wait_mem(0x1002, abi::WaitMemFunc::Eq, 0));
  CHECK_FALSE(w.wait_mem(0x1000, static_cast<abi::WaitMemFunc>(8), 0));
  CHECK_FALSE(w.timestamp(0x1004));
  CHECK(w.offset() == before);
}

TEST_CASE("packet writer encodes INDIRECT and refuses misaligned calls", "[packet_writer]") {
  std::array<std::uint32_t, 8> buf{};
  PacketWriter w(buf.data(), sizeof buf);
  REQUIRE(w.indirect(0x3'0000'0100, 64));
  CHECK(buf[0] == abi::make_header(abi::Opcode::Indirect, 4));
  CHECK(buf[1] == 0x100);
  CHECK(buf[2] == 3);
  CHECK(buf[3] == 64);
  CHECK_FALSE(w.indirect(0x102, 64));
  CHECK_FALSE(w.indirect(0x100, 6));
  CHECK(w.offset() == 16);
}
