// Connects an AXI4 request/response struct pair (sgpu_axi_typedef.svh) to flat ports named
// m_axi_<signal>, the names the top-level ports use (sgpu_top, the Verilated testbench tops) and
// the C++ harness binds (tb/common/axi_verilator.hpp). Like PULP's axi/assign.svh.
//
//   `SGPU_AXI_FLAT_RD(req, rsp)   drives m_axi_ar*, m_axi_rready from req; rsp from m_axi_r*
//   `SGPU_AXI_FLAT_WR(req, rsp)   drives m_axi_aw*, m_axi_w*, m_axi_bready from req; rsp from
//                                 m_axi_awready, m_axi_wready, m_axi_b*
`ifndef SGPU_AXI_ASSIGN_SVH
`define SGPU_AXI_ASSIGN_SVH

`define SGPU_AXI_FLAT_RD(req, rsp)                                                          \
  assign m_axi_arvalid = req.ar_valid;                                                      \
  assign m_axi_arid    = req.ar.id;                                                         \
  assign m_axi_araddr  = req.ar.addr;                                                       \
  assign m_axi_arlen   = req.ar.len;                                                        \
  assign m_axi_arsize  = req.ar.size;                                                       \
  assign m_axi_arburst = req.ar.burst;                                                      \
  assign m_axi_rready  = req.r_ready;                                                       \
  assign rsp.ar_ready  = m_axi_arready;                                                     \
  assign rsp.r_valid   = m_axi_rvalid;                                                      \
  assign rsp.r.id      = m_axi_rid;                                                         \
  assign rsp.r.data    = m_axi_rdata;                                                       \
  assign rsp.r.resp    = m_axi_rresp;                                                       \
  assign rsp.r.last    = m_axi_rlast;

`define SGPU_AXI_FLAT_WR(req, rsp)                                                          \
  assign m_axi_awvalid = req.aw_valid;                                                      \
  assign m_axi_awid    = req.aw.id;                                                         \
  assign m_axi_awaddr  = req.aw.addr;                                                       \
  assign m_axi_awlen   = req.aw.len;                                                        \
  assign m_axi_awsize  = req.aw.size;                                                       \
  assign m_axi_awburst = req.aw.burst;                                                      \
  assign m_axi_wvalid  = req.w_valid;                                                       \
  assign m_axi_wdata   = req.w.data;                                                        \
  assign m_axi_wstrb   = req.w.strb;                                                        \
  assign m_axi_wlast   = req.w.last;                                                        \
  assign m_axi_bready  = req.b_ready;                                                       \
  assign rsp.aw_ready  = m_axi_awready;                                                     \
  assign rsp.w_ready   = m_axi_wready;                                                      \
  assign rsp.b_valid   = m_axi_bvalid;                                                      \
  assign rsp.b.id      = m_axi_bid;                                                         \
  assign rsp.b.resp    = m_axi_bresp;

`endif  // SGPU_AXI_ASSIGN_SVH
