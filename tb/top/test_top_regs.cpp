// The register block's AXI4-Lite port as the host's register master sees it (tb::AxiLiteMaster
// through SimDevice): the cycles of a read and of a write, and when a read samples its register.
// The generated register block (tools/gen.py: PeakRDL regblock with --rt-read-fanin) registers
// the read data per 128-byte window of the map before the final selection, so a read answers a
// cycle later than the address decode alone would (docs/fpga.md, timing pass 4b), while the
// value it returns is still the register's in the cycle the request was decoded. Its AXI4-Lite
// side (sgpu_regs_axil) offers each request to the block from registers, a cycle after taking
// the channels (timing pass 14).
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>

#include "sgpu/gen/sgpu_regs.h"
#include "sim/sim_device.hpp"

using sgpu::sim::SimDevice;
using sgpu::sim::SimError;

namespace {

constexpr std::uint32_t kCycleLo = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, CYCLE_LO));
constexpr std::uint32_t kIdMagic = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, ID_MAGIC));
constexpr std::uint32_t kRingTail = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, RING_TAIL));
constexpr std::uint32_t kUnmapped = 0xffc;  // past the last register (the map ends below 0x300)

// The host register master's cycles, from raising the request to taking the response: 5 for a
// read (4 before sgpu_regs_axil's request register, 3 before the readback stage as well: this
// test fails on a register block generated without --rt-read-fanin, or with PeakRDL's own
// AXI4-Lite interface), 4 for a write (no readback stage).
constexpr std::uint64_t kReadCycles = 5;
constexpr std::uint64_t kWriteCycles = 4;
// CYCLE_LO's value against the bench's cycle when the read was started (the bench also counts
// the reset cycles, the device's counter does not): the counter is sampled in the decode cycle,
// which the readback stage did not move and the request register moved a cycle later (-7
// before it).
constexpr std::int64_t kCycleLoMinusStart = -6;

}  // namespace

TEST_CASE("regs: a register read answers in a fixed number of cycles, with the value of its decode cycle",
          "[top][regs]") {
  SimDevice d;
  d.step(100);
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t start = d.cycle();
    const std::uint32_t lo = d.mmio_read32(kCycleLo);
    CHECK(d.cycle() - start == kReadCycles);
    CHECK(static_cast<std::int64_t>(lo) - static_cast<std::int64_t>(start) == kCycleLoMinusStart);
    d.step(static_cast<std::uint64_t>(i) + 1);  // every phase of the counter's low bits
  }
  const std::uint64_t start = d.cycle();
  CHECK(d.mmio_read32(kIdMagic) == SGPU_REGS__ID_MAGIC__VALUE_reset);
  CHECK(d.cycle() - start == kReadCycles);
}

TEST_CASE("regs: a register write completes in a fixed number of cycles, and a read right behind it sees it",
          "[top][regs]") {
  SimDevice d;
  d.step(10);
  const std::uint64_t start = d.cycle();
  d.mmio_write32(kRingTail, 0);
  CHECK(d.cycle() - start == kWriteCycles);
  // Alternating reads and writes keep their cycles (the write behind a read is not held back:
  // the read's response came first).
  for (int i = 0; i < 3; ++i) {
    const std::uint64_t r0 = d.cycle();
    (void)d.mmio_read32(kIdMagic);
    CHECK(d.cycle() - r0 == kReadCycles);
    const std::uint64_t w0 = d.cycle();
    d.mmio_write32(kRingTail, 0);
    CHECK(d.cycle() - w0 == kWriteCycles);
  }
}

TEST_CASE("regs: a read of an unmapped offset is refused with an AXI error, and the next read is answered",
          "[top][regs]") {
  SimDevice d;
  d.step(10);
  const std::uint64_t start = d.cycle();
  REQUIRE_THROWS_AS(d.mmio_read32(kUnmapped), SimError);
  CHECK(d.cycle() - start == kReadCycles);  // the error takes the readback stage too
  CHECK(d.mmio_read32(kIdMagic) == SGPU_REGS__ID_MAGIC__VALUE_reset);
}
