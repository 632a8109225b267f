#include "systemc/host_cpu.hpp"

#include <cstring>

namespace sgpu::systemc {

HostCpu::HostCpu(const sc_core::sc_module_name& name, InterruptSource& interrupts)
    : sc_core::sc_module(name), socket("socket"), interrupts_(interrupts) {
  sc_core::sc_spawn_options o;
  o.set_stack_size(1 << 20);
  sc_core::sc_spawn([this] { proxy_thread(); }, "proxy", &o);
}

bool HostCpu::in_thread() {
  if (sc_core::sc_get_status() != sc_core::SC_RUNNING) return false;
  const sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
  return h.valid() && h.proc_kind() == sc_core::SC_THREAD_PROC_;
}

// Runs each handed-over operation, then pauses the kernel so that sc_start() returns to the
// caller. The caller's code between operations takes no simulated time.
void HostCpu::proxy_thread() {
  qk_.reset();
  for (;;) {
    while (!pending_) sc_core::wait(request_);
    std::function<void()> op = std::move(pending_);
    pending_ = nullptr;
    op();
    done_ = true;
    sc_core::sc_pause();
  }
}

void HostCpu::step_until_done() {
  done_ = false;
  // Before the first sc_start() the proxy finds the operation when it starts; afterwards the
  // kernel is paused and the request is an event of the next delta cycle.
  if (sc_core::sc_get_status() == sc_core::SC_PAUSED) request_.notify(sc_core::SC_ZERO_TIME);
  while (!done_) {
    const sc_core::sc_status s = sc_core::sc_get_status();
    if (s != sc_core::SC_ELABORATION && s != sc_core::SC_PAUSED)
      throw HostAccessError("the SystemC simulation is not paused (stopped or running elsewhere)");
    sc_core::sc_start();
    if (!done_ && !sc_core::sc_pending_activity() && sc_core::sc_get_status() != sc_core::SC_PAUSED)
      throw HostAccessError("the SystemC simulation ran out of activity before the host access finished");
  }
}

tlm::tlm_response_status HostCpu::transact32(tlm::tlm_command cmd, std::uint64_t addr, std::uint32_t& data) {
  gp_.set_command(cmd);
  gp_.set_address(addr);
  gp_.set_data_ptr(reinterpret_cast<unsigned char*>(&data));
  gp_.set_data_length(4);
  gp_.set_streaming_width(4);
  gp_.set_byte_enable_ptr(nullptr);
  gp_.set_dmi_allowed(false);
  gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  sc_core::sc_time delay = qk_.get_local_time();
  socket->b_transport(gp_, delay);
  qk_.set(delay);
  if (qk_.need_sync()) qk_.sync();
  return gp_.get_response_status();
}

std::string response_string(tlm::tlm_response_status status) {
  tlm::tlm_generic_payload gp;
  gp.set_response_status(status);
  return gp.get_response_string();
}

std::uint32_t HostCpu::read32(std::uint64_t addr) {
  std::uint32_t v = 0;
  const tlm::tlm_response_status s = transact32(tlm::TLM_READ_COMMAND, addr, v);
  if (s != tlm::TLM_OK_RESPONSE) throw HostAccessError(response_string(s));
  return v;
}

void HostCpu::write32(std::uint64_t addr, std::uint32_t value) {
  const tlm::tlm_response_status s = transact32(tlm::TLM_WRITE_COMMAND, addr, value);
  if (s != tlm::TLM_OK_RESPONSE) throw HostAccessError(response_string(s));
}

bool HostCpu::wait_irq(const sc_core::sc_time& timeout) {
  qk_.sync();  // the host catches up before it sleeps
  if (interrupts_.take()) return true;
  if (timeout == sc_core::SC_ZERO_TIME) return false;
  sc_core::wait(timeout, interrupts_.arrived());
  qk_.reset();
  return interrupts_.take();
}

}  // namespace sgpu::systemc
