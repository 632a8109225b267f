#include "sgpu/vidmm/segment_allocator.hpp"

#include <algorithm>
#include <cassert>

namespace sgpu::vidmm {

namespace {
std::uint64_t align_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) & ~(a - 1); }
std::uint64_t align_down(std::uint64_t v, std::uint64_t a) { return v & ~(a - 1); }
}  // namespace

SegmentAllocator::SegmentAllocator(std::uint64_t size, std::uint64_t page_size)
    : size_(size & ~(page_size - 1)), page_(page_size), free_bytes_(size_) {
  if (size_ != 0) free_.emplace(0, size_);
}

std::uint64_t SegmentAllocator::largest_free() const {
  std::uint64_t best = 0;
  for (const auto& [offset, bytes] : free_) best = std::max(best, bytes);
  return best;
}

std::optional<std::uint64_t> SegmentAllocator::allocate(const Request& r) {
  if (r.size == 0 || r.size > free_bytes_) return std::nullopt;
  const std::uint64_t align = std::max(r.alignment, page_);
  const std::uint64_t lo_limit = r.window_begin;
  const std::uint64_t hi_limit = std::min(r.window_end, size_);
  if (lo_limit >= hi_limit || hi_limit - lo_limit < r.size) return std::nullopt;

  // Where a request fits inside the hole [begin, end), if at all.
  auto place = [&](std::uint64_t begin, std::uint64_t end) -> std::optional<std::uint64_t> {
    begin = std::max(begin, lo_limit);
    end = std::min(end, hi_limit);
    if (end <= begin || end - begin < r.size) return std::nullopt;
    if (r.from_end) {
      const std::uint64_t at = align_down(end - r.size, align);
      if (at < begin) return std::nullopt;
      return at;
    }
    const std::uint64_t at = align_up(begin, align);
    if (at + r.size > end) return std::nullopt;
    return at;
  };

  std::optional<std::uint64_t> at;
  std::map<std::uint64_t, std::uint64_t>::iterator hole;
  if (r.from_end) {
    for (auto it = free_.rbegin(); it != free_.rend(); ++it) {
      if (it->first >= hi_limit) continue;
      if (it->first + it->second <= lo_limit) break;
      if ((at = place(it->first, it->first + it->second))) {
        hole = std::prev(it.base());
        break;
      }
    }
  } else {
    auto it = free_.upper_bound(lo_limit);
    if (it != free_.begin()) --it;
    for (; it != free_.end() && it->first < hi_limit; ++it) {
      if ((at = place(it->first, it->first + it->second))) {
        hole = it;
        break;
      }
    }
  }
  if (!at) return std::nullopt;

  // Split the hole into what remains below and above the new range.
  const std::uint64_t hole_begin = hole->first;
  const std::uint64_t hole_end = hole->first + hole->second;
  free_.erase(hole);
  if (*at > hole_begin) free_.emplace(hole_begin, *at - hole_begin);
  if (*at + r.size < hole_end) free_.emplace(*at + r.size, hole_end - (*at + r.size));
  free_bytes_ -= r.size;
  return at;
}

void SegmentAllocator::free(std::uint64_t offset, std::uint64_t size) {
  assert(size != 0 && offset + size <= size_);
  auto next = free_.lower_bound(offset);
  assert(next == free_.end() || next->first >= offset + size);
  std::uint64_t begin = offset, end = offset + size;
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    assert(prev->first + prev->second <= offset);
    if (prev->first + prev->second == offset) {
      begin = prev->first;
      free_.erase(prev);
    }
  }
  if (next != free_.end() && next->first == end) {
    end += next->second;
    free_.erase(next);
  }
  free_.emplace(begin, end - begin);
  free_bytes_ += size;
}

}  // namespace sgpu::vidmm
