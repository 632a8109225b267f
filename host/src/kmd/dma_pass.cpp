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

namespace {
std::uint32_t timestamp_bytes() { return packet_info(abi::Opcode::Timestamp).min_dwords * 4; }
// The bytes packets may occupy: below the landing area when the bracket is reserved.
std::uint32_t pass_limit(std::uint32_t dma_size, bool timestamps) {
  return timestamps ? timestamp_landing_offset(dma_size) : dma_size & ~3u;
}
}  // namespace

Result<std::uint32_t> begin_pass(const char* ddi, void* dma_buffer, std::uint32_t dma_size, bool timestamps,
                                 RenderOutput& out) {
  if (!timestamps) return pass_limit(dma_size, false);
  if (dma_size < submission_fence_bytes() + timestamp_reserve_bytes())
    return Error::invalid("{}: a DMA buffer of {} bytes cannot hold the {}-byte timestamp bracket and the {}-byte "
                          "submission fence",
                          ddi, dma_size, timestamp_reserve_bytes(), submission_fence_bytes());
  const std::uint32_t limit = pass_limit(dma_size, true);
  PacketWriter w(dma_buffer, limit, out.dma_bytes);
  SGPU_RETURN_IF_ERROR(w.timestamp(0));
  out.dma_bytes = w.offset();
  return limit - timestamp_bytes();
}

Status finish_pass(void* dma_buffer, std::uint32_t dma_size, void* private_data, bool final_pass, bool timestamps,
                   RenderOutput& out) {
  RenderPrivateData priv;
  priv.magic = RenderPrivateData::kMagic;
  PacketWriter w(dma_buffer, pass_limit(dma_size, timestamps), out.dma_bytes);
  if (timestamps) {
    priv.timestamp_end_offset = out.dma_bytes;
    priv.flags |= RenderPrivateData::kHasTimestamps;
    SGPU_RETURN_IF_ERROR(w.timestamp(0));
  }
  if (final_pass) {
    priv.fence_offset = w.offset();
    SGPU_RETURN_IF_ERROR(w.fence(0, 0, abi::fence_flags::kValue64));
    priv.flags |= RenderPrivateData::kHasFence;
  }
  out.dma_bytes = w.offset();
  std::memcpy(private_data, &priv, sizeof priv);
  out.complete = final_pass;
  return ok_status();
}

}  // namespace sgpu::kmd::detail
