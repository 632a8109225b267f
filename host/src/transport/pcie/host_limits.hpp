// What the process may pin: RLIMIT_MEMLOCK, CAP_IPC_LOCK (which lifts it) and what is locked now.
#pragma once

#include <cstdint>

namespace sgpu::pcie::detail {

struct LockLimits {
  std::uint64_t limit = 0;    ///< RLIMIT_MEMLOCK soft limit, bytes (UINT64_MAX = unlimited)
  std::uint64_t locked = 0;   ///< VmLck + VmPin of this process, bytes
  bool cap_ipc_lock = false;  ///< the limit does not apply
};
LockLimits lock_limits();

/// Needed on top of what is locked now to pin `more` bytes, or 0 if it fits.
inline bool would_exceed(const LockLimits& l, std::uint64_t more) {
  return !l.cap_ipc_lock && l.limit != UINT64_MAX && l.locked + more > l.limit;
}

}  // namespace sgpu::pcie::detail
