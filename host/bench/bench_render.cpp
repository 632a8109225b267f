// Render and Patch benchmark (CPU only). Prints one JSON object (see cmake/SgpuBench.cmake):
//   render_vs_memcpy  Render throughput (command-buffer bytes validated and translated per
//                     second, every allocation pre-patched) divided by memcpy of the same
//                     bytes; a 4 MiB command buffer of WRITE_DATA, COPY, FILL_RECT and BLIT_RECT
//                     packets, 16 allocations
//   patch_vs_memcpy   Patch throughput (patch-location-list bytes applied per second) divided by
//                     memcpy of the same bytes; 65 536 entries (32 768 COPY packets)
// Reference figures (no validation at all: what the checks cost is the gap to these):
//   render_floor_vs_memcpy        the same command buffer copied into the DMA buffer 16 KiB
//                                 ahead of a walk over its packet headers (what Render's in-order
//                                 path does before checking anything), / memcpy
//   patch_store_floor_vs_memcpy   only Patch's stores: each entry's allocation address +
//                                 AllocationOffset written at its PatchOffset, / memcpy of the list
//   patch_decode_floor_vs_memcpy  only what checking an entry must read: the entry, the packet
//                                 header at its SplitOffset decoded through the ABI table, the
//                                 field it names and its allocation-list element; no compare, no
//                                 store, / memcpy of the list
// Ratios > 1 mean faster than the copy. Best of several runs, so noise only lowers them.
// SGPU_BENCH_VERBOSE=1 also prints the absolute times to stderr (what docs/benchmarks.md quotes).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "sgpu/gen/abi.hpp"
#include "sgpu/kmd/patch.hpp"
#include "sgpu/kmd/render.hpp"
#include "sgpu/umd/command_list.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using namespace sgpu;

constexpr int kRuns = 7;
constexpr std::uint32_t kAllocations = 16;
constexpr std::uint64_t kAllocationBytes = 1u << 20;

template <class F>
double best_seconds(F&& f) {
  double best = 1e30;
  for (int i = 0; i < kRuns; ++i) {
    const auto t0 = Clock::now();
    if (!f()) return -1;
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

double memcpy_seconds(std::size_t bytes) {
  std::vector<std::uint8_t> src(bytes, 0x5a), dst(bytes);
  return best_seconds([&] {
    std::memcpy(dst.data(), src.data(), bytes);
    asm volatile("" : : "r"(dst.data()) : "memory");  // keep the copy
    return true;
  });
}

std::vector<kmd::DxgkAllocationListEntry> resident_list(const umd::CommandList& cl) {
  std::vector<kmd::DxgkAllocationListEntry> list;
  for (const auto& e : cl.allocations()) {
    kmd::DxgkAllocationListEntry d;
    d.allocation = e.allocation;
    d.write = e.write;
    if (e.allocation) {
      d.segment = 1;
      d.gpu_address = 0x0010'0000'0000'0000ull + e.allocation.value * kAllocationBytes;
      d.size = kAllocationBytes;
    }
    list.push_back(d);
  }
  return list;
}

// Render wants a 4 KiB-aligned DMA buffer, as DXGKARG_RENDER.pDmaBuffer is.
struct AlignedBuffer {
  explicit AlignedBuffer(std::size_t n = 0)
      : bytes((n + 4095) & ~std::size_t{4095}), p(bytes ? std::aligned_alloc(4096, bytes) : nullptr) {}
  AlignedBuffer(AlignedBuffer&& o) noexcept : bytes(o.bytes), p(std::exchange(o.p, nullptr)) {}
  AlignedBuffer& operator=(AlignedBuffer&& o) noexcept {
    std::swap(bytes, o.bytes);
    std::swap(p, o.p);
    return *this;
  }
  ~AlignedBuffer() { std::free(p); }
  std::size_t bytes;
  void* p;
};

struct Rendered {
  AlignedBuffer dma;
  std::vector<PatchLocation> patches;
  kmd::RenderPrivateData priv;
  kmd::RenderOutput out;
};

bool render_once(const umd::CommandList& cl, const std::vector<kmd::DxgkAllocationListEntry>& list, Rendered& r) {
  kmd::RenderArgs a;
  a.command = cl.commands().data();
  a.command_length = cl.command_bytes();
  a.dma_buffer = r.dma.p;
  a.dma_size = static_cast<std::uint32_t>(r.dma.bytes);
  a.private_data = &r.priv;
  a.private_data_size = sizeof r.priv;
  a.allocation_list = list.data();
  a.allocation_list_size = static_cast<std::uint32_t>(list.size());
  a.patch_in = cl.patch_locations().data();
  a.patch_in_size = static_cast<std::uint32_t>(cl.patch_locations().size());
  a.patch_out = r.patches.data();
  a.patch_out_size = static_cast<std::uint32_t>(r.patches.size());
  auto out = kmd::render(a);
  if (!out || !out->complete) return false;
  r.out = *out;
  return true;
}

/// render_floor_vs_memcpy's loop: the copy a chunk ahead of a header walk, nothing checked.
bool copy_and_walk(const umd::CommandList& cl, void* dma_buffer) {
  constexpr std::uint32_t kAhead = 16 * 1024;
  auto* dma = static_cast<std::uint8_t*>(dma_buffer);
  const auto* cmd = reinterpret_cast<const std::uint8_t*>(cl.commands().data());
  const std::uint32_t length = cl.command_bytes();
  std::uint32_t copied = 0, off = 0, packets = 0;
  const auto copy_to = [&](std::uint32_t need) {
    const std::uint32_t to = std::min(length, std::max(need, copied + kAhead));
    std::memcpy(dma + copied, cmd + copied, to - copied);
    copied = to;
  };
  while (off < length) {
    if (off + 4 > copied) copy_to(off + 4);
    std::uint32_t header;
    std::memcpy(&header, dma + off, 4);
    const std::uint32_t dwords = abi::header_dwords(header);
    if (dwords == 0) return false;
    off += 4 * dwords;
    if (off > copied) copy_to(off);
    ++packets;
  }
  asm volatile("" : : "r"(packets), "r"(dma) : "memory");
  return true;
}

Rendered prepare(const umd::CommandList& cl) {
  Rendered r;
  // 4 KiB aligned, as Render requires of pDmaBuffer.
  r.dma = AlignedBuffer(cl.command_bytes() + 64 * 1024);
  r.patches.resize(cl.patch_locations().size());
  return r;
}

}  // namespace

int main() {
  std::vector<AllocationHandle> h;
  for (std::uint32_t i = 1; i <= kAllocations; ++i) h.push_back(AllocationHandle{i});

  // ---- Render: ~4 MiB of mixed packets
  umd::CommandList big;
  std::vector<std::uint32_t> data(1024, 0xabcd1234u);
  for (std::uint32_t i = 0; big.command_bytes() < (4u << 20); ++i) {
    const auto a = h[i % kAllocations], b = h[(i + 1) % kAllocations];
    const std::uint32_t off = (i * 4096u) % (kAllocationBytes / 2);
    bool ok = big.write_data(a, off, data.data(), data.size()) && big.copy(a, off, b, off, 4096) &&
              big.fill_rect(b, off, 256, 64, 16, i) && big.blit(a, off, 256, b, off + 8192, 256, 64, 16);
    if (!ok) return 1;
  }
  auto list = resident_list(big);
  Rendered r = prepare(big);
  const double render_s = best_seconds([&] { return render_once(big, list, r); });
  const double render_ratio = memcpy_seconds(big.command_bytes()) / render_s;
  const double render_floor_s = best_seconds([&] { return copy_and_walk(big, r.dma.p); });
  const double render_floor_ratio = memcpy_seconds(big.command_bytes()) / render_floor_s;

  // ---- Patch: 65 536 entries
  umd::CommandList copies;
  for (std::uint32_t i = 0; i < 32768; ++i)
    if (!copies.copy(h[i % kAllocations], i % 4096, h[(i + 3) % kAllocations], 8192 + i % 4096, 64)) return 1;
  auto clist = resident_list(copies);
  Rendered p = prepare(copies);
  if (!render_once(copies, clist, p) || p.out.patch_count != 65536) return 1;
  for (auto& e : clist) e.gpu_address += 0x10000;  // the allocations moved
  kmd::PatchArgs pa;
  pa.dma_buffer = p.dma.p;
  pa.dma_size = static_cast<std::uint32_t>(p.dma.bytes);
  pa.dma_start = 0;
  pa.dma_end = p.out.dma_bytes;
  pa.private_data = &p.priv;
  pa.private_data_size = sizeof p.priv;
  pa.allocation_list = clist.data();
  pa.allocation_list_size = static_cast<std::uint32_t>(clist.size());
  pa.patch_list = p.patches.data();
  pa.patch_list_size = p.out.patch_count;
  pa.patch_length = p.out.patch_count;
  pa.submission_fence = sgpu::RingFence{7};
  pa.fence_address = 0x0018'0000'0000'0000ull;
  const double patch_s = best_seconds([&] { return static_cast<bool>(kmd::patch(pa)); });
  const double patch_ratio = memcpy_seconds(std::size_t{p.out.patch_count} * sizeof(PatchLocation)) / patch_s;

  // The floors: Patch's stores alone, and what its checks must read alone.
  auto* dma = static_cast<std::uint8_t*>(p.dma.p);
  const PatchLocation* entries = p.patches.data();
  const std::uint32_t n = p.out.patch_count;
  const double store_s = best_seconds([&] {
    for (std::uint32_t i = 0; i < n; ++i) {
      const std::uint64_t address = clist[entries[i].allocation_index].gpu_address + entries[i].allocation_offset;
      std::memcpy(dma + entries[i].patch_offset, &address, 8);
    }
    asm volatile("" : : "r"(dma) : "memory");
    return true;
  });
  const double decode_s = best_seconds([&] {
    std::uint64_t sum = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
      const PatchLocation& e = entries[i];
      std::uint32_t header;
      std::memcpy(&header, dma + e.split_offset, 4);
      const abi::PacketInfo* info = abi::find_packet(abi::header_opcode(header));
      if (info == nullptr) return false;
      sum += info->addresses[e.slot_id_and_reserved & 1].dword + abi::header_dwords(header) + e.patch_offset +
             clist[e.allocation_index].size + e.allocation_offset;
    }
    asm volatile("" : : "r"(sum) : "memory");
    return true;
  });
  const double list_memcpy_s = memcpy_seconds(std::size_t{n} * sizeof(PatchLocation));

  if (std::getenv("SGPU_BENCH_VERBOSE"))
    std::fprintf(stderr, "render %.1f us (memcpy %.1f us, %u bytes), patch %.1f us (memcpy %.1f us, %u entries)\n",
                 render_s * 1e6, memcpy_seconds(big.command_bytes()) * 1e6, big.command_bytes(), patch_s * 1e6,
                 memcpy_seconds(std::size_t{p.out.patch_count} * sizeof(PatchLocation)) * 1e6, p.out.patch_count);
  if (std::getenv("SGPU_BENCH_VERBOSE"))
    std::fprintf(stderr, "floors: render copy+walk %.1f us, patch stores %.1f us, patch reads+decode %.1f us\n",
                 render_floor_s * 1e6, store_s * 1e6, decode_s * 1e6);
  nlohmann::json out;
  out["render_vs_memcpy"] = render_ratio;
  out["patch_vs_memcpy"] = patch_ratio;
  out["render_floor_vs_memcpy"] = render_floor_ratio;
  out["patch_store_floor_vs_memcpy"] = list_memcpy_s / store_s;
  out["patch_decode_floor_vs_memcpy"] = list_memcpy_s / decode_s;
  std::printf("%s\n", out.dump().c_str());
  return 0;
}
