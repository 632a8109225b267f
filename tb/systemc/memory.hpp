// Host memory as a TLM-2.0 target: a tb::HostMemory (sparse, 4 KiB pages; the same model the
// simulated board uses) at bus addresses [0, size). Reads and writes honour byte enables and
// streaming width; each access is annotated with the read or write latency; DMI is granted
// page by page (and revoked when a page is detached). Error ranges answer with a chosen
// response, as a bridge or an IOMMU would (tests of the device's bus-error handling).
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "common/host_memory.hpp"

namespace sgpu::systemc {

class HostMemoryTarget final : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<HostMemoryTarget> socket;

  struct Config {
    std::uint64_t size = std::uint64_t{1} << 48;  ///< bus addresses [0, size)
    sc_core::sc_time read_latency = sc_core::sc_time(256, sc_core::SC_NS);
    sc_core::sc_time write_latency = sc_core::sc_time(128, sc_core::SC_NS);
    bool dmi = true;
  };

  HostMemoryTarget(const sc_core::sc_module_name& name, const Config& config);

  tb::HostMemory& memory() { return memory_; }
  /// Backs [bus, bus + bytes) with the host's own pages (HostPageDma's allocations).
  void attach(std::uint64_t bus, void* cpu, std::size_t bytes);
  /// Removes them (DMI to them is revoked first).
  void detach(std::uint64_t bus, std::size_t bytes);
  /// Accesses touching [lo, hi) get `status` (no DMI there).
  void inject_error(std::uint64_t lo, std::uint64_t hi, tlm::tlm_response_status status);

  std::uint64_t transactions() const { return transactions_; }

 private:
  void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& gp, tlm::tlm_dmi& dmi);
  unsigned int transport_dbg(tlm::tlm_generic_payload& gp);
  tlm::tlm_response_status error_for(std::uint64_t lo, std::uint64_t hi) const;

  struct ErrorRange {
    std::uint64_t lo, hi;
    tlm::tlm_response_status status;
  };
  Config config_;
  tb::HostMemory memory_;
  std::vector<ErrorRange> errors_;
  std::uint64_t transactions_ = 0;
};

}  // namespace sgpu::systemc
