// Idle skipping for the fast sgpu_top model (SimConfig::idle_skip, docs/architecture.md
// "Simulation models"): when a cycle changed nothing in the device but its free-running
// counters, and nothing outside it will change for a while, the cycles up to the next event are
// not simulated one by one: the counters are advanced by what those cycles would have added and
// the combinational logic is evaluated once.
//
// Why that is exact. One cycle is simulated normally (the verification tick) and the model's whole
// state before and after it is compared: outside the counters below and the combinational values
// computed from them, not a byte may differ, and each counter must have moved by its one-cycle
// step. The inputs stay as they were (the caller proves that for its agents: no register access,
// no AXI valid, no response falling due). Then the next cycle starts from a state that differs
// only in the counters, and the counters reach the rest of the design only through the
// comparisons listed here, so the cycle repeats until one of them flips; window() stops short
// of that. The counters and their only readers:
//   - reg_map cycle_q (CYCLE_LO/HI, TIMESTAMP): read by a register access (none during a skip)
//     and by the CP's TIMESTAMP once its writes are acknowledged (a state change, so not here);
//   - cp_watchdog count_q: `count_q >= CP_WATCHDOG` (expiry) and its saturation at all ones;
//   - cp_ctrl wait_cnt_q (a WAIT_MEM's poll interval): `wait_cnt_q == 0` in the pause state.
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
