// Random ring entries and packet streams, valid and invalid, for the differential tests.
// Everything comes from one seed, so a failing run is reproduced by its seed alone.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "model/stream.hpp"
#include "sgpu/gen/abi.hpp"

namespace sgpu::diff {

/// Where things live in the simulated host memory (bus addresses).
struct Layout {
  std::uint64_t ring = 0x1'0000'0000;
  std::uint64_t writeback = 0x1'0001'0000;
  std::uint64_t buffers = 0x1'0010'0000;   ///< pool of buffer slots, reused round-robin
  std::uint64_t buffer_slot_bytes = 0x8000;
  unsigned buffer_slots = 32;
  std::uint64_t data = 0x1'0100'0000;      ///< target of WRITE_DATA and FENCE packets
  std::uint64_t data_bytes = 0x10000;
  std::uint64_t children = 0x1'0040'0000;  ///< pool of INDIRECT target buffers, round-robin
  std::uint64_t child_slot_bytes = 0x4000;
  unsigned child_slots = 128;
  /// Right after the data region, so writes can run from good memory into bad.
  std::uint64_t poison_slverr = 0x1'0101'0000;  ///< 4 KiB answering SLVERR, for the whole run
  std::uint64_t poison_decerr = 0x1'0101'1000;  ///< 4 KiB answering DECERR
  /// GART_TABLE_BASE / GART_TABLE_SIZE: the PTEs MAP and UNMAP write, inside the data region
  /// (the GART itself stays disabled: only the PTE bytes are compared).
  std::uint64_t gart_table = 0x1'0100'f000;
  std::uint32_t gart_table_entries = 256;
  /// GART steps (the GART on, every region above seen through the aperture): the page table
  /// and the dummy page, outside every region packets write.
  std::uint64_t aperture_table = 0x1'0200'0000;
  std::uint64_t dummy_page = 0x1'0201'0000;
};

/// What GART steps see: the layout's regions mapped into the aperture segment by a page table
/// the runner writes once. Aperture pages, in order: the data region (its pages shuffled, so a
/// range that is contiguous to the GPU is scattered in memory) followed by the two poison
/// pages (writes still run from good memory into bad), dummy pages (valid, read-only: what a
/// driver maps at unused aperture pages), one invalid PTE, the buffer slots and the called
/// buffers (in order), dummy guard pages (the fetch engine translates ahead), then the end of
/// GART_TABLE_SIZE (OUT_OF_RANGE).
struct ApertureMap {
  std::uint64_t base = 0;          ///< CAP_APSEG_BASE
  std::uint32_t pages = 0;         ///< GART_TABLE_SIZE
  std::vector<std::uint64_t> pte;  ///< the table (at Layout::aperture_table)
  Layout view;                     ///< the layout's regions at their GPU (aperture) addresses
  std::uint64_t dummy = 0;         ///< GPU address of the first of dummy_pages dummy pages
  unsigned dummy_pages = 4;
  std::uint64_t invalid = 0;       ///< GPU address of the page whose PTE is invalid
  /// The bus address behind an aperture address (identity outside the aperture).
  std::uint64_t to_bus(std::uint64_t gpu) const;
};
ApertureMap make_aperture_map(const Layout& layout, std::uint64_t aperture_base, std::mt19937_64& rng);

/// What an entry is meant to provoke (the generator's intent; the model decides the outcome).
enum class Inject : std::uint8_t {
  None,
  IllegalOpcode,
  BadLength,
  ReservedBits,
  PrivilegedPacket,
  Overrun,
  BadAlignment,
  BadRingEntry,
  BufferReadError,
  RingReadError,
  WriteError,
  CopyOverlap,     ///< COPY with overlapping source and destination
  CopyReadError,   ///< COPY whose source runs into the SLVERR/DECERR pages
  CopyWriteError,  ///< COPY or FILL whose destination runs into them
  WaitTimeout,     ///< WAIT_MEM that is never satisfied (the watchdog faults; valid packet when it is off)
  WaitReadError,   ///< WAIT_MEM polling the SLVERR/DECERR pages
  IndirectLoop,    ///< a buffer that calls itself (INDIRECT_DEPTH)
  IndirectReadError, ///< a bus error inside a called buffer
  WritebackError,  ///< a bus error on one word of the write-back record (head word or fence word)
  // GART steps only: refused translations.
  GartWriteProtect,  ///< a write into the dummy pages (read-only PTE)
  GartInvalidPte,    ///< an access to the page whose PTE is invalid
  GartOutOfRange,    ///< an aperture page beyond GART_TABLE_SIZE, or an address in no segment
  GartPrivilege,     ///< a system-physical address from an ordinary entry
  Count
};
const char* to_string(Inject inject);

struct ErrorRange {
  std::uint64_t lo;
  std::uint64_t hi;
  std::uint8_t resp;
};

struct EntryPlan {
  abi::RingEntry entry{};
  std::vector<std::uint32_t> buffer;  ///< whole buffer from buf_addr (garbage around the packets)
  struct Child {
    std::uint64_t addr;
    std::vector<std::uint32_t> words;  ///< the called packets, then garbage
  };
  std::vector<Child> children;        ///< buffers called by INDIRECT packets
  unsigned packets = 0;               ///< packets in [start, end), including an invalid one
  Inject inject = Inject::None;
};

struct StepPlan {
  std::vector<EntryPlan> entries;
  std::vector<ErrorRange> errors;     ///< injected for this step only
  bool disabled_doorbell = false;     ///< ring the doorbell with CTRL.enable = 0 first
  /// The GART is on for this step and every address in it is an aperture address (buffers,
  /// called buffers and error ranges: see ApertureMap::to_bus); entries are never privileged.
  bool gart = false;
  /// CP_WATCHDOG for this step only: a value near the write latency, with entries whose only
  /// stall that long is retirement's wait for write responses (the watchdog may expire there).
  std::optional<std::uint32_t> retire_watchdog;
  std::string describe() const;
};

struct GeneratorConfig {
  Layout layout;
  unsigned ring_log2 = 4;
  /// Probability that a step contains one invalid entry.
  double invalid_rate = 0.45;
  unsigned max_entries_per_step = 4;
  unsigned max_packets_per_entry = 12;
  /// CP_WATCHDOG of the run; never-satisfied waits are only generated when it is set.
  std::uint32_t watchdog_cycles = 0;
  /// CAP_MEM.max_indirect_depth: valid streams nest at most this deep.
  unsigned max_indirect_depth = 4;
  /// INDIRECT target buffers per step (fewer than Layout::child_slots).
  unsigned children_per_step = 96;
  /// Probability that a step runs with the GART on, through the aperture (0: never).
  double gart_step_rate = 0.3;
  /// CAP_APSEG_BASE of the device.
  std::uint64_t aperture_base = 0x0018'0000'0000'0000ull;
  /// The RTL's write latency in cycles, if its reads are fast enough (well under it) that steps
  /// with CP_WATCHDOG near it can be generated (StepPlan::retire_watchdog); 0 = none.
  unsigned retire_watchdog_latency = 0;
  /// Probability that a step is such a step (when retire_watchdog_latency is set).
  double retire_watchdog_rate = 0.1;
};

class Generator {
 public:
  Generator(std::uint64_t seed, GeneratorConfig config);

  /// The next step; `first_index` is the ring index its first entry goes to.
  StepPlan next_step(std::uint32_t first_index);
  /// Fence IDs are unique and increasing over the whole run (also across engine resets).
  std::uint64_t last_fence() const { return fence_; }
  std::mt19937_64& rng() { return rng_; }
  const ApertureMap& aperture() const { return aperture_; }
  /// Valid copies out of the dummy pages so far (GART steps).
  std::uint64_t dummy_reads() const { return dummy_reads_; }

 private:
  std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi);  // inclusive
  bool chance(double p);
  void valid_packet(model::PacketStream& s);
  void invalid_packet(model::PacketStream& s, Inject inject, bool& last);
  std::uint64_t data_addr(std::uint64_t bytes, std::uint64_t align);
  std::uint32_t copy_bytes();
  /// A random rectangle (width, height, pitch) and its extent ((height - 1) * pitch + width).
  struct Rect {
    std::uint32_t width, height, pitch;
    std::uint64_t extent() const { return height == 0 ? 0 : std::uint64_t{height - 1} * pitch + width; }
  };
  Rect rect(bool nonempty, std::uint64_t max_extent);
  EntryPlan make_entry(std::uint64_t slot_addr, Inject inject, std::uint64_t entry_addr, StepPlan& step);
  /// Places a called buffer holding `s` (then garbage) in the next child slot; its address.
  std::uint64_t child_buffer(const model::PacketStream& s);
  /// An INDIRECT to a fresh buffer of 0-5 valid packets (nesting further while allowed).
  void indirect_packet(model::PacketStream& s);

  /// The layout as packets of the current step address it.
  const Layout& view() const { return gart_ ? aperture_.view : config_.layout; }
  /// A range of a GART step's addresses as the bus sees it (buffers and called buffers: one
  /// window, contiguous).
  std::uint64_t to_bus(std::uint64_t addr) const { return gart_ ? aperture_.to_bus(addr) : addr; }

  GeneratorConfig config_;
  std::mt19937_64 rng_;
  ApertureMap aperture_;
  bool gart_ = false;  ///< the step being generated is a GART step
  std::uint64_t dummy_reads_ = 0;
  std::uint64_t fence_;
  unsigned next_slot_ = 0;
  bool priv_ = false;  ///< the entry being generated is privileged (privileged packets are valid)
  /// Only packets that never wait for write responses or drain reads (NOP, short WRITE_DATA), at
  /// most quiet_writes_left_ dword writes per entry (fewer than the write master keeps in flight).
  bool quiet_ = false;
  unsigned quiet_writes_left_ = 0;
  EntryPlan* plan_ = nullptr;  ///< the entry being generated (its called buffers)
  StepPlan* step_ = nullptr;   ///< the step being generated (its error ranges)
  unsigned nest_ = 0;          ///< INDIRECT level of the stream being generated
  unsigned children_left_ = 0;
  unsigned next_child_ = 0;
};

}  // namespace sgpu::diff
