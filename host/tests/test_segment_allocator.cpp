#include <catch2/catch.hpp>

#include "sgpu/vidmm/segment_allocator.hpp"

using sgpu::vidmm::SegmentAllocator;

TEST_CASE("segment allocator: bottom-up first fit with alignment", "[segment_allocator]") {
  SegmentAllocator a(64 * 4096, 4096);
  CHECK(a.allocate({4096, 0, false}) == 0u);
  CHECK(a.allocate({4096, 4 * 4096, false}) == 4 * 4096u);  // aligned past the hole at 4096
  CHECK(a.allocate({4096, 0, false}) == 4096u);             // the hole below is used next
  CHECK(a.used_bytes() == 3 * 4096u);
}

TEST_CASE("segment allocator: top-down placement from the end", "[segment_allocator]") {
  SegmentAllocator a(64 * 4096, 4096);
  CHECK(a.allocate({2 * 4096, 0, true}) == 62 * 4096u);
  CHECK(a.allocate({4096, 8 * 4096, true}) == 56 * 4096u);
  CHECK(a.allocate({4096, 0, false}) == 0u);
}

TEST_CASE("segment allocator: window restricts placement (banks)", "[segment_allocator]") {
  SegmentAllocator a(64 * 4096, 4096);
  CHECK(a.allocate({4096, 0, false, 16 * 4096, 32 * 4096}) == 16 * 4096u);
  CHECK(a.allocate({4096, 0, true, 16 * 4096, 32 * 4096}) == 31 * 4096u);
  CHECK_FALSE(a.allocate({32 * 4096, 0, false, 16 * 4096, 32 * 4096}));
}

TEST_CASE("segment allocator: exhaustion is nullopt and changes nothing, free coalesces", "[segment_allocator]") {
  SegmentAllocator a(8 * 4096, 4096);
  auto x = a.allocate({4 * 4096, 0, false});
  auto y = a.allocate({4 * 4096, 0, false});
  REQUIRE((x && y));
  const SegmentAllocator before = a;
  CHECK_FALSE(a.allocate({4096, 0, false}));
  CHECK(a == before);
  a.free(*x, 4 * 4096);
  a.free(*y, 4 * 4096);
  CHECK(a.free_fragments() == 1);
  CHECK(a.largest_free() == 8 * 4096u);
  CHECK(a == SegmentAllocator(8 * 4096, 4096));
}
