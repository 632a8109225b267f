// AXI4 clock-domain crossing: one asynchronous FIFO per channel, from a manager in the s_
// domain (the core) to a subordinate in the m_ domain (the PCIe bridge). The data channels (W,
// R) are deep enough to stream a beat per cycle across the crossing; the address and response
// channels hold a few transactions.
`default_nettype none

module sgpu_cdc_axi #(
  parameter int unsigned DataWidth = 128,
  parameter int unsigned IdWidth = 4,
  parameter int unsigned AddrWidth = 64,
  /// Entries of the AW, AR and B FIFOs (power of two >= 4).
  parameter int unsigned AddrDepth = 8,
  /// Entries of the W and R FIFOs (power of two >= 4).
  parameter int unsigned DataDepth = 16
) (
  input  wire logic                   s_clk_i,
  input  wire logic                   s_rst_ni,
  input  wire logic                   s_axi_awvalid,
  output      logic                   s_axi_awready,
  input  wire logic [IdWidth-1:0]     s_axi_awid,
  input  wire logic [AddrWidth-1:0]   s_axi_awaddr,
  input  wire logic [7:0]             s_axi_awlen,
  input  wire logic [2:0]             s_axi_awsize,
  input  wire logic [1:0]             s_axi_awburst,
  input  wire logic                   s_axi_wvalid,
  output      logic                   s_axi_wready,
  input  wire logic [DataWidth-1:0]   s_axi_wdata,
  input  wire logic [DataWidth/8-1:0] s_axi_wstrb,
  input  wire logic                   s_axi_wlast,
  output      logic                   s_axi_bvalid,
  input  wire logic                   s_axi_bready,
  output      logic [IdWidth-1:0]     s_axi_bid,
  output      logic [1:0]             s_axi_bresp,
  input  wire logic                   s_axi_arvalid,
  output      logic                   s_axi_arready,
  input  wire logic [IdWidth-1:0]     s_axi_arid,
  input  wire logic [AddrWidth-1:0]   s_axi_araddr,
  input  wire logic [7:0]             s_axi_arlen,
  input  wire logic [2:0]             s_axi_arsize,
  input  wire logic [1:0]             s_axi_arburst,
  output      logic                   s_axi_rvalid,
  input  wire logic                   s_axi_rready,
  output      logic [IdWidth-1:0]     s_axi_rid,
  output      logic [DataWidth-1:0]   s_axi_rdata,
  output      logic [1:0]             s_axi_rresp,
  output      logic                   s_axi_rlast,

  input  wire logic                   m_clk_i,
  input  wire logic                   m_rst_ni,
  output      logic                   m_axi_awvalid,
  input  wire logic                   m_axi_awready,
  output      logic [IdWidth-1:0]     m_axi_awid,
  output      logic [AddrWidth-1:0]   m_axi_awaddr,
  output      logic [7:0]             m_axi_awlen,
  output      logic [2:0]             m_axi_awsize,
  output      logic [1:0]             m_axi_awburst,
  output      logic                   m_axi_wvalid,
  input  wire logic                   m_axi_wready,
  output      logic [DataWidth-1:0]   m_axi_wdata,
  output      logic [DataWidth/8-1:0] m_axi_wstrb,
  output      logic                   m_axi_wlast,
  input  wire logic                   m_axi_bvalid,
  output      logic                   m_axi_bready,
  input  wire logic [IdWidth-1:0]     m_axi_bid,
  input  wire logic [1:0]             m_axi_bresp,
  output      logic                   m_axi_arvalid,
  input  wire logic                   m_axi_arready,
  output      logic [IdWidth-1:0]     m_axi_arid,
  output      logic [AddrWidth-1:0]   m_axi_araddr,
  output      logic [7:0]             m_axi_arlen,
  output      logic [2:0]             m_axi_arsize,
  output      logic [1:0]             m_axi_arburst,
  input  wire logic                   m_axi_rvalid,
  output      logic                   m_axi_rready,
  input  wire logic [IdWidth-1:0]     m_axi_rid,
  input  wire logic [DataWidth-1:0]   m_axi_rdata,
  input  wire logic [1:0]             m_axi_rresp,
  input  wire logic                   m_axi_rlast
);

  localparam int unsigned AxWidth = IdWidth + AddrWidth + 8 + 3 + 2;

  sgpu_cdc_fifo #(.Width(AxWidth), .Depth(AddrDepth)) u_aw (
    .src_clk_i(s_clk_i), .src_rst_ni(s_rst_ni), .src_valid_i(s_axi_awvalid), .src_ready_o(s_axi_awready),
    .src_data_i({s_axi_awid, s_axi_awaddr, s_axi_awlen, s_axi_awsize, s_axi_awburst}),
    .dst_clk_i(m_clk_i), .dst_rst_ni(m_rst_ni), .dst_valid_o(m_axi_awvalid), .dst_ready_i(m_axi_awready),
    .dst_data_o({m_axi_awid, m_axi_awaddr, m_axi_awlen, m_axi_awsize, m_axi_awburst})
  );

  sgpu_cdc_fifo #(.Width(DataWidth + DataWidth / 8 + 1), .Depth(DataDepth)) u_w (
    .src_clk_i(s_clk_i), .src_rst_ni(s_rst_ni), .src_valid_i(s_axi_wvalid), .src_ready_o(s_axi_wready),
    .src_data_i({s_axi_wdata, s_axi_wstrb, s_axi_wlast}),
    .dst_clk_i(m_clk_i), .dst_rst_ni(m_rst_ni), .dst_valid_o(m_axi_wvalid), .dst_ready_i(m_axi_wready),
    .dst_data_o({m_axi_wdata, m_axi_wstrb, m_axi_wlast})
  );

  sgpu_cdc_fifo #(.Width(IdWidth + 2), .Depth(AddrDepth)) u_b (
    .src_clk_i(m_clk_i), .src_rst_ni(m_rst_ni), .src_valid_i(m_axi_bvalid), .src_ready_o(m_axi_bready),
    .src_data_i({m_axi_bid, m_axi_bresp}),
    .dst_clk_i(s_clk_i), .dst_rst_ni(s_rst_ni), .dst_valid_o(s_axi_bvalid), .dst_ready_i(s_axi_bready),
    .dst_data_o({s_axi_bid, s_axi_bresp})
  );

  sgpu_cdc_fifo #(.Width(AxWidth), .Depth(AddrDepth)) u_ar (
    .src_clk_i(s_clk_i), .src_rst_ni(s_rst_ni), .src_valid_i(s_axi_arvalid), .src_ready_o(s_axi_arready),
    .src_data_i({s_axi_arid, s_axi_araddr, s_axi_arlen, s_axi_arsize, s_axi_arburst}),
    .dst_clk_i(m_clk_i), .dst_rst_ni(m_rst_ni), .dst_valid_o(m_axi_arvalid), .dst_ready_i(m_axi_arready),
    .dst_data_o({m_axi_arid, m_axi_araddr, m_axi_arlen, m_axi_arsize, m_axi_arburst})
  );

  sgpu_cdc_fifo #(.Width(IdWidth + DataWidth + 2 + 1), .Depth(DataDepth)) u_r (
    .src_clk_i(m_clk_i), .src_rst_ni(m_rst_ni), .src_valid_i(m_axi_rvalid), .src_ready_o(m_axi_rready),
    .src_data_i({m_axi_rid, m_axi_rdata, m_axi_rresp, m_axi_rlast}),
    .dst_clk_i(s_clk_i), .dst_rst_ni(s_rst_ni), .dst_valid_o(s_axi_rvalid), .dst_ready_i(s_axi_rready),
    .dst_data_o({s_axi_rid, s_axi_rdata, s_axi_rresp, s_axi_rlast})
  );

endmodule

`default_nettype wire
