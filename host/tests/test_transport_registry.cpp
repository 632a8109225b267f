// TransportRegistry: libsgpu's own backends, adding backends with options of their own,
// arguments ("name:argument"), and every refusal.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "sgpu/transport/mock.hpp"
#include "sgpu/transport/pcie.hpp"
#include "sgpu/transport/registry.hpp"

using namespace sgpu;

namespace {

/// A backend's own options, as a simulator or a board would have them.
struct BoardOptions {
  unsigned latency = 64;
  std::string slot;
};

/// Opens a MockTransport and records what the factory was given.
struct Recorder {
  std::shared_ptr<BoardOptions> seen = std::make_shared<BoardOptions>();
  std::shared_ptr<std::string> argument = std::make_shared<std::string>("(not called)");
};

}  // namespace

TEST_CASE("registry: a new registry has libsgpu's own backends, in order", "[transport][registry]") {
  TransportRegistry registry;
  const auto listed = registry.backends();
  REQUIRE(listed.size() == 2);
  CHECK(listed[0].name == "mock");
  CHECK(listed[1].name == "pcie");
  CHECK_FALSE(listed[0].summary.empty());
  CHECK(registry.names() == "mock, pcie");
  CHECK(registry.contains("mock"));
  CHECK_FALSE(registry.contains("sim"));  // the testbench registers that one
  auto mock = registry.open("mock");
  REQUIRE(mock);
  CHECK(dynamic_cast<MockTransport*>(mock->get()) != nullptr);
}

TEST_CASE("registry: a backend opens with its own options, changed through options<T>()", "[transport][registry]") {
  TransportRegistry registry;
  Recorder rec;
  REQUIRE(registry.add("board", "a board", BoardOptions{},
                       [rec](const BoardOptions& o, std::string_view arg) -> Result<std::unique_ptr<Transport>> {
                         *rec.seen = o;
                         *rec.argument = std::string(arg);
                         return std::unique_ptr<Transport>(std::make_unique<MockTransport>());
                       }));
  CHECK(registry.names() == "mock, pcie, board");
  BoardOptions* o = registry.options<BoardOptions>("board");
  REQUIRE(o != nullptr);
  CHECK(o->latency == 64);
  o->latency = 7;

  REQUIRE(registry.open("board"));
  CHECK(rec.seen->latency == 7);
  CHECK(*rec.argument == "");
  // Everything after the first ':' is the argument (a PCI address has colons of its own).
  REQUIRE(registry.open("board:0000:01:00.0"));
  CHECK(*rec.argument == "0000:01:00.0");

  // Options are typed: asking with another type, or for a backend that does not exist, is null.
  CHECK(registry.options<int>("board") == nullptr);
  CHECK(registry.options<BoardOptions>("mock") == nullptr);
  CHECK(registry.options<BoardOptions>("nope") == nullptr);
  CHECK(registry.options<NoOptions>("mock") != nullptr);
}

TEST_CASE("registry: a backend whose factory takes no argument refuses one", "[transport][registry]") {
  TransportRegistry registry;
  auto with_arg = registry.open("mock:extra");
  REQUIRE_FALSE(with_arg);
  CHECK(with_arg.error().code == Errc::InvalidArgument);
  CHECK_FALSE(with_arg.error().hardware_touched);
  CHECK_THAT(with_arg.error().message, Catch::Contains("'mock' takes no argument") && Catch::Contains("extra"));

  // pcie takes the card's address, with options of its own; an argument that is no PCI address
  // is refused by name before anything is looked at.
  CHECK(registry.options<pcie::PcieOptions>("pcie") != nullptr);
  auto pcie = registry.open("pcie:slot-3");
  REQUIRE_FALSE(pcie);
  CHECK(pcie.error().code == Errc::InvalidArgument);
  CHECK_FALSE(pcie.error().hardware_touched);
  CHECK_THAT(pcie.error().message, Catch::Contains("'slot-3' is not a PCI address"));
}

TEST_CASE("registry: bad names and duplicates are refused, nothing changes", "[transport][registry]") {
  TransportRegistry registry;
  const auto factory = []() -> Result<std::unique_ptr<Transport>> { return std::unique_ptr<Transport>(); };
  for (const char* bad : {"", "a:b", "sp ace", "slash/"}) {
    auto s = registry.add(bad, "bad", factory);
    REQUIRE_FALSE(s);
    CHECK(s.error().code == Errc::InvalidArgument);
  }
  auto dup = registry.add("mock", "again", factory);
  REQUIRE_FALSE(dup);
  CHECK(dup.error().code == Errc::InvalidArgument);
  CHECK_THAT(dup.error().message, Catch::Contains("'mock' is already registered"));
  CHECK(registry.names() == "mock, pcie");

  auto unknown = registry.open("carrier-pigeon:fast");
  REQUIRE_FALSE(unknown);
  CHECK(unknown.error().code == Errc::InvalidArgument);
  CHECK_THAT(unknown.error().message, Catch::Contains("'carrier-pigeon'") && Catch::Contains("mock, pcie"));
}

TEST_CASE("registry: a factory's error comes back as it is, an exception as a TransportError",
          "[transport][registry]") {
  TransportRegistry registry;
  REQUIRE(registry.add("refuses", "always refuses", []() -> Result<std::unique_ptr<Transport>> {
    return Error::unsupported("no such card");
  }));
  REQUIRE(registry.add("throws", "throws", [](std::string_view) -> Result<std::unique_ptr<Transport>> {
    throw TransportFailure("link down");
  }));
  auto refused = registry.open("refuses");
  REQUIRE_FALSE(refused);
  CHECK(refused.error().code == Errc::Unsupported);
  CHECK(refused.error().message == "no such card");
  auto thrown = registry.open("throws:x");
  REQUIRE_FALSE(thrown);
  CHECK(thrown.error().code == Errc::TransportError);
  CHECK_THAT(thrown.error().message, Catch::Contains("'throws'") && Catch::Contains("link down"));
}

TEST_CASE("registry: two registries are independent", "[transport][registry]") {
  TransportRegistry a, b;
  REQUIRE(a.add("extra", "only in a", []() -> Result<std::unique_ptr<Transport>> {
    return std::unique_ptr<Transport>(std::make_unique<MockTransport>());
  }));
  CHECK(a.contains("extra"));
  CHECK_FALSE(b.contains("extra"));
  TransportRegistry moved = std::move(a);
  CHECK(moved.open("extra"));
}
