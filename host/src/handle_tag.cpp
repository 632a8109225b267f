#include "handle_tag.hpp"

#include <atomic>

namespace sgpu::detail {

std::uint32_t next_handle_tag() noexcept {
  static std::atomic<std::uint32_t> last{0};
  std::uint32_t tag = 0;
  while (tag == 0) tag = last.fetch_add(1, std::memory_order_relaxed) + 1;
  return tag;
}

}  // namespace sgpu::detail
