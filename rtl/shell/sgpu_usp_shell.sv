// softgpu on an UltraScale+ PCIe board (Alveo): everything between the XDMA / DMA-Bridge
// Subsystem, configured in AXI Bridge mode by fpga/boards/common/usp/xdma.tcl, and the core.
//
//   XDMA m_axib (BAR0, AXI4) --> sgpu_axi2axil --> sgpu_shell_core (CDC, CAP_BUS, core)
//   core --AXI4--> CDC --> sgpu_axi_guard (reach) --> sgpu_axi_wr_split (contiguous strobes)
//        --> XDMA s_axib (AXI BAR 0: translation 0, so AXI address = bus address)
//   core irq --> sgpu_irq_msi --> usr_irq_req[0] / usr_irq_ack[0] (MSI)
//
// Clock plan (docs/boards.md): XDMA's axi_aclk (250 MHz at 256 bits, Gen3 x8) runs the bridge
// side; the core runs on core_clk_i from its own MMCM.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_usp_shell #(
  /// XDMA AXI data width and the core's (256 for Gen3 x8 at 250 MHz).
  parameter int unsigned DataWidth = 256,
  /// Bus address bits XDMA's AXI BAR reaches (its aperture is [0, 2^AddrBits)).
  parameter int unsigned AddrBits = 48,
  /// ID widths of XDMA's m_axib and s_axib ports.
  parameter int unsigned BarIdWidth = 4,
  parameter int unsigned HostIdWidth = 4,
  parameter logic [31:0] BuildId = 32'h0,
  parameter logic [63:0] MemSegSize = 64'h0
) (
  // ---- XDMA user side (axi_aclk domain)
  input  wire logic                   axi_aclk,
  input  wire logic                   axi_aresetn,
  input  wire logic                   user_lnk_up,

  input  wire logic                   m_axib_awvalid,
  output      logic                   m_axib_awready,
  input  wire logic [BarIdWidth-1:0]  m_axib_awid,
  input  wire logic [63:0]            m_axib_awaddr,
  input  wire logic [7:0]             m_axib_awlen,
  input  wire logic [2:0]             m_axib_awsize,
  input  wire logic [1:0]             m_axib_awburst,
  input  wire logic [2:0]             m_axib_awprot,
  input  wire logic                   m_axib_awlock,
  input  wire logic [3:0]             m_axib_awcache,
  input  wire logic                   m_axib_wvalid,
  output      logic                   m_axib_wready,
  input  wire logic [DataWidth-1:0]   m_axib_wdata,
  input  wire logic [DataWidth/8-1:0] m_axib_wstrb,
  input  wire logic                   m_axib_wlast,
  output      logic                   m_axib_bvalid,
  input  wire logic                   m_axib_bready,
  output      logic [BarIdWidth-1:0]  m_axib_bid,
  output      logic [1:0]             m_axib_bresp,
  input  wire logic                   m_axib_arvalid,
  output      logic                   m_axib_arready,
  input  wire logic [BarIdWidth-1:0]  m_axib_arid,
  input  wire logic [63:0]            m_axib_araddr,
  input  wire logic [7:0]             m_axib_arlen,
  input  wire logic [2:0]             m_axib_arsize,
  input  wire logic [1:0]             m_axib_arburst,
  input  wire logic [2:0]             m_axib_arprot,
  input  wire logic                   m_axib_arlock,
  input  wire logic [3:0]             m_axib_arcache,
  output      logic                   m_axib_rvalid,
  input  wire logic                   m_axib_rready,
  output      logic [BarIdWidth-1:0]  m_axib_rid,
  output      logic [DataWidth-1:0]   m_axib_rdata,
  output      logic [1:0]             m_axib_rresp,
  output      logic                   m_axib_rlast,

  output      logic                   s_axib_awvalid,
  input  wire logic                   s_axib_awready,
  output      logic [HostIdWidth-1:0] s_axib_awid,
  output      logic [63:0]            s_axib_awaddr,
  output      logic [3:0]             s_axib_awregion,
  output      logic [7:0]             s_axib_awlen,
  output      logic [2:0]             s_axib_awsize,
  output      logic [1:0]             s_axib_awburst,
  output      logic                   s_axib_wvalid,
  input  wire logic                   s_axib_wready,
  output      logic [DataWidth-1:0]   s_axib_wdata,
  output      logic [DataWidth/8-1:0] s_axib_wstrb,
  output      logic                   s_axib_wlast,
  input  wire logic                   s_axib_bvalid,
  output      logic                   s_axib_bready,
  input  wire logic [HostIdWidth-1:0] s_axib_bid,
  input  wire logic [1:0]             s_axib_bresp,
  output      logic                   s_axib_arvalid,
  input  wire logic                   s_axib_arready,
  output      logic [HostIdWidth-1:0] s_axib_arid,
  output      logic [63:0]            s_axib_araddr,
  output      logic [3:0]             s_axib_arregion,
  output      logic [7:0]             s_axib_arlen,
  output      logic [2:0]             s_axib_arsize,
  output      logic [1:0]             s_axib_arburst,
  input  wire logic                   s_axib_rvalid,
  output      logic                   s_axib_rready,
  input  wire logic [HostIdWidth-1:0] s_axib_rid,
  input  wire logic [DataWidth-1:0]   s_axib_rdata,
  input  wire logic [1:0]             s_axib_rresp,
  input  wire logic                   s_axib_rlast,

  output      logic [0:0]             usr_irq_req,
  input  wire logic [0:0]             usr_irq_ack,
  input  wire logic                   msi_enable,

  // ---- core clock
  input  wire logic                   core_clk_i,
  /// Asynchronous, active low: the core clock is not usable yet.
  input  wire logic                   core_rst_ni,

  // ---- status: link up, register writes (axi_aclk), interrupt line (core clock)
  output      logic                   link_up_o,
  output      logic                   reg_write_o,
  output      logic                   irq_o
);

  localparam int unsigned IdWidth = 4;  // the core's

  // ------------------------------------------------------------------ resets
  logic bridge_rst_n, core_rst_n, rst_src_n;
  assign rst_src_n = axi_aresetn && core_rst_ni;
  sgpu_rst_sync u_bridge_rst (.clk_i(axi_aclk), .rst_ni(rst_src_n), .rst_no(bridge_rst_n));
  sgpu_rst_sync u_core_rst (.clk_i(core_clk_i), .rst_ni(rst_src_n), .rst_no(core_rst_n));
  assign link_up_o = user_lnk_up;

  // ------------------------------------------------------------------ BAR0 -> register port
  logic        ua_awvalid, ua_awready, ua_wvalid, ua_wready, ua_bvalid, ua_bready;
  logic        ua_arvalid, ua_arready, ua_rvalid, ua_rready;
  logic [11:0] ua_awaddr, ua_araddr;
  logic [2:0]  ua_awprot, ua_arprot;
  logic [31:0] ua_wdata, ua_rdata;
  logic [3:0]  ua_wstrb;
  logic [1:0]  ua_bresp, ua_rresp;
  logic        rearm;

  sgpu_axi2axil #(.DataWidth(DataWidth), .IdWidth(BarIdWidth)) u_bar (
    .clk_i(axi_aclk), .rst_ni(bridge_rst_n),
    .s_axi_awvalid(m_axib_awvalid), .s_axi_awready(m_axib_awready), .s_axi_awid(m_axib_awid),
    .s_axi_awaddr(m_axib_awaddr), .s_axi_awlen(m_axib_awlen), .s_axi_awsize(m_axib_awsize),
    .s_axi_awburst(m_axib_awburst),
    .s_axi_wvalid(m_axib_wvalid), .s_axi_wready(m_axib_wready), .s_axi_wdata(m_axib_wdata),
    .s_axi_wstrb(m_axib_wstrb), .s_axi_wlast(m_axib_wlast),
    .s_axi_bvalid(m_axib_bvalid), .s_axi_bready(m_axib_bready), .s_axi_bid(m_axib_bid), .s_axi_bresp(m_axib_bresp),
    .s_axi_arvalid(m_axib_arvalid), .s_axi_arready(m_axib_arready), .s_axi_arid(m_axib_arid),
    .s_axi_araddr(m_axib_araddr), .s_axi_arlen(m_axib_arlen), .s_axi_arsize(m_axib_arsize),
    .s_axi_arburst(m_axib_arburst),
    .s_axi_rvalid(m_axib_rvalid), .s_axi_rready(m_axib_rready), .s_axi_rid(m_axib_rid), .s_axi_rdata(m_axib_rdata),
    .s_axi_rresp(m_axib_rresp), .s_axi_rlast(m_axib_rlast),
    .m_axil_awvalid(ua_awvalid), .m_axil_awready(ua_awready), .m_axil_awaddr(ua_awaddr), .m_axil_awprot(ua_awprot),
    .m_axil_wvalid(ua_wvalid), .m_axil_wready(ua_wready), .m_axil_wdata(ua_wdata), .m_axil_wstrb(ua_wstrb),
    .m_axil_bvalid(ua_bvalid), .m_axil_bready(ua_bready), .m_axil_bresp(ua_bresp),
    .m_axil_arvalid(ua_arvalid), .m_axil_arready(ua_arready), .m_axil_araddr(ua_araddr), .m_axil_arprot(ua_arprot),
    .m_axil_rvalid(ua_rvalid), .m_axil_rready(ua_rready), .m_axil_rdata(ua_rdata), .m_axil_rresp(ua_rresp),
    .rearm_o(rearm)
  );
  assign reg_write_o = rearm;

  // ------------------------------------------------------------------ core and crossings
  logic                   bm_awvalid, bm_awready, bm_wvalid, bm_wready, bm_wlast, bm_bvalid, bm_bready;
  logic                   bm_arvalid, bm_arready, bm_rvalid, bm_rready, bm_rlast;
  logic [IdWidth-1:0]     bm_awid, bm_bid, bm_arid, bm_rid;
  logic [63:0]            bm_awaddr, bm_araddr;
  logic [7:0]             bm_awlen, bm_arlen;
  logic [2:0]             bm_awsize, bm_arsize;
  logic [1:0]             bm_awburst, bm_arburst, bm_bresp, bm_rresp;
  logic [DataWidth-1:0]   bm_wdata, bm_rdata;
  logic [DataWidth/8-1:0] bm_wstrb;
  logic                   irq_bridge;

  sgpu_shell_core #(
    .DataWidth (DataWidth),
    .IdWidth   (IdWidth),
    .AddrBits  (AddrBits),
    .BuildId   (BuildId),
    .MemSegSize(MemSegSize)
  ) u_core (
    .bridge_clk_i(axi_aclk), .bridge_rst_ni(bridge_rst_n),
    .core_clk_i, .core_rst_ni(core_rst_n),
    .s_axil_awvalid(ua_awvalid), .s_axil_awready(ua_awready), .s_axil_awaddr(ua_awaddr), .s_axil_awprot(ua_awprot),
    .s_axil_wvalid(ua_wvalid), .s_axil_wready(ua_wready), .s_axil_wdata(ua_wdata), .s_axil_wstrb(ua_wstrb),
    .s_axil_bvalid(ua_bvalid), .s_axil_bready(ua_bready), .s_axil_bresp(ua_bresp),
    .s_axil_arvalid(ua_arvalid), .s_axil_arready(ua_arready), .s_axil_araddr(ua_araddr), .s_axil_arprot(ua_arprot),
    .s_axil_rvalid(ua_rvalid), .s_axil_rready(ua_rready), .s_axil_rdata(ua_rdata), .s_axil_rresp(ua_rresp),
    .m_axi_awvalid(bm_awvalid), .m_axi_awready(bm_awready), .m_axi_awid(bm_awid), .m_axi_awaddr(bm_awaddr),
    .m_axi_awlen(bm_awlen), .m_axi_awsize(bm_awsize), .m_axi_awburst(bm_awburst),
    .m_axi_wvalid(bm_wvalid), .m_axi_wready(bm_wready), .m_axi_wdata(bm_wdata), .m_axi_wstrb(bm_wstrb),
    .m_axi_wlast(bm_wlast),
    .m_axi_bvalid(bm_bvalid), .m_axi_bready(bm_bready), .m_axi_bid(bm_bid), .m_axi_bresp(bm_bresp),
    .m_axi_arvalid(bm_arvalid), .m_axi_arready(bm_arready), .m_axi_arid(bm_arid), .m_axi_araddr(bm_araddr),
    .m_axi_arlen(bm_arlen), .m_axi_arsize(bm_arsize), .m_axi_arburst(bm_arburst),
    .m_axi_rvalid(bm_rvalid), .m_axi_rready(bm_rready), .m_axi_rid(bm_rid), .m_axi_rdata(bm_rdata),
    .m_axi_rresp(bm_rresp), .m_axi_rlast(bm_rlast),
    .irq_bridge_o(irq_bridge),
    .irq_core_o  (irq_o)
  );

  // ------------------------------------------------------------------ core -> host memory
  // Beyond the AXI BAR's aperture: refused here.
  logic                   g_awvalid, g_awready, g_wvalid, g_wready, g_wlast, g_bvalid, g_bready;
  logic [IdWidth-1:0]     g_awid, g_bid, g_arid, g_rid;
  logic [63:0]            g_awaddr, g_araddr;
  logic [7:0]             g_awlen, g_arlen;
  logic [2:0]             g_awsize, g_arsize;
  logic [1:0]             g_awburst, g_arburst, g_bresp;
  logic [DataWidth-1:0]   g_wdata;
  logic [DataWidth/8-1:0] g_wstrb;

  sgpu_axi_guard #(.DataWidth(DataWidth), .IdWidth(IdWidth), .AddrBits(AddrBits)) u_guard (
    .clk_i(axi_aclk), .rst_ni(bridge_rst_n),
    .s_axi_awvalid(bm_awvalid), .s_axi_awready(bm_awready), .s_axi_awid(bm_awid), .s_axi_awaddr(bm_awaddr),
    .s_axi_awlen(bm_awlen), .s_axi_awsize(bm_awsize), .s_axi_awburst(bm_awburst),
    .s_axi_wvalid(bm_wvalid), .s_axi_wready(bm_wready), .s_axi_wdata(bm_wdata), .s_axi_wstrb(bm_wstrb),
    .s_axi_wlast(bm_wlast),
    .s_axi_bvalid(bm_bvalid), .s_axi_bready(bm_bready), .s_axi_bid(bm_bid), .s_axi_bresp(bm_bresp),
    .s_axi_arvalid(bm_arvalid), .s_axi_arready(bm_arready), .s_axi_arid(bm_arid), .s_axi_araddr(bm_araddr),
    .s_axi_arlen(bm_arlen), .s_axi_arsize(bm_arsize), .s_axi_arburst(bm_arburst),
    .s_axi_rvalid(bm_rvalid), .s_axi_rready(bm_rready), .s_axi_rid(bm_rid), .s_axi_rdata(bm_rdata),
    .s_axi_rresp(bm_rresp), .s_axi_rlast(bm_rlast),
    .m_axi_awvalid(g_awvalid), .m_axi_awready(g_awready), .m_axi_awid(g_awid), .m_axi_awaddr(g_awaddr),
    .m_axi_awlen(g_awlen), .m_axi_awsize(g_awsize), .m_axi_awburst(g_awburst),
    .m_axi_wvalid(g_wvalid), .m_axi_wready(g_wready), .m_axi_wdata(g_wdata), .m_axi_wstrb(g_wstrb),
    .m_axi_wlast(g_wlast),
    .m_axi_bvalid(g_bvalid), .m_axi_bready(g_bready), .m_axi_bid(g_bid), .m_axi_bresp(g_bresp),
    .m_axi_arvalid(s_axib_arvalid), .m_axi_arready(s_axib_arready), .m_axi_arid(g_arid), .m_axi_araddr(g_araddr),
    .m_axi_arlen(g_arlen), .m_axi_arsize(g_arsize), .m_axi_arburst(g_arburst),
    .m_axi_rvalid(s_axib_rvalid), .m_axi_rready(s_axib_rready), .m_axi_rid(g_rid), .m_axi_rdata(s_axib_rdata),
    .m_axi_rresp(s_axib_rresp), .m_axi_rlast(s_axib_rlast)
  );

  // Reads go to XDMA as they are (IDs widened to its width).
  assign s_axib_arid     = HostIdWidth'(g_arid);
  assign s_axib_araddr   = g_araddr;
  assign s_axib_arregion = 4'h0;
  assign s_axib_arlen    = g_arlen;
  assign s_axib_arsize   = g_arsize;
  assign s_axib_arburst  = g_arburst;
  assign g_rid           = IdWidth'(s_axib_rid);

  // Writes: XDMA's bridge needs contiguous strobes within a burst.
  logic [IdWidth-1:0] sp_awid, sp_bid;
  logic [12:0]        sp_awuser;

  sgpu_axi_wr_split #(
    .DataWidth    (DataWidth),
    .IdWidth      (IdWidth),
    .MaxPieceBytes(4096)
  ) u_split (
    .clk_i(axi_aclk), .rst_ni(bridge_rst_n),
    .max_bytes_i(13'd0),  // XDMA splits at Max_Payload_Size itself
    .s_axi_awvalid(g_awvalid), .s_axi_awready(g_awready), .s_axi_awid(g_awid), .s_axi_awaddr(g_awaddr),
    .s_axi_awlen(g_awlen), .s_axi_awsize(g_awsize), .s_axi_awburst(g_awburst),
    .s_axi_wvalid(g_wvalid), .s_axi_wready(g_wready), .s_axi_wdata(g_wdata), .s_axi_wstrb(g_wstrb),
    .s_axi_wlast(g_wlast),
    .s_axi_bvalid(g_bvalid), .s_axi_bready(g_bready), .s_axi_bid(g_bid), .s_axi_bresp(g_bresp),
    .m_axi_awvalid(s_axib_awvalid), .m_axi_awready(s_axib_awready), .m_axi_awid(sp_awid),
    .m_axi_awaddr(s_axib_awaddr), .m_axi_awlen(s_axib_awlen), .m_axi_awsize(s_axib_awsize),
    .m_axi_awburst(s_axib_awburst), .m_axi_awuser(sp_awuser),
    .m_axi_wvalid(s_axib_wvalid), .m_axi_wready(s_axib_wready), .m_axi_wdata(s_axib_wdata),
    .m_axi_wstrb(s_axib_wstrb), .m_axi_wlast(s_axib_wlast),
    .m_axi_bvalid(s_axib_bvalid), .m_axi_bready(s_axib_bready), .m_axi_bid(sp_bid), .m_axi_bresp(s_axib_bresp)
  );
  assign s_axib_awid     = HostIdWidth'(sp_awid);
  assign s_axib_awregion = 4'h0;
  assign sp_bid          = IdWidth'(s_axib_bid);

  // ------------------------------------------------------------------ interrupt -> MSI
  sgpu_irq_msi u_msi (
    .clk_i(axi_aclk), .rst_ni(bridge_rst_n),
    .irq_i     (irq_bridge),
    .rearm_i   (rearm),
    .enable_i  (msi_enable),
    .msi_req_o (usr_irq_req[0]),
    .msi_ack_i (usr_irq_ack[0]),
    .msi_sent_o()
  );

  // XDMA's protection/cache attributes of BAR accesses, and the pieces' byte counts, are not
  // needed here.
  logic unused;
  assign unused = ^{m_axib_awprot, m_axib_awlock, m_axib_awcache, m_axib_arprot, m_axib_arlock, m_axib_arcache,
                    sp_awuser};

  `SGPU_ASSERT_STATIC(g_bad_id, HostIdWidth >= IdWidth, "HostIdWidth must hold the core's AXI IDs")

endmodule

`default_nettype wire
