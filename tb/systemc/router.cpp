#include "systemc/router.hpp"

#include <stdexcept>

namespace sgpu::systemc {

Router::Router(const sc_core::sc_module_name& name) : sc_core::sc_module(name), in("in"), out("out") {
  in.register_b_transport(this, &Router::b_transport);
  in.register_get_direct_mem_ptr(this, &Router::get_direct_mem_ptr);
  in.register_transport_dbg(this, &Router::transport_dbg);
  out.register_invalidate_direct_mem_ptr(this, &Router::invalidate_direct_mem_ptr);
}

void Router::map(std::string name, std::uint64_t base, std::uint64_t size) {
  if (size == 0 || base + (size - 1) < base) throw std::invalid_argument("Router::map: empty or wrapping window " + name);
  for (const auto& w : windows_) {
    if (base <= w.base + (w.size - 1) && w.base <= base + (size - 1))
      throw std::invalid_argument("Router::map: window " + name + " overlaps " + w.name);
  }
  windows_.push_back({std::move(name), base, size});
}

int Router::decode(std::uint64_t addr, std::uint64_t bytes) const {
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    const Window& w = windows_[i];
    if (addr >= w.base && addr - w.base < w.size && bytes <= w.size - (addr - w.base)) return static_cast<int>(i);
  }
  return -1;
}

void Router::b_transport(int /*id*/, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const std::uint64_t addr = gp.get_address();
  const int t = decode(addr, gp.get_streaming_width() ? gp.get_streaming_width() : gp.get_data_length());
  if (t < 0) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  gp.set_address(addr - windows_[t].base);
  out[t]->b_transport(gp, delay);
  gp.set_address(addr);
}

bool Router::get_direct_mem_ptr(int /*id*/, tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  const std::uint64_t addr = gp.get_address();
  const int t = decode(addr, 1);
  if (t < 0) return false;
  const Window& w = windows_[t];
  gp.set_address(addr - w.base);
  const bool ok = out[t]->get_direct_mem_ptr(gp, dmi);
  gp.set_address(addr);
  // Back to the initiator's addresses, clipped to the window.
  const std::uint64_t start = dmi.get_start_address(), end = dmi.get_end_address();
  dmi.set_start_address(w.base + start);
  dmi.set_end_address(end >= w.size - 1 ? w.base + (w.size - 1) : w.base + end);
  return ok;
}

unsigned int Router::transport_dbg(int /*id*/, tlm::tlm_generic_payload& gp) {
  const std::uint64_t addr = gp.get_address();
  const int t = decode(addr, gp.get_data_length());
  if (t < 0) return 0;
  gp.set_address(addr - windows_[t].base);
  const unsigned int n = out[t]->transport_dbg(gp);
  gp.set_address(addr);
  return n;
}

void Router::invalidate_direct_mem_ptr(int id, sc_dt::uint64 start, sc_dt::uint64 end) {
  const Window& w = windows_.at(static_cast<std::size_t>(id));
  const std::uint64_t hi = end >= w.size - 1 ? w.base + (w.size - 1) : w.base + end;
  for (unsigned i = 0; i < in.size(); ++i) in[i]->invalidate_direct_mem_ptr(w.base + start, hi);
}

}  // namespace sgpu::systemc
