// Idle skipping for the fast sgpu_top model (SimConfig::idle_skip, docs/architecture.md
// "Simulation models"): when a cycle changed nothing in the device but its counters, and nothing
// outside it will change for a while, the cycles up to the next event are not simulated one by
// one: the counters are advanced by what those cycles would have added and the combinational
// logic is evaluated once. Two kinds of stretch qualify: idle ones (the device waits: for
// memory, a WAIT_MEM's poll interval, nothing at all) and write streams (the copy engine's burst
// writer sends the same W beat every cycle, as a FILL does; the caller replays the beats on its
// memory model).
//
// Why that is exact. One cycle is simulated normally (the verification tick) and the model's whole
// state before and after it is compared: outside the counters below and the combinational values
// computed from them, not a byte may differ, and each counter must have moved by its one-cycle
// step. The inputs stay as they were (the caller proves that for its agents: no register access,
// no AXI valid but a write stream's W beat, repeated, no response falling due). Then the next cycle starts from a state that differs
// only in the counters, and the counters reach the rest of the design only through the
// comparisons listed here, so the cycle repeats until one of them flips; window() stops short
// of that. The counters and their only readers:
//   - reg_map cycle_q (CYCLE_LO/HI, TIMESTAMP): read by a register access (none during a skip)
//     and by the CP's TIMESTAMP once its writes are acknowledged (a state change, so not here);
//   - cp_watchdog count_q: `count_q >= CP_WATCHDOG` (expiry) and its saturation at all ones;
//   - cp_ctrl wait_cnt_q (a WAIT_MEM's poll interval): `wait_cnt_q == 0` in the pause state;
//   - the copy engine's sgpu_dma_wr, while it streams (all three step together): burst_left_q
//     (`== 0`, a burst starts; `burst_beats == 1`, its last beat), k_q (`< row_in_beats`,
//     `== row_out_beats - 1`, `== 0` for the strobes), in_cnt_q (`== row_in_beats - 1`; also
//     in_row_bytes_o, read only into a fault's address).
// Any other state that moves (an unknown counter, a FIFO, a handshake) fails the comparison and
// nothing is skipped. IdleSkip::Verify checks each skip against cycle-by-cycle simulation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

class Vsgpu_top_fast;

namespace sgpu::sim {

/// Idle skipping of the fast model (SimConfig::idle_skip).
enum class IdleSkip {
  /// Every cycle is simulated.
  Off,
  /// Idle stretches are skipped (tb/sim/idle_skip.hpp).
  On,
  /// As On, but every skip is also simulated cycle by cycle and the model's whole state compared
  /// with the skip's (a mismatch is a SimError): the tests' proof that skipping is exact.
  Verify,
};

/// The model side of idle skipping: the verification tick's comparison, the window, the skip.
/// (The copy engine's writer is an RTL instance this knows by name: a change of sgpu_dma_wr's
/// counters or comparisons needs the window below changed with it; the tests' Verify runs catch
/// a window that is too long.)
class FastIdleSkip {
 public:
  explicit FastIdleSkip(Vsgpu_top_fast& top);

  /// Records the model's state; the caller then runs one normal cycle (the verification tick).
  void before_tick();
  /// After the verification tick: how many more cycles provably repeat it with only the counters
  /// moving (0 if anything else changed), before any input change the caller has to account for.
  std::uint64_t window() const;
  /// Advances the model over `cycles` such cycles (at most window()): the counters by their
  /// steps, then one evaluation of the combinational logic. The clock is left as a cycle leaves it.
  void skip(std::uint64_t cycles);

  /// The model's state as bytes (IdleSkip::Verify).
  std::vector<unsigned char> state() const;
  void restore(const std::vector<unsigned char>& state);
  /// Offset of the first byte where the model differs from `state`, or npos.
  std::size_t first_difference(const std::vector<unsigned char>& state) const;
  static constexpr std::size_t npos = static_cast<std::size_t>(-1);

 private:
  struct Counters {
    std::uint64_t cycle = 0;
    std::uint32_t watchdog = 0;
    std::uint32_t wait = 0;
    std::uint32_t burst_left = 0, k = 0, in_cnt = 0;  // the copy engine's burst writer
  };
  Counters counters() const;
  unsigned char* bytes() const;

  Vsgpu_top_fast& top_;
  std::vector<unsigned char> before_;
  Counters counters_before_;
  bool armed_ = false;  ///< before_tick() was called and no skip() since
  /// Byte ranges [first, second) of the model's state copied before the verification tick, and
  /// compared after it.
  std::vector<std::pair<std::size_t, std::size_t>> copied_, compared_;
};

}  // namespace sgpu::sim
