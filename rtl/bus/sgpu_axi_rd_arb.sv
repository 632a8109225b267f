// Two AXI4 read masters onto one read port. Address requests are granted round-robin; read
// data is routed back by ID, so the masters must use different IDs (S1Id for master 1, any
// other ID for master 0) and must accept read data at any time (rready high, as every
// sgpu_dma_rd does: it reserves buffer room before issuing).
//
// The grant and the ID routing are sgpu_axi_arb_ctrl's, shared with sgpu_axi_wr_arb. The grant
// is a register: the AR readies depend only on it and on the port's arready, never on an
// arvalid. Once the granted master raises arvalid the grant stays until the handshake, so the
// port's AR payload is stable as AXI requires. Switching to a waiting master costs one cycle,
// which is nothing next to bursts of up to 256 beats.
`default_nettype none

module sgpu_axi_rd_arb #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// The ID master 1 uses; R beats with this ID go to master 1, all others to master 0.
  parameter logic [IdWidth-1:0] S1Id = IdWidth'(1)
) (
  /// Clock.
  input  wire logic                 clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                 rst_ni,

  /// Master 0 (e.g. the DMA fetch engine).
  input  wire logic                 s0_axi_arvalid,
  output      logic                 s0_axi_arready,
  input  wire logic [IdWidth-1:0]   s0_axi_arid,
  input  wire logic [63:0]          s0_axi_araddr,
  input  wire logic [7:0]           s0_axi_arlen,
  input  wire logic [2:0]           s0_axi_arsize,
  input  wire logic [1:0]           s0_axi_arburst,
  output      logic                 s0_axi_rvalid,
  input  wire logic                 s0_axi_rready,
  output      logic [IdWidth-1:0]   s0_axi_rid,
  output      logic [DataWidth-1:0] s0_axi_rdata,
  output      logic [1:0]           s0_axi_rresp,
  output      logic                 s0_axi_rlast,

  /// Master 1 (e.g. the GART's page-table walker).
  input  wire logic                 s1_axi_arvalid,
  output      logic                 s1_axi_arready,
  input  wire logic [IdWidth-1:0]   s1_axi_arid,
  input  wire logic [63:0]          s1_axi_araddr,
  input  wire logic [7:0]           s1_axi_arlen,
  input  wire logic [2:0]           s1_axi_arsize,
  input  wire logic [1:0]           s1_axi_arburst,
  output      logic                 s1_axi_rvalid,
  input  wire logic                 s1_axi_rready,
  output      logic [IdWidth-1:0]   s1_axi_rid,
  output      logic [DataWidth-1:0] s1_axi_rdata,
  output      logic [1:0]           s1_axi_rresp,
  output      logic                 s1_axi_rlast,

  /// The shared read port.
  output      logic                 m_axi_arvalid,
  input  wire logic                 m_axi_arready,
  output      logic [IdWidth-1:0]   m_axi_arid,
  output      logic [63:0]          m_axi_araddr,
  output      logic [7:0]           m_axi_arlen,
  output      logic [2:0]           m_axi_arsize,
  output      logic [1:0]           m_axi_arburst,
  input  wire logic                 m_axi_rvalid,
  output      logic                 m_axi_rready,
  input  wire logic [IdWidth-1:0]   m_axi_rid,
  input  wire logic [DataWidth-1:0] m_axi_rdata,
  input  wire logic [1:0]           m_axi_rresp,
  input  wire logic                 m_axi_rlast
);

  logic grant;  // 0: master 0, 1: master 1

  sgpu_axi_arb_ctrl #(.IdWidth(IdWidth), .S1Id(S1Id)) u_ctrl (
    .clk_i, .rst_ni,
    .s0_req_valid_i(s0_axi_arvalid), .s0_req_ready_o(s0_axi_arready), .s0_req_id_i(s0_axi_arid),
    .s1_req_valid_i(s1_axi_arvalid), .s1_req_ready_o(s1_axi_arready), .s1_req_id_i(s1_axi_arid),
    .req_valid_o   (m_axi_arvalid),  .req_ready_i   (m_axi_arready),  .req_enable_i(1'b1),
    .grant_o       (grant),
    .rsp_valid_i   (m_axi_rvalid),   .rsp_ready_o   (m_axi_rready),   .rsp_id_i   (m_axi_rid),
    .s0_rsp_valid_o(s0_axi_rvalid),  .s0_rsp_ready_i(s0_axi_rready),
    .s1_rsp_valid_o(s1_axi_rvalid),  .s1_rsp_ready_i(s1_axi_rready)
  );

  ////////
  // AR //
  ////////

  assign m_axi_arid     = grant ? s1_axi_arid    : s0_axi_arid;
  assign m_axi_araddr   = grant ? s1_axi_araddr  : s0_axi_araddr;
  assign m_axi_arlen    = grant ? s1_axi_arlen   : s0_axi_arlen;
  assign m_axi_arsize   = grant ? s1_axi_arsize  : s0_axi_arsize;
  assign m_axi_arburst  = grant ? s1_axi_arburst : s0_axi_arburst;

  ///////
  // R //
  ///////

  assign s0_axi_rid    = m_axi_rid;
  assign s0_axi_rdata  = m_axi_rdata;
  assign s0_axi_rresp  = m_axi_rresp;
  assign s0_axi_rlast  = m_axi_rlast;
  assign s1_axi_rid    = m_axi_rid;
  assign s1_axi_rdata  = m_axi_rdata;
  assign s1_axi_rresp  = m_axi_rresp;
  assign s1_axi_rlast  = m_axi_rlast;

endmodule

`default_nettype wire
