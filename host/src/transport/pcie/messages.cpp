#include "transport/pcie/messages.hpp"

#include <fmt/format.h>

#include "transport/pcie/config_space.hpp"

namespace sgpu::pcie::detail {

std::string id_string(PciId id) { return fmt::format("{:04x}:{:04x}", id.vendor, id.device); }

std::string describe(const FunctionInfo& f) {
  std::string s = fmt::format("{} {} class {:06x}", f.address, id_string(f.id), f.class_code);
  if (!f.vendor_name.empty()) s += fmt::format(" ({})", f.vendor_name);
  s += f.driver.empty() ? ", no driver" : fmt::format(", driver {}", f.driver);
  return s;
}

Error no_card(std::string_view wanted, const std::vector<FunctionInfo>& seen) {
  std::string s = wanted.empty() ? std::string("no softgpu card found") : fmt::format("no PCI function at {}", wanted);
  if (seen.empty()) {
    s += "; libpciaccess sees no PCI functions at all (is /sys/bus/pci mounted? inside a container?)";
  } else {
    s += fmt::format("; libpciaccess sees {} function{}:", seen.size(), seen.size() == 1 ? "" : "s");
    for (const FunctionInfo& f : seen) s += "\n  " + describe(f);
    s += "\nA softgpu card is a function with vendor ";
    for (std::size_t i = 0; i < std::size(kCandidateVendors); ++i)
      s += fmt::format("{}{:04x}", i ? "/" : "", kCandidateVendors[i]);
    s += " (or an ID given with --pci-id) whose BAR0 answers ID_MAGIC. Check `lspci -nn`, that the bitstream "
         "is loaded and the card was rescanned (docs/pcie.md, \"no softgpu card found\").";
  }
  return Error(Errc::TransportError, std::move(s), Touched::Nothing);
}

Error several_cards(const std::vector<FunctionInfo>& softgpus) {
  std::string s = fmt::format("{} softgpu cards answer; choose one with --backend pcie:<address>:", softgpus.size());
  for (const FunctionInfo& f : softgpus) s += "\n  " + describe(f);
  return Error(Errc::InvalidArgument, std::move(s), Touched::Nothing);
}

std::string bind_commands(std::string_view address, std::string_view driver) {
  std::string s = fmt::format("  sgpu bind-vfio {}\nor by hand, as root:\n  modprobe vfio-pci\n", address);
  s += fmt::format("  echo vfio-pci > /sys/bus/pci/devices/{}/driver_override\n", address);
  if (!driver.empty()) s += fmt::format("  echo {0} > /sys/bus/pci/devices/{0}/driver/unbind\n", address);
  s += fmt::format("  echo {} > /sys/bus/pci/drivers_probe", address);
  return s;
}

Error wrong_driver(std::string_view address, PciId id, std::string_view driver) {
  const std::string now = driver.empty() ? std::string("no driver is bound to it")
                                         : fmt::format("it is bound to the kernel driver '{}'", driver);
  return Error::make(Errc::TransportError, Touched::Nothing,
                     "{} ({}) is not bound to vfio-pci: {}. Hand it to vfio-pci:\n{}", address, id_string(id), now,
                     bind_commands(address, driver));
}

Error no_iommu_group(std::string_view address) {
  return Error::unsupported(
      "{} has no IOMMU group: the kernel runs without an IOMMU. Enable VT-d/AMD-Vi in the "
      "firmware and boot with intel_iommu=on (Intel) or amd_iommu=on (AMD); check with "
      "`ls /sys/kernel/iommu_groups`. Without an IOMMU only the unsafe path is left "
      "(--unsafe-no-iommu, docs/pcie.md \"no IOMMU group\")",
      address);
}

Error group_not_viable(std::string_view address, unsigned group, const std::vector<GroupMember>& members) {
  std::string s =
      fmt::format("IOMMU group {} of {} is not viable: VFIO can only take the whole group, and ", group, address);
  std::vector<const GroupMember*> blocking;
  for (const GroupMember& m : members)
    if (m.address != address && !vfio_compatible_driver(m.driver)) blocking.push_back(&m);
  if (blocking.empty()) {
    s += "a device in it is bound to a driver VFIO does not accept. Its members:";
    for (const GroupMember& m : members)
      s += fmt::format("\n  {} ({})", m.address, m.driver.empty() ? "no driver" : m.driver);
  } else {
    s += fmt::format("{} other device{} in it {} bound to a kernel driver:", blocking.size(),
                     blocking.size() == 1 ? "" : "s", blocking.size() == 1 ? "is" : "are");
    for (const GroupMember* m : blocking) s += fmt::format("\n  {} (driver {})", m->address, m->driver);
    s += "\nUnbind each (or hand it to vfio-pci too), e.g.:";
    for (const GroupMember* m : blocking)
      s += fmt::format("\n  echo {0} > /sys/bus/pci/devices/{0}/driver/unbind", m->address);
    s += "\nor move the card to a slot with its own group (docs/pcie.md \"IOMMU group not viable\")";
  }
  return Error(Errc::TransportError, std::move(s), Touched::Nothing);
}

Error memlock_too_low(std::uint64_t needed_total, std::uint64_t limit) {
  const std::uint64_t kib = (needed_total + 1023) / 1024;
  return Error::make(Errc::PermissionDenied, Touched::Nothing,
                     "RLIMIT_MEMLOCK is too low: DMA memory is pinned, this needs {} KiB locked in total but "
                     "the limit is {} KiB. Raise it (`ulimit -l {}` in the shell that runs sgpu, or "
                     "'<user> - memlock {}' in /etc/security/limits.conf, or LimitMEMLOCK= for a service), "
                     "or run with CAP_IPC_LOCK",
                     kib, limit / 1024, kib, kib);
}

Error bus_master_off(std::string_view address, std::uint16_t command) {
  return Error::make(Errc::TransportError, Touched::Hardware,
                     "Bus Master is off on {} after enabling it (COMMAND reads {:#06x}): the card cannot "
                     "read the ring or write fences, and MSIs are not sent. Something resets it (a "
                     "bitstream reload without a rescan, a hot reset) — rescan the card "
                     "(docs/pcie.md \"Bus Master is off\")",
                     address, command);
}

std::string link_degraded(std::string_view address, const LinkState& link) {
  return fmt::format(
      "the PCIe link of {} trained at {} x{} although the card can do {} x{}: bandwidth is lower than "
      "it should be. Reseat the card, try another slot (a x16 slot may be wired x4), check the "
      "slot's speed setting in the firmware (docs/pcie.md \"link trained below its capability\")",
      address, speed_name(link.speed_gen), link.width, speed_name(link.max_speed_gen), link.max_width);
}

Error id_mismatch(std::string_view address, std::uint32_t magic, std::uint32_t expected) {
  return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                     "{} is not a softgpu: ID_MAGIC (BAR0 + 0x0) reads {:#010x}, expected {:#010x}. Wrong "
                     "bitstream, a different card at this address, or BAR0 is not the register window "
                     "(docs/pcie.md \"ID_MAGIC\")",
                     address, magic, expected);
}

Error version_mismatch(std::string_view address, std::uint32_t version, std::uint32_t major, std::uint32_t expected) {
  return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                     "the softgpu at {} speaks interface version {} (ID_VERSION {:#010x}) but this library "
                     "speaks {}: load a bitstream built from the same tree as this sgpu",
                     address, major, version, expected);
}

std::string device_lost(std::string_view address, std::string_view during) {
  return fmt::format(
      "the device at {} is gone ({}): its configuration space reads all-ones. It was removed, its "
      "link went down, or the FPGA was reloaded; rescan the bus (docs/pcie.md \"device is gone\")",
      address, during);
}

std::string unsafe_no_iommu_warning(std::string_view address) {
  return fmt::format(
      "UNSAFE: driving {} without an IOMMU. The card reaches host memory by physical address with "
      "nothing to stop it: a wrong address in a ring entry, page table or copy reads or overwrites "
      "any memory of this machine, the kernel's included. DMA memory comes from locked hugepages; "
      "fences are polled in host memory (no MSI). Use a dedicated test machine",
      address);
}

Error no_hugepages(std::size_t bytes, std::string_view why) {
  return Error::make(Errc::OutOfMemory, Touched::Nothing,
                     "cannot get {} KiB of hugepage memory for DMA without an IOMMU ({}). Reserve 2 MiB "
                     "hugepages first: `echo 64 > /proc/sys/vm/nr_hugepages` (docs/pcie.md \"hugepages\")",
                     bytes / 1024, why);
}

Error beyond_reach(std::uint64_t bus_addr, std::size_t bytes, unsigned address_bits) {
  return Error::make(Errc::OutOfMemory, Touched::Nothing,
                     "DMA memory at bus address {:#x} (+{:#x}) is beyond the device's {}-bit reach", bus_addr, bytes,
                     address_bits);
}

}  // namespace sgpu::pcie::detail
