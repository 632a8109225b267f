// The platform's interconnect: an address-decoding router. Initiators bind to `in` (any
// number), targets to `out` in the order of map(); a transaction goes to the target whose
// window holds it, with the address made relative to the window (DMI regions and
// invalidations are translated both ways). An address in no window, or a transaction that
// crosses a window's end, answers TLM_ADDRESS_ERROR_RESPONSE (a decode error).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

namespace sgpu::systemc {

class Router final : public sc_core::sc_module {
 public:
  tlm_utils::multi_passthrough_target_socket<Router> in;
  tlm_utils::multi_passthrough_initiator_socket<Router> out;

  explicit Router(const sc_core::sc_module_name& name);

  /// Adds the window [base, base + size) for the next target bound to `out`.
  void map(std::string name, std::uint64_t base, std::uint64_t size);

  struct Window {
    std::string name;
    std::uint64_t base;
    std::uint64_t size;
  };
  const std::vector<Window>& windows() const { return windows_; }

 private:
  int decode(std::uint64_t addr, std::uint64_t bytes) const;
  void b_transport(int id, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(int id, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(int id, tlm::tlm_generic_payload& gp);
  void invalidate_direct_mem_ptr(int id, sc_dt::uint64 start, sc_dt::uint64 end);

  std::vector<Window> windows_;
};

}  // namespace sgpu::systemc
