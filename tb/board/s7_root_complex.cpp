#include "board/s7_root_complex.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

namespace sgpu::board {
namespace {

constexpr unsigned kBeatDws = 4;  // the 128-bit interface

double bytes_per_ns_per_lane(unsigned gen) {
  switch (gen) {
    case 1: return 0.25;                   // 2.5 GT/s, 8b/10b
    case 2: return 0.5;                    // 5 GT/s, 8b/10b
    case 3: return 8.0 / 8.0 * 128 / 130;  // 8 GT/s, 128b/130b
    default: throw std::invalid_argument("PCIe generation must be 1, 2 or 3");
  }
}

std::string hex(std::uint64_t v) {
  char b[32];
  std::snprintf(b, sizeof b, "%#llx", static_cast<unsigned long long>(v));
  return b;
}

std::uint16_t keep_dws(std::uint16_t keep) {
  switch (keep) {
    case 0x000f: return 1;
    case 0x00ff: return 2;
    case 0x0fff: return 3;
    case 0xffff: return 4;
    default: return 0;
  }
}

}  // namespace

S7RootComplex::S7RootComplex(tb::HostMemory& memory, ConfigSpace& config, RootComplexConfig rc)
    : memory_(memory), config_(config), rc_(rc), rng_(rc.seed), trace_(std::getenv("SGPU_TLP_TRACE") != nullptr) {
  if (rc_.lanes == 0 || rc_.lanes > 8) throw std::invalid_argument("lanes must be 1..8");
  if (rc_.rcb != 64 && rc_.rcb != 128) throw std::invalid_argument("RCB must be 64 or 128");
  if (rc_.completion_bytes < rc_.rcb || rc_.completion_bytes % rc_.rcb != 0)
    throw std::invalid_argument("completion_bytes must be a multiple of the RCB");
  ps_per_byte_ = 1000.0 / (bytes_per_ns_per_lane(rc_.gen) * rc_.lanes);
  config_.set_link(rc_.lanes, rc_.gen);
  update_status();
}

void S7RootComplex::fail(const std::string& what) const {
  throw BoardError("PCIe root complex model at " + std::to_string(now_ps_ / 1000) + " ns: " + what);
}

std::uint16_t S7RootComplex::device_id() const {
  return static_cast<std::uint16_t>((rc_.bus << 8) | (rc_.device << 3) | rc_.function);
}

void S7RootComplex::set_link_up(bool up) {
  link_up_ = up;
  update_status();
}

void S7RootComplex::reset_stats() {
  // What is in flight, and the MSI count (an event counter the host reads), carry over.
  const auto in_flight = stats_.reads_in_flight;
  const auto msis = stats_.msis;
  stats_ = {};
  stats_.reads_in_flight = in_flight;
  stats_.msis = msis;
}

bool S7RootComplex::idle() const {
  return rx_queue_.empty() && !rx_cur_active_ && !rx_beat_valid_ && sched_.empty() && tx_cur_.empty() &&
         host_reads_.empty();
}

void S7RootComplex::update_status() {
  out_.user_reset = !link_up_;
  out_.link_up = link_up_;
  out_.msi_enable = config_.msi_enabled();
  out_.command = config_.command();
  out_.dcommand = config_.device_control();
  out_.bus = rc_.bus;
  out_.device = rc_.device;
  out_.function = rc_.function;
}

std::uint64_t S7RootComplex::link_send(std::uint64_t start_ps, unsigned tlp_bytes, std::uint64_t& link_free) {
  const std::uint64_t begin = std::max(start_ps, link_free);
  const auto wire = static_cast<std::uint64_t>((tlp_bytes + rc_.tlp_overhead_bytes) * ps_per_byte_ + 0.5);
  link_free = begin + wire;
  return link_free;
}

void S7RootComplex::to_device(const Tlp& t, std::uint64_t now_ps, bool bar_hit) {
  Pending p;
  p.dws = t.encode();
  p.ready_ps = link_send(now_ps, t.tlp_bytes(), rx_link_free_ps_);
  p.bar_hit = bar_hit;
  const std::uint64_t ready = p.ready_ps;
  rx_queue_.push_back(std::move(p));
  ++stats_.rx_tlps;
  if (trace_) std::fprintf(stderr, "[tlp] %10.1f ns  host -> device  %s\n", static_cast<double>(now_ps) / 1000.0, t.describe().c_str());
  if (t.kind == TlpKind::CompletionData) {
    stats_.completion_payload_bytes += t.payload.size();
    stats_.last_completion_ps = ready;
  }
}

// ------------------------------------------------------------------ host side

std::uint8_t S7RootComplex::host_read(std::uint64_t addr, std::uint16_t length_dw, std::uint8_t first_be,
                                      std::uint8_t last_be) {
  if (!config_.memory_enabled()) fail("host read of " + hex(addr) + " while Memory Space Enable is off");
  if (addr < config_.bar0_base() || addr + 4u * length_dw > std::uint64_t{config_.bar0_base()} + config_.bar0_bytes())
    fail("host read of " + hex(addr) + " is outside BAR0");
  const std::uint8_t tag = host_tag_++;
  if (host_reads_.count(tag)) fail("more than 256 host reads outstanding");
  const Tlp t = Tlp::mem_read(addr, length_dw, 0x0000, tag, first_be, last_be);
  host_reads_[tag] = HostRead{length_dw, addr, t.first_be, t.last_be, std::nullopt};
  to_device(t, now_ps_, true);
  return tag;
}

std::optional<std::vector<std::uint8_t>> S7RootComplex::take_host_read(std::uint8_t tag) {
  auto it = host_reads_.find(tag);
  if (it == host_reads_.end()) fail("no host read with tag " + std::to_string(tag));
  if (!it->second.data) return std::nullopt;
  auto data = std::move(*it->second.data);
  host_reads_.erase(it);
  return data;
}

void S7RootComplex::host_write(std::uint64_t addr, const std::vector<std::uint8_t>& payload, std::uint8_t first_be,
                               std::uint8_t last_be) {
  if (!config_.memory_enabled()) fail("host write of " + hex(addr) + " while Memory Space Enable is off");
  if (addr < config_.bar0_base() || addr + payload.size() > std::uint64_t{config_.bar0_base()} + config_.bar0_bytes())
    fail("host write of " + hex(addr) + " is outside BAR0");
  to_device(Tlp::mem_write(addr, payload, 0x0000, first_be, last_be), now_ps_, true);
}

void S7RootComplex::inject_unsupported(std::uint64_t lo, std::uint64_t hi) { ur_ranges_.emplace_back(lo, hi); }

// ------------------------------------------------------------------ device side

void S7RootComplex::from_device(const std::vector<std::uint32_t>& dws, std::uint64_t now_ps) {
  Tlp t;
  try {
    t = Tlp::decode(dws);
  } catch (const std::exception& e) {
    fail(std::string("malformed TLP from the device: ") + e.what());
  }
  ++stats_.tx_tlps;
  if (trace_) std::fprintf(stderr, "[tlp] %10.1f ns  device -> host  %s\n", static_cast<double>(now_ps) / 1000.0, t.describe().c_str());
  Scheduled s{0, seq_++, Scheduled::DeliverTx, t};
  const std::uint64_t arrival = link_send(now_ps, t.tlp_bytes(), tx_link_free_ps_);
  if (t.kind == TlpKind::MemRead || t.kind == TlpKind::MemWrite) {
    if (t.requester_id != device_id())
      fail("request with requester ID " + hex(t.requester_id) + ", the device is " + hex(device_id()) + ": " +
           t.describe());
    if (!config_.bus_master()) fail("request while Bus Master Enable is off: " + t.describe());
    const std::string bad = check_request(t, config_.max_payload(), config_.max_read_request());
    if (!bad.empty()) fail(t.describe() + ": " + bad);
  }
  if (t.kind == TlpKind::MemRead) {
    if (stats_.device_reads == 0) stats_.first_read_ps = arrival;
    ++stats_.device_reads;
    stats_.device_read_bytes += read_byte_count(t.length_dw, t.first_be, t.last_be);
    stats_.reads_in_flight++;
    stats_.max_reads_in_flight = std::max(stats_.max_reads_in_flight, stats_.reads_in_flight);
    const double jitter = rc_.read_jitter_ns > 0 ? std::uniform_real_distribution<double>(0, rc_.read_jitter_ns)(rng_) : 0;
    s.what = Scheduled::ServeRead;
    s.at_ps = arrival + static_cast<std::uint64_t>((rc_.read_latency_ns + jitter) * 1000);
  } else {
    s.at_ps = arrival;
  }
  sched_.push(std::move(s));
}

void S7RootComplex::serve_read(const Tlp& t, std::uint64_t now_ps) {
  const std::uint16_t total = read_byte_count(t.length_dw, t.first_be, t.last_be);
  const std::uint64_t start = t.address + (read_lower_address(t.address, t.first_be) & 3u);
  stats_.reads_in_flight--;
  for (const auto& [lo, hi] : ur_ranges_) {
    if (start < hi && start + total > lo) {
      ++stats_.unsupported_requests;
      to_device(Tlp::completion(0x0000, t.requester_id, t.tag, CplStatus::UnsupportedRequest, total,
                                read_lower_address(t.address, t.first_be)),
                now_ps, false);
      return;
    }
  }
  // Completions end at multiples of completion_bytes (a multiple of the RCB), the last at the
  // end of the request; each carries whole dwords and the bytes still to come.
  std::uint64_t pos = start;
  const std::uint64_t end = start + total;
  while (pos < end) {
    const std::uint64_t chunk_end = std::min(end, (pos / rc_.completion_bytes + 1) * rc_.completion_bytes);
    const std::uint64_t dw_lo = pos & ~std::uint64_t{3};
    const std::uint64_t dw_hi = (chunk_end + 3) & ~std::uint64_t{3};
    std::vector<std::uint8_t> payload(dw_hi - dw_lo);
    memory_.read(dw_lo, payload.data(), payload.size());
    to_device(Tlp::completion(0x0000, t.requester_id, t.tag, CplStatus::Success,
                              static_cast<std::uint16_t>(end - pos), static_cast<std::uint8_t>(pos & 0x7f), payload),
              now_ps, false);
    pos = chunk_end;
  }
}

void S7RootComplex::deliver(const Tlp& t) {
  if (t.kind == TlpKind::MemWrite) {
    ++stats_.device_writes;
    for (unsigned i = 0; i < t.length_dw; ++i) {
      const std::uint8_t be = dword_enables(t, i);
      for (unsigned b = 0; b < 4; ++b) {
        if (be >> b & 1) {
          memory_.write8(t.address + 4 * i + b, t.payload[4 * i + b]);
          ++stats_.device_write_bytes;
        }
      }
    }
    return;
  }
  // A completion for a host read of BAR0.
  auto it = host_reads_.find(t.tag);
  if (it == host_reads_.end() || it->second.data) fail("completion for no outstanding host read: " + t.describe());
  HostRead& r = it->second;
  if (t.completer_id != device_id()) fail("completion with completer ID " + hex(t.completer_id) + ": " + t.describe());
  if (t.requester_id != 0x0000) fail("completion for requester " + hex(t.requester_id) + ": " + t.describe());
  if (t.status != CplStatus::Success) {
    r.data = std::vector<std::uint8_t>(4u * r.length_dw, 0xff);  // what the CPU reads from a failed request
    return;
  }
  const std::uint16_t want_bc = read_byte_count(r.length_dw, r.first_be, r.last_be);
  const std::uint8_t want_la = read_lower_address(r.address, r.first_be);
  if (t.kind != TlpKind::CompletionData || t.length_dw != r.length_dw || t.byte_count != want_bc ||
      t.lower_address != want_la)
    fail("completion does not match its read (length " + std::to_string(r.length_dw) + ", byte count " +
         std::to_string(want_bc) + ", lower address " + hex(want_la) + "): " + t.describe());
  r.data = t.payload;
}

void S7RootComplex::serve(const Scheduled& s, std::uint64_t now_ps) {
  switch (s.what) {
    case Scheduled::ServeRead: serve_read(s.tlp, now_ps); break;
    case Scheduled::DeliverTx: deliver(s.tlp); break;
    case Scheduled::Msi:
      out_.interrupt_rdy = true;
      msi_ack_now_ = true;
      break;
  }
}

// ------------------------------------------------------------------ the user-clock edge

void S7RootComplex::build_rx_beat(std::uint64_t now_ps) {
  out_.rx_valid = false;
  out_.rx_data = {};
  out_.rx_user = 0;
  out_.rx_last = false;
  out_.rx_keep = 0;
  auto head_ready = [&] { return !rx_queue_.empty() && rx_queue_.front().ready_ps <= now_ps; };
  unsigned filled = 0;
  std::uint32_t sof = 0, eof = 0, bar_hit = 0;
  auto start_next = [&](unsigned at) {
    rx_cur_ = std::move(rx_queue_.front().dws);
    if (rx_queue_.front().bar_hit) bar_hit = 1;
    rx_queue_.pop_front();
    rx_pos_ = 0;
    rx_cur_active_ = true;
    sof = 0x10 | (at == 2 ? 0x8 : 0x0);
  };
  if (!rx_cur_active_) {
    if (!head_ready()) return;
    start_next(0);
  }
  while (filled < kBeatDws && rx_cur_active_) {
    while (filled < kBeatDws && rx_pos_ < rx_cur_.size()) out_.rx_data[filled++] = rx_cur_[rx_pos_++];
    if (rx_pos_ == rx_cur_.size()) {
      rx_cur_active_ = false;
      eof = 0x10 | (4 * (filled - 1) + 3);
      if (rc_.rx_straddle && filled <= 2 && head_ready()) {
        filled = 2;
        start_next(2);
      }
    }
  }
  out_.rx_valid = true;
  out_.rx_keep = 0xffff;  // the 128-bit interface marks packet ends with is_eof, not tkeep
  out_.rx_last = eof != 0;
  out_.rx_user = (bar_hit << 2) | (sof << 10) | (eof << 17);
  rx_beat_valid_ = true;
}

void S7RootComplex::tick(const ShellToHardBlock& in, std::uint64_t now_ps) {
  now_ps_ = now_ps;

  // ---- MSI handshake: cfg_interrupt is held until cfg_interrupt_rdy.
  if (msi_ack_now_) {
    if (!in.interrupt) fail("cfg_interrupt dropped before cfg_interrupt_rdy");
    msi_ack_now_ = false;
    msi_pending_ = false;
    ++stats_.msis;
  } else if (msi_pending_ && !in.interrupt) {
    fail("cfg_interrupt dropped before cfg_interrupt_rdy");
  } else if (in.interrupt && !msi_pending_) {
    if (in.interrupt_assert) fail("legacy INTx requested (cfg_interrupt_assert); the shell uses MSI only");
    if (!config_.msi_enabled() || !config_.bus_master()) fail("MSI requested while MSI or bus mastering is disabled");
    if (in.interrupt_di != 0) fail("MSI vector " + std::to_string(in.interrupt_di) + " requested; one is enabled");
    msi_pending_ = true;
    // The message follows the writes already on the link (posted writes stay in order).
    const auto at = std::max(now_ps + static_cast<std::uint64_t>(rc_.msi_latency_ns * 1000), tx_link_free_ps_);
    sched_.push(Scheduled{at, seq_++, Scheduled::Msi, Tlp{}});
  }
  out_.interrupt_rdy = false;

  // ---- TX: the device's TLPs, a beat at a time.
  if (in.tx_valid && out_.tx_ready) {
    if (!link_up_) fail("TX beat while the link is down");
    const bool last = in.tx_last;
    const std::uint16_t n = last ? keep_dws(in.tx_keep) : (in.tx_keep == 0xffff ? 4 : 0);
    if (n == 0) fail("TX beat with tkeep " + hex(in.tx_keep) + (last ? " on its last beat" : " before its last beat"));
    for (unsigned i = 0; i < n; ++i) tx_cur_.push_back(in.tx_data[i]);

    if (last) {
      from_device(tx_cur_, now_ps);
      tx_cur_.clear();
    }
  }
  const bool room = tx_link_free_ps_ < now_ps + static_cast<std::uint64_t>(rc_.tx_buffer_bytes * ps_per_byte_);
  out_.tx_ready = link_up_ && room &&
                  (rc_.tx_ready_prob >= 1.0 || std::uniform_real_distribution<double>(0, 1)(rng_) < rc_.tx_ready_prob);

  // ---- scheduled work: reads served, TLPs arriving at the root complex, MSI acknowledges.
  while (!sched_.empty() && sched_.top().at_ps <= now_ps) {
    const Scheduled s = sched_.top();
    sched_.pop();
    serve(s, now_ps);
  }

  // ---- RX: present the next beat once the current one is taken.
  if (rx_beat_valid_ && in.rx_ready) rx_beat_valid_ = false;
  if (!rx_beat_valid_ && link_up_) build_rx_beat(now_ps);

  update_status();
}

}  // namespace sgpu::board
