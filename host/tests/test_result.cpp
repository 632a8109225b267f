#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "sgpu/result.hpp"

using namespace sgpu;

namespace {

Result<int> parse(bool good) {
  if (!good) return Error{Errc::InvalidArgument, "bad input", false};
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
  CHECK(to_string(Error{Errc::Timeout, "fence 3", true}) == "timeout: fence 3");
}
