// Directed tests of WAIT_MEM, TIMESTAMP and the command processor's watchdog (sgpu_top through
// raw MMIO and host memory).
#include <catch2/catch.hpp>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;
constexpr std::uint64_t kSem = kDataAddr + 0x1000;  ///< a semaphore dword

std::uint64_t reg64(RingHarness& h, std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t l = h.reg(lo);
  return l | (std::uint64_t{h.reg(hi)} << 32);
}

abi::Fault fault_reason(RingHarness& h) {
  return static_cast<abi::Fault>((h.reg(SGPU_REG(FAULT_STATUS)) & SGPU_REGS__FAULT_STATUS__REASON_bm) >>
                                 SGPU_REGS__FAULT_STATUS__REASON_bp);
}
std::uint64_t fault_addr(RingHarness& h) { return reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)); }

bool idle(RingHarness& h) { return h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm; }

/// After a fault or a hang the engine must come back: reset, then a fresh submission completes.
void expect_recovers(RingHarness& h) {
  REQUIRE(h.reset_engine());
  CHECK_FALSE(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__FAULTED_bm);
  h.push(Packets().write_data(kDataAddr + 0x800, {0x600d600d}), 777);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x800) == 0x600d600d);
  CHECK(h.writeback().fence == 777);
}

}  // namespace

TEST_CASE("TIMESTAMP writes the cycle counter after earlier writes, in packet order", "[top][timestamp]") {
  RingHarness h;
  const std::uint64_t c0 = h.dev().cycle();
  h.push(Packets()
             .timestamp(kDataAddr)
             .write_data(kDataAddr + 0x100, {1, 2, 3, 4})
             .timestamp(kDataAddr + 8)
             .nop(40)
             .timestamp(kDataAddr + 16),
         1);
  h.doorbell();
  REQUIRE(h.wait_fence(1));
  const std::uint64_t c1 = h.dev().cycle();
  const std::uint64_t t0 = h.mem().read64(kDataAddr), t1 = h.mem().read64(kDataAddr + 8),
                      t2 = h.mem().read64(kDataAddr + 16);
  // The device's counter started with the simulation, as SimDevice::cycle() did.
  CHECK(t0 >= c0);
  CHECK(t1 > t0);
  // The second one waited for four write responses (32-cycle write latency).
  CHECK(t1 - t0 >= 32);
  CHECK(t2 >= t1 + 40);  // 40 NOP dwords at one dword per cycle at most
  CHECK(t2 < c1);
}

TEST_CASE("TIMESTAMP at an address that is not 8-byte aligned faults BAD_ALIGNMENT", "[top][timestamp]") {
  RingHarness h;
  h.push(Packets().timestamp(kDataAddr + 4), 9);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  CHECK(fault_reason(h) == abi::Fault::BadAlignment);
  CHECK(fault_addr(h) == kDataAddr + 4);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::Timestamp, 3));
  expect_recovers(h);
}

TEST_CASE("WAIT_MEM satisfied by an earlier write of the submission lets the rest of the buffer run", "[top][wait]") {
  RingHarness h;
  // The rest of the stream follows the wait (stopped and re-requested), also from an odd offset
  // and when the wait is the last packet.
  for (std::uint32_t pad : {0u, 1u, 3u}) {
    Packets p;
    p.nop(pad + 1).write_data(kSem, {5}).wait_mem(kSem, abi::WaitMemFunc::Eq, 5, 0xffffffffu, 3);
    for (std::uint32_t i = 0; i < 50; ++i) p.write_data(kDataAddr + 4 * i, {0x100 + i + pad});
    p.wait_mem(kSem, abi::WaitMemFunc::Ge, 5, 0xff);
    h.push(p, 10 + pad);
    h.doorbell();
    REQUIRE(h.wait_fence(10 + pad));
    for (std::uint32_t i = 0; i < 50; ++i) CHECK(h.mem().read32(kDataAddr + 4 * i) == 0x100 + i + pad);
  }
  CHECK_FALSE(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__FAULTED_bm);
}

TEST_CASE("WAIT_MEM holds later packets until the host releases the semaphore", "[top][wait]") {
  RingHarness h;
  h.mem().write32(kSem, 0);
  h.mem().write32(kDataAddr, 0);
  h.push(Packets().wait_mem(kSem, abi::WaitMemFunc::Gt, 0x10, 0xff, 20).write_data(kDataAddr, {0xfeed}), 3);
  h.doorbell();
  h.dev().step(3000);
  CHECK(h.mem().read32(kDataAddr) == 0);
  CHECK_FALSE(idle(h));
  h.mem().write32(kSem, 0xabcd0011);  // masked: 0x11 > 0x10
  REQUIRE(h.wait_fence(3));
  CHECK(h.mem().read32(kDataAddr) == 0xfeed);
}

TEST_CASE("WAIT_MEM compare functions", "[top][wait]") {
  struct Case {
    abi::WaitMemFunc func;
    std::uint32_t value, ref, mask;
    bool hit;
  };
  using F = abi::WaitMemFunc;
  const Case cases[] = {
      {F::Always, 1, 2, 0, true},          {F::Never, 1, 1, 0xffffffffu, false},
      {F::Eq, 0x1234, 0x34, 0xff, true},   {F::Eq, 0x1235, 0x34, 0xff, false},
      {F::Ne, 7, 7, 0xffffffffu, false},   {F::Ne, 7, 8, 0xffffffffu, true},
      {F::Lt, 0xffffffffu, 0x80000000u, 0xffffffffu, false}, {F::Lt, 3, 4, 0xffffffffu, true},
      {F::Le, 4, 4, 0xffffffffu, true},    {F::Le, 5, 4, 0xffffffffu, false},
      {F::Gt, 0x80000000u, 1, 0xffffffffu, true}, {F::Gt, 4, 4, 0xffffffffu, false},
      {F::Ge, 4, 4, 0xffffffffu, true},    {F::Ge, 0xf3, 4, 0x03, false},
  };
  RingHarness h;
  h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 400);
  std::uint64_t fence = 100;
  for (const Case& c : cases) {
    INFO("func " << static_cast<unsigned>(c.func) << " value " << c.value << " ref " << c.ref << " mask " << c.mask);
    h.mem().write32(kSem, c.value);
    Packets p;
    p.nop().wait_mem(kSem, c.func, c.ref, c.mask, 5);
    h.push(p, ++fence);
    h.doorbell();
    const std::uint32_t st = h.wait_irq(20000);
    if (c.hit) {
      CHECK(st == kIntDone);
      CHECK(h.writeback().fence == fence);
    } else {
      REQUIRE(st & kIntFault);
      CHECK(fault_reason(h) == abi::Fault::Watchdog);
      CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == p.words()[1]);
      REQUIRE(h.reset_engine());
    }
  }
}

TEST_CASE("an endless WAIT_MEM faults WATCHDOG after CP_WATCHDOG cycles and the engine recovers", "[top][wait][watchdog]") {
  RingHarness h;
  CHECK(h.reg(SGPU_REG(CP_WATCHDOG)) == 0);  // off after reset
  h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 1000);
  h.mem().write32(kSem, 1);
  const Packets p = Packets().write_data(kDataAddr, {1}).nop(2).wait_mem(kSem, abi::WaitMemFunc::Eq, 2, 0xffffffffu, 8);
  h.push(p, 42);
  h.doorbell();
  const std::uint64_t c0 = h.dev().cycle();
  REQUIRE(h.wait_irq(20000) & kIntFault);
  const std::uint64_t took = h.dev().cycle() - c0;
  CHECK(took >= 1000);
  CHECK(took < 1000 + 600);  // fetch, drain, one poll and the fault drain on top
  CHECK(fault_reason(h) == abi::Fault::Watchdog);
  CHECK(fault_addr(h) == kBufferAddr + 4 * 6);  // the WAIT_MEM header (after 4 + 2 dwords)
  CHECK(reg64(h, SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)) == 42);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == p.words()[6]);
  CHECK(h.writeback().fence != 42);
  expect_recovers(h);
}

TEST_CASE("with the watchdog off an endless WAIT_MEM waits until an engine reset", "[top][wait][watchdog]") {
  RingHarness h;
  h.mem().write32(kSem, 0);
  h.push(Packets().wait_mem(kSem, abi::WaitMemFunc::Ne, 0, 0xffffffffu, 0), 5);
  h.doorbell();
  h.dev().step(20000);
  CHECK_FALSE(idle(h));
  CHECK_FALSE(h.dev().irq());
  expect_recovers(h);  // the reset drains the poll read in flight
}

TEST_CASE("the watchdog does not fire on a long COPY (copy-engine beats are progress)", "[top][watchdog]") {
  RingHarness h;
  h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 300);
  for (std::uint32_t i = 0; i < 0x10000; i += 4) h.mem().write32(kDataAddr + i, i * 7);
  h.push(Packets().copy(kDataAddr, kDataAddr + 0x100000, 0x10000), 8);
  h.doorbell();
  REQUIRE(h.wait_irq(100000) == kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x100000 + 0xfffc) == 0xfffc * 7);
}

TEST_CASE("a WAIT_MEM read that fails faults BUS_ERROR at the polled address", "[top][wait]") {
  RingHarness h;
  h.dev().memory_port().inject_error(kSem, kSem + 4, 2);
  h.push(Packets().nop().wait_mem(kSem, abi::WaitMemFunc::Eq, 0, 0), 6);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  CHECK(fault_reason(h) == abi::Fault::BusError);
  CHECK(fault_addr(h) == kSem);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == Packets().wait_mem(kSem, abi::WaitMemFunc::Eq, 0, 0).words()[0]);
  h.dev().memory_port().clear_errors();
  expect_recovers(h);
}

TEST_CASE("WAIT_MEM at an address that is not 4-byte aligned faults BAD_ALIGNMENT", "[top][wait]") {
  RingHarness h;
  h.push(Packets().wait_mem(kSem + 2, abi::WaitMemFunc::Always, 0, 0), 6);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  CHECK(fault_reason(h) == abi::Fault::BadAlignment);
  CHECK(fault_addr(h) == kSem + 2);
  expect_recovers(h);
}
