// A randomised AXI4 manager for testing blocks that sit between a manager and a subordinate
// (clock-domain crossings, splitters): it issues read bursts over a region whose contents it
// knows and write bursts with random data and strobes to another region, keeps track of what
// every response must be, and checks each one as it arrives. The final write-region contents
// to expect are in expected_memory().
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "common/axi_signals.hpp"
#include "common/host_memory.hpp"

namespace sgpu::tb {

struct TrafficConfig {
  unsigned data_bytes = 8;
  unsigned id_bits = 4;
  std::uint64_t read_base = 0x1'0000'0000, read_size = 0x10000;
  std::uint64_t write_base = 0x2'0000'0000, write_size = 0x10000;
  unsigned max_len = 16;          ///< beats per burst (<= 256)
  double valid_prob = 0.8;        ///< a pending channel is offered in a cycle
  double ready_prob = 0.8;        ///< rready/bready in a cycle
  double strobe_hole_prob = 0.2;  ///< a write beat gets random strobes (else all set)
  std::uint64_t seed = 1;
};

class AxiTraffic {
 public:
  /// `memory`: the subordinate's memory; the read region is filled from the seed here.
  AxiTraffic(HostMemory& memory, TrafficConfig c);

  void add_reads(unsigned n);
  void add_writes(unsigned n);

  /// What the manager drives this cycle.
  const AxiManagerOut& outputs() const { return out_; }
  /// Rising edge: `in` is the subordinate's output sampled with outputs().
  void tick(const AxiSubordinateOut& in);

  bool done() const;
  const std::vector<std::string>& errors() const { return errors_; }
  /// Write region as it must be once every write completed.
  const std::vector<std::uint8_t>& expected_writes() const { return shadow_; }
  std::uint64_t read_beats() const { return read_beats_; }
  std::uint64_t write_responses() const { return write_responses_; }

 private:
  struct Burst {
    std::uint32_t id;
    std::uint64_t addr;
    std::uint8_t len;
  };
  struct WBeat {
    std::array<std::uint8_t, kAxiMaxDataBytes> data{};
    std::uint64_t strb = 0;
    bool last = false;
  };
  void fail(const std::string& what) { if (errors_.size() < 32) errors_.push_back(what); }
  bool chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  Burst random_burst(std::uint64_t base, std::uint64_t size);
  void update_outputs();

  HostMemory& mem_;
  TrafficConfig c_;
  std::mt19937_64 rng_;
  AxiManagerOut out_{};
  std::deque<Burst> ar_, aw_;
  std::deque<WBeat> w_;
  std::map<std::uint32_t, std::deque<std::pair<Burst, unsigned>>> reads_out_;  // per ID: burst, beats seen
  std::map<std::uint32_t, unsigned> writes_out_;  // per ID: B responses due
  std::vector<std::uint8_t> shadow_;
  std::vector<std::string> errors_;
  std::uint64_t read_beats_ = 0, write_responses_ = 0;
  unsigned aw_issued_ = 0, w_bursts_sent_ = 0;
};

}  // namespace sgpu::tb
