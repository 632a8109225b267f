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
//   cp_nop_packets_per_cycle   decode rate of 1-dword NOPs after fetch: two entries of 2 048 and
//                              10 240 NOPs, (difference in packets) / (difference in cycles), so
//                              the fixed costs (ring entry, first fetch, write-back) cancel
//   cp_write_data_packets_per_cycle  the same for WRITE_DATA packets with one data dword (each an
//                              8-byte write: bounded by writes in flight / write latency)
//   cp_write_data_packets_per_cycle_{4,8,16}dw  the same with 4, 8 and 16 data dwords to an
//                              8-byte aligned destination (dword pairs leave as one 8-byte write)
//   cp_small_submissions_per_us  ring entries of one 1-dword WRITE_DATA packet back to back
//                              behind one doorbell: entries of 8 and 40, (difference in entries) /
//                              (difference in cycles) at the simulated 250 MHz clock
//   cp_wait_mem_cycles         extra cycles of a WAIT_MEM satisfied at its first read (stream
//                              stop, drain, poll read, re-request) against a 6-dword NOP
//   cp_preempt_latency_cycles  PREEMPT.request written -> INT_STATUS.preempted, during a 1 MiB COPY
//                              (the copy is cut: the engine drains, the record is written)
//   cp_indirect_cycles         extra cycles of calling 64 NOPs through an INDIRECT against the
//                              same NOPs inline (stream stop, called buffer's fetch, re-request)
#include <cstdio>
#include <string>
#include <vector>

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
  {
    // Packet rates: the difference of two entries cancels the fixed costs.
    RingHarness h(config());
    std::uint64_t fence = 0;
    const auto rate = [&](auto&& append, std::uint32_t n1, std::uint32_t n2) {
      std::uint64_t c[2] = {};
      const std::uint32_t n[2] = {n1, n2};
      for (int k = 0; k < 2; ++k) {
        Packets p;
        for (std::uint32_t i = 0; i < n[k]; ++i) append(p, i);
        c[k] = run_entry(h, p, ++fence);
        h.dev().step(200);
      }
      ok = ok && c[0] != 0 && c[1] > c[0];
      return static_cast<double>(n2 - n1) / static_cast<double>(c[1] - c[0]);
    };
    out["cp_nop_packets_per_cycle"] = round3(rate([](Packets& p, std::uint32_t) { p.nop(1); }, 2048, 10240));
    out["cp_write_data_packets_per_cycle"] =
        round3(rate([](Packets& p, std::uint32_t i) { p.write_data(kDst + 4 * (i % 4096), {i}); }, 512, 2560));
    ok = ok && h.mem().read32(kDst + 4 * 2559) == 2559;
    for (const std::uint32_t n : {4u, 8u, 16u}) {
      const auto packet = [n](Packets& p, std::uint32_t i) {
        std::vector<std::uint32_t> data(n);
        for (std::uint32_t k = 0; k < n; ++k) data[k] = i * n + k;
        p.write_data(kDst + 4 * ((i * n) % 16384), data);
      };
      out["cp_write_data_packets_per_cycle_" + std::to_string(n) + "dw"] = round3(rate(packet, 256, 1280));
      ok = ok && h.mem().read32(kDst + 4 * ((1279 * n) % 16384)) == 1279 * n;
    }
    h.mem().write32(kSrc, 1);
    Packets with_wait, with_nop;
    with_wait.nop(1).wait_mem(kSrc, abi::WaitMemFunc::Eq, 1, 0xffffffffu).nop(64);
    with_nop.nop(1).nop(6).nop(64);
    const std::uint64_t c_wait = run_entry(h, with_wait, ++fence);
    h.dev().step(200);
    const std::uint64_t c_nop = run_entry(h, with_nop, ++fence);
    ok = ok && c_wait != 0 && c_nop != 0;
    out["cp_wait_mem_cycles"] = static_cast<std::int64_t>(c_wait) - static_cast<std::int64_t>(c_nop);
    Packets called, inline_nops, with_call;
    for (int i = 0; i < 64; ++i) called.nop(1);
    h.mem().write(kSrc + 0x1000, called.words().data(), called.bytes());
    with_call.nop(1).indirect(kSrc + 0x1000, called.bytes()).nop(64);
    inline_nops.nop(1).append(called).nop(64);
    h.dev().step(200);
    const std::uint64_t c_call = run_entry(h, with_call, ++fence);
    h.dev().step(200);
    const std::uint64_t c_inline = run_entry(h, inline_nops, ++fence);
    ok = ok && c_call != 0 && c_inline != 0;
    out["cp_indirect_cycles"] = static_cast<std::int64_t>(c_call) - static_cast<std::int64_t>(c_inline);
  }
  {
    // Small submissions: one doorbell for a run of 1-packet ring entries; the difference of two
    // runs cancels the doorbell and the first fetch.
    RingHarness h(config(), 7);
    std::uint64_t fence = 0;
    std::uint64_t c[2] = {};
    const std::uint32_t n[2] = {8, 40};
    for (int k = 0; k < 2; ++k) {
      const std::uint64_t first = fence + 1;
      for (std::uint32_t i = 0; i < n[k]; ++i) {
        Packets p;
        p.write_data(kDst + 8 * i, {static_cast<std::uint32_t>(first + i)});
        h.push(p, ++fence);
      }
      h.doorbell();
      const std::uint64_t c0 = h.dev().cycle();
      for (std::uint64_t t = 0; t < 1'000'000 && c[k] == 0; ++t) {
        if (h.writeback().fence == fence) c[k] = h.dev().cycle() - c0;
        h.dev().step(1);
      }
      ok = ok && c[k] != 0 && h.mem().read32(kDst + 8 * (n[k] - 1)) == fence;
      h.dev().step(200);
    }
    ok = ok && c[1] > c[0];
    const double mhz = h.dev().config().clock_hz / 1e6;
    out["cp_small_submissions_per_us"] =
        round3(static_cast<double>(n[1] - n[0]) * mhz / static_cast<double>(c[1] - c[0]));
  }
  {
    RingHarness h(config());
    const std::uint64_t rec = kWritebackAddr + 0x100;
    h.dev().mmio_write32(SGPU_REG(PREEMPT_ADDR_LO), static_cast<std::uint32_t>(rec));
    h.dev().mmio_write32(SGPU_REG(PREEMPT_ADDR_HI), static_cast<std::uint32_t>(rec >> 32));
    h.dev().mmio_write32(SGPU_REG(INT_ENABLE), SGPU_REGS__INT_ENABLE__PREEMPTED_bm);  // irq = preempted
    Packets big;
    big.copy(kSrc, kDst, 1u << 20);
    h.push(big, 1);
    h.doorbell();
    h.dev().step(20000);
    h.dev().mmio_write32(SGPU_REG(PREEMPT), SGPU_REGS__PREEMPT__REQUEST_bm);
    const std::uint64_t c0 = h.dev().cycle();
    std::uint64_t lat = 0;
    for (std::uint64_t n = 0; n < 200'000 && lat == 0; ++n) {
      if (h.dev().irq()) lat = h.dev().cycle() - c0;
      h.dev().step(1);
    }
    ok = ok && lat != 0;
    out["cp_preempt_latency_cycles"] = lat;
  }
  std::printf("%s\n", out.dump().c_str());
  if (!ok) {
    std::fprintf(stderr, "bench_top: a run failed\n");
    return 1;
  }
  return 0;
}
