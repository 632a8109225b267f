#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <utility>

#include "sgpu/result.hpp"

using namespace sgpu;

namespace {

Result<int> parse(bool good) {
  if (!good) return Error{Errc::InvalidArgument, "bad input", Touched::Nothing};
  return 42;
}

Status chain(bool good) {
  SGPU_RETURN_IF_ERROR(parse(good));
  return ok_status();
}

}  // namespace

TEST_CASE("Result holds a value or an error", "[result]") {
  auto ok = parse(true);
  REQUIRE(ok);
  CHECK(ok.has_value());
  CHECK(*ok == 42);
  CHECK(ok.value() == 42);

  auto bad = parse(false);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::InvalidArgument);
  CHECK(bad.error().message == "bad input");
  CHECK_FALSE(bad.error().hardware_touched);
  CHECK_THROWS_AS(bad.value(), BadResultAccess);
}

TEST_CASE("Result works with move-only values", "[result]") {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  REQUIRE(r);
  std::unique_ptr<int> p = std::move(r).value();
  CHECK(*p == 7);
}

TEST_CASE("Status and SGPU_RETURN_IF_ERROR propagate errors unchanged", "[result]") {
  CHECK(chain(true));
  auto s = chain(false);
  REQUIRE_FALSE(s);
  CHECK(s.error().code == Errc::InvalidArgument);
  CHECK(s.error().message == "bad input");
  CHECK_THROWS_AS(s.value(), BadResultAccess);
  CHECK_NOTHROW(ok_status().value());
}

TEST_CASE("error codes have stable names", "[result]") {
  CHECK(to_string(Errc::InvalidArgument) == "invalid_argument");
  CHECK(to_string(Errc::DeviceMismatch) == "device_mismatch");
  CHECK(to_string(Errc::Timeout) == "timeout");
  CHECK(to_string(Errc::OutOfMemory) == "out_of_memory");
  CHECK(to_string(Errc::DeviceFault) == "device_fault");
  CHECK(to_string(Errc::Unsupported) == "unsupported");
  CHECK(to_string(Errc::TransportError) == "transport_error");
  CHECK(to_string(Error{Errc::Timeout, "fence 3", Touched::Hardware}) == "timeout: fence 3");
}

namespace {

Result<std::unique_ptr<int>> boxed(bool good) {
  if (!good) return Error::make(Errc::OutOfMemory, Touched::Hardware, "no room for {} bytes", 64);
  return std::make_unique<int>(5);
}

/// Unwraps with SGPU_ASSIGN_OR_RETURN into a new variable and into an existing one.
Result<int> twice(bool first, bool second) {
  SGPU_ASSIGN_OR_RETURN(auto a, boxed(first));
  std::unique_ptr<int> b;
  SGPU_ASSIGN_OR_RETURN(b, boxed(second));
  return *a + *b;
}

}  // namespace

TEST_CASE("Error helpers format the message and say whether hardware was touched", "[result]") {
  const Error i = Error::invalid("offset {:#x} is not {}-byte aligned", 6, 4);
  CHECK(i.code == Errc::InvalidArgument);
  CHECK(i.message == "offset 0x6 is not 4-byte aligned");
  CHECK_FALSE(i.hardware_touched);
  CHECK(Error::busy("ring full").code == Errc::Busy);
  CHECK(Error::unsupported("no {}", "pcie").message == "no pcie");
  CHECK(Error::unsupported("x").code == Errc::Unsupported);
  CHECK(Error::denied("privileged").code == Errc::PermissionDenied);
  for (const Error& e : {Error::busy("a"), Error::unsupported("b"), Error::denied("c")})
    CHECK_FALSE(e.hardware_touched);

  const Error t = Error::make(Errc::Timeout, Touched::Hardware, "fence {} not reached", 7);
  CHECK(t.code == Errc::Timeout);
  CHECK(t.message == "fence 7 not reached");
  CHECK(t.hardware_touched);
  CHECK_FALSE(Error::make(Errc::Aborted, Touched::Nothing, "gone").hardware_touched);
  const bool after_paging = true;
  CHECK(Error(Errc::OutOfMemory, "full", Touched{after_paging}).hardware_touched);
}

TEST_CASE("SGPU_ASSIGN_OR_RETURN unwraps a value or returns the error unchanged", "[result]") {
  auto ok = twice(true, true);
  REQUIRE(ok);
  CHECK(*ok == 10);
  for (auto [first, second] : {std::pair{false, true}, std::pair{true, false}}) {
    auto bad = twice(first, second);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Errc::OutOfMemory);
    CHECK(bad.error().message == "no room for 64 bytes");
    CHECK(bad.error().hardware_touched);
  }
}

TEST_CASE("Result::status keeps the error and drops the value", "[result]") {
  CHECK(parse(true).status());
  const Status s = parse(false).status();
  REQUIRE_FALSE(s);
  CHECK(s.error().message == "bad input");
}
