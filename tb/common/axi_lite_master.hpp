// An AXI4-Lite master on a Verilated top's s_axil_* port: one 32-bit access at a time, with the
// valid/ready handshakes a PCIe-to-AXI bridge drives. An Agent of tb::Bench (bench.hpp).
//
// start_read()/start_write() raise the request; the bench's cycles then carry it: each channel's
// valid drops after its handshake, and the access is done once its response was taken.
#pragma once

#include <cstdint>
#include <type_traits>

#include "common/bench.hpp"

namespace sgpu::tb {

template <class V>
class AxiLiteMaster final : public Agent {
 public:
  /// Longest an access may take before the register slave counts as hung (every harness that
  /// plays the host's register master uses this bound).
  static constexpr uint64_t kTimeoutCycles = 1000;

  explicit AxiLiteMaster(V& dut) : dut_(dut) { idle(); }

  /// Every valid and ready low (inputs start random under Verilator's --x-initial unique).
  void idle() {
    dut_.s_axil_awvalid = 0;
    dut_.s_axil_wvalid = 0;
    dut_.s_axil_bready = 0;
    dut_.s_axil_arvalid = 0;
    dut_.s_axil_rready = 0;
    busy_ = false;
  }

  void start_read(uint32_t offset) {
    begin(false);
    set(dut_.s_axil_araddr, offset);
    dut_.s_axil_arprot = 0;
    dut_.s_axil_arvalid = 1;
    dut_.s_axil_rready = 1;
  }
  void start_write(uint32_t offset, uint32_t value, uint8_t strobes = 0xf) {
    begin(true);
    set(dut_.s_axil_awaddr, offset);
    dut_.s_axil_awprot = 0;
    dut_.s_axil_awvalid = 1;
    dut_.s_axil_wdata = value;
    dut_.s_axil_wstrb = strobes;
    dut_.s_axil_wvalid = 1;
    dut_.s_axil_bready = 1;
  }

  bool done() const { return done_; }
  bool busy() const { return busy_; }
  bool write() const { return write_; }
  uint32_t rdata() const { return rdata_; }
  /// BRESP / RRESP of the finished access.
  uint8_t resp() const { return resp_; }

  void sample() override {
    if (!busy_) return;
    aw_fire_ = dut_.s_axil_awvalid && dut_.s_axil_awready;
    w_fire_ = dut_.s_axil_wvalid && dut_.s_axil_wready;
    b_fire_ = dut_.s_axil_bvalid && dut_.s_axil_bready;
    ar_fire_ = dut_.s_axil_arvalid && dut_.s_axil_arready;
    r_fire_ = dut_.s_axil_rvalid && dut_.s_axil_rready;
    if (b_fire_) resp_ = dut_.s_axil_bresp;
    if (r_fire_) {
      rdata_ = dut_.s_axil_rdata;
      resp_ = dut_.s_axil_rresp;
    }
  }
  void edge() override {
    if (!busy_) return;
    if (aw_fire_ || ar_fire_) {
      dut_.s_axil_awvalid = 0;
      dut_.s_axil_arvalid = 0;
    }
    if (w_fire_) dut_.s_axil_wvalid = 0;
    if (b_fire_ || r_fire_) {
      done_ = true;
      busy_ = false;
      dut_.s_axil_bready = 0;
      dut_.s_axil_rready = 0;
    }
  }

 private:
  void begin(bool write) {
    write_ = write;
    done_ = false;
    busy_ = true;
    rdata_ = 0;
    resp_ = 0;
  }
  template <class Port>
  static void set(Port& port, uint32_t value) {
    port = static_cast<std::remove_reference_t<Port>>(value);
  }

  V& dut_;
  bool busy_ = false;
  bool write_ = false;
  bool done_ = false;
  uint32_t rdata_ = 0;
  uint8_t resp_ = 0;
  bool aw_fire_ = false, w_fire_ = false, b_fire_ = false, ar_fire_ = false, r_fire_ = false;
};

}  // namespace sgpu::tb
