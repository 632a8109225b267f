// The control the two-master AXI arbiters share (sgpu_axi_rd_arb, sgpu_axi_wr_arb): the
// round-robin grant of the address channel and the routing of responses (R or B) by ID. It has
// no payload: each arbiter muxes its address fields with grant_o and copies the response fields
// to both masters.
//
// The grant is a register: the masters' readies depend only on it, on the port's ready and on
// req_enable_i, never on a valid. Once the granted master raises its valid the grant stays until
// the handshake. IDs are not changed: master 1 uses exactly S1Id and master 0 any other ID, and
// a response goes to master 1 if and only if its ID is S1Id.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi_arb_ctrl #(
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// The ID master 1 uses; responses with this ID go to master 1, all others to master 0.
  parameter logic [IdWidth-1:0] S1Id = IdWidth'(1)
) (
  /// Clock.
  input  wire logic               clk_i,
  /// Asynchronous reset, active low.
  input  wire logic               rst_ni,

  /// Address channel of the masters (valid, ready and the ID the invariants check).
  input  wire logic               s0_req_valid_i,
  output      logic               s0_req_ready_o,
  input  wire logic [IdWidth-1:0] s0_req_id_i,
  input  wire logic               s1_req_valid_i,
  output      logic               s1_req_ready_o,
  input  wire logic [IdWidth-1:0] s1_req_id_i,
  /// Address channel of the port.
  output      logic               req_valid_o,
  input  wire logic               req_ready_i,
  /// Requests pass only while this is high (the write arbiter's W-order FIFO has room).
  input  wire logic               req_enable_i,
  /// The master the address channel is granted to (0 or 1); selects the address payload.
  output      logic               grant_o,

  /// Response channel of the port.
  input  wire logic               rsp_valid_i,
  output      logic               rsp_ready_o,
  input  wire logic [IdWidth-1:0] rsp_id_i,
  /// Response channel of the masters.
  output      logic               s0_rsp_valid_o,
  input  wire logic               s0_rsp_ready_i,
  output      logic               s1_rsp_valid_o,
  input  wire logic               s1_rsp_ready_i
);

  /////////////
  // Address //
  /////////////

  logic grant_q, grant_d;  // 0: master 0, 1: master 1
  logic own_valid, other_valid;

  assign own_valid      = grant_q ? s1_req_valid_i : s0_req_valid_i;
  assign other_valid    = grant_q ? s0_req_valid_i : s1_req_valid_i;
  assign req_valid_o    = own_valid && req_enable_i;
  assign s0_req_ready_o = !grant_q && req_ready_i && req_enable_i;
  assign s1_req_ready_o = grant_q && req_ready_i && req_enable_i;
  assign grant_o        = grant_q;

  // Keep the grant while its master waits; hand it over after a handshake (round-robin) or
  // when the granted master is idle and the other one asks.
  always_comb begin
    grant_d = grant_q;
    if (other_valid && (!own_valid || (req_valid_o && req_ready_i))) grant_d = !grant_q;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      grant_q <= 1'b0;
    end else begin
      grant_q <= grant_d;
    end
  end

  //////////////
  // Response //
  //////////////

  logic to_s1;
  assign to_s1 = (rsp_id_i == S1Id);

  assign s0_rsp_valid_o = rsp_valid_i && !to_s1;
  assign s1_rsp_valid_o = rsp_valid_i && to_s1;
  assign rsp_ready_o    = to_s1 ? s1_rsp_ready_i : s0_rsp_ready_i;

  ////////////////
  // Invariants //
  ////////////////

  // Master 0 must not use master 1's ID, or its responses would be misrouted.
  `SGPU_ASSERT(DistinctIds, s0_req_valid_i |-> s0_req_id_i != S1Id)
  `SGPU_ASSERT(Master1Id, s1_req_valid_i |-> s1_req_id_i == S1Id)
  // A raised request keeps its master until the handshake.
  `SGPU_ASSERT(GrantHeld, (req_valid_o && !req_ready_i) |=> $stable(grant_q))

  `SGPU_ASSERT_STATIC(g_bad_id_width, IdWidth >= 1, "IdWidth must be at least 1")

endmodule

`default_nettype wire
