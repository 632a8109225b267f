// `sgpu bind-vfio` / `unbind-vfio`: hand a function to vfio-pci and back, the way the kernel
// documents it (driver_override, unbind, drivers_probe), then check what happened.
#include <fmt/format.h>

#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/discovery.hpp"
#include "transport/pcie/messages.hpp"
#include "transport/pcie/sysfs.hpp"

namespace sgpu::pcie {

Result<std::vector<std::string>> bind_vfio(std::string_view text, const std::string& root) {
  SGPU_ASSIGN_OR_RETURN(const std::string address, detail::existing_function(text, root));
  std::vector<std::string> done;
  const std::string dir = detail::device_dir(root, address);
  const std::string before = detail::bound_driver(root, address);
  if (before == "vfio-pci") {
    done.push_back(fmt::format("{} is already bound to vfio-pci", address));
  } else {
    if (!detail::path_exists(root + "/bus/pci/drivers/vfio-pci"))
      return Error::unsupported("vfio-pci is not loaded: run `modprobe vfio-pci` first (as root)");
    SGPU_RETURN_IF_ERROR(detail::write_attribute(dir + "/driver_override", "vfio-pci"));
    done.push_back(fmt::format("driver_override of {} set to vfio-pci", address));
    if (!before.empty()) {
      SGPU_RETURN_IF_ERROR(detail::write_attribute(dir + "/driver/unbind", address));
      done.push_back(fmt::format("unbound from {}", before));
    }
    SGPU_RETURN_IF_ERROR(detail::write_attribute(root + "/bus/pci/drivers_probe", address));
    const std::string after = detail::bound_driver(root, address);
    if (after != "vfio-pci")
      return Error::make(Errc::TransportError, Touched::Hardware,
                         "{} is {} after drivers_probe, not vfio-pci: no IOMMU (vfio-pci refuses devices "
                         "without an IOMMU group)? See `dmesg | tail`",
                         address, after.empty() ? "unbound" : "bound to " + after);
    done.push_back(fmt::format("{} is bound to vfio-pci", address));
  }
  if (const auto group = detail::iommu_group(root, address)) {
    done.push_back(
        fmt::format("IOMMU group {}: /dev/vfio/{} (to run sgpu without root: chown <user> /dev/vfio/{}, "
                    "and raise its RLIMIT_MEMLOCK)",
                    *group, *group, *group));
    for (const auto& m : detail::group_members(root, *group))
      if (m.address != address)
        done.push_back(
            fmt::format("  also in the group: {} ({}){}", m.address, m.driver.empty() ? "no driver" : m.driver,
                        detail::vfio_compatible_driver(m.driver) ? "" : " - unbind it, or the group is not viable"));
  }
  return done;
}

Result<std::vector<std::string>> unbind_vfio(std::string_view text, const std::string& root) {
  SGPU_ASSIGN_OR_RETURN(const std::string address, detail::existing_function(text, root));
  std::vector<std::string> done;
  const std::string dir = detail::device_dir(root, address);
  // An empty driver_override ("\n") lets the kernel's own driver match again.
  SGPU_RETURN_IF_ERROR(detail::write_attribute(dir + "/driver_override", "\n"));
  const std::string before = detail::bound_driver(root, address);
  if (before == "vfio-pci") {
    SGPU_RETURN_IF_ERROR(detail::write_attribute(dir + "/driver/unbind", address));
    done.push_back(fmt::format("{} unbound from vfio-pci", address));
  } else {
    done.push_back(fmt::format("{} was not bound to vfio-pci ({})", address, before.empty() ? "no driver" : before));
  }
  (void)detail::write_attribute(root + "/bus/pci/drivers_probe", address);
  const std::string after = detail::bound_driver(root, address);
  done.push_back(after.empty() ? fmt::format("{} has no driver now (none claims it)", address)
                               : fmt::format("{} is bound to {}", address, after));
  return done;
}

}  // namespace sgpu::pcie
