// The testbench's transports as programs register them: tb::register_backends adds "sim" and
// "model" with their own options, once.
#include <catch2/catch.hpp>

#include "backends/backends.hpp"
#include "model/model_transport.hpp"
#include "sgpu/device.hpp"
#include "sim/sim_transport.hpp"

using namespace sgpu;

TEST_CASE("tb backends: registered next to libsgpu's own, each with its own options", "[transport][registry]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  CHECK(registry.names() == "mock, pcie, sim, model");
  sim::SimConfig* board = registry.options<sim::SimConfig>("sim");
  REQUIRE(board != nullptr);
  CHECK(board->read_latency == sim::SimConfig{}.read_latency);
  model::Config* model = registry.options<model::Config>("model");
  REQUIRE(model != nullptr);
  CHECK(registry.options<model::Config>("sim") == nullptr);

  // Twice is refused and adds nothing.
  auto again = tb::register_backends(registry);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::InvalidArgument);
  CHECK(registry.names() == "mock, pcie, sim, model");
}

TEST_CASE("tb backends: sim and model open from the registry and run a device", "[transport][registry][sim]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  registry.options<sim::SimConfig>("sim")->read_latency = 16;
  for (const char* name : {"sim", "model"}) {
    auto t = registry.open(name);
    REQUIRE(t);
    CHECK((*t)->name() == name);
    DeviceOptions opt;
    opt.gart = false;  // the model has no GART
    auto dev = Device::open(std::move(*t), opt);
    if (!dev) FAIL(to_string(dev.error()));
  }
  auto with_arg = registry.open("sim:fast");
  REQUIRE_FALSE(with_arg);
  CHECK(with_arg.error().code == Errc::InvalidArgument);
}

TEST_CASE("tb backends: a sim board with a clock that is not positive is refused", "[transport][sim]") {
  sim::SimConfig bad;
  bad.clock_hz = 0;
  auto t = sim::open_sim_transport(bad);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::InvalidArgument);
  CHECK_THAT(t.error().message, Catch::Contains("clock_hz"));
}
