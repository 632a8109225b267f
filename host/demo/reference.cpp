#include "reference.hpp"

#include <chrono>
#include <cstring>
#include <map>

#include <fmt/format.h>

#include "sgpu/device.hpp"
#include "sgpu/kmd/patch.hpp"
#include "sgpu/kmd/present.hpp"
#include "sgpu/kmd/render.hpp"

namespace sgpu::demo {
namespace {

using namespace std::chrono_literals;

constexpr std::uint32_t kDmaBytes = 64 * 1024;

class ModelRun {
 public:
  static Result<ModelRun> open(const TransportRegistry& transports) {
    SGPU_ASSIGN_OR_RETURN(auto t, transports.open("model"));
    DeviceOptions opt;
    opt.gart = false;  // the model has no GART: GPU addresses are bus addresses
    SGPU_ASSIGN_OR_RETURN(auto d, Device::open(std::move(t), opt));
    return ModelRun(std::move(d));
  }

  Result<AllocationHandle> allocate(std::size_t bytes) {
    SGPU_ASSIGN_OR_RETURN(auto m, dev_.transport().alloc_dma(bytes));
    const AllocationHandle h{memory_.size() + 1};
    memory_.emplace(h.value, std::move(m));
    return h;
  }
  const DmaMemory& memory(AllocationHandle h) const { return memory_.at(h.value); }

  // The DXGK_ALLOCATIONLIST of a user list: every allocation "resident" at its bus address.
  std::vector<kmd::DxgkAllocationListEntry> placements(const std::vector<AllocationListEntry>& list) const {
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
      std::vector<PatchLocation> patches(cl.patch_locations().size() + 1);
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
      SGPU_ASSIGN_OR_RETURN(auto out, kmd::render(ra));
      SGPU_RETURN_IF_ERROR(submit(list, patches, out));
      if (out.complete) return ok_status();
      offset = out.multipass_offset;
    }
  }

  Status present(const SceneGeometry& g, AllocationHandle src, AllocationHandle dst) {
    std::vector<AllocationListEntry> user{{}, {src, false}, {dst, true}};
    const auto list = placements(user);
    std::vector<PatchLocation> patches(8);
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
    SGPU_ASSIGN_OR_RETURN(auto out, kmd::present(pa));
    if (!out.complete) return Error::invalid("reference: Present did not fit one DMA buffer");
    return submit(list, patches, out);
  }

 private:
  explicit ModelRun(Device d) : dev_(std::move(d)) {}

  Status buffer() {
    if (dma_) return ok_status();
    SGPU_ASSIGN_OR_RETURN(dma_, dev_.transport().alloc_dma(kDmaBytes));
    SGPU_ASSIGN_OR_RETURN(fence_record_, dev_.transport().alloc_dma(4096));
    return ok_status();
  }

  // Patch (everything, with the next fence) and run the buffer to completion.
  Status submit(const std::vector<kmd::DxgkAllocationListEntry>& list, const std::vector<PatchLocation>& patches,
                const kmd::RenderOutput& out) {
    // This program drives the device alone: it numbers the ring fences itself.
    const RingFence fence = dev_.next_fence();
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
    SGPU_RETURN_IF_ERROR(kmd::patch(pa));
    SGPU_RETURN_IF_ERROR(dev_.submit({&dma_, 0, out.dma_bytes, 1, 0}, fence));
    SGPU_RETURN_IF_ERROR(dev_.wait_fence(fence, 1s));
    if (out.complete && fence_record_.as<const std::uint64_t>()[0] != fence.value())
      return Error::make(Errc::DeviceFault, Touched::Hardware,
                         "reference: the submission fence packet wrote {:#x}, expected {}",
                         fence_record_.as<const std::uint64_t>()[0], fence);
    return ok_status();
  }

  Device dev_;
  std::map<std::uint64_t, DmaMemory> memory_;
  DmaMemory dma_;
  DmaMemory fence_record_;
  kmd::RenderPrivateData private_;
};

// Frames first, first + 1, ... first + count - 1: each one is drawn whole (the background covers
// every row), so a frame does not depend on the ones before it.
Result<std::vector<std::vector<std::uint8_t>>> run_frames(const SceneGeometry& g, const TransportRegistry& transports,
                                                          std::uint32_t first, std::uint32_t count) {
  SGPU_ASSIGN_OR_RETURN(auto run, ModelRun::open(transports));
  SceneAllocations a;
  auto frame = run.allocate(g.frame_bytes());
  auto sprite = run.allocate(g.sprite_bytes());
  auto status = run.allocate(kStatusBytes);
  auto primary = run.allocate(g.frame_bytes());
  for (auto* r : {&frame, &sprite, &status, &primary})
    if (!*r) return std::move(*r).error();
  a.frame = *frame;
  a.sprite = *sprite;
  a.status = *status;
  umd::CommandList background;
  SGPU_RETURN_IF_ERROR(record_background(g, a, background));
  std::vector<std::vector<std::uint8_t>> out;
  for (std::uint32_t n = first; n < first + count; ++n) {
    umd::CommandList sprites;
    SGPU_RETURN_IF_ERROR(record_sprites(g, a, sprites, n));
    SGPU_RETURN_IF_ERROR(run.run_list(background));
    SGPU_RETURN_IF_ERROR(run.run_list(sprites));
    SGPU_RETURN_IF_ERROR(run.present(g, a.frame, *primary));
    const DmaMemory& p = run.memory(*primary);
    out.emplace_back(p.as<const std::uint8_t>(), p.as<const std::uint8_t>() + g.frame_bytes());
  }
  return out;
}

}  // namespace

Result<std::vector<std::uint8_t>> reference_frame(const SceneGeometry& g, const TransportRegistry& transports,
                                                  std::uint32_t frame) {
  SGPU_ASSIGN_OR_RETURN(auto frames, run_frames(g, transports, frame, 1));
  return std::move(frames.front());
}

Result<std::vector<std::vector<std::uint8_t>>> reference_frames(const SceneGeometry& g,
                                                                const TransportRegistry& transports,
                                                                std::uint32_t count) {
  return run_frames(g, transports, 0, count);
}

}  // namespace sgpu::demo
