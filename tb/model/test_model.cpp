// Directed tests of the reference model on its own (no RTL): each documented rule once. The
// differential tests (tb/diff) then hold the model and the RTL to the same results.
#include <catch2/catch.hpp>

#include <cstddef>

#include "model/exec.hpp"
#include "model/model.hpp"
#include "model/stream.hpp"
#include "sgpu/gen/sgpu_regs.h"

using namespace sgpu;
using namespace sgpu::model;

namespace {

#define REG(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))

constexpr std::uint64_t kRing = 0x1'0000'0000;
constexpr std::uint64_t kWb = 0x1'0001'0000;
constexpr std::uint64_t kBuf = 0x1'0010'0000;
constexpr std::uint64_t kData = 0x1'0100'0000;
constexpr std::uint32_t kDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kFaultBit = SGPU_REGS__INT_STATUS__FAULT_bm;

struct Fixture {
  tb::HostMemory mem;
  Model m{mem};
  std::uint32_t tail = 0;
  std::uint64_t next_buf = kBuf;

  Fixture() {
    m.mmio_write32(REG(RING_BASE_LO), static_cast<std::uint32_t>(kRing));
    m.mmio_write32(REG(RING_BASE_HI), static_cast<std::uint32_t>(kRing >> 32));
    m.mmio_write32(REG(RING_SIZE), 3);
    m.mmio_write32(REG(WB_ADDR_LO), static_cast<std::uint32_t>(kWb));
    m.mmio_write32(REG(WB_ADDR_HI), static_cast<std::uint32_t>(kWb >> 32));
    m.mmio_write32(REG(INT_ENABLE), kDone | kFaultBit);
    m.mmio_write32(REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  }
  abi::RingEntry entry_for(const PacketStream& p, std::uint64_t fence, std::uint32_t flags = 0) {
    const std::uint64_t buf = next_buf;
    next_buf += 0x10000;
    mem.write(buf, p.words().data(), p.bytes());
    abi::RingEntry e{};
    e.buf_addr = buf;
    e.end_offset = p.bytes();
    e.fence = fence;
    e.context_id = 3;
    e.flags = flags;
    return e;
  }
  void push_entry(const abi::RingEntry& e) {
    mem.write(kRing + 32ull * tail, &e, sizeof e);
    tail = (tail + 1) & 7;
  }
  void submit(const PacketStream& p, std::uint64_t fence, std::uint32_t flags = 0) {
    push_entry(entry_for(p, fence, flags));
    m.mmio_write32(REG(RING_TAIL), tail);
    m.run_until_idle();
  }
};

}  // namespace

TEST_CASE("every packet of the ABI has a handler", "[model]") {
  for (const auto& p : abi::kPackets) {
    INFO(p.name);
    CHECK(find_handler(static_cast<std::uint8_t>(p.opcode)) != nullptr);
  }
  for (unsigned op = 0; op < 256; ++op) {
    if (abi::find_packet(static_cast<std::uint8_t>(op)) == nullptr) CHECK(find_handler(static_cast<std::uint8_t>(op)) == nullptr);
  }
}

TEST_CASE("header checks run in the documented order", "[model]") {
  using abi::Fault;
  const auto h = [](std::uint8_t op, std::uint32_t dw, std::uint8_t flags) {
    return (std::uint32_t{flags} << 8) | (dw << 16) | op;
  };
  CHECK(check_header(h(0x7f, 0, 0xff), 0, false) == Fault::IllegalOpcode);
  CHECK(check_header(h(0x01, 2, 0xff), 0, false) == Fault::BadLength);
  CHECK(check_header(h(0x00, 0, 0), 10, false) == Fault::BadLength);
  CHECK(check_header(h(0x02, 5, 0x04), 0, false) == Fault::ReservedBits);
  CHECK(check_header(h(0x02, 5, 0x03), 4, false) == Fault::BufferOverrun);
  CHECK(check_header(h(0x02, 5, 0x03), 5, false) == Fault::None);
}

TEST_CASE("WRITE_DATA, FENCE and retirement", "[model]") {
  Fixture f;
  f.mem.write64(kData, 0xaaaaaaaaaaaaaaaaull);
  f.submit(PacketStream()
               .write_data(kData + 12, {1, 2, 3})
               .fence(kData + 4, 0x99999999'12345678ull, 0)
               .fence(kData + 64, 0x1122334455667788ull, abi::fence_flags::kValue64 | abi::fence_flags::kIrq),
           7);
  CHECK(f.mem.read64(kData) == 0x12345678'aaaaaaaaull);
  CHECK(f.mem.read32(kData + 12) == 1);
  CHECK(f.mem.read32(kData + 20) == 3);
  CHECK(f.mem.read64(kData + 64) == 0x1122334455667788ull);
  CHECK(f.mem.read64(kWb) == 7);
  CHECK(f.mem.read32(kWb + 8) == 1);
  CHECK(f.m.mmio_read32(REG(RING_HEAD)) == 1);
  CHECK(f.m.mmio_read32(REG(FENCE_DONE_LO)) == 7);
  CHECK(f.m.irq());
  f.m.mmio_write32(REG(INT_STATUS), kDone);
  CHECK_FALSE(f.m.irq());
  CHECK(f.m.retired_fences() == std::vector<std::uint64_t>{7});
}

TEST_CASE("zero-length and null-render entries only retire", "[model]") {
  Fixture f;
  abi::RingEntry empty{};
  empty.buf_addr = 0x1234;
  empty.fence = 1;
  f.push_entry(empty);
  f.push_entry(f.entry_for(PacketStream().write_data(kData, {5}), 2, abi::ring_flags::kNullRender));
  f.m.mmio_write32(REG(RING_TAIL), f.tail);
  f.m.run_until_idle();
  CHECK(f.mem.read32(kData) == 0);
  CHECK(f.m.retired_fences() == std::vector<std::uint64_t>{1, 2});
}

TEST_CASE("faults record reason, index, address, fence and detail, and reset recovers", "[model]") {
  Fixture f;
  const std::uint32_t bad = abi::make_header(abi::Opcode::Fence, 6);
  f.submit(PacketStream().nop(2).raw(bad).nop(), 0x55);
  REQUIRE(f.m.faulted());
  CHECK(f.m.fault().reason == abi::Fault::BadLength);
  CHECK(f.m.fault().ring_index == 0);
  CHECK(f.m.fault().addr == kBuf + 8);
  CHECK(f.m.fault().fence == 0x55);
  CHECK(f.m.fault().detail == bad);
  CHECK((f.m.mmio_read32(REG(STATUS)) & SGPU_REGS__STATUS__FAULTED_bm));
  CHECK((f.m.int_status() & kFaultBit));

  f.m.mmio_write32(REG(CTRL), 0);
  f.m.mmio_write32(REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
  CHECK_FALSE(f.m.faulted());
  CHECK(f.m.fault().reason == abi::Fault::None);
  CHECK(f.m.head() == 0);
  f.tail = 0;
  f.push_entry(f.entry_for(PacketStream().write_data(kData, {9}), 0x56));
  f.m.mmio_write32(REG(RING_TAIL), f.tail);
  f.m.mmio_write32(REG(CTRL), 1);
  f.m.run_until_idle();
  CHECK(f.mem.read32(kData) == 9);
  CHECK(f.m.fence_done() == 0x56);
}

TEST_CASE("misaligned addresses and bad ring entries", "[model]") {
  SECTION("WRITE_DATA") {
    Fixture f;
    f.submit(PacketStream().write_data(kData + 2, {1}), 1);
    CHECK(f.m.fault().reason == abi::Fault::BadAlignment);
    CHECK(f.m.fault().addr == kData + 2);
  }
  SECTION("64-bit FENCE") {
    Fixture f;
    f.submit(PacketStream().fence(kData + 4, 1, abi::fence_flags::kValue64), 1);
    CHECK(f.m.fault().reason == abi::Fault::BadAlignment);
    CHECK(f.mem.read64(kData) == 0);
  }
  SECTION("ring entry") {
    Fixture f;
    auto e = f.entry_for(PacketStream().nop(), 9);
    e.start_offset = 8;
    e.end_offset = 4;
    f.push_entry(e);
    f.m.mmio_write32(REG(RING_TAIL), f.tail);
    f.m.run_until_idle();
    CHECK(f.m.fault().reason == abi::Fault::BadRingEntry);
    CHECK(f.m.fault().addr == kRing);
    CHECK(f.m.fault().fence == 9);
  }
}

TEST_CASE("a read bus error delivers whole beats before it", "[model]") {
  tb::HostMemory mem;
  Bus bus(mem, 8);
  bus.inject_error(0x1010, 0x1018, kRespSlvErr);
  CHECK(bus.fetch_physical(0x1000, 64).delivered == 16);   // aligned: beats 0 and 1
  CHECK(bus.fetch_physical(0x1004, 64).delivered == 8);    // unaligned: one whole output beat
  CHECK(bus.fetch_physical(0x1004, 64).error == FetchError::BusSlvErr);
  CHECK(bus.fetch_physical(0x1018, 64).error == FetchError::Ok);
}

TEST_CASE("a failed write faults at the next drain point, later writes are uncertain", "[model]") {
  Fixture f;
  f.m.inject_error(kData + 0x1000, kData + 0x1040, kRespDecErr);
  f.submit(PacketStream()
               .write_data(kData, {1})
               .write_data(kData + 0x1004, {2})
               .write_data(kData + 8, {3})
               .fence(kData + 16, 4, 0)
               .write_data(kData + 24, {5}),
           1);
  REQUIRE(f.m.faulted());
  CHECK(f.m.fault().reason == abi::Fault::BusError);
  CHECK(f.m.fault().addr == kData + 0x1000);  // the 8-byte word the write master was given
  CHECK(f.m.fault().detail == 0);
  CHECK(f.mem.read32(kData) == 1);
  CHECK(f.m.uncertain_bytes().count(kData + 8) == 1);
  CHECK(f.mem.read32(kData + 16) == 0);  // the fence was not written
  CHECK(f.mem.read32(kData + 24) == 0);
  CHECK_FALSE(f.m.ambiguous());
}

TEST_CASE("WAIT_MEM: satisfied waits continue, unsatisfied ones fault WATCHDOG or hang", "[model][wait]") {
  Fixture f;
  f.submit(PacketStream().write_data(kData, {7}).wait_mem(kData, abi::WaitMemFunc::Ge, 7, 0xff).write_data(kData + 4, {1}),
           1);
  CHECK(f.m.retired_fences().size() == 1);
  CHECK(f.mem.read32(kData + 4) == 1);

  // Watchdog off: the engine waits (not idle) and nothing after the wait runs.
  const PacketStream never = PacketStream().nop().wait_mem(kData, abi::WaitMemFunc::Eq, 8, 0xff).write_data(kData + 8, {2});
  f.submit(never, 2);
  CHECK(f.m.hung());
  CHECK_FALSE(f.m.mmio_read32(REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm);
  CHECK(f.mem.read32(kData + 8) == 0);
  CHECK(f.m.retired_fences().size() == 1);
  f.m.mmio_write32(REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
  CHECK_FALSE(f.m.hung());

  // Watchdog on: WATCHDOG at the WAIT_MEM header.
  f.tail = 0;
  f.m.mmio_write32(REG(RING_TAIL), 0);
  f.m.mmio_write32(REG(CP_WATCHDOG), 1000);
  const abi::RingEntry e = f.entry_for(never, 3);
  f.push_entry(e);
  f.m.mmio_write32(REG(RING_TAIL), f.tail);
  f.m.run_until_idle();
  CHECK(f.m.fault().reason == abi::Fault::Watchdog);
  CHECK(f.m.fault().addr == e.buf_addr + 4);
  CHECK(f.m.fault().detail == never.words()[1]);
  CHECK(f.m.fault().fence == 3);
  CHECK_FALSE(f.m.ambiguous());
}

TEST_CASE("TIMESTAMP writes uncertain bytes and a misaligned one faults", "[model][timestamp]") {
  Fixture f;
  f.submit(PacketStream().timestamp(kData + 8), 1);
  CHECK(f.m.retired_fences().size() == 1);
  for (unsigned i = 0; i < 8; ++i) CHECK(f.m.uncertain_bytes().count(kData + 8 + i) == 1);
  f.submit(PacketStream().timestamp(kData + 4), 2);
  CHECK(f.m.fault().reason == abi::Fault::BadAlignment);
  CHECK(f.m.fault().addr == kData + 4);
}

TEST_CASE("INDIRECT: called buffers run in order, nesting is limited, faults name the called buffer", "[model][indirect]") {
  Fixture f;
  const std::uint64_t a = 0x1'0080'0000, b = 0x1'0081'0004;
  const PacketStream cb = PacketStream().write_data(kData + 8, {3});
  f.mem.write(b, cb.words().data(), cb.bytes());
  const PacketStream ca = PacketStream().write_data(kData + 4, {2}).indirect(b, cb.bytes()).indirect(b, 0);
  f.mem.write(a, ca.words().data(), ca.bytes());
  f.submit(PacketStream().indirect(a, ca.bytes()).write_data(kData, {1}), 1);
  CHECK(f.m.retired_fences().size() == 1);
  CHECK(f.mem.read32(kData) == 1);
  CHECK(f.mem.read32(kData + 4) == 2);
  CHECK(f.mem.read32(kData + 8) == 3);

  // A buffer that calls itself: INDIRECT_DEPTH at its INDIRECT, after max_indirect_depth levels.
  const std::uint64_t s = 0x1'0082'0000;
  const PacketStream self = PacketStream().nop().indirect(s, 20);
  f.mem.write(s, self.words().data(), self.bytes());
  f.submit(PacketStream().indirect(s, self.bytes()), 2);
  CHECK(f.m.fault().reason == abi::Fault::IndirectDepth);
  CHECK(f.m.fault().addr == s + 4);

  // Overrun is relative to the called range.
  f.m.mmio_write32(REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
  f.tail = 0;
  f.m.mmio_write32(REG(RING_TAIL), 0);
  f.submit(PacketStream().indirect(b, 8), 3);
  CHECK(f.m.fault().reason == abi::Fault::BufferOverrun);
  CHECK(f.m.fault().addr == b);
}

TEST_CASE("preemption between entries: record, interrupt, nothing runs until resume", "[model][preempt]") {
  Fixture f;
  f.submit(PacketStream().nop(), 5);
  f.m.mmio_write32(REG(PREEMPT_ADDR_LO), static_cast<std::uint32_t>(kData + 0x100));
  f.m.mmio_write32(REG(PREEMPT_ADDR_HI), static_cast<std::uint32_t>((kData + 0x100) >> 32));
  f.m.mmio_write32(REG(PREEMPT_FENCE_LO), 0x77);
  f.m.mmio_write32(REG(PREEMPT), SGPU_REGS__PREEMPT__REQUEST_bm);
  CHECK(f.m.preempted());
  CHECK(f.m.int_status() & SGPU_REGS__INT_STATUS__PREEMPTED_bm);
  CHECK(f.mem.read64(kData + 0x100) == 0x77);
  CHECK(f.mem.read64(kData + 0x108) == 5);
  f.submit(PacketStream().write_data(kData, {1}), 6);
  CHECK(f.mem.read32(kData) == 0);
  f.m.mmio_write32(REG(PREEMPT), SGPU_REGS__PREEMPT__RESUME_bm);
  f.m.run_until_idle();
  CHECK(f.mem.read32(kData) == 1);
  CHECK(f.m.fence_done() == 6);
}

TEST_CASE("retirement commits on the fence word, written last: a failed record word faults before it", "[model][retire]") {
  Fixture f;
  f.submit(PacketStream().nop(), 5);
  REQUIRE(f.m.fence_done() == 5);
  REQUIRE(f.mem.read32(kWb + 8) == 1);
  f.m.mmio_write32(REG(INT_STATUS), kDone);

  SECTION("the head word (written first): nothing of the record changes") {
    f.m.inject_error(kWb + 8, kWb + 16, 3);
    f.submit(PacketStream().nop(), 6);
    CHECK(f.m.fault().reason == abi::Fault::BusError);
    CHECK(f.m.fault().addr == kWb + 8);
    CHECK(f.mem.read32(kWb + 8) == 1);
  }
  SECTION("the fence word (written last): the head landed, the fence did not") {
    f.m.inject_error(kWb, kWb + 8, 2);
    f.submit(PacketStream().nop(), 6);
    CHECK(f.m.fault().reason == abi::Fault::BusError);
    CHECK(f.m.fault().addr == kWb);
    CHECK(f.mem.read32(kWb + 8) == 2);
  }
  CHECK(f.m.faulted());
  CHECK(f.m.fault().fence == 6);
  CHECK(f.m.fault().ring_index == 1);
  CHECK(f.m.fault().detail == 0);
  CHECK(f.m.fence_done() == 5);
  CHECK(f.m.head() == 1);
  CHECK(f.mem.read64(kWb) == 5);
  CHECK(f.m.int_status() == kFaultBit);
  CHECK(f.m.retired_fences() == std::vector<std::uint64_t>{5});
}

TEST_CASE("a watchdog at retirement (a timing outcome given to the model) faults with WB_ADDR, fence unwritten",
          "[model][retire]") {
  Fixture f;
  f.submit(PacketStream().write_data(kData, {9}), 5);
  f.m.set_retire_watchdog(6);
  f.submit(PacketStream().write_data(kData + 4, {10}), 6);
  CHECK(f.m.faulted());
  CHECK(f.m.fault() == FaultRecord{abi::Fault::Watchdog, 1, kWb, 6, 0});
  CHECK(f.m.fence_done() == 5);
  CHECK(f.mem.read64(kWb) == 5);
  CHECK(f.mem.read32(kData + 4) == 10);  // the submission's writes were drained first
  // The head word may or may not have been written by the RTL.
  for (std::uint64_t a = kWb + 8; a < kWb + 16; ++a) CHECK(f.m.uncertain_bytes().count(a) == 1);
  for (std::uint64_t a = kWb; a < kWb + 8; ++a) CHECK(f.m.uncertain_bytes().count(a) == 0);
  // Other entries are not affected; after the reset the same fence retires.
  f.m.set_retire_watchdog(std::nullopt);
  f.m.mmio_write32(REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
  f.tail = 0;
  f.m.mmio_write32(REG(RING_TAIL), 0);
  f.submit(PacketStream().nop(), 6);
  CHECK(f.m.fence_done() == 6);
  CHECK(f.mem.read64(kWb) == 6);
  CHECK(f.m.uncertain_bytes().count(kWb + 8) == 0);
}
