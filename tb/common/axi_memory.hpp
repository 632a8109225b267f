// AXI4 subordinate serving reads and writes from a HostMemory, with latency, random stalls and
// error injection.
#pragma once

#include <cstdint>
#include <deque>
#include <random>
#include <vector>

#include "common/axi_signals.hpp"
#include "common/host_memory.hpp"

namespace sgpu::tb {

/// A pipelined memory behind an AXI4 port: every read burst returns its first beat
/// `read_latency` cycles after its AR handshake, then one beat per cycle; bursts are served in
/// the order they were accepted (legal for any mix of IDs), so a read stream that keeps enough
/// bursts in flight sees the full bus bandwidth.
///
/// Clocking (see bench.hpp): outputs() is what the subordinate drives during the current
/// cycle; tick(in) is its rising edge, where `in` is the manager's output sampled in the same
/// cycle. A handshake on a channel happens when its valid and ready are both high in that pair.
///
/// AXI rules the model honours: once rvalid/bvalid is raised it stays, with the same payload,
/// until the handshake; readies may drop at any time. Supported bursts: INCR, FIXED and WRAP of
/// any size up to the bus width, narrow and unaligned, byte lanes as in the AXI spec (A3.4).
/// Write data is accepted only for a burst whose AW was already accepted.
class AxiMemoryModel {
public:
  struct Config {
    unsigned data_bytes = 8;          ///< bus width in bytes (1..64, power of two)
    unsigned read_latency = 16;       ///< cycles from AR handshake to the first R beat (>= 1)
    unsigned write_latency = 8;       ///< cycles from the last W beat to B valid (>= 1)
    double ar_ready_prob = 1.0;       ///< probability arready is high in a cycle
    double r_valid_prob = 1.0;        ///< probability a ready R beat is presented in a cycle
    double aw_ready_prob = 1.0;
    double w_ready_prob = 1.0;
    unsigned max_reads_in_flight = 1024;  ///< AR stalls while this many reads are unfinished
    uint64_t seed = 1;                ///< seed of every random decision (stalls, jitter)
    /// Extra per-burst latency, uniform in [0, jitter]; responses stay in order.
    unsigned read_latency_jitter = 0;
  };

  struct Stats {
    uint64_t cycles = 0;
    uint64_t reads_in_flight = 0;      ///< now: AR accepted, last R beat not yet
    uint64_t max_reads_in_flight = 0;  ///< most ever seen
    uint64_t read_beats = 0;
    uint64_t write_beats = 0;
    uint64_t read_bursts = 0;          ///< completed (last beat handed over)
    uint64_t write_bursts = 0;         ///< completed (B handed over)
    uint64_t r_handshake_cycles = 0;   ///< cycles with an R handshake (= read_beats)
    uint64_t w_handshake_cycles = 0;
    uint64_t read_error_beats = 0;     ///< R beats answered with an injected error
    uint64_t write_error_bursts = 0;
  };

  AxiMemoryModel(HostMemory& memory, Config config);

  /// What the subordinate drives into the manager for the coming rising edge.
  const AxiSubordinateOut& outputs() const { return out_; }
  /// One rising edge; `in` is the manager's output sampled before it.
  void tick(const AxiManagerOut& in);
  /// Drops every transaction in flight (the DUT was reset). Memory, error ranges and
  /// statistics are kept.
  void reset();

  /// Reads and writes that touch [lo, hi) get `resp` (SLVERR or DECERR); writes there do not
  /// change memory.
  void inject_error(uint64_t lo, uint64_t hi, uint8_t resp);
  void clear_errors() { errors_.clear(); }

  /// Nothing in flight on any channel.
  bool idle() const;
  /// How many coming tick()s, each with a manager that raises no valid, would leave outputs()
  /// and everything but the cycle count as they are: until the first read or write response
  /// falls due. 0 when an output is already raised, write data is awaited, or a ready or valid
  /// is random (a probability below 1 draws a number every cycle). Idle skipping
  /// (tb/sim/idle_skip.hpp) stays inside this.
  uint64_t quiet_cycles() const;
  /// How many coming tick()s, each with the manager offering the W beat `in` (wvalid, the same
  /// data) and no other valid, leave outputs() as they are: the front write burst takes a beat
  /// each time, none of them its last, and no response falls due. 0 when that is not the state
  /// (or anything is random, as for quiet_cycles()). Idle skipping of a write stream stays inside.
  uint64_t write_stream_cycles(const AxiManagerOut& in) const;
  /// Accounts for `cycles` quiet tick()s at once (at most quiet_cycles()): the cycle count and
  /// the statistics advance as if they had run.
  void skip(uint64_t cycles);
  const Stats& stats() const { return stats_; }
  void reset_stats();
  const Config& config() const { return config_; }
  HostMemory& memory() { return memory_; }

private:
  struct Burst {
    uint32_t id = 0;
    uint64_t addr = 0;
    uint8_t len = 0;
    uint8_t size = 0;
    uint8_t type = 0;
    unsigned beat = 0;         ///< next beat to transfer
    uint64_t ready_cycle = 0;  ///< first cycle its (first) response may be presented
    uint8_t resp = kAxiRespOkay;  ///< accumulated write response
  };
  struct ErrorRange {
    uint64_t lo;
    uint64_t hi;
    uint8_t resp;
  };

  uint64_t beat_address(const Burst& burst, unsigned beat) const;
  uint8_t error_for(uint64_t lo, uint64_t hi) const;
  void make_read_beat(const Burst& burst);
  void write_beat(Burst& burst, const AxiManagerOut& in);
  bool chance(double probability);

  HostMemory& memory_;
  Config config_;
  std::mt19937_64 rng_;
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
  AxiSubordinateOut out_{};
  std::deque<Burst> reads_;         ///< accepted, not completed, in order
  std::deque<Burst> writes_;        ///< accepted AW waiting for (more) W beats
  std::deque<Burst> responses_;     ///< writes with all data, waiting for B
  std::vector<ErrorRange> errors_;
  uint64_t cycle_ = 0;
  uint64_t last_read_ready_ = 0;
  Stats stats_{};
};

}  // namespace sgpu::tb
