// Discovery through libpciaccess: every function, its IDs and configuration space, plus what sysfs
// says (driver, IOMMU group). BAR0 of a candidate is read (ID_MAGIC only) through libpciaccess's
// sysfs mapping.
#pragma once

#include <string>
#include <vector>

#include "sgpu/transport/pcie.hpp"

namespace sgpu::pcie::detail {

Result<std::vector<FunctionInfo>> scan_functions(const PcieOptions& options);
/// Vendor and device ID from sysfs (0:0 if unreadable).
PciId sysfs_id(const std::string& root, const std::string& address);
bool is_candidate(PciId id, const PcieOptions& options);
/// `text` normalised, if sysfs has that function; else the no-card error listing what is seen.
Result<std::string> existing_function(std::string_view text, const std::string& root);

}  // namespace sgpu::pcie::detail
