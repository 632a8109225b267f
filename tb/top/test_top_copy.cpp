// Directed full-chip tests of COPY and FILL (the copy engine behind the command processor),
// through raw MMIO and host memory: byte-exact results at every alignment, ordering against
// packet writes and fences, and every fault the packets can raise.
#include <algorithm>
#include <cstring>
#include <random>

#include <catch2/catch.hpp>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;
constexpr std::uint64_t kSrc = kDataAddr;              // source window
constexpr std::uint64_t kDst = kDataAddr + 0x40000;    // destination window
constexpr std::uint64_t kWindow = 0x20000;

std::uint64_t reg64(RingHarness& h, std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t l = h.reg(lo);
  return l | (std::uint64_t{h.reg(hi)} << 32);
}

std::uint32_t reason(RingHarness& h) {
  return (h.reg(SGPU_REG(FAULT_STATUS)) & SGPU_REGS__FAULT_STATUS__REASON_bm) >> SGPU_REGS__FAULT_STATUS__REASON_bp;
}

/// Fills both windows with random bytes and returns the images (source, destination).
std::pair<std::vector<std::uint8_t>, std::vector<std::uint8_t>> randomise(RingHarness& h, std::mt19937_64& rng) {
  std::vector<std::uint8_t> s(kWindow), d(kWindow);
  for (auto& b : s) b = static_cast<std::uint8_t>(rng());
  for (auto& b : d) b = static_cast<std::uint8_t>(rng());
  h.mem().write(kSrc, s.data(), s.size());
  h.mem().write(kDst, d.data(), d.size());
  return {s, d};
}

std::vector<std::uint8_t> read_dst(RingHarness& h) {
  std::vector<std::uint8_t> d(kWindow);
  h.mem().read(kDst, d.data(), d.size());
  return d;
}

}  // namespace

TEST_CASE("COPY and FILL are byte-exact at every alignment and length", "[top][copy]") {
  RingHarness h;
  std::mt19937_64 rng(7);
  auto [src, ref] = randomise(h, rng);
  struct Op {
    bool fill;
    std::uint32_t so, d_o, n, pattern;
  };
  std::vector<Op> ops;
  for (std::uint32_t so = 0; so < 8; ++so) {
    for (std::uint32_t d_o = 0; d_o < 8; ++d_o) ops.push_back({false, so, 0x400 * (so * 8 + d_o) + d_o, 1 + so * 8 + d_o, 0});
  }
  ops.push_back({false, 3, 0x11005, 4096 + 13, 0});   // crosses pages on both sides
  ops.push_back({false, 0x800, 0x13ffd, 0, 0});       // zero bytes
  ops.push_back({true, 0, 0x15003, 1, 0x11223344});
  ops.push_back({true, 0, 0x16001, 4999, 0xa1b2c3d4});
  ops.push_back({true, 0, 0x18000, 64, 0xdeadbeef});
  Packets p;
  for (const auto& o : ops) {
    if (o.fill) {
      p.fill(kDst + o.d_o, o.n, o.pattern);
      for (std::uint32_t i = 0; i < o.n; ++i) ref[o.d_o + i] = static_cast<std::uint8_t>(o.pattern >> (8 * (i % 4)));
    } else {
      p.copy(kSrc + o.so, kDst + o.d_o, o.n);
      std::copy_n(src.begin() + o.so, o.n, ref.begin() + o.d_o);
    }
  }
  h.push(p, 1);
  h.doorbell();
  REQUIRE(h.wait_irq(2'000'000) == kIntDone);
  CHECK(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  CHECK(read_dst(h) == ref);
  CHECK(h.reg(SGPU_REG(CAP_FEATURES)) & SGPU_REGS__CAP_FEATURES__COPY_ENGINE_bm);
}

TEST_CASE("COPY reads what earlier WRITE_DATA wrote, and a FENCE after a COPY sees its data",
          "[top][copy][order]") {
  RingHarness h;
  Packets p;
  std::vector<std::uint32_t> words(300);
  for (std::uint32_t i = 0; i < words.size(); ++i) words[i] = 0x5000 + i;
  p.write_data(kSrc, words);
  p.copy(kSrc, kDst + 1, 4 * 300);
  p.fence(kDst + 0x2000, 0x77, 0);
  p.copy(kDst + 1, kDst + 0x3000, 4 * 300);  // reads the first copy's result
  h.push(p, 2);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntDone);
  std::vector<std::uint8_t> a(1200), b(1200);
  h.mem().read(kDst + 1, a.data(), a.size());
  h.mem().read(kDst + 0x3000, b.data(), b.size());
  for (std::uint32_t i = 0; i < 300; ++i) {
    std::uint32_t v = 0;
    std::memcpy(&v, a.data() + 4 * i, 4);
    CHECK(v == 0x5000 + i);
  }
  CHECK(a == b);
  CHECK(h.mem().read32(kDst + 0x2000) == 0x77);
}

TEST_CASE("an overlapping COPY faults COPY_OVERLAP and copies nothing", "[top][copy][fault]") {
  RingHarness h;
  std::mt19937_64 rng(3);
  auto [src, dst] = randomise(h, rng);
  (void)dst;
  Packets p;
  p.copy(kSrc + 0x100, kSrc + 0x1ff, 0x100);  // last source byte = first destination byte
  h.push(p, 3);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntFault);
  CHECK(reason(h) == static_cast<std::uint32_t>(abi::Fault::CopyOverlap));
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == kSrc + 0x1ff);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::Copy, 6));
  std::vector<std::uint8_t> now(kWindow);
  h.mem().read(kSrc, now.data(), now.size());
  CHECK(now == src);
  // Adjacent ranges do not overlap.
  REQUIRE(h.reset_engine());
  Packets q;
  q.copy(kSrc + 0x100, kSrc + 0x200, 0x100);
  h.push(q, 4);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntDone);
  for (unsigned i = 0; i < 0x100; ++i) CHECK(h.mem().read8(kSrc + 0x200 + i) == src[0x100 + i]);
}

TEST_CASE("a source read error faults BUS_ERROR at the first byte not copied", "[top][copy][fault]") {
  RingHarness h;
  std::mt19937_64 rng(4);
  randomise(h, rng);
  const std::uint64_t bad = kSrc + 0x1234;  // error beat starts at 0x1230 (8-byte bus)
  h.dev().memory_port().inject_error(bad, bad + 1, 2);
  Packets p;
  p.copy(kSrc + 0x1003, kDst + 0x5, 0x1000);
  p.write_data(kDst + 0x8000, {0x99});       // never executed
  h.push(p, 5, 0);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntFault);
  CHECK(reason(h) == static_cast<std::uint32_t>(abi::Fault::BusError));
  // Delivered: whole bus beats of the request before the failing beat.
  const std::uint64_t a = kSrc + 0x1003, e = kSrc + 0x1230;
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == a + (e - a) / 8 * 8);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::Copy, 6));
  CHECK(h.mem().read32(kDst + 0x8000) != 0x99);
  CHECK((h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__FAULTED_bm) != 0);
  REQUIRE(h.reset_engine());
}

TEST_CASE("a destination write error faults BUS_ERROR at the failing burst and changes nothing outside the range",
          "[top][copy][fault]") {
  const bool fill = GENERATE(false, true);
  CAPTURE(fill);
  RingHarness h;
  std::mt19937_64 rng(5);
  auto [src, ref] = randomise(h, rng);
  (void)src;
  const std::uint64_t dst = kDst + 0x100b, n = 0x2000;
  // Bursts: [0x1008, 0x1800) 256 beats, [0x1800, 0x2000), [0x2000, 0x2800), ...: fail the third.
  h.dev().memory_port().inject_error(kDst + 0x2100, kDst + 0x2101, 3);
  Packets p;
  if (fill) {
    p.fill(dst, n, 0x01020304);
  } else {
    p.copy(kSrc, dst, n);
  }
  h.push(p, 6);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntFault);
  CHECK(reason(h) == static_cast<std::uint32_t>(abi::Fault::BusError));
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == kDst + 0x2000);
  const auto now = read_dst(h);
  for (std::uint64_t i = 0; i < kWindow; ++i) {
    if (i >= 0x100b && i < 0x100b + n) continue;
    if (now[i] != ref[i]) FAIL("byte outside the destination changed at +" << i);
  }
  REQUIRE(h.reset_engine());
}

TEST_CASE("an engine reset during a long COPY drains the copy engine and the next COPY works",
          "[top][copy][reset]") {
  RingHarness h;
  const std::uint32_t n = 1u << 18;
  Packets p;
  p.copy(kSrc, kDst, n);
  h.push(p, 7);
  h.doorbell();
  h.dev().step(4000);  // reads and writes in flight
  CHECK((h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm) == 0);
  REQUIRE(h.reset_engine());
  CHECK(h.writeback().fence != 7);
  std::mt19937_64 rng(9);
  auto [src, ref] = randomise(h, rng);
  Packets q;
  q.copy(kSrc + 1, kDst + 2, 5000);
  std::copy_n(src.begin() + 1, 5000, ref.begin() + 2);
  h.push(q, 8);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(read_dst(h) == ref);
}

TEST_CASE("BLIT_RECT and FILL_RECT copy and fill pitched rectangles byte-exactly", "[top][copy][rect]") {
  RingHarness h;
  std::mt19937_64 rng(11);
  auto [src, ref] = randomise(h, rng);
  struct Rect {
    bool fill;
    std::uint32_t so, d_o, w, rows, sp, dp, pattern;
  };
  const std::vector<Rect> rects = {
      {false, 0, 0, 256 * 4, 16, 2048, 1536, 0},       // 32-bit pixels, aligned
      {false, 3, 0x6005, 77, 9, 101, 203, 0},           // odd everything
      {false, 0x100, 0x8000, 5000, 3, 5003, 6000, 0},  // rows across pages
      {false, 0, 0xa000, 0, 5, 10, 10, 0},              // zero width
      {false, 0, 0xa100, 10, 0, 10, 10, 0},             // zero height
      {false, 0x20, 0xb000, 40, 6, 40, 30, 0},          // destination rows overlap each other
      {true, 0, 0xc001, 123, 7, 0, 300, 0x11223344},
      {true, 0, 0xd000, 64 * 4, 32, 0, 320, 0xff00ff00},
  };
  Packets p;
  for (const auto& r : rects) {
    if (r.fill) {
      p.fill_rect(kDst + r.d_o, r.w, r.rows, r.dp, r.pattern);
    } else {
      p.blit_rect(kSrc + r.so, kDst + r.d_o, r.w, r.rows, r.sp, r.dp);
    }
    for (std::uint32_t y = 0; y < r.rows; ++y) {
      for (std::uint32_t i = 0; i < r.w; ++i) {
        ref[r.d_o + std::uint64_t{y} * r.dp + i] =
            r.fill ? static_cast<std::uint8_t>(r.pattern >> (8 * (i % 4))) : src[r.so + std::uint64_t{y} * r.sp + i];
      }
    }
  }
  h.push(p, 1);
  h.doorbell();
  REQUIRE(h.wait_irq(2'000'000) == kIntDone);
  CHECK(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  CHECK(read_dst(h) == ref);
}

TEST_CASE("BLIT_RECT with overlapping extents faults COPY_OVERLAP, and a failing row is reported exactly",
          "[top][copy][rect][fault]") {
  RingHarness h;
  std::mt19937_64 rng(12);
  auto [src, ref] = randomise(h, rng);
  (void)ref;
  SECTION("overlap: the extents overlap although the rows do not share a byte") {
    Packets p;
    p.blit_rect(kSrc, kSrc + 0x40, 0x20, 4, 0x100, 0x100);  // rows interleave
    h.push(p, 2);
    h.doorbell();
    REQUIRE(h.wait_irq() == kIntFault);
    CHECK(reason(h) == static_cast<std::uint32_t>(abi::Fault::CopyOverlap));
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == kSrc + 0x40);
    CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::BlitRect, 9));
    std::vector<std::uint8_t> now(kWindow);
    h.mem().read(kSrc, now.data(), now.size());
    CHECK(now == src);
  }
  SECTION("source error in row 3") {
    // Row r of the source starts at kSrc + 0x1001 + 0x200 r; the error hits row 3 at +0x50.
    const std::uint64_t row3 = kSrc + 0x1001 + 3 * 0x200;
    h.dev().memory_port().inject_error(row3 + 0x50, row3 + 0x51, 2);
    Packets p;
    p.blit_rect(kSrc + 0x1001, kDst + 0x7, 0x100, 6, 0x200, 0x180);
    h.push(p, 3);
    h.doorbell();
    REQUIRE(h.wait_irq() == kIntFault);
    CHECK(reason(h) == static_cast<std::uint32_t>(abi::Fault::BusError));
    const std::uint64_t bad_beat = (row3 + 0x50) & ~std::uint64_t{7};
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == row3 + (bad_beat - row3) / 8 * 8);
    // Rows 0..2 were copied.
    for (std::uint32_t y = 0; y < 3; ++y) {
      for (std::uint32_t i = 0; i < 0x100; ++i) {
        if (h.mem().read8(kDst + 0x7 + 0x180 * y + i) != src[0x1001 + 0x200 * y + i]) FAIL("row " << y << " byte " << i);
      }
    }
  }
  SECTION("destination error in row 2 of a FILL_RECT") {
    const std::uint64_t row2 = kDst + 0x3 + 2 * 0x1000;
    h.dev().memory_port().inject_error(row2 + 0x10, row2 + 0x11, 3);
    Packets p;
    p.fill_rect(kDst + 0x3, 0x40, 5, 0x1000, 0xcafef00d);
    h.push(p, 4);
    h.doorbell();
    REQUIRE(h.wait_irq() == kIntFault);
    CHECK(reason(h) == static_cast<std::uint32_t>(abi::Fault::BusError));
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == (row2 & ~std::uint64_t{7}));
  }
  REQUIRE(h.reset_engine());
}
