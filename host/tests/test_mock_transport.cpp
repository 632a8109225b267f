#include <catch2/catch.hpp>

#include <cstring>

#include "sgpu/regs.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/transport/registry.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

TEST_CASE("mock transport scripts reads and logs every access", "[mock_transport]") {
  MockTransport m;
  m.set_reg(SGPU_REG(STATUS), 1);
  m.queue_read(SGPU_REG(STATUS), 4);
  CHECK(m.read32(SGPU_REG(STATUS)) == 4);  // queued value first
  CHECK(m.read32(SGPU_REG(STATUS)) == 1);  // then the sticky one
  CHECK(m.read32(SGPU_REG(CTRL)) == 0);    // unset registers read 0
  m.write32(SGPU_REG(RING_TAIL), 3);
  const std::vector<MockTransport::Access> expected{
      MockTransport::read(SGPU_REG(STATUS), 4), MockTransport::read(SGPU_REG(STATUS), 1),
      MockTransport::read(SGPU_REG(CTRL), 0), MockTransport::write(SGPU_REG(RING_TAIL), 3)};
  CHECK(m.log() == expected);
  CHECK(m.writes().size() == 1);
}

TEST_CASE("mock transport time advances with accesses and interrupt waits", "[mock_transport]") {
  MockTransport m;
  const auto t0 = m.now();
  (void)m.read32(0);
  CHECK(m.now() > t0);
  const auto t1 = m.now();
  CHECK_FALSE(m.wait_irq(5us));
  CHECK(m.now() - t1 == 5us);
  m.set_irq(true);
  CHECK(m.wait_irq(5us));
}

TEST_CASE("mock DMA memory is page aligned above 4 GiB and freed with its owner", "[mock_transport]") {
  auto m = std::make_unique<MockTransport>();
  auto a = m->alloc_dma(100);
  REQUIRE(a);
  CHECK(a->bus_addr() >= (std::uint64_t{1} << 32));
  CHECK(a->bus_addr() % 4096 == 0);
  CHECK(a->size() == 4096);
  CHECK(m->dma_cpu(a->bus_addr() + 8) == a->bytes() + 8);
  CHECK(m->dma_cpu(a->bus_addr() + 4096) == nullptr);
  for (std::size_t i = 0; i < a->size(); ++i) REQUIRE(a->bytes()[i] == std::byte{0});
  CHECK(m->dma_allocations() == 1);

  DmaMemory moved = std::move(*a);
  CHECK_FALSE(*a);
  CHECK(m->dma_allocations() == 1);
  moved.reset();
  CHECK(m->dma_allocations() == 0);

  m->fail_next_alloc();
  auto refused = m->alloc_dma(4096);
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::OutOfMemory);

  // A buffer may outlive its transport.
  auto late = m->alloc_dma(4096);
  REQUIRE(late);
  m.reset();
  std::memset(late->cpu(), 0xab, late->size());
}

TEST_CASE("a transport registry picks a backend by name", "[transport]") {
  TransportRegistry registry;
  auto mock = registry.open("mock");
  REQUIRE(mock);
  CHECK((*mock)->name() == "mock");

  // No card at this address (on this machine, or the test's): a message that lists what was seen.
  auto pcie = registry.open("pcie:0000:7f:1f.7");
  REQUIRE_FALSE(pcie);
  CHECK(pcie.error().code == Errc::TransportError);
  CHECK_FALSE(pcie.error().hardware_touched);
  CHECK_THAT(pcie.error().message, Catch::Contains("no PCI function at 0000:7f:1f.7"));

  auto bogus = registry.open("carrier-pigeon");
  REQUIRE_FALSE(bogus);
  CHECK(bogus.error().code == Errc::InvalidArgument);
  CHECK_THAT(bogus.error().message, Catch::Contains("carrier-pigeon"));
}
