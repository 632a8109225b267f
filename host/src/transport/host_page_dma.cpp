#include "sgpu/transport/host_page_dma.hpp"

#include <cstdlib>
#include <cstring>

#include "transport/bus_allocator.hpp"

namespace sgpu {

std::shared_ptr<HostPageDma> HostPageDma::create(std::string backend, MemoryMap map, std::uint64_t bus_base,
                                                 std::uint64_t bus_size) {
  return std::shared_ptr<HostPageDma>(new HostPageDma(std::move(backend), std::move(map), bus_base, bus_size));
}

HostPageDma::HostPageDma(std::string backend, MemoryMap map, std::uint64_t bus_base, std::uint64_t bus_size)
    : backend_(std::move(backend)),
      map_(std::move(map)),
      bus_(std::make_unique<detail::BusAllocator>(bus_base, bus_size)) {}

HostPageDma::~HostPageDma() = default;

Result<DmaMemory> HostPageDma::allocate(std::size_t bytes, std::size_t align) {
  if (align == 0 || (align & (align - 1)) != 0) return Error::invalid("alignment {} is not a power of two", align);
  const std::size_t a = align < kPageSize ? kPageSize : align;
  const std::size_t request = bytes == 0 ? 1 : bytes;
  if (request > ~std::size_t{0} - (a - 1))
    return Error::make(Errc::OutOfMemory, Touched::Nothing, "{}: a DMA allocation of {} bytes is too large", backend_, bytes);
  const std::size_t size = (request + a - 1) / a * a;
  const auto bus = bus_->allocate(size, a);
  if (!bus)
    return Error::make(Errc::OutOfMemory, Touched::Nothing, "{}: bus address space exhausted", backend_);
  void* cpu = std::aligned_alloc(a, size);
  if (!cpu) {
    bus_->free(*bus, size);
    return Error::make(Errc::OutOfMemory, Touched::Nothing, "host allocation of {} bytes failed", size);
  }
  std::memset(cpu, 0, size);
  if (map_.attach) map_.attach(*bus, cpu, size);
  live_[*bus] = {cpu, size};
  return DmaMemory(shared_from_this(), cpu, *bus, size);
}

void HostPageDma::release(void* cpu, std::uint64_t bus_addr, std::size_t bytes) noexcept {
  if (map_.detach) map_.detach(bus_addr, bytes);
  live_.erase(bus_addr);
  bus_->free(bus_addr, bytes);
  std::free(cpu);
}

void* HostPageDma::cpu_at(std::uint64_t bus_addr) const {
  auto it = live_.upper_bound(bus_addr);
  if (it == live_.begin()) return nullptr;
  --it;
  if (bus_addr - it->first >= it->second.second) return nullptr;
  return static_cast<std::byte*>(it->second.first) + (bus_addr - it->first);
}

}  // namespace sgpu
