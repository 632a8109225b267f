// The DMA fetch engine's bench (sgpu_dma_rd_tb_top on tb::Bench): the shared AXI memory agent
// and translator agent, plus this harness as the agent that offers requests, consumes data and
// statuses at random, and keeps the scoreboard. Shared by the tests and the benchmark;
// SGPU_DMA_WIDTH (64 or 128) selects the model this program links.
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

#include "Vsgpu_dma_rd_tb_top.h"
#include "common/axi_memory_agent.hpp"
#include "common/axi_verilator.hpp"
#include "common/bench.hpp"
#include "common/host_memory.hpp"
#include "common/translator.hpp"
#include "sgpu/gen/abi.hpp"

#ifndef SGPU_DMA_WIDTH
#error "SGPU_DMA_WIDTH must name the bus width of the linked model (64 or 128)"
#endif

namespace sgpu::tb::dma {

inline constexpr unsigned kDataBytes = SGPU_DMA_WIDTH / 8;

/// Status codes: the fetch error codes of spec/abi.toml (sgpu_dma_pkg::dma_err_e in the RTL).
using DmaErr = abi::FetchError;

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

class DmaHarness final : public Agent {
public:
  using Model = Vsgpu_dma_rd_tb_top;

  explicit DmaHarness(HarnessConfig config)
      : config_(std::move(config)),
        rng_(config_.seed),
        bench_({"dma", 2, config_.seed, {}}),
        axi_(bench_.dut(), memory_, config_.memory, {true, "dma-axi"}),
        translator_({config_.xlate_latency_min, config_.xlate_latency_max, config_.xlate_req_ready_prob,
                     8, config_.map_page, config_.fault_pages},
                    rng_),
        translator_agent_(bench_.dut(), translator_) {
    bench_.add(axi_);
    bench_.add(*this);
    bench_.add(translator_agent_);
    reset();
  }
  DmaHarness(const DmaHarness&) = delete;
  DmaHarness& operator=(const DmaHarness&) = delete;

  HostMemory& memory() { return memory_; }
  AxiMemoryModel& axi() { return axi_.model(); }
  const AxiChecker& checker() const { return axi_.checker(); }
  Model& top() { return bench_.dut(); }
  uint64_t cycle() const { return bench_.cycle(); }
  const std::deque<Tracked>& tracked() const { return tracked_; }
  const std::vector<std::string>& errors() const { return errors_; }
  size_t pending_submissions() const { return to_submit_.size(); }
  size_t completed() const { return status_idx_; }
  uint64_t bytes_delivered() const { return bytes_delivered_; }
  HarnessConfig& config() { return config_; }

  /// Resets engine, translator model and memory model (reads in flight are dropped, as a
  /// system reset does). The scoreboard forgets requests that had no status.
  void reset() {
    Model& t = bench_.dut();
    t.use_identity_i = config_.rtl_identity;
    t.abort_i = 0;
    t.req_valid_i = 0;
    t.m_axi_rvalid = 0;
    t.xlate_rsp_valid_i = 0;
    // rst_ni falls to trigger the asynchronous reset and is held over two clock edges.
    bench_.reset(2, 0, /*with_agents=*/false);
    axi_.reset();
    translator_.reset();
    // Requests without status were lost with the reset.
    tracked_.resize(status_idx_);
    data_idx_ = status_idx_;
  }

  /// Queues a request for the engine (offered when earlier ones were accepted).
  void submit(uint64_t addr, uint32_t len, uint8_t tag) { to_submit_.push_back({addr, len, tag}); }

  void set_abort(bool abort) { abort_ = abort; }
  bool busy() const { return bench_.dut().busy_o != 0; }
  /// The pages the engine asked the translation port for, in order (the C++ translator only:
  /// with rtl_identity the port is not used).
  const std::vector<uint64_t>& xlate_requests() const { return xlate_requests_; }
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
    axi_.model().inject_error(lo, hi, resp);
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

  /// One clock cycle (bench.hpp: the memory, this harness, the translator).
  void step() { bench_.tick(); }

  // Agent: offer requests, take data and statuses (at random), keep the scoreboard.
  void drive() override {
    Model& t = bench_.dut();
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
  }
  void sample() override {
    const Model& t = bench_.dut();
    req_hs_ = t.req_valid_i && t.req_ready_o;
    data_hs_ = t.data_valid_o && t.data_ready_i;
    status_hs_ = t.status_valid_o && t.status_ready_i;
    xlate_hs_ = t.xlate_req_valid_o && t.xlate_req_ready_i;
    xlate_vpn_ = t.xlate_req_vpn_o;
    data_.fill(0);
    if (data_hs_) detail::bus_to_bytes(t.data_o, data_.data(), kDataBytes);
    keep_ = t.data_keep_o;
    last_ = t.data_last_o;
    status_tag_ = t.status_tag_o;
    status_err_ = static_cast<DmaErr>(t.status_err_o);
  }
  void edge() override {
    if (axi_.sampled().arvalid && axi_.presented().arready) pages_read_.insert(axi_.sampled().araddr >> 12);
    if (xlate_hs_) xlate_requests_.push_back(xlate_vpn_);
    if (req_hs_) {
      Tracked r;
      r.addr = to_submit_.front().addr;
      r.len = to_submit_.front().len;
      r.tag = to_submit_.front().tag;
      r.accept_cycle = bench_.cycle();
      tracked_.push_back(std::move(r));
      to_submit_.pop_front();
      req_offered_ = false;
    }
    if (data_hs_) on_data(data_, keep_, last_);
    if (status_hs_) on_status(status_tag_, status_err_);
  }

  /// Steps until every submitted request has its status and the engine is idle.
  bool run_until_done(uint64_t max_cycles) {
    const uint64_t limit = cycle() + max_cycles;
    while (cycle() < limit) {
      if (to_submit_.empty() && status_idx_ == tracked_.size() && !busy() && axi_.model().idle()) {
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

  bool ok() const { return errors_.empty() && axi_.checker().ok(); }
  std::string report() const {
    std::ostringstream out;
    out << "seed " << config_.seed << "\n";
    for (size_t i = 0; i < errors_.size() && i < 20; ++i) out << errors_[i] << '\n';
    out << axi_.checker().report();
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
    if (errors_.size() < 100) errors_.push_back("cycle " + std::to_string(cycle()) + ": " + what);
  }

  void on_data(const std::array<uint8_t, kAxiMaxDataBytes>& data, uint64_t keep, bool last) {
    // An empty request has no beats, and its status may come after the next request's data
    // (statuses leave through their own FIFO): the data belongs to the first non-empty request.
    while (data_idx_ < tracked_.size() && tracked_[data_idx_].len == 0) ++data_idx_;
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
    r.status_cycle = cycle();
    if (tag != r.tag) fail("status tag " + std::to_string(tag) + " expected " + std::to_string(r.tag));
    if (err == DmaErr::Ok && r.len == 0) {
      // An empty request completes without data (the next request's may have gone ahead).
      if (data_idx_ < status_idx_) fail("empty request completed out of order");
      data_idx_ = std::max(data_idx_, status_idx_ + 1);
    } else if (err == DmaErr::Ok) {
      if (!r.got_last) fail("OK status before the last data beat");
    } else {
      if (r.got_last) fail("error status for a request that delivered its last beat");
      if (data_idx_ != status_idx_) fail("truncated request is not the one receiving data");
      data_idx_ = status_idx_ + 1;
    }
    ++status_idx_;
  }

  void check_request(size_t i, bool allow_abort) {
    const Tracked& r = tracked_[i];
    std::ostringstream who;
    who << "request " << i << " (addr 0x" << std::hex << r.addr << std::dec << " len " << r.len
        << " tag " << unsigned{r.tag} << ")";
    const DmaErr want = expected_status(r.addr, r.len);
    if (r.err != want && !(allow_abort && r.err == DmaErr::Aborted)) {
      fail(who.str() + ": status " + std::string(abi::to_string(r.err)) + ", expected " +
           std::string(abi::to_string(want)));
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
  std::mt19937_64 rng_;
  HostMemory memory_;
  Bench<Model> bench_;
  AxiMemoryAgent<Model, true, false> axi_;
  Translator translator_;
  TranslatorAgent<Model> translator_agent_;

  std::deque<Submission> to_submit_;
  bool req_offered_ = false;
  bool abort_ = false;
  std::deque<Tracked> tracked_;
  size_t data_idx_ = 0;    ///< request receiving data beats
  size_t status_idx_ = 0;  ///< request whose status comes next
  uint64_t bytes_delivered_ = 0;
  std::vector<ErrorRange> error_ranges_;
  std::vector<std::string> errors_;
  std::unordered_set<uint64_t> pages_read_;  ///< physical pages any read was issued into
  std::vector<uint64_t> xlate_requests_;

  // This cycle's handshakes, sampled for the edge.
  bool req_hs_ = false, data_hs_ = false, status_hs_ = false, last_ = false, xlate_hs_ = false;
  uint64_t xlate_vpn_ = 0;
  std::array<uint8_t, kAxiMaxDataBytes> data_{};
  uint64_t keep_ = 0;
  uint8_t status_tag_ = 0;
  DmaErr status_err_ = DmaErr::Ok;
};

}  // namespace sgpu::tb::dma
