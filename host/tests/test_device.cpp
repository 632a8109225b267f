// Device on the mock transport: exact MMIO sequences, ID checks, validation without side
// effects, fences, faults and reset. A small fake (fake_engine.hpp) plays the device's part of
// the ring protocol through the mock's hooks.
#include <catch2/catch.hpp>

#include <cstring>

#include <fmt/format.h>

#include "fake_engine.hpp"
#include "sgpu/device.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/transport/mock.hpp"

using namespace sgpu;
using namespace std::chrono_literals;
using Access = MockTransport::Access;

namespace {

using test::FakeEngine;
constexpr std::uint32_t kIntDma = FakeEngine::kIntDma;
constexpr std::uint32_t kIntFault = FakeEngine::kIntFault;

struct Fixture {
  MockTransport* mock;
  std::unique_ptr<FakeEngine> engine;
  std::optional<Device> device;
  DmaMemory buffer;

  explicit Fixture(DeviceOptions options = {}) {
    auto t = std::make_unique<MockTransport>();
    mock = t.get();
    engine = std::make_unique<FakeEngine>(*mock);
    auto d = Device::open(std::move(t), options);
    REQUIRE(d);
    device.emplace(std::move(*d));
    auto b = mock->alloc_dma(4096);
    REQUIRE(b);
    buffer = std::move(*b);
    mock->clear_log();
  }
  Submission sub(std::uint32_t start = 0, std::uint32_t end = 64) { return {&buffer, start, end, 0, 0}; }
};

std::unique_ptr<MockTransport> healthy_mock() {
  auto m = std::make_unique<MockTransport>();
  m->load_reset_values();
  return m;
}

}  // namespace

TEST_CASE("open: exact MMIO sequence of identification, reset and ring set-up", "[device]") {
  auto t = healthy_mock();
  MockTransport* m = t.get();
  const std::uint32_t bus = m->read32(SGPU_REG(CAP_BUS));
  const std::uint32_t mem = m->read32(SGPU_REG(CAP_MEM));
  m->clear_log();
  DeviceOptions opt;
  opt.ring_log2_entries = 4;
  auto dev = Device::open(std::move(t), opt);
  REQUIRE(dev);

  // The ring and the write-back record share the first DMA allocation: entries, then the record.
  const std::uint64_t ring = std::uint64_t{1} << 32;
  const std::uint64_t wb = ring + 16 * sizeof(abi::RingEntry);
  const std::uint32_t ver = SGPU_FIELD(ID_VERSION, MAJOR).put(SGPU_REGS__ID_VERSION__MAJOR_reset);
  auto R = MockTransport::read;
  auto W = MockTransport::write;
  const std::vector<Access> expected{
      R(SGPU_REG(ID_MAGIC), SGPU_REGS__ID_MAGIC__VALUE_reset),
      R(SGPU_REG(ID_VERSION), ver),
      R(SGPU_REG(ID_BUILD), 0),
      R(SGPU_REG(CAP_BUS), bus),
      R(SGPU_REG(CAP_MEM), mem),
      R(SGPU_REG(CAP_FEATURES), 0),
      R(SGPU_REG(CAP_MEMSEG_BASE_LO), 0),
      R(SGPU_REG(CAP_MEMSEG_BASE_HI), 0),
      R(SGPU_REG(CAP_MEMSEG_SIZE_LO), 0),
      R(SGPU_REG(CAP_MEMSEG_SIZE_HI), 0),
      R(SGPU_REG(CAP_APSEG_BASE_LO), 0),
      R(SGPU_REG(CAP_APSEG_BASE_HI), 0),
      R(SGPU_REG(CAP_APSEG_SIZE_LO), 0),
      R(SGPU_REG(CAP_APSEG_SIZE_HI), 0),
      W(SGPU_REG(CTRL), 0),
      W(SGPU_REG(RESET), SGPU_FIELD(RESET, ENGINE).put(1)),
      R(SGPU_REG(STATUS), SGPU_FIELD(STATUS, IDLE).mask),
      W(SGPU_REG(INT_ENABLE), 0),
      W(SGPU_REG(INT_STATUS), kIntDma | kIntFault | SGPU_FIELD(INT_STATUS, PREEMPTED).mask),
      W(SGPU_REG(RING_BASE_LO), static_cast<std::uint32_t>(ring)),
      W(SGPU_REG(RING_BASE_HI), static_cast<std::uint32_t>(ring >> 32)),
      W(SGPU_REG(RING_SIZE), SGPU_FIELD(RING_SIZE, LOG2_ENTRIES).put(4)),
      W(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(wb)),
      W(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>(wb >> 32)),
      W(SGPU_REG(RING_TAIL), 0),
      W(SGPU_REG(INT_ENABLE), kIntDma | kIntFault),
      W(SGPU_REG(CTRL), SGPU_FIELD(CTRL, ENABLE).put(1)),
  };
  CHECK(m->log() == expected);

  const DeviceInfo& info = dev->info();
  CHECK(info.magic == SGPU_REGS__ID_MAGIC__VALUE_reset);
  CHECK(info.version_major == SGPU_REGS__ID_VERSION__MAJOR_reset);
  CHECK(info.bus_data_bytes == 8);
  CHECK(info.max_burst == 16);
  CHECK(info.page_size() == 4096);
  CHECK(dev->ring_entries() == 16);
  CHECK(dev->completed_fence() == 0);
  CHECK(dev->last_submitted_fence() == 0);
}

TEST_CASE("open: the ring is clamped to the device's largest ring", "[device]") {
  auto t = healthy_mock();
  t->set_reg(SGPU_REG(CAP_MEM), SGPU_FIELD(CAP_MEM, PAGE_SHIFT).put(12) | SGPU_FIELD(CAP_MEM, MAX_RING_LOG2).put(3));
  auto dev = Device::open(std::move(t));
  REQUIRE(dev);
  CHECK(dev->ring_entries() == 8);
}

TEST_CASE("open: bad options are rejected before any register access", "[device]") {
  auto t = healthy_mock();
  std::size_t accesses = 0;
  t->on_write = [&](std::uint32_t, std::uint32_t) { ++accesses; };
  DeviceOptions opt;
  opt.ring_log2_entries = 0;
  auto dev = Device::open(std::move(t), opt);
  REQUIRE_FALSE(dev);
  CHECK(dev.error().code == Errc::InvalidArgument);
  CHECK_FALSE(dev.error().hardware_touched);
  CHECK(accesses == 0);
  auto none = Device::open(nullptr);
  REQUIRE_FALSE(none);
  CHECK(none.error().code == Errc::InvalidArgument);
}

TEST_CASE("open: a wrong magic is a DeviceMismatch naming both values, with no writes", "[device]") {
  auto t = healthy_mock();
  t->set_reg(SGPU_REG(ID_MAGIC), 0xdeadbeef);
  std::vector<Access> writes;
  t->on_write = [&](std::uint32_t o, std::uint32_t v) { writes.push_back(MockTransport::write(o, v)); };
  auto dev = Device::open(std::move(t));
  REQUIRE_FALSE(dev);
  CHECK(dev.error().code == Errc::DeviceMismatch);
  CHECK_THAT(dev.error().message, Catch::Contains("0xdeadbeef") && Catch::Contains("0x53475055"));
  CHECK(writes.empty());
}

TEST_CASE("open: a wrong major version is a DeviceMismatch naming both values", "[device]") {
  for (std::uint32_t major : {0u, 2u, 0xffffu}) {
    auto t = healthy_mock();
    const std::uint32_t found =
        SGPU_FIELD(ID_VERSION, MAJOR).put(major) | SGPU_FIELD(ID_VERSION, MINOR).put(7);
    t->set_reg(SGPU_REG(ID_VERSION), found);
    std::vector<Access> writes;
    t->on_write = [&](std::uint32_t o, std::uint32_t v) { writes.push_back(MockTransport::write(o, v)); };
    auto dev = Device::open(std::move(t));
    REQUIRE_FALSE(dev);
    CHECK(dev.error().code == Errc::DeviceMismatch);
    INFO(dev.error().message);
    CHECK_THAT(dev.error().message, Catch::Contains(fmt::format("{:#010x}", found)));
    CHECK_THAT(dev.error().message,
               Catch::Contains(fmt::format("major version {:#x}", SGPU_REGS__ID_VERSION__MAJOR_reset)));
    CHECK(writes.empty());
  }
}

TEST_CASE("submit: writes the ring entry, then exactly one doorbell write", "[device]") {
  Fixture f;
  f.engine->retire = false;
  auto fence = f.device->submit_next({&f.buffer, 16, 64, 5, abi::ring_flags::kPresent});
  REQUIRE(fence);
  CHECK(*fence == 1);
  CHECK(f.mock->log() == std::vector<Access>{MockTransport::write(SGPU_REG(RING_TAIL), 1)});
  const abi::RingEntry e = f.engine->entry(0);
  CHECK(e.buf_addr == f.buffer.bus_addr());
  CHECK(e.start_offset == 16);
  CHECK(e.end_offset == 64);
  CHECK(e.fence == 1);
  CHECK(e.context_id == 5);
  CHECK(e.flags == abi::ring_flags::kPresent);

  auto second = f.device->submit_next(f.sub());
  REQUIRE(second);
  CHECK(*second == 2);
  CHECK(f.device->last_submitted_fence() == 2);
  CHECK(f.device->ring_tail() == 2);
}

TEST_CASE("submit: invalid submissions are typed errors that touch nothing", "[device]") {
  Fixture f;
  f.engine->retire = false;
  DmaMemory empty;
  const std::vector<std::pair<Submission, Errc>> bad{
      {{nullptr, 0, 4, 0, 0}, Errc::InvalidArgument},
      {{&empty, 0, 4, 0, 0}, Errc::InvalidArgument},
      {{&f.buffer, 2, 8, 0, 0}, Errc::InvalidArgument},     // misaligned start
      {{&f.buffer, 0, 6, 0, 0}, Errc::InvalidArgument},     // misaligned end
      {{&f.buffer, 64, 32, 0, 0}, Errc::InvalidArgument},   // start after end
      {{&f.buffer, 0, 8192, 0, 0}, Errc::InvalidArgument},  // past the buffer
      {{&f.buffer, 0, 8, 0, 0x100}, Errc::InvalidArgument}, // undefined flag bit
  };
  std::vector<std::byte> ring_before(f.device->ring_entries() * sizeof(abi::RingEntry));
  std::memcpy(ring_before.data(), f.mock->dma_cpu(f.engine->ring), ring_before.size());
  for (const auto& [s, code] : bad) {
    auto r = f.device->submit_next(s);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().code == code);
    CHECK_FALSE(r.error().hardware_touched);
  }
  CHECK(f.mock->log().empty());
  CHECK(f.device->last_submitted_fence() == 0);
  CHECK(f.device->ring_tail() == 0);
  CHECK(std::memcmp(ring_before.data(), f.mock->dma_cpu(f.engine->ring), ring_before.size()) == 0);
}

TEST_CASE("submit: a full ring is Busy and touches nothing", "[device]") {
  DeviceOptions opt;
  opt.ring_log2_entries = 2;
  Fixture f(opt);
  f.engine->retire = false;
  for (RingFence i{1}; i <= 3; ++i) REQUIRE(f.device->submit_next(f.sub()).value() == i);
  f.mock->clear_log();
  auto full = f.device->submit_next(f.sub());
  REQUIRE_FALSE(full);
  CHECK(full.error().code == Errc::Busy);
  CHECK_FALSE(full.error().hardware_touched);
  CHECK_THAT(full.error().message, Catch::Contains("ring full"));
  CHECK(f.mock->log().empty());
  // Once the device retires the entries, there is room again.
  f.engine->run(3);
  CHECK(f.device->submit_next(f.sub()).value() == 4);
}

TEST_CASE("submit: the caller's ring fence goes into the entry, 0 and stale fences touch nothing", "[device]") {
  Fixture f;
  f.engine->retire = false;
  CHECK(f.device->next_fence() == 1);
  auto given = f.device->submit(f.sub(), RingFence{7});
  REQUIRE(given);
  CHECK(*given == 7);
  CHECK(f.engine->entry(0).fence == 7);
  CHECK(f.device->last_submitted_fence() == 7);
  CHECK(f.device->next_fence() == 8);
  f.mock->clear_log();
  for (RingFence bad : {RingFence{}, RingFence{7}, RingFence{3}}) {
    auto r = f.device->submit(f.sub(), bad);
    REQUIRE_FALSE(r);
    INFO(r.error().message);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK_FALSE(r.error().hardware_touched);
  }
  CHECK(f.mock->log().empty());
  CHECK(f.device->ring_tail() == 1);
  auto next = f.device->submit_next(f.sub());  // the numbering convenience continues after 7
  REQUIRE(next);
  CHECK(*next == 8);
  CHECK(f.engine->entry(1).fence == 8);
}

TEST_CASE("wait_fence: completes on the interrupt and acknowledges it", "[device]") {
  Fixture f;
  auto fence = f.device->submit_next(f.sub());
  REQUIRE(fence);
  f.mock->clear_log();
  REQUIRE(f.device->wait_fence(*fence, 1ms));
  CHECK(f.device->completed_fence() == 1);
  CHECK(f.device->ring_head() == f.device->ring_tail());
  // The fence was already in memory: no register access was needed.
  CHECK(f.mock->log().empty());

  // With the write-back arriving only with the interrupt, the wait reads and clears INT_STATUS.
  f.engine->retire = false;
  auto second = f.device->submit_next(f.sub());
  REQUIRE(second);
  f.mock->on_wait_irq = [&](std::chrono::nanoseconds) {
    f.engine->run(f.device->ring_tail());
    return true;
  };
  f.mock->clear_log();
  REQUIRE(f.device->wait_fence(*second, 1ms));
  const std::vector<Access> expected{MockTransport::read(SGPU_REG(INT_STATUS), kIntDma),
                                     MockTransport::write(SGPU_REG(INT_STATUS), kIntDma)};
  CHECK(f.mock->log() == expected);
  CHECK(f.device->completed_fence() == 2);
}

TEST_CASE("wait_fence: a timeout names the fence and the last fence seen", "[device]") {
  Fixture f;
  REQUIRE(f.device->wait_fence(f.device->submit_next(f.sub()).value(), 1ms));
  f.engine->retire = false;
  REQUIRE(f.device->submit_next(f.sub()).value() == 2);
  auto r = f.device->wait_fence(RingFence{2}, 10us);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::Timeout);
  CHECK_THAT(r.error().message, Catch::Contains("fence 2") && Catch::Contains("last fence seen 1"));

  auto never = f.device->wait_fence(RingFence{99}, 10us);
  REQUIRE_FALSE(never);
  CHECK(never.error().code == Errc::Timeout);
  CHECK_THAT(never.error().message, Catch::Contains("fence 99") && Catch::Contains("last fence seen 1"));
}

TEST_CASE("faults: reported with their record, refused work, reset aborts and recovers", "[device]") {
  Fixture f;
  REQUIRE(f.device->wait_fence(f.device->submit_next(f.sub()).value(), 1ms));
  const std::uint32_t header = 0x00010077;
  f.engine->fault_header = header;
  auto bad = f.device->submit_next(f.sub());
  REQUIRE(bad);

  auto waited = f.device->wait_fence(*bad, 1ms);
  REQUIRE_FALSE(waited);
  CHECK(waited.error().code == Errc::DeviceFault);
  CHECK_THAT(waited.error().message, Catch::Contains("ILLEGAL_OPCODE") && Catch::Contains("0x00010077"));

  auto rec = f.device->fault();
  REQUIRE(rec);
  REQUIRE(rec->has_value());
  const FaultRecord& fr = **rec;
  CHECK(fr.reason == abi::Fault::IllegalOpcode);
  CHECK(fr.ring_index == 1);
  CHECK(fr.fence == *bad);
  CHECK(fr.detail == header);
  CHECK(fr.address == f.buffer.bus_addr());

  f.mock->clear_log();
  auto refused = f.device->submit_next(f.sub());
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::DeviceFault);
  CHECK_FALSE(refused.error().hardware_touched);
  CHECK(f.mock->log().empty());

  f.engine->fault_header.reset();
  REQUIRE(f.device->reset_engine());
  CHECK(f.device->ring_tail() == 0);
  CHECK(f.device->ring_head() == 0);
  auto gone = f.device->wait_fence(*bad, 1ms);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == Errc::Aborted);
  auto none = f.device->fault();
  REQUIRE(none);
  CHECK_FALSE(none->has_value());

  auto next = f.device->submit_next(f.sub());
  REQUIRE(next);
  CHECK(*next == bad->next());  // numbering continues across the reset
  REQUIRE(f.device->wait_fence(*next, 1ms));
  CHECK(f.device->completed_fence() == *next);
}

TEST_CASE("reset_engine: a reset that never drains is a Timeout", "[device]") {
  Fixture f;
  f.mock->on_write = [&](std::uint32_t o, std::uint32_t v) {
    if (o == SGPU_REG(RESET) && v)
      f.mock->set_reg(SGPU_REG(STATUS), SGPU_FIELD(STATUS, RESETTING).mask);
  };
  auto r = f.device->reset_engine();
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::Timeout);
  CHECK(r.error().hardware_touched);
  CHECK_THAT(r.error().message, Catch::Contains("resetting 1"));
}

TEST_CASE("reset_engine: a card that reads all ones is lost at once, and the destructor leaves it alone",
          "[device][device_lost]") {
  Fixture f;
  f.mock->on_write = [&](std::uint32_t o, std::uint32_t v) {
    if (o == SGPU_REG(RESET) && v) f.mock->set_reg(SGPU_REG(STATUS), 0xFFFF'FFFFu);
  };
  auto r = f.device->reset_engine();  // the mock's time never moves: without the check, forever
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::DeviceLost);
  CHECK_THAT(r.error().message, Catch::Contains("STATUS reads 0xffffffff"));
  CHECK(f.device->lost());
  int writes = 0;  // the mock goes with the device: count what its destructor writes
  f.mock->on_write = [&](std::uint32_t, std::uint32_t) { ++writes; };
  f.device.reset();
  CHECK(writes == 0);  // no reset of a card that is gone
}

TEST_CASE("a broken link is a TransportError, not an exception", "[device]") {
  Fixture f;
  f.mock->on_write = [](std::uint32_t, std::uint32_t) { throw TransportFailure("link down"); };
  auto r = f.device->submit_next(f.sub());
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::TransportError);
  CHECK(r.error().hardware_touched);
  CHECK_THAT(r.error().message, Catch::Contains("link down"));
}

TEST_CASE("preemption: Unsupported without CAP_FEATURES.preemption, no register touched", "[device]") {
  auto t = healthy_mock();
  t->set_reg(SGPU_REG(CAP_FEATURES), 0);
  MockTransport* m = t.get();
  auto dev = Device::open(std::move(t));
  REQUIRE(dev);
  REQUIRE_FALSE(dev->info().has_preemption);
  m->clear_log();
  auto req = dev->request_preemption(RingFence{1});
  auto st = dev->preemption_state();
  auto res = dev->resume_from_preemption();
  REQUIRE_FALSE(req);
  REQUIRE_FALSE(st);
  REQUIRE_FALSE(res);
  for (const Error* e : {&req.error(), &st.error(), &res.error()}) {
    CHECK(e->code == Errc::Unsupported);
    CHECK_FALSE(e->hardware_touched);
    CHECK_THAT(e->message, Catch::Contains("preemption"));
  }
  CHECK(m->log().empty());
}

TEST_CASE("GART fault records name reason and client from the register description", "[device][gart]") {
  GartFaultRecord g;
  g.reason = static_cast<std::uint32_t>(regs::GartFault::OutOfRange);
  g.client = static_cast<std::uint32_t>(regs::GartClient::CopyWrite);
  g.write = true;
  g.page_address = 0x18000000003000;
  CHECK(to_string(g) == "OUT_OF_RANGE on a write by the copy engine (write), page 0x18000000003000");
  g.reason = 9;  // values spec/registers.rdl does not define are shown as numbers
  g.client = 7;
  g.write = false;
  g.privileged = true;
  g.more_faults = true;
  CHECK(to_string(g) == "reason 9 on a read by client 7 (privileged), page 0x18000000003000, more faults");
  CHECK(regs::to_string(regs::GartClient::CpWrite) == "CP_WRITE");
  CHECK(regs::display_name(regs::GartFault::WalkError) == "WALK_ERROR");
}
