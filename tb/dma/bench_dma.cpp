// Benchmark of the DMA fetch engine: bus efficiency (bytes delivered per cycle / bus bytes per
// cycle) for many back-to-back requests, measured from the first request's acceptance to the
// last status, with the consumer always ready and the RTL identity translator.
//
// Prints one JSON object on stdout (`make bench` merges it with the other benchmarks).
// `--table` prints instead a Markdown table of efficiency against read latency and request
// size (docs/dma.md shows it).
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "dma_harness.hpp"

using namespace sgpu::tb;
using namespace sgpu::tb::dma;

namespace {

struct Measurement {
  double efficiency = 0;
  uint64_t max_reads_in_flight = 0;
  uint64_t cycles = 0;
  bool ok = false;
};

/// Streams `total` bytes as back-to-back requests of `size` bytes at `latency` cycles.
Measurement measure(unsigned latency, uint32_t size, uint64_t total) {
  HarnessConfig cfg;
  cfg.memory.read_latency = latency;
  cfg.rtl_identity = true;
  DmaHarness h(cfg);
  const uint64_t count = std::max<uint64_t>(total / size, 4);
  const uint64_t base = 0x10'0000'0000ull;
  for (uint64_t i = 0; i < count; ++i) {
    h.submit(base + i * size, size, static_cast<uint8_t>(i & 15));
  }
  Measurement m;
  m.ok = h.run_until_done(100'000'000) && h.ok();
  for (const auto& r : h.tracked()) m.ok = m.ok && r.err == DmaErr::Ok && r.data.size() == size;
  const uint64_t first = h.tracked().front().accept_cycle;
  const uint64_t last = h.tracked().back().status_cycle;
  m.cycles = last - first + 1;
  m.efficiency = static_cast<double>(count * size) / static_cast<double>(m.cycles * kDataBytes);
  m.max_reads_in_flight = h.axi().stats().max_reads_in_flight;
  return m;
}

uint64_t total_for(uint32_t size) { return std::max<uint64_t>(uint64_t{1} << 20, 4ull * size); }

double round3(double v) { return static_cast<double>(static_cast<int64_t>(v * 1000 + 0.5)) / 1000; }

}  // namespace

int main(int argc, char** argv) {
  const bool table = argc > 1 && std::strcmp(argv[1], "--table") == 0;
  if (argc > 1 && !table) {
    std::fprintf(stderr, "usage: %s [--table]\n", argv[0]);
    return 2;
  }
  const std::string suffix = kDataBytes == 8 ? "" : "_w" + std::to_string(kDataBytes * 8);

  if (table) {
    const unsigned latencies[] = {16, 64, 256, 1024, 2048};
    const std::pair<uint32_t, const char*> sizes[] = {
        {256, "256 B"}, {4096, "4 KiB"}, {65536, "64 KiB"}, {1u << 20, "1 MiB"}};
    std::printf("| %u-bit bus, read latency | 256 B | 4 KiB | 64 KiB | 1 MiB |\n",
                kDataBytes * 8);
    std::printf("|---|---|---|---|---|\n");
    for (unsigned lat : latencies) {
      std::printf("| %u cycles |", lat);
      for (const auto& [size, name] : sizes) {
        const Measurement m = measure(lat, size, total_for(size));
        std::printf(" %.3f%s |", m.efficiency, m.ok ? "" : " (FAILED)");
        std::fflush(stdout);
      }
      std::printf("\n");
    }
    return 0;
  }

  nlohmann::json out;
  const auto start = std::chrono::steady_clock::now();
  uint64_t cycles = 0;
  uint64_t outstanding = 0;
  bool ok = true;
  auto record = [&](const std::string& key, unsigned latency, uint32_t size) {
    const Measurement m = measure(latency, size, total_for(size));
    out[key + suffix] = round3(m.efficiency);
    cycles += m.cycles;
    outstanding = std::max(outstanding, m.max_reads_in_flight);
    ok = ok && m.ok;
  };
  record("dma_fetch_efficiency_lat256_64k", 256, 65536);
  record("dma_fetch_efficiency_lat256_4k", 256, 4096);
  record("dma_fetch_efficiency_lat1024_64k", 1024, 65536);
  record("dma_fetch_efficiency_lat2048_64k", 2048, 65536);
  record("dma_fetch_efficiency_lat256_256b", 256, 256);
  record("dma_fetch_efficiency_lat64_4k", 64, 4096);
  out["dma_fetch_outstanding_max" + suffix] = outstanding;
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  out["dma_sim_cycles_per_second" + suffix] = static_cast<double>(static_cast<uint64_t>(
      static_cast<double>(cycles) / seconds));
  std::printf("%s\n", out.dump().c_str());
  if (!ok) {
    std::fprintf(stderr, "bench_dma: a measured run failed its data or protocol checks\n");
    return 1;
  }
  return 0;
}
