// One clock cycle of an AXI4 port, as plain values, independent of any Verilated model.
//
// Data buses are stored little-endian in 64-byte arrays, which covers every width up to 512
// bits; lanes above the bus width are zero. Value-initialisation (`AxiManagerOut out{};`) gives
// the idle port: every valid and ready low, every payload zero.
#pragma once

#include <array>
#include <cstdint>

namespace sgpu::tb {

/// Largest AXI data bus the harness supports, in bytes (512 bits).
inline constexpr unsigned kAxiMaxDataBytes = 64;

/// AXI burst types and responses, as on the wires.
enum : uint8_t { kAxiBurstFixed = 0, kAxiBurstIncr = 1, kAxiBurstWrap = 2 };
enum : uint8_t { kAxiRespOkay = 0, kAxiRespExOkay = 1, kAxiRespSlvErr = 2, kAxiRespDecErr = 3 };

/// Everything the manager (the DUT) drives in one cycle.
struct AxiManagerOut {
  // Read address channel.
  bool arvalid = false;
  uint32_t arid = 0;
  uint64_t araddr = 0;
  uint8_t arlen = 0;
  uint8_t arsize = 0;
  uint8_t arburst = 0;
  // Read data channel.
  bool rready = false;
  // Write address channel.
  bool awvalid = false;
  uint32_t awid = 0;
  uint64_t awaddr = 0;
  uint8_t awlen = 0;
  uint8_t awsize = 0;
  uint8_t awburst = 0;
  // Write data channel.
  bool wvalid = false;
  std::array<uint8_t, kAxiMaxDataBytes> wdata{};
  uint64_t wstrb = 0;  ///< bit i enables byte lane i
  bool wlast = false;
  // Write response channel.
  bool bready = false;
};

/// Everything the subordinate (the memory model) drives in one cycle.
struct AxiSubordinateOut {
  bool arready = false;
  bool rvalid = false;
  uint32_t rid = 0;
  std::array<uint8_t, kAxiMaxDataBytes> rdata{};
  uint8_t rresp = 0;
  bool rlast = false;
  bool awready = false;
  bool wready = false;
  bool bvalid = false;
  uint32_t bid = 0;
  uint8_t bresp = 0;
};

}  // namespace sgpu::tb
