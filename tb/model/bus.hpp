// The host-memory bus as the front end sees it: a memory image, injected error ranges, the beat
// granularity of the RTL's AXI port, and the GART in front of it. The reference model reads and
// writes only through this class, so the bus rules the RTL exposes (which bytes of a failed read
// still reach the decoder, what a failed write leaves in memory, which page translation refused)
// live in one place. Addresses given to it are GPU addresses, translated page by page for the
// Access that names who asks; error ranges, uncertain bytes and the memory image are in bus
// addresses.
#pragma once

#include <cstdint>
#include <cstddef>
#include <memory>
#include <set>
#include <vector>

#include "common/host_memory.hpp"
#include "model/gart.hpp"
#include "sgpu/gen/abi.hpp"

namespace sgpu::model {

/// Why a fetch ended early, as the fetch engine reports it: the fetch error codes of
/// spec/abi.toml (they appear in FAULT_DETAIL).
using FetchError = abi::FetchError;

/// AXI response codes (as on the wires).
inline constexpr std::uint8_t kRespOkay = 0;
inline constexpr std::uint8_t kRespSlvErr = 2;
inline constexpr std::uint8_t kRespDecErr = 3;

/// What the bus reaches: host memory at bus addresses, and the response the bus gives each beat.
/// The model's own is a tb::HostMemory with injected error ranges; a virtual platform's is its
/// DMA socket (tb/systemc).
class Port {
 public:
  virtual ~Port() = default;
  /// The AXI response a read (or write) beat covering [lo, hi) gets; nothing moves.
  virtual std::uint8_t probe(std::uint64_t lo, std::uint64_t hi, bool write) = 0;
  virtual void read(std::uint64_t addr, void* dst, std::size_t n) = 0;
  virtual void write(std::uint64_t addr, const void* src, std::size_t n) = 0;
};

class Bus {
 public:
  /// `bus_bytes`: data width of the host-memory port (CAP_BUS.data_bytes). `gart`: translates
  /// every access (nullptr: GPU addresses are bus addresses); kept by reference.
  Bus(tb::HostMemory& memory, unsigned bus_bytes, const Gart* gart = nullptr);
  /// A bus over someone else's port (kept by reference): no error injection, no memory().
  Bus(Port& port, unsigned bus_bytes, const Gart* gart = nullptr);
  ~Bus();

  /// Reads and writes touching [lo, hi) get `resp` (SLVERR or DECERR), exactly like
  /// tb::AxiMemoryModel::inject_error; failed writes change nothing. Only for a bus over a
  /// tb::HostMemory (std::logic_error otherwise).
  void inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp);
  void clear_errors();

  /// What the fetch engine delivers for a request of [addr, addr + len): `delivered` bytes
  /// (a prefix of the request), then `error` (Ok when everything arrived). A translation refusal
  /// (error Translation) names the refused page and why; the GART has not recorded it yet (the
  /// caller does when the consumer reaches it). `refused_later`: a page after the stop point
  /// (a bus error) would be refused too; the RTL's look-ahead may have asked for it.
  struct Fetch {
    std::uint64_t delivered = 0;
    FetchError error = FetchError::Ok;
    std::uint64_t refused_page = 0;
    regs::GartFault refusal = regs::GartFault::None;
    bool refused_later = false;
  };
  Fetch fetch(std::uint64_t addr, std::uint64_t len, const Access& access) const;
  /// The same at bus addresses, untranslated (the GART's page-table walker).
  Fetch fetch_physical(std::uint64_t addr, std::uint64_t len) const;

  /// The bus address of `gpu_addr` for `access`. Only for bytes a fetch delivered or a write
  /// passed: a refused page throws std::logic_error.
  std::uint64_t bus_addr(std::uint64_t gpu_addr, const Access& access) const;
  /// Memory image reads at GPU addresses (bytes of delivered fetches).
  std::uint32_t read32(std::uint64_t gpu_addr, const Access& access) const;
  /// The bits of the dword at `gpu_addr` that come from uncertain bytes.
  std::uint32_t uncertain32(std::uint64_t gpu_addr, const Access& access) const;

  /// One request of the write master: the 64-bit word at addr & ~7 with byte strobes. Returns
  /// the AXI response, or the GART's refusal (then nothing was written or issued).
  /// `uncertain`: the RTL may or may not perform this write (it follows a failed write that the
  /// engine has not noticed yet); the bytes are written and remembered as timing-dependent.
  struct Write {
    std::uint8_t resp = kRespOkay;
    regs::GartFault refusal = regs::GartFault::None;
  };
  Write write64(std::uint64_t addr, std::uint64_t data, std::uint8_t strb, bool uncertain, const Access& access);

  /// What the copy engine (sgpu_copy) does with one request of `height` rows of `width` bytes
  /// (row r: src + r * src_pitch -> dst + r * dst_pitch): a copy reads the source rows through
  /// its own fetch engine, a fill reads nothing; both write each row in bursts of at most
  /// `max_burst_beats` beats that never cross 4 KiB. See docs/reference-model.md.
  /// Source pages are translated for `read` (the engine's source client), destination pages
  /// for `write`; a refused destination page stops the engine before its first burst: the
  /// bursts before it may or may not have been written (uncertain), nothing from it on is.
  struct CopyOutcome {
    enum class Error : std::uint8_t { None, Read, Write } error = Error::None;
    /// Read: first source byte not copied; Write: failing burst's address, or the first
    /// destination byte of a refused page.
    std::uint64_t addr = 0;
    FetchError read_error = FetchError::Ok;
    /// Translation refused (error Read with read_error Translation, or Write): the page, why,
    /// and for whom (to record in the GART).
    bool translation = false;
    std::uint64_t refused_page = 0;
    regs::GartFault refusal = regs::GartFault::None;
    Access refused_access;
    bool ambiguous = false;        ///< both sides fail: which one the RTL reports depends on timing
  };
  CopyOutcome copy(bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                   std::uint32_t src_pitch, std::uint32_t dst_pitch, std::uint32_t pattern, unsigned max_burst_beats,
                   const Access& read, const Access& write);

  /// The memory image of a bus over a tb::HostMemory (std::logic_error otherwise).
  tb::HostMemory& memory();
  /// Reads at bus addresses, untranslated (the ring entry once translated, the GART's PTEs).
  void read_physical(std::uint64_t addr, void* dst, std::size_t n) const { port_->read(addr, dst, n); }
  std::uint64_t read_physical64(std::uint64_t addr) const;
  unsigned bus_bytes() const { return bus_bytes_; }

  /// Byte addresses whose final content depends on timing (see write64).
  const std::set<std::uint64_t>& uncertain_bytes() const { return uncertain_; }

 private:
  class MemoryPort;
  std::uint8_t error_for(std::uint64_t lo, std::uint64_t hi, bool write) const {
    return port_->probe(lo, hi, write);
  }
  void write_byte(std::uint64_t addr, std::uint8_t value, bool uncertain);
  Gart::Lookup translate(std::uint64_t gpu_addr, const Access& access) const;

  std::unique_ptr<MemoryPort> own_;  ///< the port over a tb::HostMemory, if that is what we have
  Port* port_;
  unsigned bus_bytes_;
  const Gart* gart_;
  std::set<std::uint64_t> uncertain_;
};

}  // namespace sgpu::model
