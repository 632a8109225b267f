// Device on the mock transport: exact MMIO sequences, ID checks, validation without side
// effects, fences, faults and reset. A small fake (FakeEngine) plays the device's part of the
// ring protocol through the mock's hooks.
#include <catch2/catch.hpp>

#include <cstring>

#include "sgpu/device.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/transport/mock.hpp"

using namespace sgpu;
using namespace std::chrono_literals;
using Access = MockTransport::Access;

namespace {

constexpr std::uint32_t kIntDma = SGPU_FIELD(INT_STATUS, DMA_COMPLETED).mask;
constexpr std::uint32_t kIntFault = SGPU_FIELD(INT_STATUS, FAULT).mask;

// Emulates the device side of the ring on top of a MockTransport: remembers the programmed
// registers, retires every published entry at once (write-back record + dma_completed), or stops
// on a scripted fault.
struct FakeEngine {
  MockTransport& m;
  std::uint64_t ring = 0, wb = 0;
  std::uint32_t log2 = 0, head = 0, int_status = 0, int_enable = 0;
  bool enabled = false;
  bool retire = true;                // retire entries as soon as they are published
  std::optional<std::uint32_t> fault_header;  // fault on the next entry with ILLEGAL_OPCODE

  explicit FakeEngine(MockTransport& mock) : m(mock) {
    m.load_reset_values();
    m.on_write = [this](std::uint32_t off, std::uint32_t v) { write(off, v); };
  }

  void lo(std::uint64_t& r, std::uint32_t v) { r = (r & ~0xffffffffull) | v; }
  void hi(std::uint64_t& r, std::uint32_t v) { r = (r & 0xffffffffull) | (std::uint64_t{v} << 32); }
  void update_irq() {
    m.set_reg(SGPU_REG(INT_STATUS), int_status);
    m.set_irq((int_status & int_enable) != 0);
  }

  void write(std::uint32_t off, std::uint32_t v) {
    if (off == SGPU_REG(RING_BASE_LO)) lo(ring, v);
    if (off == SGPU_REG(RING_BASE_HI)) hi(ring, v);
    if (off == SGPU_REG(WB_ADDR_LO)) lo(wb, v);
    if (off == SGPU_REG(WB_ADDR_HI)) hi(wb, v);
    if (off == SGPU_REG(RING_SIZE)) log2 = v;
    if (off == SGPU_REG(CTRL)) enabled = v & 1;
    if (off == SGPU_REG(INT_ENABLE)) int_enable = v, update_irq();
    if (off == SGPU_REG(INT_STATUS)) int_status &= ~v, update_irq();
    if (off == SGPU_REG(RESET) && (v & 1)) {
      head = 0;
      m.set_reg(SGPU_REG(STATUS), SGPU_FIELD(STATUS, IDLE).mask);
    }
    if (off == SGPU_REG(RING_TAIL) && retire) run(v);
  }

  abi::RingEntry entry(std::uint32_t index) {
    abi::RingEntry e;
    std::memcpy(&e, m.dma_cpu(ring + index * sizeof e), sizeof e);
    return e;
  }

  void run(std::uint32_t tail) {
    while (head != tail) {
      const auto e = entry(head);
      if (fault_header) {
        m.set_reg(SGPU_REG(STATUS), SGPU_FIELD(STATUS, FAULTED).mask | SGPU_FIELD(STATUS, IDLE).mask);
        m.set_reg(SGPU_REG(FAULT_STATUS), SGPU_FIELD(FAULT_STATUS, REASON).put(1) |
                                              SGPU_FIELD(FAULT_STATUS, RING_INDEX).put(head));
        m.set_reg(SGPU_REG(FAULT_ADDR_LO), static_cast<std::uint32_t>(e.buf_addr + e.start_offset));
        m.set_reg(SGPU_REG(FAULT_ADDR_HI), static_cast<std::uint32_t>((e.buf_addr + e.start_offset) >> 32));
        m.set_reg(SGPU_REG(FAULT_FENCE_LO), static_cast<std::uint32_t>(e.fence));
        m.set_reg(SGPU_REG(FAULT_DETAIL), *fault_header);
        int_status |= kIntFault;
        update_irq();
        return;
      }
      head = (head + 1) & ((1u << log2) - 1);
      abi::Writeback w{e.fence, head, 0};
      std::memcpy(m.dma_cpu(wb), &w, sizeof w);
      int_status |= kIntDma;
      update_irq();
    }
  }
};

struct Fixture {
  MockTransport* mock;
  std::unique_ptr<FakeEngine> engine;
  std::optional<Device> device;
  DmaMemory buffer;

  explicit Fixture(DeviceOptions options = {}) {
    auto t = std::make_unique<MockTransport>();
    mock = t.get();
    engine = std::make_unique<FakeEngine>(*mock);
    auto d = Device::open(std::move(t), options);
    REQUIRE(d);
    device.emplace(std::move(*d));
    auto b = mock->alloc_dma(4096);
    REQUIRE(b);
    buffer = std::move(*b);
    mock->clear_log();
  }
  Submission sub(std::uint32_t start = 0, std::uint32_t end = 64) { return {&buffer, start, end, 0, 0}; }
};

std::unique_ptr<MockTransport> healthy_mock() {
  auto m = std::make_unique<MockTransport>();
  m->load_reset_values();
  return m;
}

}  // namespace

TEST_CASE("open: exact MMIO sequence of identification, reset and ring set-up", "[device]") {
  auto t = healthy_mock();
  MockTransport* m = t.get();
  DeviceOptions opt;
  opt.ring_log2_entries = 4;
  auto dev = Device::open(std::move(t), opt);
  REQUIRE(dev);

  // The ring and the write-back record share the first DMA allocation: entries, then the record.
  const std::uint64_t ring = std::uint64_t{1} << 32;
  const std::uint64_t wb = ring + 16 * sizeof(abi::RingEntry);
  const std::uint32_t idle = SGPU_FIELD(STATUS, IDLE).mask;
  const std::uint32_t ver = SGPU_FIELD(ID_VERSION, MAJOR).put(SGPU_REGS__ID_VERSION__MAJOR_reset);
  const std::uint32_t bus = m->read32(SGPU_REG(CAP_BUS));
  const std::uint32_t mem = m->read32(SGPU_REG(CAP_MEM));
  m->clear_log();  // (the two reads above are the test's own)
  (void)bus;
  (void)mem;

  auto R = MockTransport::read;
  auto W = MockTransport::write;
  const std::vector<Access> expected_reads_prefix{
      R(SGPU_REG(ID_MAGIC), SGPU_REGS__ID_MAGIC__VALUE_reset),
      R(SGPU_REG(ID_VERSION), ver),
  };
  (void)expected_reads_prefix;

  // Replay on a fresh mock so the log starts at open().
  auto t2 = healthy_mock();
  m = t2.get();
  auto dev2 = Device::open(std::move(t2), opt);
  REQUIRE(dev2);
  const std::vector<Access> expected{
      R(SGPU_REG(ID_MAGIC), SGPU_REGS__ID_MAGIC__VALUE_reset),
      R(SGPU_REG(ID_VERSION), ver),
      R(SGPU_REG(ID_BUILD), 0),
      R(SGPU_REG(CAP_BUS), bus),
      R(SGPU_REG(CAP_MEM), mem),
      R(SGPU_REG(CAP_FEATURES), 0),
      R(SGPU_REG(CAP_MEMSEG_BASE_LO), 0),
      R(SGPU_REG(CAP_MEMSEG_BASE_HI), 0),
      R(SGPU_REG(CAP_MEMSEG_SIZE_LO), 0),
      R(SGPU_REG(CAP_MEMSEG_SIZE_HI), 0),
      R(SGPU_REG(CAP_APSEG_BASE_LO), 0),
      R(SGPU_REG(CAP_APSEG_BASE_HI), 0),
      R(SGPU_REG(CAP_APSEG_SIZE_LO), 0),
      R(SGPU_REG(CAP_APSEG_SIZE_HI), 0),
      W(SGPU_REG(CTRL), 0),
      W(SGPU_REG(RESET), SGPU_FIELD(RESET, ENGINE).put(1)),
      R(SGPU_REG(STATUS), idle),
      W(SGPU_REG(INT_ENABLE), 0),
      W(SGPU_REG(INT_STATUS), kIntDma | kIntFault | SGPU_FIELD(INT_STATUS, PREEMPTED).mask),
      W(SGPU_REG(RING_BASE_LO), static_cast<std::uint32_t>(ring)),
      W(SGPU_REG(RING_BASE_HI), static_cast<std::uint32_t>(ring >> 32)),
      W(SGPU_REG(RING_SIZE), 4),
      W(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(wb)),
      W(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>(wb >> 32)),
      W(SGPU_REG(RING_TAIL), 0),
      W(SGPU_REG(INT_ENABLE), kIntDma | kIntFault),
      W(SGPU_REG(CTRL), SGPU_FIELD(CTRL, ENABLE).put(1)),
  };
  CHECK(m->log() == expected);

  const DeviceInfo& info = dev2->info();
  CHECK(info.magic == SGPU_REGS__ID_MAGIC__VALUE_reset);
  CHECK(info.version_major == SGPU_REGS__ID_VERSION__MAJOR_reset);
  CHECK(info.bus_data_bytes == 8);
  CHECK(info.max_burst == 16);
  CHECK(info.page_size() == 4096);
  CHECK(dev2->ring_entries() == 16);
  CHECK(dev2->completed_fence() == 0);
  CHECK(dev2->last_submitted_fence() == 0);
}

TEST_CASE("open: the ring is clamped to the device's largest ring", "[device]") {
  auto t = healthy_mock();
  t->set_reg(SGPU_REG(CAP_MEM), SGPU_FIELD(CAP_MEM, PAGE_SHIFT).put(12) | SGPU_FIELD(CAP_MEM, MAX_RING_LOG2).put(3));
  auto dev = Device::open(std::move(t));
  REQUIRE(dev);
  CHECK(dev->ring_entries() == 8);
}

TEST_CASE("open: a wrong magic is a DeviceMismatch naming both values, with no writes", "[device]") {
  auto t = healthy_mock();
  t->set_reg(SGPU_REG(ID_MAGIC), 0xdeadbeef);
  MockTransport* m = t.get();
  auto dev = Device::open(std::move(t));
  REQUIRE_FALSE(dev);
  CHECK(dev.error().code == Errc::DeviceMismatch);
  CHECK_THAT(dev.error().message, Catch::Contains("0xdeadbeef") && Catch::Contains("0x53475055"));
  CHECK(dev.error().hardware_touched);  // it read the ID
  (void)m;  // the transport died with the failed open; the next test checks the writes
}

TEST_CASE("open: a wrong major version is a DeviceMismatch naming both values", "[device]") {
  for (std::uint32_t major : {0u, 2u, 0xffffu}) {
    auto t = healthy_mock();
    const std::uint32_t found = SGPU_FIELD(ID_VERSION, MAJOR).put(major) | SGPU_FIELD(ID_VERSION, MINOR).put(7);
    t->set_reg(SGPU_REG(ID_VERSION), found);
    std::vector<Access> writes;
    t->on_write = [&](std::uint32_t o, std::uint32_t v) { writes.push_back(MockTransport::write(o, v)); };
    auto dev = Device::open(std::move(t));
    REQUIRE_FALSE(dev);
    CHECK(dev.error().code == Errc::DeviceMismatch);
    CHECK_THAT(dev.error().message, Catch::Contains(fmt_hex(found)));
    CHECK(writes.empty());
  }
}
