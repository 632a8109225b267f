// The register block's AXI4-Lite front end (sgpu_regs_axil) alone, against a model of the
// generated block's passthrough interface: a register file that takes a request unless it is a
// write in the cycle after a read (PeakRDL holds it back so the two acknowledgements do not meet),
// acknowledges a write in the cycle it takes it and a read a cycle later (--rt-read-fanin), and
// answers an unmapped word with an error.
//
// A master with independent AW, W and AR streams, random gaps and random B/R back-pressure runs
// against it: every request reaches the block once, with its address, data and strobes, in the
// order of its channel; every response comes back on its channel in order with the block's data
// and error; the request is held while the block stalls it; and the front end never has more
// requests outstanding than its response FIFO holds.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <random>

#include <verilated.h>

#include "Vsgpu_regs_axil.h"
#include "common/block_harness.hpp"
#include "common/test_seed.hpp"

namespace {

constexpr unsigned kWords = 1024;        // the 4 KiB map
constexpr unsigned kUnmappedFrom = 768;  // words at or above answer with an error
constexpr unsigned kMaxPending = SGPU_REGS_AXIL_MAX_PENDING;  // the model's MaxPending (CMake)

std::uint32_t biten(unsigned strb) {
  std::uint32_t m = 0;
  for (unsigned i = 0; i < 4; ++i) {
    if (strb & (1u << i)) m |= 0xffu << (8 * i);
  }
  return m;
}

struct Write {
  std::uint32_t word, data;
  unsigned strb;
};

// The generated block as its passthrough interface behaves.
struct Block {
  std::array<std::uint32_t, kWords> regs{};
  bool stall_wr = false;      // a read was taken last cycle
  bool rd_pending = false;    // its acknowledgement is due this cycle
  std::uint32_t rd_data = 0;
  bool rd_err = false;
};

struct Front : sgpu::tb::BlockHarness<Vsgpu_regs_axil> {
  Front() : BlockHarness("regs_axil") {
    dut->s_axil_awvalid = 0;
    dut->s_axil_wvalid = 0;
    dut->s_axil_arvalid = 0;
    dut->s_axil_bready = 0;
    dut->s_axil_rready = 0;
    dut->cpuif_req_stall_wr_i = 0;
    dut->cpuif_req_stall_rd_i = 0;
    dut->cpuif_rd_ack_i = 0;
    dut->cpuif_rd_err_i = 0;
    dut->cpuif_rd_data_i = 0;
    dut->cpuif_wr_ack_i = 0;
    dut->cpuif_wr_err_i = 0;
    reset();
  }
};

}  // namespace

TEST_CASE("the AXI4-Lite front end: interleaved reads and writes reach the block once each, in order, and answer in order",
          "[regs][axil]") {
  const std::uint64_t seed = sgpu::tb::test_seed(14);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  // How often the master leaves a channel idle, and how often it holds B/R back (eighths).
  const unsigned gap_in_8 = GENERATE(0u, 4u);
  const unsigned stall_in_8 = GENERATE(0u, 3u, 7u);
  CAPTURE(gap_in_8, stall_in_8);

  Front f;
  auto& d = *f.dut;
  Block blk;

  // The master: requests it still has to present, and what it expects back.
  std::deque<std::uint32_t> ar_todo;
  std::deque<std::uint32_t> aw_todo;
  std::deque<Write> w_todo;
  std::deque<std::uint32_t> reads_sent, aw_sent;  // taken by the front end, not yet by the block
  std::deque<Write> w_sent;
  unsigned reads_done = 0, writes_done = 0, outstanding = 0, most_outstanding = 0;
  unsigned held_checks = 0;

  // Reads are checked against the block model's answers, which follow its own order of taking
  // requests: the expected R data is recorded as the model acknowledges each read.
  std::deque<std::pair<std::uint32_t, bool>> r_expected;
  std::deque<bool> b_expected;

  const unsigned kAccesses = 3000;
  for (unsigned i = 0; i < kAccesses; ++i) {
    const std::uint32_t word = static_cast<std::uint32_t>(rng() % (kWords + 64)) % kWords;
    if (rng() % 2) {
      ar_todo.push_back(word);
    } else {
      const Write w{word, static_cast<std::uint32_t>(rng()), static_cast<unsigned>(rng() % 16)};
      aw_todo.push_back(word);
      w_todo.push_back(w);
    }
  }
  const unsigned reads_total = static_cast<unsigned>(ar_todo.size());
  const unsigned writes_total = static_cast<unsigned>(aw_todo.size());

  bool prev_req = false, prev_wr = false;
  std::uint32_t prev_addr = 0, prev_data = 0, prev_biten = 0;
  bool prev_taken = true;

  for (unsigned cycle = 0; cycle < 200000 && (reads_done < reads_total || writes_done < writes_total); ++cycle) {
    // The master's channels for this cycle: a valid, once raised, stays until its handshake.
    if (!d.s_axil_arvalid && !ar_todo.empty() && rng() % 8 >= gap_in_8) {
      d.s_axil_arvalid = 1;
      d.s_axil_araddr = static_cast<std::uint16_t>(ar_todo.front() << 2);
    }
    if (!d.s_axil_awvalid && !aw_todo.empty() && rng() % 8 >= gap_in_8) {
      d.s_axil_awvalid = 1;
      d.s_axil_awaddr = static_cast<std::uint16_t>((aw_todo.front() << 2) | (rng() % 4));
    }
    if (!d.s_axil_wvalid && !w_todo.empty() && rng() % 8 >= gap_in_8) {
      d.s_axil_wvalid = 1;
      d.s_axil_wdata = w_todo.front().data;
      d.s_axil_wstrb = static_cast<std::uint8_t>(w_todo.front().strb);
    }
    d.s_axil_bready = rng() % 8 >= stall_in_8;
    d.s_axil_rready = rng() % 8 >= stall_in_8;
    d.cpuif_req_stall_wr_i = blk.stall_wr;
    d.cpuif_req_stall_rd_i = 0;
    d.cpuif_rd_ack_i = blk.rd_pending;
    d.cpuif_rd_data_i = blk.rd_data;
    d.cpuif_rd_err_i = blk.rd_err;
    d.cpuif_wr_ack_i = 0;
    d.cpuif_wr_err_i = 0;
    d.eval();

    // The block: a write is taken (and acknowledged) now unless stalled; a read is taken now and
    // acknowledged next cycle.
    const bool req = d.cpuif_req_o;
    const bool is_wr = d.cpuif_req_is_wr_o;
    const std::uint32_t addr = d.cpuif_addr_o;
    // A request that was not taken is offered again unchanged.
    if (prev_req && !prev_taken) {
      REQUIRE(req);
      REQUIRE(is_wr == prev_wr);
      REQUIRE(addr == prev_addr);
      if (is_wr) {
        REQUIRE(d.cpuif_wr_data_o == prev_data);
        REQUIRE(d.cpuif_wr_biten_o == prev_biten);
      }
      ++held_checks;
    }
    bool taken = false, next_rd_pending = false, next_stall = false;
    std::uint32_t next_rd_data = 0;
    bool next_rd_err = false;
    if (req) {
      REQUIRE((addr & 3u) == 0);
      const std::uint32_t w = addr >> 2;
      const bool err = w >= kUnmappedFrom;
      if (is_wr && !blk.stall_wr) {
        taken = true;
        if (!err) blk.regs[w] = (blk.regs[w] & ~d.cpuif_wr_biten_o) | (d.cpuif_wr_data_o & d.cpuif_wr_biten_o);
        // The front end writes whole words with the strobes as bit enables, each address with
        // the data that came in the same position on W.
        REQUIRE(!aw_sent.empty());
        REQUIRE(!w_sent.empty());
        CHECK(aw_sent.front() == w);
        CHECK(w_sent.front().data == d.cpuif_wr_data_o);
        CHECK(biten(w_sent.front().strb) == d.cpuif_wr_biten_o);
        aw_sent.pop_front();
        w_sent.pop_front();
        d.cpuif_wr_ack_i = 1;
        d.cpuif_wr_err_i = err;
        b_expected.push_back(err);
      } else if (!is_wr) {
        taken = true;
        REQUIRE(!reads_sent.empty());
        CHECK(reads_sent.front() == w);
        reads_sent.pop_front();
        next_rd_pending = true;
        next_rd_data = err ? 0 : blk.regs[w];
        next_rd_err = err;
        next_stall = true;
      }
    }
    // PeakRDL never acknowledges a read and a write in one cycle: the stall guarantees it.
    REQUIRE(!(d.cpuif_wr_ack_i && d.cpuif_rd_ack_i));
    if (blk.rd_pending) r_expected.push_back({blk.rd_data, blk.rd_err});
    d.eval();

    // The responses, as the master takes them.
    if (d.s_axil_bvalid && d.s_axil_bready) {
      REQUIRE(!b_expected.empty());
      CHECK(d.s_axil_bresp == (b_expected.front() ? 2u : 0u));
      b_expected.pop_front();
      ++writes_done;
      --outstanding;
    }
    if (d.s_axil_rvalid && d.s_axil_rready) {
      REQUIRE(!r_expected.empty());
      CHECK(d.s_axil_rdata == r_expected.front().first);
      CHECK(d.s_axil_rresp == (r_expected.front().second ? 2u : 0u));
      r_expected.pop_front();
      ++reads_done;
      --outstanding;
    }
    // Channel handshakes.
    const bool ar_fire = d.s_axil_arvalid && d.s_axil_arready;
    const bool aw_fire = d.s_axil_awvalid && d.s_axil_awready;
    const bool w_fire = d.s_axil_wvalid && d.s_axil_wready;
    if (ar_fire) {
      reads_sent.push_back(ar_todo.front());
      ar_todo.pop_front();
      ++outstanding;
    }
    if (aw_fire) {
      aw_sent.push_back(aw_todo.front());
      aw_todo.pop_front();
      ++outstanding;
    }
    if (w_fire) {
      w_sent.push_back(w_todo.front());
      w_todo.pop_front();
    }
    most_outstanding = std::max(most_outstanding, outstanding);

    blk.stall_wr = next_stall;
    blk.rd_pending = next_rd_pending;
    blk.rd_data = next_rd_data;
    blk.rd_err = next_rd_err;
    prev_req = req;
    prev_wr = is_wr;
    prev_addr = addr;
    prev_data = d.cpuif_wr_data_o;
    prev_biten = d.cpuif_wr_biten_o;
    prev_taken = taken;
    f.clock();
    if (ar_fire) d.s_axil_arvalid = 0;
    if (aw_fire) d.s_axil_awvalid = 0;
    if (w_fire) d.s_axil_wvalid = 0;
  }

  CHECK(reads_done == reads_total);
  CHECK(writes_done == writes_total);
  CHECK(r_expected.empty());
  CHECK(b_expected.empty());
  // Requests pile up in the front end while responses are held back, up to its FIFO and the
  // three channel registers' worth.
  CHECK(most_outstanding <= kMaxPending + 3);
  if (stall_in_8 == 7) CHECK(most_outstanding >= kMaxPending);
  // Writes behind reads were held back and offered again unchanged.
  CHECK(held_checks > 0);
}

TEST_CASE("the AXI4-Lite front end: an access takes a fixed number of cycles on an idle interface", "[regs][axil]") {
  Front f;
  auto& d = *f.dut;
  d.s_axil_bready = 1;
  d.s_axil_rready = 1;
  // A write raised in cycle 0: AW and W taken at its end, offered to the block from the request
  // register in cycle 2 and acknowledged there (into the response FIFO's head register), B taken
  // in cycle 3. PeakRDL's own interface offered it in cycle 1.
  d.s_axil_awvalid = 1;
  d.s_axil_awaddr = 0x40;
  d.s_axil_wvalid = 1;
  d.s_axil_wdata = 0x1234;
  d.s_axil_wstrb = 0xf;
  int offered = -1, b_taken = -1;
  for (int cycle = 0; cycle < 20 && b_taken < 0; ++cycle) {
    d.eval();
    d.cpuif_wr_ack_i = d.cpuif_req_o && d.cpuif_req_is_wr_o;
    d.eval();
    if (d.cpuif_wr_ack_i && offered < 0) offered = cycle;
    if (d.s_axil_bvalid && d.s_axil_bready) b_taken = cycle;
    const bool aw_fire = d.s_axil_awvalid && d.s_axil_awready;
    const bool w_fire = d.s_axil_wvalid && d.s_axil_wready;
    f.clock();
    if (aw_fire) d.s_axil_awvalid = 0;
    if (w_fire) d.s_axil_wvalid = 0;
    d.cpuif_wr_ack_i = 0;
  }
  CHECK(offered == 2);
  CHECK(b_taken == 3);
}
