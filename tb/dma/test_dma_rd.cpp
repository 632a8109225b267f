// Tests of the DMA fetch engine (sgpu_dma_rd) in its Verilated model: every request's bytes are
// compared with the memory model, every cycle of the AXI port goes through the protocol
// checker, and every random choice comes from the printed seed (SGPU_SEED reproduces a run).
#include <catch2/catch.hpp>

#include <random>
#include <utility>
#include <vector>

#include "common/test_seed.hpp"
#include "dma_harness.hpp"

using namespace sgpu::tb;
using namespace sgpu::tb::dma;

namespace {

constexpr uint64_t kBase = 0x1'2345'0000ull;  // GPU addresses used by the tests

/// Random-length generator biased towards the interesting cases: tiny, around a burst or a
/// page, and now and then large.
uint32_t random_len(std::mt19937_64& rng, uint32_t max_len) {
  switch (rng() % 8) {
    case 0: return 1 + static_cast<uint32_t>(rng() % 8);
    case 1: return 1 + static_cast<uint32_t>(rng() % 64);
    case 2: return static_cast<uint32_t>(256 * kDataBytes / 8 * (1 + rng() % 4));  // burst multiples
    case 3: return 4096 - 8 + static_cast<uint32_t>(rng() % 16);
    case 4: return 1 + static_cast<uint32_t>(rng() % 20000);
    default: return 1 + static_cast<uint32_t>(rng() % std::min<uint32_t>(max_len, 3000));
  }
}

/// A probability in [lo, 1), in steps of 1 %.
double random_prob(std::mt19937_64& rng, double lo) {
  return lo + (1.0 - lo) * static_cast<double>(rng() % 100) / 100.0;
}

uint64_t random_addr(std::mt19937_64& rng) {
  switch (rng() % 4) {
    case 0: return kBase + (rng() % 512) * 4096;                         // page aligned
    case 1: return kBase + (rng() % 512) * 4096 + 4096 - 1 - rng() % 16;  // near page end
    default: return kBase + rng() % (2u << 20);                          // anywhere
  }
}

void require_clean(DmaHarness& h, bool allow_abort = false) {
  h.check_all(allow_abort);
  INFO(h.report());
  CHECK(h.ok());
}

/// The pages the page walker must ask for, in order: every page the request touches (an empty
/// request still has one, empty, segment).
std::vector<uint64_t> pages_of(uint64_t addr, uint32_t len) {
  std::vector<uint64_t> pages;
  const uint64_t last = len == 0 ? addr : addr + len - 1;
  for (uint64_t vpn = addr >> 12; vpn <= last >> 12; ++vpn) pages.push_back(vpn);
  return pages;
}

/// How many of its pages each request had asked for, matching the translation requests to the
/// requests in order: each takes the longest run of its own pages from where the one before it
/// stopped (consecutive requests must not share a page, else the split is ambiguous). Also
/// returns how many translation requests were matched.
std::pair<std::vector<size_t>, size_t> pages_asked(const DmaHarness& h) {
  const std::vector<uint64_t>& asked = h.xlate_requests();
  std::vector<size_t> counts;
  size_t pos = 0;
  for (const Tracked& r : h.tracked()) {
    const std::vector<uint64_t> want = pages_of(r.addr, r.len);
    size_t n = 0;
    while (n < want.size() && pos + n < asked.size() && asked[pos + n] == want[n]) ++n;
    counts.push_back(n);
    pos += n;
  }
  return {counts, pos};
}

/// A request that completed asked for each of its pages once, in order; an aborted one for a
/// prefix of them (none if it was dropped before its walk); nothing else was asked for.
void require_walk(const DmaHarness& h) {
  const auto [counts, matched] = pages_asked(h);
  for (size_t i = 0; i < h.tracked().size(); ++i) {
    const Tracked& r = h.tracked()[i];
    CAPTURE(i, r.addr, r.len, counts[i]);
    if (r.err != DmaErr::Aborted) REQUIRE(counts[i] == pages_of(r.addr, r.len).size());
  }
  CHECK(matched == h.xlate_requests().size());
}

}  // namespace

TEST_CASE("Requests of every shape are delivered byte-exact", "[dma]") {
  const uint64_t seed = test_seed(1);
  CAPTURE(seed);
  HarnessConfig cfg;
  cfg.seed = seed;
  cfg.memory.read_latency = 20;
  DmaHarness h(cfg);
  const std::vector<std::pair<uint64_t, uint32_t>> shapes = {
      {kBase, 1},                    // one byte, aligned
      {kBase + 7, 1},                // one byte, last lane
      {kBase + 3, 2},                // inside one beat
      {kBase + 5, kDataBytes},       // exactly a beat, straddling two
      {kBase + 1, 4095},             // unaligned, ends on a page boundary
      {kBase + 4000, 200},           // crosses 4 KiB
      {kBase, 4096},                 // one page
      {kBase, 256 * kDataBytes},     // exactly one maximum burst
      {kBase + 8192, 3 * 256 * kDataBytes},  // exact burst multiple
      {kBase + 4093, 9000},          // unaligned, several pages
      {kBase + 4096 * 7 - 1, 2},     // two bytes across a page boundary
      {kBase + 33, 1 << 20},         // 1 MiB, unaligned
      {kBase, 0},                    // empty request: OK status, no data
  };
  uint8_t tag = 0;
  for (const auto& [addr, len] : shapes) {
    h.fill_random_for(addr, len);
    h.submit(addr, len, tag++ & 15);
  }
  REQUIRE(h.run_until_done(2'000'000));
  REQUIRE(h.completed() == shapes.size());
  require_clean(h);
}

TEST_CASE("Random traffic with latency jitter and back-pressure on every side", "[dma]") {
  const uint64_t seed = test_seed(2);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 6; ++round) {
    HarnessConfig cfg;
    cfg.seed = seed + round;
    cfg.memory.read_latency = 1 + static_cast<unsigned>(rng() % 120);
    cfg.memory.read_latency_jitter = static_cast<unsigned>(rng() % 40);
    cfg.memory.ar_ready_prob = random_prob(rng, 0.3);
    cfg.memory.r_valid_prob = random_prob(rng, 0.3);
    cfg.memory.max_reads_in_flight = 1 + static_cast<unsigned>(rng() % 20);
    cfg.data_ready_prob = random_prob(rng, 0.2);
    cfg.status_ready_prob = random_prob(rng, 0.1);
    cfg.req_valid_prob = 0.5;
    cfg.rtl_identity = (round % 3) == 0;
    cfg.xlate_latency_min = 1;
    cfg.xlate_latency_max = 1 + static_cast<unsigned>(rng() % 30);
    cfg.xlate_req_ready_prob = 0.6;
    CAPTURE(round, cfg.memory.read_latency, cfg.data_ready_prob);
    DmaHarness h(cfg);
    for (int i = 0; i < 300; ++i) {
      const uint64_t addr = random_addr(rng);
      const uint32_t len = random_len(rng, 64 * 1024);
      h.fill_random_for(addr, len);
      h.submit(addr, len, static_cast<uint8_t>(i & 15));
    }
    REQUIRE(h.run_until_done(3'000'000));
    require_clean(h);
  }
}

TEST_CASE("SLVERR and DECERR in the middle of a request end only that request", "[dma]") {
  const uint64_t seed = test_seed(3);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  HarnessConfig cfg;
  cfg.seed = seed;
  cfg.memory.read_latency = 40;
  cfg.memory.r_valid_prob = 0.8;
  cfg.data_ready_prob = 0.7;
  cfg.status_ready_prob = 0.5;
  DmaHarness h(cfg);
  // Error ranges scattered over the test region, a few beats each.
  for (int i = 0; i < 12; ++i) {
    uint64_t lo = kBase + rng() % (2u << 20);
    // Keep the two requests checked by name below free of random errors.
    if (lo >= kBase + 0x3'0000 - 64 && lo < kBase + 0x6'0000) lo += 0x4'0000;
    h.inject_error(lo, lo + 1 + rng() % 64, (i & 1) ? kAxiRespDecErr : kAxiRespSlvErr);
  }
  // One request known to hit an error mid-way, with a clean one right behind it.
  h.inject_error(kBase + 0x3'0000 + 5000, kBase + 0x3'0000 + 5001, kAxiRespSlvErr);
  h.fill_random_for(kBase + 0x3'0000, 64 * 1024);
  h.submit(kBase + 0x3'0000, 64 * 1024, 1);
  h.fill_random_for(kBase + 0x5'0000, 4096);
  h.submit(kBase + 0x5'0000, 4096, 2);
  for (int i = 0; i < 500; ++i) {
    const uint64_t addr = random_addr(rng);
    const uint32_t len = random_len(rng, 32 * 1024);
    h.fill_random_for(addr, len);
    h.submit(addr, len, static_cast<uint8_t>(i & 15));
  }
  REQUIRE(h.run_until_done(3'000'000));
  require_clean(h);
  REQUIRE(h.tracked().size() >= 2);
  CHECK(h.tracked()[0].err == DmaErr::BusSlvErr);
  CHECK(h.tracked()[0].data.size() <= 5000);  // stops at the failing beat
  CHECK(h.tracked()[1].err == DmaErr::Ok);
  size_t errors = 0;
  for (const auto& r : h.tracked()) errors += r.err != DmaErr::Ok;
  CHECK(errors > 0);
}

TEST_CASE("Translation faults and a scrambled page mapping", "[dma]") {
  const uint64_t seed = test_seed(4);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  HarnessConfig cfg;
  cfg.seed = seed;
  cfg.rtl_identity = false;
  cfg.memory.read_latency = 30;
  cfg.xlate_latency_min = 1;
  cfg.xlate_latency_max = 40;
  cfg.xlate_req_ready_prob = 0.7;
  cfg.data_ready_prob = 0.8;
  // A bijection that scatters pages (and puts them far from the GPU addresses).
  cfg.map_page = [](uint64_t vpn) { return (vpn ^ 0x3C5ull) + 0x70'0000ull; };
  for (int i = 0; i < 25; ++i) cfg.fault_pages.insert((kBase >> 12) + rng() % 512);
  DmaHarness h(cfg);
  for (int i = 0; i < 500; ++i) {
    const uint64_t addr = random_addr(rng);
    const uint32_t len = random_len(rng, 32 * 1024);
    h.fill_random_for(addr, len);
    h.submit(addr, len, static_cast<uint8_t>(i & 15));
  }
  REQUIRE(h.run_until_done(3'000'000));
  require_clean(h);
  size_t faults = 0;
  for (const auto& r : h.tracked()) faults += r.err == DmaErr::XlateFault;
  CHECK(faults > 0);
  // No read was ever issued into a faulting page.
  for (uint64_t vpn : cfg.fault_pages) {
    CAPTURE(vpn);
    CHECK_FALSE(h.page_was_read(cfg.map_page(vpn)));
  }
}

TEST_CASE("The page walker cuts requests at every page offset and length class", "[dma]") {
  // The walker cuts a request's first segment from the request FIFO's head and the rest from
  // registers (the next page, the bytes left, whether the next segment is the last): every
  // offset class (start of page, inside the first beat, a beat boundary, mid-page, the last
  // beat, the last byte) times every length around one and two page boundaries, back to back.
  const uint64_t seed = test_seed(7);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  const uint32_t offsets[] = {0, 1, kDataBytes - 1, kDataBytes, 2048, 4096 - kDataBytes, 4095};
  for (const bool pressure : {false, true}) {
    CAPTURE(pressure);
    HarnessConfig cfg;
    cfg.seed = seed;
    cfg.rtl_identity = false;
    cfg.map_page = [](uint64_t vpn) { return (vpn ^ 0x2A7ull) + 0x40'0000ull; };
    cfg.memory.read_latency = pressure ? 30 : 4;
    if (pressure) {
      cfg.xlate_latency_max = 20;
      cfg.xlate_req_ready_prob = 0.4;
      cfg.data_ready_prob = 0.7;
    }
    DmaHarness h(cfg);
    uint64_t region = kBase;
    for (const uint32_t offset : offsets) {
      const uint32_t room = 4096 - offset;
      // The last three have high length bits set with small low bits (the walker tests the
      // high bits for zero apart from the compare with the page room).
      const uint32_t lens[] = {1,           room - 1,    room,          room + 1,
                               room + 4095, room + 4096, room + 4097,   room + 8191,
                               room + 8192, room + 8193, 3 * 4096 + 17, 4 * 4096 + 1,
                               room + 16384, 65536 + 3};
      for (const uint32_t len : lens) {
        // Each request in its own 128 KiB region: no two consecutive requests share a page.
        h.fill_random_for(region + offset, len);
        h.submit(region + offset, len, static_cast<uint8_t>(rng() & 15));
        region += 0x2'0000;
      }
    }
    REQUIRE(h.run_until_done(1'000'000));
    require_clean(h);
    require_walk(h);
  }
}

TEST_CASE("Aborts in the middle of page walks", "[dma]") {
  // Long requests and a slow translation port keep the walker inside a request (walking from
  // its registers) when the abort comes; the requests after it start from the FIFO head again.
  const uint64_t seed = test_seed(8);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  HarnessConfig cfg;
  cfg.seed = seed;
  cfg.rtl_identity = false;
  cfg.map_page = [](uint64_t vpn) { return (vpn ^ 0x1D3ull) + 0x50'0000ull; };
  cfg.memory.read_latency = 20;
  cfg.xlate_latency_max = 12;
  cfg.xlate_req_ready_prob = 0.35;
  cfg.data_ready_prob = 0.8;
  DmaHarness h(cfg);
  uint64_t region = kBase;
  for (int round = 0; round < 40; ++round) {
    for (int i = 0; i < 6; ++i) {
      const uint64_t addr = region + rng() % 4096;
      const uint32_t len = (rng() % 8 == 0) ? static_cast<uint32_t>(rng() % 3)
                                             : 4096 * (1 + static_cast<uint32_t>(rng() % 6)) +
                                                   static_cast<uint32_t>(rng() % 4096);
      h.fill_random_for(addr, len);
      h.submit(addr, len, static_cast<uint8_t>(rng() & 15));
      region += 0x10000;
    }
    const uint64_t run_for = 1 + rng() % 120;
    for (uint64_t c = 0; c < run_for; ++c) h.step();
    h.set_abort(true);
    const uint64_t hold = (round & 1) ? 1 : 1 + rng() % 20;
    for (uint64_t c = 0; c < hold; ++c) h.step();
    h.set_abort(false);
  }
  REQUIRE(h.run_until_done(3'000'000));
  require_clean(h, /*allow_abort=*/true);
  require_walk(h);
  size_t aborted = 0;
  for (const auto& r : h.tracked()) aborted += r.err == DmaErr::Aborted;
  CHECK(aborted > 0);
  CHECK(h.tracked().back().err == DmaErr::Ok);
  // Some abort came while a request was half walked (some of its pages asked for, not all).
  const std::vector<size_t> counts = pages_asked(h).first;
  size_t partial = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const Tracked& r = h.tracked()[i];
    const size_t pages = pages_of(r.addr, r.len).size();
    partial += r.err == DmaErr::Aborted && counts[i] > 0 && counts[i] < pages;
  }
  CAPTURE(aborted, partial);
  CHECK(partial > 0);
}

TEST_CASE("A bus error stops the request from issuing more reads", "[dma]") {
  HarnessConfig cfg;
  cfg.memory.read_latency = 100;
  DmaHarness h(cfg);
  h.inject_error(kBase + 5000, kBase + 5001, kAxiRespDecErr);
  h.submit(kBase, 1u << 20, 3);  // 1 MiB, fails after 5000 bytes
  h.fill_random_for(kBase + (2u << 20), 1000);
  h.submit(kBase + (2u << 20), 1000, 4);
  REQUIRE(h.run_until_done(1'000'000));
  require_clean(h);
  REQUIRE(h.tracked().size() == 2);
  CHECK(h.tracked()[0].err == DmaErr::BusDecErr);
  CHECK(h.tracked()[1].err == DmaErr::Ok);
  // Without cancellation all 1 MiB would be read; with it, about one buffer's worth beyond
  // the failing beat.
  const uint64_t beats_read = h.axi().stats().read_beats;
  CAPTURE(beats_read);
  const uint64_t buffer_beats = h.top().buffer_beats_o;
  CHECK(beats_read * kDataBytes < 5000 + 2 * buffer_beats * kDataBytes + 1000 + 4096);
}

TEST_CASE("Abort with reads in flight drains the bus and reports every request", "[dma]") {
  const uint64_t seed = test_seed(5);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  HarnessConfig cfg;
  cfg.seed = seed;
  cfg.rtl_identity = false;
  cfg.memory.read_latency = 60;
  cfg.memory.read_latency_jitter = 20;
  cfg.memory.r_valid_prob = 0.7;
  cfg.xlate_latency_max = 10;
  cfg.data_ready_prob = 0.6;
  cfg.status_ready_prob = 0.6;
  DmaHarness h(cfg);
  for (int round = 0; round < 24; ++round) {
    for (int i = 0; i < 20; ++i) {
      const uint64_t addr = random_addr(rng);
      const uint32_t len = random_len(rng, 16 * 1024);
      h.fill_random_for(addr, len);
      h.submit(addr, len, static_cast<uint8_t>(i & 15));
    }
    const uint64_t run_for = 50 + rng() % 3000;
    for (uint64_t c = 0; c < run_for; ++c) h.step();
    // Abort as a pulse or held for a while; the requests not yet accepted stay queued.
    h.set_abort(true);
    const uint64_t hold = (round & 1) ? 1 : 1 + rng() % 200;
    for (uint64_t c = 0; c < hold; ++c) h.step();
    h.set_abort(false);
  }
  // After the last abort, everything still queued runs normally.
  REQUIRE(h.run_until_done(3'000'000));
  require_clean(h, /*allow_abort=*/true);
  size_t aborted = 0;
  for (const auto& r : h.tracked()) aborted += r.err == DmaErr::Aborted;
  CHECK(aborted > 0);
  // The last requests submitted completed normally after the aborts.
  CHECK(h.tracked().back().err != DmaErr::Aborted);
  CHECK(h.axi().idle());
}

TEST_CASE("Reset with reads in flight, then new requests work", "[dma]") {
  const uint64_t seed = test_seed(6);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  HarnessConfig cfg;
  cfg.seed = seed;
  cfg.memory.read_latency = 100;
  DmaHarness h(cfg);
  for (int i = 0; i < 10; ++i) {
    const uint64_t addr = random_addr(rng);
    h.fill_random_for(addr, 8192);
    h.submit(addr, 8192, static_cast<uint8_t>(i));
  }
  for (int c = 0; c < 400; ++c) h.step();
  REQUIRE(h.axi().stats().reads_in_flight > 0);
  h.reset();  // engine and memory model together, as a system reset
  // Whatever the engine had not accepted before the reset still runs; then new requests.
  const uint64_t addr = random_addr(rng);
  h.fill_random_for(addr, 8192);
  h.submit(addr, 8192, 10);
  h.submit(addr + 100, 1000, 11);
  REQUIRE(h.run_until_done(1'000'000));
  require_clean(h);
  REQUIRE(h.completed() >= 2);
  const auto& tracked = h.tracked();
  CHECK(tracked[tracked.size() - 2].err == DmaErr::Ok);
  CHECK(tracked.back().err == DmaErr::Ok);
  CHECK(tracked.back().data.size() == 1000);
}

TEST_CASE("Streaming keeps the bus full", "[dma][perf]") {
  // Not a benchmark (bench_dma measures); a guard that pipelining works at all.
  HarnessConfig cfg;
  cfg.memory.read_latency = 256;
  DmaHarness h(cfg);
  for (int i = 0; i < 16; ++i) {
    h.fill_random_for(kBase + i * 4096, 4096);
    h.submit(kBase + i * 4096, 4096, static_cast<uint8_t>(i));
  }
  REQUIRE(h.run_until_done(100'000));
  require_clean(h);
  const double efficiency = static_cast<double>(h.bytes_delivered()) /
                            static_cast<double>(h.cycle() * kDataBytes);
  CAPTURE(efficiency, h.cycle());
  CHECK(efficiency > 0.7);
  CHECK(h.axi().stats().max_reads_in_flight >= 2);
}

TEST_CASE("The data buffer's credits all return after busy traffic", "[dma]") {
  // A beat reserved for a read and never returned (or returned twice) shrinks (or overruns) the
  // buffer for good. With the consumer stalled, the engine reads until its buffer is full: all
  // of it (in whole bursts) on a fresh engine, and exactly as much after busy traffic in which
  // beats left the buffer in the cycles reads were issued (the consumer stalling at random).
  auto beats_read_stalled = [](DmaHarness& h) {
    h.config().data_ready_prob = 0.0;
    const uint64_t before = h.axi().stats().read_beats;
    for (int i = 0; i < 16; ++i) {
      h.fill_random_for(kBase + i * 4096, 4096);
      h.submit(kBase + i * 4096, 4096, static_cast<uint8_t>(i));
    }
    for (int c = 0; c < 20'000; ++c) h.step();
    const uint64_t beats = h.axi().stats().read_beats - before;
    h.config().data_ready_prob = 1.0;
    REQUIRE(h.run_until_done(200'000));
    return beats;
  };
  HarnessConfig cfg;
  cfg.memory.read_latency = 64;
  DmaHarness fresh(cfg);
  const uint64_t buffer_beats = fresh.top().buffer_beats_o;
  const uint64_t fresh_beats = beats_read_stalled(fresh);
  require_clean(fresh);
  CHECK(fresh_beats >= buffer_beats - 256);
  CHECK(fresh_beats <= buffer_beats);

  DmaHarness h(cfg);
  std::mt19937_64 rng(test_seed(11));
  h.config().data_ready_prob = 0.5;
  for (int i = 0; i < 200; ++i) {
    const uint64_t addr = random_addr(rng);
    const uint32_t len = random_len(rng, 16 * 1024);
    h.fill_random_for(addr, len);
    h.submit(addr, len, static_cast<uint8_t>(i & 15));
  }
  REQUIRE(h.run_until_done(3'000'000));
  const uint64_t warm_beats = beats_read_stalled(h);
  require_clean(h);
  CAPTURE(buffer_beats, fresh_beats, warm_beats);
  CHECK(warm_beats == fresh_beats);
}
