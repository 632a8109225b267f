// Drives the Verilated GART read path (sgpu_gart_tb_top): a DMA fetch engine translated by the
// GART, the GART's walker on the same AXI port, and a direct translation port. Holds the host
// memory (page table, pages), a C++ reference model of the translation, and the bookkeeping
// the tests and the benchmark need (requests, responses, AXI reads, fault events).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <verilated.h>

#include "Vsgpu_gart_tb_top.h"
#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/axi_verilator.hpp"
#include "common/host_memory.hpp"
#include "common/sim_clock.hpp"

namespace sgpu::tb::gart {

inline constexpr unsigned kDataBytes = 8;  // the tb top is built at 64 bits

// The GPU address map of sgpu_gart's default parameters (as sgpu_top's).
inline constexpr uint64_t kSysAddrBits = 52;
inline constexpr uint64_t kMemSegBase = 0x0010'0000'0000'0000ull;
inline constexpr uint64_t kMemSegSize = 0x1000'0000ull;
inline constexpr uint64_t kMemSegBus = 0x0000'8000'0000'0000ull;
inline constexpr uint64_t kApBase = 0x0018'0000'0000'0000ull;
inline constexpr uint64_t kApSize = 0x1000'0000ull;
inline constexpr uint64_t kApPages = kApSize >> 12;
inline constexpr unsigned kTlbEntries = 32;

// PTE bits (sgpu_gart_pkg).
inline constexpr uint64_t kPteValid = 1;
inline constexpr uint64_t kPteWritable = 2;
inline constexpr uint64_t kPteSnoop = 4;
inline uint64_t pte(uint64_t bus_addr, uint64_t flags) { return (bus_addr & ~uint64_t{0xfff}) | flags; }

/// GART_FAULT_STATUS.reason.
enum class Reason : uint8_t { None = 0, InvalidPte = 1, WriteProtect = 2, OutOfRange = 3, Privilege = 4, WalkError = 5 };
inline const char* to_string(Reason r) {
  switch (r) {
    case Reason::None: return "None";
    case Reason::InvalidPte: return "InvalidPte";
    case Reason::WriteProtect: return "WriteProtect";
    case Reason::OutOfRange: return "OutOfRange";
    case Reason::Privilege: return "Privilege";
    case Reason::WalkError: return "WalkError";
  }
  return "?";
}

/// Fetch engine status codes (sgpu_dma_pkg::dma_err_e).
enum class DmaErr : uint8_t { Ok = 0, BusSlvErr = 1, BusDecErr = 2, XlateFault = 3, Aborted = 4 };

/// What one translation should produce.
struct Expect {
  bool fault = false;
  Reason reason = Reason::None;
  uint64_t ppn = 0;
  bool snoop = false;
  /// The translation port carries no reason: a response matches on fault, ppn and snoop.
  bool operator==(const Expect& o) const {
    return fault == o.fault && (fault || (ppn == o.ppn && snoop == o.snoop));
  }
};

/// Reference model of sgpu_gart's translation for one PTE value (pte_value is ignored outside
/// the aperture).
inline Expect model_translate(uint64_t vpn, bool write, bool priv, bool enable, uint32_t table_size,
                              uint64_t pte_value, bool walk_error = false) {
  Expect e;
  e.ppn = vpn;
  if (!enable) return e;
  const uint64_t ap_vpn = kApBase >> 12;
  const uint64_t ms_vpn = kMemSegBase >> 12;
  auto fail = [&](Reason r) {
    e.fault = true;
    e.reason = r;
    e.ppn = 0;
    return e;
  };
  if (vpn >= ap_vpn && vpn < ap_vpn + kApPages) {
    const uint64_t idx = vpn - ap_vpn;
    if (idx >= std::min<uint64_t>(table_size, kApPages)) return fail(Reason::OutOfRange);
    if (walk_error) return fail(Reason::WalkError);
    if (!(pte_value & kPteValid)) return fail(Reason::InvalidPte);
    if (write && !(pte_value & kPteWritable)) return fail(Reason::WriteProtect);
    e.ppn = pte_value >> 12;
    e.snoop = (pte_value & kPteSnoop) != 0;
    return e;
  }
  if (vpn >= ms_vpn && vpn < ms_vpn + (kMemSegSize >> 12)) {
    e.ppn = (kMemSegBus >> 12) + (vpn - ms_vpn);
    return e;
  }
  if ((vpn >> (kSysAddrBits - 12)) == 0) {
    if (!priv) return fail(Reason::Privilege);
    return e;
  }
  return fail(Reason::OutOfRange);
}

struct HarnessConfig {
  AxiMemoryModel::Config memory{};
  double data_ready_prob = 1.0;
  double dx_req_prob = 1.0;
  double dx_rsp_ready_prob = 1.0;
  uint64_t seed = 1;
};

/// A fetch-engine request as the harness tracks it.
struct FetchReq {
  uint64_t addr = 0;
  uint32_t len = 0;
  std::vector<uint8_t> data;
  bool done = false;
  DmaErr err = DmaErr::Ok;
  uint64_t accept_cycle = 0;
  uint64_t status_cycle = 0;
};

/// A direct translation request.
struct DxReq {
  uint64_t vpn = 0;
  bool write = false;
  bool priv = false;
  uint64_t accept_cycle = 0;
  bool answered = false;
  uint64_t rsp_cycle = 0;
  Expect got;
};

class GartHarness {
public:
  using Model = Vsgpu_gart_tb_top;

  static constexpr uint64_t kTableBase = 0x2'0000'0000ull;

  explicit GartHarness(HarnessConfig config = {})
      : config_(std::move(config)), context_(std::make_unique<VerilatedContext>()), rng_(config_.seed) {
    config_.memory.data_bytes = kDataBytes;
    context_->randReset(2);
    context_->randSeed(static_cast<int>(config_.seed & 0x7fffffff));
    top_ = std::make_unique<Model>(context_.get(), "gart");
    trace_ = std::make_unique<Trace<Model>>(*top_);
    axi_ = std::make_unique<AxiMemoryModel>(memory_, config_.memory);
    checker_ = std::make_unique<AxiChecker>(kDataBytes, "gart-axi");
    Model& t = *top_;
    t.mode_i = 0;
    t.abort_i = 0;
    t.req_valid_i = 0;
    t.dx_req_valid_i = 0;
    t.dx_rsp_ready_i = 0;
    t.enable_i = 1;
    t.table_base_i = kTableBase;
    t.table_size_i = 0;
    t.priv_i = 0;
    t.fence_i = 0;
    t.context_i = 0;
    t.inv_valid_i = 0;
    t.inv_all_i = 0;
    t.inv_first_i = 0;
    t.inv_count_i = 0;
    t.fault_clear_i = 0;
    t.data_ready_i = 0;
    t.status_ready_i = 0;
    t.m_axi_rvalid = 0;
    t.clk_i = 0;
    t.rst_ni = 1;
    t.eval();
    t.rst_ni = 0;
    t.eval();
    for (int i = 0; i < 2; ++i) {
      t.clk_i = 1;
      t.eval();
      t.clk_i = 0;
      t.eval();
    }
    t.rst_ni = 1;
    t.eval();
  }
  ~GartHarness() {
    trace_.reset();
    top_->final();
  }
  GartHarness(const GartHarness&) = delete;
  GartHarness& operator=(const GartHarness&) = delete;

  Model& top() { return *top_; }
  HostMemory& memory() { return memory_; }
  AxiMemoryModel& axi() { return *axi_; }
  const AxiChecker& checker() const { return *checker_; }
  uint64_t cycle() const { return cycle_; }
  std::mt19937_64& rng() { return rng_; }

  // ------------------------------------------------------------------ configuration
  void set_mode(unsigned mode) { top_->mode_i = static_cast<CData>(mode); }
  void set_enable(bool on) {
    enable_ = on;
    top_->enable_i = on;
  }
  void set_table_size(uint32_t n) {
    table_size_ = n;
    top_->table_size_i = n;
  }
  void set_table_base(uint64_t base) { top_->table_base_i = base; }
  void set_exec(bool priv, uint64_t fence, uint32_t context) {
    priv_ = priv;
    top_->priv_i = priv;
    top_->fence_i = fence;
    top_->context_i = context;
  }
  bool enabled() const { return enable_; }
  uint32_t table_size() const { return table_size_; }
  bool priv() const { return priv_; }

  /// Writes PTE `idx` into the table in host memory and logs it for the model.
  void write_pte(uint64_t idx, uint64_t value) {
    memory_.write64(kTableBase + 8 * idx, value);
    auto& h = history_[idx];
    if (!h.empty()) h.back().superseded = cycle_;
    h.push_back({value, cycle_, kNever, kNever});
  }
  uint64_t read_pte(uint64_t idx) const { return memory_.read64(kTableBase + 8 * idx); }

  static uint64_t ap_vpn(uint64_t idx) { return (kApBase >> 12) + idx; }
  static uint64_t ap_addr(uint64_t idx) { return kApBase + (idx << 12); }

  // ------------------------------------------------------------------ invalidation
  /// Requests an invalidation and runs until the GART takes it; returns the request cycle.
  uint64_t invalidate_start(bool all, uint32_t first = 0, uint32_t count = 0) {
    Model& t = *top_;
    t.inv_all_i = all;
    t.inv_first_i = first;
    t.inv_count_i = count;
    t.inv_valid_i = 1;
    inv_pending_.push_back({all, first, count, cycle_});
    while (!inv_taken_) step();
    inv_taken_ = false;
    return inv_pending_.back().requested;
  }
  /// Runs until every invalidation completed (inv_busy low).
  void invalidate_wait(uint64_t max_cycles = 10000) {
    const uint64_t limit = cycle_ + max_cycles;
    while ((top_->inv_busy_o || !inv_pending_.empty()) && cycle_ < limit) step();
    if (cycle_ >= limit) fail("invalidation did not complete");
  }
  void invalidate(bool all, uint32_t first = 0, uint32_t count = 0) {
    invalidate_start(all, first, count);
    invalidate_wait();
  }
  bool inv_busy() const { return top_->inv_busy_o != 0; }

  /// The values PTE idx may legitimately have been translated with by a request accepted at
  /// cycle a and answered at cycle r: every value whose lifetime (written .. replaced and then
  /// invalidated) overlaps [a, r]. A page never written reads 0 (invalid).
  std::vector<uint64_t> pte_candidates(uint64_t idx, uint64_t a, uint64_t r) const {
    std::vector<uint64_t> out;
    auto it = history_.find(idx);
    if (it == history_.end()) return {0};
    for (const auto& v : it->second) {
      if (v.start <= r && v.end >= a) out.push_back(v.value);
    }
    if (it->second.front().start > a) out.push_back(0);
    return out;
  }

  // ------------------------------------------------------------------ fetch engine
  void fetch(uint64_t addr, uint32_t len) {
    FetchReq r;
    r.addr = addr;
    r.len = len;
    fetch_queue_.push_back(fetches_.size());
    fetches_.push_back(std::move(r));
  }
  const std::vector<FetchReq>& fetches() const { return fetches_; }
  bool fetch_idle() const {
    return fetch_queue_.empty() && status_idx_ == fetches_.size() && !top_->busy_o;
  }

  // ------------------------------------------------------------------ direct port
  void translate(uint64_t vpn, bool write = false) { dx_queue_.push_back({vpn, write}); }
  const std::vector<DxReq>& dx() const { return dx_; }
  size_t dx_outstanding() const { return dx_queue_.size() + (dx_.size() - dx_rsp_idx_); }
  /// Translates one page and returns the response after the port drained (direct mode).
  DxReq translate_one(uint64_t vpn, bool write = false, uint64_t max_cycles = 20000) {
    translate(vpn, write);
    run_until_idle(max_cycles);
    return dx_.back();
  }

  // ------------------------------------------------------------------ fault record
  struct FaultRecord {
    bool valid, more, write, priv;
    Reason reason;
    uint64_t addr, fence;
    uint32_t context;
    unsigned client;  ///< 0 = fetch engine, 1 = direct port
  };
  FaultRecord fault_record() const {
    const Model& t = *top_;
    return {t.fault_valid_o != 0, t.fault_more_o != 0, t.fault_write_o != 0, t.fault_priv_o != 0,
            static_cast<Reason>(t.fault_reason_o), t.fault_addr_o, t.fault_fence_o, t.fault_context_o,
            static_cast<unsigned>(t.fault_client_o)};
  }
  void clear_fault() { clear_fault_ = true; }
  uint64_t fault_events() const { return fault_events_; }

  uint32_t perf_lookups() const { return top_->perf_lookups_o; }
  uint32_t perf_misses() const { return top_->perf_misses_o; }
  uint32_t perf_walks() const { return top_->perf_walks_o; }
  bool walk_busy() const { return top_->walk_busy_o != 0; }

  /// Bus pages any read was issued into (both masters), and the walker's read count.
  bool page_was_read(uint64_t bus_page) const { return pages_read_.count(bus_page) != 0; }
  uint64_t walker_reads() const { return walker_reads_; }
  void forget_reads() { pages_read_.clear(); }

  // ------------------------------------------------------------------ clock
  void step() {
    Model& t = *top_;
    drive_axi_read(t, axi_->outputs());
    // Fetch requests.
    const bool offer = !fetch_queue_.empty();
    t.req_valid_i = offer;
    if (offer) {
      const FetchReq& f = fetches_[fetch_queue_.front()];
      t.req_addr_i = f.addr;
      t.req_len_i = f.len;
      t.req_tag_i = static_cast<CData>(fetch_queue_.front() & 15);
    }
    t.data_ready_i = chance(config_.data_ready_prob);
    t.status_ready_i = 1;
    // Direct requests: a raised request is held until taken.
    const bool dx_offer = !dx_queue_.empty() && (dx_offered_ || chance(config_.dx_req_prob));
    dx_offered_ = dx_offer;
    t.dx_req_valid_i = dx_offer;
    if (dx_offer) {
      t.dx_req_vpn_i = dx_queue_.front().vpn;
      t.dx_req_write_i = dx_queue_.front().write;
    }
    t.dx_rsp_ready_i = chance(config_.dx_rsp_ready_prob);
    t.fault_clear_i = clear_fault_;
    t.clk_i = 0;
    t.eval();
    trace_->dump(2 * cycle_);

    AxiManagerOut sample{};
    sample_axi_read(t, sample);
    checker_->tick(sample, axi_->outputs());
    const bool ar_hs = sample.arvalid && axi_->outputs().arready;
    const bool req_hs = t.req_valid_i && t.req_ready_o;
    const bool data_hs = t.data_valid_o && t.data_ready_i;
    const bool status_hs = t.status_valid_o && t.status_ready_i;
    const bool dx_req_hs = t.dx_req_valid_i && t.dx_req_ready_o;
    const bool dx_rsp_hs = t.dx_rsp_valid_o && t.dx_rsp_ready_i;
    const bool inv_hs = t.inv_valid_i && t.inv_ready_o;
    const bool inv_done = t.inv_done_o;
    const bool fault_evt = t.fault_evt_o;
    std::array<uint8_t, kAxiMaxDataBytes> data{};
    if (data_hs) detail::bus_to_bytes(t.data_o, data.data(), kDataBytes);
    const uint64_t keep = t.data_keep_o;
    const auto status_err = static_cast<DmaErr>(t.status_err_o);
    Expect rsp;
    rsp.fault = t.dx_rsp_fault_o;
    rsp.ppn = t.dx_rsp_ppn_o;
    rsp.snoop = t.dx_rsp_snoop_o;

    t.clk_i = 1;
    t.eval();
    trace_->dump(2 * cycle_ + 1);

    axi_->tick(sample);
    if (ar_hs) {
      for (uint64_t p = sample.araddr >> 12; p <= (sample.araddr + (uint64_t{sample.arlen} + 1) * kDataBytes - 1) >> 12; ++p) {
        pages_read_.insert(p);
      }
      if (sample.arid == 1) ++walker_reads_;
    }
    if (req_hs) {
      fetches_[fetch_queue_.front()].accept_cycle = cycle_;
      fetch_queue_.pop_front();
    }
    if (data_hs) {
      unsigned n = 0;
      while (n < kDataBytes && ((keep >> n) & 1u)) ++n;
      if (data_idx_ < fetches_.size()) {
        auto& f = fetches_[data_idx_];
        f.data.insert(f.data.end(), data.begin(), data.begin() + n);
        if (f.data.size() >= f.len) ++data_idx_;
      } else {
        fail("data beat with no fetch expecting it");
      }
    }
    if (status_hs) {
      if (status_idx_ < fetches_.size()) {
        auto& f = fetches_[status_idx_];
        f.done = true;
        f.err = status_err;
        f.status_cycle = cycle_;
        if (status_err != DmaErr::Ok) data_idx_ = status_idx_ + 1;
        ++status_idx_;
      } else {
        fail("status with no fetch outstanding");
      }
    }
    if (dx_req_hs) {
      DxReq r;
      r.vpn = dx_queue_.front().vpn;
      r.write = dx_queue_.front().write;
      r.priv = priv_;
      r.accept_cycle = cycle_;
      dx_.push_back(r);
      dx_queue_.pop_front();
      dx_offered_ = false;
    }
    if (dx_rsp_hs) {
      if (dx_rsp_idx_ < dx_.size()) {
        auto& r = dx_[dx_rsp_idx_++];
        r.answered = true;
        r.rsp_cycle = cycle_;
        r.got = rsp;
        if (rsp.fault) r.got.ppn = 0;
      } else {
        fail("translation response with no request");
      }
    }
    if (inv_hs) {
      t.inv_valid_i = 0;
      inv_taken_ = true;
      inv_accepted_.push_back(inv_pending_.front());
      inv_pending_.pop_front();
    }
    if (inv_done) {
      if (inv_accepted_.empty()) {
        fail("invalidation done with none accepted");
      } else {
        const Inv& inv = inv_accepted_.front();
        for (auto& [idx, h] : history_) {
          if (!inv.all && (idx < inv.first || idx - inv.first >= inv.count)) continue;
          for (auto& v : h) {
            if (v.superseded <= inv.requested && v.end == kNever) v.end = cycle_;
          }
        }
        inv_accepted_.pop_front();
      }
    }
    if (fault_evt) ++fault_events_;
    clear_fault_ = false;
    ++cycle_;
  }

  void run(uint64_t cycles) {
    for (uint64_t i = 0; i < cycles; ++i) step();
  }

  /// Steps until fetches and direct translations are done and no walk or invalidation runs.
  bool run_until_idle(uint64_t max_cycles = 1'000'000) {
    const uint64_t limit = cycle_ + max_cycles;
    while (cycle_ < limit) {
      if (fetch_idle() && dx_outstanding() == 0 && !walk_busy() && !inv_busy() && inv_pending_.empty() &&
          axi_->idle()) {
        return true;
      }
      step();
    }
    fail("timeout waiting for idle");
    return false;
  }

  /// Bytes a fetch should have delivered: host memory at the translation of each GPU byte.
  void check_fetch_data(const FetchReq& f, const std::function<uint64_t(uint64_t)>& to_bus, std::size_t max_bytes) {
    for (size_t k = 0; k < f.data.size() && k < max_bytes; ++k) {
      const uint8_t want = memory_.read8(to_bus(f.addr + k));
      if (f.data[k] != want) {
        std::ostringstream m;
        m << "fetch 0x" << std::hex << f.addr << " byte " << std::dec << k << ": got 0x" << std::hex
          << unsigned{f.data[k]} << " want 0x" << unsigned{want};
        fail(m.str());
        return;
      }
    }
  }

  void fail(const std::string& what) {
    if (errors_.size() < 50) errors_.push_back("cycle " + std::to_string(cycle_) + ": " + what);
  }
  bool ok() const { return errors_.empty() && checker_->ok(); }
  std::string report() const {
    std::ostringstream out;
    out << "seed " << config_.seed << "\n";
    for (const auto& e : errors_) out << e << "\n";
    out << checker_->report();
    return out.str();
  }

  bool chance(double p) {
    if (p >= 1.0) return true;
    return std::uniform_real_distribution<double>(0, 1)(rng_) < p;
  }

private:
  static constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();
  struct PteVersion {
    uint64_t value;
    uint64_t start;
    uint64_t superseded;  ///< a newer value was written (kNever: current)
    uint64_t end;         ///< an invalidation after `superseded` completed (kNever: not yet)
  };
  struct Inv {
    bool all;
    uint32_t first, count;
    uint64_t requested;
  };
  struct DxQueued {
    uint64_t vpn;
    bool write;
  };

  HarnessConfig config_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> top_;
  std::unique_ptr<Trace<Model>> trace_;
  HostMemory memory_;
  std::unique_ptr<AxiMemoryModel> axi_;
  std::unique_ptr<AxiChecker> checker_;
  std::mt19937_64 rng_;
  uint64_t cycle_ = 0;

  bool enable_ = true;
  uint32_t table_size_ = 0;
  bool priv_ = false;
  std::map<uint64_t, std::vector<PteVersion>> history_;

  std::vector<FetchReq> fetches_;
  std::deque<size_t> fetch_queue_;
  size_t data_idx_ = 0;
  size_t status_idx_ = 0;

  std::deque<DxQueued> dx_queue_;
  bool dx_offered_ = false;
  std::vector<DxReq> dx_;
  size_t dx_rsp_idx_ = 0;

  std::deque<Inv> inv_pending_;
  std::deque<Inv> inv_accepted_;
  bool inv_taken_ = false;

  bool clear_fault_ = false;
  uint64_t fault_events_ = 0;
  std::unordered_set<uint64_t> pages_read_;
  uint64_t walker_reads_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace sgpu::tb::gart
