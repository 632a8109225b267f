// Tests of the copy engine's burst write master (sgpu_dma_wr) alone, where flush_i and the
// translation port are driven cycle by cycle: sgpu_copy holds its flush until the writer is idle,
// so a flush that ends while a translation is still owed cannot happen there, but the writer's
// contract allows it (an answer owed at a flush is dropped when it comes). Every cycle of the
// AXI write port goes through the protocol checker.
#include <catch2/catch.hpp>

#include <cstdint>
#include <deque>
#include <functional>
#include <random>
#include <vector>

#include "Vsgpu_dma_wr_tb_top.h"
#include "common/axi_memory_agent.hpp"
#include "common/bench.hpp"
#include "common/host_memory.hpp"
#include "common/test_seed.hpp"
#include "common/translator.hpp"

namespace {

using namespace sgpu::tb;
using Model = Vsgpu_dma_wr_tb_top;

constexpr unsigned kBusBytes = sizeof(Model::m_axi_wdata);
constexpr uint64_t kPageBytes = 4096;

/// The writer's row channel, its packed input stream and its flush, as the test queues them; and
/// what the writer did on its translation port and error outputs.
class WriterPorts final : public Agent {
 public:
  explicit WriterPorts(Model& dut) : dut_(dut) {}

  /// A row of `bytes` to `addr`, and its input beats (byte i in lane i mod B of beat i / B).
  void queue_row(uint64_t addr, const std::vector<uint8_t>& bytes) {
    rows_.push_back({addr, static_cast<uint32_t>(bytes.size())});
    for (std::size_t i = 0; i < bytes.size(); i += kBusBytes) {
      uint64_t beat = 0;
      for (std::size_t j = 0; j < kBusBytes && i + j < bytes.size(); ++j) beat |= uint64_t{bytes[i + j]} << (8 * j);
      beats_.push_back(beat);
    }
  }
  /// flush_i high for the next `cycles` cycles; the input not yet taken is dropped with it (the
  /// source side of an aborted copy stops too).
  void flush_for(unsigned cycles) {
    flush_cycles_ = cycles;
    beats_.clear();
  }
  bool drained() const { return rows_.empty() && beats_.empty(); }

  unsigned requests = 0;  ///< translation requests taken by the port
  unsigned answers = 0;   ///< translation answers taken by the writer
  unsigned xerrs = 0;     ///< xerr_o pulses
  unsigned errs = 0;      ///< err_o pulses

  void drive() override {
    dut_.flush_i = flush_cycles_ != 0;
    dut_.xlate_clear_i = 0;
    dut_.row_valid_i = !rows_.empty();
    dut_.row_addr_i = rows_.empty() ? 0 : rows_.front().addr;
    dut_.row_len_i = rows_.empty() ? 0 : rows_.front().len;
    dut_.in_valid_i = !beats_.empty();
    dut_.in_data_i = beats_.empty() ? 0 : beats_.front();
  }
  void sample() override {
    row_hs_ = dut_.row_valid_i && dut_.row_ready_o;
    in_hs_ = dut_.in_valid_i && dut_.in_ready_o;
    req_hs_ = dut_.xlate_req_valid_o && dut_.xlate_req_ready_i;
    rsp_hs_ = dut_.xlate_rsp_valid_i && dut_.xlate_rsp_ready_o;
    xerrs += dut_.xerr_o;
    errs += dut_.err_o;
  }
  void edge() override {
    if (row_hs_) rows_.pop_front();
    if (in_hs_) beats_.pop_front();
    if (flush_cycles_ != 0) --flush_cycles_;
    requests += req_hs_;
    answers += rsp_hs_;
  }

 private:
  struct Row {
    uint64_t addr;
    uint32_t len;
  };
  Model& dut_;
  std::deque<Row> rows_;
  std::deque<uint64_t> beats_;
  unsigned flush_cycles_ = 0;
  bool row_hs_ = false, in_hs_ = false, req_hs_ = false, rsp_hs_ = false;
};

/// sgpu_dma_wr_tb_top on tb::Bench: the AXI memory (write side, protocol checker), the C++
/// translator on the destination's translation port, the writer's ports.
class WriterBench {
 public:
  explicit WriterBench(uint64_t seed)
      : bench_({"dma_wr", 2, seed, {}}),
        mem_(bench_.dut(), memory_, memory_config(seed), {true, "dma-wr"}),
        translator_({}, rng_),
        translator_agent_(bench_.dut(), translator_),
        ports_(bench_.dut()) {
    bench_.add(mem_);
    bench_.add(translator_agent_);
    bench_.add(ports_);
    bench_.reset(4, 1, /*with_agents=*/true);
  }

  Model& top() { return bench_.dut(); }
  HostMemory& memory() { return memory_; }
  TranslatorConfig& translation() { return translator_.config(); }
  WriterPorts& ports() { return ports_; }
  const AxiChecker& checker() const { return mem_.checker(); }

  void run(unsigned cycles) {
    for (unsigned i = 0; i < cycles; ++i) bench_.tick();
  }
  /// Ticks until `done()` holds (checked before each cycle); false after `max_cycles`.
  bool run_until(const std::function<bool()>& done, unsigned max_cycles = 20'000) {
    for (unsigned i = 0; i < max_cycles; ++i) {
      if (done()) return true;
      bench_.tick();
    }
    return done();
  }

 private:
  static AxiMemoryModel::Config memory_config(uint64_t seed) {
    AxiMemoryModel::Config c;
    c.seed = seed;
    return c;
  }

  HostMemory memory_;
  Bench<Model> bench_;
  AxiMemoryAgent<Model, false, true> mem_;
  std::mt19937_64 rng_{1};
  Translator translator_;
  TranslatorAgent<Model> translator_agent_;
  WriterPorts ports_;
};

std::vector<uint8_t> pattern(std::size_t n, uint8_t first) {
  std::vector<uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(first + 3 * i);
  return v;
}

}  // namespace

TEST_CASE("A flush while the destination page's translation is owed drops its answer, and the page is asked again") {
  const uint64_t seed = test_seed(1);
  CAPTURE(seed);
  WriterBench b(seed);
  Model& top = b.top();
  WriterPorts& ports = b.ports();
  TranslatorConfig& tr = b.translation();

  // The page maps to vpn + 0x100 until the flushed request is answered, to vpn + 0x200 after.
  constexpr uint64_t kVpn = 5;
  constexpr uint64_t kDst = kVpn * kPageBytes + 0x13;  // a lane offset: the row spans 9 beats
  uint64_t generation = 1;
  tr.map = [&generation](uint64_t vpn) { return vpn + generation * 0x100; };

  bool taken_before_flush = false;
  bool refused = false;
  SECTION("the request waits for the port across the flush; its answer maps the page elsewhere") {}
  SECTION("the request waits for the port across the flush; its answer refuses the page") {
    refused = true;
  }
  SECTION("the request was taken before the flush; its answer comes after it") {
    taken_before_flush = true;
  }
  if (refused) tr.faulting.insert(kVpn);
  tr.req_ready_prob = taken_before_flush ? 1.0 : 0.0;
  tr.latency_min = tr.latency_max = taken_before_flush ? 40 : 1;

  ports.queue_row(kDst, pattern(64, 0x11));
  REQUIRE(b.run_until([&] { return top.xlate_req_valid_o != 0 || ports.requests != 0; }));
  b.run(8);
  REQUIRE(ports.requests == (taken_before_flush ? 1u : 0u));
  REQUIRE(ports.answers == 0);
  if (!taken_before_flush) REQUIRE(top.xlate_req_valid_o);

  // One cycle of flush: the row and its input go; the request stays offered until taken.
  ports.flush_for(1);
  b.run(4);
  if (!taken_before_flush) REQUIRE(top.xlate_req_valid_o);
  tr.req_ready_prob = 1.0;
  REQUIRE(b.run_until([&] { return ports.answers == 1; }));
  CHECK(ports.requests == 1);

  // The mapping changes (as between two copies) and a new row goes to the same page: the owed
  // answer was dropped, so the page is translated again and written where it maps now.
  generation = 2;
  tr.faulting.clear();
  const std::vector<uint8_t> data = pattern(64, 0x40);
  ports.queue_row(kDst, data);
  REQUIRE(b.run_until([&] { return ports.drained() && top.idle_o; }));
  b.run(4);

  CHECK(ports.requests == 2);
  CHECK(ports.xerrs == 0);
  CHECK(ports.errs == 0);
  std::vector<uint8_t> now(data.size()), stale(data.size());
  b.memory().read((kVpn + 0x200) * kPageBytes + 0x13, now.data(), now.size());
  b.memory().read((kVpn + 0x100) * kPageBytes + 0x13, stale.data(), stale.size());
  CHECK(now == data);
  CHECK(stale == std::vector<uint8_t>(data.size(), 0));
  CHECK(b.checker().ok());
}
