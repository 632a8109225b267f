// The PCI function without an IOMMU, and without a kernel module of ours: configuration space
// through sysfs `config`, BARs by mmap of sysfs `resourceN`, DMA memory from locked hugepages
// whose physical addresses /proc/self/pagemap gives (the device then reaches them untranslated),
// and no interrupt: the transport polls fences in host memory. Root only (pagemap frame numbers
// need CAP_SYS_ADMIN), unsafe by construction; open_pcie() uses it only when asked explicitly.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/discovery.hpp"
#include "transport/pcie/fd.hpp"
#include "transport/pcie/host_limits.hpp"
#include "transport/pcie/mapped_bar.hpp"
#include "transport/pcie/messages.hpp"
#include "transport/pcie/pagemap.hpp"
#include "transport/pcie/sysfs.hpp"

namespace sgpu::pcie {
namespace {

using detail::Fd;

std::size_t hugepage_size() {
  std::ifstream in("/proc/meminfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("Hugepagesize:", 0) == 0) {
      std::istringstream s(line.substr(13));
      std::size_t kib = 0;
      s >> kib;
      if (kib) return kib * 1024;
    }
  return std::size_t{2} << 20;
}

class SysfsFunction final : public PciFunction {
 public:
  std::string address() const override { return address_; }
  std::string_view kind() const override { return "sysfs (no IOMMU)"; }

  std::uint32_t config_read(std::uint16_t offset, unsigned width) override {
    return detail::read_config(config_.get(), offset, width);
  }
  void config_write(std::uint16_t offset, unsigned width, std::uint32_t value) override {
    detail::write_config(config_.get(), offset, width, value);
  }
  std::size_t config_size() const override { return config_size_; }

  Result<BarWindow*> map_bar(unsigned index) override {
    if (index > 5) return Error::invalid("BAR {} does not exist (0..5)", index);
    if (auto it = bars_.find(index); it != bars_.end()) return it->second.get();
    const std::string path = fmt::format("{}/resource{}", dir_, index);
    Fd fd(::open(path.c_str(), O_RDWR | O_SYNC | O_CLOEXEC));
    if (!fd)
      return Error::make(errno == EACCES ? Errc::PermissionDenied : Errc::TransportError, Touched::Nothing,
                         "cannot open {}: {} (BAR{} through sysfs needs root)", path, std::strerror(errno), index);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0 || st.st_size == 0)
      return Error::make(Errc::TransportError, Touched::Nothing, "{} has no BAR{}", address_, index);
    void* p = ::mmap(nullptr, static_cast<std::size_t>(st.st_size), PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p == MAP_FAILED)
      return Error::make(Errc::TransportError, Touched::Nothing, "mmap of {}: {}", path, std::strerror(errno));
    auto bar = std::make_unique<detail::MappedBar>(p, static_cast<std::uint64_t>(st.st_size), true);
    BarWindow* out = bar.get();
    bars_.emplace(index, std::move(bar));
    return out;
  }

  DmaAddressing dma_addressing() const override { return DmaAddressing::Physical; }
  std::vector<IovaRange> iova_ranges() const override { return {}; }
  std::uint64_t iova_page_sizes() const override { return 4096; }

  Result<HostBlock> alloc_host(std::size_t bytes) override {
    const std::size_t size = (bytes + huge_ - 1) / huge_ * huge_;
    const detail::LockLimits lim = detail::lock_limits();
    if (detail::would_exceed(lim, size)) return detail::memlock_too_low(lim.locked + size, lim.limit);
    void* p =
        ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
    if (p == MAP_FAILED) return detail::no_hugepages(size, std::strerror(errno));
    // Locked so the pages stay where pagemap says (no swap-out; see docs/pcie.md on compaction).
    if (::mlock(p, size) != 0) {
      const int err = errno;
      ::munmap(p, size);
      if (err == ENOMEM || err == EPERM) return detail::memlock_too_low(lim.locked + size, lim.limit);
      return Error::make(Errc::OutOfMemory, Touched::Nothing, "mlock of {} bytes: {}", size, std::strerror(err));
    }
    (void)::madvise(p, size, MADV_DONTFORK);
    auto pa = detail::contiguous_physical(pagemap_.get(), p, size);
    if (!pa) {
      ::munmap(p, size);
      Error e = std::move(pa).error();
      if (e.code == Errc::OutOfMemory)
        e.message += fmt::format(": without an IOMMU one DMA buffer can be at most one {} KiB hugepage", huge_ / 1024);
      return e;
    }
    return HostBlock{p, size, *pa};
  }
  void free_host(const HostBlock& b) noexcept override { ::munmap(b.cpu, b.bytes); }

  Status map_dma(void*, std::uint64_t, std::size_t) override {
    return Error::unsupported("no IOMMU: DMA addresses are physical, nothing to map");
  }
  void unmap_dma(std::uint64_t, std::size_t) noexcept override {}

  InterruptDelivery interrupt_delivery() const override { return InterruptDelivery::Polling; }
  Status enable_interrupts() override { return ok_status(); }
  Result<bool> wait_interrupt(std::chrono::nanoseconds timeout) override {
    if (timeout.count() > 0) std::this_thread::sleep_for(timeout);
    return false;
  }
  std::chrono::nanoseconds now() override {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch());
  }

  static Result<std::unique_ptr<PciFunction>> open(const std::string& address, const std::string& root) {
    const std::string driver = detail::bound_driver(root, address);
    if (!driver.empty() && driver != "pci-stub" && driver != "vfio-pci" && driver != "uio_pci_generic")
      return Error::make(Errc::TransportError, Touched::Nothing,
                         "{} is bound to the kernel driver '{}', which owns its BARs. Unbind it first:\n"
                         "  echo {} > /sys/bus/pci/devices/{}/driver/unbind",
                         address, driver, address, address);
    auto f = std::unique_ptr<SysfsFunction>(new SysfsFunction);
    f->address_ = address;
    f->dir_ = detail::device_dir(root, address);
    f->huge_ = hugepage_size();
    const std::string config = f->dir_ + "/config";
    f->config_ = Fd(::open(config.c_str(), O_RDWR | O_CLOEXEC));
    if (!f->config_)
      return Error::make(Errc::PermissionDenied, Touched::Nothing, "cannot open {}: {} (needs root)", config,
                         std::strerror(errno));
    struct stat st {};
    if (::fstat(f->config_.get(), &st) == 0 && st.st_size >= 4096) f->config_size_ = 4096;
    f->pagemap_ = Fd(::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC));
    if (!f->pagemap_)
      return Error::make(Errc::PermissionDenied, Touched::Nothing, "cannot open /proc/self/pagemap: {}",
                         std::strerror(errno));
    // An unbound function may be disabled at the PCI core's level (no memory decoding, no Bus
    // Master): writing 1 to `enable` enables it and counts one more user of it, which the
    // destructor gives back. With a driver bound the kernel refuses (EBUSY) and owes us nothing.
    f->enabled_by_us_ = detail::write_attribute(f->dir_ + "/enable", "1").has_value();
    return std::unique_ptr<PciFunction>(std::move(f));
  }

  ~SysfsFunction() override {
    bars_.clear();
    if (enabled_by_us_) (void)detail::write_attribute(dir_ + "/enable", "0");
  }

 private:
  std::string address_, dir_;
  Fd config_, pagemap_;
  std::size_t config_size_ = 256;
  std::size_t huge_ = std::size_t{2} << 20;
  bool enabled_by_us_ = false;
  std::map<unsigned, std::unique_ptr<detail::MappedBar>> bars_;
};

}  // namespace

Result<std::unique_ptr<PciFunction>> open_sysfs_function(std::string_view address, const std::string& sysfs_root) {
  SGPU_ASSIGN_OR_RETURN(const std::string normalized, detail::existing_function(address, sysfs_root));
  return SysfsFunction::open(normalized, sysfs_root);
}

}  // namespace sgpu::pcie
