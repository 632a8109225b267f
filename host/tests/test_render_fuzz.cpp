// The fuzz oracle of kmd::render (host/fuzz/render_oracle.hpp) over deterministic random inputs:
// the libFuzzer target explores further with `make fuzz`; this keeps the property in every run.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <random>
#include <vector>

#include "render_oracle.hpp"
#include "sgpu/diag/progress.hpp"

TEST_CASE("render: random and mutated command buffers never break the validation property", "[render][fuzz]") {
  const char* soak = std::getenv("SGPU_SOAK");
  const int runs = soak && *soak == '1' ? 1000000 : 20000;
  std::mt19937_64 rng(0x5eed);
  std::vector<std::uint8_t> input;
  int accepted = 0;
  sgpu::diag::Progress progress("render fuzz", static_cast<std::uint64_t>(runs));  // quiet unless on a terminal
  for (int i = 0; i < runs; ++i) {
    if (i % 1000 == 0) progress.update(static_cast<std::uint64_t>(i));
    input.resize(16 + rng() % 256);
    for (auto& b : input) b = static_cast<std::uint8_t>(rng());
    bool ok = false;
    const std::string broken = sgpu::fuzz::check_render(input.data(), input.size(), &ok);
    accepted += ok;
    if (!broken.empty()) {
      INFO("run " << i);
      FAIL(broken);
    }
  }
  progress.update(static_cast<std::uint64_t>(runs));
  progress.finish();
  // Both sides explored: a good share passes validation, a good share is rejected.
  INFO("accepted " << accepted << " of " << runs);
  CHECK(accepted > runs / 10);
  CHECK(accepted < runs - runs / 10);
}
