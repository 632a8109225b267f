// SegmentAllocator: hands out page-granular, aligned ranges of one segment, from the bottom
// (first fit from offset 0) or from the top (first fit from the end), optionally restricted to
// a window of the segment (a bank). Free ranges are kept in an offset-ordered map and merged
// with their neighbours on free, so the state is canonical: two allocators that hold the same
// ranges compare equal, which is what the tests of "a rejected call changes nothing" use.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

namespace sgpu::vidmm {

class SegmentAllocator {
 public:
  struct Request {
    std::uint64_t size = 0;       ///< bytes, a multiple of the page size
    std::uint64_t alignment = 0;  ///< power of two >= page size (0 = page size)
    bool from_end = false;        ///< scan from the top and place at the high end of the hole
    std::uint64_t window_begin = 0;                ///< place only inside [window_begin,
    std::uint64_t window_end = ~std::uint64_t{0};  ///<                    window_end)
  };

  /// A segment of `size` bytes managed in units of `page_size` (a power of two).
  SegmentAllocator(std::uint64_t size, std::uint64_t page_size);

  /// Offset of a new range, or nullopt if no hole fits (nothing changes then).
  std::optional<std::uint64_t> allocate(const Request& request);
  /// Returns [offset, offset + size) exactly as it was allocated.
  void free(std::uint64_t offset, std::uint64_t size);

  std::uint64_t size() const { return size_; }
  std::uint64_t page_size() const { return page_; }
  std::uint64_t free_bytes() const { return free_bytes_; }
  std::uint64_t used_bytes() const { return size_ - free_bytes_; }
  std::size_t free_fragments() const { return free_.size(); }
  std::uint64_t largest_free() const;
  /// Free ranges, offset -> size (canonical: no two adjacent).
  const std::map<std::uint64_t, std::uint64_t>& free_ranges() const { return free_; }
  bool operator==(const SegmentAllocator& o) const { return size_ == o.size_ && free_ == o.free_; }
  bool operator!=(const SegmentAllocator& o) const { return !(*this == o); }

 private:
  std::uint64_t size_;
  std::uint64_t page_;
  std::uint64_t free_bytes_;
  std::map<std::uint64_t, std::uint64_t> free_;
};

}  // namespace sgpu::vidmm
