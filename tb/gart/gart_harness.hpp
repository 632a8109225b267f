// The GART's bench (sgpu_gart_tb_top on tb::Bench): a DMA fetch engine translated by the GART,
// the GART's walker on the same AXI port (the shared AXI memory agent answers both), and a
// direct translation port. This harness is the agent that drives the fetch requests, the direct
// port and the invalidations, and keeps the scoreboard: the host memory (page table, pages), a
// C++ reference model of the translation, requests, responses, AXI reads and fault events.
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

#include "Vsgpu_gart_tb_top.h"
#include "common/axi_memory_agent.hpp"
#include "common/axi_verilator.hpp"
#include "common/bench.hpp"
#include "common/host_memory.hpp"
#include "sgpu/gen/abi.hpp"
#include "sgpu/gen/sgpu_reg_enums.hpp"

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

/// GART_FAULT_STATUS.reason (spec/registers.rdl, as the RTL's sgpu_gart_pkg::gart_fault_e).
using Reason = regs::GartFault;

/// Fetch engine status codes (spec/abi.toml, as the RTL's sgpu_dma_pkg::dma_err_e).
using DmaErr = abi::FetchError;

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

class GartHarness final : public Agent {
public:
  using Model = Vsgpu_gart_tb_top;

  static constexpr uint64_t kTableBase = 0x2'0000'0000ull;

  explicit GartHarness(HarnessConfig config = {})
      : config_(std::move(config)),
        rng_(config_.seed),
        bench_({"gart", 2, config_.seed, {}}),
        axi_(bench_.dut(), memory_, config_.memory, {true, "gart-axi"}) {
    bench_.add(axi_);
    bench_.add(*this);
    Model& t = bench_.dut();
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
    bench_.reset(2, 0, /*with_agents=*/false);
  }
  GartHarness(const GartHarness&) = delete;
  GartHarness& operator=(const GartHarness&) = delete;

  Model& top() { return bench_.dut(); }
  HostMemory& memory() { return memory_; }
  AxiMemoryModel& axi() { return axi_.model(); }
  const AxiChecker& checker() const { return axi_.checker(); }
  uint64_t cycle() const { return bench_.cycle(); }
  std::mt19937_64& rng() { return rng_; }

  // ------------------------------------------------------------------ configuration
  void set_mode(unsigned mode) { bench_.dut().mode_i = static_cast<CData>(mode); }
  void set_enable(bool on) {
    enable_ = on;
    bench_.dut().enable_i = on;
  }
  void set_table_size(uint32_t n) {
    table_size_ = n;
    bench_.dut().table_size_i = n;
  }
  void set_table_base(uint64_t base) { bench_.dut().table_base_i = base; }
  void set_exec(bool priv, uint64_t fence, uint32_t context) {
    priv_ = priv;
    bench_.dut().priv_i = priv;
    bench_.dut().fence_i = fence;
    bench_.dut().context_i = context;
  }
  bool enabled() const { return enable_; }
  uint32_t table_size() const { return table_size_; }
  bool priv() const { return priv_; }

  /// Writes PTE `idx` into the table in host memory and logs it for the model.
  void write_pte(uint64_t idx, uint64_t value) {
    memory_.write64(kTableBase + 8 * idx, value);
    auto& h = history_[idx];
    if (!h.empty()) h.back().superseded = cycle();
    h.push_back({value, cycle(), kNever, kNever});
  }
  uint64_t read_pte(uint64_t idx) const { return memory_.read64(kTableBase + 8 * idx); }

  static uint64_t ap_vpn(uint64_t idx) { return (kApBase >> 12) + idx; }
  static uint64_t ap_addr(uint64_t idx) { return kApBase + (idx << 12); }

  // ------------------------------------------------------------------ invalidation
  /// Requests an invalidation and runs until the GART takes it; returns the request cycle.
  uint64_t invalidate_start(bool all, uint32_t first = 0, uint32_t count = 0) {
    Model& t = bench_.dut();
    t.inv_all_i = all;
    t.inv_first_i = first;
    t.inv_count_i = count;
    t.inv_valid_i = 1;
    inv_pending_.push_back({all, first, count, cycle()});
    while (!inv_taken_) step();
    inv_taken_ = false;
    return inv_pending_.back().requested;
  }
  /// Runs until every invalidation completed (inv_busy low).
  void invalidate_wait(uint64_t max_cycles = 10000) {
    const uint64_t limit = cycle() + max_cycles;
    while ((top().inv_busy_o || !inv_pending_.empty()) && cycle() < limit) step();
    if (cycle() >= limit) fail("invalidation did not complete");
  }
  void invalidate(bool all, uint32_t first = 0, uint32_t count = 0) {
    invalidate_start(all, first, count);
    invalidate_wait();
  }
  bool inv_busy() const { return bench_.dut().inv_busy_o != 0; }

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
    return fetch_queue_.empty() && status_idx_ == fetches_.size() && !bench_.dut().busy_o;
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
    const Model& t = bench_.dut();
    return {t.fault_valid_o != 0, t.fault_more_o != 0, t.fault_write_o != 0, t.fault_priv_o != 0,
            static_cast<Reason>(t.fault_reason_o), t.fault_addr_o, t.fault_fence_o, t.fault_context_o,
            static_cast<unsigned>(t.fault_client_o)};
  }
  void clear_fault() { clear_fault_ = true; }
  uint64_t fault_events() const { return fault_events_; }

  uint32_t perf_lookups() const { return bench_.dut().perf_lookups_o; }
  uint32_t perf_misses() const { return bench_.dut().perf_misses_o; }
  uint32_t perf_walks() const { return bench_.dut().perf_walks_o; }
  bool walk_busy() const { return bench_.dut().walk_busy_o != 0; }

  /// Bus pages any read was issued into (both masters), and the walker's read count.
  bool page_was_read(uint64_t bus_page) const { return pages_read_.count(bus_page) != 0; }
  uint64_t walker_reads() const { return walker_reads_; }
  void forget_reads() { pages_read_.clear(); }

  ///////////
  // Clock //
  ///////////

  /// One clock cycle (bench.hpp: the memory, then this harness).
  void step() { bench_.tick(); }

  // Agent: fetch requests, the direct port, invalidations; the scoreboard.
  void drive() override {
    Model& t = bench_.dut();
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
  }

  void sample() override {
    const Model& t = bench_.dut();
    s_.req_hs = t.req_valid_i && t.req_ready_o;
    s_.data_hs = t.data_valid_o && t.data_ready_i;
    s_.status_hs = t.status_valid_o && t.status_ready_i;
    s_.dx_req_hs = t.dx_req_valid_i && t.dx_req_ready_o;
    s_.dx_rsp_hs = t.dx_rsp_valid_o && t.dx_rsp_ready_i;
    s_.inv_hs = t.inv_valid_i && t.inv_ready_o;
    s_.inv_done = t.inv_done_o;
    s_.fault_evt = t.fault_evt_o;
    s_.data.fill(0);
    if (s_.data_hs) detail::bus_to_bytes(t.data_o, s_.data.data(), kDataBytes);
    s_.keep = t.data_keep_o;
    s_.status_err = static_cast<DmaErr>(t.status_err_o);
    s_.rsp.fault = t.dx_rsp_fault_o;
    s_.rsp.ppn = t.dx_rsp_ppn_o;
    s_.rsp.snoop = t.dx_rsp_snoop_o;
  }

  void edge() override {
    Model& t = bench_.dut();
    const uint64_t now = bench_.cycle();
    const AxiManagerOut& sample = axi_.sampled();
    if (sample.arvalid && axi_.presented().arready) {
      const uint64_t end = sample.araddr + (uint64_t{sample.arlen} + 1) * kDataBytes - 1;
      for (uint64_t p = sample.araddr >> 12; p <= end >> 12; ++p) pages_read_.insert(p);
      if (sample.arid == 1) ++walker_reads_;
    }
    if (s_.req_hs) {
      fetches_[fetch_queue_.front()].accept_cycle = now;
      fetch_queue_.pop_front();
    }
    if (s_.data_hs) {
      unsigned n = 0;
      while (n < kDataBytes && ((s_.keep >> n) & 1u)) ++n;
      if (data_idx_ < fetches_.size()) {
        auto& f = fetches_[data_idx_];
        f.data.insert(f.data.end(), s_.data.begin(), s_.data.begin() + n);
        if (f.data.size() >= f.len) ++data_idx_;
      } else {
        fail("data beat with no fetch expecting it");
      }
    }
    if (s_.status_hs) {
      if (status_idx_ < fetches_.size()) {
        auto& f = fetches_[status_idx_];
        f.done = true;
        f.err = s_.status_err;
        f.status_cycle = now;
        if (s_.status_err != DmaErr::Ok) data_idx_ = status_idx_ + 1;
        ++status_idx_;
      } else {
        fail("status with no fetch outstanding");
      }
    }
    if (s_.dx_req_hs) {
      DxReq r;
      r.vpn = dx_queue_.front().vpn;
      r.write = dx_queue_.front().write;
      r.priv = priv_;
      r.accept_cycle = now;
      dx_.push_back(r);
      dx_queue_.pop_front();
      dx_offered_ = false;
    }
    if (s_.dx_rsp_hs) {
      if (dx_rsp_idx_ < dx_.size()) {
        auto& r = dx_[dx_rsp_idx_++];
        r.answered = true;
        r.rsp_cycle = now;
        r.got = s_.rsp;
        if (s_.rsp.fault) r.got.ppn = 0;
      } else {
        fail("translation response with no request");
      }
    }
    if (s_.inv_hs) {
      t.inv_valid_i = 0;
      inv_taken_ = true;
      inv_accepted_.push_back(inv_pending_.front());
      inv_pending_.pop_front();
    }
    if (s_.inv_done) {
      if (inv_accepted_.empty()) {
        fail("invalidation done with none accepted");
      } else {
        const Inv& inv = inv_accepted_.front();
        for (auto& [idx, h] : history_) {
          if (!inv.all && (idx < inv.first || idx - inv.first >= inv.count)) continue;
          for (auto& v : h) {
            if (v.superseded <= inv.requested && v.end == kNever) v.end = now;
          }
        }
        inv_accepted_.pop_front();
      }
    }
    if (s_.fault_evt) ++fault_events_;
    clear_fault_ = false;
  }

  void run(uint64_t cycles) {
    for (uint64_t i = 0; i < cycles; ++i) step();
  }

  /// Steps until fetches and direct translations are done and no walk or invalidation runs.
  bool run_until_idle(uint64_t max_cycles = 1'000'000) {
    const uint64_t limit = cycle() + max_cycles;
    while (cycle() < limit) {
      if (fetch_idle() && dx_outstanding() == 0 && !walk_busy() && !inv_busy() && inv_pending_.empty() &&
          axi_.model().idle()) {
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
    if (errors_.size() < 50) errors_.push_back("cycle " + std::to_string(cycle()) + ": " + what);
  }
  bool ok() const { return errors_.empty() && axi_.checker().ok(); }
  std::string report() const {
    std::ostringstream out;
    out << "seed " << config_.seed << "\n";
    for (const auto& e : errors_) out << e << "\n";
    out << axi_.checker().report();
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
  std::mt19937_64 rng_;
  HostMemory memory_;
  Bench<Model> bench_;
  AxiMemoryAgent<Model, true, false> axi_;

  /// This cycle's handshakes and outputs, sampled for the edge.
  struct Sampled {
    bool req_hs = false, data_hs = false, status_hs = false, dx_req_hs = false, dx_rsp_hs = false;
    bool inv_hs = false, inv_done = false, fault_evt = false;
    std::array<uint8_t, kAxiMaxDataBytes> data{};
    uint64_t keep = 0;
    DmaErr status_err = DmaErr::Ok;
    Expect rsp;
  } s_;

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
