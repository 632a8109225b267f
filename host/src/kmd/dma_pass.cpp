#include "kmd/dma_pass.hpp"

#include <cstring>

#include "sgpu/packet_writer.hpp"

namespace sgpu::kmd::detail {

void put_address(std::uint32_t* pkt, unsigned dword, std::uint64_t address) {
  pkt[dword] = static_cast<std::uint32_t>(address);
  pkt[dword + 1] = static_cast<std::uint32_t>(address >> 32);
}

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

bool room_for(const RenderOutput& out, const abi::PacketInfo& p, std::uint32_t bytes, std::uint32_t dma_capacity,
              std::uint32_t patch_out_size) {
  return std::uint64_t{out.dma_bytes} + bytes + submission_fence_bytes() <= dma_capacity &&
         std::uint64_t{out.patch_count} + p.address_count <= patch_out_size;
}

PatchLocation output_entry(const abi::PacketInfo& p, unsigned f, std::uint32_t allocation_index,
                           std::uint32_t allocation_offset, std::uint32_t packet_offset) {
  PatchLocation o;
  o.allocation_index = allocation_index;
  o.allocation_offset = allocation_offset;
  o.slot_id_and_reserved = f;  // each packet rebinds its slots: what the previous one held is free
  o.driver_id = p.addresses[f].access == abi::AddressAccess::Write ? driver_id::kWrite : driver_id::kRead;
  o.patch_offset = packet_offset + 4 * p.addresses[f].dword;
  o.split_offset = packet_offset;
  return o;
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
