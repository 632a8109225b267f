// Full-chip tests of the GPU address map and the GART through raw MMIO and host memory (no host
// library): the driver writes PTEs straight into host memory, programs GART_*, and the command
// processor fetches DMA buffers through the aperture.
#include <cstring>
#include <tuple>

#include <catch2/catch.hpp>

#include "top/ring_harness.hpp"

using namespace sgpu;
using namespace sgpu::tb;

namespace {

constexpr std::uint32_t kIntDone = SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
constexpr std::uint32_t kIntFault = SGPU_REGS__INT_STATUS__FAULT_bm;
constexpr std::uint32_t kIntGartFault = SGPU_REGS__INT_STATUS__GART_FAULT_bm;

constexpr std::uint64_t kTableAddr = 0x1'0200'0000;   // page table (system memory)
constexpr std::uint64_t kPagesAddr = 0x1'0400'0000;   // scattered backing pages
constexpr std::uint64_t kDummyAddr = 0x1'03ff'f000;   // the dummy page
constexpr std::uint32_t kPoison = 0xDEADBEEF;

constexpr std::uint64_t kPteValid = 1, kPteWritable = 2;
enum GartReason : std::uint32_t { kInvalidPte = 1, kWriteProtect = 2, kPrivilege = 4 };
enum GartClient : std::uint32_t { kClientFetch = 0, kClientCpWrite = 1 };

// Aperture pages [kDataPage, +kDataPages) are mapped to the data pages at kDataAddr: ordinary
// (non-privileged) submissions write there through the aperture.
constexpr std::uint32_t kDataPage = 40;
constexpr std::uint32_t kDataPages = 4;

std::uint64_t reg64(RingHarness& h, std::uint32_t lo, std::uint32_t hi) {
  const std::uint64_t l = h.reg(lo);
  return l | (std::uint64_t{h.reg(hi)} << 32);
}

/// The driver's side of the GART, by MMIO and host memory only.
struct Gart {
  RingHarness& h;
  std::uint64_t ap_base;
  std::uint32_t pages;

  explicit Gart(RingHarness& harness, std::uint32_t table_pages)
      : h(harness), ap_base(reg64(h, SGPU_REG(CAP_APSEG_BASE_LO), SGPU_REG(CAP_APSEG_BASE_HI))),
        pages(table_pages) {
    for (unsigned b = 0; b < 4096; b += 4) h.mem().write32(kDummyAddr + b, kPoison);
    for (std::uint32_t i = 0; i < pages; ++i) unmap(i);
    h.dev().mmio_write32(SGPU_REG(GART_TABLE_BASE_LO), static_cast<std::uint32_t>(kTableAddr));
    h.dev().mmio_write32(SGPU_REG(GART_TABLE_BASE_HI), static_cast<std::uint32_t>(kTableAddr >> 32));
    h.dev().mmio_write32(SGPU_REG(GART_TABLE_SIZE), pages);
    h.dev().mmio_write32(SGPU_REG(GART_CTRL), SGPU_REGS__GART_CTRL__ENABLE_bm);
    invalidate_all();
  }
  void set_pte(std::uint32_t idx, std::uint64_t value) { h.mem().write64(kTableAddr + 8ull * idx, value); }
  void map(std::uint32_t idx, std::uint64_t bus) { set_pte(idx, bus | kPteValid | kPteWritable); }
  void map_ro(std::uint32_t idx, std::uint64_t bus) { set_pte(idx, bus | kPteValid); }
  /// Maps the data pages (see kDataPage) and returns the GPU address of kDataAddr.
  std::uint64_t map_data() {
    for (std::uint32_t k = 0; k < kDataPages; ++k) map(kDataPage + k, kDataAddr + 0x1000ull * k);
    invalidate(kDataPage, kDataPages);
    return addr(kDataPage);
  }
  void unmap(std::uint32_t idx) { set_pte(idx, kDummyAddr | kPteValid); }
  void wait_idle() {
    for (int i = 0; i < 100 && (h.reg(SGPU_REG(GART_STATUS)) & SGPU_REGS__GART_STATUS__INV_BUSY_bm); ++i) h.dev().step(8);
    REQUIRE_FALSE(h.reg(SGPU_REG(GART_STATUS)) & SGPU_REGS__GART_STATUS__INV_BUSY_bm);
  }
  void invalidate(std::uint32_t first, std::uint32_t count) {
    h.dev().mmio_write32(SGPU_REG(GART_INV_FIRST), first);
    h.dev().mmio_write32(SGPU_REG(GART_INV_COUNT), count);
    h.dev().mmio_write32(SGPU_REG(GART_CMD), SGPU_REGS__GART_CMD__INV_RANGE_bm);
    wait_idle();
  }
  void invalidate_all() {
    h.dev().mmio_write32(SGPU_REG(GART_CMD), SGPU_REGS__GART_CMD__INV_ALL_bm);
    wait_idle();
  }
  std::uint64_t addr(std::uint32_t idx) const { return ap_base + (std::uint64_t{idx} << 12); }

  /// Copies `p` into aperture pages [first, ...) whose backing pages are scattered, maps them,
  /// and returns the GPU address of the buffer.
  std::uint64_t place(const Packets& p, std::uint32_t first) {
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(p.words().data());
    for (std::uint32_t off = 0, i = first; off < p.bytes(); off += 4096, ++i) {
      const std::uint64_t bus = kPagesAddr + ((std::uint64_t{i} * 37) % 97) * 0x1000;  // scattered
      h.mem().write(bus, bytes + off, std::min<std::uint32_t>(4096, p.bytes() - off));
      map(i, bus);
    }
    invalidate(first, (p.bytes() + 4095) / 4096);
    return addr(first);
  }
};

std::uint32_t submit(RingHarness& h, std::uint64_t buf, std::uint32_t bytes, std::uint64_t fence,
                     std::uint32_t flags = 0, std::uint32_t context = 1) {
  abi::RingEntry e{};
  e.buf_addr = buf;
  e.start_offset = 0;
  e.end_offset = bytes;
  e.fence = fence;
  e.context_id = context;
  e.flags = flags;
  h.push_entry(e);
  h.doorbell();
  return h.wait_irq();
}

/// A buffer of `n` WRITE_DATA packets, each writing one dword at `target` + 4 i, spanning
/// several pages.
Packets writes(std::uint32_t n, std::uint64_t target) {
  Packets p;
  for (std::uint32_t i = 0; i < n; ++i) p.write_data(target + 4ull * i, {0x1000u + i});
  return p;
}

std::uint32_t field(std::uint32_t v, std::uint32_t mask, unsigned lsb) { return (v & mask) >> lsb; }

}  // namespace

TEST_CASE("capabilities describe the GPU address map", "[top][gart]") {
  RingHarness h;
  const std::uint32_t feat = h.reg(SGPU_REG(CAP_FEATURES));
  CHECK(feat & SGPU_REGS__CAP_FEATURES__GART_bm);
  CHECK(feat & SGPU_REGS__CAP_FEATURES__MEMORY_SEGMENT_bm);
  const std::uint64_t ap = reg64(h, SGPU_REG(CAP_APSEG_BASE_LO), SGPU_REG(CAP_APSEG_BASE_HI));
  const std::uint64_t ap_size = reg64(h, SGPU_REG(CAP_APSEG_SIZE_LO), SGPU_REG(CAP_APSEG_SIZE_HI));
  const std::uint64_t ms = reg64(h, SGPU_REG(CAP_MEMSEG_BASE_LO), SGPU_REG(CAP_MEMSEG_BASE_HI));
  const std::uint64_t ms_size = reg64(h, SGPU_REG(CAP_MEMSEG_SIZE_LO), SGPU_REG(CAP_MEMSEG_SIZE_HI));
  const std::uint32_t cap = h.reg(SGPU_REG(GART_CAP));
  const unsigned sys_bits = (cap & SGPU_REGS__GART_CAP__SYS_ADDR_BITS_bm) >> SGPU_REGS__GART_CAP__SYS_ADDR_BITS_bp;
  CHECK(ap_size >= 0x8000);
  CHECK((ap_size & (ap_size - 1)) == 0);
  CHECK(ap % ap_size == 0);
  CHECK(ms_size > 0);
  CHECK((ap >> sys_bits) != 0);  // segments lie above system-physical addresses
  CHECK((ms >> sys_bits) != 0);
  CHECK(((ap + ap_size) <= ms || (ms + ms_size) <= ap));
  CHECK((cap & SGPU_REGS__GART_CAP__TLB_ENTRIES_bm) >> SGPU_REGS__GART_CAP__TLB_ENTRIES_bp == 32);
  CHECK((cap & SGPU_REGS__GART_CAP__PTES_PER_WALK_bm) >> SGPU_REGS__GART_CAP__PTES_PER_WALK_bp == 8);
  CHECK(h.reg(SGPU_REG(GART_CTRL)) == 0);  // identity until the driver enables it
}

TEST_CASE("the CP fetches a DMA buffer spanning scattered aperture pages", "[top][gart]") {
  RingHarness h;
  Gart g(h, 64);
  const Packets p = writes(1200, g.map_data());  // 1200 x 16 bytes: five pages
  const std::uint64_t buf = g.place(p, 3);
  const std::uint32_t st = submit(h, buf, p.bytes(), 11);  // an ordinary (non-privileged) buffer
  REQUIRE(st & kIntDone);
  CHECK_FALSE(st & kIntGartFault);
  CHECK(h.writeback().fence == 11);
  for (std::uint32_t i = 0; i < 1200; ++i) {
    if (h.mem().read32(kDataAddr + 4ull * i) != 0x1000u + i) FAIL("dword " << i);
  }
  CHECK(h.reg(SGPU_REG(GART_PERF_LOOKUPS)) >= 5);
  CHECK(h.reg(SGPU_REG(GART_PERF_MISSES)) >= 1);
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
}

TEST_CASE("a buffer hitting an unmapped page faults with TRANSLATION and the GART names the page",
          "[top][gart][fault]") {
  RingHarness h;
  Gart g(h, 64);
  const Packets p = writes(600, g.map_data());  // ~2.3 pages
  const std::uint64_t buf = g.place(p, 0);
  g.set_pte(1, 0);  // page 1: valid = 0
  g.invalidate(1, 1);
  const std::uint32_t st = submit(h, buf, p.bytes(), 21, 0, 77);
  REQUIRE(st & kIntFault);
  CHECK(st & kIntGartFault);
  const std::uint32_t fs = h.reg(SGPU_REG(FAULT_STATUS));
  CHECK((fs & SGPU_REGS__FAULT_STATUS__REASON_bm) >> SGPU_REGS__FAULT_STATUS__REASON_bp ==
        static_cast<std::uint32_t>(abi::Fault::Translation));
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(1));
  CHECK(reg64(h, SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)) == 21);
  const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK(gs & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK((gs & SGPU_REGS__GART_FAULT_STATUS__REASON_bm) >> SGPU_REGS__GART_FAULT_STATUS__REASON_bp == kInvalidPte);
  CHECK_FALSE(gs & SGPU_REGS__GART_FAULT_STATUS__WRITE_bm);
  CHECK(reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)) == g.addr(1));
  CHECK(reg64(h, SGPU_REG(GART_FAULT_FENCE_LO), SGPU_REG(GART_FAULT_FENCE_HI)) == 21);
  CHECK(h.reg(SGPU_REG(GART_FAULT_CONTEXT)) == 77);
  CHECK(h.writeback().fence == 0);  // the faulting entry did not retire

  // Resume: map the page, invalidate, reset the engine (clears both records), run it again.
  g.map(1, kPagesAddr + 0x7f000);
  h.mem().write(kPagesAddr + 0x7f000, reinterpret_cast<const std::uint8_t*>(p.words().data()) + 4096, 4096);
  g.invalidate(1, 1);
  REQUIRE(h.reset_engine());
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  const std::uint32_t st2 = submit(h, buf, p.bytes(), 22);
  REQUIRE(st2 & kIntDone);
  CHECK(h.writeback().fence == 22);
  CHECK(h.mem().read32(kDataAddr + 4 * 599) == 0x1000u + 599);
}

TEST_CASE("system-physical buffers need the privileged flag once the GART is on", "[top][gart][fault]") {
  RingHarness h;
  Gart g(h, 8);
  Packets p;
  p.write_data(kDataAddr, {0xabcd});
  h.mem().write(kBufferAddr, p.words().data(), p.bytes());
  std::uint32_t st = submit(h, kBufferAddr, p.bytes(), 5);
  REQUIRE(st & kIntFault);
  const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK((gs & SGPU_REGS__GART_FAULT_STATUS__REASON_bm) >> SGPU_REGS__GART_FAULT_STATUS__REASON_bp == kPrivilege);
  CHECK(reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)) == kBufferAddr);
  REQUIRE(h.reset_engine());
  st = submit(h, kBufferAddr, p.bytes(), 6, abi::ring_flags::kPrivileged);
  REQUIRE(st & kIntDone);
  CHECK(h.mem().read32(kDataAddr) == 0xabcd);
  CHECK_FALSE(st & kIntGartFault);
}

TEST_CASE("an unmapped page reads as the dummy page's poison, never as a hole", "[top][gart]") {
  RingHarness h;
  Gart g(h, 64);
  const Packets p = writes(600, g.map_data());
  const std::uint64_t buf = g.place(p, 0);
  g.unmap(1);  // UnmapApertureSegment: re-pointed at the dummy page
  g.invalidate(1, 1);
  const std::uint32_t st = submit(h, buf, p.bytes(), 31);
  REQUIRE(st & kIntFault);
  CHECK_FALSE(st & kIntGartFault);  // no translation fault: the page is mapped (to the dummy)
  const std::uint32_t fs = h.reg(SGPU_REG(FAULT_STATUS));
  CHECK((fs & SGPU_REGS__FAULT_STATUS__REASON_bm) >> SGPU_REGS__FAULT_STATUS__REASON_bp ==
        static_cast<std::uint32_t>(abi::Fault::IllegalOpcode));
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == kPoison);  // the decoder saw the poison pattern
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(1));
}

// ---------------------------------------------------------------------------------------------
// The write path through the GART (client 1): WRITE_DATA, FENCE and the write-back record.

TEST_CASE("WRITE_DATA and FENCE through aperture pages land at the mapped bus pages", "[top][gart][write]") {
  RingHarness h;
  Gart g(h, 64);
  // Aperture pages 50..52 -> three scattered bus pages, in reverse order.
  const std::uint64_t bus[3] = {kPagesAddr + 0x90000, kPagesAddr + 0x31000, kPagesAddr + 0x77000};
  for (std::uint32_t k = 0; k < 3; ++k) g.map(50 + k, bus[k]);
  g.invalidate(50, 3);
  Packets p;
  // One WRITE_DATA crossing from page 50 into page 51, one into page 52, a 64-bit fence.
  std::vector<std::uint32_t> run;
  for (std::uint32_t i = 0; i < 8; ++i) run.push_back(0xa000u + i);
  p.write_data(g.addr(50) + 4096 - 16, run);
  p.write_data(g.addr(52) + 0x124, {0xbeef});
  p.fence(g.addr(52) + 0x800, 0x1122334455667788ull, abi::fence_flags::kValue64);
  const std::uint64_t buf = g.place(p, 0);
  const std::uint32_t st = submit(h, buf, p.bytes(), 41);  // ordinary submission
  REQUIRE(st & kIntDone);
  CHECK_FALSE(st & (kIntFault | kIntGartFault));
  for (std::uint32_t i = 0; i < 4; ++i) CHECK(h.mem().read32(bus[0] + 4096 - 16 + 4 * i) == 0xa000u + i);
  for (std::uint32_t i = 4; i < 8; ++i) CHECK(h.mem().read32(bus[1] + 4 * (i - 4)) == 0xa000u + i);
  CHECK(h.mem().read32(bus[2] + 0x124) == 0xbeef);
  CHECK(h.mem().read64(bus[2] + 0x800) == 0x1122334455667788ull);
  // Nothing went to the GPU addresses themselves or to the untranslated offsets.
  CHECK(h.mem().read32(kDataAddr) == 0);
  CHECK(h.writeback().fence == 41);  // the write-back record (system physical) works with the GART on
  CHECK(h.writeback().head == h.tail());
}

TEST_CASE("a write to a read-only page faults with TRANSLATION and nothing is written from it on",
          "[top][gart][write][fault]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t data = g.map_data();
  const std::uint64_t ro_bus = kPagesAddr + 0x55000;
  g.map_ro(60, ro_bus);
  g.invalidate(60, 1);
  h.mem().fill(ro_bus, 0x77, 4096);
  Packets p;
  p.write_data(data, {0x1111});                       // lands
  p.write_data(g.addr(60) + 0x10, {0x2222, 0x3333});  // refused
  p.write_data(data + 4, {0x4444});                   // never executed
  p.fence(data + 8, 0x5555, 0);                       // never executed
  const std::uint64_t buf = g.place(p, 0);
  const std::uint32_t st = submit(h, buf, p.bytes(), 51, 0, 9);
  REQUIRE(st & kIntFault);
  CHECK(st & kIntGartFault);
  const std::uint32_t fs = h.reg(SGPU_REG(FAULT_STATUS));
  CHECK(field(fs, SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
        static_cast<std::uint32_t>(abi::Fault::Translation));
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(60) + 0x10);
  CHECK(reg64(h, SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)) == 51);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::WriteData, 5));
  const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK(gs & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK(gs & SGPU_REGS__GART_FAULT_STATUS__WRITE_bm);
  CHECK_FALSE(gs & SGPU_REGS__GART_FAULT_STATUS__PRIVILEGED_bm);
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__REASON_bm, SGPU_REGS__GART_FAULT_STATUS__REASON_bp) == kWriteProtect);
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == kClientCpWrite);
  CHECK(reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)) == g.addr(60));
  CHECK(reg64(h, SGPU_REG(GART_FAULT_FENCE_LO), SGPU_REG(GART_FAULT_FENCE_HI)) == 51);
  CHECK(h.reg(SGPU_REG(GART_FAULT_CONTEXT)) == 9);
  // Memory: the first write landed; the read-only page and everything after are untouched.
  CHECK(h.mem().read32(kDataAddr) == 0x1111);
  for (unsigned b = 0; b < 4096; b += 4) {
    if (h.mem().read32(ro_bus + b) != 0x77777777u) FAIL("read-only page written at " << b);
  }
  CHECK(h.mem().read32(kDataAddr + 4) == 0);
  CHECK(h.mem().read32(kDataAddr + 8) == 0);
  CHECK(h.writeback().fence == 0);  // not retired

  // Recovery: make the page writable, invalidate, reset, resubmit.
  g.map(60, ro_bus);
  g.invalidate(60, 1);
  REQUIRE(h.reset_engine());
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  const std::uint32_t st2 = submit(h, buf, p.bytes(), 52);
  REQUIRE(st2 & kIntDone);
  CHECK(h.mem().read32(ro_bus + 0x10) == 0x2222);
  CHECK(h.mem().read32(ro_bus + 0x14) == 0x3333);
  CHECK(h.mem().read32(kDataAddr + 4) == 0x4444);
  CHECK(h.mem().read32(kDataAddr + 8) == 0x5555);
  CHECK(h.writeback().fence == 52);
}

TEST_CASE("a write or fence to an unmapped page faults and writes nothing", "[top][gart][write][fault]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t data = g.map_data();
  const std::uint64_t trap = kPagesAddr + 0x66000;
  g.set_pte(61, trap);  // valid = 0, pointing at a page that must never be written
  g.invalidate(61, 1);
  SECTION("WRITE_DATA") {
    Packets p;
    p.write_data(g.addr(61) + 0x20, {0xdead});
    p.write_data(data, {0x1});
    const std::uint64_t buf = g.place(p, 0);
    const std::uint32_t st = submit(h, buf, p.bytes(), 61);
    REQUIRE(st & kIntFault);
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(61) + 0x20);
  }
  SECTION("FENCE (32-bit, upper dword)") {
    Packets p;
    p.write_data(data, {0x1});
    p.fence(g.addr(61) + 0x44, 0xfe, 0);
    const std::uint64_t buf = g.place(p, 0);
    const std::uint32_t st = submit(h, buf, p.bytes(), 61);
    REQUIRE(st & kIntFault);
    CHECK(h.mem().read32(kDataAddr) == 0x1);  // the write before the fence landed first
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(61) + 0x44);
    CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::Fence, 5));
  }
  const std::uint32_t fs = h.reg(SGPU_REG(FAULT_STATUS));
  CHECK(field(fs, SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
        static_cast<std::uint32_t>(abi::Fault::Translation));
  const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__REASON_bm, SGPU_REGS__GART_FAULT_STATUS__REASON_bp) == kInvalidPte);
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == kClientCpWrite);
  CHECK(gs & SGPU_REGS__GART_FAULT_STATUS__WRITE_bm);
  CHECK(reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)) == g.addr(61));
  for (unsigned b = 0; b < 4096; b += 4) {
    if (h.mem().read32(trap + b) != 0) FAIL("trap page written at " << b);
  }
  CHECK(h.writeback().fence == 0);
  REQUIRE(h.reset_engine());
  // The engine runs again after the reset.
  Packets q;
  q.write_data(data + 0x100, {0x77});
  const std::uint32_t st = submit(h, g.place(q, 8), q.bytes(), 62);
  REQUIRE(st & kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x100) == 0x77);
}

// The CP's writes are translated from a write buffer behind it (sgpu_cp_wr_buf): by the time the
// GART refuses a write the CP may have taken the next write and faulted on a later packet. The
// refused write is earlier than both: its TRANSLATION is the fault recorded, and the write behind
// it is dropped, as if the CP had stopped at the refused write (the model's order).
TEST_CASE("a refused write wins over a later packet's fault raised while it was translated, and the write behind it is dropped",
          "[top][gart][write][fault]") {
  RingHarness h;  // reads take 64 cycles: the PTE walk for the refused page is far slower than the CP
  Gart g(h, 64);
  const std::uint64_t data = g.map_data();
  const std::uint64_t trap = kPagesAddr + 0x66000;
  g.set_pte(61, trap);  // valid = 0
  g.invalidate(61, 1);
  const std::uint32_t unknown = abi::make_header(static_cast<abi::Opcode>(0xee), 1);
  Packets p;
  p.write_data(g.addr(61) + 0x20, {0xdead});  // refused, after a walk
  p.write_data(data, {0x1});                  // taken behind it: dropped
  p.raw(unknown);                             // ILLEGAL_OPCODE, found long before the refusal
  p.write_data(data + 4, {0x2});              // never reached
  const std::uint32_t st = submit(h, g.place(p, 0), p.bytes(), 63, 0, 5);
  REQUIRE(st & kIntFault);
  CHECK(st & kIntGartFault);
  const RingHarness::Fault f = h.fault();
  CHECK(f.reason == abi::Fault::Translation);
  CHECK(f.addr == g.addr(61) + 0x20);
  CHECK(f.detail == abi::make_header(abi::Opcode::WriteData, 4));
  CHECK(f.fence == 63);
  CHECK(f.ring_index == 0);
  const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__REASON_bm, SGPU_REGS__GART_FAULT_STATUS__REASON_bp) == kInvalidPte);
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == kClientCpWrite);
  CHECK_FALSE(gs & SGPU_REGS__GART_FAULT_STATUS__MORE_FAULTS_bm);
  CHECK(reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)) == g.addr(61));
  CHECK(h.mem().read32(kDataAddr) == 0);
  CHECK(h.mem().read32(kDataAddr + 4) == 0);
  for (unsigned b = 0; b < 4096; b += 4) {
    if (h.mem().read32(trap + b) != 0) FAIL("trap page written at " << b);
  }
  CHECK(h.fence_done() == 0);
  CHECK(h.writeback().fence == 0);
  // The engine runs again after the reset.
  REQUIRE(h.reset_engine());
  Packets q;
  q.write_data(data + 0x100, {0x77});
  REQUIRE(submit(h, g.place(q, 8), q.bytes(), 64) & kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x100) == 0x77);
}

namespace {

// A one-NOP entry whose write-back record lies in GART page 62 (mapped, its translation cached
// by nothing), submitted and run until the record's head word {reserved, head = 1} landed.
struct RecordInPage {
  std::uint64_t bus;  // the record's bus address
  std::uint64_t gpu;  // WB_ADDR
  abi::RingEntry entry;
};

RecordInPage start_with_record_in_page(RingHarness& h, Gart& g, std::uint64_t fence) {
  RecordInPage r{kPagesAddr + 0x99000, g.addr(62) + 0x40, {}};
  g.map(62, r.bus);
  g.invalidate(62, 1);
  h.dev().mmio_write32(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(r.gpu));
  h.dev().mmio_write32(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>(r.gpu >> 32));
  Packets p;
  p.nop();
  r.entry.buf_addr = g.place(p, 0);
  r.entry.end_offset = p.bytes();
  r.entry.fence = fence;
  h.push_entry(r.entry);
  h.doorbell();
  bool landed = false;
  for (int i = 0; i < 20000 && !landed; ++i) {
    landed = h.mem().read32(r.bus + 0x48) == 1;
    if (!landed) h.dev().step(1);
  }
  REQUIRE(landed);
  return r;
}

}  // namespace

// The fence word of the write-back record leaves the CP into its write buffer once the head word
// was acknowledged, and is translated behind it; refused (its page unmapped between the two
// words), it never lands and the entry faults before its commit point.
TEST_CASE("the write-back record's fence word refused after its head word landed leaves the entry not retired",
          "[top][gart][write][fault][retire]") {
  sim::SimConfig cfg;
  cfg.write_latency = 200;  // the memory takes a write's data at once, its response comes later
  RingHarness h(cfg);
  Gart g(h, 64);
  const RecordInPage r = start_with_record_in_page(h, g, 0x77);
  const std::uint64_t wb_bus = r.bus, wb = r.gpu;
  const abi::RingEntry e = r.entry;
  // The head word {reserved, head = 1} landed; its response is 200 cycles away.
  // Unmap the record's page before the fence word is issued.
  g.set_pte(62, wb_bus);  // valid = 0
  g.invalidate(62, 1);
  CHECK(h.mem().read64(wb_bus + 0x40) == 0);  // the fence word is not issued yet
  const std::uint32_t st = h.wait_irq();
  REQUIRE(st & kIntFault);
  CHECK_FALSE(st & kIntDone);
  const RingHarness::Fault f = h.fault();
  CHECK(f.reason == abi::Fault::Translation);
  CHECK(f.addr == wb);
  CHECK(f.detail == 0);
  CHECK(f.fence == 0x77);
  CHECK(f.ring_index == 0);
  CHECK(h.fence_done() == 0);
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 0);
  CHECK(h.mem().read64(wb_bus + 0x40) == 0);
  const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__REASON_bm, SGPU_REGS__GART_FAULT_STATUS__REASON_bp) == kInvalidPte);
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == kClientCpWrite);
  CHECK(reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)) == g.addr(62));
  // Mapped again, the same entry retires after the engine reset.
  g.map(62, wb_bus);
  g.invalidate(62, 1);
  REQUIRE(h.reset_engine());
  h.push_entry(e);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.fence_done() == 0x77);
  CHECK(h.mem().read64(wb_bus + 0x40) == 0x77);
}

// An engine reset drops the writes the CP's write buffer holds, as the CP stopped offering its
// write before there was a buffer: here the fence word of the write-back record, waiting for a
// slow PTE walk (its page's translation was invalidated after the head word), never lands and the
// entry does not retire; once the walk answers nothing is issued.
TEST_CASE("an engine reset drops the fence word waiting in the write buffer for its translation",
          "[top][gart][write][reset][retire]") {
  sim::SimConfig cfg;
  cfg.write_latency = 100;
  cfg.read_latency = 400;  // the fence word's PTE walk
  RingHarness h(cfg);
  Gart g(h, 64);
  const RecordInPage r = start_with_record_in_page(h, g, 0x99);
  const std::uint64_t wb_bus = r.bus, wb = r.gpu;
  const abi::RingEntry e = r.entry;
  // The write translator's cached page goes with the invalidation (the PTE stays valid): the
  // fence word, offered once the head word's response came (100 cycles), walks for 400.
  g.invalidate(62, 1);
  h.dev().step(150);
  CHECK(h.mem().read64(wb_bus + 0x40) == 0);
  CHECK(h.fence_done() == 0);
  REQUIRE(h.reset_engine());
  h.dev().step(2000);  // the walk answers; nothing is issued from it
  CHECK(h.mem().read64(wb_bus + 0x40) == 0);
  CHECK(h.fence_done() == 0);
  CHECK_FALSE(h.faulted());
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 0);
  // The engine runs again: the same entry retires.
  h.push_entry(e);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.fence_done() == 0x99);
  CHECK(h.mem().read64(wb_bus + 0x40) == 0x99);
}

TEST_CASE("ordinary writes to system-physical addresses fault PRIVILEGE, privileged ones pass",
          "[top][gart][write][fault]") {
  RingHarness h;
  Gart g(h, 64);
  Packets p;
  p.write_data(kDataAddr + 0x200, {0xabc});
  const std::uint64_t buf = g.place(p, 0);  // the buffer itself is in the aperture
  std::uint32_t st = submit(h, buf, p.bytes(), 71);
  REQUIRE(st & kIntFault);
  std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__REASON_bm, SGPU_REGS__GART_FAULT_STATUS__REASON_bp) == kPrivilege);
  CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == kClientCpWrite);
  CHECK(h.mem().read32(kDataAddr + 0x200) == 0);
  REQUIRE(h.reset_engine());
  st = submit(h, buf, p.bytes(), 72, abi::ring_flags::kPrivileged);
  REQUIRE(st & kIntDone);
  CHECK(h.mem().read32(kDataAddr + 0x200) == 0xabc);
  CHECK(h.writeback().fence == 72);
}

TEST_CASE("the write-back record may live in the aperture", "[top][gart][write]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t data = g.map_data();
  const std::uint64_t wb_bus = kPagesAddr + 0x99000;
  g.map(62, wb_bus);
  g.invalidate(62, 1);
  h.dev().mmio_write32(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(g.addr(62) + 0x40));
  h.dev().mmio_write32(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>((g.addr(62) + 0x40) >> 32));
  Packets p;
  p.write_data(data, {0x42});
  const std::uint32_t st = submit(h, g.place(p, 0), p.bytes(), 81);
  REQUIRE(st & kIntDone);
  CHECK(h.mem().read64(wb_bus + 0x40) == 81);
  CHECK(h.mem().read32(wb_bus + 0x48) == h.tail());
  CHECK(h.mem().read32(kDataAddr) == 0x42);
}

TEST_CASE("a remapped write page takes effect after the invalidation, between submissions",
          "[top][gart][write][invalidate]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t a = kPagesAddr + 0x11000, b = kPagesAddr + 0x12000;
  g.map(63, a);
  g.invalidate(63, 1);
  // The write-back record on the same page, and privileged submissions: every write of a
  // submission and its retirement use the same cached translation {page 63, privileged}.
  h.dev().mmio_write32(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(g.addr(63) + 0x800));
  h.dev().mmio_write32(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>((g.addr(63) + 0x800) >> 32));
  Packets p;
  p.write_data(g.addr(63) + 8, {0x1});
  const std::uint64_t buf = g.place(p, 0);
  REQUIRE(submit(h, buf, p.bytes(), 91, abi::ring_flags::kPrivileged) & kIntDone);
  CHECK(h.mem().read32(a + 8) == 0x1);
  CHECK(h.mem().read64(a + 0x800) == 91);
  // Remap page 63 and write again: the cached translation must not survive the invalidation.
  g.map(63, b);
  g.invalidate(63, 1);
  Packets q;
  q.write_data(g.addr(63) + 8, {0x2});
  REQUIRE(submit(h, g.place(q, 4), q.bytes(), 92, abi::ring_flags::kPrivileged) & kIntDone);
  CHECK(h.mem().read32(a + 8) == 0x1);
  CHECK(h.mem().read32(b + 8) == 0x2);
  CHECK(h.mem().read64(b + 0x800) == 92);
  CHECK(h.mem().read64(a + 0x800) == 91);
}

TEST_CASE("TLB_INVALIDATE in a privileged buffer remaps a page for the rest of the buffer and later buffers",
          "[top][gart][invalidate][packet]") {
  const bool all = GENERATE(false, true);
  CAPTURE(all);
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t a = kPagesAddr + 0x21000, b = kPagesAddr + 0x22000, c = kPagesAddr + 0x23000;
  const std::uint32_t page = 50;
  g.map(page, a);
  g.invalidate(page, 1);
  const std::uint64_t pte_addr = kTableAddr + 8ull * page;
  auto pte_words = [](std::uint64_t bus) {
    const std::uint64_t pte = bus | kPteValid | kPteWritable;
    return std::vector<std::uint32_t>{static_cast<std::uint32_t>(pte), static_cast<std::uint32_t>(pte >> 32)};
  };

  // An ordinary submission caches page 50 -> a in the TLB.
  Packets u0;
  u0.write_data(g.addr(page) + 0x0, {0x10});
  REQUIRE(submit(h, g.place(u0, 0), u0.bytes(), 1) & kIntDone);
  CHECK(h.mem().read32(a + 0x0) == 0x10);

  // Rewriting the PTE without an invalidation changes nothing: the TLB still holds page 50 -> a.
  Packets k0;
  k0.write_data(pte_addr, pte_words(c));
  k0.write_data(g.addr(page) + 0x4, {0x11});
  h.push(k0, 2, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.mem().read32(a + 0x4) == 0x11);
  CHECK(h.mem().read32(c + 0x4) == 0);

  // One privileged buffer: write the PTE (page 50 -> b), TLB_INVALIDATE, then write through
  // page 50 again: the packet after the invalidation sees the new table.
  Packets k1;
  k1.write_data(g.addr(page) + 0x8, {0x12});  // still a
  k1.write_data(pte_addr, pte_words(b));
  k1.tlb_invalidate(all ? 0 : page, all ? 0 : 1, all);
  k1.write_data(g.addr(page) + 0xc, {0x13});  // b
  h.push(k1, 3, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  CHECK(h.mem().read32(a + 0x8) == 0x12);
  CHECK(h.mem().read32(b + 0x8) == 0);
  CHECK(h.mem().read32(b + 0xc) == 0x13);
  CHECK(h.mem().read32(a + 0xc) == 0);

  // A later user buffer sees the new mapping too.
  Packets u1;
  u1.write_data(g.addr(page) + 0x10, {0x14});
  REQUIRE(submit(h, g.place(u1, 4), u1.bytes(), 4) & kIntDone);
  CHECK(h.mem().read32(b + 0x10) == 0x14);
  CHECK(h.mem().read32(a + 0x10) == 0);
  CHECK((h.reg(SGPU_REG(GART_STATUS)) & SGPU_REGS__GART_STATUS__INV_BUSY_bm) == 0);
}

TEST_CASE("TLB_INVALIDATE in an ordinary buffer faults PRIVILEGED_PACKET and is not executed",
          "[top][gart][invalidate][packet][fault]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t a = kPagesAddr + 0x21000, b = kPagesAddr + 0x22000;
  const std::uint32_t page = 51;
  g.map(page, a);
  g.invalidate(page, 1);
  Packets u0;
  u0.write_data(g.addr(page), {0x20});
  REQUIRE(submit(h, g.place(u0, 0), u0.bytes(), 1) & kIntDone);
  g.map(page, b);  // the PTE changes, but nobody invalidates through the MMIO path

  Packets u1;
  u1.nop(2);
  u1.tlb_invalidate(page, 1);
  u1.write_data(g.addr(page) + 4, {0x21});
  const std::uint64_t buf = g.place(u1, 4);
  const std::uint32_t st = submit(h, buf, u1.bytes(), 2, 0, 5);
  REQUIRE(st & kIntFault);
  const std::uint32_t fs = h.reg(SGPU_REG(FAULT_STATUS));
  CHECK(field(fs, SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
        static_cast<std::uint32_t>(abi::Fault::PrivilegedPacket));
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == buf + 8);
  CHECK(h.reg(SGPU_REG(FAULT_DETAIL)) == abi::make_header(abi::Opcode::TlbInvalidate, 3));
  CHECK(h.mem().read32(a + 4) == 0);
  CHECK(h.mem().read32(b + 4) == 0);
  // The engine recovers; with the MMIO invalidation the new mapping is used.
  REQUIRE(h.reset_engine());
  g.invalidate(page, 1);
  Packets u2;
  u2.write_data(g.addr(page) + 8, {0x22});
  REQUIRE(submit(h, g.place(u2, 8), u2.bytes(), 3) & kIntDone);
  CHECK(h.mem().read32(b + 8) == 0x22);
  CHECK(h.mem().read32(a + 8) == 0);
}

TEST_CASE("COPY and FILL translate both sides through the GART, refused pages fault TRANSLATION",
          "[top][gart][copy]") {
  RingHarness h;
  Gart g(h, 64);
  // Source pages 20..22 and destination pages 30..32, each scattered.
  for (std::uint32_t k = 0; k < 3; ++k) {
    g.map(20 + k, kPagesAddr + 0x1000ull * (50 + 2 * k));
    g.map(30 + k, kPagesAddr + 0x1000ull * (71 - 3 * k));
  }
  g.invalidate_all();
  std::vector<std::uint8_t> src(3 * 4096);
  for (std::size_t i = 0; i < src.size(); ++i) src[i] = static_cast<std::uint8_t>(i * 7 + 1);
  for (std::uint32_t k = 0; k < 3; ++k) h.mem().write(kPagesAddr + 0x1000ull * (50 + 2 * k), src.data() + 4096 * k, 4096);
  auto dst_byte = [&](std::uint64_t off) {
    return h.mem().read8(kPagesAddr + 0x1000ull * (71 - 3 * (off / 4096)) + off % 4096);
  };

  Packets p;
  p.copy(g.addr(20) + 5, g.addr(30) + 0x103, 2 * 4096 + 77);  // ordinary submission
  p.fill(g.addr(32) + 0x800, 16, 0xa0b0c0d0);
  REQUIRE(submit(h, g.place(p, 0), p.bytes(), 1) & kIntDone);
  bool same = true;
  for (std::uint64_t i = 0; i < 2 * 4096 + 77; ++i) same = same && dst_byte(0x103 + i) == src[5 + i];
  CHECK(same);
  CHECK(dst_byte(0x102) == 0);
  CHECK(h.mem().read32(kPagesAddr + 0x1000ull * 65 + 0x800) == 0xa0b0c0d0);

  SECTION("read-only destination page: client 3, nothing written to it") {
    g.map_ro(31, kPagesAddr + 0x1000ull * 68);
    g.invalidate(31, 1);
    Packets q;
    q.fill(g.addr(30) + 0xff0, 0x20, 0x55555555);
    const std::uint32_t st = submit(h, g.place(q, 4), q.bytes(), 2, 0, 12);
    REQUIRE(st & kIntFault);
    CHECK(field(h.reg(SGPU_REG(FAULT_STATUS)), SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
          static_cast<std::uint32_t>(abi::Fault::Translation));
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(31));
    const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
    CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == 3);
    CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__REASON_bm, SGPU_REGS__GART_FAULT_STATUS__REASON_bp) == kWriteProtect);
    CHECK(dst_byte(0x1000) == src[5 + 0x1000 - 0x103]);  // page 31 kept the first copy's bytes
    REQUIRE(h.reset_engine());
  }
  SECTION("unmapped source page: client 2") {
    g.set_pte(21, 0);
    g.invalidate(21, 1);
    Packets q;
    q.copy(g.addr(20) + 0xf00, g.addr(30), 0x200);
    const std::uint32_t st = submit(h, g.place(q, 4), q.bytes(), 3);
    REQUIRE(st & kIntFault);
    CHECK(field(h.reg(SGPU_REG(FAULT_STATUS)), SGPU_REGS__FAULT_STATUS__REASON_bm, SGPU_REGS__FAULT_STATUS__REASON_bp) ==
          static_cast<std::uint32_t>(abi::Fault::Translation));
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == g.addr(21));
    const std::uint32_t gs = h.reg(SGPU_REG(GART_FAULT_STATUS));
    CHECK(field(gs, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm, SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp) == 2);
    REQUIRE(h.reset_engine());
  }
}

// ---------------------------------------------------------------------------------------------
// MAP / UNMAP: the page table updated by privileged packets.

TEST_CASE("MAP in a privileged buffer maps scattered pages and UNMAP points them at the dummy page",
          "[top][gart][map][packet]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint32_t first = 56;
  const std::vector<std::uint64_t> bus = {kPagesAddr + 0x61000, kPagesAddr + 0x13000, kPagesAddr + 0x5a000};
  for (std::uint32_t k = 0; k < 3; ++k) h.mem().write32(bus[k] + 0x40, 0x5000u + k);

  // MAP pages 56..58 (bus addresses with junk in bits 11:0, which the PTE ignores), then in the
  // same buffer a write through page 57: the packet after MAP sees the mapping.
  Packets k0;
  std::vector<std::uint64_t> junk = bus;
  junk[1] |= 0xabc;
  k0.map(first, kPteValid | kPteWritable, junk);
  k0.write_data(g.addr(first + 1) + 0x80, {0x77});
  h.push(k0, 1, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  REQUIRE(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  for (std::uint32_t k = 0; k < 3; ++k) CHECK(h.mem().read64(kTableAddr + 8ull * (first + k)) == (bus[k] | 3));
  CHECK(h.mem().read32(bus[1] + 0x80) == 0x77);

  // A user buffer reads (COPY source) and writes through the mapped pages.
  Packets u0;
  u0.copy(g.addr(first) + 0x40, g.addr(first + 2) + 0x100, 4);
  u0.write_data(g.addr(first + 2) + 0x104, {0x99});
  REQUIRE(submit(h, g.place(u0, 0), u0.bytes(), 2) & kIntDone);
  CHECK(h.mem().read32(bus[2] + 0x100) == 0x5000u);
  CHECK(h.mem().read32(bus[2] + 0x104) == 0x99);

  // UNMAP page 56 (dummy page, read-only): a user COPY from it now reads the poison.
  Packets k1;
  k1.unmap(first, 1, kDummyAddr | kPteValid);
  h.push(k1, 3, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  CHECK(h.mem().read64(kTableAddr + 8ull * first) == (kDummyAddr | kPteValid));
  CHECK(h.mem().read64(kTableAddr + 8ull * (first + 1)) == (bus[1] | 3));  // outside the range
  Packets u1;
  u1.copy(g.addr(first) + 0x40, g.addr(first + 2) + 0x200, 8);
  REQUIRE(submit(h, g.place(u1, 4), u1.bytes(), 4) & kIntDone);
  CHECK(h.mem().read32(bus[2] + 0x200) == kPoison);
  CHECK(h.mem().read32(bus[2] + 0x204) == kPoison);
  CHECK(h.mem().read32(bus[0] + 0x40) == 0x5000u);  // the old page itself is untouched
}

TEST_CASE("MAP and UNMAP ranges ending exactly at GART_TABLE_SIZE pass the check", "[top][gart][map][packet]") {
  RingHarness h;
  Gart g(h, 64);
  // Pages 62 and 63, the table's last two (the range ends at 64 = GART_TABLE_SIZE); a page more
  // faults MAP_RANGE (the test below).
  Packets k;
  k.map(62, kPteValid | kPteWritable, {kPagesAddr + 0x7000, kPagesAddr + 0x9000});
  k.unmap(63, 1, kDummyAddr | kPteValid);
  h.push(k, 1, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  REQUIRE(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  CHECK(h.mem().read64(kTableAddr + 8ull * 62) == ((kPagesAddr + 0x7000) | 3));
  CHECK(h.mem().read64(kTableAddr + 8ull * 63) == (kDummyAddr | kPteValid));
}

TEST_CASE("MAP/UNMAP faults: past GART_TABLE_SIZE (MAP_RANGE), bad length, ordinary buffer",
          "[top][gart][map][packet][fault]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t before = h.mem().read64(kTableAddr + 8ull * 63);
  Packets k;
  std::uint32_t flags = abi::ring_flags::kPrivileged;
  abi::Fault want = abi::Fault::MapRange;
  SECTION("MAP past the table") { k.map(62, kPteValid, {kPagesAddr, kPagesAddr + 0x1000, kPagesAddr + 0x2000}); }
  SECTION("UNMAP past the table") { k.unmap(63, 2, 0); }
  SECTION("MAP whose length does not match count") {
    k.raw(abi::make_header(abi::Opcode::Map, 6));
    k.raw(63);
    k.raw(2);
    k.raw(kPteValid);
    k.raw(0);
    k.raw(0);
    want = abi::Fault::BadLength;
  }
  SECTION("UNMAP in an ordinary buffer") {
    k.unmap(63, 1, 0);
    flags = 0;
    want = abi::Fault::PrivilegedPacket;
  }
  if (flags != 0) {
    h.push(k, 1, flags);  // a system-physical buffer: privileged entries only
    h.doorbell();
    REQUIRE(h.wait_irq() & kIntFault);
  } else {
    REQUIRE(submit(h, g.place(k, 0), k.bytes(), 1) & kIntFault);  // through the aperture
  }
  CHECK(field(h.reg(SGPU_REG(FAULT_STATUS)), SGPU_REGS__FAULT_STATUS__REASON_bm,
              SGPU_REGS__FAULT_STATUS__REASON_bp) == static_cast<std::uint32_t>(want));
  CHECK(h.mem().read64(kTableAddr + 8ull * 63) == before);  // no PTE written
  REQUIRE(h.reset_engine());
}

// ---------------------------------------------------------------------------------------------
// READ_PHYSICAL / WRITE_PHYSICAL: system-physical addresses with the GART on.

TEST_CASE("WRITE_PHYSICAL and READ_PHYSICAL use bus addresses, never translated, with the GART on",
          "[top][gart][physical][packet]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t a = kPagesAddr + 0x44000;  // a bus page, also mapped at aperture page 20
  g.map(20, kPagesAddr + 0x45000);
  g.invalidate(20, 1);
  h.mem().write32(a + 0x300, 0x31);
  h.mem().write32(a + 0x304, 0x32);

  // Privileged: WRITE_PHYSICAL to a crossing the end of a dword run, READ_PHYSICAL from a into
  // the aperture page (the destination is translated, the source is not).
  Packets k;
  k.write_physical(a + 0x10, {0x11, 0x12, 0x13});
  k.read_physical(a + 0x300, g.addr(20) + 0x8, 8);
  h.push(k, 1, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntDone);
  REQUIRE(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  CHECK(h.mem().read32(a + 0x10) == 0x11);
  CHECK(h.mem().read32(a + 0x18) == 0x13);
  CHECK(h.mem().read32(kPagesAddr + 0x45000 + 0x8) == 0x31);
  CHECK(h.mem().read32(kPagesAddr + 0x45000 + 0xc) == 0x32);

  // Beyond the system-physical range: PHYSICAL_RANGE, nothing written.
  const std::uint64_t ms = reg64(h, SGPU_REG(CAP_MEMSEG_BASE_LO), SGPU_REG(CAP_MEMSEG_BASE_HI));
  Packets bad;
  std::uint64_t want_addr = 0;
  SECTION("WRITE_PHYSICAL at a memory-segment address") {
    bad.write_physical(ms, {0x99});
    want_addr = ms;
  }
  SECTION("READ_PHYSICAL whose source runs past the range") {
    const std::uint64_t top = (std::uint64_t{1} << 52) - 4;
    bad.read_physical(top, a + 0x400, 8);
    want_addr = top;
  }
  h.push(bad, 2, abi::ring_flags::kPrivileged);
  h.doorbell();
  REQUIRE(h.wait_irq() & kIntFault);
  CHECK(field(h.reg(SGPU_REG(FAULT_STATUS)), SGPU_REGS__FAULT_STATUS__REASON_bm,
              SGPU_REGS__FAULT_STATUS__REASON_bp) == static_cast<std::uint32_t>(abi::Fault::PhysicalRange));
  CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == want_addr);
  CHECK(h.mem().read32(a + 0x400) == 0);
  REQUIRE(h.reset_engine());

  // In an ordinary buffer: PRIVILEGED_PACKET, not executed.
  Packets u;
  u.write_physical(a + 0x20, {0x77});
  REQUIRE(submit(h, g.place(u, 0), u.bytes(), 3) & kIntFault);
  CHECK(field(h.reg(SGPU_REG(FAULT_STATUS)), SGPU_REGS__FAULT_STATUS__REASON_bm,
              SGPU_REGS__FAULT_STATUS__REASON_bp) == static_cast<std::uint32_t>(abi::Fault::PrivilegedPacket));
  CHECK(h.mem().read32(a + 0x20) == 0);
}

// The physical-range checks compare the high dword with 2^20 - c - (e != 0), where c and e are
// the carry and the low word of the low dword's sum with the length (WRITE_PHYSICAL: address
// low dword + 4 * (dwords - 3); READ_PHYSICAL: source low dword + bytes), made a cycle before
// the dword reaches the head: exactly at the boundary, for each of the three compares.
TEST_CASE("WRITE_PHYSICAL and READ_PHYSICAL ranges ending exactly at 2^52 pass the check and a dword or byte more faults",
          "[top][gart][physical][packet][fault]") {
  RingHarness h;
  Gart g(h, 64);
  const std::uint64_t limit = std::uint64_t{1} << 52;
  const std::uint64_t spare = kPagesAddr + 0x46000;  // READ_PHYSICAL's destination
  Packets k;
  std::uint64_t want_addr = 0;
  bool over = false;
  // Address low dword 0xfffffff8: its sum with the length carries into the high dword.
  SECTION("WRITE_PHYSICAL of two dwords ending at 2^52") { k.write_physical(limit - 8, {1, 2}); }
  SECTION("WRITE_PHYSICAL of three dwords ending past 2^52") {
    k.write_physical(limit - 8, {1, 2, 3});
    want_addr = limit - 8;
    over = true;
  }
  SECTION("WRITE_PHYSICAL of one dword at 2^52") {
    k.write_physical(limit, {1});
    want_addr = limit;
    over = true;
  }
  // High dword 2^20 - 2: the sum carries and leaves a nonzero low word, and the range ends
  // 4 GiB below 2^52.
  SECTION("WRITE_PHYSICAL crossing into the last 4 GiB below 2^52") {
    k.write_physical(limit - (std::uint64_t{1} << 32) - 4, {1, 2});
  }
  SECTION("WRITE_PHYSICAL of one dword in the last 4 GiB below 2^52") {
    k.write_physical(limit - (std::uint64_t{1} << 32) + 0x100, {1});
  }
  SECTION("WRITE_PHYSICAL of a long run ending at 2^52") {
    k.write_physical(limit - 4 * 300, std::vector<std::uint32_t>(300, 7));
  }
  SECTION("WRITE_PHYSICAL of a long run ending past 2^52") {
    k.write_physical(limit - 4 * 300 + 4, std::vector<std::uint32_t>(300, 7));
    want_addr = limit - 4 * 300 + 4;
    over = true;
  }
  SECTION("READ_PHYSICAL of 8 bytes ending at 2^52") { k.read_physical(limit - 8, spare, 8); }
  SECTION("READ_PHYSICAL of 9 bytes ending past 2^52") {
    k.read_physical(limit - 8, spare, 9);
    want_addr = limit - 8;
    over = true;
  }
  SECTION("READ_PHYSICAL crossing into the last 4 GiB below 2^52") {
    k.read_physical(limit - (std::uint64_t{1} << 32) - 4, spare, 8);
  }
  SECTION("READ_PHYSICAL from 2^52 - 4 of 5 bytes") {
    k.read_physical(limit - 4, spare, 5);
    want_addr = limit - 4;
    over = true;
  }
  // No bytes: the end is the source, and only then is the sum's low word zero without a carry.
  SECTION("READ_PHYSICAL of no bytes from 2^52") { k.read_physical(limit, spare, 0); }
  SECTION("READ_PHYSICAL of no bytes from 2^52 + 4") {
    k.read_physical(limit + 4, spare, 0);
    want_addr = limit + 4;
    over = true;
  }
  SECTION("READ_PHYSICAL from 2^52 + 2^32 (source high dword above the bound)") {
    k.read_physical(limit + (std::uint64_t{1} << 32), spare, 4);
    want_addr = limit + (std::uint64_t{1} << 32);
    over = true;
  }
  h.push(k, 1, abi::ring_flags::kPrivileged);
  h.doorbell();
  const std::uint32_t irq = h.wait_irq();
  const std::uint32_t reason = field(h.reg(SGPU_REG(FAULT_STATUS)), SGPU_REGS__FAULT_STATUS__REASON_bm,
                                     SGPU_REGS__FAULT_STATUS__REASON_bp);
  if (over) {
    REQUIRE(irq & kIntFault);
    CHECK(reason == static_cast<std::uint32_t>(abi::Fault::PhysicalRange));
    CHECK(reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)) == want_addr);
    CHECK(h.mem().read32(spare) == 0);
  } else {
    // Inside the range: executed (the memory may refuse the bus address; that is not the check's).
    CHECK(reason != static_cast<std::uint32_t>(abi::Fault::PhysicalRange));
  }
  REQUIRE(h.reset_engine());
}

// The read-ahead of the next entry's DMA buffer (issue 18): while an entry retires, the next
// entry's buffer (inside one page) is read with that entry's privilege, quietly: a translation
// fault there is not recorded, and the buffer is read again once the entry starts, so the fault
// records are those of the entry run alone. Write responses are slow so that the read-ahead
// (ring entry, buffer, the page-table walk that refuses it) completes while the first entry
// retires.
namespace {

constexpr std::uint32_t kAheadPage = 5;      // the second entry's buffer: aperture page 5
constexpr std::uint64_t kAheadFence = 0x202;
constexpr std::uint32_t kAheadContext = 0x55;
constexpr std::uint64_t kFirstFence = 0x101;

sim::SimConfig slow_writes() {
  sim::SimConfig c;
  c.read_latency = 32;
  c.write_latency = 1500;
  return c;
}

/// Every register of the CP's and the GART's fault records.
struct FaultRegs {
  std::uint32_t status, detail, gart_status, gart_context;
  std::uint64_t addr, fence, gart_addr, gart_fence;
  bool operator==(const FaultRegs& o) const {
    return std::tie(status, detail, gart_status, gart_context, addr, fence, gart_addr, gart_fence) ==
           std::tie(o.status, o.detail, o.gart_status, o.gart_context, o.addr, o.fence, o.gart_addr, o.gart_fence);
  }
};

FaultRegs fault_regs(RingHarness& h) {
  return {h.reg(SGPU_REG(FAULT_STATUS)),
          h.reg(SGPU_REG(FAULT_DETAIL)),
          h.reg(SGPU_REG(GART_FAULT_STATUS)),
          h.reg(SGPU_REG(GART_FAULT_CONTEXT)),
          reg64(h, SGPU_REG(FAULT_ADDR_LO), SGPU_REG(FAULT_ADDR_HI)),
          reg64(h, SGPU_REG(FAULT_FENCE_LO), SGPU_REG(FAULT_FENCE_HI)),
          reg64(h, SGPU_REG(GART_FAULT_ADDR_LO), SGPU_REG(GART_FAULT_ADDR_HI)),
          reg64(h, SGPU_REG(GART_FAULT_FENCE_LO), SGPU_REG(GART_FAULT_FENCE_HI))};
}

/// Places a one-packet buffer in aperture page kAheadPage and makes the page invalid
/// (valid = 0): every read of it is refused (INVALID_PTE).
std::uint64_t refused_buffer(Gart& g, const Packets& p) {
  const std::uint64_t buf = g.place(p, kAheadPage);
  g.set_pte(kAheadPage, 0);
  g.invalidate(kAheadPage, 1);
  return buf;
}

bool wait_fault(RingHarness& h) {
  for (int i = 0; i < 4000 && !h.faulted(); ++i) h.dev().step(16);
  return h.faulted();
}

/// Cycles until the write-back record shows `fence`, cycle by cycle (0: not within 40 000).
std::uint64_t cycles_to_fence(RingHarness& h, std::uint64_t fence) {
  const std::uint64_t c0 = h.dev().cycle();
  for (int i = 0; i < 40000; ++i) {
    if (h.writeback().fence == fence) return h.dev().cycle() - c0;
    h.dev().step(1);
  }
  return 0;
}

void push_second(RingHarness& h, std::uint64_t buf, std::uint32_t bytes, std::uint32_t flags = 0) {
  abi::RingEntry e{};
  e.buf_addr = buf;
  e.end_offset = bytes;
  e.fence = kAheadFence;
  e.context_id = kAheadContext;
  e.flags = flags;
  h.push_entry(e);
}

/// The fault records of the second entry's buffer read refused, run alone (nothing before it,
/// so nothing reads it ahead).
FaultRegs refused_alone() {
  RingHarness h(slow_writes());
  Gart g(h, 64);
  const Packets p = Packets().write_data(g.map_data(), {0xb0b});
  push_second(h, refused_buffer(g, p), p.bytes());
  h.doorbell();
  REQUIRE(wait_fault(h));
  return fault_regs(h);
}

/// A privileged first entry (a system-physical buffer writing system memory), then the second
/// entry whose buffer page is refused; returns once the second buffer's page was looked up (read
/// ahead) while the first entry still retires.
void run_until_refused_ahead(RingHarness& h, Gart& g) {
  const Packets second = Packets().write_data(g.map_data(), {0xb0b});
  const std::uint64_t buf = refused_buffer(g, second);
  const std::uint32_t lookups = h.reg(SGPU_REG(GART_PERF_LOOKUPS));
  h.push(Packets().write_data(kDataAddr + 0x100, {0xa1}), kFirstFence, abi::ring_flags::kPrivileged);
  push_second(h, buf, second.bytes());
  h.doorbell();
  for (int i = 0; i < 4000 && h.reg(SGPU_REG(GART_PERF_LOOKUPS)) == lookups; ++i) h.dev().step(1);
  REQUIRE(h.reg(SGPU_REG(GART_PERF_LOOKUPS)) != lookups);
  h.dev().step(100);  // the refusal is answered
  REQUIRE(h.writeback().fence != kFirstFence);  // the first entry still retires
  // Refused, and nothing says so: no GART record, no interrupt bit, no CP fault.
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK_FALSE(h.reg(SGPU_REG(INT_STATUS)) & (kIntGartFault | kIntFault));
  CHECK_FALSE(h.faulted());
}

void check_refused_record(const FaultRegs& f) {
  CHECK((f.status & SGPU_REGS__FAULT_STATUS__REASON_bm) >> SGPU_REGS__FAULT_STATUS__REASON_bp ==
        static_cast<std::uint32_t>(abi::Fault::Translation));
  CHECK(f.fence == kAheadFence);
  CHECK(f.gart_status & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK_FALSE(f.gart_status & SGPU_REGS__GART_FAULT_STATUS__MORE_FAULTS_bm);
  CHECK_FALSE(f.gart_status & SGPU_REGS__GART_FAULT_STATUS__PRIVILEGED_bm);
  CHECK((f.gart_status & SGPU_REGS__GART_FAULT_STATUS__REASON_bm) >> SGPU_REGS__GART_FAULT_STATUS__REASON_bp ==
        kInvalidPte);
  CHECK((f.gart_status & SGPU_REGS__GART_FAULT_STATUS__CLIENT_bm) >> SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp ==
        kClientFetch);
  CHECK(f.gart_fence == kAheadFence);
  CHECK(f.gart_context == kAheadContext);
}

}  // namespace

TEST_CASE("a buffer read ahead and refused faults only when its entry starts, with the records of the entry run alone",
          "[top][gart][readahead][fault]") {
  const FaultRegs alone = refused_alone();
  check_refused_record(alone);

  RingHarness h(slow_writes());
  Gart g(h, 64);
  run_until_refused_ahead(h, g);
  REQUIRE(wait_fault(h));
  CHECK(h.writeback().fence == kFirstFence);  // the first entry retired
  CHECK(h.mem().read32(kDataAddr + 0x100) == 0xa1);
  const FaultRegs f = fault_regs(h);
  CHECK((f.status & SGPU_REGS__FAULT_STATUS__RING_INDEX_bm) >> SGPU_REGS__FAULT_STATUS__RING_INDEX_bp == 1);
  check_refused_record(f);
  // Ring index aside (1 here, 0 alone) the records are those of the entry run alone.
  FaultRegs same = f;
  same.status = alone.status;
  CHECK(same == alone);
  CHECK((f.status & SGPU_REGS__FAULT_STATUS__REASON_bm) == (alone.status & SGPU_REGS__FAULT_STATUS__REASON_bm));
}

TEST_CASE("a buffer read ahead and refused, then a preemption: no fault, and after resume the entry faults with its own records",
          "[top][gart][readahead][preempt][fault]") {
  RingHarness h(slow_writes());
  Gart g(h, 64);
  const std::uint64_t rec = kWritebackAddr + 0x100;
  h.dev().mmio_write32(SGPU_REG(PREEMPT_ADDR_LO), static_cast<std::uint32_t>(rec));
  h.dev().mmio_write32(SGPU_REG(PREEMPT_ADDR_HI), static_cast<std::uint32_t>(rec >> 32));
  run_until_refused_ahead(h, g);
  h.dev().mmio_write32(SGPU_REG(PREEMPT), SGPU_REGS__PREEMPT__REQUEST_bm);
  for (int i = 0; i < 20000 && !(h.reg(SGPU_REG(INT_STATUS)) & SGPU_REGS__INT_STATUS__PREEMPTED_bm); ++i) h.dev().step(4);
  REQUIRE(h.reg(SGPU_REG(INT_STATUS)) & SGPU_REGS__INT_STATUS__PREEMPTED_bm);
  // At the submission boundary: the first entry retired, the second never started.
  CHECK(h.reg(SGPU_REG(PREEMPT_STATUS)) == SGPU_REGS__PREEMPT_STATUS__PREEMPTED_bm);
  CHECK(h.writeback().fence == kFirstFence);
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 1);
  CHECK_FALSE(h.faulted());
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK_FALSE(h.reg(SGPU_REG(INT_STATUS)) & (kIntGartFault | kIntFault));
  CHECK(h.reg(SGPU_REG(FAULT_STATUS)) == 0);
  h.dev().mmio_write32(SGPU_REG(PREEMPT), SGPU_REGS__PREEMPT__RESUME_bm);
  REQUIRE(wait_fault(h));
  const FaultRegs f = fault_regs(h);
  CHECK((f.status & SGPU_REGS__FAULT_STATUS__RING_INDEX_bm) >> SGPU_REGS__FAULT_STATUS__RING_INDEX_bp == 1);
  check_refused_record(f);
}

TEST_CASE("a buffer read ahead and refused, then CTRL.enable = 0: no fault until enable, then the entry's own records",
          "[top][gart][readahead][fault]") {
  RingHarness h(slow_writes());
  Gart g(h, 64);
  run_until_refused_ahead(h, g);
  h.dev().mmio_write32(SGPU_REG(CTRL), 0);
  REQUIRE(h.wait_fence(kFirstFence, 40000));
  h.dev().step(5000);
  CHECK(h.reg(SGPU_REG(RING_HEAD)) == 1);
  CHECK(h.reg(SGPU_REG(STATUS)) & SGPU_REGS__STATUS__IDLE_bm);
  CHECK_FALSE(h.faulted());
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK_FALSE(h.reg(SGPU_REG(INT_STATUS)) & (kIntGartFault | kIntFault));
  h.dev().mmio_write32(SGPU_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  REQUIRE(wait_fault(h));
  const FaultRegs f = fault_regs(h);
  CHECK((f.status & SGPU_REGS__FAULT_STATUS__RING_INDEX_bm) >> SGPU_REGS__FAULT_STATUS__RING_INDEX_bp == 1);
  check_refused_record(f);
}

TEST_CASE("a buffer read ahead and refused, then an engine reset: dropped unreported, and the ring runs again",
          "[top][gart][readahead][reset]") {
  RingHarness h(slow_writes());
  Gart g(h, 64);
  run_until_refused_ahead(h, g);
  REQUIRE(h.reset_engine());
  h.dev().step(5000);
  CHECK_FALSE(h.faulted());
  CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK_FALSE(h.reg(SGPU_REG(INT_STATUS)) & (kIntGartFault | kIntFault));
  CHECK(h.writeback().fence != kAheadFence);
  // The ring restarts at entry 0 with a mapped buffer: it runs.
  g.map(kAheadPage, kPagesAddr + 0x3000);
  const Packets p = Packets().write_data(g.map_data() + 0x40, {0xc3});
  h.mem().write(kPagesAddr + 0x3000, p.words().data(), p.bytes());
  g.invalidate(kAheadPage, 1);
  push_second(h, g.addr(kAheadPage), p.bytes());
  h.doorbell();
  REQUIRE(h.wait_fence(kAheadFence, 40000));
  CHECK(h.mem().read32(kDataAddr + 0x40) == 0xc3);
}

TEST_CASE("a buffer read ahead has its own entry's privilege: privileged then ordinary, ordinary then privileged",
          "[top][gart][readahead][privilege]") {
  SECTION("an ordinary entry's system-physical buffer behind a privileged entry faults PRIVILEGE, as alone") {
    FaultRegs alone{};
    for (int run = 0; run < 2; ++run) {
      RingHarness h(slow_writes());
      Gart g(h, 8);
      const Packets second = Packets().write_data(kDataAddr + 0x200, {0xbad});
      h.mem().write(kBufferAddr + 0x8000, second.words().data(), second.bytes());
      if (run == 1) h.push(Packets().write_data(kDataAddr + 0x100, {0xa1}), kFirstFence, abi::ring_flags::kPrivileged);
      push_second(h, kBufferAddr + 0x8000, second.bytes());
      h.doorbell();
      REQUIRE(wait_fault(h));
      FaultRegs f = fault_regs(h);
      CHECK((f.gart_status & SGPU_REGS__GART_FAULT_STATUS__REASON_bm) >> SGPU_REGS__GART_FAULT_STATUS__REASON_bp ==
            kPrivilege);
      CHECK_FALSE(f.gart_status & SGPU_REGS__GART_FAULT_STATUS__PRIVILEGED_bm);
      CHECK(f.gart_fence == kAheadFence);
      CHECK(f.gart_context == kAheadContext);
      CHECK(h.mem().read32(kDataAddr + 0x200) == 0);
      if (run == 0) {
        alone = f;
      } else {
        CHECK(h.writeback().fence == kFirstFence);
        f.status = alone.status;  // ring index 1 here, 0 alone
        CHECK(f == alone);
      }
    }
  }
  SECTION("a privileged entry's system-physical buffer behind an ordinary entry runs") {
    sim::SimConfig c;
    c.read_latency = 256;
    c.write_latency = 64;
    RingHarness h(c);
    Gart g(h, 64);
    const std::uint64_t data = g.map_data();
    const Packets first = Packets().write_data(data + 0x100, {0xa1});
    const std::uint64_t fbuf = g.place(first, kAheadPage);
    abi::RingEntry e{};
    e.buf_addr = fbuf;
    e.end_offset = first.bytes();
    e.fence = kFirstFence;
    e.context_id = 3;
    h.push_entry(e);
    const Packets second = Packets().write_physical(kDataAddr + 0x208, {0x5eed});
    h.mem().write(kBufferAddr + 0x8000, second.words().data(), second.bytes());
    push_second(h, kBufferAddr + 0x8000, second.bytes(), abi::ring_flags::kPrivileged);
    h.doorbell();
    REQUIRE(cycles_to_fence(h, kFirstFence) != 0);
    const std::uint64_t between = cycles_to_fence(h, kAheadFence);
    REQUIRE(between != 0);
    CHECK_FALSE(h.faulted());
    CHECK_FALSE(h.reg(SGPU_REG(GART_FAULT_STATUS)) & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
    CHECK(h.mem().read32(kDataAddr + 0x100) == 0xa1);
    CHECK(h.mem().read32(kDataAddr + 0x208) == 0x5eed);
    // Read ahead with its own privilege, the buffer was not refused and read again after the
    // entry started: ≈ 290 cycles from commit to commit (its read overlaps the first entry's
    // retirement). Refused (read ahead with the first entry's privilege), it is read again from
    // the commit on: ≈ 490; read only at the start (no read-ahead at all) ≈ 555.
    INFO("cycles between the two commits: " << between);
    CHECK(between < 400);
  }
}

TEST_CASE("a ring entry read ahead that fails on the bus faults only when it is needed, as a ring read",
          "[top][readahead][fault]") {
  RingHarness h(slow_writes());
  h.push(Packets().write_data(kDataAddr + 0x100, {0xa1}), kFirstFence);
  h.push(Packets().write_data(kDataAddr + 0x108, {0xb2}), kAheadFence);
  const std::uint64_t second_entry = kRingAddr + sizeof(abi::RingEntry);
  h.dev().memory_port().inject_error(second_entry, second_entry + 8, 2);  // SLVERR
  h.doorbell();
  // The second entry's read failed long before the first one retires: nothing says so yet.
  h.dev().step(2000);
  REQUIRE(h.writeback().fence != kFirstFence);
  CHECK_FALSE(h.faulted());
  REQUIRE(wait_fault(h));
  CHECK(h.writeback().fence == kFirstFence);
  CHECK(h.mem().read32(kDataAddr + 0x100) == 0xa1);
  CHECK(h.mem().read32(kDataAddr + 0x108) == 0);
  const RingHarness::Fault f = h.fault();
  CHECK(f.reason == abi::Fault::BusError);
  CHECK(f.ring_index == 1);
  CHECK(f.addr == second_entry);
  CHECK(f.fence == 0);  // the entry could not be read
  CHECK(f.detail == static_cast<std::uint32_t>(abi::FetchError::BusSlvErr));
}

TEST_CASE("a ring entry read ahead and refused by the GART is recorded only when it is read, as a ring read",
          "[top][gart][readahead][fault]") {
  // A 256-entry ring in the aperture: entries 0..127 in its first page (mapped to kRingAddr),
  // entries 128.. in its second page (valid = 0). Entry 128 is read ahead while entry 127 runs.
  RingHarness h(sim::SimConfig{}, 8);
  Gart g(h, 64);
  constexpr std::uint32_t kRingPage = 20;
  g.map(kRingPage, kRingAddr);
  g.set_pte(kRingPage + 1, 0);
  g.invalidate(kRingPage, 2);
  h.dev().mmio_write32(SGPU_REG(RING_BASE_LO), static_cast<std::uint32_t>(g.addr(kRingPage)));
  h.dev().mmio_write32(SGPU_REG(RING_BASE_HI), static_cast<std::uint32_t>(g.addr(kRingPage) >> 32));
  for (std::uint32_t i = 0; i < 128; ++i) {
    h.push(Packets().write_data(kDataAddr + 8ull * i, {0x100 + i}), 1000 + i, abi::ring_flags::kPrivileged);
  }
  h.push(Packets().write_data(kDataAddr + 8ull * 128, {0x180}), 1128, 0);
  h.doorbell();
  for (int i = 0; i < 20000 && !h.faulted(); ++i) h.dev().step(16);
  REQUIRE(h.faulted());
  CHECK(h.writeback().fence == 1127);
  const RingHarness::Fault f = h.fault();
  CHECK(f.reason == abi::Fault::Translation);
  CHECK(f.ring_index == 128);
  CHECK(f.addr == g.addr(kRingPage + 1));
  CHECK(f.fence == 0);
  const FaultRegs r = fault_regs(h);
  CHECK(r.gart_status & SGPU_REGS__GART_FAULT_STATUS__VALID_bm);
  CHECK_FALSE(r.gart_status & SGPU_REGS__GART_FAULT_STATUS__MORE_FAULTS_bm);
  CHECK(r.gart_status & SGPU_REGS__GART_FAULT_STATUS__PRIVILEGED_bm);  // the ring is the kernel's
  CHECK(r.gart_addr == g.addr(kRingPage + 1));
  // Recorded while the entry was read (fence and context 0), not while entry 127 ran.
  CHECK(r.gart_fence == 0);
  CHECK(r.gart_context == 0);
}
