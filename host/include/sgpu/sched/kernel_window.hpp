// KernelWindow: the top pages of the GART table, kept out of the memory manager's aperture
// segment for what the kernel maps itself. The adapter describes the window as an aperture
// segment of its own, the DMA-buffer segment (kmd::describe(info, reserved_pages),
// AdapterDescription::dma_buffer_segment_id): contexts name it in DmaBufferSegmentSet and
// SubmitCommand names it for every DMA buffer, whose GPU address lies inside it.
//
// With the GART on, a non-privileged submission can only fetch its DMA buffer through the
// aperture or the memory segment (Device::submit refuses a system-physical buffer without the
// privileged flag), so every context's DMA buffers are mapped here, once, when their pool creates
// them (the window is the pools' kmd::DmaBufferMapper) and unmapped when the pool frees them. The
// first page of the window is the kernel fence page: one 64-bit slot per context, written by the
// submission-fence packet Patch fills in, so each context's last completed fence can be read from
// host memory without MMIO.
//
// Mapping goes through Aperture::map/unmap (MMIO), never through MAP/UNMAP packets: the memory
// manager owns the rest of the aperture through those, the window is disjoint from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "sgpu/aperture.hpp"
#include "sgpu/kmd/command_pools.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/vidmm/segment_allocator.hpp"

namespace sgpu::sched {

class KernelWindow final : public kmd::DmaBufferMapper {
 public:
  /// Reserves aperture pages [aperture.pages() - pages, aperture.pages()) and maps the fence
  /// page at its start. InvalidArgument when `pages` < 2 or larger than the table. The aperture
  /// and the transport must outlive the window.
  static Result<std::unique_ptr<KernelWindow>> create(Aperture& aperture, Transport& transport,
                                                      std::uint32_t pages);
  /// Unmaps everything still mapped.
  ~KernelWindow() override;
  KernelWindow(const KernelWindow&) = delete;
  KernelWindow& operator=(const KernelWindow&) = delete;

  /// DmaBufferMapper: first fit in the window; OutOfMemory names the pages asked and free.
  Result<std::uint64_t> map(const DmaMemory& memory) override;
  void unmap(std::uint64_t gpu_address, std::size_t bytes) noexcept override;

  /// One 64-bit slot of the fence page per context. OutOfMemory when all are taken.
  Result<std::uint32_t> allocate_fence_slot();
  void free_fence_slot(std::uint32_t slot);
  std::uint64_t fence_slot_gpu(std::uint32_t slot) const { return aperture_.gpu_addr(first_page_) + 8ull * slot; }
  /// The slot's value as the GPU last wrote it (host memory, no MMIO).
  std::uint64_t fence_slot_value(std::uint32_t slot) const;
  void clear_fence_slot(std::uint32_t slot);
  static constexpr std::uint32_t kFenceSlots = static_cast<std::uint32_t>(Aperture::kPageSize / 8);

  std::uint32_t first_page() const { return first_page_; }
  std::uint32_t pages() const { return pages_; }
  /// The window's GPU range [gpu_base(), gpu_base() + bytes()): the DMA-buffer segment.
  std::uint64_t gpu_base() const { return aperture_.gpu_addr(first_page_); }
  std::uint64_t bytes() const { return std::uint64_t{pages_} * Aperture::kPageSize; }
  /// Pages free for DMA buffers.
  std::uint32_t free_pages() const { return static_cast<std::uint32_t>(alloc_.free_bytes() / Aperture::kPageSize); }
  std::uint32_t mapped_buffers() const { return mapped_buffers_; }

 private:
  KernelWindow(Aperture& aperture, std::uint32_t first_page, std::uint32_t pages, DmaMemory fence_page);
  Aperture& aperture_;
  std::uint32_t first_page_;
  std::uint32_t pages_;
  DmaMemory fence_page_;
  vidmm::SegmentAllocator alloc_;  // pages [first_page_ + 1, first_page_ + pages_)
  std::vector<bool> slot_used_;
  std::uint32_t mapped_buffers_ = 0;
};

}  // namespace sgpu::sched
