// Several simulated devices in one process (multi-adapter tests, a virtual platform with two
// GPUs, the co-simulated boards): each is independent, and they are created, used and destroyed
// in every order without hanging (one Verilator context per device).
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cstddef>
#include <memory>

#include "sgpu/gen/sgpu_regs.h"
#include "sim/sim_device.hpp"

using sgpu::sim::SimConfig;
using sgpu::sim::SimDevice;

namespace {
constexpr std::uint32_t kIdMagic = static_cast<std::uint32_t>(offsetof(sgpu_regs_t, ID_MAGIC));
}  // namespace

TEST_CASE("devices: three simulated devices live side by side and die in any order", "[top][devices]") {
  std::array<int, 3> order{0, 1, 2};
  do {
    INFO("destruction order " << order[0] << order[1] << order[2]);
    std::array<std::unique_ptr<SimDevice>, 3> devices;
    for (int i = 0; i < 3; ++i) {
      SimConfig c;
      c.seed = static_cast<std::uint64_t>(i + 1);
      devices[static_cast<std::size_t>(i)] = std::make_unique<SimDevice>(c);
    }
    // Interleaved use: each keeps its own state.
    for (int round = 0; round < 2; ++round)
      for (auto& d : devices) {
        d->step(50);
        CHECK(d->mmio_read32(kIdMagic) == SGPU_REGS__ID_MAGIC__VALUE_reset);
      }
    CHECK(devices[0]->cycle() == devices[2]->cycle());
    for (int i : order) devices[static_cast<std::size_t>(i)].reset();
    // And a new one after all of them are gone.
    SimDevice after;
    CHECK(after.mmio_read32(kIdMagic) == SGPU_REGS__ID_MAGIC__VALUE_reset);
  } while (std::next_permutation(order.begin(), order.end()));
}
