// Aperture manager on the mock transport: the GART bring-up sequence, PTE contents, range
// invalidations, validation errors that touch nothing, timeouts, and the Device integration.
// End-to-end tests on the Verilated RTL are in test_aperture_sim.cpp.
#include <catch2/catch.hpp>

#include <cstring>

#include "sgpu/aperture.hpp"
#include "sgpu/device.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/transport/mock.hpp"

using namespace sgpu;
using namespace std::chrono_literals;
using Access = MockTransport::Access;

namespace {

constexpr std::uint64_t kApBase = 0x0018'0000'0000'0000ull;
constexpr std::uint64_t kApSize = 256 * 4096;  // 256 pages

// A mock device with a GART and a 256-page aperture.
void gart_device(MockTransport& m) {
  m.load_reset_values();
  m.set_reg(SGPU_REG(CAP_FEATURES), SGPU_FIELD(CAP_FEATURES, GART).mask);
  m.set_reg(SGPU_REG(CAP_APSEG_BASE_LO), static_cast<std::uint32_t>(kApBase));
  m.set_reg(SGPU_REG(CAP_APSEG_BASE_HI), static_cast<std::uint32_t>(kApBase >> 32));
  m.set_reg(SGPU_REG(CAP_APSEG_SIZE_LO), static_cast<std::uint32_t>(kApSize));
  m.set_reg(SGPU_REG(CAP_APSEG_SIZE_HI), 0);
  m.set_reg(SGPU_REG(GART_CAP), SGPU_FIELD(GART_CAP, TLB_ENTRIES).put(32) | SGPU_FIELD(GART_CAP, SYS_ADDR_BITS).put(52));
}

DeviceInfo gart_info() {
  DeviceInfo i;
  i.has_gart = true;
  i.page_shift = 12;
  i.bus_addr_bits = 48;
  i.aperture_segment = {kApBase, kApSize};
  return i;
}

struct Fixture {
  MockTransport m;
  std::unique_ptr<Aperture> ap;
  explicit Fixture(ApertureOptions o = {}) {
    gart_device(m);
    auto a = Aperture::create(m, gart_info(), o);
    if (!a) FAIL(to_string(a.error()));
    ap = std::move(*a);
    m.clear_log();
  }
  DmaMemory alloc(std::size_t bytes) {
    auto d = m.alloc_dma(bytes);
    REQUIRE(d);
    return std::move(*d);
  }
  // The table as the device would read it.
  std::uint64_t table_pte(std::uint32_t page) {
    std::uint64_t v;
    std::memcpy(&v, m.dma_cpu(ap->table_bus_addr() + 8ull * page), 8);
    return v;
  }
  std::vector<std::uint64_t> snapshot() {
    std::vector<std::uint64_t> t;
    for (std::uint32_t p = 0; p < ap->pages(); ++p) t.push_back(table_pte(p));
    return t;
  }
};

std::vector<Access> inv_range_writes(std::uint32_t first, std::uint32_t count) {
  return {MockTransport::write(SGPU_REG(GART_INV_FIRST), first),
          MockTransport::write(SGPU_REG(GART_INV_COUNT), count),
          MockTransport::write(SGPU_REG(GART_CMD), SGPU_FIELD(GART_CMD, INV_RANGE).mask)};
}

}  // namespace

TEST_CASE("aperture: bring-up writes the table, the dummy page and GART registers in order", "[aperture]") {
  MockTransport m;
  gart_device(m);
  m.queue_read(SGPU_REG(GART_STATUS), SGPU_FIELD(GART_STATUS, INV_BUSY).mask);  // busy once
  ApertureOptions o;
  o.poison = 0x0BADF00D;
  auto a = Aperture::create(m, gart_info(), o);
  REQUIRE(a);
  Aperture& ap = **a;
  CHECK(ap.base() == kApBase);
  CHECK(ap.pages() == 256);
  CHECK(ap.size() == kApSize);
  CHECK(ap.gpu_addr(3, 8) == kApBase + 3 * 4096 + 8);
  CHECK(ap.mapped_pages() == 0);
  const std::uint64_t tb = ap.table_bus_addr();
  CHECK(tb % 4096 == 0);
  const std::vector<Access> want = {
      MockTransport::write(SGPU_REG(GART_TABLE_BASE_LO), static_cast<std::uint32_t>(tb)),
      MockTransport::write(SGPU_REG(GART_TABLE_BASE_HI), static_cast<std::uint32_t>(tb >> 32)),
      MockTransport::write(SGPU_REG(GART_TABLE_SIZE), 256),
      MockTransport::write(SGPU_REG(GART_CMD), SGPU_FIELD(GART_CMD, INV_ALL).mask),
      MockTransport::write(SGPU_REG(GART_CTRL), SGPU_FIELD(GART_CTRL, ENABLE).mask)};
  CHECK(m.writes() == want);
  // Polled GART_STATUS until inv_busy dropped.
  CHECK(m.log().back() == MockTransport::read(SGPU_REG(GART_STATUS), 0));
  // Every PTE points at the dummy page (valid, read-only by default); the dummy page is poison.
  const std::uint64_t dummy = ap.dummy_page().bus_addr();
  for (std::uint32_t p = 0; p < 256; ++p) {
    std::uint64_t v;
    std::memcpy(&v, m.dma_cpu(tb + 8ull * p), 8);
    if (v != (dummy | Aperture::kPteValid)) FAIL("PTE " << p << " is " << v);
  }
  const auto* d = static_cast<const std::uint32_t*>(m.dma_cpu(dummy));
  for (int i = 0; i < 1024; ++i) REQUIRE(d[i] == 0x0BADF00D);
  CHECK(ap.dummy_intact());
  CHECK(ap.poison() == 0x0BADF00D);
}

TEST_CASE("aperture: a writable dummy page when asked (WDDM), detected when written", "[aperture]") {
  ApertureOptions o;
  o.dummy_writable = true;
  Fixture f(o);
  CHECK(f.table_pte(7) == (f.ap->dummy_page().bus_addr() | Aperture::kPteValid | Aperture::kPteWritable));
  CHECK(f.ap->dummy_intact());
  f.ap->dummy_page().as<std::uint32_t>()[100] = 0;  // a stray GPU write
  CHECK_FALSE(f.ap->dummy_intact());
}

TEST_CASE("aperture: map writes whole PTEs for scattered pages and invalidates exactly the range",
          "[aperture]") {
  Fixture f;
  auto a = f.alloc(2 * 4096), b = f.alloc(4096), c = f.alloc(3 * 4096);
  REQUIRE(f.ap->map(10, std::vector<const DmaMemory*>{&a, &b, &c}));
  CHECK(f.m.writes() == inv_range_writes(10, 6));
  CHECK(f.m.log().back().kind == Access::Kind::Read);  // waited for inv_busy = 0
  const std::uint64_t rw = Aperture::kPteValid | Aperture::kPteWritable;
  CHECK(f.table_pte(10) == (a.bus_addr() | rw));
  CHECK(f.table_pte(11) == (a.bus_addr() + 4096 | rw));
  CHECK(f.table_pte(12) == (b.bus_addr() | rw));
  CHECK(f.table_pte(15) == (c.bus_addr() + 2 * 4096 | rw));
  CHECK(f.ap->is_mapped(12));
  CHECK(f.ap->bus_page(13) == c.bus_addr());
  CHECK_FALSE(f.ap->is_mapped(9));
  CHECK_FALSE(f.ap->is_mapped(16));
  CHECK(f.table_pte(16) == (f.ap->dummy_page().bus_addr() | Aperture::kPteValid));
  CHECK(f.ap->mapped_pages() == 6);

  f.m.clear_log();
  MapFlags ro;
  ro.writable = false;
  ro.cache_coherent = true;
  REQUIRE(f.ap->map(40, std::vector<std::uint64_t>{0x7'0000'3000ull}, ro));
  CHECK(f.table_pte(40) == (0x7'0000'3000ull | Aperture::kPteValid | Aperture::kPteSnoop));
  CHECK(f.m.writes() == inv_range_writes(40, 1));
}

TEST_CASE("aperture: unmap re-points the range at the dummy page and invalidates only it", "[aperture]") {
  Fixture f;
  auto a = f.alloc(4 * 4096);
  REQUIRE(f.ap->map(0, a));
  f.m.clear_log();
  REQUIRE(f.ap->unmap(1, 2));
  CHECK(f.m.writes() == inv_range_writes(1, 2));
  const std::uint64_t dpte = f.ap->dummy_page().bus_addr() | Aperture::kPteValid;
  CHECK(f.table_pte(1) == dpte);
  CHECK(f.table_pte(2) == dpte);
  CHECK(f.table_pte(0) == (a.bus_addr() | Aperture::kPteValid | Aperture::kPteWritable));
  CHECK(f.table_pte(3) == (a.bus_addr() + 3 * 4096 | Aperture::kPteValid | Aperture::kPteWritable));
  CHECK(f.ap->mapped_pages() == 2);
  // Unmapping pages that are not mapped is allowed (they stay on the dummy page).
  REQUIRE(f.ap->unmap(0, 8));
  CHECK(f.ap->mapped_pages() == 0);
  CHECK(f.table_pte(3) == dpte);
  // ...and the pages can be mapped again.
  REQUIRE(f.ap->map(2, a));
}

TEST_CASE("aperture: bad arguments are typed errors naming pages, with nothing touched", "[aperture]") {
  Fixture f;
  auto a = f.alloc(3 * 4096);
  REQUIRE(f.ap->map(20, a));  // pages 20..22
  f.m.clear_log();
  const auto before = f.snapshot();
  const std::uint32_t mapped = f.ap->mapped_pages();

  auto expect = [&](const Status& st, const std::string& text) {
    REQUIRE_FALSE(st);
    CHECK(st.error().code == Errc::InvalidArgument);
    CHECK_FALSE(st.error().hardware_touched);
    CHECK_THAT(st.error().message, Catch::Contains(text));
    CHECK(f.m.log().empty());
    CHECK(f.snapshot() == before);
    CHECK(f.ap->mapped_pages() == mapped);
  };
  SECTION("beyond the table") {
    expect(f.ap->map(255, std::vector<std::uint64_t>{0x10000, 0x11000}), "pages [255, 257) (2 pages) outside the aperture's 256 pages");
    expect(f.ap->unmap(250, 7), "pages [250, 257)");
    expect(f.ap->unmap(0xffffffffu, 2), "outside");
  }
  SECTION("no pages") {
    expect(f.ap->map(3, std::vector<std::uint64_t>{}), "count 0 at page 3");
    expect(f.ap->unmap(3, 0), "count 0");
    expect(f.ap->map(3, std::vector<const DmaMemory*>{}), "no DMA allocations");
  }
  SECTION("overlapping a mapped range") {
    auto b = f.alloc(4 * 4096);
    expect(f.ap->map(18, b), "overlaps a mapped range at pages [20, 22) (2 pages)");
    expect(f.ap->map(22, std::vector<std::uint64_t>{0x5000}), "pages [22, 23)");
  }
  SECTION("misaligned or unreachable bus pages") {
    expect(f.ap->map(0, std::vector<std::uint64_t>{0x1000, 0x2004}), "bus address 0x2004 for page 1 (entry 1) is not 4 KiB aligned");
    expect(f.ap->map(0, std::vector<std::uint64_t>{std::uint64_t{1} << 50}), "beyond the device's bus addresses");
    DmaMemory empty;
    expect(f.ap->map(0, empty), "DMA allocation 0 is empty");
  }
}

TEST_CASE("aperture: an invalidation that never finishes is a timeout", "[aperture]") {
  Fixture f;
  f.m.set_reg(SGPU_REG(GART_STATUS), SGPU_FIELD(GART_STATUS, INV_BUSY).mask);
  const auto st = f.ap->unmap(5, 1);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::Timeout);
  CHECK(st.error().hardware_touched);
  CHECK_THAT(st.error().message, Catch::Contains("GART invalidation did not finish"));
}

TEST_CASE("aperture: a device without a GART is Unsupported", "[aperture]") {
  MockTransport m;
  m.load_reset_values();
  DeviceInfo i = gart_info();
  i.has_gart = false;
  auto a = Aperture::create(m, i);
  REQUIRE_FALSE(a);
  CHECK(a.error().code == Errc::Unsupported);
  CHECK(m.log().empty());
  ApertureOptions o;
  o.table_pages = 257;
  auto b = Aperture::create(m, gart_info(), o);
  REQUIRE_FALSE(b);
  CHECK(b.error().code == Errc::InvalidArgument);
  CHECK_THAT(b.error().message, Catch::Contains("exceeds the aperture's 256 pages"));
}

TEST_CASE("aperture: the destructor turns the GART off", "[aperture]") {
  Fixture f;
  f.ap.reset();
  CHECK(f.m.writes() == std::vector<Access>{MockTransport::write(SGPU_REG(GART_CTRL), 0)});
}

TEST_CASE("device: opens the aperture when the device reports a GART and submits by GPU address",
          "[aperture][device]") {
  auto mock = std::make_unique<MockTransport>();
  MockTransport& m = *mock;
  gart_device(m);
  DeviceOptions opt;
  opt.aperture.table_pages = 64;
  auto d = Device::open(std::move(mock), opt);
  REQUIRE(d);
  Aperture* ap = d->aperture();
  REQUIRE(ap != nullptr);
  CHECK(ap->base() == d->info().aperture_segment.base);
  CHECK(ap->pages() == 64);
  CHECK(d->info().gart_sys_addr_bits == 52);
  // GART set up before the ring is enabled.
  std::size_t gart_on = 0, ring_on = 0;
  const auto w = m.writes();
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i].offset == SGPU_REG(GART_CTRL) && w[i].value == 1) gart_on = i;
    if (w[i].offset == SGPU_REG(CTRL) && w[i].value == 1) ring_on = i;
  }
  CHECK(gart_on > 0);
  CHECK(gart_on < ring_on);
  std::uint64_t ring = 0;
  for (const auto& a : w) {
    if (a.offset == SGPU_REG(RING_BASE_LO)) ring |= a.value;
    if (a.offset == SGPU_REG(RING_BASE_HI)) ring |= std::uint64_t{a.value} << 32;
  }

  auto buf = m.alloc_dma(4096);
  REQUIRE(buf);
  REQUIRE(ap->map(4, *buf));
  m.clear_log();
  // A system-memory buffer needs the privileged flag while the GART is on: refused up front.
  auto sys = d->submit_next({&*buf, 0, 16, 0, 0});
  REQUIRE_FALSE(sys);
  CHECK(sys.error().code == Errc::InvalidArgument);
  CHECK_FALSE(sys.error().hardware_touched);
  CHECK_THAT(sys.error().message, Catch::Contains("map it into the aperture"));
  // By GPU address: must lie in the aperture's table window (or the memory segment).
  Submission bad;
  bad.gpu_address = ap->gpu_addr(63);
  bad.end_offset = 8192;
  auto out = d->submit_next(bad);
  REQUIRE_FALSE(out);
  CHECK(out.error().code == Errc::InvalidArgument);
  CHECK_THAT(out.error().message, Catch::Contains("not inside the aperture's usable range"));
  Submission misaligned;
  misaligned.gpu_address = ap->gpu_addr(4, 2);
  misaligned.end_offset = 4;
  CHECK(d->submit_next(misaligned).error().code == Errc::InvalidArgument);
  Submission both;
  both.buffer = &*buf;
  both.gpu_address = ap->gpu_addr(4);
  CHECK(d->submit_next(both).error().code == Errc::InvalidArgument);
  CHECK(m.log().empty());

  Submission good;
  good.gpu_address = ap->gpu_addr(4);
  good.end_offset = 16;
  auto fence = d->submit_next(good);
  REQUIRE(fence);
  // The ring entry (entry 0) names the GPU address.
  abi::RingEntry e;
  std::memcpy(&e, m.dma_cpu(ring), sizeof e);
  CHECK(e.buf_addr == ap->gpu_addr(4));
  CHECK(e.end_offset == 16);
}

TEST_CASE("device: DeviceOptions::gart = false leaves the GART off", "[aperture][device]") {
  auto mock = std::make_unique<MockTransport>();
  MockTransport& m = *mock;
  gart_device(m);
  DeviceOptions opt;
  opt.gart = false;
  auto d = Device::open(std::move(mock), opt);
  REQUIRE(d);
  CHECK(d->aperture() == nullptr);
  for (const auto& a : m.writes()) CHECK(a.offset != SGPU_REG(GART_CTRL));
}
