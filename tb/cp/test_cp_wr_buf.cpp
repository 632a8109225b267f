// The command processor's write buffer (sgpu_cp_wr_buf) alone.
//
// A two-entry register slice: the CP's ready comes from its own registers, the translator sees
// the oldest write from a register, one write per cycle flows, and a flush (a refused or failed
// write) drops everything held and the write offered in that cycle. Random offers, stalls and
// flushes against a queue of at most two, cycle for cycle; then the rates and the registered
// ready on their own.
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>

#include <verilated.h>

#include "Vsgpu_cp_wr_buf.h"
#include "common/block_harness.hpp"
#include "common/test_seed.hpp"

namespace {

struct Buffer : sgpu::tb::BlockHarness<Vsgpu_cp_wr_buf> {
  Buffer() : BlockHarness("wr_buf") {
    dut->flush_i = 0;
    dut->in_valid_i = 0;
    dut->in_i = 0;
    dut->out_ready_i = 0;
    reset();
  }

  void drive(bool in_valid, std::uint32_t data, bool out_ready, bool flush) {
    dut->in_valid_i = in_valid;
    dut->in_i = data;
    dut->out_ready_i = out_ready;
    dut->flush_i = flush;
    dut->eval();
  }
};

// What the buffer must do: a queue of at most two writes, the ready its room, the head taken
// before the offer joins, a flush empties it and refuses the offer.
struct Reference {
  std::deque<std::uint32_t> q;
  bool in_ready() const { return q.size() < 2; }
  bool out_valid() const { return !q.empty(); }
  void clock(bool in_valid, std::uint32_t data, bool out_ready, bool flush) {
    if (flush) {
      q.clear();
      return;
    }
    const bool push = in_valid && in_ready();
    if (out_valid() && out_ready) q.pop_front();
    if (push) q.push_back(data);
  }
};

}  // namespace

TEST_CASE("the write buffer keeps the order, holds at most two and drops everything on a flush",
          "[cp][wr_buf]") {
  const std::uint64_t seed = sgpu::tb::test_seed(18);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // How often the translator stalls (none, some, most) and how often a write faults.
  const unsigned stall_in_8 = GENERATE(0u, 3u, 7u);
  CAPTURE(stall_in_8);
  Buffer b;
  Reference ref;
  std::uint32_t next = 1;
  unsigned taken = 0, flushed_offers = 0, full_cycles = 0, flushes_with_two = 0;
  for (unsigned cycle = 0; cycle < 20000; ++cycle) {
    const bool in_valid = rng() % 4 != 0;
    const bool out_ready = rng() % 8 >= stall_in_8;
    const bool flush = rng() % 64 == 0;
    const std::uint32_t data = next;

    // Outputs before this cycle's inputs matter: the ready and the head are registers.
    b.drive(false, 0, false, false);
    const bool ready_before = b.dut->in_ready_o;
    b.drive(in_valid, data, out_ready, flush);
    INFO("cycle " << cycle << " in_valid " << in_valid << " out_ready " << out_ready << " flush " << flush
                  << " held " << ref.q.size());
    REQUIRE(static_cast<bool>(b.dut->in_ready_o) == ready_before);
    REQUIRE(static_cast<bool>(b.dut->in_ready_o) == ref.in_ready());
    REQUIRE(static_cast<bool>(b.dut->out_valid_o) == ref.out_valid());
    REQUIRE(static_cast<bool>(b.dut->empty_o) == ref.q.empty());
    if (ref.out_valid()) REQUIRE(b.dut->out_o == ref.q.front());

    const bool push = in_valid && ref.in_ready();
    if (push) ++next;
    if (push && flush) ++flushed_offers;
    if (ref.out_valid() && out_ready && !flush) ++taken;
    if (!ref.in_ready()) ++full_cycles;
    if (flush && ref.q.size() == 2) ++flushes_with_two;
    b.clock();
    ref.clock(in_valid, data, out_ready, flush);
  }
  // The stimulus reached the cases that matter.
  CHECK(taken > 2000);
  CHECK(flushed_offers > 30);
  if (stall_in_8 != 0) {
    CHECK(full_cycles > 500);
    CHECK(flushes_with_two > 20);
  }
}

TEST_CASE("the write buffer passes one write per cycle, a cycle later, and refills after a stall",
          "[cp][wr_buf]") {
  Buffer b;
  // Offered every cycle and taken every cycle: each write leaves the cycle after it came, the
  // ready never falls.
  for (std::uint32_t i = 1; i <= 100; ++i) {
    b.drive(true, i, true, false);
    REQUIRE(b.dut->in_ready_o);
    if (i == 1) {
      REQUIRE_FALSE(b.dut->out_valid_o);
    } else {
      REQUIRE(b.dut->out_valid_o);
      REQUIRE(b.dut->out_o == i - 1);
    }
    b.clock();
  }
  // One cycle of stall: the write of that cycle goes into the second entry and the ready falls for
  // one cycle; then one write per cycle again, none lost.
  b.drive(true, 101, false, false);
  REQUIRE(b.dut->in_ready_o);
  REQUIRE(b.dut->out_o == 100);
  b.clock();
  b.drive(true, 102, true, false);
  REQUIRE_FALSE(b.dut->in_ready_o);  // full: 100 and 101
  REQUIRE(b.dut->out_o == 100);
  b.clock();
  b.drive(true, 102, true, false);
  REQUIRE(b.dut->in_ready_o);
  REQUIRE(b.dut->out_o == 101);
  b.clock();
  b.drive(false, 0, true, false);
  REQUIRE(b.dut->out_o == 102);
  REQUIRE_FALSE(b.dut->empty_o);
  b.clock();
  b.drive(false, 0, true, false);
  REQUIRE_FALSE(b.dut->out_valid_o);
  REQUIRE(b.dut->empty_o);
}

TEST_CASE("a flush drops the held writes and the one offered with it, never the next", "[cp][wr_buf]") {
  Buffer b;
  b.drive(true, 7, false, false);
  b.clock();
  b.drive(true, 8, false, false);
  b.clock();
  // Full: 7 at the head (refused, say), 8 behind it. The flush drops both; an offer in that cycle
  // is not taken (the ready was high only if there was room, and nothing joins a flush).
  b.drive(false, 0, false, true);
  REQUIRE_FALSE(b.dut->in_ready_o);
  REQUIRE(b.dut->out_o == 7);
  b.clock();
  b.drive(true, 9, false, true);  // offered in the cycle of a flush: dropped
  REQUIRE(b.dut->in_ready_o);
  REQUIRE(b.dut->empty_o);
  b.clock();
  b.drive(true, 10, true, false);
  REQUIRE(b.dut->empty_o);
  b.clock();
  b.drive(false, 0, true, false);
  REQUIRE(b.dut->out_valid_o);
  REQUIRE(b.dut->out_o == 10);
  b.clock();
  b.drive(false, 0, true, false);
  REQUIRE(b.dut->empty_o);
}
