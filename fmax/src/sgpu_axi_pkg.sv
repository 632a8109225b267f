// AXI4 request/response structs of the design's default widths (sgpu_top's defaults: 64-bit
// data, 4-bit IDs), made with the macros of sgpu_axi_typedef.svh. They are the defaults of the
// modules' type parameters, so a block synthesised or linted on its own has working ports;
// sgpu_top makes its own from its DataWidth and IdWidth.
`include "sgpu_axi_typedef.svh"

`default_nettype none

package sgpu_axi_pkg;

  localparam int unsigned DefaultIdWidth   = 4;
  localparam int unsigned DefaultDataWidth = 64;

  `SGPU_AXI_TYPEDEF_RD(axi_rd, logic [DefaultIdWidth-1:0], logic [DefaultDataWidth-1:0])
  `SGPU_AXI_TYPEDEF_WR(axi_wr, logic [DefaultIdWidth-1:0], logic [DefaultDataWidth-1:0],
                       logic [DefaultDataWidth/8-1:0])

endpackage

`default_nettype wire
