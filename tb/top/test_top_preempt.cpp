// Directed tests of preemption with work in flight (sgpu_top through raw MMIO and host memory):
// stop at a packet boundary, restart of copies and waits from their packet, the preemption
// record and interrupt, resume, and engine reset after a preemption.
#include <catch2/catch.hpp>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntPreempted = SGPU_REGS__INT_STATUS__PREEMPTED_bm;
constexpr std::uint64_t kRecord = kWritebackAddr + 0x100;
constexpr std::uint64_t kCalled = 0x1'0080'0000;

struct Preempt {
  std::uint32_t status;
  std::uint32_t offset;
  abi::PreemptRecord record;
};

void setup(RingHarness& h, std::uint64_t pfence) {
  h.dev().mmio_write32(SGPU_REG(PREEMPT_ADDR_LO), static_cast<std::uint32_t>(kRecord));
  h.dev().mmio_write32(SGPU_REG(PREEMPT_ADDR_HI), static_cast<std::uint32_t>(kRecord >> 32));
  h.dev().mmio_write32(SGPU_REG(PREEMPT_FENCE_LO), static_cast<std::uint32_t>(pfence));
  h.dev().mmio_write32(SGPU_REG(PREEMPT_FENCE_HI), static_cast<std::uint32_t>(pfence >> 32));
  h.dev().mmio_write32(SGPU_REG(INT_ENABLE), kIntDone | SGPU_REGS__INT_ENABLE__FAULT_bm | SGPU_REGS__INT_ENABLE__PREEMPTED_bm);
}

/// Requests a preemption and waits for the interrupt; returns what the device reports.
Preempt preempt(RingHarness& h) {
  h.dev().mmio_write32(SGPU_REG(PREEMPT), SGPU_REGS__PREEMPT__REQUEST_bm);
  Preempt p{};
  for (int i = 0; i < 100000 && !(h.reg(SGPU_REG(INT_STATUS)) & kIntPreempted); ++i) h.dev().step(4);
  REQUIRE(h.reg(SGPU_REG(INT_STATUS)) & kIntPreempted);
  h.dev().mmio_write32(SGPU_REG(INT_STATUS), kIntPreempted);
  p.status = h.reg(SGPU_REG(PREEMPT_STATUS));
  p.offset = h.reg(SGPU_REG(PREEMPT_OFFSET));
  h.mem().read(kRecord, &p.record, sizeof p.record);
  return p;
}

void resume(RingHarness& h) { h.dev().mmio_write32(SGPU_REG(PREEMPT), SGPU_REGS__PREEMPT__RESUME_bm); }

}  // namespace

TEST_CASE("preemption stops a stream of packets at a packet boundary and resume finishes it", "[top][preempt]") {
  RingHarness h;
  setup(h, 0x5000'0001);
  CHECK(h.reg(SGPU_REG(CAP_FEATURES)) & SGPU_REGS__CAP_FEATURES__PREEMPTION_bm);
  h.push(Packets().nop(), 10);  // a completed submission: the last completed fence
  h.doorbell();
  REQUIRE(h.wait_fence(10));
  constexpr std::uint32_t kN = 400;
  Packets p;
  for (std::uint32_t i = 0; i < kN; ++i) p.write_data(kDataAddr + 4 * i, {0x1000 + i});
  h.push(p, 11);
  h.doorbell();
  h.dev().step(600);  // well into the buffer
  const Preempt r = preempt(h);
  CHECK(r.status == (SGPU_REGS__PREEMPT_STATUS__PREEMPTED_bm | SGPU_REGS__PREEMPT_STATUS__IN_ENTRY_bm));
  CHECK(r.record.preempt_fence == 0x5000'0001);
  CHECK(r.record.last_fence == 10);
  CHECK(h.writeback().fence == 10);  // the entry did not retire
  CHECK(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm);
  // Every packet before the offset ran; none after it did.
  REQUIRE(r.offset % 16 == 0);
  const std::uint32_t done = r.offset / 16;
  CHECK(done > 0);
  CHECK(done < kN);
  for (std::uint32_t i = 0; i < kN; ++i) CHECK(h.mem().read32(kDataAddr + 4 * i) == (i < done ? 0x1000 + i : 0u));
  // Nothing moves while preempted.
  h.dev().step(2000);
  CHECK(h.mem().read32(kDataAddr + 4 * done) == 0);
  resume(h);
  REQUIRE(h.wait_fence(11));
  for (std::uint32_t i = 0; i < kN; ++i) CHECK(h.mem().read32(kDataAddr + 4 * i) == 0x1000 + i);
  CHECK(h.reg(SGPU_REG(PREEMPT_STATUS)) == 0);
}

TEST_CASE("preemption stops a long COPY, which restarts from the packet on resume", "[top][preempt]") {
  RingHarness h;
  setup(h, 77);
  constexpr std::uint32_t kBytes = 256u << 10;
  for (std::uint32_t i = 0; i < kBytes; i += 4) h.mem().write32(kDataAddr + i, i * 2654435761u);
  const std::uint64_t dst = kDataAddr + 0x100000;
  h.push(Packets().nop(3).copy(kDataAddr, dst, kBytes).write_data(kDataAddr + 0x200000, {1}), 20);
  h.doorbell();
  h.dev().step(3000);  // the copy is running
  const std::uint64_t c0 = h.dev().cycle();
  const Preempt r = preempt(h);
  // Far less than the copy's ~33 000 cycles: the copy engine only drains the reads it has in
  // flight, which its read buffer bounds (sgpu_dma_pkg::DefaultBufferBeats beats).
  CHECK(h.dev().cycle() - c0 < 6000);
  CHECK((r.status & SGPU_REGS__PREEMPT_STATUS__IN_ENTRY_bm));
  CHECK(r.offset == 12);  // the COPY's header
  CHECK(h.mem().read32(kDataAddr + 0x200000) == 0);
  CHECK(h.mem().read32(dst + kBytes - 4) != (kBytes - 4) * 2654435761u);  // not finished
  resume(h);
  REQUIRE(h.wait_irq(400000) & kIntDone);
  for (std::uint32_t i = 0; i < kBytes; i += 4) {
    if (h.mem().read32(dst + i) != i * 2654435761u) FAIL("byte " << i << " not copied");
  }
  CHECK(h.mem().read32(kDataAddr + 0x200000) == 1);
}

TEST_CASE("preemption ends an endless WAIT_MEM, which is evaluated again after resume", "[top][preempt][wait]") {
  RingHarness h;
  setup(h, 5);
  const std::uint64_t sem = kDataAddr + 0x40;
  h.mem().write32(sem, 0);
  h.push(Packets().nop(2).wait_mem(sem, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 10).write_data(kDataAddr, {9}), 30);
  h.doorbell();
  h.dev().step(2000);
  const Preempt r = preempt(h);
  CHECK(r.offset == 8);  // the WAIT_MEM's header
  h.mem().write32(sem, 1);  // released while preempted
  resume(h);
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.mem().read32(kDataAddr) == 9);
}

TEST_CASE("preemption inside a called buffer reports the INDIRECT's offset and resumes inside it", "[top][preempt][indirect]") {
  RingHarness h;
  setup(h, 6);
  // Long enough to still be running after 1000 cycles at one 1-dword WRITE_DATA every two
  // cycles (1000 packets; their data stays below the marker at + 0x1000).
  constexpr std::uint32_t kCalledPackets = 1000;
  Packets called;
  for (std::uint32_t i = 0; i < kCalledPackets; ++i) called.write_data(kDataAddr + 4 * i, {0x2000 + i});
  h.mem().write(kCalled, called.words().data(), called.bytes());
  h.push(Packets().nop(4).indirect(kCalled, called.bytes()).write_data(kDataAddr + 0x1000, {7}), 40);
  h.doorbell();
  h.dev().step(1000);
  const Preempt r = preempt(h);
  CHECK(r.offset == 16);  // the INDIRECT in the entry's buffer
  CHECK(h.mem().read32(kDataAddr + 0x1000) == 0);
  resume(h);
  REQUIRE(h.wait_irq() & kIntDone);
  for (std::uint32_t i = 0; i < kCalledPackets; ++i) CHECK(h.mem().read32(kDataAddr + 4 * i) == 0x2000 + i);
  CHECK(h.mem().read32(kDataAddr + 0x1000) == 7);
}

TEST_CASE("preemption between submissions completes at once, and reset after a preemption recovers", "[top][preempt]") {
  RingHarness h;
  setup(h, 0xabc);
  h.push(Packets().nop(), 50);
  h.doorbell();
  REQUIRE(h.wait_fence(50));
  h.dev().step(100);
  const Preempt idle = preempt(h);
  CHECK(idle.status == SGPU_REGS__PREEMPT_STATUS__PREEMPTED_bm);
  CHECK(idle.record.last_fence == 50);
  // New work is not fetched while preempted.
  h.push(Packets().write_data(kDataAddr, {1}), 51);
  h.doorbell();
  h.dev().step(2000);
  CHECK(h.writeback().fence == 50);
  resume(h);
  REQUIRE(h.wait_fence(51));

  // Work in flight, preempted, then the engine is reset instead of resumed.
  Packets p;
  for (std::uint32_t i = 0; i < 300; ++i) p.write_data(kDataAddr + 0x1000 + 4 * i, {i});
  h.push(p, 52);
  h.doorbell();
  h.dev().step(500);
  const Preempt busy = preempt(h);
  CHECK(busy.status & SGPU_REGS__PREEMPT_STATUS__IN_ENTRY_bm);
  CHECK(busy.record.last_fence == 51);
  REQUIRE(h.reset_engine());
  CHECK(h.reg(SGPU_REG(PREEMPT_STATUS)) == 0);
  CHECK(h.reg(SGPU_REG(FENCE_DONE_LO)) == 51);
  h.push(Packets().write_data(kDataAddr + 0x800, {0x600d}), 53);
  h.doorbell();
  REQUIRE(h.wait_fence(53));
  CHECK(h.mem().read32(kDataAddr + 0x800) == 0x600d);
}

namespace {

/// Two 1-packet entries behind one doorbell; runs until the first one's data is in memory (it
/// is retiring: its write-back record is being written and the second entry's ring read is
/// prefetched).
void run_into_first_retirement(RingHarness& h, std::uint64_t fence) {
  h.push(Packets().write_data(kDataAddr + 0x2000, {0xa1}), fence);
  h.push(Packets().write_data(kDataAddr + 0x2008, {0xb2}), fence + 1);
  h.doorbell();
  for (int i = 0; i < 20000 && h.mem().read32(kDataAddr + 0x2000) != 0xa1; ++i) h.dev().step(1);
  REQUIRE(h.mem().read32(kDataAddr + 0x2000) == 0xa1);
}

}  // namespace

TEST_CASE("preemption while an entry retires drops the prefetched next entry: not started, resumed from the ring", "[top][preempt][prefetch]") {
  RingHarness h;
  setup(h, 0x77);
  run_into_first_retirement(h, 70);
  const Preempt r = preempt(h);
  // At a submission boundary: the first entry retired, the second was never started.
  CHECK(r.status == SGPU_REGS__PREEMPT_STATUS__PREEMPTED_bm);
  CHECK(r.record.last_fence == 70);
  CHECK(h.writeback().fence == 70);
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 1);
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0);
  // Its ring entry was read ahead all the same (ring, buffer, ring): the read was dropped.
  CHECK(h.dev().memory_port().stats().read_bursts >= 3);
  CHECK(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm);
  h.dev().step(2000);
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0);
  resume(h);
  REQUIRE(h.wait_fence(71));
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0xb2);
  CHECK(h.reg(SGPU_REG(PREEMPT_STATUS)) == 0);
}

TEST_CASE("an engine reset while an entry retires drops the prefetched next entry as if never read", "[top][preempt][prefetch][reset]") {
  RingHarness h;
  setup(h, 0x78);
  run_into_first_retirement(h, 80);
  // The second entry's ring read is on the bus while the first one's record is written.
  for (int i = 0; i < 64 && h.dev().memory_port().stats().reads_in_flight == 0; ++i) h.dev().step(1);
  REQUIRE(h.dev().memory_port().stats().reads_in_flight > 0);
  CHECK(h.writeback().fence != 80);
  REQUIRE(h.reset_engine());
  h.dev().step(2000);
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0);
  CHECK(h.writeback().fence != 81);
  CHECK_FALSE(h.faulted());
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 0);
  // The ring restarts at entry 0 and runs normally.
  h.push(Packets().write_data(kDataAddr + 0x2010, {0xc3}), 82);
  h.push(Packets().write_data(kDataAddr + 0x2018, {0xd4}), 83);
  h.doorbell();
  REQUIRE(h.wait_fence(83));
  CHECK(h.mem().read32(kDataAddr + 0x2010) == 0xc3);
  CHECK(h.mem().read32(kDataAddr + 0x2018) == 0xd4);
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0);
}

TEST_CASE("CTRL.enable cleared while an entry retires: the prefetched entry waits unstarted until it is set again", "[top][prefetch]") {
  RingHarness h;
  setup(h, 0x79);
  run_into_first_retirement(h, 90);
  h.dev().mmio_write32(SGPU_REG(CTRL), 0);
  REQUIRE(h.wait_fence(90));
  h.dev().step(3000);
  CHECK(h.writeback().fence == 90);
  CHECK(h.dev().memory_port().stats().read_bursts >= 3);  // the second entry's ring read, dropped
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 1);
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0);
  CHECK(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm);
  h.dev().mmio_write32(SGPU_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  REQUIRE(h.wait_fence(91));
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0xb2);
}

TEST_CASE("entries back to back: each prefetched ring entry runs in order with its own fence and privilege", "[top][prefetch]") {
  RingHarness h(sim::SimConfig{}, 5);
  // The ring read is lent privilege while the entry before it retires; that privilege must not
  // reach the next entry's packets: a privileged entry, then an unprivileged one whose
  // WRITE_PHYSICAL faults.
  for (std::uint32_t i = 0; i < 12; ++i) {
    h.push(Packets().write_data(kDataAddr + 0x3000 + 8 * i, {0x100 + i}), 100 + i);
  }
  h.push(Packets().write_physical(kDataAddr + 0x3100, {0x5eed}), 112, abi::ring_flags::kPrivileged);
  h.push(Packets().write_physical(kDataAddr + 0x3108, {0xbad}), 113);
  h.doorbell();
  REQUIRE(h.wait_fence(112));
  for (int i = 0; i < 1000 && !h.faulted(); ++i) h.dev().step(16);
  REQUIRE(h.faulted());
  for (std::uint32_t i = 0; i < 12; ++i) CHECK(h.mem().read32(kDataAddr + 0x3000 + 8 * i) == 0x100 + i);
  CHECK(h.mem().read32(kDataAddr + 0x3100) == 0x5eed);
  CHECK(h.mem().read32(kDataAddr + 0x3108) == 0);
  const RingHarness::Fault f = h.fault();
  CHECK(f.reason == abi::Fault::PrivilegedPacket);
  CHECK(f.ring_index == 13);
  CHECK(f.fence == 113);
  CHECK(h.writeback().fence == 112);
}
