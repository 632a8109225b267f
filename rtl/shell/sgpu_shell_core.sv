// The part every board shell shares: the core (sgpu_top) in its own clock domain, with the
// crossings to the bridge's clock domain: the register port (AXI4-Lite, with the board's reach
// reported in CAP_BUS), the host-memory port (AXI4) and the interrupt line.
`default_nettype none

module sgpu_shell_core #(
  parameter int unsigned DataWidth = 128,
  parameter int unsigned IdWidth = 4,
  /// Bus address bits the bridge reaches (reported in CAP_BUS.addr_bits when below 64).
  parameter int unsigned AddrBits = 64,
  parameter logic [31:0] BuildId = 32'h0,
  parameter logic [63:0] MemSegSize = 64'h0
) (
  input  wire logic                   bridge_clk_i,
  input  wire logic                   bridge_rst_ni,
  input  wire logic                   core_clk_i,
  input  wire logic                   core_rst_ni,

  // Register port, bridge side.
  input  wire logic                   s_axil_awvalid,
  output      logic                   s_axil_awready,
  input  wire logic [11:0]            s_axil_awaddr,
  input  wire logic [2:0]             s_axil_awprot,
  input  wire logic                   s_axil_wvalid,
  output      logic                   s_axil_wready,
  input  wire logic [31:0]            s_axil_wdata,
  input  wire logic [3:0]             s_axil_wstrb,
  output      logic                   s_axil_bvalid,
  input  wire logic                   s_axil_bready,
  output      logic [1:0]             s_axil_bresp,
  input  wire logic                   s_axil_arvalid,
  output      logic                   s_axil_arready,
  input  wire logic [11:0]            s_axil_araddr,
  input  wire logic [2:0]             s_axil_arprot,
  output      logic                   s_axil_rvalid,
  input  wire logic                   s_axil_rready,
  output      logic [31:0]            s_axil_rdata,
  output      logic [1:0]             s_axil_rresp,

  // Host-memory port, bridge side.
  output      logic                   m_axi_awvalid,
  input  wire logic                   m_axi_awready,
  output      logic [IdWidth-1:0]     m_axi_awid,
  output      logic [63:0]            m_axi_awaddr,
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
  output      logic [63:0]            m_axi_araddr,
  output      logic [7:0]             m_axi_arlen,
  output      logic [2:0]             m_axi_arsize,
  output      logic [1:0]             m_axi_arburst,
  input  wire logic                   m_axi_rvalid,
  output      logic                   m_axi_rready,
  input  wire logic [IdWidth-1:0]     m_axi_rid,
  input  wire logic [DataWidth-1:0]   m_axi_rdata,
  input  wire logic [1:0]             m_axi_rresp,
  input  wire logic                   m_axi_rlast,

  /// The core's interrupt line, synchronised into the bridge clock domain.
  output      logic                   irq_bridge_o,
  /// The core's interrupt line (core clock domain).
  output      logic                   irq_core_o
);

  // ------------------------------------------------------------------ register port
  logic        ca_awvalid, ca_awready, ca_wvalid, ca_wready, ca_bvalid, ca_bready;
  logic        ca_arvalid, ca_arready, ca_rvalid, ca_rready;
  logic [11:0] ca_awaddr, ca_araddr;
  logic [2:0]  ca_awprot, ca_arprot;
  logic [31:0] ca_wdata, ca_rdata;
  logic [3:0]  ca_wstrb;
  logic [1:0]  ca_bresp, ca_rresp;

  sgpu_cdc_axil #(.AddrWidth(12)) u_cdc_regs (
    .s_clk_i(bridge_clk_i), .s_rst_ni(bridge_rst_ni),
    .s_axil_awvalid, .s_axil_awready, .s_axil_awaddr, .s_axil_awprot,
    .s_axil_wvalid, .s_axil_wready, .s_axil_wdata, .s_axil_wstrb,
    .s_axil_bvalid, .s_axil_bready, .s_axil_bresp,
    .s_axil_arvalid, .s_axil_arready, .s_axil_araddr, .s_axil_arprot,
    .s_axil_rvalid, .s_axil_rready, .s_axil_rdata, .s_axil_rresp,
    .m_clk_i(core_clk_i), .m_rst_ni(core_rst_ni),
    .m_axil_awvalid(ca_awvalid), .m_axil_awready(ca_awready), .m_axil_awaddr(ca_awaddr), .m_axil_awprot(ca_awprot),
    .m_axil_wvalid(ca_wvalid), .m_axil_wready(ca_wready), .m_axil_wdata(ca_wdata), .m_axil_wstrb(ca_wstrb),
    .m_axil_bvalid(ca_bvalid), .m_axil_bready(ca_bready), .m_axil_bresp(ca_bresp),
    .m_axil_arvalid(ca_arvalid), .m_axil_arready(ca_arready), .m_axil_araddr(ca_araddr), .m_axil_arprot(ca_arprot),
    .m_axil_rvalid(ca_rvalid), .m_axil_rready(ca_rready), .m_axil_rdata(ca_rdata), .m_axil_rresp(ca_rresp)
  );

  logic        r_awvalid, r_awready, r_wvalid, r_wready, r_bvalid, r_bready;
  logic        r_arvalid, r_arready, r_rvalid, r_rready;
  logic [11:0] r_awaddr, r_araddr;
  logic [2:0]  r_awprot, r_arprot;
  logic [31:0] r_wdata, r_rdata;
  logic [3:0]  r_wstrb;
  logic [1:0]  r_bresp, r_rresp;

  sgpu_axil_cap_patch #(.AddrBits(AddrBits)) u_cap (
    .clk_i(core_clk_i), .rst_ni(core_rst_ni),
    .s_axil_awvalid(ca_awvalid), .s_axil_awready(ca_awready), .s_axil_awaddr(ca_awaddr), .s_axil_awprot(ca_awprot),
    .s_axil_wvalid(ca_wvalid), .s_axil_wready(ca_wready), .s_axil_wdata(ca_wdata), .s_axil_wstrb(ca_wstrb),
    .s_axil_bvalid(ca_bvalid), .s_axil_bready(ca_bready), .s_axil_bresp(ca_bresp),
    .s_axil_arvalid(ca_arvalid), .s_axil_arready(ca_arready), .s_axil_araddr(ca_araddr), .s_axil_arprot(ca_arprot),
    .s_axil_rvalid(ca_rvalid), .s_axil_rready(ca_rready), .s_axil_rdata(ca_rdata), .s_axil_rresp(ca_rresp),
    .m_axil_awvalid(r_awvalid), .m_axil_awready(r_awready), .m_axil_awaddr(r_awaddr), .m_axil_awprot(r_awprot),
    .m_axil_wvalid(r_wvalid), .m_axil_wready(r_wready), .m_axil_wdata(r_wdata), .m_axil_wstrb(r_wstrb),
    .m_axil_bvalid(r_bvalid), .m_axil_bready(r_bready), .m_axil_bresp(r_bresp),
    .m_axil_arvalid(r_arvalid), .m_axil_arready(r_arready), .m_axil_araddr(r_araddr), .m_axil_arprot(r_arprot),
    .m_axil_rvalid(r_rvalid), .m_axil_rready(r_rready), .m_axil_rdata(r_rdata), .m_axil_rresp(r_rresp)
  );

  // ------------------------------------------------------------------ the core
  logic                   c_awvalid, c_awready, c_wvalid, c_wready, c_wlast, c_bvalid, c_bready;
  logic                   c_arvalid, c_arready, c_rvalid, c_rready, c_rlast;
  logic [IdWidth-1:0]     c_awid, c_bid, c_arid, c_rid;
  logic [63:0]            c_awaddr, c_araddr;
  logic [7:0]             c_awlen, c_arlen;
  logic [2:0]             c_awsize, c_arsize;
  logic [1:0]             c_awburst, c_arburst, c_bresp, c_rresp;
  logic [DataWidth-1:0]   c_wdata, c_rdata;
  logic [DataWidth/8-1:0] c_wstrb;

  sgpu_top #(
    .DataWidth (DataWidth),
    .IdWidth   (IdWidth),
    .BuildId   (BuildId),
    .MemSegSize(MemSegSize)
  ) u_top (
    .clk_i (core_clk_i),
    .rst_ni(core_rst_ni),
    .s_axil_awvalid(r_awvalid), .s_axil_awready(r_awready), .s_axil_awaddr(r_awaddr), .s_axil_awprot(r_awprot),
    .s_axil_wvalid(r_wvalid), .s_axil_wready(r_wready), .s_axil_wdata(r_wdata), .s_axil_wstrb(r_wstrb),
    .s_axil_bvalid(r_bvalid), .s_axil_bready(r_bready), .s_axil_bresp(r_bresp),
    .s_axil_arvalid(r_arvalid), .s_axil_arready(r_arready), .s_axil_araddr(r_araddr), .s_axil_arprot(r_arprot),
    .s_axil_rvalid(r_rvalid), .s_axil_rready(r_rready), .s_axil_rdata(r_rdata), .s_axil_rresp(r_rresp),
    .m_axi_arvalid(c_arvalid), .m_axi_arready(c_arready), .m_axi_arid(c_arid), .m_axi_araddr(c_araddr),
    .m_axi_arlen(c_arlen), .m_axi_arsize(c_arsize), .m_axi_arburst(c_arburst),
    .m_axi_rvalid(c_rvalid), .m_axi_rready(c_rready), .m_axi_rid(c_rid), .m_axi_rdata(c_rdata),
    .m_axi_rresp(c_rresp), .m_axi_rlast(c_rlast),
    .m_axi_awvalid(c_awvalid), .m_axi_awready(c_awready), .m_axi_awid(c_awid), .m_axi_awaddr(c_awaddr),
    .m_axi_awlen(c_awlen), .m_axi_awsize(c_awsize), .m_axi_awburst(c_awburst),
    .m_axi_wvalid(c_wvalid), .m_axi_wready(c_wready), .m_axi_wdata(c_wdata), .m_axi_wstrb(c_wstrb),
    .m_axi_wlast(c_wlast),
    .m_axi_bvalid(c_bvalid), .m_axi_bready(c_bready), .m_axi_bid(c_bid), .m_axi_bresp(c_bresp),
    .irq_o(irq_core_o)
  );

  // ------------------------------------------------------------------ host-memory port
  sgpu_cdc_axi #(.DataWidth(DataWidth), .IdWidth(IdWidth)) u_cdc_mem (
    .s_clk_i(core_clk_i), .s_rst_ni(core_rst_ni),
    .s_axi_awvalid(c_awvalid), .s_axi_awready(c_awready), .s_axi_awid(c_awid), .s_axi_awaddr(c_awaddr),
    .s_axi_awlen(c_awlen), .s_axi_awsize(c_awsize), .s_axi_awburst(c_awburst),
    .s_axi_wvalid(c_wvalid), .s_axi_wready(c_wready), .s_axi_wdata(c_wdata), .s_axi_wstrb(c_wstrb),
    .s_axi_wlast(c_wlast),
    .s_axi_bvalid(c_bvalid), .s_axi_bready(c_bready), .s_axi_bid(c_bid), .s_axi_bresp(c_bresp),
    .s_axi_arvalid(c_arvalid), .s_axi_arready(c_arready), .s_axi_arid(c_arid), .s_axi_araddr(c_araddr),
    .s_axi_arlen(c_arlen), .s_axi_arsize(c_arsize), .s_axi_arburst(c_arburst),
    .s_axi_rvalid(c_rvalid), .s_axi_rready(c_rready), .s_axi_rid(c_rid), .s_axi_rdata(c_rdata),
    .s_axi_rresp(c_rresp), .s_axi_rlast(c_rlast),
    .m_clk_i(bridge_clk_i), .m_rst_ni(bridge_rst_ni),
    .m_axi_awvalid, .m_axi_awready, .m_axi_awid, .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize, .m_axi_awburst,
    .m_axi_wvalid, .m_axi_wready, .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast,
    .m_axi_bvalid, .m_axi_bready, .m_axi_bid, .m_axi_bresp,
    .m_axi_arvalid, .m_axi_arready, .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize, .m_axi_arburst,
    .m_axi_rvalid, .m_axi_rready, .m_axi_rid, .m_axi_rdata, .m_axi_rresp, .m_axi_rlast
  );

  // ------------------------------------------------------------------ interrupt line
  sgpu_sync u_irq_sync (
    .clk_i (bridge_clk_i),
    .rst_ni(bridge_rst_ni),
    .d_i   (irq_core_o),
    .q_o   (irq_bridge_o)
  );

endmodule

`default_nettype wire
