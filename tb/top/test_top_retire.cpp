// Directed tests of retirement's commit point (sgpu_top through raw MMIO and host memory).
//
// The write-back record is written {reserved, head} first, the fence word last, each once every
// earlier write was acknowledged, and the entry retires exactly when the fence word's write is
// acknowledged OKAY. Anything that goes wrong before that (a bus error on a write of the
// submission or on either word of the record, the watchdog) faults the entry with its fence
// nowhere: not in the record, not in FENCE_DONE; RING_HEAD, FENCE_DONE and the record's fence keep
// the last retired entry's values and the fault record names the entry and an address that was
// set for it.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;
constexpr std::uint8_t kSlvErr = 2;
constexpr std::uint8_t kDecErr = 3;
constexpr std::uint64_t kHeadWord = kWritebackAddr + 8;  ///< {reserved, head}: written first
constexpr std::uint64_t kFenceWord = kWritebackAddr;     ///< the fence: written last

using Fault = RingHarness::Fault;

/// Retires one entry (a WRITE_DATA) with `fence`: the state every test starts from.
void retire_first(RingHarness& h, std::uint64_t fence) {
  h.push(Packets().write_data(kDataAddr, {0x11111111}), fence);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntDone);
  REQUIRE(h.writeback().fence == fence);
  REQUIRE(h.writeback().head == 1);
  REQUIRE(h.fence_done() == fence);
}

/// The entry at ring index 1 with `fence` faulted before its commit point: nothing says it retired.
void expect_not_retired(RingHarness& h, std::uint64_t previous, std::uint64_t fence) {
  CHECK(h.faulted());
  CHECK(h.fence_done() == previous);
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 1);
  CHECK(h.writeback().fence == previous);
  const Fault f = h.fault();
  CHECK(f.fence == fence);
  CHECK(f.ring_index == 1);
}

/// After the fault: engine reset, the same work again with the same fence, and it retires.
void expect_resubmission_retires(RingHarness& h, std::uint64_t fence) {
  h.dev().memory_port().clear_errors();
  REQUIRE(h.reset_engine());
  CHECK_FALSE(h.faulted());
  CHECK(h.fault().reason == abi::Fault::None);
  h.push(Packets().write_data(kDataAddr + 0x40, {0x22222222}), fence);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntDone);
  CHECK(h.fence_done() == fence);
  CHECK(h.writeback().fence == fence);
  CHECK(h.writeback().head == 1);
}

}  // namespace

TEST_CASE("a bus error on the head word of the write-back record faults the entry before its fence is written",
          "[top][retire][fault]") {
  const std::uint8_t resp = GENERATE(kSlvErr, kDecErr);
  INFO("response " << unsigned{resp});
  RingHarness h;
  retire_first(h, 10);
  h.dev().memory_port().inject_error(kHeadWord, kHeadWord + 8, resp);
  h.push(Packets().write_data(kDataAddr + 0x20, {0xabcdef01}), 11);
  h.doorbell();
  // The fault alone: the entry did not complete.
  REQUIRE(h.wait_irq() == kIntFault);
  expect_not_retired(h, 10, 11);
  const Fault f = h.fault();
  CHECK(f.reason == abi::Fault::BusError);
  CHECK(f.addr == kHeadWord);
  CHECK(f.detail == 0);
  // The submission's own write was acknowledged before the record was started; the failed head
  // word changed nothing, and the fence word was never issued (it would have landed: its word
  // answers OKAY).
  CHECK(h.mem().read32(kDataAddr + 0x20) == 0xabcdef01);
  CHECK(h.writeback().head == 1);
  CHECK(h.dev().memory_port().stats().write_error_bursts == 1);
  expect_resubmission_retires(h, 11);
}

TEST_CASE("a bus error on the fence word of the write-back record faults the entry, FENCE_DONE unchanged",
          "[top][retire][fault]") {
  const std::uint8_t resp = GENERATE(kSlvErr, kDecErr);
  INFO("response " << unsigned{resp});
  RingHarness h;
  retire_first(h, 20);
  h.dev().memory_port().inject_error(kFenceWord, kFenceWord + 8, resp);
  h.push(Packets().nop(3), 21);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntFault);
  expect_not_retired(h, 20, 21);
  const Fault f = h.fault();
  CHECK(f.reason == abi::Fault::BusError);
  CHECK(f.addr == kFenceWord);
  CHECK(f.detail == 0);
  // The head word went first and landed: the record's head says the entry was consumed (its
  // ring slot may be reused), its fence that it did not complete.
  CHECK(h.writeback().head == 2);
  expect_resubmission_retires(h, 21);
}

TEST_CASE("a failed write of the submission faults at retirement before either word of the record",
          "[top][retire][fault]") {
  RingHarness h;
  retire_first(h, 30);
  h.dev().memory_port().inject_error(kDataAddr + 0x100, kDataAddr + 0x108, kSlvErr);
  h.push(Packets().write_data(kDataAddr + 0x104, {5}).nop(), 31);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntFault);
  expect_not_retired(h, 30, 31);
  const Fault f = h.fault();
  CHECK(f.reason == abi::Fault::BusError);
  CHECK(f.addr == kDataAddr + 0x100);
  CHECK(h.writeback().head == 1);  // not even the head word was written
  expect_resubmission_retires(h, 31);
}

TEST_CASE("an error on the record of a later entry leaves the earlier retirements of the same doorbell intact",
          "[top][retire][fault]") {
  RingHarness h;
  retire_first(h, 40);
  h.push(Packets().nop(), 41);
  h.push(Packets().nop(), 42);
  h.push(Packets().nop(), 43);
  h.doorbell();
  // Fail the fence word once entry 42 has started: 41 retired, 42 must not, 43 never runs.
  REQUIRE(h.wait_fence(41));
  h.dev().memory_port().inject_error(kFenceWord, kFenceWord + 8, kDecErr);
  std::uint32_t status = 0;
  for (int i = 0; i < 8 && !(status & kIntFault); ++i) status |= h.wait_irq();
  REQUIRE(status & kIntFault);
  CHECK(h.fence_done() == 41);
  CHECK(h.writeback().fence == 41);
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 2);
  const Fault f = h.fault();
  CHECK(f.fence == 42);
  CHECK(f.ring_index == 2);
  CHECK(f.addr == kFenceWord);
}

// The watchdog counts the cycles without progress. While an entry retires the longest such
// stretch is a wait for write responses: the submission's writes, then the head word (the
// fence word is only issued once that one is acknowledged, and from its issue the watchdog does
// not count: its response alone decides). So with CP_WATCHDOG = N the entry retires for N at or
// above a threshold a little over the write latency, and faults WATCHDOG for every N below it,
// with nothing of its fence anywhere; there is no value between the two where the entry is
// reported faulted with its fence in memory.
TEST_CASE("watchdog values near the write latency: the entry retires or faults before its fence, never half",
          "[top][retire][watchdog]") {
  const bool with_write = GENERATE(false, true);
  INFO((with_write ? "an entry with a WRITE_DATA" : "a zero-length entry"));
  constexpr unsigned kWriteLatency = 40;
  sim::SimConfig cfg;
  cfg.read_latency = 4;  // reads are far quicker: only retirement can meet the watchdog
  cfg.write_latency = kWriteLatency;

  enum class Outcome { Retired, WatchdogBeforeFence };
  auto run = [&](std::uint32_t watchdog) {
    INFO("CP_WATCHDOG " << watchdog);
    RingHarness h(cfg);
    h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), watchdog);
    if (with_write) {
      h.push(Packets().write_data(kDataAddr, {1, 2}).nop(2), 7);
    } else {
      abi::RingEntry e{};
      e.buf_addr = kBufferAddr;
      e.fence = 7;
      h.push_entry(e);
    }
    h.doorbell();
    const std::uint32_t status = h.wait_irq();
    if (status == kIntDone) {
      CHECK_FALSE(h.faulted());
      CHECK(h.fence_done() == 7);
      CHECK(h.writeback().fence == 7);
      CHECK(h.writeback().head == 1);
      CHECK(h.reg(SGPU_REG(RING_HEAD)) == 1);
      return Outcome::Retired;
    }
    REQUIRE(status == kIntFault);
    const Fault f = h.fault();
    CHECK(f.reason == abi::Fault::Watchdog);
    CHECK(f.addr == kWritebackAddr);  // while retiring: WB_ADDR (never an unloaded register)
    CHECK(f.fence == 7);
    CHECK(f.ring_index == 0);
    CHECK(f.detail == 0);
    CHECK(h.fence_done() == 0);
    CHECK(h.reg(SGPU_REG(RING_HEAD)) == 0);
    CHECK(h.writeback().fence == 0);  // the fence word was never issued
    if (with_write) CHECK(h.mem().read32(kDataAddr + 4) == 2);
    // The engine recovers, and the same entry retires with the watchdog off.
    h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 0);
    REQUIRE(h.reset_engine());
    h.push(Packets().nop(), 7);
    h.doorbell();
    REQUIRE(h.wait_irq() == kIntDone);
    CHECK(h.writeback().fence == 7);
    return Outcome::WatchdogBeforeFence;
  };

  // Sweep across the write latency; the outcome must switch exactly once, from fault to retire.
  std::vector<Outcome> outcomes;
  const std::uint32_t lo = kWriteLatency - 8, hi = kWriteLatency + 16;
  for (std::uint32_t n = lo; n <= hi; ++n) outcomes.push_back(run(n));
  std::uint32_t threshold = 0;
  for (std::uint32_t n = lo; n <= hi; ++n) {
    if (outcomes[n - lo] == Outcome::Retired) {
      threshold = n;
      break;
    }
  }
  INFO("threshold " << threshold);
  REQUIRE(threshold > lo);  // both outcomes seen
  for (std::uint32_t n = lo; n <= hi; ++n) {
    INFO("CP_WATCHDOG " << n);
    CHECK((outcomes[n - lo] == Outcome::Retired) == (n >= threshold));
  }
  // Just below, at and just above the write latency the wait for the head word's response
  // (at least the latency, plus a few cycles of the write path: the record's page translated
  // through the arbiter, then the write) is too long: the watchdog fires.
  CHECK(outcomes[kWriteLatency - 1 - lo] == Outcome::WatchdogBeforeFence);
  CHECK(outcomes[kWriteLatency - lo] == Outcome::WatchdogBeforeFence);
  CHECK(outcomes[kWriteLatency + 1 - lo] == Outcome::WatchdogBeforeFence);
  CHECK(threshold > kWriteLatency + 1);
  CHECK(threshold <= kWriteLatency + 9);
}

TEST_CASE("the watchdog's fault record names WB_ADDR for a zero-length entry, also the first after reset",
          "[top][retire][watchdog]") {
  // A zero-length entry never started a buffer stream: the stream position holds nothing of it.
  sim::SimConfig cfg;
  cfg.read_latency = 4;
  cfg.write_latency = 60;
  for (const std::uint64_t seed : {1, 2, 3}) {
    cfg.seed = seed;  // Verilator's initial values of the registers without reset differ
    RingHarness h(cfg);
    h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 20);
    abi::RingEntry e{};
    e.buf_addr = 0xdead'bee0;
    e.start_offset = e.end_offset = 0x40;
    e.fence = 3;
    h.push_entry(e);
    h.doorbell();
    REQUIRE(h.wait_irq() == kIntFault);
    const Fault f = h.fault();
    CHECK(f.reason == abi::Fault::Watchdog);
    CHECK(f.addr == kWritebackAddr);
    CHECK(f.fence == 3);
    CHECK(f.detail == 0);
  }
}

// An engine reset is not a fault, but it can come while an entry retires. It drains the writes in
// flight like any other: before the fence word is issued the entry has not retired (the reset
// discards it), once the fence word is issued its OKAY response retires it (FENCE_DONE and the
// record agree; the reset clears the head anyway).
TEST_CASE("an engine reset while an entry retires: nothing retired before the fence write, the entry did after it",
          "[top][retire][reset]") {
  const bool fence_issued = GENERATE(false, true);
  INFO((fence_issued ? "reset with the fence word in flight" : "reset with the head word in flight"));
  sim::SimConfig cfg;
  cfg.read_latency = 4;
  cfg.write_latency = 100;  // the memory takes a write's data at once, its response comes 100 cycles later
  RingHarness h(cfg);
  retire_first(h, 50);
  abi::RingEntry e{};
  e.buf_addr = kBufferAddr;
  e.fence = 51;
  h.push_entry(e);
  h.doorbell();
  bool reached = false;
  for (int i = 0; i < 4000 && !reached; ++i) {
    const abi::Writeback wb = h.writeback();
    reached = fence_issued ? wb.fence == 51 : wb.head == 2;
    if (!reached) h.dev().step(1);
  }
  REQUIRE(reached);
  CHECK(h.fence_done() == 50);  // its response has not come yet
  REQUIRE(h.reset_engine());
  CHECK_FALSE(h.faulted());
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 0);
  if (fence_issued) {
    CHECK(h.fence_done() == 51);
    CHECK(h.writeback().fence == 51);
    CHECK(h.reg(SGPU_REG(INT_STATUS)) & kIntDone);
  } else {
    CHECK(h.fence_done() == 50);
    CHECK(h.writeback().fence == 50);  // the fence word was never issued
    CHECK(h.writeback().head == 2);
  }
}
