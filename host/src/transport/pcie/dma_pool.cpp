#include "transport/pcie/dma_pool.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

#include <fmt/format.h>

#include "transport/pcie/messages.hpp"

namespace sgpu::pcie::detail {
namespace {
constexpr std::size_t kPage = 4096;
std::size_t round_up(std::size_t v, std::size_t a) { return (v + a - 1) / a * a; }

// Without an IOMMU nothing is mapped: the host page is the unit.
std::size_t mapping_granule(const PciFunction& fn) {
  return fn.dma_addressing() == DmaAddressing::Translated ? smallest_page(fn.iova_page_sizes()) : kPage;
}
}  // namespace

DmaPool::DmaPool(std::shared_ptr<PciFunction> function, unsigned address_bits, std::size_t chunk_bytes)
    : fn_(std::move(function)),
      address_bits_(address_bits),
      granule_(mapping_granule(*fn_)),
      chunk_bytes_(round_up(chunk_bytes == 0 ? granule_ : chunk_bytes, granule_)) {
  if (fn_->dma_addressing() == DmaAddressing::Translated) iova_.emplace(fn_->iova_ranges(), address_bits_);
}

DmaPool::~DmaPool() {
  while (!chunks_.empty()) drop_chunk(chunks_.begin());
}

Result<std::map<std::uint64_t, DmaPool::Chunk>::iterator> DmaPool::add_chunk(std::size_t bytes, std::size_t align,
                                                                             bool dedicated) {
  auto block = fn_->alloc_host(bytes);
  if (!block) return std::move(block).error();
  Chunk c;
  c.block = *block;
  c.dedicated = dedicated;
  if (iova_) {
    const auto iova = iova_->allocate(c.block.bytes, std::max(align, granule_));
    if (!iova) {
      fn_->free_host(c.block);
      std::string ranges;
      for (const IovaRange& r : iova_->usable()) ranges += fmt::format(" [{:#x}, {:#x}]", r.first, r.last);
      return Error::make(Errc::OutOfMemory, Touched::Nothing,
                         "no I/O virtual address space left for {:#x} bytes below the device's {}-bit reach "
                         "inside the IOMMU's ranges (usable:{})",
                         c.block.bytes, address_bits_, ranges.empty() ? " none" : ranges);
    }
    if (Status s = fn_->map_dma(c.block.cpu, *iova, c.block.bytes); !s) {
      iova_->free(*iova, c.block.bytes);
      fn_->free_host(c.block);
      return std::move(s).error();
    }
    c.bus = *iova;
  } else {
    if (!c.block.bus_addr) {
      fn_->free_host(c.block);
      return Error::make(Errc::TransportError, Touched::Nothing, "the function gave DMA memory without a bus address");
    }
    c.bus = *c.block.bus_addr;
    const bool fits =
        address_bits_ >= 64 || ((c.bus >> address_bits_) == 0 && ((c.bus + c.block.bytes - 1) >> address_bits_) == 0);
    if (!fits) {
      fn_->free_host(c.block);
      return beyond_reach(c.bus, c.block.bytes, address_bits_);
    }
    if (c.bus % align != 0) {
      fn_->free_host(c.block);
      return Error::make(Errc::OutOfMemory, Touched::Nothing,
                         "physical DMA memory at {:#x} is not aligned to the {:#x} bytes asked for", c.bus, align);
    }
  }
  if (!dedicated) c.free.emplace(c.bus, c.block.bytes);
  return chunks_.emplace(c.bus, std::move(c)).first;
}

void DmaPool::drop_chunk(std::map<std::uint64_t, Chunk>::iterator it) noexcept {
  Chunk& c = it->second;
  if (iova_) {
    fn_->unmap_dma(c.bus, c.block.bytes);
    iova_->free(c.bus, c.block.bytes);
  }
  fn_->free_host(c.block);
  chunks_.erase(it);
}

Result<DmaMemory> DmaPool::allocate(const std::shared_ptr<DmaPool>& self, std::size_t bytes, std::size_t align) {
  if (align == 0 || (align & (align - 1)) != 0) return Error::invalid("alignment {} is not a power of two", align);
  const std::size_t a = align < kPage ? kPage : align;
  const std::size_t size = round_up(bytes == 0 ? 1 : bytes, a);
  if (size > chunk_bytes_ / 2 || a > chunk_bytes_) {
    auto it = add_chunk(round_up(size, granule_), a, true);
    if (!it) return std::move(it).error();
    return DmaMemory(self, (*it)->second.block.cpu, (*it)->second.bus, size);
  }
  for (auto& [bus, c] : chunks_) {
    if (c.dedicated) continue;
    if (auto addr = c.free->allocate(size, a)) {
      auto* cpu = static_cast<std::byte*>(c.block.cpu) + (*addr - bus);
      std::memset(cpu, 0, size);  // reused ranges must come back zeroed
      return DmaMemory(self, cpu, *addr, size);
    }
  }
  auto it = add_chunk(chunk_bytes_, a, false);
  if (!it) return std::move(it).error();
  Chunk& c = (*it)->second;
  const auto addr = c.free->allocate(size, a);
  if (!addr) return Error::make(Errc::OutOfMemory, Touched::Nothing, "a fresh DMA chunk could not hold the request");
  return DmaMemory(self, static_cast<std::byte*>(c.block.cpu) + (*addr - c.bus), *addr, size);
}

void DmaPool::release(void* /*cpu*/, std::uint64_t bus_addr, std::size_t bytes) noexcept {
  auto it = chunks_.upper_bound(bus_addr);
  if (it == chunks_.begin()) return;
  --it;
  if (it->second.dedicated)
    drop_chunk(it);
  else
    it->second.free->free(bus_addr, bytes);
}

}  // namespace sgpu::pcie::detail
