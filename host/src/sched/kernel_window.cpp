#include "sgpu/sched/kernel_window.hpp"

#include <fmt/format.h>

namespace sgpu::sched {

namespace {
constexpr std::uint64_t kPage = Aperture::kPageSize;
}

Result<std::unique_ptr<KernelWindow>> KernelWindow::create(Aperture& aperture, Transport& transport,
                                                           std::uint32_t pages) {
  if (pages < 2 || pages > aperture.pages())
    return Error::invalid(
        "kernel window: {} pages asked; it needs the fence page plus at least one page, and "
        "the aperture has {}",
        pages, aperture.pages());
  SGPU_ASSIGN_OR_RETURN(auto fence, transport.alloc_dma(kPage));
  const std::uint32_t first = aperture.pages() - pages;
  SGPU_RETURN_IF_ERROR(aperture.map(first, fence));
  return std::unique_ptr<KernelWindow>(new KernelWindow(aperture, first, pages, std::move(fence)));
}

KernelWindow::KernelWindow(Aperture& aperture, std::uint32_t first_page, std::uint32_t pages, DmaMemory fence_page)
    : aperture_(aperture),
      first_page_(first_page),
      pages_(pages),
      fence_page_(std::move(fence_page)),
      alloc_(std::uint64_t{pages - 1} * kPage, kPage),
      slot_used_(kFenceSlots, false) {}

KernelWindow::~KernelWindow() {
  // Best effort: whatever is still mapped goes back to the dummy page before its memory dies.
  (void)aperture_.unmap(first_page_, pages_);
}

Result<std::uint64_t> KernelWindow::map(const DmaMemory& memory) {
  const std::uint64_t bytes = (memory.size() + kPage - 1) & ~(kPage - 1);
  vidmm::SegmentAllocator::Request r;
  r.size = bytes;
  auto off = alloc_.allocate(r);
  if (!off)
    return Error::make(Errc::OutOfMemory, Touched::Nothing,
                       "kernel window: no room for a {}-page DMA buffer ({} of {} pages free, largest hole {})",
                       bytes / kPage, free_pages(), pages_ - 1, alloc_.largest_free() / kPage);
  const auto page = static_cast<std::uint32_t>(first_page_ + 1 + *off / kPage);
  if (Status s = aperture_.map(page, memory); !s) {
    alloc_.free(*off, bytes);
    return std::move(s).error();
  }
  ++mapped_buffers_;
  return aperture_.gpu_addr(page);
}

void KernelWindow::unmap(std::uint64_t gpu_address, std::size_t bytes) noexcept {
  const std::uint64_t size = (bytes + kPage - 1) & ~(kPage - 1);
  const std::uint64_t first_gpu = aperture_.gpu_addr(first_page_ + 1);
  if (gpu_address < first_gpu || size == 0) return;
  const std::uint64_t off = gpu_address - first_gpu;
  if (off + size > alloc_.size()) return;
  const auto page = static_cast<std::uint32_t>(first_page_ + 1 + off / kPage);
  // Only a range that is mapped is returned (unmap twice is harmless).
  if (!aperture_.is_mapped(page)) return;
  (void)aperture_.unmap(page, static_cast<std::uint32_t>(size / kPage));
  alloc_.free(off, size);
  --mapped_buffers_;
}

Result<std::uint32_t> KernelWindow::allocate_fence_slot() {
  for (std::uint32_t i = 0; i < kFenceSlots; ++i)
    if (!slot_used_[i]) {
      slot_used_[i] = true;
      clear_fence_slot(i);
      return i;
    }
  return Error::make(Errc::OutOfMemory, Touched::Nothing, "kernel window: all {} context fence slots are in use",
                     kFenceSlots);
}

void KernelWindow::free_fence_slot(std::uint32_t slot) {
  if (slot < kFenceSlots) slot_used_[slot] = false;
}

std::uint64_t KernelWindow::fence_slot_value(std::uint32_t slot) const {
  if (slot >= kFenceSlots) return 0;
  return static_cast<const volatile std::uint64_t*>(fence_page_.as<std::uint64_t>())[slot];
}

void KernelWindow::clear_fence_slot(std::uint32_t slot) {
  if (slot < kFenceSlots) static_cast<volatile std::uint64_t*>(fence_page_.as<std::uint64_t>())[slot] = 0;
}

}  // namespace sgpu::sched
