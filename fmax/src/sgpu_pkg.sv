// Project-wide types and constants of the softgpu front end.
`default_nettype none

package sgpu_pkg;

  /// Width of every bus and GPU address in the design.
  localparam int unsigned AddrWidth = 64;
  /// Page size of the GPU address space (and of the GART).
  localparam int unsigned PageShift = 12;
  localparam int unsigned PageBytes = 1 << PageShift;
  /// AXI forbids a burst from crossing a 4 KiB boundary.
  localparam int unsigned AxiBoundaryShift = 12;

  typedef logic [AddrWidth-1:0] addr_t;
  /// Page number: an address without its offset inside the page.
  typedef logic [AddrWidth-PageShift-1:0] pfn_t;

  /// One 64-bit word write of the command processor's write path (sgpu_cp -> sgpu_wr_xlate ->
  /// sgpu_axi_wr): an 8-byte aligned address, the word and its byte strobes.
  typedef struct packed {
    addr_t       addr;
    logic [63:0] data;
    logic [7:0]  strb;
  } word_wr_t;

  /// AXI response codes.
  typedef enum logic [1:0] {
    AxiRespOkay   = 2'b00,
    AxiRespExOkay = 2'b01,
    AxiRespSlvErr = 2'b10,
    AxiRespDecErr = 2'b11
  } axi_resp_e;

  /// AXI burst types (only INCR is issued by this design).
  localparam logic [1:0] AxiBurstIncr = 2'b01;

endpackage

`default_nettype wire
