// Flat AXI4 manager ports of a Verilated testbench top, named as tb/common/axi_verilator.hpp
// binds them (m_axi_<signal>); connect them to the DUT's structs with SGPU_AXI_FLAT_RD/WR
// (rtl/include/sgpu_axi_assign.svh). The address is 64 bits.
`ifndef SGPU_TB_AXI_PORTS_SVH
`define SGPU_TB_AXI_PORTS_SVH

`define SGPU_TB_AXI_RD_PORTS(id_w, data_w)                                                  \
  output      logic                m_axi_arvalid,                                           \
  input  wire logic                m_axi_arready,                                           \
  output      logic [(id_w)-1:0]   m_axi_arid,                                              \
  output      logic [63:0]         m_axi_araddr,                                            \
  output      logic [7:0]          m_axi_arlen,                                             \
  output      logic [2:0]          m_axi_arsize,                                            \
  output      logic [1:0]          m_axi_arburst,                                           \
  input  wire logic                m_axi_rvalid,                                            \
  output      logic                m_axi_rready,                                            \
  input  wire logic [(id_w)-1:0]   m_axi_rid,                                               \
  input  wire logic [(data_w)-1:0] m_axi_rdata,                                             \
  input  wire logic [1:0]          m_axi_rresp,                                             \
  input  wire logic                m_axi_rlast

`define SGPU_TB_AXI_WR_PORTS(id_w, data_w)                                                  \
  output      logic                  m_axi_awvalid,                                         \
  input  wire logic                  m_axi_awready,                                         \
  output      logic [(id_w)-1:0]     m_axi_awid,                                            \
  output      logic [63:0]           m_axi_awaddr,                                          \
  output      logic [7:0]            m_axi_awlen,                                           \
  output      logic [2:0]            m_axi_awsize,                                          \
  output      logic [1:0]            m_axi_awburst,                                         \
  output      logic                  m_axi_wvalid,                                          \
  input  wire logic                  m_axi_wready,                                          \
  output      logic [(data_w)-1:0]   m_axi_wdata,                                           \
  output      logic [(data_w)/8-1:0] m_axi_wstrb,                                           \
  output      logic                  m_axi_wlast,                                           \
  input  wire logic                  m_axi_bvalid,                                          \
  output      logic                  m_axi_bready,                                          \
  input  wire logic [(id_w)-1:0]     m_axi_bid,                                             \
  input  wire logic [1:0]            m_axi_bresp

`endif  // SGPU_TB_AXI_PORTS_SVH
