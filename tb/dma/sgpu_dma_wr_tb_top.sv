// Simulation top for the copy engine's burst write master alone (Verilator): flattens its struct
// ports into plain vectors, so a test can drive flush_i and the translation port cycle by cycle
// (sgpu_copy holds flush_i until the writer is idle; the writer's own contract is wider).
`include "sgpu_axi_typedef.svh"
`include "sgpu_axi_assign.svh"
`include "sgpu_tb_axi_ports.svh"
`include "sgpu_tb_xlate_ports.svh"

`default_nettype none

module sgpu_dma_wr_tb_top #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  input  wire logic                   flush_i,
  /// Translation port, flattened (the names tb/common/translator.hpp binds).
  `SGPU_TB_XLATE_PORTS,
  input  wire logic                   xlate_clear_i,
  output      logic                   xerr_o,
  output      logic [63:0]            xerr_addr_o,
  /// Row channel, flattened.
  input  wire logic                   row_valid_i,
  output      logic                   row_ready_o,
  input  wire logic [63:0]            row_addr_i,
  input  wire logic [31:0]            row_len_i,
  /// Packed input stream.
  input  wire logic                   in_valid_i,
  output      logic                   in_ready_o,
  input  wire logic [DataWidth-1:0]   in_data_i,
  output      logic                   in_row_done_o,
  output      logic [31:0]            in_row_bytes_o,
  output      logic                   idle_o,
  output      logic                   err_o,
  output      logic [63:0]            err_addr_o,
  /// AXI4 write master, flat (the writer has no read side).
  `SGPU_TB_AXI_WR_PORTS(4, DataWidth)
);

  `SGPU_AXI_TYPEDEF_WR(axi_wr, logic [3:0], logic [DataWidth-1:0], logic [DataWidth/8-1:0])
  axi_wr_req_t wr_req;
  axi_wr_rsp_t wr_rsp;
  `SGPU_AXI_FLAT_WR(wr_req, wr_rsp)

  sgpu_dma_pkg::xlate_req_t xreq;

  sgpu_dma_wr #(
    .DataWidth   (DataWidth),
    .axi_wr_req_t(axi_wr_req_t),
    .axi_wr_rsp_t(axi_wr_rsp_t)
  ) u_dut (
    .clk_i, .rst_ni, .flush_i,
    .xlate_req_valid_o,
    .xlate_req_ready_i,
    .xlate_req_o      (xreq),
    .xlate_rsp_valid_i,
    .xlate_rsp_ready_o,
    .xlate_rsp_i      ('{ppn: xlate_rsp_ppn_i, fault: xlate_rsp_fault_i}),
    .xlate_clear_i,
    .xerr_o,
    .xerr_addr_o,
    .row_valid_i,
    .row_ready_o,
    .row_i            ('{addr: row_addr_i, len: row_len_i}),
    .in_valid_i,
    .in_ready_o,
    .in_data_i,
    .in_row_done_o,
    .in_row_bytes_o,
    .idle_o,
    .err_o,
    .err_addr_o,
    .axi_wr_req_o     (wr_req),
    .axi_wr_rsp_i     (wr_rsp)
  );

  assign xlate_req_vpn_o = xreq.vpn;

  // The writer asks for write translations only.
  logic unused;
  assign unused = xreq.write;

endmodule

`default_nettype wire
