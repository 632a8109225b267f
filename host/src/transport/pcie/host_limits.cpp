#include "transport/pcie/host_limits.hpp"

#include <sys/resource.h>

#include <fstream>
#include <sstream>
#include <string>

namespace sgpu::pcie::detail {

LockLimits lock_limits() {
  LockLimits l;
  rlimit r{};
  if (::getrlimit(RLIMIT_MEMLOCK, &r) == 0) l.limit = r.rlim_cur == RLIM_INFINITY ? UINT64_MAX : r.rlim_cur;
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    std::istringstream in(line);
    std::string key;
    in >> key;
    if (key == "CapEff:") {
      std::string hex;
      in >> hex;
      const unsigned long long caps = std::stoull(hex, nullptr, 16);
      l.cap_ipc_lock = (caps >> 14) & 1;  // CAP_IPC_LOCK
    } else if (key == "VmLck:" || key == "VmPin:") {
      std::uint64_t kib = 0;
      in >> kib;
      l.locked += kib * 1024;
    }
  }
  return l;
}

}  // namespace sgpu::pcie::detail
