// Device on the mock transport: the host's side of retirement's commit point. The device
// retires an entry exactly when its write of the record's fence word is acknowledged OKAY; when
// that write reports an error the device faults the entry, but the memory may have taken the
// write anyway. The fault record is what counts: the faulting entry's fence is never reported
// complete, and reset_engine() counts it aborted, whether or not the ISR latched the fault.
#include <catch2/catch.hpp>

#include <cstring>
#include <optional>

#include "fake_engine.hpp"
#include "sgpu/device.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/transport/mock.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

namespace {

using test::FakeEngine;

struct Fixture {
  MockTransport* mock = nullptr;
  std::unique_ptr<FakeEngine> engine;
  std::optional<Device> device;
  DmaMemory buffer;
  std::uint64_t wb = 0;

  Fixture() {
    auto t = std::make_unique<MockTransport>();
    mock = t.get();
    engine = std::make_unique<FakeEngine>(*mock);
    DeviceOptions opt;
    opt.ring_log2_entries = 3;
    auto d = Device::open(std::move(t), opt);
    REQUIRE(d);
    device.emplace(std::move(*d));
    auto b = mock->alloc_dma(4096);
    REQUIRE(b);
    buffer = std::move(*b);
    wb = engine->wb;
  }
  RingFence submit() { return device->submit_next({&buffer, 0, 64, 0, 0}).value(); }

  /// The device's side of a failed fence-word write that still reached memory: the record
  /// names the faulting entry's fence (and the head after it), the fault record BUS_ERROR at
  /// WB_ADDR, FENCE_DONE and RING_HEAD the entry before.
  void fence_word_fails_but_lands() {
    const abi::RingEntry e = engine->entry(engine->head);
    abi::Writeback w{e.fence, engine->head + 1, 0};
    std::memcpy(mock->dma_cpu(wb), &w, sizeof w);
    mock->set_reg(SGPU_REG(STATUS), SGPU_FIELD(STATUS, FAULTED).mask | SGPU_FIELD(STATUS, IDLE).mask);
    mock->set_reg(SGPU_REG(FAULT_STATUS), SGPU_FIELD(FAULT_STATUS, REASON).put(static_cast<std::uint32_t>(abi::Fault::BusError)) |
                                              SGPU_FIELD(FAULT_STATUS, RING_INDEX).put(engine->head));
    mock->set_reg(SGPU_REG(FAULT_ADDR_LO), static_cast<std::uint32_t>(wb));
    mock->set_reg(SGPU_REG(FAULT_ADDR_HI), static_cast<std::uint32_t>(wb >> 32));
    mock->set_reg(SGPU_REG(FAULT_FENCE_LO), static_cast<std::uint32_t>(e.fence));
    mock->set_reg(SGPU_REG(FAULT_FENCE_HI), static_cast<std::uint32_t>(e.fence >> 32));
    engine->int_status |= FakeEngine::kIntFault;
    engine->update_irq();
  }
};

}  // namespace

TEST_CASE("retire: a fence the record shows for a faulting entry is not complete once the fault is seen", "[device][retire]") {
  Fixture f;
  const RingFence good = f.submit();
  REQUIRE(f.device->wait_fence(good, 1ms));
  f.engine->retire = false;
  const RingFence bad = f.submit();
  const RingFence later = f.submit();
  f.engine->head = 1;  // the engine is at `bad`
  f.fence_word_fails_but_lands();

  auto ev = f.device->acknowledge_interrupts();
  REQUIRE(ev);
  REQUIRE(ev->fault);
  CHECK(f.device->completed_fence() == good);  // the record says `bad`; the fault record wins
  auto waited = f.device->wait_fence(bad, 1ms);
  REQUIRE_FALSE(waited);
  CHECK(waited.error().code == Errc::DeviceFault);
  CHECK_THAT(waited.error().message, Catch::Contains("BUS_ERROR") && Catch::Contains("last fence seen 1"));
  REQUIRE(f.device->wait_fence(good, 1ms));

  REQUIRE(f.device->reset_engine());
  CHECK(f.device->last_aborted_fence() == later);
  CHECK(f.device->completed_fence() == good);
  for (const RingFence x : {bad, later}) {
    auto gone = f.device->wait_fence(x, 1ms);
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code == Errc::Aborted);
  }
  f.engine->retire = true;
  const RingFence next = f.submit();
  REQUIRE(f.device->wait_fence(next, 1ms));
  CHECK(f.device->completed_fence() == next);
}

TEST_CASE("retire: reset_engine reads a fault the ISR never latched before it counts what was aborted", "[device][retire]") {
  Fixture f;
  const RingFence good = f.submit();
  REQUIRE(f.device->wait_fence(good, 1ms));
  f.engine->retire = false;
  const RingFence bad = f.submit();
  f.engine->head = 1;
  f.fence_word_fails_but_lands();
  REQUIRE_FALSE(f.device->latched_fault());
  REQUIRE(f.device->reset_engine());
  CHECK(f.device->last_aborted_fence() == bad);
  CHECK(f.device->completed_fence() == good);
  auto gone = f.device->wait_fence(bad, 1ms);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == Errc::Aborted);
}

TEST_CASE("retire: the first entry after a reset that faults this way falls back to the fence the ring restarted with",
          "[device][retire]") {
  Fixture f;
  const RingFence good = f.submit();
  REQUIRE(f.device->wait_fence(good, 1ms));
  REQUIRE(f.device->reset_engine());  // nothing aborted: the ring restarts at `good`
  f.engine->retire = false;
  const RingFence bad = f.submit();  // ring slot 0; slot 7 (before it) is empty
  f.fence_word_fails_but_lands();
  REQUIRE(f.device->acknowledge_interrupts());
  CHECK(f.device->completed_fence() == good);
  REQUIRE(f.device->reset_engine());
  CHECK(f.device->last_aborted_fence() == bad);
  CHECK(f.device->completed_fence() == good);
}
