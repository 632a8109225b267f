// The AXI4 subordinate in front of the DMA socket: the RTL's host-memory port (m_axi_*) as seen
// by tb::AxiChecker and the Verilated top, with every burst turned into DMA transactions.
//
// A read burst is fetched whole when its AR is accepted (one transaction, split at the
// platform's limits; a failed transaction is asked again beat by beat, so each R beat carries
// its own response); its first beat is presented once the annotated time has passed, in core
// cycles, then one beat per cycle, bursts in acceptance order. A write burst is collected with
// its strobes and written when its last W beat arrives (byte enables = strobes); B follows
// after the write's annotated time. Handshake rules as tb::AxiMemoryModel's: a raised
// rvalid/bvalid stays with its payload until taken; W only for an accepted AW.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include <systemc>

#include "common/axi_signals.hpp"

namespace sgpu::systemc {

class AxiTlmBridge {
 public:
  /// Where the bursts go (the device's DMA socket).
  class Memory {
   public:
    virtual ~Memory() = default;
    /// Returns the AXI response; adds the access's time to `delay`.
    virtual std::uint8_t read(std::uint64_t addr, std::uint8_t* dst, std::size_t n, sc_core::sc_time& delay) = 0;
    virtual std::uint8_t write(std::uint64_t addr, const std::uint8_t* src, const std::uint8_t* byte_enable,
                               std::size_t n, sc_core::sc_time& delay) = 0;
    /// The time the caller is ahead of sc_time_stamp() (what transactions are annotated with).
    virtual sc_core::sc_time local_time() const = 0;
  };

  struct Stats {
    std::uint64_t read_bursts = 0;
    std::uint64_t write_bursts = 0;
    std::uint64_t read_beats = 0;
    std::uint64_t write_beats = 0;
  };

  /// `data_bytes`: the bus width; `period`: one core cycle (annotated times become cycles).
  AxiTlmBridge(Memory& memory, unsigned data_bytes, sc_core::sc_time period);

  const tb::AxiSubordinateOut& outputs() const { return out_; }
  /// One rising edge; `in` is the manager's output sampled before it.
  void tick(const tb::AxiManagerOut& in);
  /// Drops every burst in flight (the device was reset).
  void reset();
  bool idle() const;
  const Stats& stats() const { return stats_; }

 private:
  struct Burst {
    std::uint32_t id = 0;
    std::uint64_t addr = 0;
    std::uint8_t len = 0;
    std::uint8_t size = 0;
    std::uint8_t type = 0;
    unsigned beat = 0;
    std::uint64_t ready_cycle = 0;
    std::vector<std::uint8_t> data;    ///< beats x bus width, lane order
    std::vector<std::uint8_t> enable;  ///< writes: per byte, TLM_BYTE_ENABLED or not
    std::vector<std::uint8_t> resp;    ///< reads: per beat
  };

  std::uint64_t beat_address(const Burst& b, unsigned beat) const;
  bool contiguous(const Burst& b) const;
  void fetch(Burst& b);
  std::uint8_t store(Burst& b);
  std::uint64_t cycles(const sc_core::sc_time& t) const;
  void present_read();

  Memory& memory_;
  unsigned bytes_;
  sc_core::sc_time period_;
  tb::AxiSubordinateOut out_{};
  std::deque<Burst> reads_;
  std::deque<Burst> writes_;     ///< AW accepted, collecting W
  std::deque<Burst> responses_;  ///< written, waiting for B
  std::uint64_t cycle_ = 0;
  std::uint64_t last_read_ready_ = 0;
  Stats stats_;
};

}  // namespace sgpu::systemc
