// The host library on the co-simulated Artix-7 board: the whole driver stack (Runtime: device,
// kernel window, memory manager with device paging, scheduler, hang recovery) drives the demo
// workload through TLPs, MSIs and the board's DMA, and every presented frame is the one the C++
// reference model computes; the board's shell, bridge configuration and the driver are checked
// together.
#include <catch2/catch.hpp>

#include <cstring>

#include "backends/backends.hpp"
#include "board/board_transport.hpp"
#include "reference.hpp"
#include "sgpu/sched/runtime.hpp"
#include "workload.hpp"

using namespace sgpu;

namespace {

std::uint64_t fingerprint(const std::vector<std::uint8_t>& bytes) {
  std::uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a, as `sgpu demo` prints it
  for (std::uint8_t b : bytes) h = (h ^ b) * 0x100000001b3ull;
  return h;
}

}  // namespace

namespace {

// Through the registry, as `sgpu --backend <spec> demo` opens it.
void run_demo(const char* spec) {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  auto t = registry.open(spec);
  if (!t) FAIL(to_string(t.error()));
  CHECK((*t)->name() == "board");
  sched::RuntimeOptions ro;
  demo::configure_scheduler(ro.scheduler);  // as `sgpu demo`
  auto rt = sched::Runtime::open(std::move(*t), ro);
  if (!rt) FAIL(to_string(rt.error()));
  demo::WorkloadOptions wo;
  wo.frames = 2;  // both primaries, flipped at vsync; the board co-simulation is slow
  auto r = demo::run_workload(**rt, wo);
  if (!r) FAIL(to_string(r.error()));
  auto refs = demo::reference_frames(wo.geometry, registry, wo.frames);
  if (!refs) FAIL(to_string(refs.error()));
  REQUIRE(r->frames.size() == refs->size());
  for (std::size_t i = 0; i < refs->size(); ++i) CHECK(r->frames[i].bytes == (*refs)[i]);
  CHECK(r->frames_presented == wo.frames);
  CHECK(fingerprint(r->frames[0].bytes) == 0xd868dd70d3bbc32dull);  // the plain sim's frame 1
  CHECK(r->copies_ok);
  CHECK(r->hang_recovered);
  CHECK(r->user_fence == demo::kUserFenceValue);
}

}  // namespace

TEST_CASE("The demo on the co-simulated Artix-7 board presents the reference frames", "[board][demo][s7]") {
  run_demo("board");
}

TEST_CASE("The demo on the UltraScale+ shell (XDMA model) presents the reference frames", "[board][demo][usp]") {
  run_demo("board:usp");
}

TEST_CASE("A DMA window beyond the device's reach is refused at open, naming both", "[board][error]") {
  board::BoardTransportOptions o;
  o.shell = "usp";  // its AXI BAR reaches 2^48
  o.dma_base = std::uint64_t{1} << 47;
  o.dma_size = std::uint64_t{1} << 47;  // ends at 2^48: still fine
  CHECK(board::open_board_transport(o));
  o.dma_size = (std::uint64_t{1} << 47) + 4096;  // one page beyond
  auto t = board::open_board_transport(o);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::Unsupported);
  CHECK_THAT(t.error().message, Catch::Contains("beyond the device's reach") && Catch::Contains("2^48") &&
                                    Catch::Contains("CAP_BUS.addr_bits"));
  // The 7-series shell carries 64-bit addresses: the same window is fine there.
  o.shell = "s7";
  CHECK(board::open_board_transport(o));
}

TEST_CASE("An unknown board shell is refused", "[board][error]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  auto t = registry.open("board:kintex-ultra");
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::InvalidArgument);
  CHECK_THAT(t.error().message, Catch::Contains("kintex-ultra"));
}

TEST_CASE("The board backend's options are the registry's", "[board][registry]") {
  TransportRegistry registry;
  REQUIRE(tb::register_backends(registry));
  auto* o = registry.options<board::BoardTransportOptions>("board");
  REQUIRE(o != nullptr);
  o->shell = "usp";
  o->dma_base = std::uint64_t{1} << 48;  // beyond the XDMA shell's reach: refused at open
  auto t = registry.open("board");
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::Unsupported);
}
