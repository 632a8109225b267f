#include "render_oracle.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <vector>

#include <fmt/format.h>

#include "sgpu/gen/abi.hpp"
#include "sgpu/kmd/render.hpp"
#include "sgpu/umd/command_list.hpp"

namespace sgpu::fuzz {
namespace {

// Reads bytes of the fuzzer input as a stream of small random numbers (zeros when exhausted).
class Stream {
 public:
  Stream(const std::uint8_t* d, std::size_t n) : d_(d), n_(n) {}
  std::uint32_t u32() {
    std::uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v = (v << 8) | byte();
    return v;
  }
  std::uint32_t below(std::uint32_t n) { return n ? u32() % n : 0; }
  std::uint8_t byte() { return i_ < n_ ? d_[i_++] : 0; }
  bool done() const { return i_ >= n_; }

 private:
  const std::uint8_t* d_;
  std::size_t n_;
  std::size_t i_ = 0;
};

constexpr std::uint32_t kAllocations = 4;
constexpr std::uint64_t kBase = 0x0010'0000'0000'0000ull;
constexpr std::uint64_t kStride = 1ull << 24;

std::uint64_t alloc_size(std::uint32_t i) { return 16384ull << i; }  // 16, 32, 64, 128 KiB

Status record(Stream& s, umd::CommandList& cl) {
  const AllocationHandle h[kAllocations] = {{1}, {2}, {3}, {4}};
  std::uint32_t data[16] = {};
  const std::uint32_t ops = 1 + s.below(8);
  for (std::uint32_t i = 0; i < ops; ++i) {
    const auto a = h[s.below(kAllocations)], b = h[s.below(kAllocations)];
    const std::uint32_t off = s.below(12000) & ~7u, n = s.below(4000);
    switch (s.below(9)) {
      case 0: (void)cl.copy(a, off, b, off + n + 8, n); break;
      case 1: (void)cl.fill(a, off, n, s.u32()); break;
      case 2: (void)cl.blit(a, off, 64 + s.below(64), b, off, 64 + s.below(64), s.below(64), s.below(32)); break;
      case 3: (void)cl.fill_rect(a, off, 64 + s.below(64), s.below(64), s.below(32), s.u32()); break;
      case 4: (void)cl.write_data(a, off, data, 1 + s.below(16)); break;
      case 5: (void)cl.fence(a, off, s.u32(), s.below(2)); break;
      case 6: (void)cl.wait(a, off, static_cast<abi::WaitMemFunc>(s.below(8)), s.u32()); break;
      case 7: (void)cl.timestamp(a, off); break;
      default: (void)cl.nop(1 + s.below(4)); break;
    }
  }
  return ok_status();
}

std::uint64_t extent(const abi::PacketInfo& p, const std::uint32_t* w, std::uint32_t dwords, unsigned field) {
  namespace pl = abi::payload;
  auto rect = [](std::uint64_t width, std::uint64_t height, std::uint64_t pitch) {
    return width == 0 || height == 0 ? 0 : (height - 1) * pitch + width;
  };
  switch (p.opcode) {
    case abi::Opcode::WriteData: return 4ull * (dwords - pl::write_data::kData);
    case abi::Opcode::Fence: return (abi::header_flags(w[0]) & abi::fence_flags::kValue64) ? 8 : 4;
    case abi::Opcode::Copy: return w[pl::copy::kBytes];
    case abi::Opcode::Fill: return w[pl::fill::kBytes];
    case abi::Opcode::BlitRect:
      return rect(w[pl::blit_rect::kWidth], w[pl::blit_rect::kHeight],
                  field == 0 ? w[pl::blit_rect::kSrcPitch] : w[pl::blit_rect::kDstPitch]);
    case abi::Opcode::FillRect:
      return rect(w[pl::fill_rect::kWidth], w[pl::fill_rect::kHeight], w[pl::fill_rect::kDstPitch]);
    case abi::Opcode::WaitMem: return 4;
    case abi::Opcode::Timestamp: return 8;
    default: return ~0ull;  // anything else with an address must not get through
  }
}

}  // namespace

std::string check_render(const std::uint8_t* data, std::size_t size, bool* accepted) {
  if (accepted) *accepted = false;
  Stream s(data, size);
  umd::CommandList cl;
  (void)record(s, cl);
  std::vector<std::uint32_t> cmd = cl.commands();
  std::vector<PatchLocation> patches = cl.patch_locations();
  // Mutations: dwords of the command buffer, fields of patch entries, list flags.
  std::vector<kmd::DxgkAllocationListEntry> list(kAllocations + 1);
  for (std::uint32_t i = 1; i <= kAllocations; ++i) {
    list[i].allocation = AllocationHandle{i};
    list[i].segment = 1;
    list[i].gpu_address = kBase + i * kStride;
    list[i].size = alloc_size(i - 1);
    list[i].write = true;
  }
  std::uint32_t max_slot_id = 256;
  const std::uint32_t mutations = s.below(6);
  for (std::uint32_t m = 0; m < mutations && !s.done(); ++m) {
    switch (s.below(7)) {
      case 0:
        if (!cmd.empty()) cmd[s.below(static_cast<std::uint32_t>(cmd.size()))] = s.u32();
        break;
      case 1:
        if (!cmd.empty()) cmd[s.below(static_cast<std::uint32_t>(cmd.size()))] ^= 1u << s.below(32);
        break;
      case 2:
        if (!patches.empty()) {
          auto& p = patches[s.below(static_cast<std::uint32_t>(patches.size()))];
          std::uint32_t* f = &p.allocation_index;
          f[s.below(6)] = s.below(2) ? s.u32() : s.below(64);
        }
        break;
      case 3: list[1 + s.below(kAllocations)].write = false; break;
      case 4: {
        // Where an allocation is: not resident, an address of any alignment, near the top of the
        // address space, sizes around what Render's in-order path takes in one compare.
        auto& e = list[1 + s.below(kAllocations)];
        switch (s.below(5)) {
          case 0: e.segment = kSystemMemory; break;
          case 1: e.gpu_address += 1u << s.below(4); break;
          case 2: e.gpu_address = (~0ull - s.below(1u << 17)) & ~7ull; break;
          case 3: e.size = (1ull << 62) - 1 + s.below(3); break;
          default: e.size = ~0ull - s.below(4); break;
        }
        break;
      }
      case 5:
        // SlotIds against a MaxAllocationListSlotId that may not be a power of two.
        max_slot_id = 2 + s.below(7);
        for (auto& p : patches) p.slot_id_and_reserved = s.below(8);
        break;
      default:
        if (!patches.empty() && s.below(2)) patches.pop_back();
        else if (!cmd.empty()) cmd.resize(cmd.size() - 1 - s.below(static_cast<std::uint32_t>(cmd.size())));
        break;
    }
  }

  struct alignas(4096) Page { std::uint32_t w[1024]; };
  std::vector<Page> dma(32);
  std::vector<PatchLocation> out(512);
  kmd::RenderPrivateData priv;
  kmd::RenderArgs a;
  a.command = cmd.data();
  a.command_length = static_cast<std::uint32_t>(cmd.size() * 4);
  a.dma_buffer = dma.data();
  a.dma_size = static_cast<std::uint32_t>(dma.size() * 4096);
  a.private_data = &priv;
  a.private_data_size = sizeof priv;
  a.allocation_list = list.data();
  a.allocation_list_size = static_cast<std::uint32_t>(list.size());
  a.patch_in = patches.data();
  a.patch_in_size = static_cast<std::uint32_t>(patches.size());
  a.patch_out = out.data();
  a.patch_out_size = static_cast<std::uint32_t>(out.size());
  a.max_slot_id = max_slot_id;
  auto r = kmd::render(a);
  // The same call with the input list reversed: Render's in-order path cannot take it, so its full
  // path decides; both must agree (the in-order path accepts nothing the full path refuses, and
  // produces the same bytes, entries and private data).
  if (patches.size() > 1) {
    std::vector<PatchLocation> reversed(patches.rbegin(), patches.rend());
    std::vector<Page> dma2(dma.size());
    std::vector<PatchLocation> out2(out.size());
    kmd::RenderPrivateData priv2;
    kmd::RenderArgs b = a;
    b.dma_buffer = dma2.data();
    b.private_data = &priv2;
    b.patch_in = reversed.data();
    b.patch_out = out2.data();
    const auto full = kmd::render(b);
    if (static_cast<bool>(r) != static_cast<bool>(full))
      return fmt::format("the list in order is {} but reversed {}: {}", r ? "accepted" : "refused",
                         full ? "accepted" : "refused", r ? full.error().message : r.error().message);
    if (!r && r.error().code != full.error().code)
      return fmt::format("refused as {} in order but as {} reversed", to_string(r.error().code),
                         to_string(full.error().code));
    if (r) {
      const auto same_entry = [](const PatchLocation& x, const PatchLocation& y) {
        return std::memcmp(&x, &y, sizeof x) == 0;
      };
      if (r->dma_bytes != full->dma_bytes || r->patch_count != full->patch_count || r->packets != full->packets ||
          r->complete != full->complete || r->multipass_offset != full->multipass_offset ||
          std::memcmp(dma.data(), dma2.data(), r->dma_bytes) != 0 ||
          !std::equal(out.begin(), out.begin() + r->patch_count, out2.begin(), same_entry) ||
          std::memcmp(&priv, &priv2, sizeof priv) != 0)
        return "the list in order and reversed render differently";
    }
  }
  if (!r) {
    const Errc c = r.error().code;
    if (c != Errc::InvalidArgument && c != Errc::PermissionDenied)
      return fmt::format("rejection with unexpected code {}: {}", to_string(c), r.error().message);
    if (r.error().message.empty()) return "rejection without a message";
    if (r.error().hardware_touched) return "a Render rejection claims hardware was touched";
    return "";
  }
  if (accepted) *accepted = true;
  if (!r->complete) return "";  // multipass: the next pass is checked by its own call
  // Walk the DMA buffer independently of Render.
  const std::uint32_t* w = dma.front().w;
  std::map<std::uint32_t, const PatchLocation*> by_offset;
  for (std::uint32_t i = 0; i < r->patch_count; ++i) {
    if (!by_offset.emplace(out[i].patch_offset, &out[i]).second)
      return fmt::format("two output patch entries at offset {:#x}", out[i].patch_offset);
  }
  std::uint32_t off = 0, fields = 0;
  while (off < r->dma_bytes) {
    const std::uint32_t h = w[off / 4];
    const abi::PacketInfo* p = abi::find_packet(abi::header_opcode(h));
    const std::uint32_t dw = abi::header_dwords(h);
    if (!p || dw < p->min_dwords || dw > p->max_dwords || off + 4ull * dw > r->dma_bytes)
      return fmt::format("output packet at {:#x} does not decode (header {:#010x})", off, h);
    if (p->privileged || p->opcode == abi::Opcode::Indirect)
      return fmt::format("output contains {} at {:#x}", p->name, off);
    const bool trailing_fence = off == priv.fence_offset && (priv.flags & kmd::RenderPrivateData::kHasFence);
    for (unsigned f = 0; f < p->address_count && !trailing_fence; ++f) {
      const std::uint32_t fo = off + 4 * p->addresses[f].dword;
      auto it = by_offset.find(fo);
      if (it == by_offset.end()) return fmt::format("address field at {:#x} has no output patch entry", fo);
      const auto& pe = *it->second;
      if (pe.allocation_index == 0 || pe.allocation_index > kAllocations)
        return fmt::format("patch entry at {:#x} names allocation {}", fo, pe.allocation_index);
      const auto& al = list[pe.allocation_index];
      const std::uint64_t addr = w[fo / 4] | (std::uint64_t{w[fo / 4 + 1]} << 32);
      const std::uint64_t expected = al.segment == kSystemMemory ? 0 : al.gpu_address + pe.allocation_offset;
      if (addr != expected)
        return fmt::format("address at {:#x} is {:#x}, not the pre-patched {:#x}", fo, addr, expected);
      const std::uint64_t ext = extent(*p, w + off / 4, dw, f);
      if (ext == ~0ull || pe.allocation_offset + ext > al.size)
        return fmt::format("{} at {:#x} reaches [{:#x}, +{:#x}) of a {:#x}-byte allocation", p->name, off,
                           pe.allocation_offset, ext, al.size);
      if (p->addresses[f].access == abi::AddressAccess::Write && !al.write)
        return fmt::format("{} at {:#x} writes allocation {} listed read-only", p->name, off, pe.allocation_index);
      ++fields;
    }
    off += 4 * dw;
  }
  if (fields != r->patch_count)
    return fmt::format("{} address fields but {} patch entries", fields, r->patch_count);
  return "";
}

}  // namespace sgpu::fuzz
