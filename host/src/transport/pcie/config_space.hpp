// Reading the standard parts of a configuration space: the capability list and the PCI Express
// link. Pure functions over a reader, so `sgpu list` (libpciaccess), the transport (any
// PciFunction) and the unit tests (a byte array) share them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "sgpu/transport/pcie.hpp"

namespace sgpu::pcie::detail {

/// Reads `width` (1, 2, 4) bytes at `offset`.
using ConfigReader = std::function<std::uint32_t(std::uint16_t offset, unsigned width)>;

/// Offset of the first capability with this ID in the conventional list, or nullopt. Survives a
/// corrupt list (loops, pointers into the header): at most 48 entries are followed.
std::optional<std::uint16_t> find_capability(const ConfigReader& read, std::uint8_t id);

/// Link capability and status from the PCI Express capability; nullopt for conventional PCI.
std::optional<LinkState> read_link(const ConfigReader& read);

/// "2.5 GT/s", "8.0 GT/s"; "gen N" for codes the spec does not define.
std::string speed_name(unsigned gen);

/// An all-ones vendor ID: nothing answers at this address (removed, or the link is down).
inline bool absent(std::uint32_t vendor_id) { return (vendor_id & 0xffff) == 0xffff; }

}  // namespace sgpu::pcie::detail
