// What sysfs says about a PCI function: which driver has it, its IOMMU group and the group's
// other members. `root` is normally "/sys"; the unit tests give a directory tree of their own.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sgpu/result.hpp"

namespace sgpu::pcie::detail {

struct GroupMember {
  std::string address;
  std::string driver;  ///< empty = none
};

std::string device_dir(const std::string& root, const std::string& address);
bool path_exists(const std::string& path);
bool device_exists(const std::string& root, const std::string& address);
/// The bound driver's name, empty if none.
std::string bound_driver(const std::string& root, const std::string& address);
std::optional<unsigned> iommu_group(const std::string& root, const std::string& address);
/// Every function in the group, sorted by address.
std::vector<GroupMember> group_members(const std::string& root, unsigned group);
/// Drivers that leave a group usable by VFIO (vfio-pci itself, pci-stub, or none).
bool vfio_compatible_driver(const std::string& driver);
/// Writes `text` to a sysfs attribute; the error names the file and the errno text.
Status write_attribute(const std::string& path, const std::string& text);

}  // namespace sgpu::pcie::detail
