// Register access helpers built on the generated headers (sgpu/gen/sgpu_regs.h from PeakRDL,
// sgpu/gen/sgpu_reg_enums.hpp with the fields' enumerations, e.g. regs::GartFault).
//
// Offsets come from the generated layout struct, fields from the generated _bm/_bp/_bw macros:
// nothing here restates a number from spec/registers.rdl.
//
//   transport.write32(SGPU_REG(RING_TAIL), tail);
//   bool faulted = SGPU_FIELD(STATUS, FAULTED).get(transport.read32(SGPU_REG(STATUS)));
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "sgpu/gen/sgpu_reg_enums.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::regs {

/// One register field: where it sits in its 32-bit register.
struct Field {
  std::uint32_t mask;   ///< bits of the field within the register
  unsigned lsb;         ///< position of bit 0 of the field
  unsigned width;       ///< width in bits

  /// The field's value in a register value.
  constexpr std::uint32_t get(std::uint32_t reg) const { return (reg & mask) >> lsb; }
  /// A register value with only this field set to `value` (truncated to the field).
  constexpr std::uint32_t put(std::uint32_t value) const { return (value << lsb) & mask; }
  /// `reg` with this field replaced by `value`.
  constexpr std::uint32_t set(std::uint32_t reg, std::uint32_t value) const {
    return (reg & ~mask) | put(value);
  }
  /// True if `value` fits in the field.
  constexpr bool fits(std::uint64_t value) const { return width >= 64 || (value >> width) == 0; }
};

/// One field of the register map with its reset value, if the map defines one.
struct FieldInfo {
  std::string_view reg;      ///< register name, e.g. "RING_TAIL"
  std::string_view field;    ///< field name, e.g. "INDEX"
  std::uint32_t offset;      ///< register byte offset in BAR0
  Field bits;
  std::optional<std::uint32_t> reset;  ///< reset value of the field (not shifted)
};

/// Every field of the register map in address order, from a table `make gen` generates with the
/// header (so a new field in spec/registers.rdl appears here without code changes).
const std::vector<FieldInfo>& all_fields();

/// Name of the register at `offset`, or "" if none.
std::string_view register_name(std::uint32_t offset);

}  // namespace sgpu::regs

/// Byte offset of register NAME in BAR0, from the generated layout struct.
#define SGPU_REG(NAME) (static_cast<std::uint32_t>(offsetof(sgpu_regs_t, NAME)))

/// The Field REG.FIELD from the generated macros, e.g. SGPU_FIELD(STATUS, FAULTED).
#define SGPU_FIELD(REG, FIELD)                                                             \
  (::sgpu::regs::Field{static_cast<std::uint32_t>(SGPU_REGS__##REG##__##FIELD##_bm),        \
                       static_cast<unsigned>(SGPU_REGS__##REG##__##FIELD##_bp),             \
                       static_cast<unsigned>(SGPU_REGS__##REG##__##FIELD##_bw)})
