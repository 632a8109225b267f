// The Artix-7 board co-simulated: generated LitePCIe transaction layer + 7-series shell + core,
// with the root-complex model in place of the PCIe hard block. Everything goes through TLPs on
// the hard block's AXI-Stream interface: BAR0 accesses, the core's DMA, MSI. The model checks
// every TLP the device sends (format, byte-enable rules, boundaries, sizes, requester ID, Bus
// Master Enable) and throws on the first violation, so each test is also a protocol test.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "board/board_ring.hpp"
#include "board/s7_board.hpp"
#include "common/test_seed.hpp"
#include "sgpu/gen/abi.hpp"

using namespace sgpu;
using namespace sgpu::board;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kSrc = 0x1'2000'0000;
constexpr std::uint64_t kDst = 0x1'3000'0000;

S7BoardConfig config_for(std::uint64_t seed) {
  S7BoardConfig c;
  c.seed = seed;
  c.rc.seed = seed;
  return c;
}

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  std::mt19937 rng(seed);
  for (auto& b : v) b = static_cast<std::uint8_t>(rng());
  return v;
}

std::uint32_t field(std::uint32_t reg, std::uint32_t mask, unsigned lsb) { return (reg & mask) >> lsb; }

}  // namespace

TEST_CASE("Enumeration, BAR0 and the core's identification through TLPs", "[s7]") {
  const auto seed = tb::test_seed(1);
  CAPTURE(seed);
  S7Board b(config_for(seed));
  const Enumerated e = enumerate(b);
  CHECK(e.bar0_bytes == 4096);
  CHECK(e.link_width == 4);
  CHECK(e.link_gen == 2);
  CHECK(e.max_payload == 256);
  CHECK(e.max_read_request == 512);
  CHECK(b.bar0_read32(SGPU_BOARD_REG(ID_MAGIC)) == 0x53475055u);
  const std::uint32_t bus = b.bar0_read32(SGPU_BOARD_REG(CAP_BUS));
  CHECK(field(bus, SGPU_REGS__CAP_BUS__DATA_BYTES_bm, SGPU_REGS__CAP_BUS__DATA_BYTES_bp) == 16);  // 128-bit core
  CHECK(field(bus, SGPU_REGS__CAP_BUS__ADDR_BITS_bm, SGPU_REGS__CAP_BUS__ADDR_BITS_bp) == 64);    // full reach
}

TEST_CASE("Register writes change exactly the bytes their enables name", "[s7][bar]") {
  S7Board b(config_for(tb::test_seed(2)));
  enumerate(b);
  const std::uint32_t reg = SGPU_BOARD_REG(PREEMPT_FENCE_LO);
  b.bar0_write32(reg, 0x11223344);
  CHECK(b.bar0_read32(reg) == 0x11223344u);
  const std::uint8_t byte = 0xab;
  b.bar0_write(reg + 2, &byte, 1);  // a byte store: first_be 0100
  CHECK(b.bar0_read32(reg) == 0x11ab3344u);
  const std::uint16_t half = 0xcdef;
  b.bar0_write(reg + 1, &half, 2);  // bytes 1..2
  CHECK(b.bar0_read32(reg) == 0x11cdef44u);

  // A 64-bit store spans PREEMPT_FENCE_LO/HI: one TLP, two register writes.
  const std::uint64_t q = 0x0123'4567'89ab'cdefull;
  b.bar0_write(reg, &q, 8);
  const auto two = b.bar0_read(reg, 2);  // a 64-bit load: one read of two dwords
  std::uint64_t got = 0;
  std::memcpy(&got, two.data(), 8);
  CHECK(got == q);
  // A store crossing into the next register with partial enables on both dwords.
  const std::uint32_t mid = 0x5566'7788;
  b.bar0_write(reg + 2, &mid, 4);
  CHECK(b.bar0_read32(reg) == 0x7788'cdefu);
  CHECK(b.bar0_read32(reg + 4) == 0x0123'5566u);
  b.drain();
  CHECK(b.register_writes() == 7);  // 1 + 1 + 1 + 2 + 2 dword writes reached the registers

  // Reads with byte enables return the whole dword with the completion's byte count right (the
  // model checks byte count and lower address of every completion).
  const auto partial = b.bar0_read(reg, 1, 0x6, 0);
  CHECK(partial.size() == 4);

  // A write-combined store of five dwords, one TLP whose last dword travels alone in the hard
  // block's last beat: PREEMPT_FENCE_LO .. PREEMPT_ADDR_HI, then PREEMPT_STATUS (read-only).
  const std::uint32_t five[5] = {0xa1a2a3a4u, 0xb1b2b3b4u, 0xc1c2c3c0u, 0xd1d2d3d4u, 0};
  b.bar0_write(reg, five, sizeof five);
  b.drain();
  CHECK(b.register_writes() == 7 + 5);
  for (unsigned i = 0; i < 4; ++i) CHECK(b.bar0_read32(reg + 4 * i) == five[i]);
}

TEST_CASE("A ring submission: fetch, WRITE_DATA and fence over PCIe, then an MSI", "[s7][dma]") {
  const auto seed = tb::test_seed(3);
  CAPTURE(seed);
  S7Board b(config_for(seed));
  enumerate(b);
  BoardRing ring(b);
  model::PacketStream p;
  p.write_data(kDst, {0xdeadbeef, 0x01020304, 0xcafef00d});
  p.fence(kDst + 0x100, 0x1122'3344'5566'7788ull, abi::fence_flags::kIrq | abi::fence_flags::kValue64);
  ring.push(p, 1);
  ring.doorbell();
  const std::uint32_t status = ring.wait_interrupt();
  REQUIRE(status != 0);
  CHECK((status & SGPU_REGS__INT_STATUS__FAULT_bm) == 0);
  CHECK(ring.wait_fence(1));
  CHECK(ring.mem().read32(kDst) == 0xdeadbeefu);
  CHECK(ring.mem().read32(kDst + 4) == 0x01020304u);
  CHECK(ring.mem().read32(kDst + 8) == 0xcafef00du);
  CHECK(ring.mem().read64(kDst + 0x100) == 0x1122'3344'5566'7788ull);
  CHECK(b.msi_count() >= 1);
}

TEST_CASE("Copies land byte-exact at any alignment (byte enables of each write TLP)", "[s7][dma]") {
  const auto seed = tb::test_seed(4);
  CAPTURE(seed);
  S7Board b(config_for(seed));
  enumerate(b);
  BoardRing ring(b, 6);
  std::mt19937_64 rng(seed);
  const auto src = pattern(0x6000, static_cast<std::uint32_t>(seed));
  ring.mem().write(kSrc, src.data(), src.size());
  std::vector<std::uint8_t> canary(0x8000, 0x5a);
  ring.mem().write(kDst, canary.data(), canary.size());
  std::vector<std::uint8_t> expect = canary;

  model::PacketStream p;
  struct Copy { std::uint32_t s, d, n; };
  std::vector<Copy> copies = {{0, 0, 64}, {3, 0x105, 1}, {1, 0x203, 2}, {7, 0x301, 13}, {0, 0x40f, 0x333},
                              {0x1001, 0x1003, 0x1000}, {5, 0x2ffd, 7}};
  for (int i = 0; i < 6; ++i) {
    const auto s = static_cast<std::uint32_t>(rng() % 0x4000);
    const auto n = static_cast<std::uint32_t>(1 + rng() % 700);
    copies.push_back({s, 0x3800 + static_cast<std::uint32_t>(i) * 0x800 + static_cast<std::uint32_t>(rng() % 16), n});
  }
  for (const auto& c : copies) {
    p.copy(kSrc + c.s, kDst + c.d, c.n);
    std::memcpy(expect.data() + c.d, src.data() + c.s, c.n);
  }
  p.fence(kDst + 0x7f00, 1, abi::fence_flags::kIrq | abi::fence_flags::kValue64);
  ring.push(p, 1);
  ring.doorbell();
  REQUIRE(ring.wait_interrupt(5ms) != 0);
  REQUIRE(ring.wait_fence(1));
  std::vector<std::uint8_t> got(expect.size());
  ring.mem().read(kDst, got.data(), got.size());
  for (std::size_t i = 0; i < 0x7f00; ++i) {
    if (got[i] != expect[i]) {
      FAIL("byte " << i << " of the destination is " << int(got[i]) << ", expected " << int(expect[i]));
    }
  }
  const auto& st = b.root_complex().stats();
  CHECK(st.device_writes > copies.size());  // split at Max_Payload_Size and at every hole
  CHECK(st.max_reads_in_flight > 1);
}

TEST_CASE("Reads keep the bridge's tags busy, completions reorder and split at the RCB", "[s7][dma]") {
  const auto seed = tb::test_seed(5);
  CAPTURE(seed);
  S7BoardConfig c = config_for(seed);
  c.rc.read_jitter_ns = 800;   // completions of different reads overtake each other
  c.rc.completion_bytes = 64;  // RCB-sized completions
  S7Board b(c);
  enumerate(b);
  BoardRing ring(b);
  const auto src = pattern(0x10000, 9);
  ring.mem().write(kSrc, src.data(), src.size());
  model::PacketStream p;
  p.copy(kSrc, kDst, 0x10000);
  p.fence(kDst + 0x20000, 1, abi::fence_flags::kIrq | abi::fence_flags::kValue64);
  ring.push(p, 1);
  b.root_complex().reset_stats();
  ring.doorbell();
  REQUIRE(ring.wait_interrupt(5ms) != 0);
  std::vector<std::uint8_t> got(src.size());
  ring.mem().read(kDst, got.data(), got.size());
  CHECK(got == src);
  // LitePCIe's eight tags: never more in flight, and the engine keeps them full.
  CHECK(b.root_complex().stats().max_reads_in_flight == 8);
}

TEST_CASE("Another Max_Payload_Size and Max_Read_Request_Size, a slower core clock, back-pressure", "[s7][dma]") {
  const auto seed = tb::test_seed(6);
  CAPTURE(seed);
  S7BoardConfig c = config_for(seed);
  c.core_clock_hz = 100e6;
  c.rc.tx_ready_prob = 0.6;
  c.rc.completion_bytes = 128;
  c.rc.rcb = 128;
  S7Board b(c);
  EnumerateOptions eo;
  eo.max_payload = 128;
  eo.max_read_request = 128;
  enumerate(b, eo);
  BoardRing ring(b);
  const auto src = pattern(0x3000, 11);
  ring.mem().write(kSrc, src.data(), src.size());
  model::PacketStream p;
  p.copy(kSrc + 1, kDst + 3, 0x2ff0);
  p.fence(kDst + 0x8000, 1, abi::fence_flags::kIrq | abi::fence_flags::kValue64);
  ring.push(p, 1);
  ring.doorbell();
  REQUIRE(ring.wait_interrupt(5ms) != 0);
  std::vector<std::uint8_t> got(0x2ff0);
  ring.mem().read(kDst + 3, got.data(), got.size());
  CHECK(std::equal(got.begin(), got.end(), src.begin() + 1));
  CHECK(ring.mem().read8(kDst + 2) == 0);
  CHECK(ring.mem().read8(kDst + 3 + 0x2ff0) == 0);
}

TEST_CASE("A failed read (Unsupported Request) faults the engine, a reset recovers", "[s7][dma][error]") {
  const auto seed = tb::test_seed(7);
  CAPTURE(seed);
  S7Board b(config_for(seed));
  enumerate(b);
  BoardRing ring(b);
  b.root_complex().inject_unsupported(kSrc + 0x1000, kSrc + 0x2000);  // as an IOMMU fault would
  model::PacketStream p;
  p.copy(kSrc, kDst, 0x3000);
  p.fence(kDst + 0x8000, 1, abi::fence_flags::kIrq | abi::fence_flags::kValue64);
  ring.push(p, 1);
  ring.doorbell();
  const std::uint32_t status = ring.wait_interrupt(5ms);
  CHECK((status & SGPU_REGS__INT_STATUS__FAULT_bm) != 0);
  const std::uint32_t fs = ring.reg(SGPU_BOARD_REG(FAULT_STATUS));
  CHECK(field(fs, SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
        static_cast<std::uint32_t>(abi::Fault::BusError));
  CHECK(b.root_complex().stats().unsupported_requests >= 1);
  // The link and the shell are still fine: registers answer, the engine resets.
  b.bar0_write32(SGPU_BOARD_REG(CTRL), 0);
  b.bar0_write32(SGPU_BOARD_REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
  b.run_for(20us);
  CHECK((ring.reg(SGPU_BOARD_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm) != 0);
  CHECK(b.bar0_read32(SGPU_BOARD_REG(ID_MAGIC)) == 0x53475055u);
}

TEST_CASE("Without Bus Master Enable the shell sends no request and the engine faults", "[s7][dma][error]") {
  S7Board b(config_for(tb::test_seed(8)));
  enumerate(b);
  // Bus mastering off, MSI still configured: the model throws on any request from the device.
  b.config_write32(ConfigSpace::kCommand, 0x0402);
  BoardRing ring(b);
  model::PacketStream p;
  p.write_data(kDst, {1});
  ring.push(p, 1);
  ring.doorbell();
  b.run_for(50us);
  CHECK(b.root_complex().stats().device_reads == 0);
  const std::uint32_t status = ring.reg(SGPU_BOARD_REG(INT_STATUS));
  CHECK((status & SGPU_REGS__INT_STATUS__FAULT_bm) != 0);
  CHECK(b.msi_count() == 0);  // no MSI without bus mastering
  // Enabling it delivers the pending interrupt as soon as the shell may send it.
  b.config_write32(ConfigSpace::kCommand, 0x0406);
  CHECK(b.wait_msi(0, 20us));
}
