// The host-memory bus as the front end sees it: a memory image, injected error ranges, and the
// beat granularity of the RTL's AXI port. The reference model reads and writes only through
// this class, so the bus rules the RTL exposes (which bytes of a failed read still reach the
// decoder, what a failed write leaves in memory) live in one place.
#pragma once

#include <cstdint>
#include <set>
#include <vector>

#include "common/host_memory.hpp"
#include "sgpu/gen/abi.hpp"

namespace sgpu::model {

/// Why a fetch ended early, as the fetch engine reports it: the fetch error codes of
/// spec/abi.toml (they appear in FAULT_DETAIL).
using FetchError = abi::FetchError;

/// AXI response codes (as on the wires).
inline constexpr std::uint8_t kRespOkay = 0;
inline constexpr std::uint8_t kRespSlvErr = 2;
inline constexpr std::uint8_t kRespDecErr = 3;

class Bus {
 public:
  /// `bus_bytes`: data width of the host-memory port (CAP_BUS.data_bytes).
  Bus(tb::HostMemory& memory, unsigned bus_bytes);

  /// Reads and writes touching [lo, hi) get `resp` (SLVERR or DECERR), exactly like
  /// tb::AxiMemoryModel::inject_error; failed writes change nothing.
  void inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp);
  void clear_errors() { errors_.clear(); }

  /// What the fetch engine delivers for a request of [addr, addr + len): `delivered` bytes
  /// (a prefix of the request), then `error` (Ok when everything arrived).
  struct Fetch {
    std::uint64_t delivered = 0;
    FetchError error = FetchError::Ok;
  };
  Fetch fetch(std::uint64_t addr, std::uint64_t len) const;

  /// One request of the write master: the 64-bit word at addr & ~7 with byte strobes. Returns
  /// the AXI response. `uncertain`: the RTL may or may not perform this write (it follows a
  /// failed write that the engine has not noticed yet); the bytes are written and remembered
  /// as timing-dependent.
  std::uint8_t write64(std::uint64_t addr, std::uint64_t data, std::uint8_t strb, bool uncertain);

  /// What the copy engine (sgpu_copy) does with one request of `height` rows of `width` bytes
  /// (row r: src + r * src_pitch -> dst + r * dst_pitch): a copy reads the source rows through
  /// its own fetch engine, a fill reads nothing; both write each row in bursts of at most
  /// `max_burst_beats` beats that never cross 4 KiB. See docs/reference-model.md.
  struct CopyOutcome {
    enum class Error : std::uint8_t { None, Read, Write } error = Error::None;
    std::uint64_t addr = 0;        ///< Read: first source byte not copied; Write: failing burst's address
    FetchError read_error = FetchError::Ok;
    bool ambiguous = false;        ///< both sides fail: which one the RTL reports depends on timing
  };
  CopyOutcome copy(bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                   std::uint32_t src_pitch, std::uint32_t dst_pitch, std::uint32_t pattern, unsigned max_burst_beats);

  tb::HostMemory& memory() { return memory_; }
  const tb::HostMemory& memory() const { return memory_; }
  unsigned bus_bytes() const { return bus_bytes_; }

  /// Byte addresses whose final content depends on timing (see write64).
  const std::set<std::uint64_t>& uncertain_bytes() const { return uncertain_; }

 private:
  struct ErrorRange {
    std::uint64_t lo;
    std::uint64_t hi;
    std::uint8_t resp;
  };
  std::uint8_t error_for(std::uint64_t lo, std::uint64_t hi) const;
  void write_byte(std::uint64_t addr, std::uint8_t value, bool uncertain);

  tb::HostMemory& memory_;
  unsigned bus_bytes_;
  std::vector<ErrorRange> errors_;
  std::set<std::uint64_t> uncertain_;
};

}  // namespace sgpu::model
