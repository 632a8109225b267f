#include "sgpu/kmd/device.hpp"

#include <fmt/format.h>

#include "sgpu/kmd/adapter.hpp"

namespace sgpu::kmd {

Device::Device(Adapter& adapter, std::uint64_t id, CreateDeviceFlags flags, const DxgkDeviceInfo& info)
    : adapter_(&adapter),
      id_(id),
      flags_(flags),
      info_(info),
      pools_(std::make_unique<CommandPools>(adapter.system_memory(), info)) {}

Device::Device(Device&& o) noexcept { *this = std::move(o); }

Device& Device::operator=(Device&& o) noexcept {
  if (this != &o) {
    release();
    adapter_ = std::exchange(o.adapter_, nullptr);
    id_ = std::exchange(o.id_, 0);
    flags_ = o.flags_;
    info_ = o.info_;
    pools_ = std::move(o.pools_);
  }
  return *this;
}

Device::~Device() { release(); }

void Device::release() {
  if (adapter_ == nullptr) return;
  auto& mm = adapter_->memory_manager();
  mm.destroy_owned_by(vidmm::AllocationKind::Standard, id_, 0);
  mm.destroy_owned_by(vidmm::AllocationKind::DeviceContext, id_, 0);
  adapter_->devices_.erase(id_);
  adapter_ = nullptr;
}

Result<Context> Device::create_context(const CreateContextArgs& args) {
  if (adapter_ == nullptr) return Error::invalid("DxgkDdiCreateContext: the device was moved from or destroyed");
  const auto& caps = adapter_->caps();
  const CreateContextFlags f = args.flags;
  if (f.value & ~CreateContextFlags::kDefined)
    return Error::invalid("DXGK_CREATECONTEXTFLAGS {:#x} sets undefined bits {:#x}", f.value,
                          f.value & ~CreateContextFlags::kDefined);
  if (f.system_context() && f.gdi_context())
    return Error::invalid("DXGK_CREATECONTEXTFLAGS: SystemContext and GdiContext are exclusive");
  if (f.system_context() && !flags_.system_device())
    return Error::invalid("DXGK_CREATECONTEXTFLAGS.SystemContext on device {:#x}, which is not the system device", id_);
  if (f.gdi_context() && !flags_.gdi_device())
    return Error::invalid("DXGK_CREATECONTEXTFLAGS.GdiContext on device {:#x}, which is not a GDI device", id_);
  if (args.node_ordinal >= caps.node_count)
    return Error::invalid("DXGKARG_CREATECONTEXT.NodeOrdinal {} is not a node (adapter has {})", args.node_ordinal,
                          caps.node_count);
  if (args.engine_affinity != 1)
    return Error::invalid(
        "DXGKARG_CREATECONTEXT.EngineAffinity {:#x} must have exactly one bit, 1 << EngineOrdinal "
        "(one engine: 0x1)",
        args.engine_affinity);
  const DxgkContextInfo info = adapter_->sizing_policy().context_info(*adapter_, flags_, f, args.node_ordinal);
  SGPU_RETURN_IF_ERROR(validate_context_info(*adapter_, info, f));
  const std::uint64_t handle = adapter_->new_handle();
  adapter_->contexts_.emplace(handle, Adapter::LiveContext{id_, f});
  return Context(*adapter_, id_, handle, f, args.node_ordinal, info);
}

Result<Allocation> Device::create_allocation(const AllocationInfo& info) {
  if (adapter_ == nullptr) return Error::invalid("DxgkDdiCreateAllocation: the device was moved from or destroyed");
  SGPU_ASSIGN_OR_RETURN(auto h, adapter_->memory_manager().create_allocation(
                                    info, vidmm::AllocationOwner{vidmm::AllocationKind::Standard, id_, 0}));
  return Allocation(adapter_->memory_manager(), h);
}

Context::Context(Adapter& adapter, std::uint64_t device, std::uint64_t id, CreateContextFlags flags, std::uint32_t node,
                 const DxgkContextInfo& info)
    : adapter_(&adapter),
      device_(device),
      id_(id),
      flags_(flags),
      node_(node),
      info_(info),
      pools_(std::make_unique<CommandPools>(adapter.system_memory(), info)) {}

Context::Context(Context&& o) noexcept { *this = std::move(o); }

Context& Context::operator=(Context&& o) noexcept {
  if (this != &o) {
    release();
    adapter_ = std::exchange(o.adapter_, nullptr);
    device_ = o.device_;
    id_ = std::exchange(o.id_, 0);
    flags_ = o.flags_;
    node_ = o.node_;
    info_ = o.info_;
    pools_ = std::move(o.pools_);
  }
  return *this;
}

Context::~Context() { release(); }

void Context::release() {
  if (adapter_ == nullptr) return;
  adapter_->memory_manager().destroy_owned_by(vidmm::AllocationKind::GpuContext, device_, id_);
  adapter_->contexts_.erase(id_);
  adapter_ = nullptr;
}

}  // namespace sgpu::kmd
