// Binds the plain AXI structs of axi_signals.hpp to a Verilated top-level.
//
// The top's AXI4 manager port must use the names m_axi_<signal> (m_axi_arvalid, m_axi_rdata,
// ...). Header-only so that tb/common never links a Verilated model: the templates are
// instantiated by the testbench that owns the model. Data buses may be any width up to 512
// bits; Verilator stores them as CData/SData/IData/QData (up to 64 bits) or VlWide<N> (wider),
// and both are handled here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/axi_signals.hpp"

namespace sgpu::tb {
namespace detail {

template <class T>
constexpr bool is_verilator_scalar_v = std::is_integral_v<std::remove_cv_t<T>>;

/// Copies a Verilated bus into little-endian bytes (bytes above the bus width are untouched).
template <class Bus>
void bus_to_bytes(const Bus& bus, uint8_t* bytes, size_t max_bytes) {
  if constexpr (is_verilator_scalar_v<Bus>) {
    const uint64_t value = static_cast<uint64_t>(bus);
    const size_t n = sizeof(Bus) < max_bytes ? sizeof(Bus) : max_bytes;
    for (size_t i = 0; i < n; ++i) bytes[i] = static_cast<uint8_t>(value >> (8 * i));
  } else {
    // VlWide<N>: N 32-bit words, word 0 holds bits [31:0].
    constexpr size_t kWords = sizeof(Bus) / sizeof(uint32_t);
    for (size_t w = 0; w < kWords && 4 * w < max_bytes; ++w) {
      const uint32_t word = bus.at(w);
      for (size_t b = 0; b < 4 && 4 * w + b < max_bytes; ++b) {
        bytes[4 * w + b] = static_cast<uint8_t>(word >> (8 * b));
      }
    }
  }
}

/// Loads little-endian bytes into a Verilated bus (bytes beyond the bus width are ignored).
template <class Bus>
void bytes_to_bus(const uint8_t* bytes, size_t max_bytes, Bus& bus) {
  if constexpr (is_verilator_scalar_v<Bus>) {
    uint64_t value = 0;
    const size_t n = sizeof(Bus) < max_bytes ? sizeof(Bus) : max_bytes;
    for (size_t i = 0; i < n; ++i) value |= uint64_t{bytes[i]} << (8 * i);
    bus = static_cast<Bus>(value);
  } else {
    constexpr size_t kWords = sizeof(Bus) / sizeof(uint32_t);
    for (size_t w = 0; w < kWords; ++w) {
      uint32_t word = 0;
      for (size_t b = 0; b < 4 && 4 * w + b < max_bytes; ++b) {
        word |= uint32_t{bytes[4 * w + b]} << (8 * b);
      }
      bus.at(w) = word;
    }
  }
}

/// Wide strobe buses (> 64 lanes) do not exist: 512 bits / 8 = 64 lanes fit a QData.
template <class Bus>
uint64_t bus_to_u64(const Bus& bus) {
  static_assert(is_verilator_scalar_v<Bus>, "strobe/ID buses wider than 64 bits are unsupported");
  return static_cast<uint64_t>(bus);
}

/// Assigns to a Verilated port of any integral storage type without narrowing warnings.
template <class Port, class Value>
void set_port(Port& port, Value value) {
  port = static_cast<Port>(value);
}

}  // namespace detail

/// Reads the manager's read-side outputs (AR channel and rready) from the model.
template <class V>
void sample_axi_read(const V& top, AxiManagerOut& out) {
  out.arvalid = top.m_axi_arvalid != 0;
  out.arid = static_cast<uint32_t>(top.m_axi_arid);
  out.araddr = static_cast<uint64_t>(top.m_axi_araddr);
  out.arlen = static_cast<uint8_t>(top.m_axi_arlen);
  out.arsize = static_cast<uint8_t>(top.m_axi_arsize);
  out.arburst = static_cast<uint8_t>(top.m_axi_arburst);
  out.rready = top.m_axi_rready != 0;
}

/// Reads the manager's write-side outputs (AW, W channels and bready) from the model.
template <class V>
void sample_axi_write(const V& top, AxiManagerOut& out) {
  out.awvalid = top.m_axi_awvalid != 0;
  out.awid = static_cast<uint32_t>(top.m_axi_awid);
  out.awaddr = static_cast<uint64_t>(top.m_axi_awaddr);
  out.awlen = static_cast<uint8_t>(top.m_axi_awlen);
  out.awsize = static_cast<uint8_t>(top.m_axi_awsize);
  out.awburst = static_cast<uint8_t>(top.m_axi_awburst);
  out.wvalid = top.m_axi_wvalid != 0;
  out.wdata.fill(0);
  detail::bus_to_bytes(top.m_axi_wdata, out.wdata.data(), out.wdata.size());
  out.wstrb = detail::bus_to_u64(top.m_axi_wstrb);
  out.wlast = top.m_axi_wlast != 0;
  out.bready = top.m_axi_bready != 0;
}

/// Drives the subordinate's read-side outputs (arready and the R channel) into the model.
template <class V>
void drive_axi_read(V& top, const AxiSubordinateOut& in) {
  detail::set_port(top.m_axi_arready, in.arready);
  detail::set_port(top.m_axi_rvalid, in.rvalid);
  detail::set_port(top.m_axi_rid, in.rid);
  detail::bytes_to_bus(in.rdata.data(), in.rdata.size(), top.m_axi_rdata);
  detail::set_port(top.m_axi_rresp, in.rresp);
  detail::set_port(top.m_axi_rlast, in.rlast);
}

/// Drives the subordinate's write-side outputs (awready, wready and the B channel).
template <class V>
void drive_axi_write(V& top, const AxiSubordinateOut& in) {
  detail::set_port(top.m_axi_awready, in.awready);
  detail::set_port(top.m_axi_wready, in.wready);
  detail::set_port(top.m_axi_bvalid, in.bvalid);
  detail::set_port(top.m_axi_bid, in.bid);
  detail::set_port(top.m_axi_bresp, in.bresp);
}

}  // namespace sgpu::tb
