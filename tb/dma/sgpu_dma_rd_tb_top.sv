// Simulation top for the DMA fetch engine's tests and benchmark (Verilator).
//
// Flattens the engine's struct ports into plain vectors (what a C++ harness can drive) and
// offers a choice of translator: the C++ model on the xlate_* ports, or the RTL identity
// translator (use_identity_i = 1), which the benchmark uses.
`include "sgpu_axi_typedef.svh"
`include "sgpu_axi_assign.svh"
`include "sgpu_tb_axi_ports.svh"
`include "sgpu_tb_xlate_ports.svh"

`default_nettype none

module sgpu_dma_rd_tb_top #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64,
  /// The engine's data buffer in beats (benchmarks of other sizes override it).
  parameter int unsigned BufferBeats = sgpu_dma_pkg::DefaultBufferBeats
) (
  /// Clock.
  input  wire logic                   clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                   rst_ni,
  /// Engine abort.
  input  wire logic                   abort_i,
  /// Engine busy.
  output      logic                   busy_o,
  /// The engine's BufferBeats, for tests whose bounds depend on it.
  output      logic [31:0]            buffer_beats_o,
  /// Request channel, flattened.
  input  wire logic                   req_valid_i,
  output      logic                   req_ready_o,
  input  wire logic [63:0]            req_addr_i,
  input  wire logic [31:0]            req_len_i,
  input  wire logic [3:0]             req_tag_i,
  /// Data stream.
  output      logic                   data_valid_o,
  input  wire logic                   data_ready_i,
  output      logic [DataWidth-1:0]   data_o,
  output      logic [DataWidth/8-1:0] data_keep_o,
  output      logic                   data_last_o,
  /// Status channel, flattened.
  output      logic                   status_valid_o,
  input  wire logic                   status_ready_i,
  output      logic [3:0]             status_tag_o,
  output      logic [2:0]             status_err_o,
  /// 1: translate with the RTL identity translator; 0: with the xlate_* ports.
  input  wire logic                   use_identity_i,
  /// Translation port, flattened.
  `SGPU_TB_XLATE_PORTS,
  /// AXI4 read master, flat.
  `SGPU_TB_AXI_RD_PORTS(4, DataWidth)
);

  `SGPU_AXI_TYPEDEF_RD(axi_rd, logic [3:0], logic [DataWidth-1:0])
  axi_rd_req_t rd_req;
  axi_rd_rsp_t rd_rsp;
  `SGPU_AXI_FLAT_RD(rd_req, rd_rsp)

  sgpu_dma_pkg::dma_status_t status;
  sgpu_dma_pkg::xlate_req_t  xreq;
  sgpu_dma_pkg::xlate_rsp_t  xrsp, id_rsp;
  logic                      xreq_valid, xreq_ready, xrsp_valid, xrsp_ready;
  logic                      id_req_ready, id_rsp_valid;

  assign buffer_beats_o = 32'(BufferBeats);

  sgpu_dma_rd #(
    .DataWidth   (DataWidth),
    .BufferBeats (BufferBeats),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t)
  ) u_dut (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .abort_i          (abort_i),
    .busy_o           (busy_o),
    .req_valid_i      (req_valid_i),
    .req_ready_o      (req_ready_o),
    .req_i            ('{addr: req_addr_i, len: req_len_i, tag: req_tag_i}),
    .data_valid_o     (data_valid_o),
    .data_ready_i     (data_ready_i),
    .data_o           (data_o),
    .data_keep_o      (data_keep_o),
    .data_last_o      (data_last_o),
    .status_valid_o   (status_valid_o),
    .status_ready_i   (status_ready_i),
    .status_o         (status),
    .xlate_req_valid_o(xreq_valid),
    .xlate_req_ready_i(xreq_ready),
    .xlate_req_o      (xreq),
    .xlate_req_tag_o  (),
    .xlate_rsp_valid_i(xrsp_valid),
    .xlate_rsp_ready_o(xrsp_ready),
    .xlate_rsp_i      (xrsp),
    .axi_rd_req_o     (rd_req),
    .axi_rd_rsp_i     (rd_rsp)
  );

  sgpu_xlate_identity u_identity (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .xlate_req_valid_i(xreq_valid && use_identity_i),
    .xlate_req_ready_o(id_req_ready),
    .xlate_req_i      (xreq),
    .xlate_rsp_valid_o(id_rsp_valid),
    .xlate_rsp_ready_i(xrsp_ready && use_identity_i),
    .xlate_rsp_o      (id_rsp)
  );

  assign xreq_ready        = use_identity_i ? id_req_ready : xlate_req_ready_i;
  assign xrsp_valid        = use_identity_i ? id_rsp_valid : xlate_rsp_valid_i;
  assign xrsp              = use_identity_i ? id_rsp : '{ppn: xlate_rsp_ppn_i,
                                                         fault: xlate_rsp_fault_i};
  assign xlate_req_valid_o = xreq_valid && !use_identity_i;
  assign xlate_req_vpn_o   = xreq.vpn;
  assign xlate_rsp_ready_o = xrsp_ready && !use_identity_i;
  assign status_tag_o      = status.tag;
  assign status_err_o      = status.err;

endmodule

`default_nettype wire
