// Benchmark of the whole front end (sgpu_top through the ring, 64-bit bus, 256-cycle read
// latency, 64-cycle write-response latency). Prints one JSON object on stdout:
//
//   cp_copy_efficiency_64k     one 64 KiB COPY (source and destination 4 KiB aligned) in one
//                              ring entry: bytes / (cycles x bus bytes), cycles from the doorbell
//                              write to the entry's fence in the write-back record (ring-entry
//                              and buffer fetch, the copy, its last write response, write-back)
//   cp_fill_efficiency_64k     the same for a 64 KiB FILL
//   cp_copy_efficiency_1m      the same for a 1 MiB COPY (the fixed costs amortised)
//   cp_blit_efficiency_256x256 one BLIT_RECT of 256 x 256 32-bit pixels, pitches 8192 -> 5120
//                              (the block's blit_efficiency_256x256 request), measured the same way
//   doorbell_to_fetch_cycles   RING_TAIL write completed on the register port -> the first ring
//                              read accepted by the memory
//   fence_latency_cycles       the write response of the last WRITE_DATA before a FENCE -> the
//                              fence value in memory
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

sim::SimConfig config() {
  sim::SimConfig c;
  c.read_latency = 256;
  c.write_latency = 64;
  c.seed = 1;
  return c;
}

constexpr std::uint64_t kSrc = kDataAddr;
constexpr std::uint64_t kDst = kDataAddr + 0x100000;
constexpr std::uint32_t kBytes = 64u << 10;

/// Cycles from the doorbell to the write-back record showing `fence` (0 on timeout).
std::uint64_t run_entry(RingHarness& h, const Packets& p, std::uint64_t fence) {
  h.push(p, fence);
  h.doorbell();
  const std::uint64_t c0 = h.dev().cycle();
  for (std::uint64_t n = 0; n < 2'000'000; ++n) {
    if (h.writeback().fence == fence) return h.dev().cycle() - c0;
    h.dev().step(1);
  }
  return 0;
}

double round3(double v) { return static_cast<double>(static_cast<std::int64_t>(v * 1000 + 0.5)) / 1000; }

}  // namespace

int main() {
  bool ok = true;
  nlohmann::json out;
  {
    RingHarness h(config());
    const unsigned bus = h.reg(SGPU_REG(CAP_BUS)) & SGPU_REGS__CAP_BUS__DATA_BYTES_bm;
    for (std::uint32_t i = 0; i < kBytes; i += 4) h.mem().write32(kSrc + i, i * 2654435761u);
    Packets copy;
    copy.copy(kSrc, kDst, kBytes);
    const std::uint64_t c_copy = run_entry(h, copy, 1);
    for (std::uint32_t i = 0; i < kBytes && ok; i += 4) ok = h.mem().read32(kDst + i) == i * 2654435761u;
    Packets fill;
    fill.fill(kDst, kBytes, 0x12345678);
    const std::uint64_t c_fill = run_entry(h, fill, 2);
    ok = ok && c_copy != 0 && c_fill != 0 && h.mem().read32(kDst + kBytes - 4) == 0x12345678;
    const std::uint32_t big = 1u << 20;
    Packets copy_big;
    copy_big.copy(kSrc, kDst + 0x200000, big);
    const std::uint64_t c_big = run_entry(h, copy_big, 3);
    ok = ok && c_big != 0 && h.mem().read32(kDst + 0x200000 + 0x40) == h.mem().read32(kSrc + 0x40);
    const std::uint64_t bsrc = kDataAddr + 0x400000, bdst = kDataAddr + 0x800000;
    for (std::uint32_t y = 0; y < 256; ++y) h.mem().write32(bsrc + 8192ull * y + 4 * y, 0xb000 + y);
    Packets blit;
    blit.blit_rect(bsrc, bdst, 1024, 256, 8192, 5120);
    const std::uint64_t c_blit = run_entry(h, blit, 4);
    ok = ok && c_blit != 0 && h.mem().read32(bdst + 5120ull * 200 + 800) == 0xb000 + 200;
    out["cp_blit_efficiency_256x256"] = round3(static_cast<double>(256 * 1024) / static_cast<double>(c_blit * bus));
    out["cp_copy_efficiency_1m"] = round3(static_cast<double>(big) / static_cast<double>(c_big * bus));
    out["cp_copy_efficiency_64k"] = round3(static_cast<double>(kBytes) / static_cast<double>(c_copy * bus));
    out["cp_fill_efficiency_64k"] = round3(static_cast<double>(kBytes) / static_cast<double>(c_fill * bus));
  }
  {
    RingHarness h(config());
    // Doorbell to first fetch: an empty entry.
    Packets nop;
    nop.nop(1);
    h.push(nop, 1);
    h.doorbell();
    const std::uint64_t c0 = h.dev().cycle();
    std::uint64_t d2f = 0;
    for (std::uint64_t n = 0; n < 10'000 && d2f == 0; ++n) {
      if (h.dev().memory_port().stats().reads_in_flight > 0) d2f = h.dev().cycle() - c0;
      h.dev().step(1);
    }
    ok = ok && d2f != 0 && h.wait_fence(1);
    h.dev().step(1000);  // the write-back record's second write is acknowledged too
    out["doorbell_to_fetch_cycles"] = d2f;

    // Fence latency: WRITE_DATA, then FENCE; from the data write's response to the fence value.
    Packets p;
    p.write_data(kDst, {0xabc});
    p.fence(kDst + 0x100, 0x5151, 0);
    h.push(p, 2);
    const std::uint64_t bursts = h.dev().memory_port().stats().write_bursts;
    h.doorbell();
    std::uint64_t c_ack = 0, c_fence = 0;
    for (std::uint64_t n = 0; n < 100'000 && c_fence == 0; ++n) {
      if (c_ack == 0 && h.dev().memory_port().stats().write_bursts > bursts) c_ack = h.dev().cycle();
      if (h.mem().read32(kDst + 0x100) == 0x5151) c_fence = h.dev().cycle();
      h.dev().step(1);
    }
    ok = ok && c_ack != 0 && c_fence > c_ack;
    out["fence_latency_cycles"] = c_fence - c_ack;
  }
  std::printf("%s\n", out.dump().c_str());
  if (!ok) {
    std::fprintf(stderr, "bench_top: a run failed\n");
    return 1;
  }
  return 0;
}
