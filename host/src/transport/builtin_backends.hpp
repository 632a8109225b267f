// The backends libsgpu carries itself, which every TransportRegistry starts with.
#pragma once

namespace sgpu {
class TransportRegistry;
}

namespace sgpu::detail {

/// Adds "mock" and "pcie" to `registry`.
void register_builtin_backends(TransportRegistry& registry);

}  // namespace sgpu::detail
