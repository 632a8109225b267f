#include "transport/pcie/sysfs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>

#include <fmt/format.h>

namespace sgpu::pcie::detail {
namespace {

std::string link_target_name(const std::string& link) {
  char buf[PATH_MAX];
  const ssize_t n = ::readlink(link.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return {};
  const std::string target(buf, static_cast<std::size_t>(n));
  const auto slash = target.rfind('/');
  return slash == std::string::npos ? target : target.substr(slash + 1);
}

}  // namespace

std::string device_dir(const std::string& root, const std::string& address) {
  return root + "/bus/pci/devices/" + address;
}

bool path_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

bool device_exists(const std::string& root, const std::string& address) {
  return path_exists(device_dir(root, address));
}

std::string bound_driver(const std::string& root, const std::string& address) {
  return link_target_name(device_dir(root, address) + "/driver");
}

std::optional<unsigned> iommu_group(const std::string& root, const std::string& address) {
  const std::string name = link_target_name(device_dir(root, address) + "/iommu_group");
  if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  return static_cast<unsigned>(std::stoul(name));
}

std::vector<GroupMember> group_members(const std::string& root, unsigned group) {
  std::vector<GroupMember> out;
  const std::string dir = fmt::format("{}/kernel/iommu_groups/{}/devices", root, group);
  if (DIR* d = ::opendir(dir.c_str())) {
    while (const dirent* e = ::readdir(d)) {
      if (e->d_name[0] == '.') continue;
      out.push_back({e->d_name, bound_driver(root, e->d_name)});
    }
    ::closedir(d);
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.address < b.address; });
  return out;
}

bool vfio_compatible_driver(const std::string& driver) {
  return driver.empty() || driver == "vfio-pci" || driver == "pci-stub";
}

Status write_attribute(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    return Error::make(errno == EACCES || errno == EPERM ? Errc::PermissionDenied : Errc::TransportError,
                       Touched::Nothing, "cannot open {}: {}", path, std::strerror(errno));
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int err = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    return Error::make(Errc::TransportError, Touched::Hardware, "writing '{}' to {} failed: {}", text, path,
                       std::strerror(err));
  return ok_status();
}

}  // namespace sgpu::pcie::detail
