#include "systemc/memory.hpp"

#include <algorithm>
#include <cstring>

namespace sgpu::systemc {

HostMemoryTarget::HostMemoryTarget(const sc_core::sc_module_name& name, const Config& config)
    : sc_core::sc_module(name), socket("socket"), config_(config) {
  socket.register_b_transport(this, &HostMemoryTarget::b_transport);
  socket.register_get_direct_mem_ptr(this, &HostMemoryTarget::get_direct_mem_ptr);
  socket.register_transport_dbg(this, &HostMemoryTarget::transport_dbg);
}

void HostMemoryTarget::attach(std::uint64_t bus, void* cpu, std::size_t bytes) {
  socket->invalidate_direct_mem_ptr(bus, bus + bytes - 1);  // pages that existed before move
  memory_.attach(bus, cpu, bytes);
}

void HostMemoryTarget::detach(std::uint64_t bus, std::size_t bytes) {
  socket->invalidate_direct_mem_ptr(bus, bus + bytes - 1);
  memory_.detach(bus, bytes);
}

void HostMemoryTarget::inject_error(std::uint64_t lo, std::uint64_t hi, tlm::tlm_response_status status) {
  socket->invalidate_direct_mem_ptr(lo, hi - 1);
  errors_.push_back({lo, hi, status});
}

tlm::tlm_response_status HostMemoryTarget::error_for(std::uint64_t lo, std::uint64_t hi) const {
  if (hi > config_.size || lo >= hi) return tlm::TLM_ADDRESS_ERROR_RESPONSE;
  for (const auto& e : errors_)
    if (lo < e.hi && e.lo < hi) return e.status;
  return tlm::TLM_OK_RESPONSE;
}

void HostMemoryTarget::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  ++transactions_;
  const std::uint64_t addr = gp.get_address();
  const unsigned len = gp.get_data_length();
  const unsigned width = gp.get_streaming_width();
  if (width == 0 || width > len || len % width != 0) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (const auto s = error_for(addr, addr + width); s != tlm::TLM_OK_RESPONSE) {
    gp.set_response_status(s);
    return;
  }
  unsigned char* data = gp.get_data_ptr();
  const unsigned char* be = gp.get_byte_enable_ptr();
  const unsigned be_len = gp.get_byte_enable_length();
  if (gp.is_read()) {
    for (unsigned at = 0; at < len; at += width) memory_.read(addr, data + at, width);
    if (be) {  // disabled bytes are left as the initiator had them... we have no old value: zero
      for (unsigned i = 0; i < len; ++i)
        if (be[i % be_len] != TLM_BYTE_ENABLED) data[i] = 0;
    }
    delay += config_.read_latency;
  } else if (gp.is_write()) {
    for (unsigned at = 0; at < len; at += width) {
      if (!be) {
        memory_.write(addr, data + at, width);
        continue;
      }
      for (unsigned i = 0; i < width; ++i) {
        if (be[(at + i) % be_len] == TLM_BYTE_ENABLED) memory_.write8(addr + i, data[at + i]);
      }
    }
    delay += config_.write_latency;
  } else {
    gp.set_response_status(tlm::TLM_OK_RESPONSE);  // IGNORE command
    return;
  }
  // DMI: page by page, for pages without error ranges.
  gp.set_dmi_allowed(config_.dmi && error_for(addr & ~tb::HostMemory::kPageMask,
                                               (addr | tb::HostMemory::kPageMask) + 1) == tlm::TLM_OK_RESPONSE);
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool HostMemoryTarget::get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi) {
  const std::uint64_t page = gp.get_address() & ~tb::HostMemory::kPageMask;
  dmi.set_start_address(page);
  dmi.set_end_address(page + tb::HostMemory::kPageMask);
  if (!config_.dmi || error_for(page, page + tb::HostMemory::kPageBytes) != tlm::TLM_OK_RESPONSE) {
    dmi.allow_none();
    return false;
  }
  dmi.set_dmi_ptr(memory_.page_ptr(page));  // stable until the page is detached (revoked then)
  dmi.allow_read_write();
  dmi.set_read_latency(config_.read_latency);
  dmi.set_write_latency(config_.write_latency);
  return true;
}

unsigned int HostMemoryTarget::transport_dbg(tlm::tlm_generic_payload& gp) {
  const unsigned len = gp.get_data_length();
  if (gp.is_read()) memory_.read(gp.get_address(), gp.get_data_ptr(), len);
  if (gp.is_write()) memory_.write(gp.get_address(), gp.get_data_ptr(), len);
  return len;
}

}  // namespace sgpu::systemc
