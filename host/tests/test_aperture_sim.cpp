// End to end through the host library with the GART on: the aperture manager maps scattered
// host pages, the command processor fetches DMA buffers and writes through the aperture, and
// unmapped pages read the dummy page's poison or fault on writes.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "sgpu/aperture.hpp"
#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

namespace {

Device open_gart() {
  auto t = test::tb_registry().open("sim");
  REQUIRE(t);
  DeviceOptions opt;
  opt.aperture.table_pages = 1024;  // 4 MiB of the aperture: a small table keeps set-up quick
  auto d = Device::open(std::move(*t), opt);
  if (!d) FAIL(to_string(d.error()));
  return std::move(*d);
}

/// `n` single pages whose bus addresses are not contiguous (a spacer page between each).
std::vector<DmaMemory> scattered_pages(Transport& t, unsigned n) {
  std::vector<DmaMemory> pages, spacers;
  for (unsigned i = 0; i < n; ++i) {
    auto p = t.alloc_dma(4096);
    REQUIRE(p);
    pages.push_back(std::move(*p));
    auto s = t.alloc_dma(4096 * (i + 1));
    REQUIRE(s);
    spacers.push_back(std::move(*s));
  }
  for (unsigned i = 1; i < n; ++i) REQUIRE(pages[i].bus_addr() != pages[i - 1].bus_addr() + 4096);
  return pages;  // the spacers are freed: the holes stay between the pages
}

std::vector<const DmaMemory*> ptrs(const std::vector<DmaMemory>& v) {
  std::vector<const DmaMemory*> p;
  for (const auto& m : v) p.push_back(&m);
  return p;
}

/// Builds packets with `build` into a staging buffer, then copies them page by page into
/// `pages` (the buffer as the GPU sees it through the aperture). Returns the byte count.
template <class F>
std::uint32_t spread(Transport& t, const std::vector<DmaMemory>& pages, F build) {
  auto staging = t.alloc_dma(pages.size() * 4096);
  REQUIRE(staging);
  PacketWriter w(*staging);
  build(w);
  for (std::size_t i = 0; i < pages.size(); ++i) std::memcpy(pages[i].cpu(), staging->bytes() + 4096 * i, 4096);
  return w.offset();
}

}  // namespace

TEST_CASE("the CP fetches a DMA buffer spread over scattered host pages mapped into the aperture",
          "[e2e][aperture]") {
  Device dev = open_gart();
  Transport& t = dev.transport();
  Aperture& ap = *dev.aperture();
  CHECK(ap.base() == dev.info().aperture_segment.base);  // from CAP_APSEG, not a constant
  auto buf_pages = scattered_pages(t, 3);   // the DMA buffer: aperture pages 16..18
  auto dst_pages = scattered_pages(t, 2);   // the targets:    aperture pages 100..101
  REQUIRE(ap.map(16, ptrs(buf_pages)));
  REQUIRE(ap.map(100, ptrs(dst_pages)));
  const std::uint64_t dst = ap.gpu_addr(100);
  // ~600 WRITE_DATA packets of one dword (16 bytes each): the buffer spans all three pages; the
  // data spans both target pages. Then a FENCE in the second target page.
  const unsigned n = 600;
  const std::uint32_t bytes = spread(t, buf_pages, [&](PacketWriter& w) {
    for (unsigned i = 0; i < n; ++i) REQUIRE(w.write_data(dst + 8 * i, {0x5000u + i}));
    REQUIRE(w.fence(ap.gpu_addr(101, 0xff0), 0xfeedface'cafef00dull, abi::fence_flags::kValue64));
  });
  REQUIRE(bytes > 2 * 4096);
  Submission s;
  s.gpu_address = ap.gpu_addr(16);
  s.end_offset = bytes;
  auto fence = dev.submit_next(s);
  REQUIRE(fence);
  const Status waited = dev.wait_fence(*fence, 2ms);
  if (!waited) FAIL(to_string(waited.error()));
  for (unsigned i = 0; i < n; ++i) {
    const DmaMemory& page = dst_pages[(8 * i) / 4096];
    const std::uint32_t got = page.as<std::uint32_t>()[((8 * i) % 4096) / 4];
    if (got != 0x5000u + i) FAIL("dword " << i << " is " << got);
  }
  CHECK(dst_pages[1].as<std::uint64_t>()[0xff0 / 8] == 0xfeedface'cafef00dull);
  CHECK(ap.dummy_intact());
}

TEST_CASE("an unmapped aperture page reads the dummy page's poison", "[e2e][aperture]") {
  Device dev = open_gart();
  Transport& t = dev.transport();
  Aperture& ap = *dev.aperture();
  auto pages = scattered_pages(t, 2);
  auto dst = scattered_pages(t, 1);
  REQUIRE(ap.map(200, ptrs(dst)));
  const std::uint32_t bytes = spread(t, pages, [&](PacketWriter& w) {
    for (unsigned i = 0; i < 400; ++i) REQUIRE(w.write_data(ap.gpu_addr(200, 4 * (i % 1024)), {i}));
  });
  // Only the first page of the buffer is mapped; the second stays on the dummy page.
  REQUIRE(ap.map(300, pages[0]));
  Submission s;
  s.gpu_address = ap.gpu_addr(300);
  s.end_offset = bytes;
  auto fence = dev.submit_next(s);
  REQUIRE(fence);
  const Status st = dev.wait_fence(*fence, 2ms);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::DeviceFault);
  auto f = dev.fault();
  REQUIRE(f);
  REQUIRE(f->has_value());
  const FaultRecord& r = **f;
  CHECK(r.reason == abi::Fault::IllegalOpcode);  // the decoder read the poison as a header
  CHECK(r.detail == ap.poison());
  CHECK(r.address == ap.gpu_addr(301));
  CHECK_FALSE(r.gart.has_value());  // no translation fault: the page is mapped to the dummy
  REQUIRE(dev.reset_engine());
}

TEST_CASE("unmapping one range while the GPU uses another keeps the other working", "[e2e][aperture]") {
  Device dev = open_gart();
  Transport& t = dev.transport();
  Aperture& ap = *dev.aperture();
  // Range A: a long buffer (8 pages) writing into target page 500; range B: pages 600..601.
  std::vector<DmaMemory> a_pages = scattered_pages(t, 8);
  auto target = scattered_pages(t, 1);
  auto b_pages = scattered_pages(t, 2);
  REQUIRE(ap.map(400, ptrs(a_pages)));
  REQUIRE(ap.map(500, ptrs(target)));
  REQUIRE(ap.map(600, ptrs(b_pages)));
  const std::uint32_t bytes = spread(t, a_pages, [&](PacketWriter& w) {
    for (unsigned i = 0; i < 2000; ++i) REQUIRE(w.write_data(ap.gpu_addr(500, 4 * (i % 1024)), {0x7000u + i}));
  });
  Submission s;
  s.gpu_address = ap.gpu_addr(400);
  s.end_offset = bytes;
  auto fence = dev.submit_next(s);
  REQUIRE(fence);
  // While it runs: unmap range B (and invalidate it).
  REQUIRE(dev.completed_fence() < *fence);
  REQUIRE(ap.unmap(600, 2));
  CHECK(dev.completed_fence() < *fence);  // the unmap happened while A was executing
  const Status waited = dev.wait_fence(*fence, 5ms);
  if (!waited) FAIL(to_string(waited.error()));
  for (unsigned i = 2000 - 1024; i < 2000; ++i) {
    const std::uint32_t got = target[0].as<std::uint32_t>()[i % 1024];
    if (got != 0x7000u + i) FAIL("dword " << i % 1024 << " is " << got);
  }
  CHECK_FALSE(ap.is_mapped(600));
  CHECK(ap.is_mapped(400));
  // Range B's old pages are free to reuse: nothing reaches them any more.
  std::memset(b_pages[0].cpu(), 0x11, 4096);
  CHECK(ap.dummy_intact());
}

TEST_CASE("a write to an unmapped page faults, Device::fault() reports it, reset_engine() recovers",
          "[e2e][aperture][fault]") {
  Device dev = open_gart();
  Transport& t = dev.transport();
  Aperture& ap = *dev.aperture();
  auto buf = scattered_pages(t, 1);
  auto dst = scattered_pages(t, 1);
  REQUIRE(ap.map(10, ptrs(buf)));
  REQUIRE(ap.map(11, ptrs(dst)));
  spread(t, buf, [&](PacketWriter& w) {
    REQUIRE(w.write_data(ap.gpu_addr(11), {0x1}));        // lands
    REQUIRE(w.write_data(ap.gpu_addr(12, 0x40), {0x2}));  // page 12 is unmapped: refused
    REQUIRE(w.write_data(ap.gpu_addr(11, 4), {0x3}));     // never executed
  });
  Submission s;
  s.gpu_address = ap.gpu_addr(10);
  s.end_offset = 3 * 16;
  s.context_id = 5;
  auto fence = dev.submit_next(s);
  REQUIRE(fence);
  const Status st = dev.wait_fence(*fence, 2ms);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::DeviceFault);
  CHECK_THAT(st.error().message, Catch::Contains("TRANSLATION"));
  auto f = dev.fault();
  REQUIRE(f);
  REQUIRE(f->has_value());
  const FaultRecord& r = **f;
  CHECK(r.reason == abi::Fault::Translation);
  CHECK(r.address == ap.gpu_addr(12, 0x40));
  CHECK(r.fence == *fence);
  REQUIRE(r.gart.has_value());
  CHECK(r.gart->reason == 2);  // WRITE_PROTECT: the dummy page is mapped read-only
  CHECK(r.gart->client == 1);  // the CP write path
  CHECK(r.gart->write);
  CHECK(r.gart->page_address == ap.gpu_addr(12));
  CHECK(r.gart->context_id == 5);
  CHECK_THAT(to_string(r), Catch::Contains("WRITE_PROTECT on a write by the CP write path"));
  CHECK(dst[0].as<std::uint32_t>()[0] == 0x1);
  CHECK(dst[0].as<std::uint32_t>()[1] == 0);
  CHECK(ap.dummy_intact());  // nothing reached the dummy page

  REQUIRE(dev.reset_engine());
  auto none = dev.fault();
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
  // Map the page and run the same buffer again.
  auto more = scattered_pages(t, 1);
  REQUIRE(ap.map(12, ptrs(more)));
  auto again = dev.submit_next(s);
  REQUIRE(again);
  REQUIRE(dev.wait_fence(*again, 2ms));
  CHECK(more[0].as<std::uint32_t>()[0x40 / 4] == 0x2);
  CHECK(dst[0].as<std::uint32_t>()[1] == 0x3);
}
