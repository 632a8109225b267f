// Directed tests of INDIRECT (called buffers, nesting limit, faults inside called buffers)
// through sgpu_top's raw MMIO and host memory.
#include <catch2/catch.hpp>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;
constexpr std::uint64_t kCalled = 0x1'0080'0000;  ///< called buffers live here, 64 KiB apart

std::uint64_t reg64(RingHarness& h, std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t l = h.reg(lo);
  return l | (std::uint64_t{h.reg(hi)} << 32);
}
abi::Fault fault_reason(RingHarness& h) {
  return static_cast<abi::Fault>((h.reg(SGPU_REG(FAULT_STATUS)) & SGPU_REGS__FAULT_STATUS__REASON_bm) >>
                                 SGPU_REGS__FAULT_STATUS__REASON_bp);
}
std::uint64_t fault_addr(RingHarness& h) { return reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)); }

/// Writes `p` as called buffer `i`; returns its address.
std::uint64_t place(RingHarness& h, unsigned i, const Packets& p) {
  const std::uint64_t addr = kCalled + 0x10000ull * i + 4 * i;  // odd dword offsets too
  h.mem().write(addr, p.words().data(), p.bytes());
  return addr;
}

unsigned max_depth(RingHarness& h) {
  return (h.reg(SGPU_REG(CAP_MEM)) & SGPU_REGS__CAP_MEM__MAX_INDIRECT_DEPTH_bm) >> SGPU_REGS__CAP_MEM__MAX_INDIRECT_DEPTH_bp;
}

void expect_recovers(RingHarness& h) {
  REQUIRE(h.reset_engine());
  h.push(Packets().write_data(kDataAddr + 0x800, {0x600d600d}), 777);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x800) == 0x600d600d);
}

}  // namespace

TEST_CASE("INDIRECT runs the called buffers in order and continues after the packet", "[top][indirect]") {
  RingHarness h;
  // Program order is checked with one dword every packet overwrites, plus one dword per packet.
  const std::uint64_t last = kDataAddr + 0x400;
  const auto step = [&](Packets& p, std::uint32_t n) { p.write_data(kDataAddr + 4 * n, {n}).write_data(last, {n}); };
  Packets c2;
  step(c2, 3);
  step(c2, 4);
  const std::uint64_t a2 = place(h, 2, c2);
  Packets c1;
  step(c1, 2);
  c1.indirect(a2, c2.bytes());
  step(c1, 5);
  c1.indirect(a2, 0);  // nothing
  c1.indirect(a2, c2.bytes());  // called twice: 3, 4 again
  const std::uint64_t a1 = place(h, 1, c1);
  Packets p;
  step(p, 1);
  p.indirect(a1, c1.bytes());
  step(p, 6);
  p.indirect(a2, 8);  // 8 bytes: c2's first packet (4 dwords) runs past the called range
  h.push(p, 1);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);  // BUFFER_OVERRUN, named in the called buffer
  CHECK(fault_reason(h) == abi::Fault::BufferOverrun);
  CHECK(fault_addr(h) == a2);
  for (std::uint32_t n = 1; n <= 6; ++n) CHECK(h.mem().read32(kDataAddr + 4 * n) == n);
  CHECK(h.mem().read32(last) == 6);
  expect_recovers(h);

  // The same without the truncated call, ending with an INDIRECT: retires.
  Packets q;
  step(q, 7);
  q.indirect(a1, c1.bytes());
  h.push(q, 1000);  // above the fence expect_recovers retired
  h.doorbell();
  REQUIRE(h.wait_fence(1000));
  CHECK(h.mem().read32(kDataAddr + 4 * 7) == 7);
  CHECK(h.mem().read32(last) == 4);  // c1 ends with the second call of c2
}

TEST_CASE("INDIRECT nests to CAP_MEM.max_indirect_depth and one level more faults INDIRECT_DEPTH", "[top][indirect]") {
  RingHarness h;
  const unsigned depth = max_depth(h);
  REQUIRE(depth == 4);
  // Buffer k (k = 1..depth+1) writes k, then calls buffer k+1 (the deepest only writes).
  for (unsigned limit : {depth, depth + 1}) {
    std::uint64_t next = 0;
    std::uint32_t next_bytes = 0;
    for (unsigned k = limit; k >= 1; --k) {
      Packets b;
      b.write_data(kDataAddr + 0x100 * limit + 4 * k, {k});
      if (next != 0) b.indirect(next, next_bytes);
      b.write_data(kDataAddr + 0x100 * limit + 0x40 + 4 * k, {k});
      next = place(h, 10 * limit + k, b);
      next_bytes = b.bytes();
    }
    h.push(Packets().indirect(next, next_bytes), limit);
    h.doorbell();
    const std::uint32_t st = h.wait_irq();
    if (limit == depth) {
      CHECK(st == kIntDone);
      for (unsigned k = 1; k <= limit; ++k) CHECK(h.mem().read32(kDataAddr + 0x100 * limit + 0x40 + 4 * k) == k);
    } else {
      REQUIRE(st & kIntFault);
      CHECK(fault_reason(h) == abi::Fault::IndirectDepth);
      // The INDIRECT in buffer `depth` (after its 4-dword WRITE_DATA).
      CHECK(fault_addr(h) == kCalled + 0x10000ull * (10 * limit + depth) + 4 * (10 * limit + depth) + 16);
      CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::Indirect, 4));
      CHECK(reg64(h, SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)) == limit);
      CHECK(h.mem().read32(kDataAddr + 0x100 * limit + 4 * depth) == depth);  // level `depth` ran up to it
      CHECK(h.mem().read32(kDataAddr + 0x100 * limit + 0x40 + 4 * depth) == 0);
      expect_recovers(h);
    }
  }
}

TEST_CASE("a buffer that calls itself ends with INDIRECT_DEPTH", "[top][indirect]") {
  RingHarness h;
  const std::uint64_t a = kCalled + 0x40;
  Packets self;
  self.write_data(kDataAddr, {0x5e1f}).indirect(a, 4 * (4 + 4));
  h.mem().write(a, self.words().data(), self.bytes());
  h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 2000);  // not needed: the depth limit ends it
  h.push(Packets().nop().indirect(a, self.bytes()), 3);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  CHECK(fault_reason(h) == abi::Fault::IndirectDepth);
  CHECK(fault_addr(h) == a + 16);
  expect_recovers(h);
}

TEST_CASE("faults inside a called buffer name the address there", "[top][indirect]") {
  RingHarness h;
  SECTION("illegal opcode") {
    Packets c;
    c.nop(3).raw(0x000100ee);
    const std::uint64_t a = place(h, 1, c);
    h.push(Packets().indirect(a, c.bytes()).nop(), 4);
    h.doorbell();
    REQUIRE(h.wait_irq() & kIntFault);
    CHECK(fault_reason(h) == abi::Fault::IllegalOpcode);
    CHECK(fault_addr(h) == a + 12);
    CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == 0x000100ee);
  }
  SECTION("bus error reading the called buffer") {
    Packets c;
    c.nop(20).nop(20);
    const std::uint64_t a = place(h, 2, c);
    h.dev().memory_port().inject_error(a + 0x60, a + 0x64, 2);
    h.push(Packets().indirect(a, c.bytes()), 5);
    h.doorbell();
    REQUIRE(h.wait_irq() & kIntFault);
    CHECK(fault_reason(h) == abi::Fault::BusError);
    CHECK(fault_addr(h) >= a);
    CHECK(fault_addr(h) <= a + 0x60);
    h.dev().memory_port().clear_errors();
  }
  SECTION("misaligned address or length") {
    h.push(Packets().indirect(kCalled + 2, 16), 6);
    h.doorbell();
    REQUIRE(h.wait_irq() & kIntFault);
    CHECK(fault_reason(h) == abi::Fault::BadAlignment);
    CHECK(fault_addr(h) == kCalled + 2);
  }
  SECTION("WAIT_MEM inside a called buffer never satisfied: the watchdog names it") {
    h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 500);
    Packets c;
    c.nop(2).wait_mem(kDataAddr, abi::WaitMemFunc::Never, 0, 0);
    const std::uint64_t a = place(h, 3, c);
    h.push(Packets().indirect(a, c.bytes()), 7);
    h.doorbell();
    REQUIRE(h.wait_irq(20000) & kIntFault);
    CHECK(fault_reason(h) == abi::Fault::Watchdog);
    CHECK(fault_addr(h) == a + 8);
  }
  expect_recovers(h);
}
