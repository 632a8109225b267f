// The pcie transport's errors, written for the person at the machine: what was seen, why it
// stops, and the command that fixes it. docs/pcie.md's troubleshooting section is keyed by the
// first words of each. Kept apart so each message has a unit test.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/sysfs.hpp"

namespace sgpu::pcie::detail {

/// "10ee:7024".
std::string id_string(PciId id);
/// One line per function: address, IDs, driver, what it is.
std::string describe(const FunctionInfo& f);

Error no_card(std::string_view wanted, const std::vector<FunctionInfo>& seen);
Error several_cards(const std::vector<FunctionInfo>& softgpus);
/// The exact commands that hand `address` to vfio-pci (`driver` is the current one, may be empty).
std::string bind_commands(std::string_view address, std::string_view driver);
Error wrong_driver(std::string_view address, PciId id, std::string_view driver);
Error no_iommu_group(std::string_view address);
Error group_not_viable(std::string_view address, unsigned group, const std::vector<GroupMember>& members);
Error memlock_too_low(std::uint64_t needed_total, std::uint64_t limit);
Error bus_master_off(std::string_view address, std::uint16_t command);
std::string link_degraded(std::string_view address, const LinkState& link);
Error id_mismatch(std::string_view address, std::uint32_t magic, std::uint32_t expected);
Error version_mismatch(std::string_view address, std::uint32_t version, std::uint32_t major, std::uint32_t expected);
/// The text of the TransportFailure thrown when the function stops answering.
std::string device_lost(std::string_view address, std::string_view during);
/// Printed whenever the no-IOMMU path is used.
std::string unsafe_no_iommu_warning(std::string_view address);
Error no_hugepages(std::size_t bytes, std::string_view why);
Error beyond_reach(std::uint64_t bus_addr, std::size_t bytes, unsigned address_bits);

}  // namespace sgpu::pcie::detail
