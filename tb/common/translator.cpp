#include "common/translator.hpp"

#include <algorithm>

namespace sgpu::tb {

Translator::Outputs Translator::drive() {
  Outputs o;
  o.req_ready = pending_.size() < config_.max_pending &&
                (config_.req_ready_prob >= 1.0 ||
                 std::uniform_real_distribution<double>(0, 1)(rng_) < config_.req_ready_prob);
  o.rsp_valid = rsp_valid_;
  o.ppn = rsp_ppn_;
  o.fault = rsp_fault_;
  return o;
}

void Translator::edge(bool req_hs, uint64_t vpn, bool rsp_hs, uint64_t cycle) {
  if (rsp_hs) {
    pending_.pop_front();
    rsp_valid_ = false;
  }
  if (req_hs) {
    const unsigned span = config_.latency_max - config_.latency_min + 1;
    uint64_t ready = cycle + config_.latency_min + rng_() % span;
    if (!pending_.empty()) ready = std::max(ready, pending_.back().ready_cycle);
    pending_.push_back({vpn, ready});
  }
  // A raised response is held until taken.
  if (!rsp_valid_ && !pending_.empty() && pending_.front().ready_cycle <= cycle + 1) {
    const uint64_t v = pending_.front().vpn;
    rsp_valid_ = true;
    rsp_fault_ = config_.faulting.count(v) != 0;
    rsp_ppn_ = map(v);
  }
}

void Translator::reset() {
  pending_.clear();
  rsp_valid_ = false;
}

}  // namespace sgpu::tb
