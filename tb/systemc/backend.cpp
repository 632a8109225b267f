#include "systemc/backend.hpp"

#include "systemc/systemc_transport.hpp"

namespace sgpu::systemc {

Status register_backends(TransportRegistry& registry) {
  for (const char* name : {"systemc", "systemc-model"})
    if (registry.contains(name)) return Error::invalid("systemc::register_backends: '{}' is registered already", name);
  PlatformConfig rtl;
  rtl.implementation = PlatformConfig::Implementation::Rtl;
  PlatformConfig model = rtl;
  model.implementation = PlatformConfig::Implementation::Model;
  SGPU_RETURN_IF_ERROR(registry.add("systemc", "TLM-2.0 virtual platform, the Verilated RTL inside the device (SystemC)",
                                    rtl, [](const PlatformConfig& c) {
                                      PlatformConfig fixed = c;
                                      fixed.implementation = PlatformConfig::Implementation::Rtl;
                                      return open_systemc_transport(fixed);
                                    }));
  return registry.add("systemc-model", "TLM-2.0 virtual platform, the reference model inside the device (SystemC)",
                      model, [](const PlatformConfig& c) {
                        PlatformConfig fixed = c;
                        fixed.implementation = PlatformConfig::Implementation::Model;
                        return open_systemc_transport(fixed);
                      });
}

}  // namespace sgpu::systemc
