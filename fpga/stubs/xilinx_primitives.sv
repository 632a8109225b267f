// Black-box declarations of the Xilinx primitives the board tops instantiate, for the checks
// that run without Vivado (Verilator lint, slang elaboration, open synthesis, where they stay
// black boxes). Ports and parameters as in UG953 (7 series) and UG974 (UltraScale), only those
// the board tops use. The MMCM's real-valued parameters are declared untyped and set with whole
// numbers by the board tops (slang cannot hand real parameters to Yosys; Vivado converts).
`default_nettype none

(* blackbox *)
module IBUFDS_GTE2 #(
  parameter CLKCM_CFG = "TRUE",
  parameter CLKRCV_TRST = "TRUE",
  parameter CLKSWING_CFG = 2'b11
) (
  output wire O,
  output wire ODIV2,
  input  wire CEB,
  input  wire I,
  input  wire IB
);
endmodule

(* blackbox *)
module BUFG (
  output wire O,
  input  wire I
);
endmodule

(* blackbox *)
module BUFGCTRL #(
  parameter INIT_OUT = 0,
  parameter PRESELECT_I0 = "FALSE",
  parameter PRESELECT_I1 = "FALSE"
) (
  output wire O,
  input  wire CE0,
  input  wire CE1,
  input  wire I0,
  input  wire I1,
  input  wire IGNORE0,
  input  wire IGNORE1,
  input  wire S0,
  input  wire S1
);
endmodule

(* blackbox *)
module MMCME2_BASE #(
  parameter BANDWIDTH = "OPTIMIZED",
  parameter CLKFBOUT_MULT_F = 5,
  parameter CLKIN1_PERIOD = 0,
  parameter CLKOUT0_DIVIDE_F = 1,
  parameter integer CLKOUT1_DIVIDE = 1,
  parameter integer CLKOUT2_DIVIDE = 1,
  parameter integer CLKOUT3_DIVIDE = 1,
  parameter integer CLKOUT4_DIVIDE = 1,
  parameter integer CLKOUT5_DIVIDE = 1,
  parameter integer CLKOUT6_DIVIDE = 1,
  parameter integer DIVCLK_DIVIDE = 1,
  parameter STARTUP_WAIT = "FALSE"
) (
  output wire CLKFBOUT,
  output wire CLKFBOUTB,
  output wire CLKOUT0,
  output wire CLKOUT0B,
  output wire CLKOUT1,
  output wire CLKOUT1B,
  output wire CLKOUT2,
  output wire CLKOUT2B,
  output wire CLKOUT3,
  output wire CLKOUT3B,
  output wire CLKOUT4,
  output wire CLKOUT5,
  output wire CLKOUT6,
  output wire LOCKED,
  input  wire CLKFBIN,
  input  wire CLKIN1,
  input  wire PWRDWN,
  input  wire RST
);
endmodule

(* blackbox *)
module IBUFDS_GTE4 #(
  parameter [0:0] REFCLK_EN_TX_PATH = 1'b0,
  parameter [1:0] REFCLK_HROW_CK_SEL = 2'b00,
  parameter [1:0] REFCLK_ICNTL_RX = 2'b00
) (
  output wire O,
  output wire ODIV2,
  input  wire CEB,
  input  wire I,
  input  wire IB
);
endmodule

(* blackbox *)
module BUFG_GT (
  output wire O,
  input  wire CE,
  input  wire CEMASK,
  input  wire CLR,
  input  wire CLRMASK,
  input  wire [2:0] DIV,
  input  wire I
);
endmodule

(* blackbox *)
module MMCME4_BASE #(
  parameter BANDWIDTH = "OPTIMIZED",
  parameter CLKFBOUT_MULT_F = 5,
  parameter CLKIN1_PERIOD = 0,
  parameter CLKOUT0_DIVIDE_F = 1,
  parameter integer CLKOUT1_DIVIDE = 1,
  parameter integer CLKOUT2_DIVIDE = 1,
  parameter integer CLKOUT3_DIVIDE = 1,
  parameter integer CLKOUT4_DIVIDE = 1,
  parameter integer CLKOUT5_DIVIDE = 1,
  parameter integer CLKOUT6_DIVIDE = 1,
  parameter integer DIVCLK_DIVIDE = 1,
  parameter STARTUP_WAIT = "FALSE"
) (
  output wire CLKFBOUT,
  output wire CLKFBOUTB,
  output wire CLKOUT0,
  output wire CLKOUT0B,
  output wire CLKOUT1,
  output wire CLKOUT1B,
  output wire CLKOUT2,
  output wire CLKOUT2B,
  output wire CLKOUT3,
  output wire CLKOUT3B,
  output wire CLKOUT4,
  output wire CLKOUT5,
  output wire CLKOUT6,
  output wire LOCKED,
  input  wire CLKFBIN,
  input  wire CLKIN1,
  input  wire PWRDWN,
  input  wire RST
);
endmodule

`default_nettype wire
