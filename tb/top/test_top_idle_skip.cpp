// Idle skipping of the fast model (tb/sim/idle_skip.hpp): a workload of idle gaps, WAIT_MEM
// polls, a watchdog expiry, TIMESTAMPs and cycle-counter reads gives the same cycles and the
// same register and memory values with skipping off, on, and verified cycle by cycle; and it is
// off where it cannot be exact.
#include <catch2/catch.hpp>

#include <stdexcept>
#include <vector>

#include <verilated.h>

#include "Vsgpu_top_fast.h"
#include "common/axi_memory.hpp"
#include "sim/idle_skip.hpp"
#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;
constexpr std::uint64_t kSem = kDataAddr + 0x1000;

sim::SimConfig fast(sim::IdleSkip skip) {
  sim::SimConfig c;
  c.model = sim::SimModel::Fast;
  c.idle_skip = skip;
  return c;
}

struct Observed {
  std::vector<std::uint64_t> values;  // cycles, registers and memory words, in the order taken
  std::uint64_t skipped = 0;
};

// Idle gaps, a WAIT_MEM that polls (long interval) until the watchdog expires, recovery, a
// WAIT_MEM released by the host, TIMESTAMPs after each gap. Everything the host can see is
// recorded.
Observed run_gaps_and_waits(sim::SimConfig config) {
  RingHarness h(config);
  Observed o;
  auto note = [&](std::uint64_t v) { o.values.push_back(v); };
  auto cycle_regs = [&] { note(h.reg64(SGPU_REG(CYCLE_LO), SGPU_REG(CYCLE_HI))); };

  h.dev().step(5000);  // idle
  note(h.dev().cycle());
  cycle_regs();
  h.push(Packets().timestamp(kDataAddr), 1);
  h.doorbell();
  REQUIRE(h.wait_irq() == kIntDone);
  note(h.mem().read64(kDataAddr));

  // A WAIT_MEM that never passes: 300-cycle poll interval, the watchdog at 20000 cycles.
  h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 20000);
  h.mem().write32(kSem, 1);
  h.push(Packets().wait_mem(kSem, abi::WaitMemFunc::Eq, 2, 0xffffffffu, 300), 2);
  h.doorbell();
  h.dev().step(7777);  // in the middle of the polls
  cycle_regs();
  note(h.reg(SGPU_REG(STATUS)));
  REQUIRE(h.wait_irq(100000) & kIntFault);
  note(h.dev().cycle());
  const auto f = h.fault();
  note(static_cast<std::uint64_t>(f.reason));
  note(f.addr);
  note(f.detail);
  CHECK(f.reason == abi::Fault::Watchdog);
  REQUIRE(h.reset_engine());
  note(h.dev().cycle());

  // A WAIT_MEM the host releases after a gap; a TIMESTAMP behind it.
  h.dev().mmio_write32(SGPU_REG(CP_WATCHDOG), 0);
  h.mem().write32(kSem, 0);
  h.push(Packets().wait_mem(kSem, abi::WaitMemFunc::Eq, 7, 0xffffffffu, 100).timestamp(kDataAddr + 8), 3);
  h.doorbell();
  h.dev().step(3000);
  h.mem().write32(kSem, 7);
  REQUIRE(h.wait_irq() == kIntDone);
  note(h.dev().cycle());
  note(h.mem().read64(kDataAddr + 8));
  h.dev().step(12345);  // idle again
  note(h.dev().cycle());
  cycle_regs();
  o.skipped = h.dev().skipped_cycles();
  return o;
}

// The copy engine's write streams: FILLs (aligned, at an odd offset, lengths not a multiple of
// the bus), a FILL_RECT of odd width with a pitch, a COPY in between and TIMESTAMPs; every
// destination byte and the cycle counts recorded. The AXI checker runs (it sees every replayed beat).
Observed run_write_streams(sim::SimConfig config) {
  config.check_axi = true;
  RingHarness h(config);
  Observed o;
  for (std::uint32_t i = 0; i < 0x3000; i += 4) h.mem().write32(kDataAddr + 0x40000 + i, i * 0x01010101u + 7);
  h.push(Packets()
             .fill(kDataAddr, 0x4000, 0xA5A5A5A5u)
             .fill(kDataAddr + 0x8003, 0x2FF1, 0x01020304u)
             .timestamp(kDataAddr + 0x20000)
             .copy(kDataAddr + 0x40000, kDataAddr + 0x50005, 0x2FFF)
             .fill_rect(kDataAddr + 0x60004, 333, 7, 0x1000, 0xCAFEF00Du)
             .timestamp(kDataAddr + 0x20008),
         1);
  h.doorbell();
  REQUIRE(h.wait_irq(400000) == kIntDone);
  o.values.push_back(h.dev().cycle());
  for (std::uint64_t a = kDataAddr; a < kDataAddr + 0x68000; a += 8) o.values.push_back(h.mem().read64(a));
  o.skipped = h.dev().skipped_cycles();
  return o;
}

}  // namespace

TEST_CASE("idle skipping: the copy engine's write streams (FILL, FILL_RECT) are skipped cycle-exactly", "[top][idle_skip]") {
  const Observed off = run_write_streams(fast(sim::IdleSkip::Off));
  const Observed on = run_write_streams(fast(sim::IdleSkip::On));
  const Observed verify = run_write_streams(fast(sim::IdleSkip::Verify));
  CHECK(off.skipped == 0);
  CHECK(on.skipped > 0x4000 / 8 / 2);  // at least half of the first FILL's beats
  CHECK(verify.skipped == on.skipped);
  CHECK(on.values == off.values);
  CHECK(verify.values == off.values);
}

TEST_CASE("idle skipping: gaps, polls, a watchdog expiry and timestamps are cycle-exact", "[top][idle_skip]") {
  const Observed off = run_gaps_and_waits(fast(sim::IdleSkip::Off));
  const Observed on = run_gaps_and_waits(fast(sim::IdleSkip::On));
  const Observed verify = run_gaps_and_waits(fast(sim::IdleSkip::Verify));  // a SimError on any difference
  CHECK(off.skipped == 0);
  CHECK(on.skipped > 20000);  // most of the gaps and the polls
  CHECK(verify.skipped == on.skipped);
  CHECK(on.values == off.values);
  CHECK(verify.values == off.values);
}

TEST_CASE("idle skipping never runs past the cycles the host asked for", "[top][idle_skip]") {
  RingHarness h(fast(sim::IdleSkip::On));
  for (std::uint64_t n : {1u, 7u, 8u, 9u, 100u, 4096u, 100000u}) {
    const std::uint64_t c0 = h.dev().cycle();
    h.dev().step(n);
    CHECK(h.dev().cycle() == c0 + n);
  }
  CHECK(h.dev().skipped_cycles() > 90000);
  const std::uint64_t c0 = h.dev().cycle();
  CHECK_FALSE(h.dev().run_until_irq(54321));  // nothing raises the line
  CHECK(h.dev().cycle() == c0 + 54321);
}

TEST_CASE("idle skipping is off for the checked model and under random memory stalls", "[top][idle_skip]") {
  SECTION("the checked model simulates every cycle (its assertions and waveform need them)") {
    sim::SimConfig c = fast(sim::IdleSkip::On);
    c.model = sim::SimModel::Checked;
    RingHarness h(c);
    h.dev().step(10000);
    CHECK(h.dev().skipped_cycles() == 0);
  }
  SECTION("a memory that stalls at random draws a number every cycle: nothing is skipped, the result is the same") {
    sim::SimConfig c = fast(sim::IdleSkip::On);
    c.memory_ready_prob = 0.8;
    const Observed on = run_gaps_and_waits(c);
    c.idle_skip = sim::IdleSkip::Off;
    const Observed off = run_gaps_and_waits(c);
    CHECK(on.skipped == 0);
    CHECK(on.values == off.values);
  }
}

TEST_CASE("idle skipping refuses a skip it has not proved", "[top][idle_skip]") {
  SECTION("the memory model: not past a response falling due; the response then comes on time") {
    HostMemory mem;
    AxiMemoryModel::Config c;
    c.read_latency = 16;
    AxiMemoryModel skipped(mem, c), ticked(mem, c);
    AxiManagerOut ar;
    ar.arvalid = true;
    ar.araddr = 0x1000;
    ar.arsize = 3;
    ar.arburst = kAxiBurstIncr;
    ar.rready = true;
    AxiManagerOut idle;
    idle.rready = true;
    for (AxiMemoryModel* m : {&skipped, &ticked}) m->tick(ar);
    // Accepted at cycle 0, so ready at cycle 16: the tick from 15 to 16 raises rvalid; the 14
    // ticks before it change nothing.
    REQUIRE(skipped.quiet_cycles() == 14);
    CHECK_THROWS_AS(skipped.skip(15), std::logic_error);
    skipped.skip(14);
    for (int i = 0; i < 14; ++i) ticked.tick(idle);
    CHECK(skipped.stats().cycles == ticked.stats().cycles);
    CHECK_FALSE(skipped.outputs().rvalid);
    skipped.tick(idle);
    ticked.tick(idle);
    CHECK(skipped.outputs().rvalid);
    CHECK(ticked.outputs().rvalid);
    CHECK(skipped.quiet_cycles() == 0);
  }
  SECTION("the model side: no skip without a verification tick, no state of another size") {
    VerilatedContext context;
    Vsgpu_top_fast top(&context);
    sim::FastIdleSkip skipper(top);
    CHECK(skipper.window() == 0);
    CHECK_THROWS_AS(skipper.skip(1), std::logic_error);
    CHECK_THROWS_AS(skipper.restore(std::vector<unsigned char>(3)), std::invalid_argument);
    CHECK(skipper.first_difference(skipper.state()) == sim::FastIdleSkip::npos);
    top.final();
  }
}
