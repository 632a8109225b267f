// Directed regressions: the smallest case of each mismatch the random model-vs-RTL runs found,
// kept after the fix so it cannot come back unnoticed.
#include <catch2/catch.hpp>

#include <cstddef>

#include "diff/device.hpp"
#include "model/stream.hpp"
#include "sgpu/gen/sgpu_regs.h"

using namespace sgpu;

namespace {

#define REG_OFF(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))
constexpr std::uint64_t kRing = 0x1'0000'0000;
constexpr std::uint64_t kWb = 0x1'0001'0000;
constexpr std::uint64_t kBuf = 0x1'0010'0000;

}  // namespace

TEST_CASE("CP-1: FAULT_FENCE is untouched by an entry that does not fault", "[diff][regression]") {
  diff::RtlDevice dev({}, kWb, 100000);
  dev.mmio_write32(REG_OFF(RING_BASE_LO), static_cast<std::uint32_t>(kRing));
  dev.mmio_write32(REG_OFF(RING_BASE_HI), static_cast<std::uint32_t>(kRing >> 32));
  dev.mmio_write32(REG_OFF(RING_SIZE), 2);
  dev.mmio_write32(REG_OFF(WB_ADDR_LO), static_cast<std::uint32_t>(kWb));
  dev.mmio_write32(REG_OFF(WB_ADDR_HI), static_cast<std::uint32_t>(kWb >> 32));
  dev.mmio_write32(REG_OFF(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  const model::PacketStream p = model::PacketStream().nop();
  dev.memory().write(kBuf, p.words().data(), p.bytes());
  abi::RingEntry e{};
  e.buf_addr = kBuf;
  e.end_offset = p.bytes();
  e.fence = 0x1234;
  dev.memory().write(kRing, &e, sizeof e);
  dev.mmio_write32(REG_OFF(RING_TAIL), 1);
  dev.settle();
  REQUIRE(dev.retired_fences() == std::vector<std::uint64_t>{0x1234});
  CHECK(dev.mmio_read32(REG_OFF(FAULT_STATUS)) == 0);
  // Reset value: no fault happened (the RTL used to latch every fetched entry's fence here).
  CHECK(dev.mmio_read32(REG_OFF(FAULT_FENCE_LO)) == 0);
}
