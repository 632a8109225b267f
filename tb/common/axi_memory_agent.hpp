// The subordinate on a DUT's AXI4 manager port (m_axi_* ports, see axi_verilator.hpp): an
// AxiMemoryModel answers, and the AxiChecker checks every cycle out of reset. An Agent of
// tb::Bench (bench.hpp); kRead/kWrite choose the sides the DUT has.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/axi_verilator.hpp"
#include "common/bench.hpp"
#include "common/host_memory.hpp"

namespace sgpu::tb {

/// The width of a DUT's AXI data in bytes, from its read data port or, without one, its write
/// data port.
template <class V, bool kHasRead>
constexpr unsigned axi_data_bytes() {
  if constexpr (kHasRead) {
    return sizeof(std::declval<V&>().m_axi_rdata);
  } else {
    return sizeof(std::declval<V&>().m_axi_wdata);
  }
}

template <class V, bool kRead = true, bool kWrite = true>
class AxiMemoryAgent final : public Agent {
 public:
  struct Options {
    /// Run the protocol checker (on cycles with rst_ni high).
    bool check = true;
    std::string name = "axi";
  };

  /// The model's data width is the DUT's (the storage of its m_axi_rdata, or of m_axi_wdata on a
  /// DUT that only writes: QData or VlWide<N>).
  static constexpr unsigned kDataBytes = axi_data_bytes<V, kRead>();

  AxiMemoryAgent(V& dut, HostMemory& memory, AxiMemoryModel::Config config, Options options)
      : dut_(dut), options_(options), model_(memory, with_width(config)),
        checker_(kDataBytes, options.name) {}

  void drive() override {
    if constexpr (kRead) drive_axi_read(dut_, model_.outputs());
    if constexpr (kWrite) drive_axi_write(dut_, model_.outputs());
  }
  void sample() override {
    if constexpr (kRead) sample_axi_read(dut_, sampled_);
    if constexpr (kWrite) sample_axi_write(dut_, sampled_);
    presented_ = model_.outputs();
    if (options_.check && dut_.rst_ni) checker_.tick(sampled_, presented_);
  }
  void edge() override { model_.tick(sampled_); }

  /// Cycles ahead in which this port stays as it is if the DUT's outputs stay as last sampled:
  /// no valid raised by the DUT, none by the model (AxiMemoryModel::quiet_cycles()).
  uint64_t quiet_cycles() const {
    const AxiManagerOut& m = sampled_;
    if (m.arvalid || m.awvalid || m.wvalid) return 0;
    return model_.quiet_cycles();
  }
  /// Accounts for `cycles` such cycles at once (idle skipping, tb/sim/idle_skip.hpp).
  void skip(uint64_t cycles) {
    model_.skip(cycles);
    if (options_.check && dut_.rst_ni) checker_.skip(cycles);
  }
  /// Cycles ahead in which the DUT, repeating the W beat it offered last cycle (and nothing
  /// else), sees this port's outputs unchanged (AxiMemoryModel::write_stream_cycles()).
  uint64_t write_stream_cycles() const {
    if (!presented_.wready) return 0;
    return model_.write_stream_cycles(sampled_);
  }
  /// Runs `cycles` cycles of this side with the DUT's outputs as last sampled (a write stream's
  /// skipped cycles: the checker and the model see every beat, the memory is written).
  void replay(uint64_t cycles) {
    for (uint64_t i = 0; i < cycles; ++i) {
      if (options_.check && dut_.rst_ni) checker_.tick(sampled_, presented_);
      model_.tick(sampled_);
    }
  }

  AxiMemoryModel& model() { return model_; }
  const AxiMemoryModel& model() const { return model_; }
  AxiChecker& checker() { return checker_; }
  const AxiChecker& checker() const { return checker_; }
  /// This cycle's manager outputs and the subordinate outputs they met (valid after sample()):
  /// a handshake on a channel happened iff its valid and ready are both high in this pair.
  const AxiManagerOut& sampled() const { return sampled_; }
  const AxiSubordinateOut& presented() const { return presented_; }

  /// Both sides were reset: drop the transactions in flight.
  void reset() {
    model_.reset();
    checker_.reset();
  }

 private:
  static AxiMemoryModel::Config with_width(AxiMemoryModel::Config c) {
    c.data_bytes = kDataBytes;
    return c;
  }

  V& dut_;
  Options options_;
  AxiMemoryModel model_;
  AxiChecker checker_;
  AxiManagerOut sampled_{};
  AxiSubordinateOut presented_{};
};

}  // namespace sgpu::tb
