// Benchmarks of the co-simulated boards. Prints one JSON object on stdout:
//
//   board_sim_dma_efficiency_64k   the Artix-7 board (LitePCIe shell, Gen2 x4, 128-bit at
//                                  125 MHz): a 64 KiB COPY; the bytes the device read per user
//                                  clock cycle, from its first read request reaching the root
//                                  complex to the last completion received by the hard block,
//                                  divided by the link's rate at its width (Gen2 x4: 2 GB/s,
//                                  16 bytes per 125 MHz cycle)
//   board_sim_dma_link_ceiling_64k the most that ratio can be on this link with the model's
//                                  64-byte completions: payload / (payload + header + framing)
//   board_sim_mmio_write_cycles    user clock cycles from the host posting a register write to
//                                  its completion at the core's register block (link, transaction
//                                  layer, BAR bridge, clock crossing and back)
//   board_sim_mmio_read_cycles     user clock cycles of a register read's round trip: request
//                                  sent by the root complex to its completion received
//   board_sim_s7_reads_in_flight   most device reads outstanding at the root complex during the
//                                  copy (LitePCIe's tags: 8)
//   board_sim_usp_reads_in_flight  the same on the UltraScale+ shell's s_axib port (AXI bursts;
//                                  XDMA allows 32)
#include <cstdio>
#include <cstring>

#include <nlohmann/json.hpp>

#include "board/board_ring.hpp"
#include "board/s7_board.hpp"
#include "board/usp_board.hpp"

using namespace sgpu;
using namespace sgpu::board;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kSrc = 0x1'2000'0000;
constexpr std::uint64_t kDst = 0x1'3000'0000;
constexpr std::uint32_t kBytes = 64u << 10;
constexpr auto kIrq = abi::fence_flags::kIrq | abi::fence_flags::kValue64;

model::PacketStream copy_64k() {
  model::PacketStream p;
  p.copy(kSrc, kDst, kBytes);
  p.fence(kDst + 0x20000, 1, kIrq);
  return p;
}

}  // namespace

int main() {
  nlohmann::json out;

  // ---- Artix-7 board: DMA read efficiency.
  {
    S7BoardConfig c;
    c.rc.read_jitter_ns = 0;
    S7Board b(c);
    enumerate(b);
    BoardRing ring(b);
    std::vector<std::uint8_t> src(kBytes);
    for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7);
    ring.mem().write(kSrc, src.data(), src.size());
    ring.push(copy_64k(), 1);
    b.root_complex().reset_stats();
    ring.doorbell();
    if (!ring.wait_interrupt(10ms)) {
      std::fprintf(stderr, "bench_board: the copy did not finish\n");
      return 1;
    }
    const auto& st = b.root_complex().stats();
    const double period_ps = 1e12 / b.config().user_clock_hz;
    // The copy's reads: everything read after the ring entry and the buffer (their completions
    // come first); its bytes are the copy's.
    const double window_cycles = static_cast<double>(st.last_completion_ps - st.first_read_ps) / period_ps;
    const double link_bytes_per_cycle = 16.0;  // Gen2 x4 after 8b/10b: 2 bytes/ns at 125 MHz
    out["board_sim_dma_efficiency_64k"] = (kBytes / window_cycles) / link_bytes_per_cycle;
    const double cpl = 64, hdr = 12, framing = c.rc.tlp_overhead_bytes;
    out["board_sim_dma_link_ceiling_64k"] = cpl / (cpl + hdr + framing);
    out["board_sim_s7_reads_in_flight"] = st.max_reads_in_flight;
    std::vector<std::uint8_t> got(kBytes);
    ring.mem().read(kDst, got.data(), got.size());
    if (got != src) {
      std::fprintf(stderr, "bench_board: the copy is wrong\n");
      return 1;
    }

    // ---- register access latency through the shell.
    const std::uint32_t reg = SGPU_BOARD_REG(PREEMPT_FENCE_LO);
    b.run_for(5us);
    const std::uint64_t w0 = b.user_cycles(), n0 = b.register_writes();
    b.bar0_write32(reg, 0x1234);
    while (b.register_writes() == n0) b.run_for(8ns);
    out["board_sim_mmio_write_cycles"] = b.user_cycles() - w0;
    b.run_for(2us);
    const std::uint64_t r0 = b.user_cycles();
    const std::uint32_t v = b.bar0_read32(reg);
    out["board_sim_mmio_read_cycles"] = b.user_cycles() - r0;
    if (v != 0x1234) {
      std::fprintf(stderr, "bench_board: the register read back %#x\n", v);
      return 1;
    }
  }

  // ---- UltraScale+ shell: reads in flight on XDMA's AXI port.
  {
    UspBoard b;
    enumerate(b);
    BoardRing ring(b);
    ring.push(copy_64k(), 1);
    ring.doorbell();
    if (!ring.wait_interrupt(10ms)) {
      std::fprintf(stderr, "bench_board: the US+ copy did not finish\n");
      return 1;
    }
    out["board_sim_usp_reads_in_flight"] = b.bridge_stats().max_reads_in_flight;
  }

  std::printf("%s\n", out.dump(2).c_str());
  return 0;
}
