// The counterpart of a translation port (the GART's place in a block test), and its Agent for a
// Verilated top with the ports xlate_req_{valid_o, ready_i, vpn_o} and
// xlate_rsp_{valid_i, ready_o, ppn_i, fault_i}.
//
// Requests are answered in order, each `latency` cycles after its handshake (uniform in
// [latency_min, latency_max], never before the one ahead of it); a raised response is held until
// taken. A page maps through `map` (identity when empty); pages in `faulting` are refused.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <unordered_set>

#include "common/agent.hpp"

namespace sgpu::tb {

struct TranslatorConfig {
  unsigned latency_min = 1;
  unsigned latency_max = 1;
  /// Probability that a request is accepted in a cycle (while fewer than max_pending wait).
  double req_ready_prob = 1.0;
  std::size_t max_pending = 8;
  std::function<uint64_t(uint64_t)> map;  ///< GPU page -> bus page; empty = identity
  std::unordered_set<uint64_t> faulting;  ///< GPU pages refused
};

class Translator {
 public:
  /// What the translator drives in a cycle.
  struct Outputs {
    bool req_ready = false;
    bool rsp_valid = false;
    uint64_t ppn = 0;
    bool fault = false;
  };

  /// `rng` draws the acceptance chances and latencies (the caller's, so a harness keeps one
  /// reproducible stream).
  Translator(TranslatorConfig config, std::mt19937_64& rng) : config_(std::move(config)), rng_(rng) {}

  TranslatorConfig& config() { return config_; }
  const TranslatorConfig& config() const { return config_; }
  /// Bus page of a GPU page under the mapping.
  uint64_t map(uint64_t vpn) const { return config_.map ? config_.map(vpn) : vpn; }

  /// Step 1 of a cycle.
  Outputs drive();
  /// Step 4: the handshakes of the cycle that ends (`cycle`), with the requested page.
  void edge(bool req_hs, uint64_t vpn, bool rsp_hs, uint64_t cycle);
  /// Drops every request (the DUT was reset).
  void reset();
  std::size_t pending() const { return pending_.size(); }

 private:
  struct Pending {
    uint64_t vpn;
    uint64_t ready_cycle;
  };

  TranslatorConfig config_;
  std::mt19937_64& rng_;
  std::deque<Pending> pending_;
  bool rsp_valid_ = false;
  uint64_t rsp_ppn_ = 0;
  bool rsp_fault_ = false;
};

/// Binds a Translator to the xlate_* ports of a Verilated top.
template <class V>
class TranslatorAgent final : public Agent {
 public:
  TranslatorAgent(V& dut, Translator& translator) : dut_(dut), translator_(translator) {}

  void drive() override {
    const Translator::Outputs o = translator_.drive();
    dut_.xlate_req_ready_i = o.req_ready;
    dut_.xlate_rsp_valid_i = o.rsp_valid;
    dut_.xlate_rsp_ppn_i = o.ppn;
    dut_.xlate_rsp_fault_i = o.fault;
  }
  void sample() override {
    req_hs_ = dut_.xlate_req_valid_o && dut_.xlate_req_ready_i;
    rsp_hs_ = dut_.xlate_rsp_valid_i && dut_.xlate_rsp_ready_o;
    vpn_ = dut_.xlate_req_vpn_o;
  }
  void edge() override { translator_.edge(req_hs_, vpn_, rsp_hs_, cycle_++); }

 private:
  V& dut_;
  Translator& translator_;
  bool req_hs_ = false;
  bool rsp_hs_ = false;
  uint64_t vpn_ = 0;
  uint64_t cycle_ = 0;
};

}  // namespace sgpu::tb
