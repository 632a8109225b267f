// PIPE clocking of the 7-series PCIe hard block with external clocking (PG054 "External PIPE
// Interface"/"pipe_clock"): the GT's TXOUTCLK (the 100 MHz reference) drives an MMCM that makes
// 125 MHz (DRP and Gen1 PCLK), 250 MHz (Gen2 PCLK), USERCLK1 and USERCLK2 (the user interface:
// 125 MHz for x4 at 128 bits); PCLK switches between 125 and 250 MHz when the link changes rate,
// as the block asks on pipe_pclk_sel (all lanes agreeing).
`default_nettype none

module sgpu_s7_pipe_clock #(
  parameter int unsigned Lanes = 4,
  /// USERCLK1 / USERCLK2 divisors of the 1000 MHz VCO (x4 Gen2 128-bit: 250 / 125 MHz).
  parameter int unsigned UserClk1Divide = 4,
  parameter int unsigned UserClk2Divide = 8
) (
  input  wire logic             txoutclk_i,     // from the hard block (100 MHz)
  input  wire logic [Lanes-1:0] pclk_sel_i,     // 1: Gen2 rate on that lane
  output      logic             pclk_o,
  output      logic             dclk_o,
  output      logic             userclk1_o,
  output      logic             userclk2_o,
  output      logic             locked_o
);

  logic txoutclk, fb, clk125_mmcm, clk250_mmcm, user1_mmcm, user2_mmcm, clk125, clk250;

  BUFG u_txoutclk_bufg (.I(txoutclk_i), .O(txoutclk));

  MMCME2_BASE #(
    .BANDWIDTH       ("OPTIMIZED"),
    .CLKIN1_PERIOD   (10),
    .CLKFBOUT_MULT_F (10),
    .DIVCLK_DIVIDE   (1),
    .CLKOUT0_DIVIDE_F(8),
    .CLKOUT1_DIVIDE  (4),
    .CLKOUT2_DIVIDE  (UserClk1Divide),
    .CLKOUT3_DIVIDE  (UserClk2Divide)
  ) u_mmcm (
    .CLKIN1  (txoutclk),
    .CLKFBIN (fb),
    .CLKFBOUT(fb),
    .CLKOUT0 (clk125_mmcm),
    .CLKOUT1 (clk250_mmcm),
    .CLKOUT2 (user1_mmcm),
    .CLKOUT3 (user2_mmcm),
    .CLKFBOUTB(), .CLKOUT0B(), .CLKOUT1B(), .CLKOUT2B(), .CLKOUT3B(), .CLKOUT4(), .CLKOUT5(), .CLKOUT6(),
    .LOCKED  (locked_o),
    .PWRDWN  (1'b0),
    .RST     (1'b0)
  );

  BUFG u_clk125_bufg (.I(clk125_mmcm), .O(clk125));
  BUFG u_clk250_bufg (.I(clk250_mmcm), .O(clk250));
  BUFG u_user1_bufg (.I(user1_mmcm), .O(userclk1_o));
  BUFG u_user2_bufg (.I(user2_mmcm), .O(userclk2_o));
  assign dclk_o = clk125;

  // PCLK: 125 MHz until every lane asks for Gen2, back when none does (pipe_pclk_sel_out is in
  // the PCLK domain).
  logic [Lanes-1:0] sel_q, sel_qq;
  logic             gen2_q;
  always_ff @(posedge pclk_o) begin
    sel_q  <= pclk_sel_i;
    sel_qq <= sel_q;
    if (sel_qq == '1) gen2_q <= 1'b1;
    if (sel_qq == '0) gen2_q <= 1'b0;
  end

  BUFGCTRL #(.INIT_OUT(0), .PRESELECT_I0("TRUE")) u_pclk_mux (
    .I0(clk125), .I1(clk250),
    .S0(!gen2_q), .S1(gen2_q),
    .CE0(1'b1), .CE1(1'b1),
    .IGNORE0(1'b0), .IGNORE1(1'b0),
    .O (pclk_o)
  );

endmodule

`default_nettype wire
