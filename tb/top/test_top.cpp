// Directed tests of the whole front end (sgpu_top) through raw MMIO and host memory: ring,
// packets, fences, interrupts, write-back, faults and engine reset.
#include <catch2/catch.hpp>

#include <vector>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;

std::uint64_t reg64(RingHarness& h, std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t l = h.reg(lo);
  return l | (std::uint64_t{h.reg(hi)} << 32);
}

struct FaultRecord {
  abi::Fault reason;
  std::uint32_t ring_index;
  std::uint64_t addr;
  std::uint64_t fence;
  std::uint32_t detail;
};

FaultRecord read_fault(RingHarness& h) {
  const std::uint32_t status = h.reg(SGPU_REG(FAULT_STATUS));
  return {static_cast<abi::Fault>((status & SGPU_REGS__FAULT_STATUS__REASON_bm) >> SGPU_REGS__FAULT_STATUS__REASON_bp),
          (status & SGPU_REGS__FAULT_STATUS__RING_INDEX_bm) >> SGPU_REGS__FAULT_STATUS__RING_INDEX_bp,
          reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)),
          reg64(h, SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)), h.reg(SGPU_REG(FAULT_DETAIL))};
}

bool faulted(RingHarness& h) { return h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__FAULTED_bm; }

/// After a fault the engine must come back: reset, then a fresh submission completes.
void expect_recovers(RingHarness& h) {
  REQUIRE(h.reset_engine());
  CHECK_FALSE(faulted(h));
  CHECK(read_fault(h).reason == abi::Fault::None);
  h.push(Packets().write_data(kDataAddr + 0x800, {0x600d600d}), 777);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x800) == 0x600d600d);
  CHECK(h.writeback().fence == 777);
}

}  // namespace

TEST_CASE("a FENCE packet writes its value and raises the interrupt", "[top][fence]") {
  RingHarness h;
  h.push(Packets().nop().fence(kDataAddr, 0x1122334455667788ull, abi::fence_flags::kIrq | abi::fence_flags::kValue64), 1);
  h.doorbell();
  const std::uint32_t status = h.wait_irq();
  REQUIRE(status & kIntDone);
  CHECK(h.mem().read64(kDataAddr) == 0x1122334455667788ull);
  CHECK_FALSE(h.dev().irq());  // W1C cleared the line
}

TEST_CASE("a 32-bit FENCE writes only the low dword", "[top][fence]") {
  RingHarness h;
  h.mem().write64(kDataAddr, 0xaaaaaaaaaaaaaaaaull);
  h.push(Packets().fence(kDataAddr + 4, 0x99999999'12345678ull, 0), 5);
  h.doorbell();
  REQUIRE(h.wait_fence(5));
  CHECK(h.mem().read64(kDataAddr) == 0x12345678'aaaaaaaaull);
}

TEST_CASE("retired entries update write-back, head, fence and interrupt", "[top][ring]") {
  RingHarness h;
  for (std::uint64_t f = 1; f <= 3; ++f) h.push(Packets().nop(3), 100 + f);
  h.doorbell();
  REQUIRE(h.wait_fence(103));
  // Registers and the interrupt follow once the write-back record is acknowledged.
  for (int i = 0; i < 100 && !(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm); ++i) h.dev().step(8);
  const auto wb = h.writeback();
  CHECK(wb.fence == 103);
  CHECK(wb.head == h.tail());
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == h.tail());
  CHECK(reg64(h, SGPU_REG(FENCE_DONE_LO), SGPU_REG(FENCE_DONE_HI)) == 103);
  CHECK(h.reg(SGPU_REG(INT_STATUS)) & kIntDone);
  CHECK(h.dev().irq());
  CHECK(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm);
}

TEST_CASE("the ring wraps around", "[top][ring]") {
  RingHarness h({}, 2);  // four entries
  std::uint64_t fence = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 3; ++i) {
      ++fence;
      h.push(Packets().write_data(kDataAddr + 4 * fence, {static_cast<std::uint32_t>(fence)}), fence);
    }
    h.doorbell();
    REQUIRE(h.wait_fence(fence));
    CHECK(h.writeback().head == h.tail());
  }
  for (std::uint64_t f = 1; f <= fence; ++f) CHECK(h.mem().read32(kDataAddr + 4 * f) == f);
}

TEST_CASE("WRITE_DATA lands dword-exact and touches nothing else", "[top][write_data]") {
  sim::SimConfig cfg;
  cfg.memory_ready_prob = GENERATE(1.0, 0.4);
  cfg.read_latency = 37;
  RingHarness h(cfg);
  h.mem().fill(kDataAddr, 0x5a, 64);
  h.push(Packets().write_data(kDataAddr + 4, {1, 2, 3, 4, 5}).write_data(kDataAddr + 40, {0xcafef00d}), 9);
  h.doorbell();
  REQUIRE(h.wait_fence(9));
  CHECK(h.mem().read32(kDataAddr) == 0x5a5a5a5a);
  for (std::uint32_t i = 0; i < 5; ++i) CHECK(h.mem().read32(kDataAddr + 4 + 4 * i) == i + 1);
  CHECK(h.mem().read32(kDataAddr + 24) == 0x5a5a5a5a);
  CHECK(h.mem().read32(kDataAddr + 40) == 0xcafef00d);
  CHECK(h.mem().read32(kDataAddr + 44) == 0x5a5a5a5a);
}

TEST_CASE("WRITE_DATA pairs the dwords of one 8-byte word into one write, at any start and length", "[top][write_data]") {
  sim::SimConfig cfg;
  cfg.memory_ready_prob = GENERATE(1.0, 0.4);
  cfg.write_latency = 23;
  RingHarness h(cfg);
  h.mem().fill(kDataAddr, 0x5a, 0x3000);
  // Unaligned start just below a 4 KiB boundary: one dword, then pairs across the boundary.
  // Aligned start with an odd count: pairs, then the last dword alone.
  h.push(Packets()
             .write_data(kDataAddr + 0xff4, {1, 2, 3, 4, 5, 6, 7})
             .write_data(kDataAddr + 0x2000, {0xa, 0xb, 0xc})
             .write_data(kDataAddr + 0x2010, {0xd}),
         5);
  const std::uint64_t bursts = h.dev().memory_port().stats().write_bursts;
  h.doorbell();
  REQUIRE(h.wait_fence(5));
  h.dev().step(200);  // the write-back record's fence word is acknowledged too
  CHECK(h.mem().read32(kDataAddr + 0xff0) == 0x5a5a5a5a);
  for (std::uint32_t i = 0; i < 7; ++i) CHECK(h.mem().read32(kDataAddr + 0xff4 + 4 * i) == i + 1);
  CHECK(h.mem().read32(kDataAddr + 0x1010) == 0x5a5a5a5a);
  CHECK(h.mem().read32(kDataAddr + 0x1ffc) == 0x5a5a5a5a);
  CHECK(h.mem().read32(kDataAddr + 0x2000) == 0xa);
  CHECK(h.mem().read32(kDataAddr + 0x2004) == 0xb);
  CHECK(h.mem().read32(kDataAddr + 0x2008) == 0xc);
  CHECK(h.mem().read32(kDataAddr + 0x200c) == 0x5a5a5a5a);
  CHECK(h.mem().read32(kDataAddr + 0x2010) == 0xd);
  CHECK(h.mem().read32(kDataAddr + 0x2014) == 0x5a5a5a5a);
  // 1 + 3 pairs, a pair + 1, 1; and the write-back record's two words.
  CHECK(h.dev().memory_port().stats().write_bursts - bursts == 4 + 2 + 1 + 2);
}

TEST_CASE("a FENCE after paired WRITE_DATA is never visible before the data", "[top][write_data][fence]") {
  sim::SimConfig cfg;
  cfg.memory_ready_prob = GENERATE(1.0, 0.3);
  cfg.write_latency = 64;
  RingHarness h(cfg);
  Packets p;
  for (std::uint32_t k = 0; k < 8; ++k) {
    std::vector<std::uint32_t> data(16);
    for (std::uint32_t i = 0; i < 16; ++i) data[i] = 0x100 * (k + 1) + i;
    p.write_data(kDataAddr + 0x40 * k, data);
  }
  p.fence(kDataAddr + 0x1000, 0x77, 0);
  h.push(p, 3);
  h.doorbell();
  bool seen = false;
  for (int n = 0; n < 20000 && !seen; ++n) {
    h.dev().step(1);
    if (h.mem().read32(kDataAddr + 0x1000) == 0x77) {
      seen = true;
      for (std::uint32_t k = 0; k < 8; ++k) {
        for (std::uint32_t i = 0; i < 16; ++i) REQUIRE(h.mem().read32(kDataAddr + 0x40 * k + 4 * i) == 0x100 * (k + 1) + i);
      }
    }
  }
  CHECK(seen);
  CHECK(h.wait_fence(3));
}

TEST_CASE("zero-length and null-render entries retire their fence without executing", "[top][ring]") {
  RingHarness h;
  abi::RingEntry empty{};
  empty.buf_addr = kBufferAddr;
  empty.fence = 41;
  h.push_entry(empty);
  h.push(Packets().write_data(kDataAddr, {0xbad}), 42, abi::ring_flags::kNullRender);
  h.doorbell();
  REQUIRE(h.wait_fence(42));
  CHECK(h.mem().read32(kDataAddr) == 0);
}

TEST_CASE("nothing is fetched while CTRL.enable is 0", "[top][ring]") {
  RingHarness h;
  h.dev().mmio_write32(SGPU_REG(CTRL), 0);
  h.push(Packets().nop(), 1);
  h.doorbell();
  h.dev().step(2000);
  CHECK(h.writeback().fence == 0);
  CHECK(h.dev().memory_port().stats().read_bursts == 0);
  h.dev().mmio_write32(SGPU_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  CHECK(h.wait_fence(1));
}

TEST_CASE("malformed packets stop the engine with a fault record", "[top][fault]") {
  RingHarness h;
  struct Case {
    const char* name;
    Packets packets;
    abi::Fault reason;
    std::uint32_t bad_offset;  // byte offset of the faulting packet in its buffer
  };
  const std::uint32_t unknown = abi::make_header(static_cast<abi::Opcode>(0xee), 1);
  const std::uint32_t short_fence = abi::make_header(abi::Opcode::Fence, 4);
  const std::uint32_t reserved = abi::make_header(abi::Opcode::Nop, 1, 0x80);
  const std::uint32_t overrun = abi::make_header(abi::Opcode::WriteData, 10);
  const std::uint32_t zero_len = abi::make_header(abi::Opcode::Nop, 0);
  Case c = GENERATE_COPY(
      Case{"illegal opcode", Packets().nop().raw(unknown), abi::Fault::IllegalOpcode, 4},
      Case{"length below the packet's minimum", Packets().raw(short_fence).raw(0).raw(0).raw(0), abi::Fault::BadLength, 0},
      Case{"zero length", Packets().nop(2).raw(zero_len), abi::Fault::BadLength, 8},
      Case{"undefined flag bits", Packets().nop().raw(reserved), abi::Fault::ReservedBits, 4},
      Case{"packet past the end of the buffer", Packets().raw(overrun).raw(0).raw(0).raw(0).raw(0), abi::Fault::BufferOverrun, 0});
  SECTION(c.name) {
    // The bad packet is followed by a write that must never happen.
    Packets p = c.packets;
    p.write_data(kDataAddr, {0xbad});
    const auto& words = p.words();
    h.push(p, 7);
    h.doorbell();
    const std::uint32_t status = h.wait_irq();
    REQUIRE(status & kIntFault);
    CHECK_FALSE(status & kIntDone);
    REQUIRE(faulted(h));
    const FaultRecord f = read_fault(h);
    CHECK(f.reason == c.reason);
    CHECK(f.ring_index == 0);
    CHECK(f.fence == 7);
    CHECK(f.addr == kBufferAddr + c.bad_offset);
    CHECK(f.detail == words[c.bad_offset / 4]);
    CHECK(h.mem().read32(kDataAddr) == 0);
    CHECK(h.writeback().fence == 0);  // the faulting submission never retires
    expect_recovers(h);
  }
}

// The CP's decode stage judges the dword that will be at the stream head a cycle ahead (its
// packet-table check, selected by how many dwords the execute stage takes: none, one, or two
// for a WRITE_DATA header with its address low dword, an address high dword with the first data
// dword, or a data pair), and the next dword's payload routing by the packet register's step.
// A malformed header right behind every way of taking dwords, in every lane of a beat, with the
// window full (fast memory) and drained (a stalling memory, so the next head comes from the
// beat that arrives): it faults as itself, and everything before it was executed.
TEST_CASE("a malformed header behind every way of taking dwords is judged as itself", "[top][fault][decode]") {
  struct Prefix {
    const char* name;
    Packets packets;
    std::uint64_t check_addr;  // a dword the prefix writes (0: none)
    std::uint32_t check_value;
  };
  const std::vector<Prefix> prefixes = {
      {"nothing", Packets(), 0, 0},
      {"a one-dword NOP", Packets().nop(), 0, 0},
      {"a two-dword NOP", Packets().nop(2), 0, 0},
      {"a three-dword NOP", Packets().nop(3), 0, 0},
      {"WRITE_DATA of a pair", Packets().write_data(kDataAddr, {0x11, 0x12}), kDataAddr + 4, 0x12},
      {"WRITE_DATA of one dword at an odd dword (high dword with it)", Packets().write_data(kDataAddr + 0x14, {0x21}),
       kDataAddr + 0x14, 0x21},
      {"WRITE_DATA of three dwords at an odd dword", Packets().write_data(kDataAddr + 0x24, {0x31, 0x32, 0x33}),
       kDataAddr + 0x2c, 0x33},
      {"WRITE_DATA of three dwords at an even dword", Packets().write_data(kDataAddr + 0x40, {0x41, 0x42, 0x43}),
       kDataAddr + 0x48, 0x43},
  };
  struct Bad {
    const char* name;
    std::vector<std::uint32_t> words;
    abi::Fault reason;
  };
  const std::vector<Bad> bads = {
      {"illegal opcode", {abi::make_header(static_cast<abi::Opcode>(0xee), 1)}, abi::Fault::IllegalOpcode},
      {"undefined flag bits", {abi::make_header(abi::Opcode::Nop, 1, 0x80)}, abi::Fault::ReservedBits},
      {"length below the minimum", {abi::make_header(abi::Opcode::Fence, 4), 0, 0, 0}, abi::Fault::BadLength},
      {"privileged packet", {abi::make_header(abi::Opcode::WritePhysical, 4), 0, 0, 0}, abi::Fault::PrivilegedPacket},
      {"past the end of the buffer", {abi::make_header(abi::Opcode::WriteData, 0x400), 0, 0, 0}, abi::Fault::BufferOverrun},
  };
  sim::SimConfig stalling;
  stalling.read_latency = 3;
  stalling.memory_ready_prob = 0.35;
  for (const bool stall : {false, true}) {
    for (const Prefix& pre : prefixes) {
      for (const Bad& bad : bads) {
        INFO((stall ? "stalling memory, " : "fast memory, ") << pre.name << ", then " << bad.name);
        RingHarness h(stall ? stalling : sim::SimConfig{});
        Packets p = pre.packets;
        const auto bad_offset = static_cast<std::uint32_t>(4 * p.words().size());
        for (const std::uint32_t w : bad.words) p.raw(w);
        p.write_data(kDataAddr + 0x400, {0xbad});
        h.push(p, 9);
        h.doorbell();
        const std::uint32_t status = h.wait_irq();
        REQUIRE(status & kIntFault);
        const FaultRecord f = read_fault(h);
        CHECK(f.reason == bad.reason);
        CHECK(f.ring_index == 0);
        CHECK(f.fence == 9);
        CHECK(f.addr == kBufferAddr + bad_offset);
        CHECK(f.detail == bad.words[0]);
        if (pre.check_addr != 0) CHECK(h.mem().read32(pre.check_addr) == pre.check_value);
        CHECK(h.mem().read32(kDataAddr + 0x400) == 0);
      }
    }
  }
}

TEST_CASE("a malformed ring entry is a fault", "[top][fault]") {
  RingHarness h;
  abi::RingEntry e{};
  e.buf_addr = kBufferAddr;
  e.fence = 3;
  SECTION("start after end") {
    e.start_offset = 8;
    e.end_offset = 4;
  }
  SECTION("misaligned offset") { e.end_offset = 6; }
  SECTION("misaligned buffer") {
    e.buf_addr = kBufferAddr + 2;
    e.end_offset = 4;
  }
  SECTION("undefined flag bits") {
    e.end_offset = 4;
    e.flags = 0x100;
  }
  h.push_entry(e);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  const FaultRecord f = read_fault(h);
  CHECK(f.reason == abi::Fault::BadRingEntry);
  CHECK(f.addr == kRingAddr);
  CHECK(f.fence == 3);
  expect_recovers(h);
}

TEST_CASE("a malformed ring entry read ahead behind a good one is the same fault, with its own fence", "[top][fault]") {
  // The second entry is read ahead while the first retires and starts from the read-ahead
  // register (StRingCheck), not from a fresh ring read: its fault record must not differ.
  RingHarness h;
  h.push(Packets().write_data(kDataAddr, {7}), 2);
  abi::RingEntry e{};
  e.buf_addr = kBufferAddr;
  e.fence = 3;
  e.start_offset = 8;
  e.end_offset = 4;
  h.push_entry(e);
  h.doorbell();
  std::uint32_t status = h.wait_irq();  // the good entry's completion may be reported first
  if (!(status & kIntFault)) status = h.wait_irq();
  REQUIRE(status & kIntFault);
  const FaultRecord f = read_fault(h);
  CHECK(f.reason == abi::Fault::BadRingEntry);
  CHECK(f.ring_index == 1);
  CHECK(f.addr == kRingAddr + sizeof(abi::RingEntry));
  CHECK(f.fence == 3);
  CHECK(h.mem().read32(kDataAddr) == 7);  // the good entry ran
  expect_recovers(h);
}

TEST_CASE("misaligned packet addresses are faults", "[top][fault]") {
  RingHarness h;
  Packets p;
  std::uint64_t bad = 0;
  SECTION("WRITE_DATA") {
    bad = kDataAddr + 2;
    p.write_data(bad, {1});
  }
  SECTION("64-bit FENCE") {
    bad = kDataAddr + 4;
    p.fence(bad, 1, abi::fence_flags::kValue64);
  }
  h.push(p, 11);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  const FaultRecord f = read_fault(h);
  CHECK(f.reason == abi::Fault::BadAlignment);
  CHECK(f.addr == bad);
  CHECK(h.mem().read64(kDataAddr) == 0);
  expect_recovers(h);
}

TEST_CASE("bus errors on reads and writes are faults", "[top][fault]") {
  RingHarness h;
  SECTION("reading the DMA buffer") {
    h.push(Packets().nop(8), 21);
    // The buffer is the first one the harness placed.
    h.dev().memory_port().inject_error(kBufferAddr, kBufferAddr + 0x1000, 2);
    h.doorbell();
    REQUIRE(h.wait_irq() & kIntFault);
    const FaultRecord f = read_fault(h);
    CHECK(f.reason == abi::Fault::BusError);
    CHECK(f.fence == 21);
    h.dev().memory_port().clear_errors();
  }
  SECTION("writing WRITE_DATA's destination") {
    h.dev().memory_port().inject_error(kDataAddr, kDataAddr + 0x100, 3);
    h.push(Packets().write_data(kDataAddr + 8, {1, 2}), 22);
    h.doorbell();
    REQUIRE(h.wait_irq() & kIntFault);
    const FaultRecord f = read_fault(h);
    CHECK(f.reason == abi::Fault::BusError);
    CHECK(f.addr == kDataAddr + 8);
    CHECK(f.fence == 22);
    h.dev().memory_port().clear_errors();
  }
  expect_recovers(h);
}

TEST_CASE("engine reset with reads in flight drains and recovers", "[top][reset]") {
  sim::SimConfig cfg;
  cfg.read_latency = 200;
  RingHarness h(cfg);
  h.push(Packets().nop(16384).nop(16384), 50);  // 128 KiB of NOPs
  h.doorbell();
  h.dev().step(600);
  REQUIRE(h.dev().memory_port().stats().reads_in_flight > 0);
  REQUIRE(h.reset_engine());
  CHECK(h.dev().memory_port().idle());
  CHECK(h.writeback().fence == 0);
  expect_recovers(h);
}
