// The UltraScale+ (Alveo) shell with a behavioural XDMA AXI-Bridge model: BAR0 through m_axib,
// the core's DMA through s_axib with XDMA's rules checked (contiguous strobes, 32 reads and 32
// writes in flight, AXI), MSI through usr_irq_req/ack, and the shell's 48-bit reach.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "board/board_ring.hpp"
#include "board/usp_board.hpp"
#include "common/test_seed.hpp"
#include "sgpu/gen/abi.hpp"

using namespace sgpu;
using namespace sgpu::board;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kSrc = 0x1'2000'0000;
constexpr std::uint64_t kDst = 0x1'3000'0000;
constexpr auto kIrq = abi::fence_flags::kIrq | abi::fence_flags::kValue64;

UspBoardConfig config_for(std::uint64_t seed) {
  UspBoardConfig c;
  c.seed = seed;
  return c;
}

std::uint32_t field(std::uint32_t reg, std::uint32_t mask, unsigned lsb) { return (reg & mask) >> lsb; }

}  // namespace

TEST_CASE("US+: enumeration, BAR0 through m_axib, the reach in CAP_BUS", "[usp]") {
  UspBoard b(config_for(tb::test_seed(1)));
  const Enumerated e = enumerate(b);
  CHECK(e.link_width == 8);
  CHECK(e.link_gen == 3);
  CHECK(b.bar0_read32(SGPU_BOARD_REG(ID_MAGIC)) == 0x53475055u);
  const std::uint32_t bus = b.bar0_read32(SGPU_BOARD_REG(CAP_BUS));
  CHECK(field(bus, SGPU_REGS__CAP_BUS__DATA_BYTES_bm, SGPU_REGS__CAP_BUS__DATA_BYTES_bp) == 32);
  CHECK(field(bus, SGPU_REGS__CAP_BUS__ADDR_BITS_bm, SGPU_REGS__CAP_BUS__ADDR_BITS_bp) == 48);  // the AXI BAR
  const std::uint32_t reg = SGPU_BOARD_REG(PREEMPT_FENCE_LO);
  b.bar0_write32(reg, 0x11223344);
  const std::uint8_t byte = 0xab;
  b.bar0_write(reg + 1, &byte, 1);
  CHECK(b.bar0_read32(reg) == 0x1122ab44u);
}

TEST_CASE("US+: copies at any alignment reach host memory with contiguous strobes only", "[usp][dma]") {
  const auto seed = tb::test_seed(2);
  CAPTURE(seed);
  UspBoard b(config_for(seed));
  enumerate(b);
  BoardRing ring(b, 6);
  std::vector<std::uint8_t> src(0x6000);
  std::mt19937 rng(static_cast<std::uint32_t>(seed));
  for (auto& x : src) x = static_cast<std::uint8_t>(rng());
  ring.mem().write(kSrc, src.data(), src.size());
  std::vector<std::uint8_t> expect(0x8000, 0x5a);
  ring.mem().write(kDst, expect.data(), expect.size());
  model::PacketStream p;
  struct Copy { std::uint32_t s, d, n; };
  const std::vector<Copy> copies = {{0, 0, 0x1000}, {3, 0x1005, 1}, {1, 0x1103, 2}, {7, 0x1201, 45},
                                    {0x1001, 0x2003, 0x1800}, {5, 0x3ffd, 9}, {0x10, 0x4011, 0x1fee}};
  for (const auto& c : copies) {
    p.copy(kSrc + c.s, kDst + c.d, c.n);
    std::memcpy(expect.data() + c.d, src.data() + c.s, c.n);
  }
  // WRITE_DATA of single dwords: partial strobes within one 256-bit beat.
  p.write_data(kDst + 0x7004, {0xa1a2a3a4});
  std::memcpy(expect.data() + 0x7004, "\xa4\xa3\xa2\xa1", 4);
  p.fence(kDst + 0x7f00, 1, kIrq);
  ring.push(p, 1);
  ring.doorbell();
  REQUIRE(ring.wait_interrupt(5ms) != 0);
  REQUIRE(ring.wait_fence(1));
  std::vector<std::uint8_t> got(0x7f00);
  ring.mem().read(kDst, got.data(), got.size());
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != expect[i]) FAIL("byte " << i << " is " << int(got[i]) << ", expected " << int(expect[i]));
  CHECK(b.bridge_stats().max_reads_in_flight >= 2);  // the core's bursts: up to 4 KiB each
  CHECK(b.bridge_stats().max_reads_in_flight <= 32);
}

TEST_CASE("US+: an access beyond the AXI BAR's reach is refused in the shell (DECERR, fault)", "[usp][error]") {
  UspBoard b(config_for(tb::test_seed(3)));
  enumerate(b);
  BoardRing ring(b);
  model::PacketStream p;
  // A privileged-free COPY reads through the GART's identity range only below 2^52; 2^50 is
  // within that but beyond the bridge's 2^48.
  p.copy(std::uint64_t{1} << 50, kDst, 64);
  ring.push(p, 1);
  ring.doorbell();
  const std::uint32_t status = ring.wait_interrupt(5ms);
  CHECK((status & SGPU_REGS__INT_STATUS__FAULT_bm) != 0);
  const std::uint32_t fs = ring.reg(SGPU_BOARD_REG(FAULT_STATUS));
  CHECK(field(fs, SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
        static_cast<std::uint32_t>(abi::Fault::BusError));
  CHECK(b.host_port().stats().read_bursts == 2);  // the ring entry and the buffer: nothing beyond
}
