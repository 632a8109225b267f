// Drives the Verilated copy engine (sgpu_copy_tb_top) against the AXI memory model, with the
// protocol checker on every cycle and an optional C++ translator that refuses chosen pages.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>

#include <verilated.h>

#include "Vsgpu_copy_tb_top.h"
#include "common/axi_checker.hpp"
#include "common/axi_memory.hpp"
#include "common/axi_verilator.hpp"
#include "common/host_memory.hpp"
#include "common/sim_clock.hpp"

namespace sgpu::tb {

/// copy_err_e of rtl/copy/sgpu_copy_pkg.sv.
enum class CopyErr : std::uint8_t { Ok = 0, ReadError = 1, WriteError = 2, XlateFault = 3, Aborted = 4 };

struct CopyRequest {
  bool fill = false;
  std::uint64_t src = 0;
  std::uint64_t dst = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 1;
  std::uint32_t src_pitch = 0;
  std::uint32_t dst_pitch = 0;
  std::uint32_t pattern = 0;
};

struct CopyStatus {
  CopyErr err = CopyErr::Ok;
  std::uint64_t addr = 0;
  std::uint64_t cycles = 0;  ///< from the request handshake to the status
};

class CopyHarness {
 public:
  explicit CopyHarness(AxiMemoryModel::Config config, bool identity = true)
      : context_(std::make_unique<VerilatedContext>()),
        mem_model_(memory_, with_width(config)),
        checker_(sizeof(Vsgpu_copy_tb_top::m_axi_rdata), "copy") {
    context_->randReset(2);
    context_->randSeed(static_cast<int>(config.seed & 0x7fffffff));
    top_ = std::make_unique<Vsgpu_copy_tb_top>(context_.get(), "copy");
    trace_ = std::make_unique<Trace<Vsgpu_copy_tb_top>>(*top_);
    top_->use_identity_i = identity;
    top_->req_valid_i = 0;
    top_->status_ready_i = 0;
    top_->abort_i = 0;
    top_->xlate_req_ready_i = 1;
    top_->xlate_rsp_valid_i = 0;
    top_->clk_i = 0;
    top_->rst_ni = 1;
    top_->eval();
    top_->rst_ni = 0;
    top_->eval();
    for (int i = 0; i < 4; ++i) tick();
    top_->rst_ni = 1;
    tick();
  }
  ~CopyHarness() {
    trace_.reset();
    top_->final();
  }
  CopyHarness(const CopyHarness&) = delete;
  CopyHarness& operator=(const CopyHarness&) = delete;

  HostMemory& memory() { return memory_; }
  AxiMemoryModel& bus() { return mem_model_; }
  const AxiChecker& checker() const { return checker_; }
  Vsgpu_copy_tb_top& top() { return *top_; }
  std::uint64_t cycle() const { return cycle_; }
  /// Source pages (GPU page numbers) the C++ translator refuses.
  std::set<std::uint64_t>& faulting_pages() { return faulting_; }
  /// Probability that status_ready is high in a cycle.
  double status_ready_prob = 1.0;

  /// Runs one request to its status. `abort_after`: raise abort_i for one cycle this many
  /// cycles after the request was accepted (0 = never).
  CopyStatus run(const CopyRequest& r, std::uint64_t abort_after = 0, std::uint64_t max_cycles = 50'000'000) {
    auto& t = *top_;
    t.req_op_i = r.fill;
    t.req_src_i = r.src;
    t.req_dst_i = r.dst;
    t.req_width_i = r.width;
    t.req_height_i = r.height;
    t.req_src_pitch_i = r.src_pitch;
    t.req_dst_pitch_i = r.dst_pitch;
    t.req_pattern_i = r.pattern;
    t.req_valid_i = 1;
    std::uint64_t n = 0;
    while (true) {
      const bool accepted = t.req_ready_o;
      tick();
      if (accepted) break;
      if (++n > max_cycles) throw std::runtime_error("copy: request not accepted");
    }
    t.req_valid_i = 0;
    const std::uint64_t start = cycle_;
    CopyStatus s;
    for (n = 0;; ++n) {
      if (n > max_cycles) throw std::runtime_error("copy: no status within the cycle budget");
      t.abort_i = (abort_after != 0 && n + 1 == abort_after);
      t.status_ready_i = status_ready_prob >= 1.0 || unit_(rng_) < status_ready_prob;
      const bool hs = t.status_valid_o && t.status_ready_i;
      if (hs) {
        s.err = static_cast<CopyErr>(t.status_err_o);
        s.addr = t.status_addr_o;
      }
      tick();
      if (hs) break;
    }
    t.abort_i = 0;
    t.status_ready_i = 0;
    s.cycles = cycle_ - start;
    if (!checker_.ok()) throw std::runtime_error("AXI protocol violation: " + checker_.report());
    return s;
  }

  void tick() {
    auto& t = *top_;
    drive_axi_read(t, mem_model_.outputs());
    drive_axi_write(t, mem_model_.outputs());
    drive_translator();
    t.clk_i = 0;
    t.eval();
    trace_->dump(2 * cycle_);
    sample_axi_read(t, sampled_);
    sample_axi_write(t, sampled_);
    if (t.rst_ni) checker_.tick(sampled_, mem_model_.outputs());
    const bool xreq = t.xlate_req_valid_o && t.xlate_req_ready_i;
    const bool xrsp = t.xlate_rsp_valid_i && t.xlate_rsp_ready_o;
    const std::uint64_t vpn = t.xlate_req_vpn_o;
    t.clk_i = 1;
    t.eval();
    trace_->dump(2 * cycle_ + 1);
    mem_model_.tick(sampled_);
    if (xrsp) xlate_.pop_front();
    if (xreq) xlate_.push_back(vpn);
    ++cycle_;
  }

 private:
  static AxiMemoryModel::Config with_width(AxiMemoryModel::Config c) {
    c.data_bytes = sizeof(Vsgpu_copy_tb_top::m_axi_rdata);
    return c;
  }
  // Identity mapping, one cycle, in order; pages in faulting_ are refused.
  void drive_translator() {
    auto& t = *top_;
    t.xlate_rsp_valid_i = !xlate_.empty();
    if (!xlate_.empty()) {
      t.xlate_rsp_ppn_i = xlate_.front();
      t.xlate_rsp_fault_i = faulting_.count(xlate_.front()) != 0;
    }
  }

  std::unique_ptr<VerilatedContext> context_;
  std::unique_ptr<Vsgpu_copy_tb_top> top_;
  std::unique_ptr<Trace<Vsgpu_copy_tb_top>> trace_;
  HostMemory memory_;
  AxiMemoryModel mem_model_;
  AxiChecker checker_;
  AxiManagerOut sampled_{};
  std::deque<std::uint64_t> xlate_;
  std::set<std::uint64_t> faulting_;
  std::uint64_t cycle_ = 0;
  std::mt19937_64 rng_{7};
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

}  // namespace sgpu::tb
