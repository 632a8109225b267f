// The vocabulary header: the two fence kinds never mix, compare and step as numbers, and print
// as numbers.
#include <catch2/catch.hpp>

#include <sstream>
#include <type_traits>

#include <fmt/format.h>

#include "sgpu/types.hpp"

using namespace sgpu;

// Distinct kinds: neither converts to the other, nor to or from a plain integer implicitly.
static_assert(!std::is_convertible_v<RingFence, SubmissionId>);
static_assert(!std::is_convertible_v<SubmissionId, RingFence>);
static_assert(!std::is_constructible_v<RingFence, SubmissionId>);
static_assert(!std::is_constructible_v<SubmissionId, RingFence>);
static_assert(!std::is_convertible_v<std::uint64_t, RingFence>);
static_assert(!std::is_convertible_v<RingFence, std::uint64_t>);
static_assert(std::is_constructible_v<RingFence, std::uint64_t>);
static_assert(sizeof(RingFence) == sizeof(std::uint64_t));

namespace {
template <class A, class B, class = void>
struct comparable : std::false_type {};
template <class A, class B>
struct comparable<A, B, std::void_t<decltype(std::declval<A>() == std::declval<B>())>> : std::true_type {};
}  // namespace

static_assert(comparable<RingFence, RingFence>::value);
static_assert(comparable<RingFence, std::uint64_t>::value);
static_assert(!comparable<RingFence, SubmissionId>::value, "a ring fence and a submission id never compare");

TEST_CASE("fences: 0 is none, they step and compare like the numbers they are", "[types][fence]") {
  const RingFence none;
  CHECK_FALSE(none);
  CHECK(none.value() == 0);
  const RingFence f{41};
  CHECK(f);
  CHECK(f.next() == RingFence{42});
  CHECK(f + 2 == 43);
  CHECK(f - 1 == 40);
  CHECK(f < f.next());
  CHECK(f >= RingFence{41});
  CHECK(41 == f);
  CHECK(f != 40);
  RingFence g = f;
  ++g;
  CHECK(g == 42);
  SubmissionId s{1};
  CHECK(s.next().value() == 2);
}

TEST_CASE("fences: printed as their number by fmt and by streams", "[types][fence]") {
  CHECK(fmt::format("fence {} / submission {:>4}", RingFence{7}, SubmissionId{12}) == "fence 7 / submission   12");
  std::ostringstream os;
  os << RingFence{9};
  CHECK(os.str() == "9");
}

TEST_CASE("allocation handles: 0 is null, equality by value", "[types]") {
  CHECK_FALSE(AllocationHandle{});
  CHECK(AllocationHandle{3});
  CHECK(AllocationHandle{3} == AllocationHandle{3});
  CHECK(AllocationHandle{3} != AllocationHandle{4});
  const AllocationListEntry e{AllocationHandle{3}, true};
  CHECK(e.write);
  CHECK(kSystemMemory == 0);
}
