// Shared helpers for the Render / Present / Patch / CommandList tests: 4 KiB-aligned DMA
// buffers, a fake DXGK allocation list built from a CommandList, and a decoder that walks a DMA
// buffer back into packets with the generated table (never with hand-copied offsets).
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "sgpu/gen/abi.hpp"
#include "sgpu/kmd/patch.hpp"
#include "sgpu/kmd/present.hpp"
#include "sgpu/kmd/render.hpp"
#include "sgpu/umd/command_list.hpp"

namespace sgpu::test {

/// A page-aligned block for DMA buffers (Render refuses anything not 4 KiB aligned).
struct alignas(4096) Page {
  std::uint32_t dwords[1024];
};

class DmaBlock {
 public:
  explicit DmaBlock(std::size_t bytes = 4096) : pages_((bytes + 4095) / 4096, Page{}) {}
  void* data() { return pages_.data(); }
  std::uint32_t* dwords() { return pages_.front().dwords; }
  std::uint32_t dword(std::size_t i) const { return pages_[i / 1024].dwords[i % 1024]; }
  std::vector<std::uint32_t> first(std::uint32_t bytes) const {
    std::vector<std::uint32_t> v(bytes / 4);
    if (bytes != 0) std::memcpy(v.data(), pages_.data(), bytes);  // v.data() may be null
    return v;
  }
  std::size_t capacity() const { return pages_.size() * 4096; }

 private:
  std::vector<Page> pages_;
};

/// Where a fake allocation lives: resident in segment 1 at a distinct address per handle.
struct FakeAllocation {
  SegmentId segment = 1;
  std::uint64_t gpu_address = 0;
  std::uint64_t size = 0x10000;
};

inline FakeAllocation default_placement(AllocationHandle h) {
  return {1, 0x1'0000'0000ull + h.value * 0x100000ull, 0x10000};
}

/// The DXGK_ALLOCATIONLIST dxgkrnl would build from the CommandList's D3DDDI list.
inline std::vector<kmd::DxgkAllocationListEntry> dxgk_list(
    const umd::CommandList& cl, const std::function<FakeAllocation(AllocationHandle)>& place = default_placement) {
  std::vector<kmd::DxgkAllocationListEntry> list;
  for (const auto& e : cl.allocations()) {
    kmd::DxgkAllocationListEntry d;
    d.allocation = e.allocation;
    d.write = e.write;
    if (e.allocation) {
      const FakeAllocation f = place(e.allocation);
      d.segment = f.segment;
      d.gpu_address = f.gpu_address;
      d.size = f.size;
    }
    list.push_back(d);
  }
  return list;
}

/// Render's inputs and outputs in one place.
struct RenderRig {
  DmaBlock dma{64 * 1024};
  std::vector<std::byte> private_data = std::vector<std::byte>(sizeof(kmd::RenderPrivateData), std::byte{0});
  std::vector<kmd::DxgkAllocationListEntry> list;
  std::vector<std::uint32_t> commands;
  std::vector<PatchLocation> patch_in;
  std::vector<PatchLocation> patch_out = std::vector<PatchLocation>(1024);

  explicit RenderRig(const umd::CommandList& cl,
                     const std::function<FakeAllocation(AllocationHandle)>& place = default_placement)
      : list(dxgk_list(cl, place)), commands(cl.commands()), patch_in(cl.patch_locations()) {}

  kmd::RenderArgs args(std::uint32_t dma_size = 64 * 1024) {
    kmd::RenderArgs a;
    a.command = commands.data();
    a.command_length = static_cast<std::uint32_t>(commands.size() * 4);
    a.dma_buffer = dma.data();
    a.dma_size = dma_size;
    a.private_data = private_data.data();
    a.private_data_size = static_cast<std::uint32_t>(private_data.size());
    a.allocation_list = list.data();
    a.allocation_list_size = static_cast<std::uint32_t>(list.size());
    a.patch_in = patch_in.data();
    a.patch_in_size = static_cast<std::uint32_t>(patch_in.size());
    a.patch_out = patch_out.data();
    a.patch_out_size = static_cast<std::uint32_t>(patch_out.size());
    return a;
  }

  Result<kmd::RenderOutput> render(std::uint32_t dma_size = 64 * 1024) { return kmd::render(args(dma_size)); }

  /// Patch's arguments for the buffer this rig rendered (`out`): entries [start, count) of the
  /// patch list `entries`, the allocations as `placed` now, submission fence 0x1'0000'0042.
  kmd::PatchArgs patch_args(const kmd::RenderOutput& out, const PatchLocation* entries, std::uint32_t count,
                            const std::vector<kmd::DxgkAllocationListEntry>& placed, std::uint32_t start = 0) {
    kmd::PatchArgs a;
    a.dma_buffer = dma.data();
    a.dma_size = static_cast<std::uint32_t>(dma.capacity());
    a.dma_start = 0;
    a.dma_end = out.dma_bytes;
    a.private_data = private_data.data();
    a.private_data_size = static_cast<std::uint32_t>(private_data.size());
    a.allocation_list = placed.data();
    a.allocation_list_size = static_cast<std::uint32_t>(placed.size());
    a.patch_list = entries;
    a.patch_list_size = count;
    a.patch_start = start;
    a.patch_length = count - start;
    a.submission_fence = RingFence{0x1'0000'0042ull};
    a.fence_address = 0x7'0000'1000ull;
    return a;
  }

  kmd::RenderPrivateData priv() const {
    kmd::RenderPrivateData p;
    std::memcpy(&p, private_data.data(), sizeof p);
    return p;
  }
};

/// One packet found in a buffer by walking its headers with the generated table.
struct Decoded {
  std::uint32_t offset = 0;  ///< bytes
  const abi::PacketInfo* info = nullptr;
  std::uint32_t dwords = 0;
  std::uint8_t flags = 0;
  std::vector<std::uint32_t> words;  ///< whole packet, header included
  std::uint64_t address(unsigned field) const {
    const unsigned d = info->addresses[field].dword;
    return words[d] | (std::uint64_t{words[d + 1]} << 32);
  }
};

/// Decodes `bytes` bytes of packets; an unknown opcode or a bad length ends the walk with info
/// null (the tests then fail on the count).
inline std::vector<Decoded> decode(const std::uint32_t* buf, std::uint32_t bytes) {
  std::vector<Decoded> out;
  std::uint32_t off = 0;
  while (off < bytes) {
    Decoded d;
    d.offset = off;
    const std::uint32_t h = buf[off / 4];
    d.info = abi::find_packet(abi::header_opcode(h));
    d.dwords = abi::header_dwords(h);
    d.flags = abi::header_flags(h);
    if (d.info == nullptr || d.dwords == 0 || off + 4ull * d.dwords > bytes) {
      d.info = nullptr;
      out.push_back(d);
      break;
    }
    d.words.assign(buf + off / 4, buf + off / 4 + d.dwords);
    out.push_back(d);
    off += 4 * d.dwords;
  }
  return out;
}

/// Dword indices of address fields (both dwords) in a command or DMA buffer, from the table.
inline std::vector<bool> address_dwords(const std::uint32_t* buf, std::uint32_t bytes) {
  std::vector<bool> mask(bytes / 4, false);
  for (const auto& d : decode(buf, bytes)) {
    if (d.info == nullptr) break;
    for (unsigned f = 0; f < d.info->address_count; ++f) {
      mask[d.offset / 4 + d.info->addresses[f].dword] = true;
      mask[d.offset / 4 + d.info->addresses[f].dword + 1] = true;
    }
  }
  return mask;
}

/// Builds a CommandList from raw dwords and patch entries, with the allocation list of `like`.
inline umd::CommandList raw_list(const umd::CommandList& like, const std::vector<std::uint32_t>& dwords,
                                 const std::vector<PatchLocation>& patches) {
  umd::CommandList cl;
  for (std::size_t i = 1; i < like.allocations().size(); ++i)
    cl.reference(like.allocations()[i].allocation, like.allocations()[i].write);
  cl.append_raw(dwords.data(), dwords.size());
  for (const auto& p : patches) cl.append_raw_patch(p);
  return cl;
}

/// Every packet kind with an address field once, on allocations a, b and c (each read and
/// written by some packet): WRITE_DATA, COPY, FILL, BLIT_RECT, FILL_RECT, FENCE, WAIT_MEM,
/// TIMESTAMP. False if the list refused one.
inline bool record_every_address_kind(umd::CommandList& cl, AllocationHandle a, AllocationHandle b,
                                      AllocationHandle c) {
  const std::uint32_t data[] = {0x11, 0x22, 0x33};
  return cl.write_data(a, 0x40, data, 3) && cl.copy(a, 0x100, b, 0x200, 64) && cl.fill(b, 0x300, 32, 0xdeadbeef) &&
         cl.blit(a, 0x1000, 256, c, 0x2000, 512, 64, 8) && cl.fill_rect(c, 0x8000, 512, 128, 4, 0xff00ff00) &&
         cl.fence(b, 0x800, 0x1'0000'0002ull, true) && cl.wait(a, 0x44, abi::WaitMemFunc::Ge, 7, 0xff, 3) &&
         cl.timestamp(c, 0x10);
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

}  // namespace sgpu::test
