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
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi_rd_arb #(
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// The ID master 1 uses; R beats with this ID go to master 1, all others to master 0.
  parameter logic [IdWidth-1:0] S1Id = IdWidth'(1),
  /// AXI4 read request/response structs (sgpu_axi_typedef.svh).
  parameter type axi_rd_req_t = sgpu_axi_pkg::axi_rd_req_t,
  parameter type axi_rd_rsp_t = sgpu_axi_pkg::axi_rd_rsp_t
) (
  /// Clock.
  input  wire logic              clk_i,
  /// Asynchronous reset, active low.
  input  wire logic              rst_ni,

  /// The masters: 0 (e.g. the DMA fetch engine) and 1 (e.g. the GART's page-table walker).
  input  wire axi_rd_req_t [1:0] s_req_i,
  output      axi_rd_rsp_t [1:0] s_rsp_o,

  /// The shared read port.
  output      axi_rd_req_t       m_req_o,
  input  wire axi_rd_rsp_t       m_rsp_i
);

  logic grant;  // 0: master 0, 1: master 1

  sgpu_axi_arb_ctrl #(.IdWidth(IdWidth), .S1Id(S1Id)) u_ctrl (
    .clk_i, .rst_ni,
    .s0_req_valid_i(s_req_i[0].ar_valid), .s0_req_ready_o(s_rsp_o[0].ar_ready),
    .s0_req_id_i   (s_req_i[0].ar.id),
    .s1_req_valid_i(s_req_i[1].ar_valid), .s1_req_ready_o(s_rsp_o[1].ar_ready),
    .s1_req_id_i   (s_req_i[1].ar.id),
    .req_valid_o   (m_req_o.ar_valid),    .req_ready_i   (m_rsp_i.ar_ready),
    .req_enable_i  (1'b1),
    .grant_o       (grant),
    .rsp_valid_i   (m_rsp_i.r_valid),     .rsp_ready_o   (m_req_o.r_ready),
    .rsp_id_i      (m_rsp_i.r.id),
    .s0_rsp_valid_o(s_rsp_o[0].r_valid),  .s0_rsp_ready_i(s_req_i[0].r_ready),
    .s1_rsp_valid_o(s_rsp_o[1].r_valid),  .s1_rsp_ready_i(s_req_i[1].r_ready)
  );

  // AR from the granted master; R to both (its valid says whose it is).
  assign m_req_o.ar   = grant ? s_req_i[1].ar : s_req_i[0].ar;
  assign s_rsp_o[0].r = m_rsp_i.r;
  assign s_rsp_o[1].r = m_rsp_i.r;

  `SGPU_ASSERT_STATIC(g_bad_id_width, $bits(m_rsp_i.r.id) == IdWidth,
                      "the AXI types' ID width is not IdWidth")

endmodule

`default_nettype wire
