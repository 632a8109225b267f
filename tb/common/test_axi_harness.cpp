// Tests of the harness itself: the memory model does what its Config says and the checker
// catches each kind of broken handshake while accepting clean traffic.
#include <catch2/catch.hpp>

#include <cstring>
#include <deque>
#include <random>
#include <vector>

#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/host_memory.hpp"
#include "common/test_seed.hpp"

using namespace sgpu::tb;

namespace {

void fill_random(HostMemory& mem, uint64_t addr, size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> bytes(n);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  mem.write(addr, bytes.data(), n);
}

/// A software AXI read manager that issues a list of bursts, accepts R beats with a given
/// probability and records every beat it receives.
struct ReadManager {
  struct Burst {
    uint64_t addr;
    uint8_t len;
    uint8_t size;
  };
  struct Beat {
    std::array<uint8_t, kAxiMaxDataBytes> data;
    uint8_t resp;
    bool last;
  };
  std::deque<Burst> to_issue;
  std::vector<Beat> received;
  double r_ready_prob = 1.0;
  std::mt19937_64 rng{7};

  AxiManagerOut out{};

  /// Outputs for this cycle; holds AR stable until accepted, as a compliant manager must.
  const AxiManagerOut& drive() {
    out.arvalid = !to_issue.empty();
    if (out.arvalid) {
      out.araddr = to_issue.front().addr;
      out.arlen = to_issue.front().len;
      out.arsize = to_issue.front().size;
      out.arburst = kAxiBurstIncr;
    }
    out.rready = std::uniform_real_distribution<double>(0, 1)(rng) < r_ready_prob;
    return out;
  }
  void edge(const AxiSubordinateOut& s) {
    if (out.arvalid && s.arready) to_issue.pop_front();
    if (s.rvalid && out.rready) received.push_back(Beat{s.rdata, s.rresp, s.rlast});
  }
};

/// Runs manager and memory with the standard per-cycle order until the manager is done.
uint64_t run(ReadManager& manager, AxiMemoryModel& mem, AxiChecker& checker,
             uint64_t max_cycles = 100000) {
  uint64_t cycles = 0;
  while ((!manager.to_issue.empty() || !mem.idle()) && cycles < max_cycles) {
    const AxiManagerOut sample = manager.drive();
    const AxiSubordinateOut s = mem.outputs();
    checker.tick(sample, s);
    manager.edge(s);
    mem.tick(sample);
    ++cycles;
  }
  return cycles;
}

}  // namespace

TEST_CASE("HostMemory is sparse, zero-filled and byte exact across pages", "[host_memory]") {
  HostMemory mem;
  CHECK(mem.read32(0x1234'5678'9000) == 0);
  CHECK(mem.page_count() == 0);
  std::vector<uint8_t> data(10000);
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 7 + 1);
  mem.write(0xFFFF'F000 - 123, data.data(), data.size());
  std::vector<uint8_t> back(data.size());
  mem.read(0xFFFF'F000 - 123, back.data(), back.size());
  CHECK(back == data);
  CHECK(mem.page_count() == 4);
  mem.write64(0x10, 0x0123'4567'89AB'CDEFull);
  CHECK(mem.read32(0x10) == 0x89AB'CDEFu);
  CHECK(mem.read32(0x14) == 0x0123'4567u);
  CHECK(mem.read8(0x10) == 0xEF);
  CHECK(mem.read64(0x10) == 0x0123'4567'89AB'CDEFull);
}

TEST_CASE("Memory model serves reads with the configured latency", "[axi_memory]") {
  HostMemory host;
  host.write64(0x1000, 0x1111'2222'3333'4444ull);
  AxiMemoryModel::Config cfg;
  cfg.read_latency = 20;
  AxiMemoryModel mem(host, cfg);
  AxiManagerOut in{};
  in.arvalid = true;
  in.araddr = 0x1000;
  in.arsize = 3;
  in.arburst = kAxiBurstIncr;
  in.rready = true;
  REQUIRE(mem.outputs().arready);
  mem.tick(in);  // AR handshake in cycle 0
  in.arvalid = false;
  unsigned cycle = 1;
  while (!mem.outputs().rvalid && cycle < 100) {
    mem.tick(in);
    ++cycle;
  }
  CHECK(cycle == 20);
  uint64_t value = 0;
  std::memcpy(&value, mem.outputs().rdata.data(), 8);
  CHECK(value == 0x1111'2222'3333'4444ull);
  CHECK(mem.outputs().rlast);
  CHECK(mem.stats().reads_in_flight == 1);
  mem.tick(in);
  CHECK(mem.idle());
  CHECK(mem.stats().read_beats == 1);
}

TEST_CASE("Clean read traffic with back-pressure passes the checker byte-exact",
          "[axi_memory][axi_checker]") {
  const uint64_t seed = test_seed(11);
  CAPTURE(seed);
  std::mt19937_64 rng(seed);
  for (unsigned data_bytes : {8u, 16u, 64u}) {
    CAPTURE(data_bytes);
    HostMemory host;
    fill_random(host, 0x40000, 64 * 1024, rng);
    AxiMemoryModel::Config cfg;
    cfg.data_bytes = data_bytes;
    cfg.read_latency = 5;
    cfg.read_latency_jitter = 7;
    cfg.ar_ready_prob = 0.6;
    cfg.r_valid_prob = 0.7;
    cfg.max_reads_in_flight = 3;
    cfg.seed = seed;
    AxiMemoryModel mem(host, cfg);
    AxiChecker checker(data_bytes);
    ReadManager manager;
    manager.r_ready_prob = 0.5;
    std::vector<ReadManager::Burst> bursts;
    for (int i = 0; i < 200; ++i) {
      // Narrow or full size, unaligned start, never crossing 4 KiB.
      const uint8_t size = static_cast<uint8_t>(rng() % (__builtin_ctz(data_bytes) + 1));
      const uint8_t len = static_cast<uint8_t>(rng() % 16);
      const uint64_t span = (uint64_t{len} + 1) << size;
      uint64_t addr = 0x40000 + rng() % (60 * 1024);
      if ((addr & 0xFFF) + span > 0x1000) addr = (addr & ~uint64_t{0xFFF}) + 0x1000 - span;
      bursts.push_back({addr, len, size});
      manager.to_issue.push_back(bursts.back());
    }
    run(manager, mem, checker);
    INFO(checker.report());
    CHECK(checker.ok());
    CHECK(mem.stats().max_reads_in_flight <= 3);
    // Compare every valid lane of every beat against memory.
    size_t beat_index = 0;
    bool all_match = true;
    for (const auto& b : bursts) {
      const uint64_t size_bytes = uint64_t{1} << b.size;
      for (unsigned n = 0; n <= b.len; ++n, ++beat_index) {
        REQUIRE(beat_index < manager.received.size());
        const auto& beat = manager.received[beat_index];
        const uint64_t addr = n == 0 ? b.addr : (b.addr & ~(size_bytes - 1)) + n * size_bytes;
        const uint64_t base = addr & ~uint64_t{data_bytes - 1};
        const uint64_t hi = (addr & ~(size_bytes - 1)) + size_bytes;
        for (uint64_t a = addr; a < hi; ++a) {
          all_match &= beat.data[a - base] == host.read8(a);
        }
        all_match &= beat.last == (n == b.len);
      }
    }
    CHECK(all_match);
    CHECK(beat_index == manager.received.size());
  }
}

TEST_CASE("Memory model limits reads in flight and injects errors", "[axi_memory]") {
  HostMemory host;
  AxiMemoryModel::Config cfg;
  cfg.read_latency = 3;
  cfg.max_reads_in_flight = 2;
  AxiMemoryModel mem(host, cfg);
  mem.inject_error(0x2008, 0x2010, kAxiRespSlvErr);
  mem.inject_error(0x3000, 0x4000, kAxiRespDecErr);
  AxiChecker checker;
  ReadManager manager;
  manager.to_issue = {{0x2000, 3, 3}, {0x3FF8, 0, 3}, {0x5000, 0, 3}};
  run(manager, mem, checker);
  CHECK(checker.ok());
  CHECK(mem.stats().max_reads_in_flight == 2);
  REQUIRE(manager.received.size() == 6);
  CHECK(manager.received[0].resp == kAxiRespOkay);
  CHECK(manager.received[1].resp == kAxiRespSlvErr);
  CHECK(manager.received[2].resp == kAxiRespOkay);
  CHECK(manager.received[4].resp == kAxiRespDecErr);
  CHECK(manager.received[5].resp == kAxiRespOkay);
  CHECK(mem.stats().read_error_beats == 2);
}

TEST_CASE("Memory model writes honour strobes, narrow beats and error ranges", "[axi_memory]") {
  HostMemory host;
  host.fill(0x1000, 0xCC, 64);
  AxiMemoryModel::Config cfg;
  cfg.write_latency = 4;
  cfg.w_ready_prob = 0.5;
  AxiMemoryModel mem(host, cfg);
  mem.inject_error(0x1020, 0x1028, kAxiRespSlvErr);
  AxiChecker checker;

  struct W {
    uint64_t addr;
    uint8_t len, size;
    std::vector<std::pair<uint64_t, uint64_t>> beats;  // (data, strobe)
  };
  const std::vector<W> writes = {
      {0x1000, 1, 3, {{0x0807060504030201ull, 0xFF}, {0x1817161514131211ull, 0x0F}}},
      {0x1013, 1, 1, {{0x00000000AA000000ull, 0x08}, {0x0000554400000000ull, 0x30}}},
      {0x1020, 0, 3, {{0xDDDDDDDDDDDDDDDDull, 0xFF}}},
  };
  std::vector<uint8_t> bresps;
  size_t aw_next = 0, w_burst = 0, w_beat = 0;
  for (unsigned cycle = 0; cycle < 200; ++cycle) {
    AxiManagerOut m{};
    m.bready = true;
    if (aw_next < writes.size()) {
      m.awvalid = true;
      m.awaddr = writes[aw_next].addr;
      m.awlen = writes[aw_next].len;
      m.awsize = writes[aw_next].size;
      m.awburst = kAxiBurstIncr;
    }
    // Data only after its address, as the checker requires.
    if (w_burst < aw_next) {
      const auto& [data, strobe] = writes[w_burst].beats[w_beat];
      m.wvalid = true;
      std::memcpy(m.wdata.data(), &data, 8);
      m.wstrb = strobe;
      m.wlast = w_beat == writes[w_burst].len;
    }
    const AxiSubordinateOut s = mem.outputs();
    checker.tick(m, s);
    if (m.awvalid && s.awready) ++aw_next;
    if (m.wvalid && s.wready && ++w_beat > writes[w_burst].len) {
      ++w_burst;
      w_beat = 0;
    }
    if (s.bvalid) bresps.push_back(s.bresp);
    mem.tick(m);
  }
  INFO(checker.report());
  CHECK(checker.ok());
  CHECK(bresps == std::vector<uint8_t>{kAxiRespOkay, kAxiRespOkay, kAxiRespSlvErr});
  CHECK(host.read64(0x1000) == 0x0807060504030201ull);
  CHECK(host.read64(0x1008) == 0xCCCCCCCC14131211ull);
  // Narrow 2-byte beats at 0x1013 (unaligned: only lane 3) then 0x1014..0x1015.
  CHECK(host.read8(0x1013) == 0xAA);
  CHECK(host.read8(0x1014) == 0x44);
  CHECK(host.read8(0x1015) == 0x55);
  CHECK(host.read8(0x1016) == 0xCC);
  CHECK(host.read64(0x1020) == 0xCCCCCCCCCCCCCCCCull);  // error range: memory unchanged
  CHECK(mem.idle());
}

namespace {

/// Drives a checker directly with a scripted sequence of cycles.
struct Script {
  AxiChecker checker{8};
  void cycle(const AxiManagerOut& m, const AxiSubordinateOut& s) { checker.tick(m, s); }
};

AxiManagerOut ar(uint64_t addr, uint8_t len, uint8_t size = 3) {
  AxiManagerOut m{};
  m.arvalid = true;
  m.araddr = addr;
  m.arlen = len;
  m.arsize = size;
  m.arburst = kAxiBurstIncr;
  m.rready = true;
  return m;
}

bool mentions(const AxiChecker& c, const std::string& text) {
  for (const auto& v : c.violations()) {
    if (v.find(text) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("Checker catches broken handshakes", "[axi_checker]") {
  AxiSubordinateOut stall{};  // arready low: AR stays pending
  AxiSubordinateOut accept{};
  accept.arready = true;

  SECTION("valid dropped before ready") {
    Script t;
    t.cycle(ar(0x100, 3), stall);
    t.cycle(AxiManagerOut{}, stall);
    CHECK(mentions(t.checker, "arvalid dropped before arready"));
    CHECK(mentions(t.checker, "cycle 1"));
  }
  SECTION("payload changed while pending") {
    Script t;
    t.cycle(ar(0x100, 3), stall);
    t.cycle(ar(0x108, 3), accept);
    CHECK(mentions(t.checker, "AR payload changed while pending"));
  }
  SECTION("R payload changed while pending (subordinate side)") {
    Script t;
    t.cycle(ar(0x100, 1), accept);
    AxiManagerOut m{};  // rready low
    AxiSubordinateOut r{};
    r.rvalid = true;
    r.rdata[0] = 1;
    t.cycle(m, r);
    r.rdata[0] = 2;
    t.cycle(m, r);
    CHECK(mentions(t.checker, "R payload changed while pending"));
  }
  SECTION("response without request") {
    Script t;
    AxiManagerOut m{};
    m.rready = true;
    m.bready = true;
    AxiSubordinateOut r{};
    r.rvalid = true;
    r.rlast = true;
    r.bvalid = true;
    t.cycle(m, r);
    CHECK(mentions(t.checker, "no read outstanding"));
    CHECK(mentions(t.checker, "no completed write"));
  }
  SECTION("burst crossing 4 KiB and illegal size") {
    Script t;
    t.cycle(ar(0x0FF8, 1), accept);
    t.cycle(ar(0x2000, 0, 4), accept);
    CHECK(mentions(t.checker, "crosses a 4 KiB boundary"));
    CHECK(mentions(t.checker, "wider than"));
  }
  SECTION("rlast on the wrong beat") {
    Script t;
    t.cycle(ar(0x100, 1), accept);
    AxiManagerOut m{};
    m.rready = true;
    AxiSubordinateOut r{};
    r.rvalid = true;
    r.rlast = true;  // first of two beats
    t.cycle(m, r);
    CHECK(mentions(t.checker, "rlast high"));
  }
  SECTION("W beats beyond the AW and wlast misplaced") {
    Script t;
    AxiManagerOut m{};
    m.wvalid = true;
    AxiSubordinateOut s{};
    s.wready = true;
    t.cycle(m, s);
    CHECK(mentions(t.checker, "W beat without an accepted AW"));
    m.awvalid = true;
    m.awlen = 1;
    m.awsize = 3;
    m.awburst = kAxiBurstIncr;
    m.wlast = true;
    s.awready = true;
    t.cycle(m, s);
    CHECK(mentions(t.checker, "wlast high"));
  }
  SECTION("a clean pending-then-accepted handshake is fine") {
    Script t;
    t.cycle(ar(0x100, 3), stall);
    t.cycle(ar(0x100, 3), stall);
    t.cycle(ar(0x100, 3), accept);
    CHECK(t.checker.ok());
    CHECK(t.checker.reads_outstanding() == 1);
  }
}
