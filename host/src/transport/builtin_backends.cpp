#include "transport/builtin_backends.hpp"

#include "sgpu/transport/mock.hpp"
#include "sgpu/transport/pcie.hpp"
#include "sgpu/transport/registry.hpp"

namespace sgpu::detail {

void register_builtin_backends(TransportRegistry& registry) {
  // Registration into a fresh registry with fixed, valid names cannot fail.
  (void)registry.add("mock", "scripted registers, logged accesses (unit tests)",
                     []() -> Result<std::unique_ptr<Transport>> {
                       return std::unique_ptr<Transport>(std::make_unique<MockTransport>());
                     });
  (void)registry.add("pcie",
                     "a PCIe card through libpciaccess + VFIO; pcie:<domain:bus:dev.fn> picks one (docs/pcie.md)",
                     pcie::PcieOptions{}, &pcie::open_pcie);
}

}  // namespace sgpu::detail
