// AXI4 protocol checker for one manager/subordinate port, fed with the same signal pair the
// memory model sees every cycle.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "common/axi_signals.hpp"

namespace sgpu::tb {

/// Checks the rules a manager and a subordinate owe each other (AXI spec A3.2, A3.4):
/// - a raised valid stays high, with a stable payload, until its handshake (all five channels);
/// - AR/AW: legal burst type, size no wider than the bus, WRAP length 2/4/8/16, FIXED length
///   <= 16, INCR bursts never cross a 4 KiB boundary;
/// - R: only for an outstanding read of that ID, rlast exactly on the burst's last beat;
/// - W: only after its AW (project rule: our managers always send the address first), no more
///   beats than the AW asked for, wlast exactly on the last beat, no strobes outside the lanes
///   of the beat;
/// - B: only for a write whose data is complete, with that write's ID.
/// Violations are recorded with the cycle number (ticks since construction or reset()).
class AxiChecker {
public:
  /// data_bytes: bus width in bytes. name: prefix of every message (e.g. "host-memory").
  explicit AxiChecker(unsigned data_bytes = 8, std::string name = "axi");

  /// One cycle: the manager's and subordinate's outputs, both sampled before the rising edge.
  void tick(const AxiManagerOut& manager, const AxiSubordinateOut& subordinate);
  /// Forgets transactions in flight (both sides were reset); violations are kept.
  void reset();

  const std::vector<std::string>& violations() const { return violations_; }
  bool ok() const { return violations_.empty(); }
  /// All violations joined by newlines (for test failure messages).
  std::string report() const;
  uint64_t cycle() const { return cycle_; }
  /// Accounts for `cycles` ticks whose manager and subordinate outputs repeat the last tick's with
  /// no valid raised (nothing to check, no state but the cycle count changes): idle skipping.
  void skip(uint64_t cycles) { cycle_ += cycles; }
  /// Reads (bursts) accepted whose last beat has not been seen.
  size_t reads_outstanding() const;

  /// At most this many messages are kept; later ones are counted only.
  static constexpr size_t kMaxMessages = 64;
  size_t violation_count() const { return violation_count_; }

private:
  struct Pending {
    unsigned beats_left;  ///< beats still expected, including the current one
  };
  struct WriteBurst {
    uint32_t id;
    uint64_t addr;
    uint8_t size;
    uint8_t type;
    unsigned beats;
    unsigned beats_seen = 0;
  };

  void fail(const std::string& what);
  void check_address(const char* channel, uint64_t addr, uint8_t len, uint8_t size, uint8_t burst);

  unsigned data_bytes_;
  std::string name_;
  uint64_t cycle_ = 0;
  std::vector<std::string> violations_;
  size_t violation_count_ = 0;

  // Previous cycle, to check stability of pending handshakes.
  AxiManagerOut prev_m_{};
  AxiSubordinateOut prev_s_{};

  std::map<uint32_t, std::deque<Pending>> reads_;   ///< per ID, in order
  std::deque<WriteBurst> writes_;                   ///< AW accepted, data not complete
  std::map<uint32_t, unsigned> responses_due_;      ///< per ID: writes with data, B not yet
};

}  // namespace sgpu::tb
