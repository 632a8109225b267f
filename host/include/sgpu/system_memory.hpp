// Host memory the GPU reaches by DMA, as the memory manager (backing stores) and the DMA-buffer
// pools (kmd::DmaBufferPool) ask for it: the seam between them and the transport.
#pragma once

#include <cstddef>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"

namespace sgpu {

/// Host memory the GPU can reach by DMA: backing stores of allocations and DMA buffers.
class SystemMemory {
 public:
  virtual ~SystemMemory() = default;
  /// `bytes` of zeroed, page-aligned, contiguous DMA memory.
  virtual Result<DmaMemory> allocate(std::size_t bytes) = 0;
};

/// SystemMemory from a Transport (the sim, the model, the mock, a PCIe card).
class TransportSystemMemory final : public SystemMemory {
 public:
  explicit TransportSystemMemory(Transport& transport) : t_(transport) {}
  Result<DmaMemory> allocate(std::size_t bytes) override { return t_.alloc_dma(bytes, 4096); }

 private:
  Transport& t_;
};

}  // namespace sgpu
