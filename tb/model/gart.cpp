#include "model/gart.hpp"

#include <cstddef>
#include <sstream>

#include "model/bus.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::model {
namespace {

#define SGPU_GART_REG(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))

void set_lo(std::uint64_t& v, std::uint32_t x) { v = (v & ~std::uint64_t{0xffffffff}) | x; }
void set_hi(std::uint64_t& v, std::uint32_t x) { v = (v & 0xffffffffull) | (std::uint64_t{x} << 32); }

}  // namespace

std::string GartRecord::to_string() const {
  std::ostringstream s;
  s << (valid ? "valid" : "empty") << (more ? " more" : "") << (write ? " write" : " read")
    << (privileged ? " privileged" : "") << " " << regs::to_string(reason) << " client=" << unsigned(client)
    << " addr=0x" << std::hex << addr << " fence=0x" << fence << " context=0x" << context;
  return s.str();
}

Gart::Gart(const AddressMap& map, unsigned sys_addr_bits) : map_(map), sys_addr_bits_(sys_addr_bits) {}

// sgpu_gart's classification, in its order: aperture, memory segment, system physical, else
// out of range. The PTE of an aperture page comes from its line as the walker reads it: the
// line (8 PTEs, fewer at the end of the table) from its start, so a bus error anywhere before
// the PTE's bytes fails it (WALK_ERROR).
Gart::Lookup Gart::lookup(std::uint64_t gpu_addr, const Access& access, const Bus& bus) const {
  const std::uint64_t page = gpu_addr & ~(kPageBytes - 1);
  if (!enable_) return {regs::GartFault::None, page};
  if (in(page, map_.apseg_base, map_.apseg_size)) {
    const std::uint64_t ap_pages = map_.apseg_size >> kPageShift;
    const std::uint64_t size = table_size_ > ap_pages ? ap_pages : table_size_;
    const std::uint64_t idx = (page - map_.apseg_base) >> kPageShift;
    if (idx >= size) return {regs::GartFault::OutOfRange, 0};
    const std::uint64_t line_idx = idx & ~std::uint64_t{kLinePtes - 1};
    const std::uint64_t line_ptes = size - line_idx < kLinePtes ? size - line_idx : kLinePtes;
    const std::uint64_t line = table_base() + 8 * line_idx;
    const Bus::Fetch walk = bus.fetch_physical(line, 8 * line_ptes);
    const std::uint64_t at = 8 * (idx - line_idx);
    if (walk.error != FetchError::Ok && walk.delivered < at + 8) return {regs::GartFault::WalkError, 0};
    const std::uint64_t pte = bus.read_physical64(line + at);
    if ((pte & 1u) == 0) return {regs::GartFault::InvalidPte, 0};
    if (access.write && (pte & 2u) == 0) return {regs::GartFault::WriteProtect, 0};
    return {regs::GartFault::None, pte & ~(kPageBytes - 1)};
  }
  if (in(page, map_.memseg_base, map_.memseg_size)) {
    return {regs::GartFault::None, map_.memseg_bus_base + (page - map_.memseg_base)};
  }
  const bool in_sys = sys_addr_bits_ >= 64 || (page >> sys_addr_bits_) == 0;
  if (in_sys) return {access.privileged ? regs::GartFault::None : regs::GartFault::Privilege, page};
  return {regs::GartFault::OutOfRange, 0};
}

void Gart::record(std::uint64_t gpu_addr, const Access& access, regs::GartFault reason, std::uint64_t fence,
                  std::uint32_t context) {
  if (record_.valid) {
    record_.more = true;
    return;
  }
  record_.valid = true;
  record_.more = false;
  record_.write = access.write;
  record_.privileged = access.privileged;
  record_.reason = reason;
  record_.client = access.client;
  record_.addr = gpu_addr & ~(kPageBytes - 1);
  record_.fence = fence;
  record_.context = context;
}

bool Gart::read(std::uint32_t offset, std::uint32_t& value) const {
  const auto lo = [](std::uint64_t v) { return static_cast<std::uint32_t>(v); };
  const auto hi = [](std::uint64_t v) { return static_cast<std::uint32_t>(v >> 32); };
  switch (offset) {
    case SGPU_GART_REG(GART_CTRL): value = enable_ ? SGPU_REGS__GART_CTRL__ENABLE_bm : 0; return true;
    case SGPU_GART_REG(GART_CAP):
      value = (map_.tlb_entries << SGPU_REGS__GART_CAP__TLB_ENTRIES_bp) |
              (kLinePtes << SGPU_REGS__GART_CAP__PTES_PER_WALK_bp) |
              (sys_addr_bits_ << SGPU_REGS__GART_CAP__SYS_ADDR_BITS_bp);
      return true;
    case SGPU_GART_REG(GART_TABLE_BASE_LO): value = lo(table_base_); return true;
    case SGPU_GART_REG(GART_TABLE_BASE_HI): value = hi(table_base_); return true;
    case SGPU_GART_REG(GART_TABLE_SIZE): value = table_size_; return true;
    case SGPU_GART_REG(GART_INV_FIRST): value = inv_first_; return true;
    case SGPU_GART_REG(GART_INV_COUNT): value = inv_count_; return true;
    case SGPU_GART_REG(GART_CMD): value = 0; return true;  // write-only commands
    case SGPU_GART_REG(GART_STATUS): value = 0; return true;  // untimed: never busy
    case SGPU_GART_REG(GART_FAULT_STATUS):
      value = (record_.valid ? SGPU_REGS__GART_FAULT_STATUS__VALID_bm : 0) |
              (record_.more ? SGPU_REGS__GART_FAULT_STATUS__MORE_FAULTS_bm : 0) |
              (record_.write ? SGPU_REGS__GART_FAULT_STATUS__WRITE_bm : 0) |
              (record_.privileged ? SGPU_REGS__GART_FAULT_STATUS__PRIVILEGED_bm : 0) |
              (static_cast<std::uint32_t>(record_.reason) << SGPU_REGS__GART_FAULT_STATUS__REASON_bp) |
              (static_cast<std::uint32_t>(record_.client) << SGPU_REGS__GART_FAULT_STATUS__CLIENT_bp);
      return true;
    case SGPU_GART_REG(GART_FAULT_ADDR_LO): value = lo(record_.addr); return true;
    case SGPU_GART_REG(GART_FAULT_ADDR_HI): value = hi(record_.addr); return true;
    case SGPU_GART_REG(GART_FAULT_FENCE_LO): value = lo(record_.fence); return true;
    case SGPU_GART_REG(GART_FAULT_FENCE_HI): value = hi(record_.fence); return true;
    case SGPU_GART_REG(GART_FAULT_CONTEXT): value = record_.context; return true;
    // TLB statistics: the model has no TLB and keeps none.
    case SGPU_GART_REG(GART_PERF_LOOKUPS):
    case SGPU_GART_REG(GART_PERF_MISSES):
    case SGPU_GART_REG(GART_PERF_WALKS): value = 0; return true;
    default: return false;
  }
}

bool Gart::write(std::uint32_t offset, std::uint32_t value) {
  switch (offset) {
    case SGPU_GART_REG(GART_CTRL): enable_ = (value & SGPU_REGS__GART_CTRL__ENABLE_bm) != 0; return true;
    case SGPU_GART_REG(GART_TABLE_BASE_LO): set_lo(table_base_, value); return true;
    case SGPU_GART_REG(GART_TABLE_BASE_HI): set_hi(table_base_, value); return true;
    case SGPU_GART_REG(GART_TABLE_SIZE): table_size_ = value; return true;
    case SGPU_GART_REG(GART_INV_FIRST): inv_first_ = value; return true;
    case SGPU_GART_REG(GART_INV_COUNT): inv_count_ = value; return true;
    case SGPU_GART_REG(GART_CMD):
      // Invalidations complete at once: there is no TLB to sweep.
      if (value & SGPU_REGS__GART_CMD__FAULT_CLEAR_bm) clear_record();
      return true;
    // Read-only registers ignore writes, as the generated register block does.
    case SGPU_GART_REG(GART_CAP):
    case SGPU_GART_REG(GART_STATUS):
    case SGPU_GART_REG(GART_FAULT_STATUS):
    case SGPU_GART_REG(GART_FAULT_ADDR_LO):
    case SGPU_GART_REG(GART_FAULT_ADDR_HI):
    case SGPU_GART_REG(GART_FAULT_FENCE_LO):
    case SGPU_GART_REG(GART_FAULT_FENCE_HI):
    case SGPU_GART_REG(GART_FAULT_CONTEXT):
    case SGPU_GART_REG(GART_PERF_LOOKUPS):
    case SGPU_GART_REG(GART_PERF_MISSES):
    case SGPU_GART_REG(GART_PERF_WALKS): return true;
    default: return false;
  }
}

}  // namespace sgpu::model
