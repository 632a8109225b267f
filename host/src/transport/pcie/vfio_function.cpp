// The real PCI function on a host with an IOMMU: VFIO type 1 (Documentation/driver-api/vfio.rst).
// Container and group, the device fd, configuration space through the config region, BARs by
// mmap of their regions, VFIO_IOMMU_MAP_DMA at the I/O virtual address the pool chose, and the
// interrupt as MSI or MSI-X vector 0 delivered to an eventfd. The kernel's request to give the
// device back (surprise removal, unbind) arrives on a second eventfd and ends every wait. The
// IOMMU's ranges and page sizes (VFIO_IOMMU_GET_INFO) go up to the DMA pool.
#include <fcntl.h>
#include <linux/vfio.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/discovery.hpp"
#include "transport/pcie/fd.hpp"
#include "transport/pcie/host_limits.hpp"
#include "transport/pcie/mapped_bar.hpp"
#include "transport/pcie/messages.hpp"
#include "transport/pcie/sysfs.hpp"

namespace sgpu::pcie {
namespace {

using detail::Fd;

// `what` failed with errno; nothing was changed on the device.
Error sys_error(Errc code, std::string what) {
  return Error::make(code, Touched::Nothing, "{}: {}", what, std::strerror(errno));
}

class VfioFunction final : public PciFunction {
 public:
  std::string address() const override { return address_; }
  std::string_view kind() const override { return "vfio"; }

  std::uint32_t config_read(std::uint16_t offset, unsigned width) override {
    return detail::read_config(device_.get(), static_cast<off_t>(config_offset_ + offset), width);
  }
  void config_write(std::uint16_t offset, unsigned width, std::uint32_t value) override {
    detail::write_config(device_.get(), static_cast<off_t>(config_offset_ + offset), width, value);
  }
  std::size_t config_size() const override { return config_size_; }

  Result<BarWindow*> map_bar(unsigned index) override {
    if (index > 5) return Error::invalid("BAR {} does not exist (0..5)", index);
    if (auto it = bars_.find(index); it != bars_.end()) return it->second.get();
    vfio_region_info r{};
    r.argsz = sizeof r;
    r.index = VFIO_PCI_BAR0_REGION_INDEX + index;
    if (::ioctl(device_.get(), VFIO_DEVICE_GET_REGION_INFO, &r) != 0)
      return sys_error(Errc::TransportError, fmt::format("{}: VFIO_DEVICE_GET_REGION_INFO for BAR{}", address_, index));
    if (r.size == 0)
      return Error::make(Errc::TransportError, Touched::Nothing,
                         "{} has no BAR{} (size 0): is this the right function?", address_, index);
    if ((r.flags & VFIO_REGION_INFO_FLAG_MMAP) == 0)
      return Error::unsupported("{}: BAR{} cannot be mmapped through VFIO (an I/O-port BAR, or smaller than a page)",
                                address_, index);
    void* p = ::mmap(nullptr, r.size, PROT_READ | PROT_WRITE, MAP_SHARED, device_.get(), static_cast<off_t>(r.offset));
    if (p == MAP_FAILED) return sys_error(Errc::TransportError, fmt::format("{}: mmap of BAR{}", address_, index));
    auto bar = std::make_unique<detail::MappedBar>(p, r.size, true);
    BarWindow* out = bar.get();
    bars_.emplace(index, std::move(bar));
    return out;
  }

  DmaAddressing dma_addressing() const override { return DmaAddressing::Translated; }
  std::vector<IovaRange> iova_ranges() const override { return ranges_; }

  std::uint64_t iova_page_sizes() const override { return page_sizes_; }

  Result<HostBlock> alloc_host(std::size_t bytes) override {
    // MAP_DMA wants the host address aligned to the IOMMU's smallest page too: map a granule
    // more than asked and trim both ends to the aligned part.
    const std::size_t granule = smallest_page(page_sizes_);
    const std::size_t extra = granule > kHostPage ? granule : 0;
    void* raw = ::mmap(nullptr, bytes + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) return sys_error(Errc::OutOfMemory, fmt::format("mmap of {} bytes for DMA", bytes));
    auto* base = static_cast<std::uint8_t*>(raw);
    auto* p = base;
    if (extra) {
      p = base + (granule - reinterpret_cast<std::uintptr_t>(base) % granule) % granule;
      if (p > base) ::munmap(base, static_cast<std::size_t>(p - base));
      if (p + bytes < base + bytes + extra)
        ::munmap(p + bytes, static_cast<std::size_t>(base + bytes + extra - (p + bytes)));
    }
    // A child of fork() must not get copy-on-write pages the device is writing to.
    (void)::madvise(p, bytes, MADV_DONTFORK);
    return HostBlock{p, bytes, std::nullopt};
  }
  void free_host(const HostBlock& b) noexcept override { ::munmap(b.cpu, b.bytes); }

  Status map_dma(void* cpu, std::uint64_t iova, std::size_t bytes) override {
    // Pinning counts against RLIMIT_MEMLOCK: say how much is needed before the kernel says ENOMEM.
    const detail::LockLimits lim = detail::lock_limits();
    if (detail::would_exceed(lim, bytes)) return detail::memlock_too_low(lim.locked + bytes, lim.limit);
    vfio_iommu_type1_dma_map m{};
    m.argsz = sizeof m;
    m.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
    m.vaddr = reinterpret_cast<std::uint64_t>(cpu);
    m.iova = iova;
    m.size = bytes;
    if (::ioctl(container_.get(), VFIO_IOMMU_MAP_DMA, &m) != 0) {
      if (errno == ENOMEM && !lim.cap_ipc_lock) return detail::memlock_too_low(lim.locked + bytes, lim.limit);
      return sys_error(errno == ENOSPC ? Errc::OutOfMemory : Errc::TransportError,
                       fmt::format("{}: VFIO_IOMMU_MAP_DMA of {:#x} bytes at IOVA {:#x}{}", address_, bytes, iova,
                                   errno == ENOSPC ? " (the container's dma_entry_limit is reached)" : ""));
    }
    return ok_status();
  }
  void unmap_dma(std::uint64_t iova, std::size_t bytes) noexcept override {
    vfio_iommu_type1_dma_unmap u{};
    u.argsz = sizeof u;
    u.iova = iova;
    u.size = bytes;
    (void)::ioctl(container_.get(), VFIO_IOMMU_UNMAP_DMA, &u);
  }

  InterruptDelivery interrupt_delivery() const override { return delivery_; }

  Status enable_interrupts() override {
    if (delivery_ == InterruptDelivery::Polling) return ok_status();
    irq_event_ = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (!irq_event_) return sys_error(Errc::TransportError, "eventfd");
    const unsigned index = delivery_ == InterruptDelivery::Msix ? VFIO_PCI_MSIX_IRQ_INDEX : VFIO_PCI_MSI_IRQ_INDEX;
    SGPU_RETURN_IF_ERROR(set_irq(index, irq_event_.get()));
    irq_index_ = index;
    return ok_status();
  }

  Result<bool> wait_interrupt(std::chrono::nanoseconds timeout) override {
    pollfd fds[2] = {{irq_event_.get(), POLLIN, 0}, {req_event_.get(), POLLIN, 0}};
    const nfds_t n = req_event_ ? 2 : 1;
    if (!irq_event_) fds[0].fd = -1;
    const auto ns = std::max<std::int64_t>(timeout.count(), 0);
    timespec ts{static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
    const int r = ::ppoll(fds, n, &ts, nullptr);
    if (r < 0 && errno != EINTR) return sys_error(Errc::TransportError, "ppoll on the interrupt eventfd");
    if (n == 2 && (fds[1].revents & POLLIN))
      return Error(Errc::TransportError, detail::device_lost(address_, "the kernel asks for the device back"),
                   Touched::Nothing);
    if (r > 0 && (fds[0].revents & POLLIN)) {
      std::uint64_t count = 0;
      (void)!::read(irq_event_.get(), &count, sizeof count);
      return true;
    }
    return false;
  }

  std::chrono::nanoseconds now() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
  }

  ~VfioFunction() override {
    if (irq_index_) (void)set_irq(*irq_index_, -1);
    if (req_event_) (void)set_irq(VFIO_PCI_REQ_IRQ_INDEX, -1);
    bars_.clear();
  }

  static Result<std::unique_ptr<PciFunction>> open(const std::string& address, const std::string& root);

 private:
  // Routes IRQ `index` vector 0 to `fd`, or disables it with fd < 0.
  Status set_irq(unsigned index, int fd) {
    alignas(vfio_irq_set) std::uint8_t buf[sizeof(vfio_irq_set) + sizeof(std::int32_t)] = {};
    auto* s = reinterpret_cast<vfio_irq_set*>(buf);
    s->argsz = sizeof buf;
    s->index = index;
    s->start = 0;
    if (fd < 0) {
      s->flags = VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER;
      s->count = 0;
      s->argsz = sizeof(vfio_irq_set);
    } else {
      s->flags = VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER;
      s->count = 1;
      std::memcpy(s->data, &fd, sizeof fd);
    }
    if (::ioctl(device_.get(), VFIO_DEVICE_SET_IRQS, s) != 0)
      return sys_error(Errc::TransportError, fmt::format("{}: VFIO_DEVICE_SET_IRQS (index {})", address_, index));
    return ok_status();
  }

  unsigned irq_count(unsigned index) {
    vfio_irq_info i{};
    i.argsz = sizeof i;
    i.index = index;
    if (::ioctl(device_.get(), VFIO_DEVICE_GET_IRQ_INFO, &i) != 0) return 0;
    return i.count;
  }

  Status read_iommu_info();

  static constexpr std::size_t kHostPage = 4096;

  std::string address_;
  Fd container_, group_, device_, irq_event_, req_event_;
  std::uint64_t config_offset_ = 0;
  std::size_t config_size_ = 256;
  std::vector<IovaRange> ranges_;
  std::uint64_t page_sizes_ = kHostPage;
  InterruptDelivery delivery_ = InterruptDelivery::Polling;
  std::optional<unsigned> irq_index_;
  std::map<unsigned, std::unique_ptr<detail::MappedBar>> bars_;
};

Status VfioFunction::read_iommu_info() {
  std::vector<std::uint8_t> buf(sizeof(vfio_iommu_type1_info));
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto* info = reinterpret_cast<vfio_iommu_type1_info*>(buf.data());
    info->argsz = static_cast<std::uint32_t>(buf.size());
    if (::ioctl(container_.get(), VFIO_IOMMU_GET_INFO, info) != 0)
      return sys_error(Errc::TransportError, "VFIO_IOMMU_GET_INFO");
    if (info->argsz > buf.size()) {
      buf.assign(info->argsz, 0);
      continue;
    }
    ranges_.clear();
    // The page sizes the IOMMU maps (4 KiB | 2 MiB | 1 GiB on x86, 4 KiB or 64 KiB granules on
    // Arm): the DMA pool maps whole multiples of the smallest.
    page_sizes_ = (info->flags & VFIO_IOMMU_INFO_PGSIZES) && info->iova_pgsizes ? info->iova_pgsizes : kHostPage;
    if ((info->flags & VFIO_IOMMU_INFO_CAPS) && info->cap_offset != 0) {
      std::uint32_t off = info->cap_offset;
      for (int hops = 0; off != 0 && off + sizeof(vfio_info_cap_header) <= buf.size() && hops < 32; ++hops) {
        const auto* h = reinterpret_cast<const vfio_info_cap_header*>(buf.data() + off);
        if (h->id == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
          const auto* c = reinterpret_cast<const vfio_iommu_type1_info_cap_iova_range*>(h);
          for (std::uint32_t i = 0; i < c->nr_iovas; ++i)
            ranges_.push_back({c->iova_ranges[i].start, c->iova_ranges[i].end});
        }
        off = h->next;
      }
    }
    if (ranges_.empty()) ranges_.push_back({0, ~std::uint64_t{0}});
    return ok_status();
  }
  return Error::make(Errc::TransportError, Touched::Nothing, "VFIO_IOMMU_GET_INFO keeps growing");
}

Result<std::unique_ptr<PciFunction>> VfioFunction::open(const std::string& address, const std::string& root) {
  const std::string driver = detail::bound_driver(root, address);
  const auto group = detail::iommu_group(root, address);
  if (driver != "vfio-pci") {
    if (!group) return detail::no_iommu_group(address);
    return detail::wrong_driver(address, detail::sysfs_id(root, address), driver);
  }
  if (!group) return detail::no_iommu_group(address);

  auto f = std::unique_ptr<VfioFunction>(new VfioFunction);
  f->address_ = address;
  f->container_ = Fd(::open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC));
  if (!f->container_)
    return sys_error(errno == ENOENT ? Errc::Unsupported : Errc::PermissionDenied,
                     "cannot open /dev/vfio/vfio (is the vfio module loaded? `modprobe vfio-pci`)");
  if (::ioctl(f->container_.get(), VFIO_GET_API_VERSION) != VFIO_API_VERSION)
    return Error::unsupported("this kernel's VFIO API version is not the one this library speaks");
  const int type = ::ioctl(f->container_.get(), VFIO_CHECK_EXTENSION, VFIO_TYPE1v2_IOMMU) > 0 ? VFIO_TYPE1v2_IOMMU
                   : ::ioctl(f->container_.get(), VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) > 0 ? VFIO_TYPE1_IOMMU
                                                                                              : -1;
  if (type < 0) return Error::unsupported("VFIO offers no type 1 IOMMU (vfio_iommu_type1 not loaded?)");

  const std::string group_path = fmt::format("/dev/vfio/{}", *group);
  f->group_ = Fd(::open(group_path.c_str(), O_RDWR | O_CLOEXEC));
  if (!f->group_) {
    const int err = errno;
    if (err == EACCES || err == EPERM)
      return Error::make(Errc::PermissionDenied, Touched::Nothing,
                         "cannot open {}: {}. Run as root, or give your user the group: `chown $USER {}` "
                         "(or a udev rule, docs/pcie.md \"permissions\")",
                         group_path, std::strerror(err), group_path);
    if (err == EBUSY) return Error::busy("{} is busy: another process (a VM, another sgpu) has the group", group_path);
    return Error::make(Errc::TransportError, Touched::Nothing, "cannot open {}: {}", group_path, std::strerror(err));
  }
  vfio_group_status st{};
  st.argsz = sizeof st;
  if (::ioctl(f->group_.get(), VFIO_GROUP_GET_STATUS, &st) != 0)
    return sys_error(Errc::TransportError, "VFIO_GROUP_GET_STATUS");
  if ((st.flags & VFIO_GROUP_FLAGS_VIABLE) == 0)
    return detail::group_not_viable(address, *group, detail::group_members(root, *group));
  int container_fd = f->container_.get();
  if (::ioctl(f->group_.get(), VFIO_GROUP_SET_CONTAINER, &container_fd) != 0)
    return sys_error(Errc::TransportError, "VFIO_GROUP_SET_CONTAINER");
  if (::ioctl(f->container_.get(), VFIO_SET_IOMMU, type) != 0) return sys_error(Errc::TransportError, "VFIO_SET_IOMMU");
  SGPU_RETURN_IF_ERROR(f->read_iommu_info());

  f->device_ = Fd(::ioctl(f->group_.get(), VFIO_GROUP_GET_DEVICE_FD, address.c_str()));
  if (!f->device_) return sys_error(Errc::TransportError, fmt::format("VFIO_GROUP_GET_DEVICE_FD {}", address));
  vfio_region_info cr{};
  cr.argsz = sizeof cr;
  cr.index = VFIO_PCI_CONFIG_REGION_INDEX;
  if (::ioctl(f->device_.get(), VFIO_DEVICE_GET_REGION_INFO, &cr) != 0)
    return sys_error(Errc::TransportError, "VFIO_DEVICE_GET_REGION_INFO (config space)");
  f->config_offset_ = cr.offset;
  f->config_size_ = cr.size >= 4096 ? 4096 : 256;

  if (f->irq_count(VFIO_PCI_MSIX_IRQ_INDEX) > 0)
    f->delivery_ = InterruptDelivery::Msix;
  else if (f->irq_count(VFIO_PCI_MSI_IRQ_INDEX) > 0)
    f->delivery_ = InterruptDelivery::Msi;
  if (f->irq_count(VFIO_PCI_REQ_IRQ_INDEX) > 0) {
    f->req_event_ = Fd(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
    if (f->req_event_ && !f->set_irq(VFIO_PCI_REQ_IRQ_INDEX, f->req_event_.get())) f->req_event_.reset();
  }
  return std::unique_ptr<PciFunction>(std::move(f));
}

}  // namespace

Result<std::unique_ptr<PciFunction>> open_vfio_function(std::string_view address, const std::string& sysfs_root) {
  SGPU_ASSIGN_OR_RETURN(const std::string normalized, detail::existing_function(address, sysfs_root));
  return VfioFunction::open(normalized, sysfs_root);
}

}  // namespace sgpu::pcie
