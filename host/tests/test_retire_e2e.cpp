// End to end through libsgpu on the Verilated RTL: a fault while an entry retires (a bus error on
// either word of the write-back record, the watchdog while retirement waits for write
// responses) is a fault of that entry for the host as for the device. wait_fence() reports it,
// completed_fence() stays at the entry before, reset_engine() counts its fence (and every later
// one) aborted, and the ring runs again after the reset. The board is the test's own (sim
// transport over a SimDevice it keeps) so that it can inject errors on the host-memory port.
#include <catch2/catch.hpp>

#include <functional>
#include <memory>
#include <optional>

#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_transport.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

namespace {

constexpr std::uint8_t kSlvErr = 2;
constexpr std::uint8_t kDecErr = 3;

struct Rig {
  std::shared_ptr<sim::SimDevice> board;
  std::optional<Device> dev;
  std::uint64_t wb = 0;  ///< WB_ADDR as the library programmed it
  DmaMemory buffer;
  std::uint32_t end = 0;

  explicit Rig(sim::SimConfig cfg) : board(std::make_shared<sim::SimDevice>(cfg)) {
    DeviceOptions opt;
    opt.ring_log2_entries = 4;
    opt.gart = false;  // the buffer is submitted at its bus address
    auto d = Device::open(sim::open_sim_transport_over(board), opt);
    if (!d) FAIL(to_string(d.error()));
    dev.emplace(std::move(*d));
    Transport& t = dev->transport();
    wb = t.read32(SGPU_REG(WB_ADDR_LO)) | (std::uint64_t{t.read32(SGPU_REG(WB_ADDR_HI))} << 32);
    auto b = t.alloc_dma(4096);
    REQUIRE(b);
    buffer = std::move(*b);
    PacketWriter w(buffer);
    REQUIRE(w.nop(4));
    end = w.offset();
  }

  RingFence submit() {
    auto f = dev->submit_next({&buffer, 0, end, 1, 0});
    if (!f) FAIL(to_string(f.error()));
    return *f;
  }
};

sim::SimConfig fast_reads(unsigned write_latency) {
  sim::SimConfig cfg;
  cfg.read_latency = 4;
  cfg.write_latency = write_latency;
  return cfg;
}

/// `bad` faulted while retiring with `reason` at `addr`; `good` retired before it and `later`
/// was queued behind it. Checks what the host reports, removes the cause (`repair`), resets,
/// checks the accounting, recovers.
void expect_fault_then_abort(Rig& r, RingFence good, RingFence bad, RingFence later, abi::Fault reason,
                             std::uint64_t addr, const std::function<void()>& repair) {
  auto waited = r.dev->wait_fence(bad, 1ms);
  REQUIRE_FALSE(waited);
  CHECK(waited.error().code == Errc::DeviceFault);
  CHECK_THAT(waited.error().message, Catch::Contains(std::string(abi::to_string(reason))));
  const auto& f = r.dev->latched_fault();
  REQUIRE(f);
  CHECK(f->reason == reason);
  CHECK(f->fence == bad);
  CHECK(f->address == addr);
  CHECK(r.dev->completed_fence() == good);
  REQUIRE(r.dev->wait_fence(good, 1ms));  // the entry before it did complete
  auto behind = r.dev->wait_fence(later, 1ms);
  REQUIRE_FALSE(behind);
  CHECK(behind.error().code == Errc::DeviceFault);

  repair();
  REQUIRE(r.dev->reset_engine());
  CHECK(r.dev->last_aborted_fence() == later);
  CHECK(r.dev->completed_fence() == good);
  for (const RingFence f : {bad, later}) {
    auto gone = r.dev->wait_fence(f, 1ms);
    REQUIRE_FALSE(gone);
    CHECK(gone.error().code == Errc::Aborted);
  }
  const RingFence again = r.submit();
  REQUIRE(r.dev->wait_fence(again, 1ms));
  CHECK(r.dev->completed_fence() == again);
}

}  // namespace

TEST_CASE("a bus error on a word of the write-back record: wait_fence reports the fault, reset_engine aborts the fence",
          "[e2e][retire][fault]") {
  const bool fence_word = GENERATE(false, true);
  const std::uint8_t resp = GENERATE(kSlvErr, kDecErr);
  INFO((fence_word ? "fence word" : "head word") << ", response " << unsigned{resp});
  Rig r(fast_reads(8));
  const RingFence good = r.submit();
  REQUIRE(r.dev->wait_fence(good, 1ms));
  const std::uint64_t word = fence_word ? r.wb : r.wb + 8;
  r.board->memory_port().inject_error(word, word + 8, resp);
  const RingFence bad = r.submit();
  const RingFence later = r.submit();
  expect_fault_then_abort(r, good, bad, later, abi::Fault::BusError, word,
                          [&] { r.board->memory_port().clear_errors(); });
}

TEST_CASE("the watchdog while retirement waits for write responses: the fence is aborted, not completed",
          "[e2e][retire][watchdog]") {
  // Reads take 4 cycles, writes 100: with CP_WATCHDOG = 60 only retirement's wait for the head
  // word's response is long enough to meet it.
  Rig r(fast_reads(100));
  const RingFence good = r.submit();
  REQUIRE(r.dev->wait_fence(good, 1ms));
  r.dev->transport().write32(SGPU_REG(CP_WATCHDOG), 60);
  const RingFence bad = r.submit();
  const RingFence later = r.submit();
  expect_fault_then_abort(r, good, bad, later, abi::Fault::Watchdog, r.wb,
                          [&] { r.dev->transport().write32(SGPU_REG(CP_WATCHDOG), 0); });
}

TEST_CASE("reset_engine without the ISR having seen the fault still aborts the faulting fence",
          "[e2e][retire][fault]") {
  Rig r(fast_reads(8));
  const RingFence good = r.submit();
  REQUIRE(r.dev->wait_fence(good, 1ms));
  r.board->memory_port().inject_error(r.wb, r.wb + 8, kDecErr);
  const RingFence bad = r.submit();
  r.board->step(2000);  // the entry faults; nobody acknowledges the interrupt
  REQUIRE_FALSE(r.dev->latched_fault());
  r.board->memory_port().clear_errors();
  REQUIRE(r.dev->reset_engine());
  CHECK(r.dev->last_aborted_fence() == bad);
  CHECK(r.dev->completed_fence() == good);
  auto gone = r.dev->wait_fence(bad, 1ms);
  REQUIRE_FALSE(gone);
  CHECK(gone.error().code == Errc::Aborted);
}
