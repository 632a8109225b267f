// The platform's "host CPU": the initiator the host stack (libsgpu) runs on. Its operations are
// the Transport's: a 32-bit MMIO read or write (b_transport through the interconnect, the
// annotated time kept by a tlm_quantumkeeper), a wait for the interrupt (wait(timeout, event)
// on the line, or on an MSI), and the time (SystemC time plus the initiator's local offset).
//
// They must run in a SystemC thread. run() gives that to any caller: called from an SC_THREAD
// (the example platform's host thread) it runs the operation right there; called from ordinary
// code outside the kernel (a program that opened the backend through the registry: the sgpu CLI,
// the end-to-end tests) it hands the operation to the proxy thread and steps the kernel with
// sc_start() until the proxy has done it and paused (sc_pause()). One OS thread, deterministic.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

namespace sgpu::systemc {

/// A host access that did not complete (the response status names why).
struct HostAccessError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Where the host CPU learns about interrupts: a level line, or MSI writes.
class InterruptSource {
 public:
  virtual ~InterruptSource() = default;
  /// True if an interrupt is pending now; an MSI is consumed by the call that sees it.
  virtual bool take() = 0;
  /// Notified when one arrives.
  virtual const sc_core::sc_event& arrived() const = 0;
};

/// "TLM_ADDRESS_ERROR_RESPONSE" etc.
std::string response_string(tlm::tlm_response_status status);

class HostCpu final : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<HostCpu> socket;

  HostCpu(const sc_core::sc_module_name& name, InterruptSource& interrupts);

  // ---- operations: call from a SystemC thread (run() arranges that)
  std::uint32_t read32(std::uint64_t addr);
  void write32(std::uint64_t addr, std::uint32_t value);
  /// One 32-bit access without throwing: its response status (read data in `data`). Callers
  /// outside the kernel use this and throw on their own stack: an exception thrown on a SystemC
  /// thread's stack leaves AddressSanitizer's view of the main stack stale (false reports).
  tlm::tlm_response_status transact32(tlm::tlm_command cmd, std::uint64_t addr, std::uint32_t& data);
  /// True if an interrupt is pending or arrives within `timeout`.
  bool wait_irq(const sc_core::sc_time& timeout);
  /// SystemC time plus how far this initiator runs ahead.
  sc_core::sc_time now() const { return qk_.get_current_time(); }

  /// Runs `op` in a SystemC thread and returns its result (or rethrows its exception).
  template <class F>
  auto run(F&& op) -> decltype(op());

  /// True when the caller is a SystemC thread of a running simulation.
  static bool in_thread();

 private:
  void proxy_thread();
  void step_until_done();

  InterruptSource& interrupts_;
  tlm_utils::tlm_quantumkeeper qk_;
  tlm::tlm_generic_payload gp_;
  std::function<void()> pending_;
  bool done_ = true;
  sc_core::sc_event request_;
};

template <class F>
auto HostCpu::run(F&& op) -> decltype(op()) {
  using R = decltype(op());
  if (in_thread()) return op();
  std::exception_ptr error;
  if constexpr (std::is_void_v<R>) {
    pending_ = [&] {
      try {
        op();
      } catch (...) {
        error = std::current_exception();
      }
    };
    step_until_done();
    if (error) std::rethrow_exception(error);
  } else {
    std::optional<R> result;
    pending_ = [&] {
      try {
        result.emplace(op());
      } catch (...) {
        error = std::current_exception();
      }
    };
    step_until_done();
    if (error) std::rethrow_exception(error);
    return std::move(*result);
  }
}

}  // namespace sgpu::systemc
