#include "transport/pcie/config_space.hpp"

#include <fmt/format.h>

namespace sgpu::pcie::detail {

std::optional<std::uint16_t> find_capability(const ConfigReader& read, std::uint8_t id) {
  if ((read(cfg::kStatus, 2) & cfg::kStatusCapabilities) == 0) return std::nullopt;
  std::uint16_t at = static_cast<std::uint16_t>(read(cfg::kCapabilityPointer, 1) & 0xfc);
  for (int hops = 0; hops < 48 && at >= 0x40; ++hops) {
    const std::uint32_t head = read(at, 2);
    if ((head & 0xff) == id) return at;
    at = static_cast<std::uint16_t>((head >> 8) & 0xfc);
  }
  return std::nullopt;
}

std::optional<LinkState> read_link(const ConfigReader& read) {
  const auto exp = find_capability(read, cfg::kCapExpress);
  if (!exp) return std::nullopt;
  const std::uint32_t cap = read(static_cast<std::uint16_t>(*exp + cfg::kExpLinkCapabilities), 4);
  const std::uint32_t sta = read(static_cast<std::uint16_t>(*exp + cfg::kExpLinkStatus), 2);
  LinkState l;
  l.max_speed_gen = cap & 0xf;
  l.max_width = (cap >> 4) & 0x3f;
  l.speed_gen = sta & 0xf;
  l.width = (sta >> 4) & 0x3f;
  // Root-complex integrated endpoints (and QEMU's) report no link at all.
  if (l.max_width == 0 && l.width == 0) return std::nullopt;
  return l;
}

std::string speed_name(unsigned gen) {
  switch (gen) {
    case 1:
      return "2.5 GT/s";
    case 2:
      return "5.0 GT/s";
    case 3:
      return "8.0 GT/s";
    case 4:
      return "16.0 GT/s";
    case 5:
      return "32.0 GT/s";
    case 6:
      return "64.0 GT/s";
    default:
      return fmt::format("gen {}", gen);
  }
}

}  // namespace sgpu::pcie::detail

namespace sgpu::pcie {

std::string to_string(const LinkState& l) {
  std::string s = fmt::format("{} x{}", detail::speed_name(l.speed_gen), l.width);
  if (l.degraded()) s += fmt::format(" (capable of {} x{})", detail::speed_name(l.max_speed_gen), l.max_width);
  return s;
}

std::string_view to_string(InterruptDelivery d) {
  switch (d) {
    case InterruptDelivery::Msi:
      return "MSI";
    case InterruptDelivery::Msix:
      return "MSI-X";
    case InterruptDelivery::Polling:
      return "fence polling";
  }
  return "?";
}

}  // namespace sgpu::pcie
