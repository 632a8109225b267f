#include "kmd/dma_pass.hpp"

#include <cstring>

#include "sgpu/packet_writer.hpp"

namespace sgpu::kmd::detail {

Status check_dma(const char* ddi, const void* dma_buffer, std::uint32_t dma_size, const void* private_data,
                 std::uint32_t private_data_size) {
  if (dma_buffer == nullptr) return Error::invalid("{}: the DMA buffer is null", ddi);
  if (reinterpret_cast<std::uintptr_t>(dma_buffer) % kDmaBufferAlign != 0)
    return Error::invalid("{}: the DMA buffer at {} is not {}-byte aligned", ddi, dma_buffer, kDmaBufferAlign);
  if (private_data == nullptr || private_data_size < sizeof(RenderPrivateData))
    return Error::invalid("{}: DMA buffer private data of {} bytes{}; RenderPrivateData needs {}", ddi,
                          private_data_size, private_data == nullptr ? " (null)" : "", sizeof(RenderPrivateData));
  if ((dma_size & ~3u) < submission_fence_bytes())
    return Error::invalid("{}: a DMA buffer of {} bytes cannot hold the {}-byte submission fence", ddi, dma_size,
                          submission_fence_bytes());
  return ok_status();
}

Status finish_pass(void* dma_buffer, std::uint32_t dma_capacity, void* private_data, bool final_pass,
                   RenderOutput& out) {
  RenderPrivateData priv;
  priv.magic = RenderPrivateData::kMagic;
  if (final_pass) {
    PacketWriter w(dma_buffer, dma_capacity, out.dma_bytes);
    SGPU_RETURN_IF_ERROR(w.fence(0, 0, abi::fence_flags::kValue64));
    priv.fence_offset = out.dma_bytes;
    priv.flags = RenderPrivateData::kHasFence;
    out.dma_bytes = w.offset();
  }
  std::memcpy(private_data, &priv, sizeof priv);
  out.complete = final_pass;
  return ok_status();
}

}  // namespace sgpu::kmd::detail
