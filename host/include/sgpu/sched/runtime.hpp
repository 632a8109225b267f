// Runtime: one softgpu, ready to take command lists.
//
// Opens the device on a transport (from a TransportRegistry: sim, model, pcie...), reserves the
// kernel window at the top of the GART table, builds the DeviceExecutor (paging), the adapter
// (memory manager over the device's segments minus the window), the system device (whose
// DMA-buffer pool, sized by its DXGK_DEVICEINFO, carries the paging buffers) and the scheduler:
//
//   auto rt = sgpu::sched::Runtime::open(std::move(*registry.open("sim")), {});
//   auto dev = (*rt)->adapter().create_device({});
//   auto ctx = (*rt)->create_context(*dev);                    // registered with the scheduler
//   auto surface = dev->create_allocation(info);
//   sgpu::umd::CommandList cl;
//   cl.fill(surface->handle(), 0, 4096, 0x01020304);
//   auto fence = (*rt)->scheduler().submit(ctx->get(), cl);
//   (*rt)->scheduler().wait(*fence, std::chrono::milliseconds(10));
//
// Destroy contexts, allocations and devices before the Runtime (the adapter must outlive them).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "sgpu/device.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/device.hpp"
#include "sgpu/result.hpp"
#include "sgpu/sched/kernel_window.hpp"
#include "sgpu/sched/scheduler.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/vidmm/device_executor.hpp"

namespace sgpu::sched {

struct RuntimeOptions {
  /// Device options; `device.aperture.table_pages` = 0 maps the whole aperture (the window is
  /// at the top of the table either way).
  DeviceOptions device;
  /// Kernel window: the fence page + room for DMA buffers; the scheduler throttles submissions
  /// when it is full. 0 = kernel_window_pages_for(32).
  std::uint32_t kernel_window_pages = 0;
  /// Cuts the memory segment to this many bytes (0 = as the device reports it).
  std::uint64_t memory_segment_bytes = 0;
  /// Last word on the adapter description (tests: commit limits, caps).
  std::function<void(kmd::AdapterDescription&)> adjust_description;
  /// Sizes devices and contexts (DXGK_DEVICEINFO / DXGK_CONTEXTINFO); null = kmd::DefaultSizingPolicy.
  std::shared_ptr<const kmd::SizingPolicy> sizing_policy;
  vidmm::DeviceExecutorOptions paging;
  SchedulerOptions scheduler;
};

/// The fence page plus room for `dma_buffers` DMA buffers of the default sizing policy's size
/// (kmd::DefaultSizingPolicy::dma_buffer_bytes: it holds the longest packet plus a Present).
std::uint32_t kernel_window_pages_for(std::uint32_t dma_buffers);

class Runtime;

/// A kmd::Context registered with the scheduler for its lifetime (removed on destruction, after
/// its work retired).
class ScheduledContext {
 public:
  ScheduledContext(Scheduler& scheduler, kmd::Context context);
  ~ScheduledContext();
  ScheduledContext(const ScheduledContext&) = delete;
  ScheduledContext& operator=(const ScheduledContext&) = delete;
  kmd::Context& get() { return context_; }
  const kmd::Context& get() const { return context_; }
  kmd::Context* operator->() { return &context_; }

 private:
  Scheduler& scheduler_;
  kmd::Context context_;
};

class Runtime {
 public:
  /// Brings the driver stack up on `transport` (e.g. from TransportRegistry::open, possibly
  /// wrapped in a TimedTransport).
  static Result<std::unique_ptr<Runtime>> open(std::unique_ptr<Transport> transport, RuntimeOptions options = {});
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Device& device() { return *device_; }
  KernelWindow& window() { return *window_; }
  vidmm::DeviceExecutor& executor() { return *executor_; }
  kmd::Adapter& adapter() { return *adapter_; }
  /// The system device (DXGK_CREATEDEVICEFLAGS.SystemDevice): its DMA buffers are the paging
  /// buffers.
  kmd::Device& system_device() { return *system_device_; }
  vidmm::MemoryManager& memory_manager() { return adapter_->memory_manager(); }
  Scheduler& scheduler() { return *scheduler_; }

  /// DxgkDdiCreateContext on `device` + Scheduler::add_context.
  Result<std::unique_ptr<ScheduledContext>> create_context(kmd::Device& device, const kmd::CreateContextArgs& args = {});

 private:
  Runtime() = default;
  std::unique_ptr<Device> device_;
  std::unique_ptr<KernelWindow> window_;
  std::unique_ptr<TransportSystemMemory> system_;
  std::unique_ptr<vidmm::DeviceExecutor> executor_;
  std::unique_ptr<kmd::Adapter> adapter_;
  std::unique_ptr<kmd::Device> system_device_;
  std::unique_ptr<Scheduler> scheduler_;
};

}  // namespace sgpu::sched
