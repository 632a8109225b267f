#include "sgpu/sched/runtime.hpp"

#include <fmt/format.h>

#include "sgpu/kmd/sizing.hpp"

namespace sgpu::sched {

ScheduledContext::ScheduledContext(Scheduler& scheduler, kmd::Context context)
    : scheduler_(scheduler), context_(std::move(context)) {}

ScheduledContext::~ScheduledContext() {
  // Its DMA buffers are in flight until the work retired; a lost adapter has nothing running.
  if (!scheduler_.fatal_error()) (void)scheduler_.idle(std::chrono::seconds(10));
  (void)scheduler_.remove_context(context_);
}

std::uint32_t kernel_window_pages_for(std::uint32_t dma_buffers) {
  const auto buffer_pages = kmd::DefaultSizingPolicy::dma_buffer_bytes(Aperture::kPageSize) / Aperture::kPageSize;
  return 1 + dma_buffers * static_cast<std::uint32_t>(buffer_pages);
}

Result<std::unique_ptr<Runtime>> Runtime::open(std::unique_ptr<Transport> transport, RuntimeOptions o) {
  if (o.kernel_window_pages == 0) o.kernel_window_pages = kernel_window_pages_for(32);
  SGPU_ASSIGN_OR_RETURN(auto dev, Device::open(std::move(transport), o.device));
  std::unique_ptr<Runtime> rt(new Runtime());
  rt->device_ = std::make_unique<Device>(std::move(dev));
  Device& d = *rt->device_;
  Aperture* ap = d.aperture();
  if (!ap)
    return Error::unsupported(
        "runtime: the device has no GART (or DeviceOptions::gart is off): user DMA buffers need the aperture");
  SGPU_ASSIGN_OR_RETURN(rt->window_, KernelWindow::create(*ap, d.transport(), o.kernel_window_pages));

  // The memory manager's aperture segment ends where the window begins, and the window is the
  // DMA-buffer segment: the top of the table, which is the top of CAP_APSEG when the table covers
  // the whole aperture.
  kmd::AdapterDescription desc = kmd::describe(d.info(), o.kernel_window_pages);
  for (SegmentId id = 1; id <= desc.segments.size(); ++id) {
    auto& s = desc.segments[id - 1];
    if (id == desc.dma_buffer_segment_id) {
      s.base_address = rt->window_->gpu_base();
      s.size = s.commit_limit = rt->window_->bytes();
    } else if (s.is_aperture()) {
      s.size = s.commit_limit = std::min(s.size, ap->size() - rt->window_->bytes());
      desc.caps.aperture_segment_commit_limit = std::min(desc.caps.aperture_segment_commit_limit, s.size);
    } else if (o.memory_segment_bytes != 0 && o.memory_segment_bytes < s.size) {
      s.size = s.commit_limit = o.memory_segment_bytes;
    }
  }
  if (o.adjust_description) o.adjust_description(desc);

  SGPU_ASSIGN_OR_RETURN(rt->executor_, vidmm::DeviceExecutor::create(d, desc.segments, o.paging));
  rt->system_ = std::make_unique<TransportSystemMemory>(d.transport());
  SGPU_ASSIGN_OR_RETURN(rt->adapter_, kmd::Adapter::create(desc, *rt->executor_, *rt->system_, o.sizing_policy));
  // The system device: the paging buffers are its DMA buffers, from its pool at its
  // DXGK_DEVICEINFO sizes. They are fetched at their bus address (privileged, paging).
  SGPU_ASSIGN_OR_RETURN(auto system_device, rt->adapter_->create_device({kmd::CreateDeviceFlags::kSystemDevice}));
  if (!system_device.info().dma_buffer_segment_set.empty())
    return Error::unsupported(
        "runtime: the system device's DXGK_DEVICEINFO.DmaBufferSegmentSet is {:#x}; paging buffers are contiguous "
        "system memory (0) on this device",
        system_device.info().dma_buffer_segment_set.bits());
  rt->system_device_ = std::make_unique<kmd::Device>(std::move(system_device));
  SGPU_RETURN_IF_ERROR(rt->executor_->set_buffer_pool(&rt->system_device_->dma_buffers()));
  SGPU_ASSIGN_OR_RETURN(rt->scheduler_,
                        Scheduler::create(d, *rt->adapter_, *rt->window_, rt->executor_.get(), o.scheduler));
  return rt;
}

Runtime::~Runtime() {
  // Reverse order of construction; the scheduler first (it detaches from the executor and the
  // context pools).
  scheduler_.reset();
  if (executor_) (void)executor_->set_buffer_pool(nullptr);
  system_device_.reset();
  adapter_.reset();
  executor_.reset();
  system_.reset();
  window_.reset();
  device_.reset();
}

Result<std::unique_ptr<ScheduledContext>> Runtime::create_context(kmd::Device& device,
                                                                  const kmd::CreateContextArgs& args) {
  if (!adapter_->owns_device(device.id()))  // handles carry their adapter's tag; a moved-from device has none
    return Error::invalid("Runtime::create_context: device {:#x} is not a live device of this runtime's adapter",
                          device.id());
  SGPU_ASSIGN_OR_RETURN(auto ctx, device.create_context(args));
  auto sc = std::make_unique<ScheduledContext>(*scheduler_, std::move(ctx));
  if (Status s = scheduler_->add_context(sc->get()); !s) {
    // Not registered: nothing to remove (remove_context answers InvalidArgument, ignored).
    return std::move(s).error();
  }
  return sc;
}

}  // namespace sgpu::sched
