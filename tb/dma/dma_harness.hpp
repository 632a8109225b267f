// Drives the Verilated DMA fetch engine (sgpu_dma_rd_tb_top) with a host-memory model, a
// translator model, a randomised consumer and a scoreboard. Shared by the tests and the
// benchmark; SGPU_DMA_WIDTH (64 or 128) selects the model this program links.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <unordered_set>
#include <vector>

#include <verilated.h>

#include "Vsgpu_dma_rd_tb_top.h"
#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/axi_verilator.hpp"
#include "common/host_memory.hpp"
#include "common/sim_clock.hpp"

#ifndef SGPU_DMA_WIDTH
#error "SGPU_DMA_WIDTH must name the bus width of the linked model (64 or 128)"
#endif

namespace sgpu::tb::dma {

inline constexpr unsigned kDataBytes = SGPU_DMA_WIDTH / 8;

/// Status codes, as sgpu_dma_pkg::dma_err_e.
enum class DmaErr : uint8_t { Ok = 0, BusSlvErr = 1, BusDecErr = 2, XlateFault = 3, Aborted = 4 };

inline const char* to_string(DmaErr e) {
  switch (e) {
    case DmaErr::Ok: return "Ok";
    case DmaErr::BusSlvErr: return "BusSlvErr";
    case DmaErr::BusDecErr: return "BusDecErr";
    case DmaErr::XlateFault: return "XlateFault";
    case DmaErr::Aborted: return "Aborted";
  }
  return "?";
}

struct HarnessConfig {
  AxiMemoryModel::Config memory{};  ///< data_bytes is set by the harness
  double data_ready_prob = 1.0;     ///< consumer back-pressure on the data stream
  double status_ready_prob = 1.0;
  double req_valid_prob = 1.0;      ///< gaps between requests offered
  /// Translator: the RTL identity translator, or the C++ model below.
  bool rtl_identity = true;
  unsigned xlate_latency_min = 1;
  unsigned xlate_latency_max = 1;
  double xlate_req_ready_prob = 1.0;
  std::function<uint64_t(uint64_t)> map_page;  ///< vpn -> ppn; empty = identity
  std::unordered_set<uint64_t> fault_pages;    ///< vpns the translator refuses
  uint64_t seed = 1;
};

/// One request as the scoreboard tracks it.
struct Tracked {
  uint64_t addr = 0;
  uint32_t len = 0;
  uint8_t tag = 0;
  std::vector<uint8_t> data;  ///< bytes received so far
  bool got_last = false;
  bool has_status = false;
  DmaErr err = DmaErr::Ok;
  uint64_t accept_cycle = 0;
  uint64_t status_cycle = 0;
};

class DmaHarness {
public:
  using Model = Vsgpu_dma_rd_tb_top;

  explicit DmaHarness(HarnessConfig config)
      : config_(std::move(config)),
        context_(std::make_unique<VerilatedContext>()),
        rng_(config_.seed) {
    config_.memory.data_bytes = kDataBytes;
    context_->randReset(2);
    context_->randSeed(static_cast<int>(config_.seed & 0x7fffffff));
    top_ = std::make_unique<Model>(context_.get(), "dma");
    trace_ = std::make_unique<Trace<Model>>(*top_);
    axi_ = std::make_unique<AxiMemoryModel>(memory_, config_.memory);
    checker_ = std::make_unique<AxiChecker>(kDataBytes, "dma-axi");
    reset();
  }
  ~DmaHarness() { top_->final(); }
  DmaHarness(const DmaHarness&) = delete;
  DmaHarness& operator=(const DmaHarness&) = delete;

  HostMemory& memory() { return memory_; }
  AxiMemoryModel& axi() { return *axi_; }
  const AxiChecker& checker() const { return *checker_; }
  Model& top() { return *top_; }
  uint64_t cycle() const { return cycle_; }
  const std::deque<Tracked>& tracked() const { return tracked_; }
  const std::vector<std::string>& errors() const { return errors_; }
  size_t pending_submissions() const { return to_submit_.size(); }
  size_t completed() const { return status_idx_; }
  uint64_t bytes_delivered() const { return bytes_delivered_; }
  HarnessConfig& config() { return config_; }

  /// Resets engine, translator model and memory model (reads in flight are dropped, as a
  /// system reset does). The scoreboard forgets requests that had no status.
  void reset() {
    // rst_ni must fall to trigger the asynchronous reset; hold it over two clock edges.
    top_->use_identity_i = config_.rtl_identity;
    top_->abort_i = 0;
    top_->req_valid_i = 0;
    top_->m_axi_rvalid = 0;
    top_->xlate_rsp_valid_i = 0;
    top_->clk_i = 0;
    top_->rst_ni = 1;
    top_->eval();
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 2; ++i) {
      top_->clk_i = 1;
      top_->eval();
      top_->clk_i = 0;
      top_->eval();
    }
    top_->rst_ni = 1;
    top_->eval();
    axi_->reset();
    checker_->reset();
    xlate_pending_.clear();
    xlate_rsp_valid_ = false;
    // Requests without status were lost with the reset.
    tracked_.resize(status_idx_);
    data_idx_ = status_idx_;
  }

  /// Queues a request for the engine (offered when earlier ones were accepted).
  void submit(uint64_t addr, uint32_t len, uint8_t tag) { to_submit_.push_back({addr, len, tag}); }

  void set_abort(bool abort) { abort_ = abort; }
  bool busy() const { return top_->busy_o != 0; }
  /// True if any AXI read was issued into this physical page.
  bool page_was_read(uint64_t page_number) const { return pages_read_.count(page_number) != 0; }

  /// Physical (bus) address of a GPU address under the translator's mapping.
  uint64_t physical(uint64_t addr) const {
    if (config_.rtl_identity || !config_.map_page) return addr;
    return (config_.map_page(addr >> 12) << 12) | (addr & 0xFFF);
  }

  /// Fills every physical page the request (and the beats around it) touches with random
  /// bytes, unless the page already exists.
  void fill_random_for(uint64_t addr, uint64_t len) {
    const uint64_t first = (addr - std::min<uint64_t>(addr, kDataBytes)) >> 12;
    const uint64_t last = (addr + len + kDataBytes) >> 12;
    for (uint64_t vpn = first; vpn <= last; ++vpn) {
      const uint64_t page = physical(vpn << 12);
      if (memory_.find_page(page) != nullptr) continue;
      uint8_t* p = memory_.page_ptr(page);
      for (unsigned i = 0; i < 4096; i += 8) {
        const uint64_t r = rng_();
        std::memcpy(p + i, &r, 8);
      }
    }
  }

  /// Error ranges (physical) injected into the memory model, for the expected status.
  void inject_error(uint64_t lo, uint64_t hi, uint8_t resp) {
    axi_->inject_error(lo, hi, resp);
    error_ranges_.push_back({lo, hi, resp});
  }

  /// The status the engine must report for a request, barring abort.
  DmaErr expected_status(uint64_t addr, uint32_t len) const {
    uint64_t pos = addr;
    const uint64_t end = addr + len;
    while (pos < end) {
      const uint64_t page_end = ((pos >> 12) + 1) << 12;
      const uint64_t seg_end = std::min(end, page_end);
      if (!config_.rtl_identity && config_.fault_pages.count(pos >> 12) != 0) {
        return DmaErr::XlateFault;
      }
      // The engine reads whole aligned beats.
      for (uint64_t beat = pos & ~uint64_t{kDataBytes - 1}; beat < seg_end; beat += kDataBytes) {
        const uint64_t pb = physical(beat);
        for (const auto& r : error_ranges_) {
          if (pb < r.hi && r.lo < pb + kDataBytes) {
            return r.resp == kAxiRespDecErr ? DmaErr::BusDecErr : DmaErr::BusSlvErr;
          }
        }
      }
      pos = seg_end;
    }
    return DmaErr::Ok;
  }

  /// One clock cycle (see sim_clock.hpp for the order).
  void step() {
    Model& t = *top_;
    // 1. Drive inputs for this cycle.
    drive_axi_read(t, axi_->outputs());
    t.abort_i = abort_;
    t.use_identity_i = config_.rtl_identity;
    const bool offer = !to_submit_.empty() && (req_offered_ || chance(config_.req_valid_prob));
    req_offered_ = offer;
    t.req_valid_i = offer;
    if (offer) {
      t.req_addr_i = to_submit_.front().addr;
      t.req_len_i = to_submit_.front().len;
      t.req_tag_i = to_submit_.front().tag;
    }
    t.data_ready_i = chance(config_.data_ready_prob);
    t.status_ready_i = chance(config_.status_ready_prob);
    const bool xreq_ready = xlate_pending_.size() < 8 && chance(config_.xlate_req_ready_prob);
    t.xlate_req_ready_i = xreq_ready;
    t.xlate_rsp_valid_i = xlate_rsp_valid_;
    t.xlate_rsp_ppn_i = xlate_rsp_ppn_;
    t.xlate_rsp_fault_i = xlate_rsp_fault_;
    t.clk_i = 0;
    t.eval();
    trace_->dump(2 * cycle_);

    // 2. Sample.
    AxiManagerOut sample{};
    sample_axi_read(t, sample);
    checker_->tick(sample, axi_->outputs());
    axi_outputs_arready_ = axi_->outputs().arready;
    const bool req_hs = t.req_valid_i && t.req_ready_o;
    const bool data_hs = t.data_valid_o && t.data_ready_i;
    const bool status_hs = t.status_valid_o && t.status_ready_i;
    const bool xreq_hs = t.xlate_req_valid_o && t.xlate_req_ready_i;
    const bool xrsp_hs = t.xlate_rsp_valid_i && t.xlate_rsp_ready_o;
    std::array<uint8_t, kAxiMaxDataBytes> data{};
    if (data_hs) detail::bus_to_bytes(t.data_o, data.data(), kDataBytes);
    const uint64_t keep = t.data_keep_o;
    const bool last = t.data_last_o;
    const uint8_t status_tag = t.status_tag_o;
    const auto status_err = static_cast<DmaErr>(t.status_err_o);
    const uint64_t xreq_vpn = t.xlate_req_vpn_o;

    // 3. Rising edge.
    t.clk_i = 1;
    t.eval();
    trace_->dump(2 * cycle_ + 1);

    // 4. Models' edge.
    axi_->tick(sample);
    if (sample.arvalid && axi_outputs_arready_) pages_read_.insert(sample.araddr >> 12);
    if (req_hs) {
      Tracked r;
      r.addr = to_submit_.front().addr;
      r.len = to_submit_.front().len;
      r.tag = to_submit_.front().tag;
      r.accept_cycle = cycle_;
      tracked_.push_back(std::move(r));
      to_submit_.pop_front();
      req_offered_ = false;
    }
    if (data_hs) on_data(data, keep, last);
    if (status_hs) on_status(status_tag, status_err);
    xlate_edge(xreq_hs, xreq_vpn, xrsp_hs);
    ++cycle_;
  }

  /// Steps until every submitted request has its status and the engine is idle.
  bool run_until_done(uint64_t max_cycles) {
    const uint64_t limit = cycle_ + max_cycles;
    while (cycle_ < limit) {
      if (to_submit_.empty() && status_idx_ == tracked_.size() && !busy() && axi_->idle()) {
        return true;
      }
      step();
    }
    fail("timeout: " + std::to_string(tracked_.size() - status_idx_) + " requests without status");
    return false;
  }

  /// Checks every finished request's data against memory (call after run_until_done).
  /// `allow_abort`: DmaAborted is acceptable (with any prefix of the data).
  void check_all(bool allow_abort = false) {
    for (size_t i = 0; i < status_idx_; ++i) check_request(i, allow_abort);
  }

  bool ok() const { return errors_.empty() && checker_->ok(); }
  std::string report() const {
    std::ostringstream out;
    out << "seed " << config_.seed << "\n";
    for (size_t i = 0; i < errors_.size() && i < 20; ++i) out << errors_[i] << '\n';
    out << checker_->report();
    return out.str();
  }

private:
  struct Submission {
    uint64_t addr;
    uint32_t len;
    uint8_t tag;
  };
  struct ErrorRange {
    uint64_t lo, hi;
    uint8_t resp;
  };
  struct XlatePending {
    uint64_t vpn;
    uint64_t ready_cycle;
  };

  bool chance(double p) {
    if (p >= 1.0) return true;
    return std::uniform_real_distribution<double>(0, 1)(rng_) < p;
  }

  void fail(const std::string& what) {
    if (errors_.size() < 100) errors_.push_back("cycle " + std::to_string(cycle_) + ": " + what);
  }

  void on_data(const std::array<uint8_t, kAxiMaxDataBytes>& data, uint64_t keep, bool last) {
    if (data_idx_ >= tracked_.size()) {
      fail("data beat with no request expecting data");
      return;
    }
    Tracked& r = tracked_[data_idx_];
    // keep must be a run of low lanes, full except on the last beat.
    const uint64_t full = kDataBytes >= 64 ? ~uint64_t{0} : (uint64_t{1} << kDataBytes) - 1;
    unsigned n = 0;
    while (n < kDataBytes && ((keep >> n) & 1u)) ++n;
    if (keep != ((n == 64) ? ~uint64_t{0} : (uint64_t{1} << n) - 1) || n == 0) {
      fail("keep is not a run of low lanes");
    }
    if (!last && keep != full) fail("partial keep on a beat that is not last");
    for (unsigned i = n; i < kDataBytes; ++i) {
      if (data[i] != 0) {
        fail("byte outside the request reached the consumer (lane " + std::to_string(i) + ")");
        break;
      }
    }
    r.data.insert(r.data.end(), data.begin(), data.begin() + n);
    bytes_delivered_ += n;
    if (r.data.size() > r.len) fail("more data than requested for tag " + std::to_string(r.tag));
    if (last) {
      r.got_last = true;
      if (r.data.size() != r.len) {
        fail("last beat after " + std::to_string(r.data.size()) + " of " + std::to_string(r.len) +
             " bytes");
      }
      ++data_idx_;
    }
  }

  void on_status(uint8_t tag, DmaErr err) {
    if (status_idx_ >= tracked_.size()) {
      fail("status with no request outstanding");
      return;
    }
    Tracked& r = tracked_[status_idx_];
    r.has_status = true;
    r.err = err;
    r.status_cycle = cycle_;
    if (tag != r.tag) fail("status tag " + std::to_string(tag) + " expected " + std::to_string(r.tag));
    if (err == DmaErr::Ok && r.len == 0) {
      // An empty request completes without data.
      if (data_idx_ != status_idx_) fail("empty request completed out of order");
      data_idx_ = status_idx_ + 1;
    } else if (err == DmaErr::Ok) {
      if (!r.got_last) fail("OK status before the last data beat");
    } else {
      if (r.got_last) fail("error status for a request that delivered its last beat");
      if (data_idx_ != status_idx_) fail("truncated request is not the one receiving data");
      data_idx_ = status_idx_ + 1;
    }
    ++status_idx_;
  }

  void xlate_edge(bool req_hs, uint64_t vpn, bool rsp_hs) {
    if (rsp_hs) {
      xlate_pending_.pop_front();
      xlate_rsp_valid_ = false;
    }
    if (req_hs) {
      const unsigned span = config_.xlate_latency_max - config_.xlate_latency_min + 1;
      const uint64_t latency = config_.xlate_latency_min + rng_() % span;
      uint64_t ready = cycle_ + latency;
      if (!xlate_pending_.empty()) ready = std::max(ready, xlate_pending_.back().ready_cycle);
      xlate_pending_.push_back({vpn, ready});
    }
    // A raised response is held until taken.
    if (!xlate_rsp_valid_ && !xlate_pending_.empty() &&
        xlate_pending_.front().ready_cycle <= cycle_ + 1) {
      const uint64_t v = xlate_pending_.front().vpn;
      xlate_rsp_valid_ = true;
      xlate_rsp_fault_ = config_.fault_pages.count(v) != 0;
      xlate_rsp_ppn_ = config_.map_page ? config_.map_page(v) : v;
    }
  }

  void check_request(size_t i, bool allow_abort) {
    const Tracked& r = tracked_[i];
    std::ostringstream who;
    who << "request " << i << " (addr 0x" << std::hex << r.addr << std::dec << " len " << r.len
        << " tag " << unsigned{r.tag} << ")";
    const DmaErr want = expected_status(r.addr, r.len);
    if (r.err != want && !(allow_abort && r.err == DmaErr::Aborted)) {
      fail(who.str() + ": status " + to_string(r.err) + ", expected " + to_string(want));
    }
    if (r.err == DmaErr::Ok && r.data.size() != r.len) {
      fail(who.str() + ": " + std::to_string(r.data.size()) + " bytes delivered");
    }
    // Whatever was delivered must be the request's bytes, in order.
    for (size_t k = 0; k < r.data.size() && k < r.len; ++k) {
      const uint8_t expect = memory_.read8(physical(r.addr + k));
      if (r.data[k] != expect) {
        std::ostringstream msg;
        msg << who.str() << ": byte " << k << " is 0x" << std::hex << unsigned{r.data[k]}
            << ", memory has 0x" << unsigned{expect};
        fail(msg.str());
        break;
      }
    }
  }

  HarnessConfig config_;
  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Model> top_;
  std::unique_ptr<Trace<Model>> trace_;
  HostMemory memory_;
  std::unique_ptr<AxiMemoryModel> axi_;
  std::unique_ptr<AxiChecker> checker_;
  std::mt19937_64 rng_;

  std::deque<Submission> to_submit_;
  bool req_offered_ = false;
  bool abort_ = false;
  std::deque<Tracked> tracked_;
  size_t data_idx_ = 0;    ///< request receiving data beats
  size_t status_idx_ = 0;  ///< request whose status comes next
  uint64_t bytes_delivered_ = 0;
  std::vector<ErrorRange> error_ranges_;
  std::vector<std::string> errors_;

  std::deque<XlatePending> xlate_pending_;
  bool xlate_rsp_valid_ = false;
  uint64_t xlate_rsp_ppn_ = 0;
  bool xlate_rsp_fault_ = false;

  bool axi_outputs_arready_ = false;
  std::unordered_set<uint64_t> pages_read_;  ///< physical pages any read was issued into

  uint64_t cycle_ = 0;
};

}  // namespace sgpu::tb::dma
