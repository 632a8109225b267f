// The command processor's dword window (sgpu_cp_dwords, 64-bit beats) alone.
//
// Beats of one or two dwords (as the fetch engine's packed stream ends a request) go in; a
// consumer takes nothing, the head dword, or the head pair, at random. Every dword comes out
// once, in order; a pair is only there when two are; a steady consumer of pairs empties a beat
// per cycle and one of single dwords a dword per cycle (no bubble at beat boundaries); clear
// drops what was not taken.
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <memory>
#include <random>

#include <verilated.h>

#include "Vsgpu_cp_dwords.h"
#include "common/block_harness.hpp"
#include "common/test_seed.hpp"

namespace {

struct Window : sgpu::tb::BlockHarness<Vsgpu_cp_dwords> {
  Window() : BlockHarness("dwords") {
    idle_inputs();
    reset();
  }

  void idle_inputs() {
    dut->clear_i = 0;
    dut->in_valid_i = 0;
    dut->in_data_i = 0;
    dut->in_keep_i = 0;
    dut->out_ready_i = 0;
    dut->out_two_i = 0;
  }

  /// Settles the inputs set so far (outputs read after this belong to this cycle).
  void settle() { dut->eval(); }
};

}  // namespace

TEST_CASE("dwords come out once and in order, one or two at a time", "[cp][dwords]") {
  const std::uint64_t seed = sgpu::tb::test_seed(7);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  Window w;
  std::deque<std::uint32_t> expected;
  std::uint32_t value = 1;
  std::uint64_t taken = 0;
  unsigned pending_count = 0;
  std::uint64_t beat_data = 0;
  bool offering = false;

  for (int cycle = 0; cycle < 20000; ++cycle) {
    w.idle_inputs();
    if (!offering && (rng() % 4) != 0) {
      pending_count = (rng() % 3 == 0) ? 1 : 2;
      beat_data = value;
      if (pending_count == 2) beat_data |= std::uint64_t{value + 1} << 32;
      offering = true;
    }
    if (offering) {
      w.dut->in_valid_i = 1;
      w.dut->in_data_i = beat_data | (pending_count == 1 ? std::uint64_t{0xdeadbeef} << 32 : 0);
      w.dut->in_keep_i = pending_count == 2 ? 0xff : 0x0f;
    }
    const unsigned choice = rng() % 4;  // 0: nothing, 1: one, 2-3: a pair if there is one
    w.settle();
    const bool valid = w.dut->out_valid_o;
    const bool valid2 = w.dut->out_valid2_o;
    REQUIRE(valid == !expected.empty());
    REQUIRE(valid2 == (expected.size() >= 2));
    if (valid) REQUIRE(w.dut->out_dword_o == expected[0]);
    if (valid2) REQUIRE(w.dut->out_dword2_o == expected[1]);
    unsigned take = 0;
    if (valid && choice == 1) take = 1;
    if (valid2 && choice >= 2) take = 2;
    if (valid && !valid2 && choice >= 2) take = 1;
    w.dut->out_ready_i = take != 0;
    w.dut->out_two_i = take == 2;
    w.settle();
    const bool beat_taken = offering && w.dut->in_ready_o;
    // Room for a whole beat before this cycle's dwords leave (the ready does not wait for the
    // taker): the window holds two beats and two dwords.
    REQUIRE(w.dut->in_ready_o == (expected.size() + 2 <= 6));
    w.clock();
    for (unsigned i = 0; i < take; ++i) expected.pop_front();
    taken += take;
    if (beat_taken) {
      expected.push_back(value);
      if (pending_count == 2) expected.push_back(value + 1);
      value += pending_count;
      offering = false;
    }
  }
  CHECK(taken > 10000);
}

TEST_CASE("dwords keep up with a beat per cycle: pairs at two and singles at one per cycle", "[cp][dwords]") {
  for (const unsigned per_cycle : {1u, 2u}) {
    CAPTURE(per_cycle);
    Window w;
    std::uint32_t value = 1, expect = 1;
    std::uint64_t beats_in = 0, dwords_out = 0;
    const int cycles = 1000;
    for (int cycle = 0; cycle < cycles; ++cycle) {
      w.idle_inputs();
      w.dut->in_valid_i = 1;
      w.dut->in_data_i = value | std::uint64_t{value + 1} << 32;
      w.dut->in_keep_i = 0xff;
      w.settle();
      unsigned take = 0;
      if (per_cycle == 2 && w.dut->out_valid2_o) take = 2;
      else if (w.dut->out_valid_o) take = 1;
      w.dut->out_ready_i = take != 0;
      w.dut->out_two_i = take == 2;
      if (take >= 1) REQUIRE(w.dut->out_dword_o == expect);
      if (take == 2) REQUIRE(w.dut->out_dword2_o == expect + 1);
      w.settle();
      const bool in = w.dut->in_ready_o;
      w.clock();
      expect += take;
      dwords_out += take;
      if (in) {
        value += 2;
        ++beats_in;
      }
    }
    // After the first beat's cycle, dwords leave at the consumer's full rate.
    CHECK(dwords_out >= static_cast<std::uint64_t>(per_cycle) * (cycles - 2));
    CHECK(beats_in * 2 >= dwords_out);
  }
}

TEST_CASE("dwords: clear drops every dword not taken", "[cp][dwords]") {
  Window w;
  for (int beat = 0; beat < 3; ++beat) {
    w.idle_inputs();
    w.dut->in_valid_i = 1;
    w.dut->in_data_i = 0x0000000200000001ull + beat * 0x0000000200000002ull;
    w.dut->in_keep_i = 0xff;
    w.settle();
    REQUIRE(w.dut->in_ready_o);
    w.clock();
  }
  w.idle_inputs();
  w.settle();
  REQUIRE(w.dut->out_valid2_o);
  // Full: a fourth beat waits, even while dwords leave (ready never waits for the taker).
  w.dut->out_ready_i = 1;
  w.dut->out_two_i = 1;
  w.dut->in_valid_i = 1;
  w.dut->in_keep_i = 0xff;
  w.settle();
  CHECK_FALSE(w.dut->in_ready_o);
  w.dut->in_valid_i = 0;
  w.dut->out_ready_i = 0;
  w.dut->out_two_i = 0;
  w.dut->clear_i = 1;
  w.settle();
  w.clock();
  w.idle_inputs();
  w.settle();
  CHECK_FALSE(w.dut->out_valid_o);
  CHECK_FALSE(w.dut->out_valid2_o);
  // A beat after the clear is the head.
  w.dut->in_valid_i = 1;
  w.dut->in_data_i = 0x0000002a00000029ull;
  w.dut->in_keep_i = 0xff;
  w.settle();
  REQUIRE(w.dut->in_ready_o);
  w.clock();
  w.idle_inputs();
  w.settle();
  CHECK(w.dut->out_dword_o == 0x29u);
  CHECK(w.dut->out_dword2_o == 0x2au);
}
