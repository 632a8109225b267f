// End to end: libsgpu on the "model" transport, against the C++ reference model instead of the
// RTL. The same driver code runs unchanged; these flows mirror test_sim_e2e.cpp.
#include <catch2/catch.hpp>

#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

namespace {

Device open_model() {
  auto t = test::tb_registry().open("model");
  REQUIRE(t);
  auto d = Device::open(std::move(*t));
  if (!d) FAIL(to_string(d.error()));
  return std::move(*d);
}

DmaMemory alloc(Transport& t, std::size_t bytes) {
  auto m = t.alloc_dma(bytes);
  REQUIRE(m);
  return std::move(*m);
}

}  // namespace

TEST_CASE("model: open reports the mirrored device's identity and capabilities", "[e2e][model]") {
  Device dev = open_model();
  const DeviceInfo& i = dev.info();
  CHECK(dev.transport().name() == "model");
  CHECK(i.magic == SGPU_REGS__ID_MAGIC__VALUE_reset);
  CHECK(i.version_major == SGPU_REGS__ID_VERSION__MAJOR_reset);
  CHECK(i.bus_data_bytes == 8);
  CHECK(i.page_size() == 4096);
  CHECK(i.max_ring_log2 >= 6);
  CHECK(i.has_copy_engine);
  CHECK_FALSE(i.has_gart);
}

TEST_CASE("model: WRITE_DATA, COPY and FENCE complete and land byte-exact", "[e2e][model]") {
  Device dev = open_model();
  Transport& t = dev.transport();
  auto data = alloc(t, 3 * 4096);
  auto buf = alloc(t, 4096);
  PacketWriter w(buf);
  REQUIRE(w.write_data(data.bus_addr() + 4, {0x11111111, 0x22222222, 0x33333333}));
  REQUIRE(w.copy(data.bus_addr() + 4, data.bus_addr() + 4096 + 1, 12));
  REQUIRE(w.fence(data.bus_addr() + 8192, 0xfeed, abi::fence_flags::kValue64));
  const RingFence f = dev.submit_next({&buf, 0, w.offset(), 1, 0}).value();
  REQUIRE(dev.wait_fence(f, 1ms));
  CHECK(dev.completed_fence() == f);
  const auto* words = data.as<std::uint32_t>();
  CHECK(words[1] == 0x11111111);
  CHECK(words[3] == 0x33333333);
  const auto* bytes = data.as<std::uint8_t>();
  for (unsigned i = 0; i < 12; ++i) CHECK(bytes[4096 + 1 + i] == bytes[4 + i]);
  CHECK(bytes[4096] == 0);
  CHECK(bytes[4096 + 13] == 0);
  CHECK(data.as<std::uint64_t>()[1024] == 0xfeed);
}

TEST_CASE("model: an unknown opcode faults, reset_engine recovers, a never-submitted fence times out",
          "[e2e][model][fault]") {
  Device dev = open_model();
  Transport& t = dev.transport();
  auto slots = alloc(t, 4096);
  auto bad = alloc(t, 4096);
  PacketWriter w(bad);
  const std::uint32_t header = (1u << abi::header::kDwordsLsb) | (0xeeu << abi::header::kOpcodeLsb);
  REQUIRE(w.raw({header}));
  const RingFence f1 = dev.submit_next({&bad, 0, w.offset(), 3, 0}).value();
  auto waited = dev.wait_fence(f1, 1ms);
  REQUIRE_FALSE(waited);
  CHECK(waited.error().code == Errc::DeviceFault);
  auto rec = dev.fault();
  REQUIRE(rec);
  REQUIRE(rec->has_value());
  CHECK((*rec)->reason == abi::Fault::IllegalOpcode);
  CHECK((*rec)->detail == header);
  CHECK((*rec)->address == bad.bus_addr());

  REQUIRE(dev.reset_engine());
  auto good = alloc(t, 4096);
  PacketWriter g(good);
  REQUIRE(g.fence(slots.bus_addr(), 5, abi::fence_flags::kValue64));
  const RingFence f2 = dev.submit_next({&good, 0, g.offset(), 3, 0}).value();
  REQUIRE(dev.wait_fence(f2, 1ms));
  CHECK(slots.as<std::uint64_t>()[0] == 5);

  auto never = dev.wait_fence(f2 + 10, 1ms);
  REQUIRE_FALSE(never);
  CHECK(never.error().code == Errc::Timeout);
  CHECK_THAT(never.error().message, Catch::Contains(std::to_string(f2.value())));
}
