// Simulation top for the copy engine's tests and benchmark (Verilator): flattens the struct
// ports and offers the RTL identity translator (use_identity_i = 1) or the xlate_* ports
// (driven by a C++ translator that can refuse pages).
`include "sgpu_axi_typedef.svh"
`include "sgpu_axi_assign.svh"
`include "sgpu_tb_axi_ports.svh"
`include "sgpu_tb_xlate_ports.svh"

`default_nettype none

module sgpu_copy_tb_top #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  /// Request, flattened (op: 0 copy, 1 fill).
  input  wire logic                   req_valid_i,
  output      logic                   req_ready_o,
  input  wire logic                   req_op_i,
  input  wire logic [63:0]            req_src_i,
  input  wire logic [63:0]            req_dst_i,
  input  wire logic [31:0]            req_width_i,
  input  wire logic [31:0]            req_height_i,
  input  wire logic [31:0]            req_src_pitch_i,
  input  wire logic [31:0]            req_dst_pitch_i,
  input  wire logic [31:0]            req_pattern_i,
  /// Status, flattened.
  output      logic                   status_valid_o,
  input  wire logic                   status_ready_i,
  output      logic [2:0]             status_err_o,
  output      logic [63:0]            status_addr_o,
  input  wire logic                   abort_i,
  output      logic                   busy_o,
  /// 1: the RTL identity translator; 0: the xlate_* ports.
  input  wire logic                   use_identity_i,
  `SGPU_TB_XLATE_PORTS,
  /// AXI4 read master, flat.
  `SGPU_TB_AXI_RD_PORTS(4, DataWidth),
  /// AXI4 write master, flat.
  `SGPU_TB_AXI_WR_PORTS(4, DataWidth)
);

  sgpu_copy_pkg::copy_status_t status;
  sgpu_dma_pkg::xlate_req_t    xreq;
  sgpu_dma_pkg::xlate_rsp_t    xrsp, id_rsp;
  logic                        xreq_valid, xreq_ready, xrsp_valid, xrsp_ready;
  logic                        id_req_ready, id_rsp_valid;

  // The destination side is translated by the identity (sgpu_top puts the GART there).
  logic                        wx_req_valid, wx_req_ready, wx_rsp_valid, wx_rsp_ready;
  sgpu_dma_pkg::xlate_req_t    wx_req;
  sgpu_dma_pkg::xlate_rsp_t    wx_rsp;

  sgpu_xlate_identity u_wr_identity (
    .clk_i, .rst_ni,
    .xlate_req_valid_i(wx_req_valid),
    .xlate_req_ready_o(wx_req_ready),
    .xlate_req_i      (wx_req),
    .xlate_rsp_valid_o(wx_rsp_valid),
    .xlate_rsp_ready_i(wx_rsp_ready),
    .xlate_rsp_o      (wx_rsp)
  );

  `SGPU_AXI_TYPEDEF_RD(axi_rd, logic [3:0], logic [DataWidth-1:0])
  `SGPU_AXI_TYPEDEF_WR(axi_wr, logic [3:0], logic [DataWidth-1:0], logic [DataWidth/8-1:0])
  axi_rd_req_t rd_req;
  axi_rd_rsp_t rd_rsp;
  axi_wr_req_t wr_req;
  axi_wr_rsp_t wr_rsp;
  `SGPU_AXI_FLAT_RD(rd_req, rd_rsp)
  `SGPU_AXI_FLAT_WR(wr_req, wr_rsp)

  sgpu_copy #(
    .DataWidth   (DataWidth),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t),
    .axi_wr_req_t(axi_wr_req_t),
    .axi_wr_rsp_t(axi_wr_rsp_t)
  ) u_dut (
    .clk_i, .rst_ni,
    .req_valid_i,
    .req_ready_o,
    .req_i            ('{op: sgpu_copy_pkg::copy_op_e'(req_op_i), src: req_src_i, dst: req_dst_i,
                         width: req_width_i, height: req_height_i, src_pitch: req_src_pitch_i,
                         dst_pitch: req_dst_pitch_i, pattern: req_pattern_i}),
    .status_valid_o,
    .status_ready_i,
    .status_o         (status),
    .abort_i,
    .busy_o,
    .xlate_req_valid_o(xreq_valid),
    .xlate_req_ready_i(xreq_ready),
    .xlate_req_o      (xreq),
    .xlate_rsp_valid_i(xrsp_valid),
    .xlate_rsp_ready_o(xrsp_ready),
    .xlate_rsp_i      (xrsp),
    .wr_xlate_req_valid_o(wx_req_valid),
    .wr_xlate_req_ready_i(wx_req_ready),
    .wr_xlate_req_o      (wx_req),
    .wr_xlate_rsp_valid_i(wx_rsp_valid),
    .wr_xlate_rsp_ready_o(wx_rsp_ready),
    .wr_xlate_rsp_i      (wx_rsp),
    .axi_rd_req_o(rd_req), .axi_rd_rsp_i(rd_rsp),
    .axi_wr_req_o(wr_req), .axi_wr_rsp_i(wr_rsp)
  );

  assign status_err_o  = status.err;
  assign status_addr_o = status.addr;

  sgpu_xlate_identity u_identity (
    .clk_i, .rst_ni,
    .xlate_req_valid_i(xreq_valid && use_identity_i),
    .xlate_req_ready_o(id_req_ready),
    .xlate_req_i      (xreq),
    .xlate_rsp_valid_o(id_rsp_valid),
    .xlate_rsp_ready_i(xrsp_ready && use_identity_i),
    .xlate_rsp_o      (id_rsp)
  );

  assign xlate_req_valid_o = xreq_valid && !use_identity_i;
  assign xlate_req_vpn_o   = xreq.vpn;
  assign xlate_rsp_ready_o = xrsp_ready && !use_identity_i;
  assign xreq_ready        = use_identity_i ? id_req_ready : xlate_req_ready_i;
  assign xrsp_valid        = use_identity_i ? id_rsp_valid : xlate_rsp_valid_i;
  assign xrsp              = use_identity_i ? id_rsp
                                             : '{ppn: xlate_rsp_ppn_i, fault: xlate_rsp_fault_i};

  // The copy engine only reads through translation (write = 0).
  logic unused_xreq;
  assign unused_xreq = xreq.write;

endmodule

`default_nettype wire
