// Device loss end to end: the scheduler runs real work on the Verilated RTL (or another parity
// backend) when the card goes away under it — every register read returns all ones, as after a
// PCIe surprise removal, or the link throws — and every wait ends with DeviceLost saying why,
// instead of waiting for a TdrDelay that can never help. The unit tests of the same rules on the
// mock transport are in test_sched_deadlines.cpp.
#include <catch2/catch.hpp>

#include <memory>
#include <utility>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

/// The backend under test, until remove() (reads all ones, writes go nowhere) or break_link()
/// (every register access throws, as the sim backend's MMIO timeout does). Time and interrupts
/// still come from the backend, so the scheduler keeps stepping through simulated time.
class Removable final : public Transport {
 public:
  explicit Removable(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
  void remove() { removed_ = true; }
  void break_link() { broken_ = true; }

  std::uint32_t read32(std::uint32_t offset) override {
    if (broken_) throw TransportFailure("link down (test)");
    return removed_ ? 0xFFFF'FFFFu : inner_->read32(offset);
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    if (broken_) throw TransportFailure("link down (test)");
    if (!removed_) inner_->write32(offset, value);
  }
  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override { return inner_->alloc_dma(bytes, align); }
  bool wait_irq(std::chrono::nanoseconds timeout) override { return inner_->wait_irq(timeout); }
  std::chrono::nanoseconds now() override { return inner_->now(); }
  std::string_view name() const override { return inner_->name(); }

 private:
  std::unique_ptr<Transport> inner_;
  bool removed_ = false;
  bool broken_ = false;
};

kmd::AllocationInfo memory_info(std::uint64_t bytes) {
  return kmd::AllocationInfo::placed(bytes, kmd::SegmentSet::of(1), 1, kmd::AllocationInfoFlags::kCpuVisible);
}

// One test case per way of going away: the SystemC backends build one platform per process.
void lose_the_card_mid_run(bool all_ones) {
  auto owned = std::make_unique<Removable>(test::open_e2e_transport());
  Removable& card = *owned;
  RuntimeOptions o;
  o.scheduler.tdr_delay = 2ms;  // longer than the test's waits: only the loss can end them
  auto rt = Runtime::open(std::move(owned), o);
  if (!rt) FAIL(to_string(rt.error()));
  auto& s = (*rt)->scheduler();
  auto dev = (*rt)->adapter().create_device({});
  auto hang = (*rt)->create_context(*dev);
  auto work = (*rt)->create_context(*dev);
  REQUIRE(hang);
  REQUIRE(work);
  auto sem = dev->create_allocation(memory_info(4096));
  auto dst = dev->create_allocation(memory_info(4096));
  REQUIRE(sem);
  REQUIRE(dst);

  // Work that runs and completes before the loss.
  umd::CommandList first;
  REQUIRE(first.fill(dst->handle(), 0, 4096, 0x1111'1111u));
  auto done = s.submit((*work)->get(), first);
  REQUIRE(done);
  if (Status w = s.wait(*done, 2ms); !w) FAIL(to_string(w.error()));

  // A WAIT_MEM nobody satisfies holds the engine; the work behind it cannot finish.
  umd::CommandList stuck;
  REQUIRE(stuck.fill(sem->handle(), 0, 4096, 0));
  REQUIRE(stuck.wait(sem->handle(), 0, abi::WaitMemFunc::Eq, 1, 0xffffffffu, 16));
  auto held = s.submit((*hang)->get(), stuck);
  REQUIRE(held);
  umd::CommandList second;
  REQUIRE(second.fill(dst->handle(), 0, 4096, 0x2222'2222u));
  auto behind = s.submit((*work)->get(), second);
  REQUIRE(behind);
  auto w = s.wait(*behind, 50us);
  REQUIRE_FALSE(w);
  REQUIRE(w.error().code == Errc::Timeout);  // still there: an ordinary timeout

  if (all_ones)
    card.remove();
  else
    card.break_link();
  const auto lost_at = (*rt)->device().transport().now();
  w = s.wait(*behind, 10ms);
  REQUIRE_FALSE(w);
  CHECK(w.error().code == Errc::DeviceLost);
  CHECK_THAT(w.error().message, Catch::Contains(all_ones ? "all ones" : "link down (test)"));
  // Found at the first wait step, long before TdrDelay; no engine reset of a missing card.
  CHECK((*rt)->device().transport().now() - lost_at < o.scheduler.tdr_delay);
  CHECK(s.counters().recoveries == 0);
  REQUIRE(s.fatal_error());

  // Every other wait and every later call ends the same way, at once.
  CHECK(s.wait(*held, 10ms).error().code == Errc::DeviceLost);
  CHECK(s.idle(10ms).error().code == Errc::DeviceLost);
  CHECK(s.flush().error().code == Errc::DeviceLost);
  auto again = s.submit((*work)->get(), first);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::DeviceLost);
  // What completed before the loss stays completed.
  CHECK(*s.query(*done) == FenceStatus::Completed);
}

}  // namespace

TEST_CASE("device lost on the RTL: a card that starts reading all ones mid-run ends every wait with DeviceLost",
          "[sched][sim][parity][device_lost]") {
  lose_the_card_mid_run(true);
}

TEST_CASE("device lost on the RTL: a link that breaks mid-run ends every wait with DeviceLost",
          "[sched][sim][parity][device_lost][link_break]") {
  lose_the_card_mid_run(false);
}
