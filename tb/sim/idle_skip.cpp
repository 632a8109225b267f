#include "sim/idle_skip.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "Vsgpu_top_fast.h"
#include "Vsgpu_top_fast___024root.h"

// Verilator 5.006's settle region (defined in the model's generated code, declared only in its
// Vsgpu_top_fast.cpp): evaluates every combinational process once from the registers and inputs,
// as at time 0. Another Verilator that renames it stops this from linking, not from being exact.
void Vsgpu_top_fast___024root___eval_settle(Vsgpu_top_fast___024root* vlSelf);

namespace sgpu::sim {
namespace {

using Root = Vsgpu_top_fast___024root;

// The counters' one-cycle steps the verification tick must show, and the watchdog's saturation.
constexpr std::uint32_t kWatchdogSaturated = 0xffffffffu;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Winvalid-offsetof"
#define SGPU_MEMBER_RANGE(member) \
  std::pair<std::size_t, std::size_t> { offsetof(Root, member), offsetof(Root, member) + sizeof(Root::member) }

using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;

// The counters and the combinational values computed from them (they follow the counters; the
// comparison of every register and input covers whatever else could move them).
Ranges counter_ranges() {
  return {
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_reg_map__DOT__cycle_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_reg_map__DOT__hwif_in),  // CYCLE_LO's next value
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_cp__DOT__u_watchdog__DOT__count_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_cp__DOT__u_watchdog__DOT__count_d),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_cp__DOT__u_ctrl__DOT__wait_cnt_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_cp__DOT__u_ctrl__DOT__wait_cnt_d),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_wr__DOT__burst_left_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_wr__DOT__burst_left_d),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_wr__DOT__k_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_wr__DOT__k_d),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_wr__DOT__in_cnt_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_wr__DOT__in_cnt_d),
  };
}

// The read buffers' RAMs (sgpu_dma_rbuf, 4096 beats each: 93 % of the model's bytes), neither
// copied nor compared: an entry is written only by a push, and a push moves the buffer's write
// pointer, which is compared. So a verification tick that passes pushed nothing, and the cycles
// it proves repeat it push nothing either.
Ranges ram_ranges() {
  return {
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_dma_rd__DOT__u_rbuf__DOT__mem_q),
      SGPU_MEMBER_RANGE(sgpu_top__DOT__u_copy__DOT__u_rd__DOT__u_rbuf__DOT__mem_q),
  };
}

// [0, sizeof(Root)) without `holes`.
Ranges complement(Ranges holes) {
  std::sort(holes.begin(), holes.end());
  Ranges out;
  std::size_t at = 0;
  for (const auto& [first, last] : holes) {
    if (first > at) out.emplace_back(at, first);
    at = std::max(at, last);
  }
  if (at < sizeof(Root)) out.emplace_back(at, sizeof(Root));
  return out;
}
#undef SGPU_MEMBER_RANGE
#pragma GCC diagnostic pop

}  // namespace

FastIdleSkip::FastIdleSkip(Vsgpu_top_fast& top)
    : top_(top), before_(sizeof(Root)), copied_(complement(ram_ranges())) {
  Ranges holes = ram_ranges();
  for (const auto& r : counter_ranges()) holes.push_back(r);
  compared_ = complement(holes);
}

unsigned char* FastIdleSkip::bytes() const { return reinterpret_cast<unsigned char*>(top_.rootp); }

FastIdleSkip::Counters FastIdleSkip::counters() const {
  const Root& r = *top_.rootp;
  return {r.sgpu_top__DOT__u_reg_map__DOT__cycle_q,
          r.sgpu_top__DOT__u_cp__DOT__u_watchdog__DOT__count_q,
          r.sgpu_top__DOT__u_cp__DOT__u_ctrl__DOT__wait_cnt_q,
          r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__burst_left_q,
          r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__k_q,
          r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__in_cnt_q};
}

void FastIdleSkip::before_tick() {
  const unsigned char* now = bytes();
  for (const auto& [first, last] : copied_) std::memcpy(before_.data() + first, now + first, last - first);
  counters_before_ = counters();
  armed_ = true;
}

std::uint64_t FastIdleSkip::window() const {
  if (!armed_) return 0;
  // Not a byte of state outside the counters changed.
  const unsigned char* now = bytes();
  for (const auto& [first, last] : compared_) {
    if (std::memcmp(before_.data() + first, now + first, last - first) != 0) return 0;
  }

  // Each counter moved by its step: the cycle counter +1; the watchdog +1 (watching, no
  // progress) or held (at 0 not watching, at 1 with progress every cycle, or saturated); the
  // poll interval -1 (pausing) or held (not).
  const Counters b = counters_before_;
  const Counters a = counters();
  if (a.cycle != b.cycle + 1) return 0;
  const bool watchdog_counts = a.watchdog == b.watchdog + 1;
  if (!watchdog_counts && a.watchdog != b.watchdog) return 0;
  const bool wait_counts = b.wait != 0 && a.wait == b.wait - 1;
  if (!wait_counts && a.wait != b.wait) return 0;

  // The copy engine's burst writer streaming a row (sgpu_dma_wr: a beat produced and taken every
  // cycle, inside a burst, taking an input beat each time): its burst's beats left -1, its output
  // and input beat counts of the row +1. All three or none.
  const bool burst_counts = b.burst_left != 0 && a.burst_left == b.burst_left - 1;
  const bool k_counts = a.k == b.k + 1;
  const bool in_counts = a.in_cnt == b.in_cnt + 1;
  if (!burst_counts && a.burst_left != b.burst_left) return 0;
  if (!k_counts && a.k != b.k) return 0;
  if (!in_counts && a.in_cnt != b.in_cnt) return 0;
  const bool writer_streams = burst_counts || k_counts || in_counts;
  if (writer_streams && !(burst_counts && k_counts && in_counts)) return 0;

  // The next cycles start from `a` plus k steps (k = 0, 1, ...); each must see every comparison
  // as this one did.
  std::uint64_t window = UINT64_MAX;
  if (writer_streams) {
    // Its comparisons: burst_left_q == 0 (a burst starts) and burst_beats == 1 (its last beat):
    // burst_left_q = a - k must stay >= 2. k_q < row_in_beats (an input beat is taken),
    // k_q == row_out_beats - 1 (the row's last beat, also its strobes) and in_cnt_q ==
    // row_in_beats - 1 (the row's last input beat): both counts must stay below row_in_beats - 1,
    // which keeps k_q below row_out_beats - 1 too (out_beats >= in_beats: the same bytes, shifted
    // by the lane offset). k_q == 0 (the first beat's strobes) stays false: k_q only grows.
    // (The RTL compares them without forming row_in_beats, timing pass 6b: k_q * B < len and
    // the like, the same comparisons; since timing pass 14 it keeps them in flags formed a beat
    // ahead, from k_q + 1, so the skip may reach one cycle less far: k_q = row_in_beats - 2, where
    // the flags it leaves unmoved are still false.) The row is the head of the writer's row FIFO;
    // its input beats are ceil(len / B), len being the entry's low 32 bits.
    const Root& r = *top_.rootp;
    constexpr std::uint64_t kBusBytes = sizeof(Root::sgpu_top__DOT__u_copy__DOT__u_wr__DOT__wdata_q);
    const auto& head = r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__u_wrow_fifo__DOT__mem_q
        [r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__u_wrow_fifo__DOT__rd_ptr_q];
    const std::uint64_t row_len = head[0];
    const std::uint64_t row_in = (row_len + kBusBytes - 1) / kBusBytes;
    if (a.burst_left < 2 || row_in < 3 || a.k + 2 >= row_in || a.in_cnt + 2 >= row_in) return 0;
    window = std::min<std::uint64_t>({a.burst_left - 1u, row_in - 2 - a.k, row_in - 2 - a.in_cnt});
  }
  if (wait_counts) window = a.wait;  // starts with wait_cnt_q = a.wait - k, which must stay != 0
  if (watchdog_counts) {
    const Root& r = *top_.rootp;
    const std::uint32_t limit = r.sgpu_top__DOT__u_reg_map__DOT__u_regs__DOT__field_storage.CP_WATCHDOG.cycles.value;
    // count_q = a.watchdog + k must stay below the limit (0 = off) and the saturation value:
    // the registered expiry (ge_q) says whether it reached the limit, and is not moved here.
    window = std::min<std::uint64_t>(window, kWatchdogSaturated - a.watchdog);
    const std::uint64_t next = std::uint64_t{a.watchdog} + 1;
    if (limit != 0) window = std::min<std::uint64_t>(window, limit > next ? limit - next : 0);
  }
  return window;
}

void FastIdleSkip::skip(std::uint64_t cycles) {
  if (cycles == 0) return;
  if (cycles > window()) throw std::logic_error("FastIdleSkip::skip: beyond the proven window");
  Root& r = *top_.rootp;
  const Counters b = counters_before_;
  const Counters a = counters();
  r.sgpu_top__DOT__u_reg_map__DOT__cycle_q += cycles;
  if (a.watchdog != b.watchdog) r.sgpu_top__DOT__u_cp__DOT__u_watchdog__DOT__count_q += static_cast<std::uint32_t>(cycles);
  if (a.wait != b.wait) r.sgpu_top__DOT__u_cp__DOT__u_ctrl__DOT__wait_cnt_q -= static_cast<std::uint32_t>(cycles);
  if (a.burst_left != b.burst_left) {
    r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__burst_left_q = static_cast<std::uint16_t>(a.burst_left - cycles);
    r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__k_q += static_cast<std::uint32_t>(cycles);
    r.sgpu_top__DOT__u_copy__DOT__u_wr__DOT__in_cnt_q += static_cast<std::uint32_t>(cycles);
  }
  Vsgpu_top_fast___024root___eval_settle(top_.rootp);
  armed_ = false;  // the next skip needs a verification tick of its own
}

std::vector<unsigned char> FastIdleSkip::state() const {
  const unsigned char* b = bytes();
  return {b, b + sizeof(Root)};
}

void FastIdleSkip::restore(const std::vector<unsigned char>& state) {
  if (state.size() != sizeof(Root)) throw std::invalid_argument("FastIdleSkip::restore: not a state of this model");
  std::memcpy(bytes(), state.data(), sizeof(Root));
}

std::size_t FastIdleSkip::first_difference(const std::vector<unsigned char>& state) const {
  const unsigned char* b = bytes();
  for (std::size_t i = 0; i < state.size() && i < sizeof(Root); ++i) {
    if (b[i] != state[i]) return i;
  }
  return npos;
}

}  // namespace sgpu::sim
