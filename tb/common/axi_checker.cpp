#include "common/axi_checker.hpp"

#include <sstream>
#include <utility>

namespace sgpu::tb {

AxiChecker::AxiChecker(unsigned data_bytes, std::string name)
    : data_bytes_(data_bytes), name_(std::move(name)) {}

void AxiChecker::reset() {
  reads_.clear();
  writes_.clear();
  responses_due_.clear();
  prev_m_ = AxiManagerOut{};
  prev_s_ = AxiSubordinateOut{};
}

void AxiChecker::fail(const std::string& what) {
  ++violation_count_;
  if (violations_.size() < kMaxMessages) {
    violations_.push_back(name_ + " cycle " + std::to_string(cycle_) + ": " + what);
  }
}

std::string AxiChecker::report() const {
  std::ostringstream out;
  for (const auto& v : violations_) out << v << '\n';
  if (violation_count_ > violations_.size()) {
    out << "... and " << (violation_count_ - violations_.size()) << " more\n";
  }
  return out.str();
}

size_t AxiChecker::reads_outstanding() const {
  size_t n = 0;
  for (const auto& [id, queue] : reads_) n += queue.size();
  return n;
}

void AxiChecker::check_address(const char* channel, uint64_t addr, uint8_t len, uint8_t size,
                               uint8_t burst) {
  const std::string ch = channel;
  if ((1u << size) > data_bytes_) {
    fail(ch + "size " + std::to_string(size) + " is wider than the " +
         std::to_string(data_bytes_) + "-byte bus");
  }
  const uint64_t size_bytes = uint64_t{1} << size;
  const uint64_t beats = uint64_t{len} + 1;
  switch (burst) {
    case kAxiBurstIncr: {
      const uint64_t first = addr & ~(size_bytes - 1);
      const uint64_t last = first + beats * size_bytes - 1;
      if ((addr >> 12) != (last >> 12)) {
        std::ostringstream msg;
        msg << ch << "INCR burst at 0x" << std::hex << addr << std::dec << " len " << beats
            << " size " << size_bytes << " crosses a 4 KiB boundary";
        fail(msg.str());
      }
      break;
    }
    case kAxiBurstFixed:
      if (beats > 16) fail(ch + "FIXED burst longer than 16 beats");
      break;
    case kAxiBurstWrap:
      if (beats != 2 && beats != 4 && beats != 8 && beats != 16) {
        fail(ch + "WRAP burst length must be 2, 4, 8 or 16");
      }
      if ((addr & (size_bytes - 1)) != 0) fail(ch + "WRAP burst address not size-aligned");
      break;
    default:
      fail(ch + "reserved burst type 3");
  }
}

void AxiChecker::tick(const AxiManagerOut& m, const AxiSubordinateOut& s) {
  // Stability: a handshake left pending last cycle must still be offered, unchanged.
  if (prev_m_.arvalid && !prev_s_.arready) {
    if (!m.arvalid) {
      fail("arvalid dropped before arready");
    } else if (m.arid != prev_m_.arid || m.araddr != prev_m_.araddr ||
               m.arlen != prev_m_.arlen || m.arsize != prev_m_.arsize ||
               m.arburst != prev_m_.arburst) {
      fail("AR payload changed while pending");
    }
  }
  if (prev_m_.awvalid && !prev_s_.awready) {
    if (!m.awvalid) {
      fail("awvalid dropped before awready");
    } else if (m.awid != prev_m_.awid || m.awaddr != prev_m_.awaddr ||
               m.awlen != prev_m_.awlen || m.awsize != prev_m_.awsize ||
               m.awburst != prev_m_.awburst) {
      fail("AW payload changed while pending");
    }
  }
  if (prev_m_.wvalid && !prev_s_.wready) {
    if (!m.wvalid) {
      fail("wvalid dropped before wready");
    } else if (m.wdata != prev_m_.wdata || m.wstrb != prev_m_.wstrb ||
               m.wlast != prev_m_.wlast) {
      fail("W payload changed while pending");
    }
  }
  if (prev_s_.rvalid && !prev_m_.rready) {
    if (!s.rvalid) {
      fail("rvalid dropped before rready");
    } else if (s.rid != prev_s_.rid || s.rdata != prev_s_.rdata || s.rresp != prev_s_.rresp ||
               s.rlast != prev_s_.rlast) {
      fail("R payload changed while pending");
    }
  }
  if (prev_s_.bvalid && !prev_m_.bready) {
    if (!s.bvalid) {
      fail("bvalid dropped before bready");
    } else if (s.bid != prev_s_.bid || s.bresp != prev_s_.bresp) {
      fail("B payload changed while pending");
    }
  }

  // Responses first: a response can never answer a request handshaken in the same cycle.
  if (s.rvalid && m.rready) {
    auto it = reads_.find(s.rid);
    if (it == reads_.end() || it->second.empty()) {
      fail("R beat with ID " + std::to_string(s.rid) + " but no read outstanding");
    } else {
      Pending& read = it->second.front();
      const bool last = read.beats_left == 1;
      if (s.rlast != last) {
        fail(std::string("rlast ") + (s.rlast ? "high" : "low") + " on beat with " +
             std::to_string(read.beats_left - 1) + " beats still to come");
      }
      // Resynchronise on rlast so one error is reported once, not on every later beat.
      if (last || s.rlast) {
        it->second.pop_front();
      } else {
        --read.beats_left;
      }
    }
  }
  if (s.bvalid && m.bready) {
    auto it = responses_due_.find(s.bid);
    if (it == responses_due_.end() || it->second == 0) {
      fail("B response with ID " + std::to_string(s.bid) + " but no completed write");
    } else {
      --it->second;
    }
  }

  if (m.arvalid && s.arready) {
    check_address("AR: ", m.araddr, m.arlen, m.arsize, m.arburst);
    reads_[m.arid].push_back(Pending{unsigned{m.arlen} + 1});
  }
  if (m.awvalid && s.awready) {
    check_address("AW: ", m.awaddr, m.awlen, m.awsize, m.awburst);
    writes_.push_back(WriteBurst{m.awid, m.awaddr, m.awsize, m.awburst, unsigned{m.awlen} + 1});
  }
  if (m.wvalid && s.wready) {
    if (writes_.empty()) {
      fail("W beat without an accepted AW (more W beats than AW asked for)");
    } else {
      WriteBurst& w = writes_.front();
      const bool last = w.beats_seen + 1 == w.beats;
      if (m.wlast != last) {
        fail(std::string("wlast ") + (m.wlast ? "high" : "low") + " on W beat " +
             std::to_string(w.beats_seen) + " of a " + std::to_string(w.beats) + "-beat burst");
      }
      // Strobes must stay inside the lanes this beat addresses.
      const uint64_t size_bytes = uint64_t{1} << w.size;
      uint64_t addr = w.addr;
      if (w.beats_seen != 0 && w.type != kAxiBurstFixed) {
        addr = (w.addr & ~(size_bytes - 1)) + w.beats_seen * size_bytes;
      }
      if (w.type == kAxiBurstIncr) {
        const uint64_t base = addr & ~uint64_t{data_bytes_ - 1};
        const unsigned lo = static_cast<unsigned>(addr - base);
        const unsigned hi = static_cast<unsigned>((addr & ~(size_bytes - 1)) - base + size_bytes);
        const uint64_t allowed =
            (hi >= 64 ? ~uint64_t{0} : ((uint64_t{1} << hi) - 1)) & ~((uint64_t{1} << lo) - 1);
        if ((m.wstrb & ~allowed) != 0) fail("wstrb enables lanes outside the beat's bytes");
      }
      ++w.beats_seen;
      if (last || m.wlast) {
        ++responses_due_[w.id];
        writes_.pop_front();
      }
    }
  }

  prev_m_ = m;
  prev_s_ = s;
  ++cycle_;
}

}  // namespace sgpu::tb
