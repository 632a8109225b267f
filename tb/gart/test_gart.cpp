// Unit tests of the GART (sgpu_gart with its walker, TLB and the read arbiter) in the read path
// of sgpu_gart_tb_top: hits, misses, prefetch, eviction, invalidation while pages are in use,
// faults (no bus access, record, event, resume), write-protect, the dummy page, and the RTL
// against the C++ model of the translation on random traffic.
#include <algorithm>
#include <catch2/catch.hpp>

#include "common/test_seed.hpp"
#include "gart_harness.hpp"

using namespace sgpu::tb;
using namespace sgpu::tb::gart;

namespace {

constexpr uint64_t kPageBase = 0x3'0000'0000ull;   // where the tests put mapped pages
constexpr uint64_t kTrapPage = 0x7'7777'7000ull;   // invalid PTEs point here: never read
constexpr uint64_t kDummyPage = 0x5'0000'0000ull;  // unmapped pages point here
constexpr uint32_t kPoison = 0xDEADBEEF;

HarnessConfig config(unsigned latency = 64) {
  HarnessConfig c;
  c.memory.read_latency = latency;
  c.seed = test_seed(1);
  return c;
}

/// Maps aperture pages [0, n) to scattered bus pages filled with random bytes; returns the map.
std::vector<uint64_t> map_scattered(GartHarness& h, uint32_t n, uint64_t flags = kPteValid | kPteWritable) {
  std::vector<uint64_t> pages(n);
  for (uint32_t i = 0; i < n; ++i) pages[i] = kPageBase + (uint64_t{i} * 7919 % 4096) * 0x1000 + (uint64_t{i} << 24);
  for (uint32_t i = 0; i < n; ++i) {
    uint8_t* p = h.memory().page_ptr(pages[i]);
    for (unsigned b = 0; b < 4096; b += 8) {
      const uint64_t r = h.rng()();
      std::memcpy(p + b, &r, 8);
    }
    h.write_pte(i, pte(pages[i], flags));
  }
  return pages;
}

uint64_t bus_of(GartHarness& h, uint64_t gpu) {
  const uint64_t idx = (gpu - kApBase) >> 12;
  return (h.read_pte(idx) & ~uint64_t{0xfff}) | (gpu & 0xfff);
}

}  // namespace

TEST_CASE("a miss walks one line of PTEs and the rest of the line hits", "[gart][tlb]") {
  GartHarness h(config());
  h.set_mode(2);
  const auto pages = map_scattered(h, 64);
  h.set_table_size(64);
  const DxReq first = h.translate_one(GartHarness::ap_vpn(3));
  CHECK_FALSE(first.got.fault);
  CHECK(first.got.ppn == pages[3] >> 12);
  CHECK(h.perf_misses() == 1);
  const uint32_t walks = h.perf_walks();
  CHECK(walks >= 1);
  CHECK(first.rsp_cycle - first.accept_cycle > 64);  // waited for host memory
  for (uint64_t i = 0; i < 8; ++i) {
    const DxReq r = h.translate_one(GartHarness::ap_vpn(i));
    CHECK_FALSE(r.got.fault);
    CHECK(r.got.ppn == pages[i] >> 12);
    // A hit: one cycle in the arbiter's request slice, two in the GART, one in its answer FIFO.
    CHECK(r.rsp_cycle - r.accept_cycle <= 4);
  }
  CHECK(h.perf_misses() == 1);
  CHECK(h.perf_lookups() == 9);
  REQUIRE(h.ok());
}

TEST_CASE("hits answer one translation per cycle", "[gart][tlb]") {
  GartHarness h(config());
  h.set_mode(2);
  const auto pages = map_scattered(h, 8);
  h.set_table_size(8);
  h.translate_one(GartHarness::ap_vpn(0));
  const uint64_t start = h.cycle();
  for (int k = 0; k < 64; ++k) h.translate(GartHarness::ap_vpn(k % 8));
  h.run_until_idle();
  const auto& dx = h.dx();
  CHECK(dx.back().rsp_cycle - dx[1].accept_cycle <= 64 + 3);  // 64 accepted, latency 4
  CHECK(h.cycle() - start < 80);
  for (size_t k = 1; k < dx.size(); ++k) CHECK(dx[k].got.ppn == pages[(k - 1) % 8] >> 12);
  REQUIRE(h.ok());
}

TEST_CASE("prefetch: streaming through consecutive pages walks each line once", "[gart][prefetch]") {
  GartHarness h(config(256));
  h.set_mode(0);
  const uint32_t n = 64;
  map_scattered(h, n);
  h.set_table_size(n);
  h.fetch(kApBase, n * 4096);
  REQUIRE(h.run_until_idle());
  REQUIRE(h.fetches()[0].err == DmaErr::Ok);
  REQUIRE(h.fetches()[0].data.size() == n * 4096);
  h.check_fetch_data(h.fetches()[0], [&](uint64_t a) { return bus_of(h, a); }, n * 4096);
  CHECK(h.perf_lookups() == n);
  // The first page misses; the engine's look-ahead (its data buffer: 4096 beats = one 8-page line
  // at 64 bits, plus the arbiter's answer FIFO) reaches each next line while its prefetch is
  // still in flight: that lookup waits for the prefetch (counted as a miss, hidden behind the
  // buffered data: gart_stream_ratio) but never walks again. At most one miss per line.
  CHECK(h.perf_misses() <= n / 8);
  CHECK(h.perf_walks() == n / 8);
  REQUIRE(h.ok());
}

TEST_CASE("eviction: lines beyond the TLB's capacity are walked again", "[gart][tlb]") {
  GartHarness h(config());
  h.set_mode(2);
  const auto pages = map_scattered(h, 128);
  h.set_table_size(128);
  // Each access walks its line and prefetches the next: 16 PTEs. Four accesses fill the
  // 32-entry TLB twice over: lines 0..3 are gone, 4..7 remain.
  for (uint64_t line : {0, 2, 4, 6}) {
    const DxReq r = h.translate_one(GartHarness::ap_vpn(line * 8));
    CHECK(r.got.ppn == pages[line * 8] >> 12);
  }
  CHECK(h.perf_misses() == 4);
  CHECK(h.perf_walks() == 8);
  // Line 7 (prefetched) hits; line 1 was evicted.
  CHECK(h.translate_one(GartHarness::ap_vpn(7 * 8 + 5)).got.ppn == pages[61] >> 12);
  CHECK(h.perf_misses() == 4);
  CHECK(h.translate_one(GartHarness::ap_vpn(1 * 8 + 2)).got.ppn == pages[10] >> 12);
  CHECK(h.perf_misses() == 5);
  REQUIRE(h.ok());
}

TEST_CASE("a walk whose PTE evicts the next PTE's page keeps both: the fill's registered compare", "[gart][tlb]") {
  // The TLB compares a PTE with its entries in the cycle the PTE arrives and writes it in the
  // next, so the compare of the next PTE does not see that write. Here each PTE of a walk
  // replaces the entry holding the next PTE's page: the next PTE must not refresh that entry
  // (it now holds the page just written) but take the next replacement entry, so every page of
  // the line stays cached.
  GartHarness h(config());
  h.set_mode(2);
  const auto pages = map_scattered(h, 64);
  h.set_table_size(64);
  // Lines 0..3 fill the 32 entries in order (walk and prefetch, twice): the oldest is page 0's.
  h.translate_one(GartHarness::ap_vpn(0));
  h.translate_one(GartHarness::ap_vpn(16));
  REQUIRE(h.perf_walks() == 4);
  // Page 0 again after invalidating it: its walk puts it in the oldest entry (its own, invalid),
  // refreshes pages 1..7 in place and moves the replacement to page 1's entry.
  h.invalidate(false, 0, 1);
  h.translate_one(GartHarness::ap_vpn(0));
  // Once more: page 0 replaces page 1's entry, page 1 (compared before that write) page 2's,
  // and so on along the line, back to back (one PTE per cycle).
  h.invalidate(false, 0, 1);
  h.translate_one(GartHarness::ap_vpn(0));
  const uint32_t misses = h.perf_misses();
  const uint32_t walks = h.perf_walks();
  for (uint64_t i = 0; i < 8; ++i) {
    const DxReq r = h.translate_one(GartHarness::ap_vpn(i));
    CHECK(r.got.ppn == pages[i] >> 12);
  }
  CHECK(h.perf_misses() == misses);  // every page of line 0 hits
  CHECK(h.perf_walks() == walks);
  REQUIRE(h.ok());
}

TEST_CASE("invalidation while other pages stream: the remapped page changes, the stream does not stall",
          "[gart][invalidate]") {
  GartHarness h(config(64));
  h.set_mode(0);
  auto pages = map_scattered(h, 48);
  h.set_table_size(48);
  // Cache page 40, then stream pages 0..15 and remap page 40 while the stream runs.
  h.fetch(GartHarness::ap_addr(40), 256);
  REQUIRE(h.run_until_idle());
  h.fetch(kApBase, 16 * 4096);
  h.run(2000);
  REQUIRE_FALSE(h.fetch_idle());
  const uint64_t new_page = 0x6'0000'0000ull;
  h.memory().fill(new_page, 0x5a, 4096);
  h.write_pte(40, pte(new_page, kPteValid));
  const uint64_t t0 = h.cycle();
  h.invalidate(false, 40, 1);
  const uint64_t inv_cycles = h.cycle() - t0;
  // At most one walk (queued behind the stream's reads in the memory: latency + a buffer of
  // data) plus the sweep.
  const uint64_t buffer_beats = h.top().buffer_beats_o;
  CHECK(inv_cycles < 64 + buffer_beats + 100);
  REQUIRE_FALSE(h.fetch_idle());  // the stream is still running
  h.fetch(GartHarness::ap_addr(40), 256);
  REQUIRE(h.run_until_idle());
  const auto& f = h.fetches();
  REQUIRE(f[1].err == DmaErr::Ok);
  h.check_fetch_data(f[1], [&](uint64_t a) { return bus_of(h, a); }, f[1].len);
  REQUIRE(f[2].err == DmaErr::Ok);
  CHECK(f[2].data == std::vector<uint8_t>(256, 0x5a));
  // A page of the stream's range invalidated mid-stream reads right too (it is walked again).
  REQUIRE(h.ok());
}

TEST_CASE("range invalidation drops exactly the range, invalidate-all drops everything", "[gart][invalidate]") {
  GartHarness h(config());
  h.set_mode(2);
  map_scattered(h, 16);
  h.set_table_size(16);
  h.translate_one(GartHarness::ap_vpn(0));
  h.translate_one(GartHarness::ap_vpn(8));
  const uint32_t misses = h.perf_misses();
  h.invalidate(false, 3, 2);  // pages 3 and 4
  for (uint64_t i : {0, 1, 2, 5, 6, 7, 8, 15}) h.translate_one(GartHarness::ap_vpn(i));
  CHECK(h.perf_misses() == misses);
  h.translate_one(GartHarness::ap_vpn(4));
  CHECK(h.perf_misses() == misses + 1);
  h.invalidate(true);
  h.translate_one(GartHarness::ap_vpn(8));
  CHECK(h.perf_misses() == misses + 2);
  REQUIRE(h.ok());
}

TEST_CASE("range invalidation: both ends of the range, an empty range, a count past 2^32",
          "[gart][invalidate]") {
  // The sweep compares each cached page with [first, first + count): first is in, first + count
  // is out, and the range does not wrap at 2^32 (a count that takes first + count past it
  // reaches every page from first on).
  struct Range {
    uint32_t first, count;
    std::vector<uint64_t> dropped;
  };
  const Range ranges[] = {
      {3, 2, {3, 4}},
      {0, 1, {0}},
      {15, 1, {15}},
      {6, 0, {}},
      {12, 0xffff'ffffu, {12, 13, 14, 15}},
      {0, 0xffff'ffffu, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}},
  };
  for (const Range& r : ranges) {
    DYNAMIC_SECTION("first " << r.first << ", count " << r.count) {
      GartHarness h(config());
      h.set_mode(2);
      map_scattered(h, 16);
      h.set_table_size(16);
      for (uint64_t i = 0; i < 16; ++i) h.translate_one(GartHarness::ap_vpn(i));
      h.invalidate(false, r.first, r.count);
      // The range's first page misses. It is translated first: any lookup queues a prefetch of
      // the next PTE line, which would refill the range's pages behind the check's back.
      uint32_t misses = h.perf_misses();
      if (!r.dropped.empty()) {
        h.translate_one(GartHarness::ap_vpn(r.dropped.front()));
        CHECK(h.perf_misses() == ++misses);
      }
      // Every page outside the range still hits.
      for (uint64_t i = 0; i < 16; ++i) {
        if (std::find(r.dropped.begin(), r.dropped.end(), i) != r.dropped.end()) continue;
        INFO("page " << i << " outside the range");
        h.translate_one(GartHarness::ap_vpn(i));
        CHECK(h.perf_misses() == misses);
      }
      REQUIRE(h.ok());
    }
  }
}

TEST_CASE("a lookup right after an invalidation completes misses: no stale registered TLB match",
          "[gart][invalidate]") {
  // The TLB compare is registered (the page is compared in the cycle its request is taken, the
  // entry read the next cycle). Back-to-back lookups of one cached page run through the whole
  // invalidation of that page; every lookup taken in or after the cycle the invalidation completes
  // uses the new PTE, including one whose compare ran against the entry still valid.
  for (const bool all : {false, true}) {
    GartHarness h(config(64));
    h.set_mode(2);
    auto pages = map_scattered(h, 16);
    h.set_table_size(16);
    h.translate_one(GartHarness::ap_vpn(3));
    const uint64_t new_page = 0x6'0000'0000ull;
    h.write_pte(3, pte(new_page, kPteValid | kPteWritable));
    for (int i = 0; i < 300; ++i) h.translate(GartHarness::ap_vpn(3));
    h.run(4);  // the lookups are under way (hits of the old PTE)
    h.invalidate_start(all, 3, 1);
    uint64_t done = 0;
    for (int i = 0; i < 200 && done == 0; ++i) {
      if (h.top().inv_done_o) done = h.cycle();
      h.step();
    }
    REQUIRE(done != 0);
    REQUIRE(h.run_until_idle());
    unsigned old_hits = 0, after = 0, at_boundary = 0;
    for (const DxReq& r : h.dx()) {
      REQUIRE(r.answered);
      REQUIRE_FALSE(r.got.fault);
      if (r.vpn != GartHarness::ap_vpn(3)) continue;
      if (r.accept_cycle >= done) {
        ++after;
        if (r.accept_cycle == done) ++at_boundary;
        CHECK(r.got.ppn == new_page >> 12);
      } else if (r.got.ppn == pages[3] >> 12) {
        ++old_hits;
      }
    }
    CHECK(old_hits > 4);  // lookups went on until the invalidation (the sweep does not stall them)
    CHECK(after > 100);
    // Invalidate-all clears the TLB in the cycle it completes, with lookups flowing: one is taken
    // (and compared against the still-valid entry) in that very cycle. A range sweep clears the
    // entry earlier, and the page misses from then on.
    if (all) CHECK(at_boundary == 1);
    REQUIRE(h.ok());
  }
}

TEST_CASE("an invalid PTE faults: no bus access, record, event, resume after fixing", "[gart][fault]") {
  GartHarness h(config());
  h.set_mode(0);
  h.set_exec(false, 0x1234'5678'9abc'def0ull, 42);
  const auto pages = map_scattered(h, 8);
  h.write_pte(1, pte(kTrapPage, 0));  // invalid, pointing at the trap page
  h.set_table_size(8);
  h.fetch(kApBase + 0x800, 3 * 4096);  // pages 0..3: page 1 faults
  REQUIRE(h.run_until_idle());
  const FetchReq& f = h.fetches()[0];
  CHECK(f.err == DmaErr::XlateFault);
  CHECK(f.data.size() <= 0x800);  // only page 0's bytes
  h.check_fetch_data(f, [&](uint64_t a) { return bus_of(h, a); }, 0x800);
  CHECK_FALSE(h.page_was_read(kTrapPage >> 12));
  CHECK_FALSE(h.page_was_read(pages[2] >> 12));
  const auto rec = h.fault_record();
  CHECK(rec.valid);
  CHECK(rec.reason == Reason::InvalidPte);
  CHECK(rec.addr == GartHarness::ap_addr(1));
  CHECK_FALSE(rec.write);
  CHECK_FALSE(rec.priv);
  CHECK(rec.fence == 0x1234'5678'9abc'def0ull);
  CHECK(rec.context == 42);
  CHECK(rec.client == 0);  // the fetch engine
  CHECK(h.fault_events() >= 1);
  CHECK(rec.more == (h.fault_events() > 1));

  // The host reads the record, fixes the PTE, invalidates and clears: the same fetch works.
  h.write_pte(1, pte(pages[1], kPteValid));
  h.invalidate(false, 1, 1);
  h.clear_fault();
  h.step();
  CHECK_FALSE(h.fault_record().valid);
  h.fetch(kApBase + 0x800, 3 * 4096);
  REQUIRE(h.run_until_idle());
  CHECK(h.fetches()[1].err == DmaErr::Ok);
  h.check_fetch_data(h.fetches()[1], [&](uint64_t a) { return bus_of(h, a); }, 3 * 4096);
  CHECK_FALSE(h.fault_record().valid);
  REQUIRE(h.ok());
}

TEST_CASE("the fault record keeps the first fault and sets more_faults", "[gart][fault]") {
  GartHarness h(config());
  h.set_mode(2);
  map_scattered(h, 8);
  h.write_pte(2, 0);
  h.set_table_size(8);
  h.set_exec(false, 7, 3);
  CHECK(h.translate_one(GartHarness::ap_vpn(2)).got.fault);
  h.set_exec(false, 8, 4);
  CHECK(h.translate_one(GartHarness::ap_vpn(9)).got.fault);  // beyond the table
  const auto rec = h.fault_record();
  CHECK(rec.valid);
  CHECK(rec.more);
  CHECK(rec.reason == Reason::InvalidPte);
  CHECK(rec.addr == GartHarness::ap_addr(2));
  CHECK(rec.fence == 7);
  CHECK(rec.context == 3);
  CHECK(h.fault_events() == 2);
  h.clear_fault();
  h.step();
  CHECK_FALSE(h.fault_record().valid);
  CHECK_FALSE(h.fault_record().more);
  REQUIRE(h.ok());
}

TEST_CASE("write-protect: reads of a read-only page pass, writes fault", "[gart][fault]") {
  GartHarness h(config());
  h.set_mode(2);
  const auto pages = map_scattered(h, 8);
  h.write_pte(5, pte(pages[5], kPteValid));  // read-only
  h.set_table_size(8);
  const DxReq rd = h.translate_one(GartHarness::ap_vpn(5), false);
  CHECK_FALSE(rd.got.fault);
  CHECK(rd.got.ppn == pages[5] >> 12);
  const DxReq wr = h.translate_one(GartHarness::ap_vpn(5), true);
  CHECK(wr.got.fault);
  const auto rec = h.fault_record();
  CHECK(rec.reason == Reason::WriteProtect);
  CHECK(rec.write);
  CHECK(rec.addr == GartHarness::ap_addr(5));
  CHECK(rec.client == 1);  // the direct port (arbiter client 1, the CP write path in sgpu_top)
  const DxReq wr_ok = h.translate_one(GartHarness::ap_vpn(4), true);
  CHECK_FALSE(wr_ok.got.fault);
  CHECK(wr_ok.got.ppn == pages[4] >> 12);
  REQUIRE(h.ok());
}

TEST_CASE("address map: segments, privilege, out of range, disabled", "[gart][map]") {
  GartHarness h(config());
  h.set_mode(2);
  map_scattered(h, 8);
  h.set_table_size(8);
  const uint64_t sys = 0x1'2345'6000ull >> 12;
  SECTION("system-physical: identity when privileged, PRIVILEGE fault otherwise") {
    h.set_exec(true, 1, 1);
    auto r = h.translate_one(sys);
    CHECK_FALSE(r.got.fault);
    CHECK(r.got.ppn == sys);
    h.set_exec(false, 2, 2);
    r = h.translate_one(sys);
    CHECK(r.got.fault);
    CHECK(h.fault_record().reason == Reason::Privilege);
  }
  SECTION("memory segment: linear to its bus window, for everyone") {
    const auto r = h.translate_one((kMemSegBase >> 12) + 0x1234, true);
    CHECK_FALSE(r.got.fault);
    CHECK(r.got.ppn == (kMemSegBus >> 12) + 0x1234);
  }
  SECTION("aperture page beyond the table: OUT_OF_RANGE without a walk") {
    const uint32_t walks = h.perf_walks();
    CHECK(h.translate_one(GartHarness::ap_vpn(8)).got.fault);
    CHECK(h.perf_walks() == walks);
    CHECK(h.fault_record().reason == Reason::OutOfRange);
  }
  SECTION("an address in no segment: OUT_OF_RANGE") {
    h.set_exec(true, 1, 1);
    CHECK(h.translate_one(0x0030'0000'0000'0000ull >> 12).got.fault);
    CHECK(h.fault_record().reason == Reason::OutOfRange);
    CHECK(h.translate_one((kMemSegBase + kMemSegSize) >> 12).got.fault);
  }
  SECTION("disabled: every page is its own bus page") {
    h.set_enable(false);
    for (uint64_t v : {sys, GartHarness::ap_vpn(3), uint64_t{0x0030'0000'0000'0000ull >> 12}}) {
      const auto r = h.translate_one(v, true);
      CHECK_FALSE(r.got.fault);
      CHECK(r.got.ppn == v);
    }
    CHECK_FALSE(h.fault_record().valid);
  }
  REQUIRE(h.ok());
}

TEST_CASE("the walk of the table's last, partial line reads only the PTEs inside the table", "[gart][tlb]") {
  // The walk's length is formed from table_size's line and remainder (not from table_size minus
  // the line's first PTE): a demand walk and a prefetch of the partial line read its 5 PTEs.
  GartHarness h(config());
  h.set_mode(2);
  map_scattered(h, 16);
  h.set_table_size(13);  // line 1 holds PTEs 8..12
  h.axi().reset_stats();
  CHECK_FALSE(h.translate_one(GartHarness::ap_vpn(9)).got.fault);  // a demand walk of line 1
  CHECK(h.axi().stats().read_beats == 5);                          // one PTE per 64-bit beat
  h.invalidate(true);
  h.axi().reset_stats();
  CHECK_FALSE(h.translate_one(GartHarness::ap_vpn(2)).got.fault);  // line 0, then line 1 prefetched
  REQUIRE(h.run_until_idle());
  CHECK(h.perf_walks() == 3);
  CHECK(h.axi().stats().read_beats == 8 + 5);
  REQUIRE(h.ok());
}

TEST_CASE("a bus error while reading the page table is a WALK_ERROR fault", "[gart][fault]") {
  GartHarness h(config());
  h.set_mode(2);
  map_scattered(h, 16);
  h.set_table_size(16);
  h.axi().inject_error(GartHarness::kTableBase + 64, GartHarness::kTableBase + 128, kAxiRespSlvErr);
  const DxReq r = h.translate_one(GartHarness::ap_vpn(9));
  CHECK(r.got.fault);
  CHECK(h.fault_record().reason == Reason::WalkError);
  CHECK_FALSE(h.translate_one(GartHarness::ap_vpn(2)).got.fault);  // line 0 is fine
  REQUIRE(h.ok());
}

TEST_CASE("unmapped pages point at the dummy page: reads return the poison", "[gart][dummy]") {
  GartHarness h(config());
  h.set_mode(0);
  for (unsigned b = 0; b < 4096; b += 4) h.memory().write32(kDummyPage + b, kPoison);
  const auto pages = map_scattered(h, 4);
  h.write_pte(2, pte(kDummyPage, kPteValid));  // UnmapApertureSegment: re-pointed, still valid
  h.set_table_size(4);
  h.fetch(kApBase, 4 * 4096);
  REQUIRE(h.run_until_idle());
  const FetchReq& f = h.fetches()[0];
  REQUIRE(f.err == DmaErr::Ok);
  for (unsigned b = 0; b < 4096; b += 4) {
    uint32_t w;
    std::memcpy(&w, &f.data[2 * 4096 + b], 4);
    if (w != kPoison) FAIL("dummy page byte " << b << " is not poison");
  }
  h.check_fetch_data(f, [&](uint64_t a) { return bus_of(h, a); }, f.len);
  CHECK_FALSE(h.fault_record().valid);
  REQUIRE(h.ok());
}

TEST_CASE("random traffic: RTL matches the C++ translation model", "[gart][random]") {
  HarnessConfig cfg = config(48);
  cfg.memory.read_latency_jitter = 40;
  cfg.memory.ar_ready_prob = 0.7;
  cfg.memory.r_valid_prob = 0.8;
  cfg.dx_req_prob = 0.6;
  cfg.dx_rsp_ready_prob = 0.7;
  GartHarness h(cfg);
  CAPTURE(cfg.seed);
  h.set_mode(2);
  auto& rng = h.rng();
  constexpr uint32_t kTable = 96;  // 12 lines; the TLB holds 4
  auto random_pte = [&]() -> uint64_t {
    const uint64_t page = kPageBase + (rng() % 100000) * 0x1000;
    const auto kind = static_cast<unsigned>(rng() % 10);
    if (kind == 0) return pte(kTrapPage, 0);                         // invalid
    if (kind <= 2) return pte(page, kPteValid | (rng() & kPteSnoop));  // read-only
    return pte(page, kPteValid | kPteWritable | (rng() & kPteSnoop));
  };
  for (uint32_t i = 0; i < kTable; ++i) h.write_pte(i, random_pte());
  h.set_table_size(kTable - 5);  // the last PTEs exist but are outside the table

  auto random_vpn = [&]() -> uint64_t {
    const auto kind = static_cast<unsigned>(rng() % 20);
    if (kind < 15) return GartHarness::ap_vpn(rng() % (kTable + 2));
    if (kind < 17) return (kMemSegBase >> 12) + rng() % (kMemSegSize >> 12);
    if (kind < 19) return (rng() % (uint64_t{1} << 40)) >> 12;  // system physical
    return (0x0030'0000'0000'0000ull >> 12) + rng() % 1000;       // nowhere
  };

  size_t checked = 0, faults_seen = 0;
  constexpr size_t kNone = ~size_t{0};
  size_t first_fault = kNone;  // first faulting response since the last clear
  const int kRounds = 60;
  for (int round = 0; round < kRounds; ++round) {
    // Change privilege and the submission only between bursts of requests.
    h.run_until_idle();
    h.set_exec(rng() % 3 != 0, rng(), static_cast<uint32_t>(rng()));
    if (rng() % 4 == 0) {
      h.clear_fault();
      h.step();
      first_fault = kNone;
    }
    const size_t begin = h.dx().size();
    const int n = 100 + static_cast<int>(rng() % 200);
    for (int k = 0; k < n; ++k) h.translate(random_vpn(), rng() % 3 == 0);
    // Meanwhile: remap some pages and invalidate them (a range, or everything).
    int changes = static_cast<int>(rng() % 3);
    while (h.dx_outstanding() > 0) {
      h.run(1 + rng() % 60);
      if (changes > 0 && !h.inv_busy()) {
        --changes;
        const uint32_t first = static_cast<uint32_t>(rng() % kTable);
        const uint32_t count = 1 + static_cast<uint32_t>(rng() % 10);
        for (uint32_t i = first; i < first + count && i < kTable; ++i) h.write_pte(i, random_pte());
        if (rng() % 4 == 0) h.invalidate_start(true);
        else h.invalidate_start(false, first, count);
      } else if (rng() % 8 == 0 && !h.inv_busy()) {
        h.invalidate_start(rng() % 2 == 0, static_cast<uint32_t>(rng() % kTable), 1 + static_cast<uint32_t>(rng() % 16));
      }
    }
    h.run_until_idle();
    // Check every response of this round.
    const auto& dx = h.dx();
    for (size_t k = begin; k < dx.size(); ++k) {
      const DxReq& r = dx[k];
      REQUIRE(r.answered);
      const uint64_t ap = kApBase >> 12;
      std::vector<uint64_t> cands = {0};
      const bool in_ap = r.vpn >= ap && r.vpn < ap + kApPages;
      if (in_ap) cands = h.pte_candidates(r.vpn - ap, r.accept_cycle, r.rsp_cycle);
      bool match = false;
      for (uint64_t c : cands) {
        if (model_translate(r.vpn, r.write, r.priv, true, h.table_size(), c) == r.got) match = true;
      }
      if (!match) {
        const Expect e = model_translate(r.vpn, r.write, r.priv, true, h.table_size(), cands.back());
        FAIL("request " << k << " vpn 0x" << std::hex << r.vpn << std::dec << " write " << r.write << " priv "
                        << r.priv << ": got fault " << r.got.fault << " ppn 0x" << std::hex << r.got.ppn
                        << " snoop " << r.got.snoop << ", model fault " << e.fault << " ("
                        << to_string(e.reason) << ") ppn 0x" << e.ppn << std::dec << " (" << cands.size()
                        << " candidate PTEs)");
      }
      if (r.got.fault) {
        ++faults_seen;
        if (first_fault == kNone) first_fault = k;
      }
      ++checked;
    }
    // The record names the first fault since the clear.
    const auto rec = h.fault_record();
    CHECK(rec.valid == (first_fault != kNone));
    if (first_fault != kNone) {
      const DxReq& r = h.dx()[first_fault];
      CHECK(rec.addr == (r.vpn << 12));
      CHECK(rec.write == r.write);
      CHECK(rec.priv == r.priv);
    }
  }
  CHECK(h.fault_events() == faults_seen);
  CHECK(checked > 5000);
  INFO(h.report());
  REQUIRE(h.ok());
}

TEST_CASE("two clients share the translation port: each gets its own answers, in order", "[gart][arb]") {
  HarnessConfig cfg = config(96);
  cfg.dx_req_prob = 0.5;
  cfg.dx_rsp_ready_prob = 0.6;
  cfg.data_ready_prob = 0.8;
  GartHarness h(cfg);
  h.set_mode(0);
  const uint32_t n = 48;
  const auto pages = map_scattered(h, n);
  h.write_pte(45, pte(pages[45], kPteValid));  // read-only: direct writes to it fault
  h.set_table_size(n);
  // The fetch engine streams pages 0..31 while the direct port translates random pages.
  h.fetch(kApBase, 32 * 4096);
  auto& rng = h.rng();
  std::vector<std::pair<uint64_t, bool>> asked;
  for (int k = 0; k < 400; ++k) {
    const uint64_t idx = rng() % n;
    const bool write = rng() % 2 == 0;
    asked.emplace_back(idx, write);
    h.translate(GartHarness::ap_vpn(idx), write);
  }
  REQUIRE(h.run_until_idle(2'000'000));
  const FetchReq& f = h.fetches()[0];
  REQUIRE(f.err == DmaErr::Ok);
  REQUIRE(f.data.size() == 32 * 4096);
  h.check_fetch_data(f, [&](uint64_t a) { return bus_of(h, a); }, f.len);
  REQUIRE(h.dx().size() == asked.size());
  size_t faults = 0;
  for (size_t k = 0; k < asked.size(); ++k) {
    const DxReq& r = h.dx()[k];
    REQUIRE(r.answered);
    const bool want_fault = asked[k].first == 45 && asked[k].second;
    CHECK(r.got.fault == want_fault);
    if (!want_fault) CHECK(r.got.ppn == pages[asked[k].first] >> 12);
    faults += want_fault;
  }
  CHECK(h.fault_events() == faults);
  if (faults > 0) {
    CHECK(h.fault_record().client == 1);
    CHECK(h.fault_record().reason == Reason::WriteProtect);
  }
  REQUIRE(h.ok());
}

// The arbiter hands requests to the GART through a two-entry register slice: a client's
// handshake does not wait for the GART's decision on the request before it (timing pass 12,
// docs/fpga.md). While the GART walks for a miss, the two requests behind it are taken at once
// and the third waits for the slice.
TEST_CASE("while the GART walks, the arbiter's slice takes the next two requests and holds the third",
          "[gart][arb]") {
  GartHarness h(config());
  h.set_mode(2);
  const auto pages = map_scattered(h, 64);
  h.set_table_size(64);
  const uint64_t idx[] = {3, 40, 41, 42};  // the first walks; the rest lie in another line
  for (const uint64_t i : idx) h.translate(GartHarness::ap_vpn(i));
  REQUIRE(h.run_until_idle(20000));
  const auto& dx = h.dx();
  REQUIRE(dx.size() == 4);
  for (size_t k = 0; k < 4; ++k) {
    INFO("request " << k);
    CHECK_FALSE(dx[k].got.fault);
    CHECK(dx[k].got.ppn == pages[idx[k]] >> 12);
  }
  CHECK(dx[0].rsp_cycle - dx[0].accept_cycle > 64);  // walked host memory
  CHECK(dx[1].accept_cycle - dx[0].accept_cycle <= 2);
  CHECK(dx[2].accept_cycle - dx[1].accept_cycle <= 2);
  CHECK(dx[3].accept_cycle + 1 >= dx[0].rsp_cycle);  // the slice was full until the walk ended
  REQUIRE(h.ok());
}
