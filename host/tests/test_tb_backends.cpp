// The testbench's transports as programs register them: tb::register_backends adds "sim",
// "model", "pcie-sim" and, where the co-simulated boards are built, "board", with their own
// options, once; set_board reaches every backend that runs the simulated board.
#include <catch2/catch.hpp>

#include "backends/backends.hpp"
#include "model/model_transport.hpp"
#include "pcie/pcie_sim_transport.hpp"
#include "sgpu/device.hpp"
#include "sim/sim_transport.hpp"

using namespace sgpu;

namespace {
#if SGPU_TB_HAVE_BOARD
constexpr const char* kNames = "mock, pcie, sim, model, pcie-sim, board";
#else
constexpr const char* kNames = "mock, pcie, sim, model, pcie-sim";
#endif
}  // namespace

TEST_CASE("tb backends: registered next to libsgpu's own, each with its own options", "[transport][registry]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  CHECK(registry.names() == kNames);
  sim::SimConfig* board = registry.options<sim::SimConfig>("sim");
  REQUIRE(board != nullptr);
  CHECK(board->read_latency == sim::SimConfig{}.read_latency);
  model::Config* model = registry.options<model::Config>("model");
  REQUIRE(model != nullptr);
  CHECK(registry.options<model::Config>("sim") == nullptr);
  pcie::PcieSimOptions* card = registry.options<pcie::PcieSimOptions>("pcie-sim");
  REQUIRE(card != nullptr);
  CHECK(card->card.id == pcie::kSoftgpuId);

  // Twice is refused and adds nothing.
  auto again = tb::register_backends(registry);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::InvalidArgument);
  CHECK(registry.names() == kNames);
}

TEST_CASE("tb backends: sim, model and pcie-sim open from the registry and run a device",
          "[transport][registry][sim]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  sim::SimConfig board;
  board.read_latency = 16;
  tb::set_board(registry, board);
  for (const char* name : {"sim", "model", "pcie-sim"}) {
    auto t = registry.open(name);
    REQUIRE(t);
    CHECK((*t)->name() == name);
    DeviceOptions opt;
    opt.gart = false;  // the model has no GART
    auto dev = Device::open(std::move(*t), opt);
    if (!dev) FAIL(to_string(dev.error()));
  }
  for (const char* spec : {"sim:fast", "pcie-sim:0000:01:00.0"}) {
    auto with_arg = registry.open(spec);
    REQUIRE_FALSE(with_arg);
    CHECK(with_arg.error().code == Errc::InvalidArgument);
  }
}

TEST_CASE("tb backends: one board for every backend that runs it, and how each delivers the interrupt",
          "[transport][registry]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  CHECK(tb::board_options(registry, "sim") == registry.options<sim::SimConfig>("sim"));
  CHECK(tb::board_options(registry, "pcie-sim") == &registry.options<pcie::PcieSimOptions>("pcie-sim")->card.sim);
  for (const char* none : {"mock", "pcie", "model", "nonesuch"}) CHECK(tb::board_options(registry, none) == nullptr);

  sim::SimConfig board;
  board.read_latency = 3;
  board.write_latency = 5;
  board.seed = 99;
  board.clock_hz = 125e6;
  tb::set_board(registry, board);
  for (const char* name : {"sim", "pcie-sim"}) {
    const sim::SimConfig* b = tb::board_options(registry, name);
    REQUIRE(b != nullptr);
    CHECK(b->read_latency == 3);
    CHECK(b->write_latency == 5);
    CHECK(b->seed == 99);
    CHECK(b->clock_hz == 125e6);
  }
  CHECK(registry.options<pcie::PcieSimOptions>("pcie-sim")->card.id == pcie::kSoftgpuId);  // the rest stays

  CHECK(tb::interrupt_is_level(registry, "sim"));
  CHECK(tb::interrupt_is_level(registry, "model"));
  CHECK_FALSE(tb::interrupt_is_level(registry, "pcie-sim"));
  TransportRegistry bare;  // pcie-sim not registered
  CHECK(tb::interrupt_is_level(bare, "pcie-sim"));
  CHECK(tb::board_options(bare, "sim") == nullptr);
}

TEST_CASE("tb backends: a sim board with a clock that is not positive is refused", "[transport][sim]") {
  sim::SimConfig bad;
  bad.clock_hz = 0;
  auto t = sim::open_sim_transport(bad);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::InvalidArgument);
  CHECK_THAT(t.error().message, Catch::Contains("clock_hz"));
}

TEST_CASE("tb backends: a pcie-sim board with a clock that is not positive is refused", "[transport][pcie]") {
  pcie::PcieSimOptions bad;
  bad.card.sim.clock_hz = -1;
  auto t = pcie::open_pcie_sim(bad);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::InvalidArgument);
  CHECK_THAT(t.error().message, Catch::Contains("pcie-sim: clock_hz"));
}
