// Full-chip tests of the GPU address map and the GART through raw MMIO and host memory (no host
// library): the driver writes PTEs straight into host memory, programs GART_*, and the command
// processor fetches DMA buffers through the aperture.
#include <cstring>

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
enum GartReason : std::uint32_t { kInvalidPte = 1, kPrivilege = 4 };

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

/// A buffer of `n` WRITE_DATA packets, each writing one dword, spanning several pages.
Packets writes(std::uint32_t n) {
  Packets p;
  for (std::uint32_t i = 0; i < n; ++i) p.write_data(kDataAddr + 4ull * i, {0x1000u + i});
  return p;
}

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
  const Packets p = writes(1200);  // 1200 x 16 bytes: five pages
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
  Gart g(h, 16);
  const Packets p = writes(600);  // ~2.3 pages
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
  Gart g(h, 8);
  const Packets p = writes(600);
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
