#include <catch2/catch.hpp>

#include "transport/bus_allocator.hpp"

using sgpu::detail::BusAllocator;

TEST_CASE("bus allocator hands out aligned, disjoint ranges above its base", "[bus_allocator]") {
  BusAllocator a(std::uint64_t{1} << 32, std::uint64_t{1} << 24);
  auto x = a.allocate(4096, 4096);
  auto y = a.allocate(8192, 65536);
  REQUIRE(x);
  REQUIRE(y);
  CHECK(*x == std::uint64_t{1} << 32);
  CHECK(*y % 65536 == 0);
  CHECK(*y >= *x + 4096);
  CHECK_FALSE(a.allocate(0, 4096));
  CHECK_FALSE(a.allocate(4096, 3000));  // not a power of two
}

TEST_CASE("bus allocator reuses and coalesces freed ranges", "[bus_allocator]") {
  const std::uint64_t base = std::uint64_t{1} << 32;
  BusAllocator a(base, 16 * 4096);
  auto p = a.allocate(4096, 4096);
  auto q = a.allocate(4096, 4096);
  auto r = a.allocate(4096, 4096);
  REQUIRE((p && q && r));
  a.free(*q, 4096);
  CHECK(a.allocate(4096, 4096) == q);  // first fit reuses the hole
  a.free(*q, 4096);
  a.free(*p, 4096);
  a.free(*r, 4096);
  CHECK(a.fragments() == 1);
  CHECK(a.allocate(16 * 4096, 4096) == base);  // everything merged back
  CHECK_FALSE(a.allocate(4096, 4096));          // and now it is exhausted
}
