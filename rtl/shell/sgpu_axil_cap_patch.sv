// Register-port pass-through that reports the board's reach in CAP_BUS.addr_bits.
//
// The core reports the width of its own AXI addresses; behind a bridge that reaches less of the
// host's bus address space, the device as a whole reaches less, and the host must learn that
// before it hands the device a DMA address (docs/boards.md, "Addresses beyond the bridge's
// reach"). Reads of CAP_BUS get addr_bits = min(core's value, AddrBits); everything else passes
// unchanged. The register offset and field come from spec/registers.rdl (sgpu_reg_map_pkg).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axil_cap_patch #(
  /// Bus address bits the bridge reaches.
  parameter int unsigned AddrBits = 64
) (
  input  wire logic        clk_i,
  input  wire logic        rst_ni,

  input  wire logic        s_axil_awvalid,
  output      logic        s_axil_awready,
  input  wire logic [11:0] s_axil_awaddr,
  input  wire logic [2:0]  s_axil_awprot,
  input  wire logic        s_axil_wvalid,
  output      logic        s_axil_wready,
  input  wire logic [31:0] s_axil_wdata,
  input  wire logic [3:0]  s_axil_wstrb,
  output      logic        s_axil_bvalid,
  input  wire logic        s_axil_bready,
  output      logic [1:0]  s_axil_bresp,
  input  wire logic        s_axil_arvalid,
  output      logic        s_axil_arready,
  input  wire logic [11:0] s_axil_araddr,
  input  wire logic [2:0]  s_axil_arprot,
  output      logic        s_axil_rvalid,
  input  wire logic        s_axil_rready,
  output      logic [31:0] s_axil_rdata,
  output      logic [1:0]  s_axil_rresp,

  output      logic        m_axil_awvalid,
  input  wire logic        m_axil_awready,
  output      logic [11:0] m_axil_awaddr,
  output      logic [2:0]  m_axil_awprot,
  output      logic        m_axil_wvalid,
  input  wire logic        m_axil_wready,
  output      logic [31:0] m_axil_wdata,
  output      logic [3:0]  m_axil_wstrb,
  input  wire logic        m_axil_bvalid,
  output      logic        m_axil_bready,
  input  wire logic [1:0]  m_axil_bresp,
  output      logic        m_axil_arvalid,
  input  wire logic        m_axil_arready,
  output      logic [11:0] m_axil_araddr,
  output      logic [2:0]  m_axil_arprot,
  input  wire logic        m_axil_rvalid,
  output      logic        m_axil_rready,
  input  wire logic [31:0] m_axil_rdata,
  input  wire logic [1:0]  m_axil_rresp
);

  import sgpu_reg_map_pkg::CapBusOffset;
  import sgpu_reg_map_pkg::CapBusAddrBitsLsb;
  import sgpu_reg_map_pkg::CapBusAddrBitsWidth;

  localparam int unsigned FieldMax = (1 << CapBusAddrBitsWidth) - 1;
  localparam logic [CapBusAddrBitsWidth-1:0] Reach =
      CapBusAddrBitsWidth'(AddrBits > FieldMax ? FieldMax : AddrBits);

  // Writes pass through.
  assign m_axil_awvalid = s_axil_awvalid;
  assign s_axil_awready = m_axil_awready;
  assign m_axil_awaddr  = s_axil_awaddr;
  assign m_axil_awprot  = s_axil_awprot;
  assign m_axil_wvalid  = s_axil_wvalid;
  assign s_axil_wready  = m_axil_wready;
  assign m_axil_wdata   = s_axil_wdata;
  assign m_axil_wstrb   = s_axil_wstrb;
  assign s_axil_bvalid  = m_axil_bvalid;
  assign m_axil_bready  = s_axil_bready;
  assign s_axil_bresp   = m_axil_bresp;

  // Reads: remember, in order, which ones address CAP_BUS (AXI-Lite answers in order).
  logic flag_in_ready, flag_out_valid, flag_out;
  logic ar_fire, r_fire;

  assign m_axil_arvalid = s_axil_arvalid && flag_in_ready;
  assign s_axil_arready = m_axil_arready && flag_in_ready;
  assign m_axil_araddr  = s_axil_araddr;
  assign m_axil_arprot  = s_axil_arprot;
  assign ar_fire        = m_axil_arvalid && m_axil_arready;

  sgpu_fifo #(.Width(1), .Depth(4)) u_flags (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (ar_fire),
    .in_ready_o (flag_in_ready),
    .in_data_i  ({s_axil_araddr[11:2], 2'b00} == CapBusOffset),
    .out_valid_o(flag_out_valid),
    .out_ready_i(r_fire),
    .out_data_o (flag_out),
    .count_o    ()
  );

  logic [CapBusAddrBitsWidth-1:0] core_bits;
  assign core_bits = m_axil_rdata[CapBusAddrBitsLsb +: CapBusAddrBitsWidth];

  always_comb begin
    s_axil_rdata = m_axil_rdata;
    if (flag_out && core_bits > Reach) s_axil_rdata[CapBusAddrBitsLsb +: CapBusAddrBitsWidth] = Reach;
  end
  assign s_axil_rvalid = m_axil_rvalid;
  assign m_axil_rready = s_axil_rready;
  assign s_axil_rresp  = m_axil_rresp;
  assign r_fire        = m_axil_rvalid && s_axil_rready;

  `SGPU_ASSERT(ResponseHasRequest, m_axil_rvalid |-> flag_out_valid)

endmodule

`default_nettype wire
