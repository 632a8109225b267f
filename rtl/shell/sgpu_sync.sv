// Bit synchroniser: each bit of d_i crosses into clk_i's domain through Stages flip-flops.
//
// Bits are synchronised independently, so a multi-bit value is only safe when at most one bit
// changes at a time (a Gray-coded pointer) or when it is stable while it is sampled (a
// configuration value that changes rarely and is qualified by a synchronised flag).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_sync #(
  parameter int unsigned Width = 1,
  /// Flip-flops in the chain (>= 2).
  parameter int unsigned Stages = 2,
  /// Value while in reset.
  parameter logic [Width-1:0] ResetValue = '0
) (
  input  wire logic             clk_i,
  input  wire logic             rst_ni,
  input  wire logic [Width-1:0] d_i,
  output      logic [Width-1:0] q_o
);

  (* ASYNC_REG = "TRUE" *) logic [Width-1:0] sync_q [Stages];

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      for (int unsigned i = 0; i < Stages; i++) sync_q[i] <= ResetValue;
    end else begin
      sync_q[0] <= d_i;
      for (int unsigned i = 1; i < Stages; i++) sync_q[i] <= sync_q[i-1];
    end
  end

  assign q_o = sync_q[Stages-1];

  `SGPU_ASSERT_STATIC(g_bad_stages, Stages >= 2, "Stages must be at least 2")

endmodule

`default_nettype wire
