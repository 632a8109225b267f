#include "systemc/backend.hpp"

#include "systemc/systemc_transport.hpp"

namespace sgpu::systemc {
namespace {

constexpr std::string_view kBackends[] = {"systemc", "systemc-model"};

PlatformConfig* platform_options(TransportRegistry& registry, std::string_view name) {
  return builds_platform(name) ? registry.options<PlatformConfig>(name) : nullptr;
}

}  // namespace

Status register_backends(TransportRegistry& registry) {
  for (std::string_view name : kBackends)
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

void set_board(TransportRegistry& registry, const sim::SimConfig& board) {
  for (std::string_view name : kBackends) {
    PlatformConfig* p = platform_options(registry, name);
    if (!p) continue;
    p->device.clock_hz = board.clock_hz;
    p->device.seed = board.seed;
    p->device.fst_path = board.fst_path;
    p->device.check_axi = board.check_axi;
    p->read_latency = board.read_latency;
    p->write_latency = board.write_latency;
  }
}

bool interrupt_is_level(TransportRegistry& registry, std::string_view name) {
  const PlatformConfig* p = platform_options(registry, name);
  return !p || !p->msi;
}

bool builds_platform(std::string_view name) {
  for (std::string_view b : kBackends)
    if (name == b) return true;
  return false;
}

bool preempts_inside_entries(TransportRegistry& registry, std::string_view name) {
  const PlatformConfig* p = platform_options(registry, name);
  return !p || p->implementation == PlatformConfig::Implementation::Rtl;
}

}  // namespace sgpu::systemc
