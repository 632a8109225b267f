#include "model/model.hpp"

#include <cstddef>
#include <sstream>
#include <stdexcept>

#include "model/exec.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::model {
namespace {

#define SGPU_MODEL_REG(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))

constexpr std::uint32_t kIntStatusMask =
    SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm | SGPU_REGS__INT_STATUS__FAULT_bm |
    SGPU_REGS__INT_STATUS__PREEMPTED_bm | SGPU_REGS__INT_STATUS__GART_FAULT_bm;
constexpr std::uint32_t kIntEnableMask =
    SGPU_REGS__INT_ENABLE__DMA_COMPLETED_bm | SGPU_REGS__INT_ENABLE__FAULT_bm |
    SGPU_REGS__INT_ENABLE__PREEMPTED_bm | SGPU_REGS__INT_ENABLE__GART_FAULT_bm;

std::uint32_t lo32(std::uint64_t v) { return static_cast<std::uint32_t>(v); }
std::uint32_t hi32(std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); }
void set_lo(std::uint64_t& v, std::uint32_t x) { v = (v & ~std::uint64_t{0xffffffff}) | x; }
void set_hi(std::uint64_t& v, std::uint32_t x) { v = (v & 0xffffffffull) | (std::uint64_t{x} << 32); }

/// Registers that exist but that the model does not implement (they read 0): the build ID and
/// the cycle counter (the model is untimed).
bool is_unmodelled_register(std::uint32_t offset) {
  return offset == SGPU_MODEL_REG(ID_BUILD) || offset == SGPU_MODEL_REG(CYCLE_LO) ||
         offset == SGPU_MODEL_REG(CYCLE_HI);
}

}  // namespace

std::string FaultRecord::to_string() const {
  std::ostringstream s;
  s << abi::to_string(reason) << " ring_index=" << ring_index << " addr=0x" << std::hex << addr
    << " fence=0x" << fence << " detail=0x" << detail;
  return s.str();
}

Model::Model(tb::HostMemory& memory, Config config)
    : config_(config), gart_(config.map, config.sys_addr_bits), bus_(memory, config.bus_bytes, &gart_) {}

Model::Model(Port& port, Config config)
    : config_(config), gart_(config.map, config.sys_addr_bits), bus_(port, config.bus_bytes, &gart_) {}

std::uint32_t Model::ring_mask() const {
  const std::uint32_t log2 = ring_log2_ > config_.max_ring_log2 ? config_.max_ring_log2 : ring_log2_;
  return static_cast<std::uint32_t>((std::uint64_t{1} << log2) - 1);
}

std::uint32_t Model::mmio_read32(std::uint32_t offset) const {
  switch (offset) {
    case SGPU_MODEL_REG(ID_MAGIC): return SGPU_REGS__ID_MAGIC__VALUE_reset;
    // Capabilities of the device the model mirrors, so a driver can open it (the model
    // transport of libsgpu): GART and memory segment as configured, copy engine, preemption.
    case SGPU_MODEL_REG(CAP_BUS):
      return (config_.bus_bytes << SGPU_REGS__CAP_BUS__DATA_BYTES_bp) |
             (64u << SGPU_REGS__CAP_BUS__ADDR_BITS_bp) |
             ((config_.max_burst_beats - 1) << SGPU_REGS__CAP_BUS__MAX_BURST_M1_bp);
    case SGPU_MODEL_REG(CAP_MEM):
      return (config_.page_shift << SGPU_REGS__CAP_MEM__PAGE_SHIFT_bp) |
             (config_.max_ring_log2 << SGPU_REGS__CAP_MEM__MAX_RING_LOG2_bp) |
             (config_.max_indirect_depth << SGPU_REGS__CAP_MEM__MAX_INDIRECT_DEPTH_bp);
    case SGPU_MODEL_REG(CAP_FEATURES):
      return SGPU_REGS__CAP_FEATURES__COPY_ENGINE_bm | SGPU_REGS__CAP_FEATURES__PREEMPTION_bm |
             (config_.map.gart ? SGPU_REGS__CAP_FEATURES__GART_bm : 0) |
             (config_.map.memseg_size != 0 ? SGPU_REGS__CAP_FEATURES__MEMORY_SEGMENT_bm : 0);
    case SGPU_MODEL_REG(CAP_MEMSEG_BASE_LO): return config_.map.memseg_size ? lo32(config_.map.memseg_base) : 0;
    case SGPU_MODEL_REG(CAP_MEMSEG_BASE_HI): return config_.map.memseg_size ? hi32(config_.map.memseg_base) : 0;
    case SGPU_MODEL_REG(CAP_MEMSEG_SIZE_LO): return lo32(config_.map.memseg_size);
    case SGPU_MODEL_REG(CAP_MEMSEG_SIZE_HI): return hi32(config_.map.memseg_size);
    case SGPU_MODEL_REG(CAP_APSEG_BASE_LO): return config_.map.gart ? lo32(config_.map.apseg_base) : 0;
    case SGPU_MODEL_REG(CAP_APSEG_BASE_HI): return config_.map.gart ? hi32(config_.map.apseg_base) : 0;
    case SGPU_MODEL_REG(CAP_APSEG_SIZE_LO): return config_.map.gart ? lo32(config_.map.apseg_size) : 0;
    case SGPU_MODEL_REG(CAP_APSEG_SIZE_HI): return config_.map.gart ? hi32(config_.map.apseg_size) : 0;
    case SGPU_MODEL_REG(ID_VERSION):
      return (SGPU_REGS__ID_VERSION__MAJOR_reset << SGPU_REGS__ID_VERSION__MAJOR_bp) |
             (SGPU_REGS__ID_VERSION__MINOR_reset << SGPU_REGS__ID_VERSION__MINOR_bp);
    case SGPU_MODEL_REG(CTRL): return enable_ ? SGPU_REGS__CTRL__ENABLE_bm : 0;
    case SGPU_MODEL_REG(RESET): return 0;  // write-only
    case SGPU_MODEL_REG(STATUS):
      // Untimed: between calls the model is always idle and never resetting.
      return (hung_ ? 0 : SGPU_REGS__STATUS__IDLE_bm) | (faulted_ ? SGPU_REGS__STATUS__FAULTED_bm : 0);
    case SGPU_MODEL_REG(CP_WATCHDOG): return watchdog_;
    case SGPU_MODEL_REG(PREEMPT): return 0;  // write-only
    case SGPU_MODEL_REG(PREEMPT_FENCE_LO): return lo32(preempt_fence_);
    case SGPU_MODEL_REG(PREEMPT_FENCE_HI): return hi32(preempt_fence_);
    case SGPU_MODEL_REG(PREEMPT_ADDR_LO): return lo32(preempt_addr_);
    case SGPU_MODEL_REG(PREEMPT_ADDR_HI): return hi32(preempt_addr_);
    case SGPU_MODEL_REG(PREEMPT_STATUS):
      return (preempt_pending_ ? SGPU_REGS__PREEMPT_STATUS__PENDING_bm : 0) |
             (preempted_ ? SGPU_REGS__PREEMPT_STATUS__PREEMPTED_bm : 0);
    case SGPU_MODEL_REG(PREEMPT_OFFSET): return 0;  // never stopped inside an entry
    case SGPU_MODEL_REG(RING_BASE_LO): return lo32(ring_base_);
    case SGPU_MODEL_REG(RING_BASE_HI): return hi32(ring_base_);
    case SGPU_MODEL_REG(RING_SIZE): return ring_log2_;
    case SGPU_MODEL_REG(RING_TAIL): return ring_tail_;
    case SGPU_MODEL_REG(RING_HEAD): return head_;
    case SGPU_MODEL_REG(WB_ADDR_LO): return lo32(wb_addr_);
    case SGPU_MODEL_REG(WB_ADDR_HI): return hi32(wb_addr_);
    case SGPU_MODEL_REG(FENCE_DONE_LO): return lo32(fence_done_);
    case SGPU_MODEL_REG(FENCE_DONE_HI): return hi32(fence_done_);
    case SGPU_MODEL_REG(INT_STATUS): return int_status_;
    case SGPU_MODEL_REG(INT_ENABLE): return int_enable_;
    case SGPU_MODEL_REG(FAULT_STATUS):
      return (static_cast<std::uint32_t>(fault_.reason) << SGPU_REGS__FAULT_STATUS__REASON_bp) |
             ((fault_.ring_index << SGPU_REGS__FAULT_STATUS__RING_INDEX_bp) & SGPU_REGS__FAULT_STATUS__RING_INDEX_bm);
    case SGPU_MODEL_REG(FAULT_ADDR_LO): return lo32(fault_.addr);
    case SGPU_MODEL_REG(FAULT_ADDR_HI): return hi32(fault_.addr);
    case SGPU_MODEL_REG(FAULT_FENCE_LO): return lo32(fault_.fence);
    case SGPU_MODEL_REG(FAULT_FENCE_HI): return hi32(fault_.fence);
    case SGPU_MODEL_REG(FAULT_DETAIL): return fault_.detail;
    default: break;
  }
  if (std::uint32_t v = 0; config_.map.gart && gart_.read(offset, v)) return v;
  if (is_unmodelled_register(offset)) return 0;
  throw std::out_of_range("model: no register at BAR0 offset " + std::to_string(offset));
}

void Model::mmio_write32(std::uint32_t offset, std::uint32_t value) {
  switch (offset) {
    case SGPU_MODEL_REG(CTRL): enable_ = (value & SGPU_REGS__CTRL__ENABLE_bm) != 0; return;
    case SGPU_MODEL_REG(RESET):
      if (value & SGPU_REGS__RESET__ENGINE_bm) reset_engine();
      return;
    case SGPU_MODEL_REG(RING_BASE_LO): set_lo(ring_base_, value); return;
    case SGPU_MODEL_REG(RING_BASE_HI): set_hi(ring_base_, value); return;
    case SGPU_MODEL_REG(RING_SIZE): ring_log2_ = value & SGPU_REGS__RING_SIZE__LOG2_ENTRIES_bm; return;
    case SGPU_MODEL_REG(RING_TAIL): ring_tail_ = value; return;
    case SGPU_MODEL_REG(WB_ADDR_LO): set_lo(wb_addr_, value); return;
    case SGPU_MODEL_REG(WB_ADDR_HI): set_hi(wb_addr_, value); return;
    case SGPU_MODEL_REG(INT_STATUS): int_status_ &= ~(value & kIntStatusMask); return;  // W1C
    case SGPU_MODEL_REG(INT_ENABLE): int_enable_ = value & kIntEnableMask; return;
    case SGPU_MODEL_REG(CP_WATCHDOG): watchdog_ = value; return;
    case SGPU_MODEL_REG(PREEMPT):
      if (value & SGPU_REGS__PREEMPT__REQUEST_bm) preempt();
      if ((value & SGPU_REGS__PREEMPT__RESUME_bm) && preempted_) {
        preempted_ = false;
        // A request that came while preempted waited: the engine stops again at once.
        if (preempt_pending_) {
          preempt_pending_ = false;
          preempt();
        }
      }
      return;
    case SGPU_MODEL_REG(PREEMPT_FENCE_LO): set_lo(preempt_fence_, value); return;
    case SGPU_MODEL_REG(PREEMPT_FENCE_HI): set_hi(preempt_fence_, value); return;
    case SGPU_MODEL_REG(PREEMPT_ADDR_LO): set_lo(preempt_addr_, value); return;
    case SGPU_MODEL_REG(PREEMPT_ADDR_HI): set_hi(preempt_addr_, value); return;
    case SGPU_MODEL_REG(PREEMPT_STATUS):
    case SGPU_MODEL_REG(PREEMPT_OFFSET): return;
    // Read-only registers ignore writes, as the generated register block does.
    case SGPU_MODEL_REG(ID_MAGIC):
    case SGPU_MODEL_REG(ID_VERSION):
    case SGPU_MODEL_REG(STATUS):
    case SGPU_MODEL_REG(RING_HEAD):
    case SGPU_MODEL_REG(FENCE_DONE_LO):
    case SGPU_MODEL_REG(FENCE_DONE_HI):
    case SGPU_MODEL_REG(FAULT_STATUS):
    case SGPU_MODEL_REG(FAULT_ADDR_LO):
    case SGPU_MODEL_REG(FAULT_ADDR_HI):
    case SGPU_MODEL_REG(FAULT_FENCE_LO):
    case SGPU_MODEL_REG(FAULT_FENCE_HI):
    case SGPU_MODEL_REG(FAULT_DETAIL): return;
    default: break;
  }
  if (config_.map.gart && gart_.write(offset, value)) return;
  if (is_unmodelled_register(offset)) return;
  throw std::out_of_range("model: no register at BAR0 offset " + std::to_string(offset));
}

// The engine reset drains (nothing is in flight in an untimed model), clears the head and the
// fault records (the CP's and the GART's), and keeps FENCE_DONE, INT_STATUS and every software-written register.
void Model::reset_engine() {
  gart_.clear_record();
  head_ = 0;
  faulted_ = false;
  hung_ = false;
  preempt_pending_ = false;
  preempted_ = false;
  fault_ = FaultRecord{};
}

void Model::raise_fault(const FaultRecord& record) {
  fault_ = record;
  faulted_ = true;
  int_status_ |= SGPU_REGS__INT_STATUS__FAULT_bm;
  ++stats_.faults;
  ++stats_.faults_by_reason[static_cast<std::uint8_t>(record.reason)];
}

// Untimed: a request always arrives between entries, so the preemption completes at once (no
// entry is stopped inside); a faulted or hung engine keeps it pending until the engine reset.
void Model::preempt() {
  if (faulted_ || hung_) {
    preempt_pending_ = true;
    return;
  }
  if (preempted_) {
    preempt_pending_ = true;  // taken after the resume
    return;
  }
  // The record is written with privilege (the kernel's memory); a refused write faults like the
  // write-back record's (FAULT_DETAIL 0) and the engine does not stop preempted.
  const Access kernel{Client::CpWrite, true, true};
  for (const auto& [addr, value] : {std::pair{preempt_addr_, preempt_fence_}, std::pair{preempt_addr_ + 8, fence_done_}}) {
    const Bus::Write w = bus_.write64(addr, value, 0xff, false, kernel);
    if (w.refusal == regs::GartFault::None) continue;
    gart_.record(addr, kernel, w.refusal, last_fence_, last_context_);
    int_status_ |= SGPU_REGS__INT_STATUS__GART_FAULT_bm;
    raise_fault(FaultRecord{abi::Fault::Translation, head_ & 0xffffffu, addr & ~std::uint64_t{7}, last_fence_, 0});
    return;
  }
  preempted_ = true;
  int_status_ |= SGPU_REGS__INT_STATUS__PREEMPTED_bm;
}

void Model::run_until_idle() {
  while (enable_ && !faulted_ && !hung_ && !preempted_ && (head_ & ring_mask()) != (ring_tail_ & ring_mask())) execute_entry();
}

void Model::execute_entry() {
  ++stats_.entries;
  const std::uint64_t entry_addr = ring_base_ + (std::uint64_t{head_ & ring_mask()} << 5);
  // The ring is the kernel's: read with privilege; the GART records no submission for it.
  const Access ring{Client::Fetch, false, true};
  const Bus::Fetch f = bus_.fetch(entry_addr, sizeof(abi::RingEntry), ring);
  if (f.error == FetchError::XlateFault) {
    gart_.record(f.refused_page, ring, f.refusal, 0, 0);
    int_status_ |= SGPU_REGS__INT_STATUS__GART_FAULT_bm;
  }
  if (f.error != FetchError::Ok) {
    // The entry could not be read: no fence is known yet.
    FaultRecord r;
    r.reason = f.error == FetchError::XlateFault ? abi::Fault::Translation : abi::Fault::BusError;
    r.ring_index = head_ & 0xffffffu;
    r.addr = entry_addr;
    r.fence = 0;
    r.detail = static_cast<std::uint32_t>(f.error);
    raise_fault(r);
    return;
  }
  abi::RingEntry e{};
  bus_.read_physical(bus_.bus_addr(entry_addr, ring), &e, sizeof e);  // 32-byte aligned: one page
  if ((e.buf_addr & 3) != 0 || (e.start_offset & 3) != 0 || (e.end_offset & 3) != 0 ||
      e.start_offset > e.end_offset || (e.flags & ~abi::ring_flags::kDefined) != 0) {
    FaultRecord r;
    r.reason = abi::Fault::BadRingEntry;
    r.ring_index = head_ & 0xffffffu;
    r.addr = entry_addr;
    r.fence = e.fence;
    r.detail = e.flags;
    raise_fault(r);
    return;
  }
  last_fence_ = e.fence;
  last_context_ = e.context_id;
  Exec(*this, e).run();
}

}  // namespace sgpu::model
