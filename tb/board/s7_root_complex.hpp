// The host side of a 7-series PCIe board, as the shell's ports see it: a model of the hard
// block (pcie_7x: 128-bit AXI-Stream TX/RX, cfg_* status, cfg_interrupt MSI handshake) and of
// the root complex and host memory behind the link.
//
// What it models:
//  * the link: TLPs cross it serially at the trained rate (Gen1/Gen2, 1..8 lanes) with a
//    per-TLP framing/DLLP overhead; the hard block hands a received TLP to the user only once
//    it is complete (store and forward), a beat per user clock, and may start a TLP in the
//    upper half of a beat after one ending in the lower half (straddling, is_sof offset 8);
//  * the root complex: memory reads from the device are answered after a configurable latency
//    (plus per-request jitter, so completions of different requests overtake each other), split
//    into completions at Read Completion Boundaries; writes land in host memory with exactly
//    their byte enables; MSI requests are acknowledged and counted (after the writes before them);
//  * the host's own accesses: BAR0 reads and writes become MRd/MWr TLPs to the device, and the
//    device's completions return the read data;
//  * configuration space lives in the hard block (ConfigSpace), so cfg_command, cfg_dcommand,
//    cfg_interrupt_msienable and the bus/device/function numbers follow what the host wrote.
//
// It is also a protocol checker: every TLP from the device is decoded and checked (header
// versus beats and tkeep, byte-enable rules, 4 KiB boundaries, MPS/MRRS, requester ID, Bus
// Master Enable, completion byte count and lower address, the MSI handshake); a violation
// throws BoardError naming it.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <queue>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "board/config_space.hpp"
#include "board/tlp.hpp"
#include "common/host_memory.hpp"

namespace sgpu::board {

/// A rule broken by the simulated hardware (or a host request the model cannot serve).
struct BoardError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct RootComplexConfig {
  unsigned lanes = 4;
  unsigned gen = 2;
  /// From a memory read reaching the root complex to its first completion leaving it.
  double read_latency_ns = 600;
  /// Extra latency per read, uniform in [0, jitter]: completions of different reads reorder.
  double read_jitter_ns = 200;
  /// Read Completion Boundary, and the size of the completions the root complex returns (it
  /// splits at multiples of rcb, at most completion_bytes each; 64 is what Intel hosts do).
  unsigned rcb = 64;
  unsigned completion_bytes = 64;
  /// Link bytes per TLP beyond header and payload: framing, sequence number, LCRC, and a share
  /// of ACK and flow-control DLLPs.
  unsigned tlp_overhead_bytes = 10;
  /// Start a TLP in the upper half of an RX beat when the previous one ended in the lower half.
  bool rx_straddle = true;
  /// From an MSI request to the hard block's acknowledge.
  double msi_latency_ns = 60;
  /// Probability the hard block takes a TX beat in a cycle (< 1: random back-pressure).
  double tx_ready_prob = 1.0;
  /// Bytes the hard block's transmit buffer holds before it stops taking beats.
  unsigned tx_buffer_bytes = 4096;
  /// Bus/device/function the host assigned (the requester ID the device must use).
  std::uint8_t bus = 1, device = 0, function = 0;
  std::uint64_t seed = 1;
};

/// What the hard block drives into the shell (one user-clock cycle).
struct HardBlockToShell {
  bool user_reset = true;
  bool link_up = false;
  bool rx_valid = false;
  std::array<std::uint32_t, 4> rx_data{};
  std::uint16_t rx_keep = 0;
  bool rx_last = false;
  std::uint32_t rx_user = 0;
  bool tx_ready = false;
  bool interrupt_rdy = false;
  bool msi_enable = false;
  std::uint16_t command = 0;
  std::uint16_t dcommand = 0;
  std::uint8_t bus = 0, device = 0, function = 0;
};

/// What the shell drives into the hard block, sampled before a rising edge.
struct ShellToHardBlock {
  bool tx_valid = false;
  std::array<std::uint32_t, 4> tx_data{};
  std::uint16_t tx_keep = 0;
  bool tx_last = false;
  bool rx_ready = false;
  bool interrupt = false;
  bool interrupt_assert = false;
  std::uint8_t interrupt_di = 0;
};

struct RootComplexStats {
  std::uint64_t device_reads = 0;          ///< MRd TLPs from the device
  std::uint64_t device_read_bytes = 0;     ///< bytes they asked for
  std::uint64_t device_writes = 0;         ///< MWr TLPs from the device
  std::uint64_t device_write_bytes = 0;    ///< bytes with an enable set
  std::uint64_t completion_payload_bytes = 0;  ///< CplD payload sent to the device
  std::uint64_t reads_in_flight = 0;       ///< device reads not yet fully completed
  std::uint64_t max_reads_in_flight = 0;
  std::uint64_t msis = 0;
  std::uint64_t unsupported_requests = 0;  ///< reads answered with UR (inject_unsupported)
  std::uint64_t rx_tlps = 0, tx_tlps = 0;
  std::uint64_t first_read_ps = 0;         ///< first device read reaching the root complex
  std::uint64_t last_completion_ps = 0;    ///< the hard block has received the last CplD
};

class S7RootComplex {
 public:
  S7RootComplex(tb::HostMemory& memory, ConfigSpace& config, RootComplexConfig rc);

  /// What the hard block drives during the coming cycle.
  const HardBlockToShell& outputs() const { return out_; }
  /// One rising edge of the user clock at simulated time now_ps; `in` sampled before it.
  void tick(const ShellToHardBlock& in, std::uint64_t now_ps);
  /// Holds user_reset for the coming cycles (link training); released with the link up.
  void set_link_up(bool up);

  // ---- host side (the CPU's accesses to BAR0, as the root complex sends them)
  /// Queues a memory read of `length_dw` dwords at bus address `addr`; returns its tag.
  std::uint8_t host_read(std::uint64_t addr, std::uint16_t length_dw, std::uint8_t first_be = 0xf,
                         std::uint8_t last_be = 0xf);
  /// The data of a finished host read (length_dw * 4 bytes), or nothing yet.
  std::optional<std::vector<std::uint8_t>> take_host_read(std::uint8_t tag);
  /// Queues a (posted) memory write.
  void host_write(std::uint64_t addr, const std::vector<std::uint8_t>& payload, std::uint8_t first_be = 0xf,
                  std::uint8_t last_be = 0xf);
  /// Reads from the device touching [lo, hi) get an Unsupported Request completion (as an IOMMU
  /// fault would).
  void inject_unsupported(std::uint64_t lo, std::uint64_t hi);

  const RootComplexStats& stats() const { return stats_; }
  void reset_stats();
  std::uint16_t device_id() const;  ///< the device's bus/device/function
  /// Host-bound traffic still on its way (reads outstanding, TLPs not yet delivered).
  bool idle() const;
  double ps_per_byte() const { return ps_per_byte_; }

 private:
  struct Pending {         // a TLP on its way to the device (RX)
    std::uint64_t ready_ps;  // fully received by the hard block
    std::vector<std::uint32_t> dws;
    bool bar_hit;
  };
  struct Scheduled {       // work the root complex does at a given time
    std::uint64_t at_ps;
    std::uint64_t seq;
    enum { ServeRead, DeliverTx, Msi } what;
    Tlp tlp;
    bool operator>(const Scheduled& o) const { return at_ps != o.at_ps ? at_ps > o.at_ps : seq > o.seq; }
  };

  void fail(const std::string& what) const;
  std::uint64_t link_send(std::uint64_t start_ps, unsigned tlp_bytes, std::uint64_t& link_free);
  void to_device(const Tlp& t, std::uint64_t now_ps, bool bar_hit);
  void from_device(const std::vector<std::uint32_t>& dws, std::uint64_t now_ps);
  void serve(const Scheduled& s, std::uint64_t now_ps);
  void serve_read(const Tlp& t, std::uint64_t now_ps);
  void deliver(const Tlp& t);
  void build_rx_beat(std::uint64_t now_ps);
  void update_status();

  tb::HostMemory& memory_;
  ConfigSpace& config_;
  RootComplexConfig rc_;
  double ps_per_byte_;
  std::mt19937_64 rng_;
  bool trace_;  // SGPU_TLP_TRACE: every TLP to stderr
  HardBlockToShell out_{};
  bool link_up_ = false;
  std::uint64_t now_ps_ = 0;

  // RX (host -> device).
  std::uint64_t rx_link_free_ps_ = 0;
  std::deque<Pending> rx_queue_;
  std::vector<std::uint32_t> rx_cur_;   // TLP being presented
  std::size_t rx_pos_ = 0;
  bool rx_cur_active_ = false;
  bool rx_beat_valid_ = false;

  // TX (device -> host).
  std::uint64_t tx_link_free_ps_ = 0;
  std::vector<std::uint32_t> tx_cur_;

  std::priority_queue<Scheduled, std::vector<Scheduled>, std::greater<Scheduled>> sched_;
  std::uint64_t seq_ = 0;

  // Host reads of BAR0 waiting for the device's completion.
  std::uint8_t host_tag_ = 0;
  struct HostRead {
    std::uint16_t length_dw;
    std::uint64_t address;
    std::uint8_t first_be, last_be;
    std::optional<std::vector<std::uint8_t>> data;
  };
  std::map<std::uint8_t, HostRead> host_reads_;

  // MSI handshake.
  bool msi_pending_ = false;  // cfg_interrupt seen, acknowledge scheduled
  bool msi_ack_now_ = false;

  std::vector<std::pair<std::uint64_t, std::uint64_t>> ur_ranges_;
  RootComplexStats stats_{};
};

}  // namespace sgpu::board
