// The copy engine's bench (sgpu_copy_tb_top on tb::Bench): the shared AXI memory agent (reads
// and writes, protocol checker on every cycle) and the shared translator agent (identity, one
// cycle, refusing chosen source pages); run() offers one request and waits for its status.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <unordered_set>
#include <random>
#include <stdexcept>
#include <string>

#include "Vsgpu_copy_tb_top.h"
#include "common/axi_memory_agent.hpp"
#include "common/bench.hpp"
#include "common/host_memory.hpp"
#include "common/translator.hpp"

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
  using Model = Vsgpu_copy_tb_top;

  explicit CopyHarness(AxiMemoryModel::Config config, bool identity = true)
      : bench_({"copy", 2, config.seed, {}}),
        mem_(bench_.dut(), memory_, config, {true, "copy"}),
        translator_({}, xlate_rng_),
        translator_agent_(bench_.dut(), translator_) {
    bench_.add(mem_);
    bench_.add(translator_agent_);
    auto& t = bench_.dut();
    t.use_identity_i = identity;
    t.req_valid_i = 0;
    t.status_ready_i = 0;
    t.abort_i = 0;
    t.xlate_req_ready_i = 1;
    t.xlate_rsp_valid_i = 0;
    bench_.reset(4, 1, /*with_agents=*/true);
  }
  CopyHarness(const CopyHarness&) = delete;
  CopyHarness& operator=(const CopyHarness&) = delete;

  HostMemory& memory() { return memory_; }
  AxiMemoryModel& bus() { return mem_.model(); }
  const AxiChecker& checker() const { return mem_.checker(); }
  Model& top() { return bench_.dut(); }
  std::uint64_t cycle() const { return bench_.cycle(); }
  /// Source pages (GPU page numbers) the C++ translator refuses.
  std::unordered_set<std::uint64_t>& faulting_pages() { return translator_.config().faulting; }
  /// Probability that status_ready is high in a cycle.
  double status_ready_prob = 1.0;

  /// Runs one request to its status. `abort_after`: raise abort_i for one cycle this many
  /// cycles after the request was accepted (0 = never).
  CopyStatus run(const CopyRequest& r, std::uint64_t abort_after = 0, std::uint64_t max_cycles = 50'000'000) {
    auto& t = bench_.dut();
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
    const std::uint64_t start = cycle();
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
    s.cycles = cycle() - start;
    if (!mem_.checker().ok()) throw std::runtime_error("AXI protocol violation: " + mem_.checker().report());
    return s;
  }

  /// One clock cycle (bench.hpp: the memory, then the translator).
  void tick() { bench_.tick(); }

 private:
  HostMemory memory_;
  Bench<Model> bench_;
  AxiMemoryAgent<Model> mem_;
  std::mt19937_64 xlate_rng_{1};  ///< the translator's own (a one-cycle latency draws nothing useful)
  Translator translator_;
  TranslatorAgent<Model> translator_agent_;
  std::mt19937_64 rng_{7};
  std::uniform_real_distribution<double> unit_{0.0, 1.0};
};

}  // namespace sgpu::tb
