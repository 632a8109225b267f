#include "systemc/axi_tlm_bridge.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <tlm>

namespace sgpu::systemc {
namespace {
constexpr unsigned kMaxReadsInFlight = 64;
constexpr unsigned kMaxWritesQueued = 64;
}  // namespace

AxiTlmBridge::AxiTlmBridge(Memory& memory, unsigned data_bytes, sc_core::sc_time period)
    : memory_(memory), bytes_(data_bytes), period_(period) {
  if (data_bytes == 0 || data_bytes > tb::kAxiMaxDataBytes || (data_bytes & (data_bytes - 1)) != 0)
    throw std::invalid_argument("AxiTlmBridge: data_bytes must be a power of two <= 64");
  reset();
}

void AxiTlmBridge::reset() {
  reads_.clear();
  writes_.clear();
  responses_.clear();
  out_ = tb::AxiSubordinateOut{};
  out_.arready = true;
  out_.awready = true;
  last_read_ready_ = 0;
}

bool AxiTlmBridge::idle() const {
  return reads_.empty() && writes_.empty() && responses_.empty() && !out_.rvalid && !out_.bvalid;
}

std::uint64_t AxiTlmBridge::cycles(const sc_core::sc_time& t) const {
  const auto p = period_.value();
  return (t.value() + p - 1) / p;
}

// AXI spec A3.4.1, as tb::AxiMemoryModel.
std::uint64_t AxiTlmBridge::beat_address(const Burst& b, unsigned beat) const {
  const std::uint64_t size_bytes = std::uint64_t{1} << b.size;
  if (beat == 0 || b.type == tb::kAxiBurstFixed) return b.addr;
  const std::uint64_t aligned = b.addr & ~(size_bytes - 1);
  const std::uint64_t linear = aligned + beat * size_bytes;
  if (b.type != tb::kAxiBurstWrap) return linear;
  const std::uint64_t wrap_bytes = size_bytes * (std::uint64_t{b.len} + 1);
  const std::uint64_t lower = b.addr & ~(wrap_bytes - 1);
  return lower + ((linear - lower) % wrap_bytes);
}

// Full-width INCR: the burst is one run of bus words (what the RTL's engines issue).
bool AxiTlmBridge::contiguous(const Burst& b) const {
  return b.type == tb::kAxiBurstIncr && (1u << b.size) == bytes_;
}

void AxiTlmBridge::fetch(Burst& b) {
  const unsigned beats = b.len + 1u;
  b.data.assign(std::size_t{beats} * bytes_, 0);
  b.resp.assign(beats, tb::kAxiRespOkay);
  const sc_core::sc_time base = memory_.local_time();
  sc_core::sc_time delay = base;
  const std::uint64_t word = b.addr & ~std::uint64_t{bytes_ - 1};
  bool whole = contiguous(b) && memory_.read(word, b.data.data(), b.data.size(), delay) == tb::kAxiRespOkay;
  if (!whole) {
    // Beat by beat: each beat gets its own response (the container of its size).
    delay = base;
    for (unsigned k = 0; k < beats; ++k) {
      const std::uint64_t a = beat_address(b, k);
      const std::uint64_t size_bytes = std::uint64_t{1} << b.size;
      const std::uint64_t container = a & ~(size_bytes - 1);
      const std::size_t lane = static_cast<std::size_t>(container & (bytes_ - 1));
      b.resp[k] = memory_.read(container, &b.data[std::size_t{k} * bytes_ + lane], size_bytes, delay);
    }
  }
  ++stats_.read_bursts;
  b.ready_cycle = std::max(cycle_ + std::max<std::uint64_t>(1, cycles(delay - base)), last_read_ready_);
  last_read_ready_ = b.ready_cycle;
}

std::uint8_t AxiTlmBridge::store(Burst& b) {
  const unsigned beats = b.len + 1u;
  const sc_core::sc_time base = memory_.local_time();
  sc_core::sc_time delay = base;
  std::uint8_t resp = tb::kAxiRespOkay;
  if (contiguous(b)) {
    resp = memory_.write(b.addr & ~std::uint64_t{bytes_ - 1}, b.data.data(), b.enable.data(), b.data.size(), delay);
  } else {
    for (unsigned k = 0; k < beats; ++k) {
      const std::uint64_t bus = beat_address(b, k) & ~std::uint64_t{bytes_ - 1};
      const std::size_t at = std::size_t{k} * bytes_;
      resp = std::max(resp, memory_.write(bus, &b.data[at], &b.enable[at], bytes_, delay));
    }
  }
  ++stats_.write_bursts;
  b.ready_cycle = cycle_ + std::max<std::uint64_t>(1, cycles(delay - base));
  return resp;
}

void AxiTlmBridge::present_read() {
  const Burst& b = reads_.front();
  const std::size_t at = std::size_t{b.beat} * bytes_;
  out_.rvalid = true;
  out_.rid = b.id;
  out_.rlast = b.beat == b.len;
  out_.rresp = b.resp[b.beat];
  out_.rdata.fill(0);
  std::memcpy(out_.rdata.data(), &b.data[at], bytes_);
}

void AxiTlmBridge::tick(const tb::AxiManagerOut& in) {
  const bool ar_hs = in.arvalid && out_.arready;
  const bool r_hs = out_.rvalid && in.rready;
  const bool aw_hs = in.awvalid && out_.awready;
  const bool w_hs = in.wvalid && out_.wready;
  const bool b_hs = out_.bvalid && in.bready;

  if (r_hs) {
    ++stats_.read_beats;
    Burst& b = reads_.front();
    if (b.beat == b.len) {
      reads_.pop_front();
    } else {
      ++b.beat;
    }
    out_.rvalid = false;
  }
  if (ar_hs) {
    Burst b;
    b.id = in.arid;
    b.addr = in.araddr;
    b.len = in.arlen;
    b.size = in.arsize;
    b.type = in.arburst;
    fetch(b);
    reads_.push_back(std::move(b));
  }
  if (w_hs && !writes_.empty()) {
    ++stats_.write_beats;
    Burst& b = writes_.front();
    const std::size_t at = std::size_t{b.beat} * bytes_;
    std::memcpy(&b.data[at], in.wdata.data(), bytes_);
    for (unsigned i = 0; i < bytes_; ++i)
      b.enable[at + i] = ((in.wstrb >> i) & 1u) ? TLM_BYTE_ENABLED : TLM_BYTE_DISABLED;
    if (b.beat == b.len) {
      b.resp.assign(1, store(b));
      responses_.push_back(std::move(b));
      writes_.pop_front();
    } else {
      ++b.beat;
    }
  }
  if (aw_hs) {
    Burst b;
    b.id = in.awid;
    b.addr = in.awaddr;
    b.len = in.awlen;
    b.size = in.awsize;
    b.type = in.awburst;
    b.data.assign(std::size_t{b.len + 1u} * bytes_, 0);
    b.enable.assign(b.data.size(), TLM_BYTE_DISABLED);
    writes_.push_back(std::move(b));
  }
  if (b_hs) {
    responses_.pop_front();
    out_.bvalid = false;
  }
  ++cycle_;

  // Outputs for the next cycle; a raised rvalid/bvalid without handshake stays as it is.
  out_.arready = reads_.size() < kMaxReadsInFlight;
  if (!out_.rvalid && !reads_.empty()) {
    const Burst& b = reads_.front();
    if (b.beat != 0 || cycle_ >= b.ready_cycle) present_read();
  }
  out_.awready = writes_.size() < kMaxWritesQueued;
  out_.wready = !writes_.empty();
  if (!out_.bvalid && !responses_.empty() && cycle_ >= responses_.front().ready_cycle) {
    out_.bvalid = true;
    out_.bid = responses_.front().id;
    out_.bresp = responses_.front().resp[0];
  }
}

}  // namespace sgpu::systemc
