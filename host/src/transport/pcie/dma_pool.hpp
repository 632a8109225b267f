// The DMA-memory pool above the seam: host memory from the function in chunks, made reachable
// once per chunk (few large IOMMU mappings: the container allows ~65k), sub-allocated by bus
// address. Translated functions get I/O virtual addresses from an IovaAllocator that honours
// the device's reach and the IOMMU's ranges; every mapping (its address and size) is a multiple
// of the IOMMU's smallest page (its mapping granule). Physical ones (no IOMMU) come with their
// address, which is checked against the reach. Requests larger than half a chunk get a chunk of
// their own.
//
// (HostPageDma, the DMA memory of the simulated backends, does not fit here: it maps every
// allocation on its own from one bus range, where a card wants few large mappings at addresses
// the IOMMU and the device's reach allow, and the no-IOMMU path takes the addresses the host
// memory already has.)
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>

#include "sgpu/transport.hpp"
#include "sgpu/transport/pci_function.hpp"
#include "transport/bus_allocator.hpp"
#include "transport/pcie/iova_allocator.hpp"

namespace sgpu::pcie::detail {

class DmaPool final : public DmaBackend {
 public:
  DmaPool(std::shared_ptr<PciFunction> function, unsigned address_bits, std::size_t chunk_bytes);
  ~DmaPool() override;
  DmaPool(const DmaPool&) = delete;
  DmaPool& operator=(const DmaPool&) = delete;

  /// `self` is the shared_ptr that owns this pool (DmaMemory keeps it alive).
  Result<DmaMemory> allocate(const std::shared_ptr<DmaPool>& self, std::size_t bytes, std::size_t align);
  void release(void* cpu, std::uint64_t bus_addr, std::size_t bytes) noexcept override;

  unsigned address_bits() const { return address_bits_; }
  /// The size and alignment unit of every mapping: the IOMMU's smallest page (at least 4 KiB).
  std::size_t granule() const { return granule_; }
  std::size_t chunk_bytes() const { return chunk_bytes_; }
  /// Chunks mapped now (each one IOMMU mapping for a translated function).
  std::size_t mappings() const { return chunks_.size(); }
  const IovaAllocator* iova() const { return iova_ ? &*iova_ : nullptr; }

 private:
  struct Chunk {
    HostBlock block;
    std::uint64_t bus = 0;
    bool dedicated = false;
    std::optional<sgpu::detail::BusAllocator> free;  // shared chunks only
  };
  Result<std::map<std::uint64_t, Chunk>::iterator> add_chunk(std::size_t bytes, std::size_t align, bool dedicated);
  void drop_chunk(std::map<std::uint64_t, Chunk>::iterator it) noexcept;

  std::shared_ptr<PciFunction> fn_;
  unsigned address_bits_;
  std::size_t granule_;
  std::size_t chunk_bytes_;
  std::optional<IovaAllocator> iova_;
  std::map<std::uint64_t, Chunk> chunks_;  // by bus address
};

}  // namespace sgpu::pcie::detail
