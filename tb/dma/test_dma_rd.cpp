// Tests of the DMA fetch engine (sgpu_dma_rd) in its Verilated model: every request's bytes are
// compared with the memory model, every cycle of the AXI port goes through the protocol
// checker, and every random choice comes from the printed seed (SGPU_SEED reproduces a run).
#include <catch2/catch.hpp>

#include <random>

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
