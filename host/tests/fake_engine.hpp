// FakeEngine: the device's side of the ring protocol on top of a MockTransport, for the Device
// and scheduler tests. It latches the programmed registers, retires every published entry at
// once (write-back record + DMA_COMPLETED), and can be told to stop on a scripted fault, to leave
// entries for the test to run, or to hang on the entries of some contexts until an engine reset.
// A paging entry's closing FENCE packet is executed (the DeviceExecutor checks what it wrote);
// no other packet is.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <optional>
#include <set>

#include "sgpu/gen/abi.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/transport/mock.hpp"

namespace sgpu::test {

struct FakeEngine {
  static constexpr std::uint32_t kIntDma = SGPU_FIELD(INT_STATUS, DMA_COMPLETED).mask;
  static constexpr std::uint32_t kIntFault = SGPU_FIELD(INT_STATUS, FAULT).mask;

  MockTransport& m;
  std::uint64_t ring = 0, wb = 0;
  std::uint32_t log2 = 0, head = 0, int_status = 0, int_enable = 0;
  bool enabled = false;
  bool retire = true;                         // retire entries as soon as they are published
  std::optional<std::uint32_t> fault_header;  // fault on the next entry with ILLEGAL_OPCODE
  std::set<std::uint32_t> hung;               // contexts whose entries never retire (until a reset)

  /// Plays a healthy idle device (the register map's reset values) unless the test set more.
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
      head = 0;  // drained: whatever was stuck is gone
      m.set_reg(SGPU_REG(STATUS), SGPU_FIELD(STATUS, IDLE).mask);
    }
    if (off == SGPU_REG(RING_TAIL) && retire) run(v);
  }

  abi::RingEntry entry(std::uint32_t index) const {
    abi::RingEntry e;
    std::memcpy(&e, m.dma_cpu(ring + index * sizeof e), sizeof e);
    return e;
  }

  /// Executes entries from the head up to `tail`: each retires, unless a fault is scripted or
  /// its context hangs (the engine then stays on it).
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
      if (hung.count(e.context_id)) return;
      if (e.flags & abi::ring_flags::kPaging) execute_closing_fence(e);
      head = (head + 1) & ((1u << log2) - 1);
      abi::Writeback w{e.fence, head, 0};
      std::memcpy(m.dma_cpu(wb), &w, sizeof w);
      int_status |= kIntDma;
      update_irq();
    }
  }

  /// The last packet of a paging buffer is its FENCE (value64) into the executor's record.
  void execute_closing_fence(const abi::RingEntry& e) {
    const auto* pkt = static_cast<const std::uint32_t*>(m.dma_cpu(e.buf_addr + e.end_offset - 20));
    REQUIRE(abi::header_opcode(pkt[0]) == static_cast<std::uint8_t>(abi::Opcode::Fence));
    namespace f = abi::payload::fence;
    const std::uint64_t addr = pkt[f::kAddrLo] | (std::uint64_t{pkt[f::kAddrHi]} << 32);
    const std::uint64_t value = pkt[f::kValueLo] | (std::uint64_t{pkt[f::kValueHi]} << 32);
    std::memcpy(m.dma_cpu(addr), &value, 8);
  }
};

/// Where a mock device's segments are: the aperture (GART) and the memory segment.
struct MockSegments {
  std::uint64_t aperture_base = 0;
  std::uint64_t aperture_pages = 0;
  std::uint64_t memory_base = 0;
  std::uint64_t memory_bytes = 0;
};

/// The mock device of the scheduler tests: a 4 MiB aperture (1024 GART pages) and a 1 MiB memory
/// segment.
inline constexpr MockSegments kGartDevice{0x0018'0000'0000'0000ull, 1024, 0x0020'0000'0000'0000ull, 1 << 20};

/// Runtime options of the scheduler tests on the mock: a kernel window for `dma_buffers` DMA
/// buffers and a TdrDelay and preemption timeout short enough that a test's hung entry ends in a
/// few waits of the mock's clock (it moves only when the driver waits).
inline sched::RuntimeOptions mock_runtime_options(std::uint32_t dma_buffers) {
  using namespace std::chrono_literals;
  sched::RuntimeOptions o;
  o.kernel_window_pages = sched::kernel_window_pages_for(dma_buffers);
  o.scheduler.tdr_delay = 100us;
  o.scheduler.preempt_timeout = 25us;
  return o;
}

/// Makes the mock report a device with a GART (32 TLB entries, 52-bit system addresses) and a
/// memory segment at `segments`, plus `extra_features` (CAP_FEATURES bits, e.g. preemption).
inline void describe_gart_device(MockTransport& m, const MockSegments& segments, std::uint32_t extra_features = 0) {
  m.set_reg(SGPU_REG(CAP_FEATURES), SGPU_FIELD(CAP_FEATURES, GART).mask |
                                        SGPU_FIELD(CAP_FEATURES, MEMORY_SEGMENT).mask | extra_features);
  m.set_reg(SGPU_REG(CAP_APSEG_BASE_LO), static_cast<std::uint32_t>(segments.aperture_base));
  m.set_reg(SGPU_REG(CAP_APSEG_BASE_HI), static_cast<std::uint32_t>(segments.aperture_base >> 32));
  m.set_reg(SGPU_REG(CAP_APSEG_SIZE_LO), static_cast<std::uint32_t>(segments.aperture_pages * 4096));
  m.set_reg(SGPU_REG(CAP_MEMSEG_BASE_LO), static_cast<std::uint32_t>(segments.memory_base));
  m.set_reg(SGPU_REG(CAP_MEMSEG_BASE_HI), static_cast<std::uint32_t>(segments.memory_base >> 32));
  m.set_reg(SGPU_REG(CAP_MEMSEG_SIZE_LO), static_cast<std::uint32_t>(segments.memory_bytes));
  m.set_reg(SGPU_REG(GART_CAP),
            SGPU_FIELD(GART_CAP, TLB_ENTRIES).put(32) | SGPU_FIELD(GART_CAP, SYS_ADDR_BITS).put(52));
}

}  // namespace sgpu::test
