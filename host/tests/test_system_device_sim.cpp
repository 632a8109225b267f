// The system device end to end on the Verilated RTL: the Runtime creates it at bring-up, sized
// by the sizing policy from the adapter's paging-buffer description, and the memory manager's
// paging buffers are its DMA buffers: taken from its pool at its DXGK_DEVICEINFO sizes (private
// data zeroed at creation) and given back once they retired.
#include <catch2/catch.hpp>

#include <cstring>

#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::sched;
using namespace std::chrono_literals;

namespace {

constexpr std::uint32_t kPage = 4096;

RuntimeOptions options(std::function<void(kmd::AdapterDescription&)> adjust = nullptr) {
  RuntimeOptions o;
  o.device.aperture.table_pages = 2048;
  o.kernel_window_pages = kernel_window_pages_for(8);
  o.adjust_description = std::move(adjust);
  return o;
}

}  // namespace

TEST_CASE("the system device's DMA buffers carry the paging buffers, at its DXGK_DEVICEINFO sizes",
          "[sched][sim][pools]") {
  const std::uint32_t paging_bytes = 2 * kmd::command_sizes().min_dma_buffer_bytes() + 3 * kPage;
  auto rt = Runtime::open(test::open_tb_transport("sim"), options([&](kmd::AdapterDescription& d) {
                            d.paging_buffer_size = paging_bytes;
                            d.paging_buffer_private_data_size = 24;
                          }));
  if (!rt) FAIL(to_string(rt.error()));
  kmd::Device& sys = (*rt)->system_device();
  CHECK(sys.flags().system_device());
  CHECK((*rt)->adapter().owns_device(sys.id()));
  const kmd::DxgkDeviceInfo& info = sys.info();
  CHECK(info.dma_buffer_size == (paging_bytes + kPage - 1) / kPage * kPage);
  CHECK(info.dma_buffer_private_data_size == 24);
  CHECK(info.dma_buffer_segment_set.empty());
  auto& pool = sys.dma_buffers();
  CHECK((*rt)->executor().buffer_pool() == &pool);

  // The first use of an allocation pages (a FILL of its contents) through the system device.
  auto dev = (*rt)->adapter().create_device({});
  REQUIRE(dev);
  auto ctx = (*rt)->create_context(*dev);
  REQUIRE(ctx);
  auto a = dev->create_allocation(kmd::AllocationInfo::placed(8 * kPage, kmd::SegmentSet::of(1), 1, kmd::AllocationInfoFlags::kCpuVisible));
  REQUIRE(a);
  umd::CommandList cl;
  REQUIRE(cl.fill(a->handle(), 0, 8 * kPage, 0x600df00du));
  auto& s = (*rt)->scheduler();
  auto f = s.submit((*ctx)->get(), cl);
  REQUIRE(f);
  REQUIRE(s.wait(*f, 2ms));
  REQUIRE((*rt)->executor().counters().buffers >= 1);
  CHECK(s.counters().paging_packets == (*rt)->executor().counters().buffers);
  CHECK(pool.created() >= 1);
  CHECK(pool.lent_count() == 0);  // every paging buffer came back once it retired
  CHECK(pool.free_count() >= 1);
  auto p = a->lock();
  REQUIRE(p);
  std::uint32_t first = 0;
  std::memcpy(&first, *p, 4);
  CHECK(first == 0x600df00du);
  REQUIRE(a->unlock());

  // What the pool holds is what the executor used: at least the starting size, private data
  // zeroed (nobody writes a paging buffer's private data).
  auto b = pool.acquire();
  REQUIRE(b);
  CHECK(b->memory.size() >= info.dma_buffer_size);
  REQUIRE(b->private_data.size() == 24);
  for (auto x : b->private_data) CHECK(x == std::byte{0});
  REQUIRE(pool.release(std::move(*b)));
  CHECK(pool.created() == pool.free_count());  // no buffer was made for the acquire above
}

TEST_CASE("a system device sized into an aperture segment is refused: paging buffers are fetched at their bus address",
          "[sched][sim][pools]") {
  auto rt = Runtime::open(test::open_tb_transport("sim"), options([](kmd::AdapterDescription& d) {
                            for (SegmentId id = 1; id <= d.segments.size(); ++id)
                              if (d.segments[id - 1].is_aperture() && id != d.dma_buffer_segment_id)
                                d.paging_buffer_segment_id = id;
                          }));
  REQUIRE_FALSE(rt);
  CHECK(rt.error().code == Errc::Unsupported);
  CHECK_THAT(rt.error().message, Catch::Contains("system device") && Catch::Contains("DmaBufferSegmentSet"));
}
