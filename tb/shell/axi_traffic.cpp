#include "axi_traffic.hpp"

#include <algorithm>
#include <cstring>

namespace sgpu::tb {

AxiTraffic::AxiTraffic(HostMemory& memory, TrafficConfig c)
    : mem_(memory), c_(c), rng_(c.seed), shadow_(c.write_size) {
  std::vector<std::uint8_t> fill(c.read_size);
  for (auto& b : fill) b = static_cast<std::uint8_t>(rng_());
  mem_.write(c.read_base, fill.data(), fill.size());
  mem_.read(c.write_base, shadow_.data(), shadow_.size());
  update_outputs();
}

AxiTraffic::Burst AxiTraffic::random_burst(std::uint64_t base, std::uint64_t size) {
  Burst b;
  b.id = static_cast<std::uint32_t>(rng_() & ((1u << c_.id_bits) - 1));
  b.len = static_cast<std::uint8_t>(rng_() % c_.max_len);
  const std::uint64_t bytes = std::uint64_t{b.len + 1u} * c_.data_bytes;
  for (;;) {
    // Beat aligned or not (INCR of full size), within the region and a 4 KiB page.
    std::uint64_t off = rng_() % (size - bytes);
    if (rng_() % 2) off &= ~std::uint64_t{c_.data_bytes - 1};
    const std::uint64_t a = base + off;
    const std::uint64_t last = (a & ~std::uint64_t{c_.data_bytes - 1}) + bytes - 1;
    if ((a >> 12) == (last >> 12)) {
      b.addr = a;
      return b;
    }
  }
}

void AxiTraffic::add_reads(unsigned n) {
  for (unsigned i = 0; i < n; ++i) ar_.push_back(random_burst(c_.read_base, c_.read_size));
}

void AxiTraffic::add_writes(unsigned n) {
  for (unsigned i = 0; i < n; ++i) {
    const Burst b = random_burst(c_.write_base, c_.write_size);
    aw_.push_back(b);
    const std::uint64_t aligned = b.addr & ~std::uint64_t{c_.data_bytes - 1};
    for (unsigned k = 0; k <= b.len; ++k) {
      WBeat w;
      const std::uint64_t beat = aligned + std::uint64_t{k} * c_.data_bytes;
      for (unsigned i2 = 0; i2 < c_.data_bytes; ++i2) w.data[i2] = static_cast<std::uint8_t>(rng_());
      const std::uint64_t all = c_.data_bytes == 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << c_.data_bytes) - 1;
      w.strb = chance(c_.strobe_hole_prob) ? (rng_() % 8 == 0 ? 0 : (rng_() & all)) : all;
      // Bytes below the start address of an unaligned first beat carry no strobe (AXI).
      if (k == 0) w.strb &= all << (b.addr - aligned);
      w.last = k == b.len;
      for (unsigned i2 = 0; i2 < c_.data_bytes; ++i2)
        if (w.strb >> i2 & 1) shadow_[beat + i2 - c_.write_base] = w.data[i2];
      w_.push_back(w);
    }
  }
}

bool AxiTraffic::done() const {
  if (!ar_.empty() || !aw_.empty() || !w_.empty()) return false;
  for (const auto& [id, q] : reads_out_)
    if (!q.empty()) return false;
  for (const auto& [id, n] : writes_out_)
    if (n) return false;
  return true;
}

void AxiTraffic::update_outputs() {
  out_.arvalid = !ar_.empty() && (out_.arvalid || chance(c_.valid_prob));
  if (!ar_.empty()) {
    out_.arid = ar_.front().id;
    out_.araddr = ar_.front().addr;
    out_.arlen = ar_.front().len;
    out_.arsize = static_cast<std::uint8_t>(__builtin_ctz(c_.data_bytes));
    out_.arburst = kAxiBurstIncr;
  }
  out_.awvalid = !aw_.empty() && (out_.awvalid || chance(c_.valid_prob));
  if (!aw_.empty()) {
    out_.awid = aw_.front().id;
    out_.awaddr = aw_.front().addr;
    out_.awlen = aw_.front().len;
    out_.awsize = static_cast<std::uint8_t>(__builtin_ctz(c_.data_bytes));
    out_.awburst = kAxiBurstIncr;
  }
  // W only for bursts whose AW has been issued (the project's managers never send W first).
  const bool w_allowed = !w_.empty() && w_bursts_sent_ < aw_issued_;
  out_.wvalid = w_allowed && (out_.wvalid || chance(c_.valid_prob));
  if (!w_.empty()) {
    out_.wdata = w_.front().data;
    out_.wstrb = w_.front().strb;
    out_.wlast = w_.front().last;
  }
  out_.rready = chance(c_.ready_prob);
  out_.bready = chance(c_.ready_prob);
}

void AxiTraffic::tick(const AxiSubordinateOut& in) {
  if (out_.arvalid && in.arready) {
    reads_out_[ar_.front().id].push_back({ar_.front(), 0});
    ar_.pop_front();
    out_.arvalid = false;
  }
  if (out_.awvalid && in.awready) {
    ++writes_out_[aw_.front().id];
    aw_.pop_front();
    ++aw_issued_;
    out_.awvalid = false;
  }
  if (out_.wvalid && in.wready) {
    if (w_.front().last) ++w_bursts_sent_;
    w_.pop_front();
    out_.wvalid = false;
  }
  if (in.rvalid && out_.rready) {
    auto& q = reads_out_[in.rid];
    if (q.empty()) {
      fail("R beat for ID " + std::to_string(in.rid) + " with no read outstanding");
    } else {
      auto& [b, seen] = q.front();
      const std::uint64_t aligned = b.addr & ~std::uint64_t{c_.data_bytes - 1};
      const std::uint64_t beat = aligned + std::uint64_t{seen} * c_.data_bytes;
      std::vector<std::uint8_t> want(c_.data_bytes);
      mem_.read(beat, want.data(), want.size());
      const unsigned first = seen == 0 ? static_cast<unsigned>(b.addr - aligned) : 0;
      for (unsigned i = first; i < c_.data_bytes; ++i)
        if (in.rdata[i] != want[i]) {
          fail("R data of ID " + std::to_string(in.rid) + " beat " + std::to_string(seen) + " byte " +
               std::to_string(i) + " is wrong");
          break;
        }
      if (in.rresp != kAxiRespOkay) fail("R response " + std::to_string(in.rresp));
      const bool last = seen == b.len;
      if (in.rlast != last) fail("rlast " + std::to_string(in.rlast) + " on beat " + std::to_string(seen));
      ++seen;
      ++read_beats_;
      if (last) q.pop_front();
    }
  }
  if (in.bvalid && out_.bready) {
    auto& n = writes_out_[in.bid];
    if (n == 0) fail("B for ID " + std::to_string(in.bid) + " with no write outstanding");
    else --n;
    if (in.bresp != kAxiRespOkay) fail("B response " + std::to_string(in.bresp));
    ++write_responses_;
  }
  update_outputs();
}

}  // namespace sgpu::tb
