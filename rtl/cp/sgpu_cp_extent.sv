// The extent of a COPY's or BLIT_RECT's source or destination, (rows - 1) * pitch + width: the
// bytes from its first to one past its last, which the controller checks for overlap.
//
// A 32 x 32 multiply and the sums behind it in one cycle were 14.6 ns on an ECP5-8 (timing pass
// 6 in docs/fpga.md): the multiplier's four 16 x 16 partial products, then the adders that join
// them, then the width, each a carry chain placed apart. Here each of the three is a stage:
//   1. the four partial products (one MULT18X18D each, no adder), registered;
//   2. the two that do not overlap joined with the width ({hh, ll} + width) and the two middle
//      ones summed (lh + hl), registered;
//   3. ext_o = stage 2's sum + (middle << 16), one 65-bit adder.
// ext_o is that of the inputs two cycles before; the controller holds them (pkt_q) for as long.
`default_nettype none

module sgpu_cp_extent (
  input  wire logic        clk_i,
  /// Rows - 1 (the last row's index), the pitch and the width in bytes.
  input  wire logic [31:0] rows_m1_i,
  input  wire logic [31:0] pitch_i,
  input  wire logic [31:0] width_i,
  output      logic [64:0] ext_o
);

  logic [31:0] pp_ll_q, pp_lh_q, pp_hl_q, pp_hh_q, width_q;
  logic [64:0] outer_q;  // {hh, ll} + width
  logic [32:0] mid_q;    // lh + hl

  // Datapath only: what the controller reads is two cycles behind its own held inputs.
  always_ff @(posedge clk_i) begin
    pp_ll_q <= 32'(rows_m1_i[15:0])  * 32'(pitch_i[15:0]);
    pp_lh_q <= 32'(rows_m1_i[15:0])  * 32'(pitch_i[31:16]);
    pp_hl_q <= 32'(rows_m1_i[31:16]) * 32'(pitch_i[15:0]);
    pp_hh_q <= 32'(rows_m1_i[31:16]) * 32'(pitch_i[31:16]);
    width_q <= width_i;
    outer_q <= {1'b0, pp_hh_q, pp_ll_q} + 65'(width_q);
    mid_q   <= {1'b0, pp_lh_q} + {1'b0, pp_hl_q};
  end

  assign ext_o = outer_q + {16'd0, mid_q, 16'd0};

endmodule

`default_nettype wire
