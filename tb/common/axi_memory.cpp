#include "common/axi_memory.hpp"

#include <algorithm>
#include <stdexcept>

namespace sgpu::tb {

namespace {
constexpr unsigned kMaxWritesQueued = 64;  // AW accepted ahead of their data
}

AxiMemoryModel::AxiMemoryModel(HostMemory& memory, Config config)
    : memory_(memory), config_(config), rng_(config.seed) {
  if (config_.data_bytes == 0 || config_.data_bytes > kAxiMaxDataBytes ||
      (config_.data_bytes & (config_.data_bytes - 1)) != 0) {
    throw std::invalid_argument("AxiMemoryModel: data_bytes must be a power of two <= 64");
  }
  config_.read_latency = std::max(config_.read_latency, 1u);
  config_.write_latency = std::max(config_.write_latency, 1u);
  reset();
}

bool AxiMemoryModel::chance(double probability) {
  // Never draw when the answer is certain, so the default configuration is deterministic and
  // needs no random numbers on the fast path.
  if (probability >= 1.0) return true;
  if (probability <= 0.0) return false;
  return unit_(rng_) < probability;
}

void AxiMemoryModel::reset() {
  reads_.clear();
  writes_.clear();
  responses_.clear();
  out_ = AxiSubordinateOut{};
  last_read_ready_ = 0;
  stats_.reads_in_flight = 0;
  out_.arready = chance(config_.ar_ready_prob);
  out_.awready = chance(config_.aw_ready_prob);
}

void AxiMemoryModel::reset_stats() {
  const uint64_t in_flight = stats_.reads_in_flight;
  stats_ = Stats{};
  stats_.reads_in_flight = in_flight;
  stats_.max_reads_in_flight = in_flight;
}

void AxiMemoryModel::inject_error(uint64_t lo, uint64_t hi, uint8_t resp) {
  errors_.push_back(ErrorRange{lo, hi, resp});
}

bool AxiMemoryModel::idle() const {
  return reads_.empty() && writes_.empty() && responses_.empty() && !out_.rvalid && !out_.bvalid;
}

uint64_t AxiMemoryModel::quiet_cycles() const {
  const Config& c = config_;
  if (c.ar_ready_prob < 1.0 || c.r_valid_prob < 1.0 || c.aw_ready_prob < 1.0 || c.w_ready_prob < 1.0) return 0;
  if (out_.rvalid || out_.bvalid || !writes_.empty()) return 0;
  // A tick raises a response once its cycle count (incremented first) reaches the ready cycle.
  uint64_t quiet = UINT64_MAX;
  const auto until = [&](uint64_t ready_cycle) { return ready_cycle > cycle_ + 1 ? ready_cycle - cycle_ - 1 : 0; };
  if (!reads_.empty()) quiet = reads_.front().beat != 0 ? 0 : until(reads_.front().ready_cycle);
  if (!responses_.empty()) quiet = std::min(quiet, until(responses_.front().ready_cycle));
  return quiet;
}

uint64_t AxiMemoryModel::write_stream_cycles(const AxiManagerOut& in) const {
  const Config& c = config_;
  if (c.ar_ready_prob < 1.0 || c.r_valid_prob < 1.0 || c.aw_ready_prob < 1.0 || c.w_ready_prob < 1.0) return 0;
  if (!in.wvalid || in.arvalid || in.awvalid || out_.rvalid || out_.bvalid || writes_.empty()) return 0;
  const Burst& front = writes_.front();
  if (front.beat >= front.len) return 0;  // the next beat is its last
  uint64_t quiet = front.len - front.beat;  // beats front.beat .. len - 1, none the last
  const auto until = [&](uint64_t ready_cycle) { return ready_cycle > cycle_ + 1 ? ready_cycle - cycle_ - 1 : 0; };
  if (!reads_.empty()) quiet = std::min(quiet, reads_.front().beat != 0 ? 0 : until(reads_.front().ready_cycle));
  if (!responses_.empty()) quiet = std::min(quiet, until(responses_.front().ready_cycle));
  return quiet;
}

void AxiMemoryModel::skip(uint64_t cycles) {
  if (cycles > quiet_cycles()) throw std::logic_error("AxiMemoryModel::skip: a response falls due inside the skip");
  cycle_ += cycles;
  stats_.cycles += cycles;
}

uint8_t AxiMemoryModel::error_for(uint64_t lo, uint64_t hi) const {
  for (const auto& range : errors_) {
    if (lo < range.hi && range.lo < hi) return range.resp;
  }
  return kAxiRespOkay;
}

// Address of one beat of a burst (AXI spec A3.4.1).
uint64_t AxiMemoryModel::beat_address(const Burst& burst, unsigned beat) const {
  const uint64_t size_bytes = uint64_t{1} << burst.size;
  if (beat == 0 || burst.type == kAxiBurstFixed) return burst.addr;
  const uint64_t aligned = burst.addr & ~(size_bytes - 1);
  const uint64_t linear = aligned + beat * size_bytes;
  if (burst.type != kAxiBurstWrap) return linear;
  const uint64_t wrap_bytes = size_bytes * (uint64_t{burst.len} + 1);
  const uint64_t lower = burst.addr & ~(wrap_bytes - 1);
  return lower + ((linear - lower) % wrap_bytes);
}

void AxiMemoryModel::make_read_beat(const Burst& burst) {
  const uint64_t addr = beat_address(burst, burst.beat);
  const uint64_t size_bytes = uint64_t{1} << burst.size;
  const uint64_t bus_base = addr & ~uint64_t{config_.data_bytes - 1};
  // Valid lanes: from the beat address up to the end of its size-aligned container.
  const unsigned lane_lo = static_cast<unsigned>(addr - bus_base);
  const unsigned lane_hi =
      static_cast<unsigned>(((addr & ~(size_bytes - 1)) - bus_base) + size_bytes - 1);

  out_.rvalid = true;
  out_.rid = burst.id;
  out_.rlast = burst.beat == burst.len;
  out_.rresp = error_for(addr, bus_base + lane_hi + 1);
  if (out_.rresp != kAxiRespOkay) {
    // Poison the whole beat: a manager that uses data from an error beat shows up in compares.
    out_.rdata.fill(0xE5);
    ++stats_.read_error_beats;
    return;
  }
  // Lanes that carry no data hold a recognisable pattern rather than stale bytes.
  if (lane_lo != 0 || lane_hi + 1 != config_.data_bytes) out_.rdata.fill(0xA5);
  memory_.read(bus_base + lane_lo, out_.rdata.data() + lane_lo, lane_hi - lane_lo + 1);
}

void AxiMemoryModel::write_beat(Burst& burst, const AxiManagerOut& in) {
  const uint64_t addr = beat_address(burst, burst.beat);
  const uint64_t size_bytes = uint64_t{1} << burst.size;
  const uint64_t bus_base = addr & ~uint64_t{config_.data_bytes - 1};
  const unsigned lane_lo = static_cast<unsigned>(addr - bus_base);
  const unsigned lane_hi =
      static_cast<unsigned>(((addr & ~(size_bytes - 1)) - bus_base) + size_bytes - 1);
  const uint8_t resp = error_for(addr, bus_base + lane_hi + 1);
  if (resp != kAxiRespOkay) {
    if (burst.resp == kAxiRespOkay) burst.resp = resp;
    return;
  }
  // Each run of consecutive strobed lanes is one copy (a full beat: one), not a call per byte.
  for (unsigned lane = lane_lo; lane <= lane_hi;) {
    if (((in.wstrb >> lane) & 1u) == 0) {
      ++lane;
      continue;
    }
    unsigned end = lane + 1;
    while (end <= lane_hi && ((in.wstrb >> end) & 1u) != 0) ++end;
    memory_.write(bus_base + lane, in.wdata.data() + lane, end - lane);
    lane = end;
  }
}

void AxiMemoryModel::tick(const AxiManagerOut& in) {
  // 1. Handshakes of the cycle that ends now.
  const bool ar_hs = in.arvalid && out_.arready;
  const bool r_hs = out_.rvalid && in.rready;
  const bool aw_hs = in.awvalid && out_.awready;
  const bool w_hs = in.wvalid && out_.wready;
  const bool b_hs = out_.bvalid && in.bready;

  if (r_hs) {
    ++stats_.read_beats;
    ++stats_.r_handshake_cycles;
    Burst& burst = reads_.front();
    if (burst.beat == burst.len) {
      reads_.pop_front();
      ++stats_.read_bursts;
    } else {
      ++burst.beat;
    }
    out_.rvalid = false;
  }
  if (ar_hs) {
    Burst burst;
    burst.id = in.arid;
    burst.addr = in.araddr;
    burst.len = in.arlen;
    burst.size = in.arsize;
    burst.type = in.arburst;
    uint64_t jitter = 0;
    if (config_.read_latency_jitter != 0) jitter = rng_() % (config_.read_latency_jitter + 1);
    // In-order responses: a burst is never ready before the one accepted ahead of it.
    burst.ready_cycle = std::max(cycle_ + config_.read_latency + jitter, last_read_ready_);
    last_read_ready_ = burst.ready_cycle;
    reads_.push_back(burst);
  }
  if (w_hs && !writes_.empty()) {
    ++stats_.write_beats;
    ++stats_.w_handshake_cycles;
    Burst& burst = writes_.front();
    write_beat(burst, in);
    if (burst.beat == burst.len) {
      burst.ready_cycle = cycle_ + config_.write_latency;
      responses_.push_back(burst);
      writes_.pop_front();
    } else {
      ++burst.beat;
    }
  }
  if (aw_hs) {
    Burst burst;
    burst.id = in.awid;
    burst.addr = in.awaddr;
    burst.len = in.awlen;
    burst.size = in.awsize;
    burst.type = in.awburst;
    writes_.push_back(burst);
  }
  if (b_hs) {
    if (responses_.front().resp != kAxiRespOkay) ++stats_.write_error_bursts;
    responses_.pop_front();
    ++stats_.write_bursts;
    out_.bvalid = false;
  }

  ++cycle_;
  ++stats_.cycles;
  stats_.reads_in_flight = reads_.size();
  stats_.max_reads_in_flight = std::max<uint64_t>(stats_.max_reads_in_flight, reads_.size());

  // 2. Outputs for the next cycle. A raised rvalid/bvalid without handshake stays as it is.
  out_.arready = reads_.size() < config_.max_reads_in_flight && chance(config_.ar_ready_prob);
  if (!out_.rvalid && !reads_.empty()) {
    const Burst& burst = reads_.front();
    const bool due = burst.beat != 0 || cycle_ >= burst.ready_cycle;
    if (due && chance(config_.r_valid_prob)) make_read_beat(burst);
  }
  out_.awready = writes_.size() < kMaxWritesQueued && chance(config_.aw_ready_prob);
  out_.wready = !writes_.empty() && chance(config_.w_ready_prob);
  if (!out_.bvalid && !responses_.empty() && cycle_ >= responses_.front().ready_cycle) {
    out_.bvalid = true;
    out_.bid = responses_.front().id;
    out_.bresp = responses_.front().resp;
  }
}

}  // namespace sgpu::tb
