// The GART in the reference model: the GPU address map, the page-table walk through host memory
// and the fault record, as sgpu_gart answers them (docs/gart.md). Untimed and without a TLB:
// every translation reads its PTE from memory, which is what the RTL's TLB returns as long as
// the driver invalidates after every change of the table (the invalidation contract).
#pragma once

#include <cstdint>
#include <string>

#include "sgpu/gen/sgpu_reg_enums.hpp"

namespace sgpu::model {

class Bus;

/// Who asks for a translation (sgpu_gart_pkg::Client*; GART_FAULT_STATUS.client).
enum class Client : std::uint8_t { Fetch = 0, CpWrite = 1, CopyRead = 2, CopyWrite = 3 };

/// One access as the GART sees it: its client, direction and privilege (system-physical
/// addresses are allowed only with privilege).
struct Access {
  Client client = Client::Fetch;
  bool write = false;
  bool privileged = false;
};

/// The GPU address map of the device being mirrored (sgpu_top's parameters; CAP_MEMSEG_*,
/// CAP_APSEG_*, GART_CAP).
struct AddressMap {
  bool gart = true;                                     ///< CAP_FEATURES.gart
  std::uint64_t memseg_base = 0x0010'0000'0000'0000ull;  ///< 0 size: no memory segment
  std::uint64_t memseg_size = 0x0000'0000'1000'0000ull;
  std::uint64_t memseg_bus_base = 0x0000'8000'0000'0000ull;
  std::uint64_t apseg_base = 0x0018'0000'0000'0000ull;
  std::uint64_t apseg_size = 0x0000'0000'1000'0000ull;
  unsigned tlb_entries = 32;  ///< reported in GART_CAP only
};

/// GART_FAULT_* as one value.
struct GartRecord {
  bool valid = false;
  bool more = false;
  bool write = false;
  bool privileged = false;
  regs::GartFault reason = regs::GartFault::None;
  Client client = Client::Fetch;
  std::uint64_t addr = 0;  ///< GPU address of the page
  std::uint64_t fence = 0;
  std::uint32_t context = 0;

  bool operator==(const GartRecord& o) const {
    return valid == o.valid && more == o.more && write == o.write && privileged == o.privileged &&
           reason == o.reason && client == o.client && addr == o.addr && fence == o.fence && context == o.context;
  }
  bool operator!=(const GartRecord& o) const { return !(*this == o); }
  std::string to_string() const;
};

class Gart {
 public:
  static constexpr unsigned kPageShift = 12;
  static constexpr std::uint64_t kPageBytes = std::uint64_t{1} << kPageShift;
  static constexpr unsigned kLinePtes = 8;  ///< GART_CAP.ptes_per_walk

  /// `sys_addr_bits`: GART_CAP.sys_addr_bits.
  Gart(const AddressMap& map, unsigned sys_addr_bits);

  /// The answer for the page holding `gpu_addr`: its bus page, or the reason it is refused.
  struct Lookup {
    regs::GartFault fault = regs::GartFault::None;
    std::uint64_t bus_page = 0;
    bool ok() const { return fault == regs::GartFault::None; }
  };
  /// Translates as sgpu_gart classifies: identity while disabled; aperture pages through the
  /// PTE read from `bus` (a failed line read is WALK_ERROR); the memory segment linearly;
  /// system-physical addresses with privilege only; anything else OUT_OF_RANGE.
  Lookup lookup(std::uint64_t gpu_addr, const Access& access, const Bus& bus) const;

  /// Records a refused translation (the first since the last clear; later ones set `more`)
  /// with the submission being executed.
  void record(std::uint64_t gpu_addr, const Access& access, regs::GartFault reason, std::uint64_t fence,
              std::uint32_t context);
  /// GART_CMD.fault_clear and the engine reset.
  void clear_record() {
    record_.valid = false;
    record_.more = false;
  }

  /// Register block at 0x200 (GART_*); `offset` is the BAR0 offset. False if no GART register
  /// lives there.
  bool read(std::uint32_t offset, std::uint32_t& value) const;
  bool write(std::uint32_t offset, std::uint32_t value);

  bool enabled() const { return enable_; }
  std::uint64_t table_base() const { return table_base_ & ~(kPageBytes - 1); }
  std::uint32_t table_size() const { return table_size_; }
  const GartRecord& record() const { return record_; }
  const AddressMap& map() const { return map_; }
  unsigned sys_addr_bits() const { return sys_addr_bits_; }

 private:
  bool in(std::uint64_t addr, std::uint64_t base, std::uint64_t size) const {
    return size != 0 && addr >= base && addr - base < size;
  }

  AddressMap map_;
  unsigned sys_addr_bits_;
  bool enable_ = false;
  std::uint64_t table_base_ = 0;
  std::uint32_t table_size_ = 0;
  std::uint32_t inv_first_ = 0;
  std::uint32_t inv_count_ = 0;
  GartRecord record_;
};

}  // namespace sgpu::model
