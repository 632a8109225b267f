#include "transport/builtin_backends.hpp"

#include "sgpu/transport/mock.hpp"
#include "sgpu/transport/registry.hpp"

namespace sgpu::detail {

void register_builtin_backends(TransportRegistry& registry) {
  // Registration into a fresh registry with fixed, valid names cannot fail.
  (void)registry.add("mock", "scripted registers, logged accesses (unit tests)",
                     []() -> Result<std::unique_ptr<Transport>> { return std::unique_ptr<Transport>(std::make_unique<MockTransport>()); });
  (void)registry.add("pcie", "a PCIe card through libpciaccess + VFIO; pcie:<domain:bus:dev.fn> picks one",
                     [](std::string_view slot) -> Result<std::unique_ptr<Transport>> {
                       return Error::unsupported("the pcie backend (libpciaccess + VFIO) is not implemented yet{}",
                                                 slot.empty() ? "" : " (asked for slot " + std::string(slot) + ")");
                     });
}

}  // namespace sgpu::detail
