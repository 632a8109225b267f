// Reset synchroniser: asserts asynchronously, releases Stages clock edges after the source
// reset goes away, synchronously to clk_i. Every clock domain of a shell gets its reset from
// one of these, all fed by the same asynchronous source, so the domains enter reset together.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_rst_sync #(
  parameter int unsigned Stages = 3
) (
  input  wire logic clk_i,
  /// Asynchronous reset source, active low.
  input  wire logic rst_ni,
  /// Reset for clk_i's domain, active low.
  output      logic rst_no
);

  (* ASYNC_REG = "TRUE" *) logic [Stages-1:0] chain_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) chain_q <= '0;
    else         chain_q <= {chain_q[Stages-2:0], 1'b1};
  end

  assign rst_no = chain_q[Stages-1];

  `SGPU_ASSERT_STATIC(g_bad_stages, Stages >= 2, "Stages must be at least 2")

endmodule

`default_nettype wire
