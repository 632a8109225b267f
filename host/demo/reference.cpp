#include "reference.hpp"

#include <chrono>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "sgpu/device.hpp"
#include "sgpu/kmd/patch.hpp"
#include "sgpu/kmd/render.hpp"

namespace sgpu::demo {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kDmaBytes = 64 * 1024;

class ModelRun {
 public:
  static Result<ModelRun> open(const TransportRegistry& transports) {
    auto t = transports.open("model");
    if (!t) return std::move(t).error();
    DeviceOptions opt;
    opt.gart = false;  // the model has no GART: GPU addresses are bus addresses
    auto d = Device::open(std::move(*t), opt);
    if (!d) return std::move(d).error();
    return ModelRun(std::move(*d));
  }

  Result<vidmm::AllocationHandle> allocate(std::size_t bytes) {
    auto m = dev_.transport().alloc_dma(bytes);
    if (!m) return std::move(m).error();
    const vidmm::AllocationHandle h{memory_.size() + 1};
    memory_.emplace(h.value, std::move(*m));
    return h;
  }
  const DmaMemory& memory(vidmm::AllocationHandle h) const { return memory_.at(h.value); }

  // The DXGK_ALLOCATIONLIST of a user list: every allocation "resident" at its bus address.
  std::vector<kmd::DxgkAllocationListEntry> placements(const std::vector<vidmm::AllocationListEntry>& list) const {
    std::vector<kmd::DxgkAllocationListEntry> out;
    for (const auto& e : list) {
      kmd::DxgkAllocationListEntry d;
      d.allocation = e.allocation;
      d.write = e.write;
      if (e.allocation) {
        const DmaMemory& m = memory(e.allocation);
        d.segment = 1;
        d.gpu_address = m.bus_addr();
        d.size = m.size();
      }
      out.push_back(d);
    }
    return out;
  }

  Status run_list(const umd::CommandList& cl) {
    const auto list = placements(cl.allocations());
    std::uint32_t offset = 0;
    for (;;) {
      std::vector<kmd::PatchLocation> patches(cl.patch_locations().size() + 1);
      SGPU_RETURN_IF_ERROR(buffer());
      kmd::RenderArgs ra;
      ra.command = cl.commands().data();
      ra.command_length = cl.command_bytes();
      ra.dma_buffer = dma_.cpu();
      ra.dma_size = kDmaBytes;
      ra.private_data = &private_;
      ra.private_data_size = sizeof private_;
      ra.allocation_list = list.data();
      ra.allocation_list_size = static_cast<std::uint32_t>(list.size());
      ra.patch_in = cl.patch_locations().data();
      ra.patch_in_size = static_cast<std::uint32_t>(cl.patch_locations().size());
      ra.patch_out = patches.data();
      ra.patch_out_size = static_cast<std::uint32_t>(patches.size());
      ra.multipass_offset = offset;
      auto out = kmd::render(ra);
      if (!out) return std::move(out).error();
      SGPU_RETURN_IF_ERROR(submit(list, patches, *out));
      if (out->complete) return ok_status();
      offset = out->multipass_offset;
    }
  }

  Status present(const SceneGeometry& g, vidmm::AllocationHandle src, vidmm::AllocationHandle dst) {
    std::vector<vidmm::AllocationListEntry> user{{}, {src, false}, {dst, true}};
    const auto list = placements(user);
    std::vector<kmd::PatchLocation> patches(8);
    SGPU_RETURN_IF_ERROR(buffer());
    kmd::PresentArgs pa;
    pa.kind = kmd::PresentKind::Blt;
    pa.dma_buffer = dma_.cpu();
    pa.dma_size = kDmaBytes;
    pa.private_data = &private_;
    pa.private_data_size = sizeof private_;
    pa.allocation_list = list.data();
    pa.allocation_list_size = static_cast<std::uint32_t>(list.size());
    pa.patch_out = patches.data();
    pa.patch_out_size = static_cast<std::uint32_t>(patches.size());
    pa.src = pa.dst = kmd::SurfaceDesc{g.width, g.height, g.pitch(), 4};
    pa.src_rect = pa.dst_rect = kmd::Rect{0, 0, static_cast<std::int32_t>(g.width), static_cast<std::int32_t>(g.height)};
    auto out = kmd::present(pa);
    if (!out) return std::move(out).error();
    if (!out->complete) return Error{Errc::InvalidArgument, "reference: Present did not fit one DMA buffer", false};
    return submit(list, patches, *out);
  }

 private:
  explicit ModelRun(Device d) : dev_(std::move(d)) {}

  Status buffer() {
    if (dma_) return ok_status();
    auto m = dev_.transport().alloc_dma(kDmaBytes);
    if (!m) return std::move(m).error();
    dma_ = std::move(*m);
    auto f = dev_.transport().alloc_dma(4096);
    if (!f) return std::move(f).error();
    fence_record_ = std::move(*f);
    return ok_status();
  }

  // Patch (everything, with the next fence) and run the buffer to completion.
  Status submit(const std::vector<kmd::DxgkAllocationListEntry>& list, const std::vector<kmd::PatchLocation>& patches,
                const kmd::RenderOutput& out) {
    const FenceId fence = dev_.last_submitted_fence() + 1;
    kmd::PatchArgs pa;
    pa.dma_buffer = dma_.cpu();
    pa.dma_size = kDmaBytes;
    pa.dma_start = 0;
    pa.dma_end = out.dma_bytes;
    pa.private_data = &private_;
    pa.private_data_size = sizeof private_;
    pa.allocation_list = list.data();
    pa.allocation_list_size = static_cast<std::uint32_t>(list.size());
    pa.patch_list = patches.data();
    pa.patch_list_size = out.patch_count;
    pa.patch_start = 0;
    pa.patch_length = out.patch_count;
    pa.submission_fence = fence;
    pa.fence_address = fence_record_.bus_addr();
    auto p = kmd::patch(pa);
    if (!p) return std::move(p).error();
    auto f = dev_.submit({&dma_, 0, out.dma_bytes, 1, 0});
    if (!f) return std::move(f).error();
    SGPU_RETURN_IF_ERROR(dev_.wait_fence(*f, 1s));
    if (out.complete && fence_record_.as<const std::uint64_t>()[0] != *f)
      return Error{Errc::DeviceFault,
                   fmt::format("reference: the submission fence packet wrote {:#x}, expected {}",
                               fence_record_.as<const std::uint64_t>()[0], *f),
                   true};
    return ok_status();
  }

  Device dev_;
  std::map<std::uint64_t, DmaMemory> memory_;
  DmaMemory dma_;
  DmaMemory fence_record_;
  kmd::RenderPrivateData private_;
};

}  // namespace

Result<std::vector<std::uint8_t>> reference_frame(const SceneGeometry& g, const TransportRegistry& transports) {
  auto run = ModelRun::open(transports);
  if (!run) return std::move(run).error();
  SceneAllocations a;
  auto frame = run->allocate(g.frame_bytes());
  auto sprite = run->allocate(g.sprite_bytes());
  auto status = run->allocate(kStatusBytes);
  auto primary = run->allocate(g.frame_bytes());
  for (auto* r : {&frame, &sprite, &status, &primary})
    if (!*r) return std::move(*r).error();
  a.frame = *frame;
  a.sprite = *sprite;
  a.status = *status;
  umd::CommandList background, sprites;
  SGPU_RETURN_IF_ERROR(record_background(g, a, background));
  SGPU_RETURN_IF_ERROR(record_sprites(g, a, sprites));
  SGPU_RETURN_IF_ERROR(run->run_list(background));
  SGPU_RETURN_IF_ERROR(run->run_list(sprites));
  SGPU_RETURN_IF_ERROR(run->present(g, a.frame, *primary));
  const DmaMemory& p = run->memory(*primary);
  return std::vector<std::uint8_t>(p.as<const std::uint8_t>(), p.as<const std::uint8_t>() + g.frame_bytes());
}

}  // namespace sgpu::demo
