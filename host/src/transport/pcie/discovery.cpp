#include "transport/pcie/discovery.hpp"

#include <pciaccess.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <mutex>
#include <regex>

#include <fmt/format.h>

#include "sgpu/regs.hpp"
#include "transport/pcie/config_space.hpp"
#include "transport/pcie/messages.hpp"
#include "transport/pcie/sysfs.hpp"

namespace sgpu::pcie {
namespace detail {
namespace {

// libpciaccess keeps one process-wide table (pci_system_init/cleanup). This guard is the only
// state of ours that is not per transport: it makes concurrent scans safe and pairs init/cleanup.
class PciSystem {
 public:
  PciSystem() : lock_(mutex()) { err_ = pci_system_init(); }
  ~PciSystem() {
    if (err_ == 0) pci_system_cleanup();
  }
  PciSystem(const PciSystem&) = delete;
  PciSystem& operator=(const PciSystem&) = delete;
  int error() const { return err_; }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  std::lock_guard<std::mutex> lock_;
  int err_ = 0;
};

std::string address_of(const pci_device& d) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", d.domain, d.bus, d.dev, d.func);
}

// ID_MAGIC from BAR0 through libpciaccess (sysfs resource0), read only.
void probe_magic(pci_device* d, FunctionInfo& f) {
  if (d->regions[0].size < 4 || d->regions[0].is_IO) {
    f.magic_note = "BAR0 is not a memory BAR";
    return;
  }
  void* p = nullptr;
  const int err =
      pci_device_map_range(d, d->regions[0].base_addr, 4096 < d->regions[0].size ? 4096 : d->regions[0].size, 0, &p);
  if (err != 0) {
    f.magic_note = fmt::format("BAR0 not readable here: {}", std::strerror(err));
    return;
  }
  f.magic = *static_cast<volatile std::uint32_t*>(p);
  pci_device_unmap_range(d, p, 4096 < d->regions[0].size ? 4096 : d->regions[0].size);
}

}  // namespace

bool is_candidate(PciId id, const PcieOptions& options) {
  for (std::uint16_t v : kCandidateVendors)
    if (id.vendor == v) return true;
  return std::find(options.extra_ids.begin(), options.extra_ids.end(), id) != options.extra_ids.end();
}

PciId sysfs_id(const std::string& root, const std::string& address) {
  auto read_hex = [&](const char* name) -> std::uint16_t {
    std::ifstream in(device_dir(root, address) + "/" + name);
    std::string s;
    in >> s;
    try {
      return static_cast<std::uint16_t>(std::stoul(s, nullptr, 16));
    } catch (...) {
      return 0;
    }
  };
  return {read_hex("vendor"), read_hex("device")};
}

Result<std::vector<FunctionInfo>> scan_functions(const PcieOptions& options) {
  PciSystem sys;
  if (sys.error() != 0)
    return Error::make(Errc::TransportError, Touched::Nothing, "libpciaccess cannot start: {}",
                       std::strerror(sys.error()));
  std::vector<FunctionInfo> out;
  pci_id_match any{PCI_MATCH_ANY, PCI_MATCH_ANY, PCI_MATCH_ANY, PCI_MATCH_ANY, 0, 0, 0};
  pci_device_iterator* it = pci_id_match_iterator_create(&any);
  while (pci_device* d = pci_device_next(it)) {
    FunctionInfo f;
    f.address = address_of(*d);
    f.id = {d->vendor_id, d->device_id};
    f.subsystem = {d->subvendor_id, d->subdevice_id};
    f.class_code = d->device_class;
    f.revision = d->revision;
    if (const char* name = pci_device_get_vendor_name(d)) f.vendor_name = name;
    f.driver = bound_driver(options.sysfs_root, f.address);
    f.iommu_group = iommu_group(options.sysfs_root, f.address);
    f.candidate = is_candidate(f.id, options);
    const ConfigReader read = [d](std::uint16_t off, unsigned width) -> std::uint32_t {
      std::uint32_t v = 0xffffffffu;
      int err = 0;
      if (width == 1) {
        std::uint8_t b = 0;
        err = pci_device_cfg_read_u8(d, &b, off);
        v = b;
      } else if (width == 2) {
        std::uint16_t w = 0;
        err = pci_device_cfg_read_u16(d, &w, off);
        v = w;
      } else {
        err = pci_device_cfg_read_u32(d, &v, off);
      }
      return err == 0 ? v : 0xffffffffu;
    };
    // Without root, sysfs gives only the first 64 bytes: the capability list is out of reach.
    std::uint32_t probe = 0;
    if (pci_device_cfg_read_u32(d, &probe, 0x40) != 0) {
      f.link_note = "configuration space beyond 64 bytes needs root";
    } else {
      f.link = read_link(read);
      if (!f.link) f.link_note = "no PCI Express link (conventional PCI or integrated endpoint)";
    }
    if (f.candidate) {
      if (pci_device_probe(d) == 0)
        probe_magic(d, f);
      else
        f.magic_note = "libpciaccess cannot probe its BARs";
    }
    out.push_back(std::move(f));
  }
  pci_iterator_destroy(it);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

Result<std::string> existing_function(std::string_view text, const std::string& root) {
  auto address = normalize_address(text);
  if (!address) return address;
  if (device_exists(root, *address)) return address;
  auto seen = scan_functions(PcieOptions{});
  return no_card(*address, seen ? *seen : std::vector<FunctionInfo>{});
}

}  // namespace detail

bool FunctionInfo::answers_softgpu() const { return magic && *magic == SGPU_REGS__ID_MAGIC__VALUE_reset; }

Result<std::vector<FunctionInfo>> list_functions(const PcieOptions& options) { return detail::scan_functions(options); }

Result<std::string> normalize_address(std::string_view text) {
  static const std::regex kAddress("^(?:([0-9a-fA-F]{1,4}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\\.([0-7])$");
  std::cmatch m;
  const std::string s(text);
  if (!std::regex_match(s.c_str(), m, kAddress))
    return Error::invalid("'{}' is not a PCI address (expected domain:bus:device.function, e.g. 0000:01:00.0)", text);
  const unsigned domain = m[1].matched ? static_cast<unsigned>(std::stoul(m[1].str(), nullptr, 16)) : 0;
  const auto bus = static_cast<unsigned>(std::stoul(m[2].str(), nullptr, 16));
  const auto dev = static_cast<unsigned>(std::stoul(m[3].str(), nullptr, 16));
  const auto fn = static_cast<unsigned>(std::stoul(m[4].str(), nullptr, 16));
  if (dev > 0x1f) return Error::invalid("'{}': device number {:#x} is above 0x1f", text, dev);
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, fn);
}

Result<PciId> parse_pci_id(std::string_view text) {
  static const std::regex kId("^([0-9a-fA-F]{1,4}):([0-9a-fA-F]{1,4})$");
  std::cmatch m;
  const std::string s(text);
  if (!std::regex_match(s.c_str(), m, kId))
    return Error::invalid("'{}' is not a PCI ID (expected vendor:device in hex, e.g. 10ee:7024)", text);
  return PciId{static_cast<std::uint16_t>(std::stoul(m[1].str(), nullptr, 16)),
               static_cast<std::uint16_t>(std::stoul(m[2].str(), nullptr, 16))};
}

}  // namespace sgpu::pcie
