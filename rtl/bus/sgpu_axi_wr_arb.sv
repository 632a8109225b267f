// Two AXI4 write masters onto one write port: master 0 the command processor's small-write
// master (sgpu_axi_wr), master 1 the copy engine's burst writer (sgpu_dma_wr).
//
// AW is granted round-robin as in sgpu_axi_rd_arb (by the same sgpu_axi_arb_ctrl): the grant
// is a register, the AW readies depend only on it, on the port's awready and on room in the
// W-order FIFO, and once the granted master raises awvalid the grant stays until the
// handshake. AXI4 has no WID: write data must follow the order of the addresses. Every AW
// handshake on the port pushes its master's number into a FIFO, and W beats are taken only
// from the master at the head of it, until that burst's wlast; so W never runs ahead of its AW
// on the port (a master may present W early: it simply waits). B responses are routed by ID
// (S1Id to master 1, every other ID to master 0); both masters must accept B at any time.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi_wr_arb #(
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// The ID master 1 uses; B responses with this ID go to master 1, all others to master 0.
  parameter logic [IdWidth-1:0] S1Id = IdWidth'(2),
  /// AW handshakes whose data has not been sent yet (the W-order FIFO's depth).
  parameter int unsigned MaxPending = 16,
  /// AXI4 write request/response structs (sgpu_axi_typedef.svh).
  parameter type axi_wr_req_t = sgpu_axi_pkg::axi_wr_req_t,
  parameter type axi_wr_rsp_t = sgpu_axi_pkg::axi_wr_rsp_t
) (
  /// Clock.
  input  wire logic              clk_i,
  /// Asynchronous reset, active low.
  input  wire logic              rst_ni,

  /// The masters: 0 (the CP's write master) and 1 (the copy engine's writer).
  input  wire axi_wr_req_t [1:0] s_req_i,
  output      axi_wr_rsp_t [1:0] s_rsp_o,

  /// The shared write port.
  output      axi_wr_req_t       m_req_o,
  input  wire axi_wr_rsp_t       m_rsp_i
);

  logic grant;  // 0: master 0, 1: master 1
  logic ord_in_ready, ord_valid, ord_head;

  // An AW is passed on only while the W-order FIFO has room for its master's number.
  sgpu_axi_arb_ctrl #(.IdWidth(IdWidth), .S1Id(S1Id)) u_ctrl (
    .clk_i, .rst_ni,
    .s0_req_valid_i(s_req_i[0].aw_valid), .s0_req_ready_o(s_rsp_o[0].aw_ready),
    .s0_req_id_i   (s_req_i[0].aw.id),
    .s1_req_valid_i(s_req_i[1].aw_valid), .s1_req_ready_o(s_rsp_o[1].aw_ready),
    .s1_req_id_i   (s_req_i[1].aw.id),
    .req_valid_o   (m_req_o.aw_valid),    .req_ready_i   (m_rsp_i.aw_ready),
    .req_enable_i  (ord_in_ready),
    .grant_o       (grant),
    .rsp_valid_i   (m_rsp_i.b_valid),     .rsp_ready_o   (m_req_o.b_ready),
    .rsp_id_i      (m_rsp_i.b.id),
    .s0_rsp_valid_o(s_rsp_o[0].b_valid),  .s0_rsp_ready_i(s_req_i[0].b_ready),
    .s1_rsp_valid_o(s_rsp_o[1].b_valid),  .s1_rsp_ready_i(s_req_i[1].b_ready)
  );

  ////////
  // AW //
  ////////

  assign m_req_o.aw = grant ? s_req_i[1].aw : s_req_i[0].aw;

  ///////
  // W //
  ///////

  logic aw_go, w_go;
  assign aw_go = m_req_o.aw_valid && m_rsp_i.aw_ready;
  assign w_go  = m_req_o.w_valid && m_rsp_i.w_ready && m_req_o.w.last;

  // RegOut: the W multiplexer and the W readies start from a flip-flop (the head's master),
  // not from the LUT-RAM's read.
  sgpu_fifo #(.Width(1), .Depth(MaxPending), .RegOut(1'b1)) u_order (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (aw_go), .in_ready_o(ord_in_ready), .in_data_i(grant),
    .out_valid_o(ord_valid), .out_ready_i(w_go), .out_data_o(ord_head), .count_o()
  );

  assign m_req_o.w_valid    = ord_valid && (ord_head ? s_req_i[1].w_valid : s_req_i[0].w_valid);
  assign m_req_o.w          = ord_head ? s_req_i[1].w : s_req_i[0].w;
  assign s_rsp_o[0].w_ready = ord_valid && !ord_head && m_rsp_i.w_ready;
  assign s_rsp_o[1].w_ready = ord_valid && ord_head && m_rsp_i.w_ready;

  ///////
  // B //
  ///////

  assign s_rsp_o[0].b = m_rsp_i.b;
  assign s_rsp_o[1].b = m_rsp_i.b;

  `SGPU_ASSERT_STATIC(g_bad_id_width, $bits(m_rsp_i.b.id) == IdWidth,
                      "the AXI types' ID width is not IdWidth")

endmodule

`default_nettype wire
