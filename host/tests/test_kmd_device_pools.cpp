// Device-level pools: every kmd::Device has a DMA-buffer pool and allocation / patch-location
// list pools at its DXGK_DEVICEINFO's starting sizes, under the rules the context-level pools
// follow (command_pools.hpp): never below the starting sizes, grown on demand and trimmed back,
// private data zeroed when a buffer is created and never touched again, and only what a pool
// lent taken back, unchanged. The system device is sized from the adapter's paging-buffer
// description: its DMA buffers are the paging buffers (sched::Runtime).
#include <cstring>

#include "sgpu/kmd/render.hpp"
#include "vidmm_fixture.hpp"

using namespace vidmm_test;

namespace {

constexpr std::uint32_t round_pages(std::uint32_t v) { return (v + kPage - 1) / kPage * kPage; }

}  // namespace

TEST_CASE("device pools: never below DXGK_DEVICEINFO's starting sizes, grow on demand, trim back, private data zeroed once",
          "[kmd][pools][device]") {
  Fixture f;
  const auto flags = GENERATE(CreateDeviceFlags{}, CreateDeviceFlags{CreateDeviceFlags::kGdiDevice},
                              CreateDeviceFlags{CreateDeviceFlags::kSystemDevice});
  INFO("DXGK_CREATEDEVICEFLAGS " << flags.value);
  auto dev = f.adapter->create_device(flags);
  REQUIRE(dev);
  const DxgkDeviceInfo& info = dev->info();
  auto& pool = dev->dma_buffers();
  CHECK(pool.starting_size() == info.dma_buffer_size);
  CHECK(pool.created() == 0);  // nothing is allocated before it is asked for
  auto b = pool.acquire();
  REQUIRE(b);
  CHECK(b->memory.size() >= info.dma_buffer_size);
  CHECK(b->gpu_address == 0);  // no mapper: fetched at its bus address
  REQUIRE(b->private_data.size() == info.dma_buffer_private_data_size);
  for (auto x : b->private_data) CHECK(x == std::byte{0});
  if (!b->private_data.empty()) b->private_data[0] = std::byte{0x5a};  // the driver's; kept on reuse
  REQUIRE(pool.release(std::move(*b)));
  auto again = pool.acquire();
  REQUIRE(again);
  if (!again->private_data.empty()) CHECK(again->private_data[0] == std::byte{0x5a});
  auto big = pool.acquire(3 * std::size_t{info.dma_buffer_size});
  REQUIRE(big);
  CHECK(big->memory.size() >= 3 * std::size_t{info.dma_buffer_size});
  for (auto x : big->private_data) CHECK(x == std::byte{0});  // a new buffer: zeroed
  REQUIRE(pool.release(std::move(*big)));
  REQUIRE(pool.release(std::move(*again)));
  CHECK(pool.free_count() == 2);
  pool.trim();  // the oversized one goes, one of the starting size stays
  CHECK(pool.free_count() == 1);
  auto small = pool.acquire(1);
  REQUIRE(small);
  CHECK(small->memory.size() >= info.dma_buffer_size);  // never below the start, even when asked for less
  REQUIRE(pool.release(std::move(*small)));

  auto& alloc_lists = dev->allocation_lists();
  CHECK(alloc_lists.starting_size() == info.allocation_list_size);
  auto l = alloc_lists.acquire();
  CHECK(l.capacity() >= info.allocation_list_size);
  auto bigger = alloc_lists.acquire(4 * std::size_t{info.allocation_list_size});
  CHECK(bigger.capacity() >= 4 * std::size_t{info.allocation_list_size});
  REQUIRE(alloc_lists.release(std::move(bigger)));
  REQUIRE(alloc_lists.release(std::move(l)));
  alloc_lists.trim();
  CHECK(alloc_lists.free_count() == 1);
  CHECK(alloc_lists.acquire(1).capacity() >= info.allocation_list_size);
  auto& patch_lists = dev->patch_location_lists();
  CHECK(patch_lists.starting_size() == info.patch_location_list_size);
  CHECK(patch_lists.acquire().capacity() >= info.patch_location_list_size);
  if (flags.gdi_device()) {
    CHECK(info.allocation_list_size == kGdiContextAllocationListSize);
    CHECK(info.patch_location_list_size == kGdiContextAllocationListSize);
  }
}

TEST_CASE("device pools take back only what they lent, unchanged, and a refusal leaves the argument with the caller",
          "[kmd][pools][device]") {
  Fixture f;
  auto dev = f.adapter->create_device({});
  REQUIRE(dev);
  auto& pool = dev->dma_buffers();
  auto b = pool.acquire();
  REQUIRE(b);
  const std::size_t private_size = b->private_data.size();
  REQUIRE(private_size > 0);

  SECTION("private data cut short") {
    b->private_data.resize(private_size / 2);
    auto st = pool.release(std::move(*b));
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::InvalidArgument);
    CHECK_THAT(st.error().message, Catch::Contains("private data"));
    CHECK(b->memory);  // still the caller's
    CHECK(pool.lent_count() == 1);
    CHECK(pool.free_count() == 0);
  }
  SECTION("a buffer of a context's pool, or of another device's") {
    auto ctx = dev->create_context({});
    REQUIRE(ctx);
    auto theirs = ctx->dma_buffers().acquire();
    REQUIRE(theirs);
    auto st = pool.release(std::move(*theirs));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("was not lent by this pool"));
    REQUIRE(ctx->dma_buffers().release(std::move(*theirs)));
    auto other = f.adapter->create_device({});
    REQUIRE(other);
    auto st2 = other->dma_buffers().release(std::move(*b));
    REQUIRE_FALSE(st2);
    CHECK(other->dma_buffers().free_count() == 0);
    REQUIRE(pool.release(std::move(*b)));
  }
  SECTION("given back twice") {
    REQUIRE(pool.release(std::move(*b)));
    kmd::DmaBuffer forged;
    auto st = pool.release(std::move(forged));
    REQUIRE_FALSE(st);
    CHECK(pool.free_count() == 1);
  }
  SECTION("lists shrunk below the starting size, or none lent") {
    auto& lists = dev->allocation_lists();
    std::vector<AllocationListEntry> stray;
    auto st = lists.release(std::move(stray));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("none is lent"));
    auto l = lists.acquire();
    l.shrink_to_fit();
    st = lists.release(std::move(l));
    REQUIRE_FALSE(st);
    CHECK_THAT(st.error().message, Catch::Contains("lists are at least the starting size"));
    CHECK(lists.free_count() == 0);
  }
}

TEST_CASE("the system device is sized from the adapter's paging-buffer description", "[kmd][sizing][device]") {
  const CommandSizes cs = command_sizes();
  SECTION("size and private data as described, in whole pages; contiguous system memory") {
    auto d = two_segments();
    d.paging_buffer_size = 4 * cs.min_dma_buffer_bytes() + 100;
    d.paging_buffer_private_data_size = 40;
    Fixture f(d);
    auto sys = f.adapter->create_device({CreateDeviceFlags::kSystemDevice});
    REQUIRE(sys);
    CHECK(sys->info().dma_buffer_size == round_pages(4 * cs.min_dma_buffer_bytes() + 100));
    CHECK(sys->info().dma_buffer_private_data_size == 40);
    CHECK(sys->info().dma_buffer_segment_set.empty());
    auto b = sys->dma_buffers().acquire();
    REQUIRE(b);
    CHECK(b->private_data.size() == 40);
    // An ordinary device keeps the context-like sizes.
    auto dev = f.adapter->create_device({});
    REQUIRE(dev);
    CHECK(dev->info().dma_buffer_private_data_size == sizeof(RenderPrivateData));
  }
  SECTION("never below what one DMA buffer must hold") {
    auto d = two_segments();
    d.paging_buffer_size = 64;
    Fixture f(d);
    auto sys = f.adapter->create_device({CreateDeviceFlags::kSystemDevice});
    REQUIRE(sys);
    CHECK(sys->info().dma_buffer_size >= cs.min_dma_buffer_bytes());
    CHECK(sys->info().dma_buffer_size % kPage == 0);
  }
  SECTION("in the aperture segment the description names") {
    auto d = two_segments();
    d.paging_buffer_segment_id = kAp;
    Fixture f(d);
    auto sys = f.adapter->create_device({CreateDeviceFlags::kSystemDevice});
    REQUIRE(sys);
    CHECK(sys->info().dma_buffer_segment_set == SegmentSet::of(kAp));
  }
}
