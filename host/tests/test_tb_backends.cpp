// The testbench's transports as programs register them: tb::register_backends adds "sim",
// "model", "pcie-sim" and, where the co-simulated boards are built, "board", with their own
// options, once; set_board reaches every backend that runs the simulated board. The sim board's
// two model configurations (fast, checked) agree.
#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <vector>

#include "Vsgpu_top.h"
#include "Vsgpu_top_fast.h"
#include "backends/backends.hpp"
#include "common/bench.hpp"
#include "model/model_transport.hpp"
#include "pcie/pcie_sim_transport.hpp"
#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sim/sim_device.hpp"
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

namespace {

// A few submissions of WRITE_DATA + FENCE on a device of the given model: the device cycle
// counter when the last fence is done and the bytes written.
struct FastRun {
  std::uint64_t cycles = 0;
  std::vector<std::uint32_t> written;
  sim::SimModel model = sim::SimModel::Checked;
};

FastRun run_small_workload(sim::SimModel model) {
  sim::SimConfig board;
  board.model = model;
  board.check_axi = model == sim::SimModel::Checked;
  auto device = std::make_shared<sim::SimDevice>(board);
  FastRun run;
  run.model = device->model();
  auto dev = Device::open(sim::open_sim_transport_over(device), DeviceOptions{});
  REQUIRE(dev);
  Transport& t = dev->transport();
  auto target = t.alloc_dma(4096);
  REQUIRE(target);
  std::memset(target->cpu(), 0, 4096);
  RingFence last;
  for (std::uint32_t s = 0; s < 4; ++s) {
    auto buf = t.alloc_dma(4096);
    REQUIRE(buf);
    PacketWriter w(*buf);
    std::vector<std::uint32_t> data(16, 0xC0DE0000u + s);
    REQUIRE(w.write_data(target->bus_addr() + 64u * s, data.data(), data.size()));
    REQUIRE(w.fence(target->bus_addr() + 1024 + 8u * s, s, 0));
    auto fence = dev->submit_next({&*buf, 0, w.offset(), 0, abi::ring_flags::kPrivileged});
    REQUIRE(fence);
    last = *fence;
    REQUIRE(dev->wait_fence(last, std::chrono::milliseconds(10)));
  }
  auto cycles = dev->cycle_counter();
  REQUIRE(cycles);
  run.cycles = *cycles;
  const auto* words = static_cast<const std::uint32_t*>(target->cpu());
  run.written.assign(words, words + 1024 / 4 + 8);
  return run;
}

}  // namespace

TEST_CASE("sim: the fast model (one eval per cycle) runs the checked model's cycles and writes its bytes",
          "[transport][sim]") {
  const FastRun checked = run_small_workload(sim::SimModel::Checked);
  const FastRun fast = run_small_workload(sim::SimModel::Fast);
  CHECK(checked.model == sim::SimModel::Checked);
  CHECK(fast.model == sim::SimModel::Fast);
  CHECK(fast.cycles == checked.cycles);
  CHECK(fast.written == checked.written);
  CHECK(fast.written[0] == 0xC0DE0000u);
  CHECK(fast.written[3 * 16] == 0xC0DE0003u);
}

TEST_CASE("sim: a waveform selects the checked model, and a fast model refuses one", "[transport][sim]") {
  sim::SimConfig board;
  board.model = sim::SimModel::Fast;
  CHECK(sim::model_for(board) == sim::SimModel::Fast);
  board.fst_path = "wave.fst";
  CHECK(sim::model_for(board) == sim::SimModel::Checked);
  CHECK(sim::to_string(sim::SimModel::Fast) == "fast");
  CHECK(sim::to_string(sim::SimModel::Checked) == "checked");

  // The fast model has no trace code: a bench of it asked for a waveform throws before it builds.
  using FastBench = tb::Bench<Vsgpu_top_fast>;
  CHECK_FALSE(tb::HasTrace<Vsgpu_top_fast>::value);
  CHECK(tb::HasTrace<Vsgpu_top>::value);
  FastBench::Options options;
  options.fst_path = "never-written.fst";
  CHECK_THROWS_AS(FastBench(options), std::invalid_argument);
  CHECK_FALSE(std::filesystem::exists("never-written.fst"));
}
