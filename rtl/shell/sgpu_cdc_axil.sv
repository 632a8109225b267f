// AXI4-Lite clock-domain crossing: one asynchronous FIFO per channel. The subordinate side
// (s_axil, from the bridge) and the manager side (m_axil, to the register block) may run at
// any frequencies. Accesses stay in order; a few can be in flight.
`default_nettype none

module sgpu_cdc_axil #(
  parameter int unsigned AddrWidth = 12,
  /// Entries per channel FIFO (power of two >= 4).
  parameter int unsigned Depth = 4
) (
  input  wire logic                 s_clk_i,
  input  wire logic                 s_rst_ni,
  input  wire logic                 s_axil_awvalid,
  output      logic                 s_axil_awready,
  input  wire logic [AddrWidth-1:0] s_axil_awaddr,
  input  wire logic [2:0]           s_axil_awprot,
  input  wire logic                 s_axil_wvalid,
  output      logic                 s_axil_wready,
  input  wire logic [31:0]          s_axil_wdata,
  input  wire logic [3:0]           s_axil_wstrb,
  output      logic                 s_axil_bvalid,
  input  wire logic                 s_axil_bready,
  output      logic [1:0]           s_axil_bresp,
  input  wire logic                 s_axil_arvalid,
  output      logic                 s_axil_arready,
  input  wire logic [AddrWidth-1:0] s_axil_araddr,
  input  wire logic [2:0]           s_axil_arprot,
  output      logic                 s_axil_rvalid,
  input  wire logic                 s_axil_rready,
  output      logic [31:0]          s_axil_rdata,
  output      logic [1:0]           s_axil_rresp,

  input  wire logic                 m_clk_i,
  input  wire logic                 m_rst_ni,
  output      logic                 m_axil_awvalid,
  input  wire logic                 m_axil_awready,
  output      logic [AddrWidth-1:0] m_axil_awaddr,
  output      logic [2:0]           m_axil_awprot,
  output      logic                 m_axil_wvalid,
  input  wire logic                 m_axil_wready,
  output      logic [31:0]          m_axil_wdata,
  output      logic [3:0]           m_axil_wstrb,
  input  wire logic                 m_axil_bvalid,
  output      logic                 m_axil_bready,
  input  wire logic [1:0]           m_axil_bresp,
  output      logic                 m_axil_arvalid,
  input  wire logic                 m_axil_arready,
  output      logic [AddrWidth-1:0] m_axil_araddr,
  output      logic [2:0]           m_axil_arprot,
  input  wire logic                 m_axil_rvalid,
  output      logic                 m_axil_rready,
  input  wire logic [31:0]          m_axil_rdata,
  input  wire logic [1:0]           m_axil_rresp
);

  sgpu_cdc_fifo #(.Width(AddrWidth + 3), .Depth(Depth)) u_aw (
    .src_clk_i(s_clk_i), .src_rst_ni(s_rst_ni),
    .src_valid_i(s_axil_awvalid), .src_ready_o(s_axil_awready), .src_data_i({s_axil_awaddr, s_axil_awprot}),
    .dst_clk_i(m_clk_i), .dst_rst_ni(m_rst_ni),
    .dst_valid_o(m_axil_awvalid), .dst_ready_i(m_axil_awready), .dst_data_o({m_axil_awaddr, m_axil_awprot})
  );

  sgpu_cdc_fifo #(.Width(32 + 4), .Depth(Depth)) u_w (
    .src_clk_i(s_clk_i), .src_rst_ni(s_rst_ni),
    .src_valid_i(s_axil_wvalid), .src_ready_o(s_axil_wready), .src_data_i({s_axil_wdata, s_axil_wstrb}),
    .dst_clk_i(m_clk_i), .dst_rst_ni(m_rst_ni),
    .dst_valid_o(m_axil_wvalid), .dst_ready_i(m_axil_wready), .dst_data_o({m_axil_wdata, m_axil_wstrb})
  );

  sgpu_cdc_fifo #(.Width(2), .Depth(Depth)) u_b (
    .src_clk_i(m_clk_i), .src_rst_ni(m_rst_ni),
    .src_valid_i(m_axil_bvalid), .src_ready_o(m_axil_bready), .src_data_i(m_axil_bresp),
    .dst_clk_i(s_clk_i), .dst_rst_ni(s_rst_ni),
    .dst_valid_o(s_axil_bvalid), .dst_ready_i(s_axil_bready), .dst_data_o(s_axil_bresp)
  );

  sgpu_cdc_fifo #(.Width(AddrWidth + 3), .Depth(Depth)) u_ar (
    .src_clk_i(s_clk_i), .src_rst_ni(s_rst_ni),
    .src_valid_i(s_axil_arvalid), .src_ready_o(s_axil_arready), .src_data_i({s_axil_araddr, s_axil_arprot}),
    .dst_clk_i(m_clk_i), .dst_rst_ni(m_rst_ni),
    .dst_valid_o(m_axil_arvalid), .dst_ready_i(m_axil_arready), .dst_data_o({m_axil_araddr, m_axil_arprot})
  );

  sgpu_cdc_fifo #(.Width(32 + 2), .Depth(Depth)) u_r (
    .src_clk_i(m_clk_i), .src_rst_ni(m_rst_ni),
    .src_valid_i(m_axil_rvalid), .src_ready_o(m_axil_rready), .src_data_i({m_axil_rdata, m_axil_rresp}),
    .dst_clk_i(s_clk_i), .dst_rst_ni(s_rst_ni),
    .dst_valid_o(s_axil_rvalid), .dst_ready_i(s_axil_rready), .dst_data_o({s_axil_rdata, s_axil_rresp})
  );

endmodule

`default_nettype wire
