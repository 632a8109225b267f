// Benchmark of the GART in the fetch engine's read path (sgpu_gart_tb_top, 64-bit bus, 256-cycle
// read latency). Prints one JSON object on stdout:
//
//   gart_stream_ratio          cycles to stream 1 MiB through the identity translator divided
//                              by cycles to stream it through the aperture (scattered pages):
//                              throughput through the aperture / through an identity mapping
//   gart_tlb_hit_rate          1 - misses / lookups of that aperture stream (a miss = a
//                              translation that had to wait for a page-table walk)
//   gart_miss_penalty_cycles   extra cycles of an isolated miss over a hit (direct port)
//   gart_stream_efficiency     bytes per cycle / bus bytes of the aperture stream
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "gart_harness.hpp"

using namespace sgpu::tb;
using namespace sgpu::tb::gart;

namespace {

constexpr unsigned kLatency = 256;
constexpr uint32_t kTotal = 1u << 20;
constexpr uint32_t kRequest = 64u << 10;
constexpr uint64_t kPages = 0x3'0000'0000ull;

HarnessConfig config() {
  HarnessConfig c;
  c.memory.read_latency = kLatency;
  c.seed = 1;
  return c;
}

struct Stream {
  uint64_t cycles = 0;
  bool ok = false;
};

Stream stream(GartHarness& h, uint64_t base) {
  for (uint32_t off = 0; off < kTotal; off += kRequest) h.fetch(base + off, kRequest);
  Stream s;
  s.ok = h.run_until_idle(50'000'000) && h.ok();
  for (const auto& f : h.fetches()) s.ok = s.ok && f.err == DmaErr::Ok && f.data.size() == f.len;
  s.cycles = h.fetches().back().status_cycle - h.fetches().front().accept_cycle + 1;
  return s;
}

}  // namespace

int main() {
  // One harness at a time: Verilator (5.006) tears a model's scopes down through the thread's
  // current context, so models of different contexts must not outlive each other.
  Stream base, through;
  double hit_rate = 0;
  uint64_t penalty = 0;
  bool ok = true;
  std::string report;
  {
    // Identity baseline: the same engine and bus, translated by sgpu_xlate_identity.
    GartHarness id(config());
    id.set_mode(1);
    base = stream(id, kPages);
    if (!base.ok) report += id.report();
  }
  {
    // Aperture: 256 pages scattered over host memory.
    GartHarness ap(config());
    ap.set_mode(0);
    const uint32_t pages = kTotal / 4096;
    for (uint32_t i = 0; i < pages; ++i) {
      ap.write_pte(i, pte(kPages + (uint64_t{i} * 7919 % 65536) * 0x1000, kPteValid));
    }
    ap.set_table_size(pages);
    through = stream(ap, kApBase);
    hit_rate = 1.0 - static_cast<double>(ap.perf_misses()) / static_cast<double>(ap.perf_lookups());
    if (!through.ok) report += ap.report();
  }
  {
    // Isolated miss against a hit, on the direct port.
    GartHarness d(config());
    d.set_mode(2);
    for (uint32_t i = 0; i < 64; ++i) d.write_pte(i, pte(kPages + uint64_t{i} * 0x1000, kPteValid));
    d.set_table_size(64);
    const DxReq miss = d.translate_one(GartHarness::ap_vpn(20));
    const DxReq hit = d.translate_one(GartHarness::ap_vpn(21));
    ok = d.ok() && !miss.got.fault && !hit.got.fault;
    if (!ok) report += d.report();
    penalty = (miss.rsp_cycle - miss.accept_cycle) - (hit.rsp_cycle - hit.accept_cycle);
  }
  ok = ok && base.ok && through.ok;

  auto round3 = [](double v) { return static_cast<double>(static_cast<int64_t>(v * 1000 + 0.5)) / 1000; };
  nlohmann::json out;
  out["gart_stream_ratio"] = round3(static_cast<double>(base.cycles) / static_cast<double>(through.cycles));
  out["gart_tlb_hit_rate"] = round3(hit_rate);
  out["gart_miss_penalty_cycles"] = penalty;
  out["gart_stream_efficiency"] = round3(static_cast<double>(kTotal) / static_cast<double>(through.cycles * kDataBytes));
  std::printf("%s\n", out.dump().c_str());
  if (!ok) {
    std::fprintf(stderr, "bench_gart: a run failed\n%s", report.c_str());
    return 1;
  }
  return 0;
}
