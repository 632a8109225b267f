// Board top for the UltraScale+ Alveo cards: PCIe pins, XDMA in AXI Bridge mode (xdma_0,
// created from fpga/boards/common/usp/xdma.tcl), the core's clock, the shell. Pins, the PCIe
// block and the GT quads are in the board's XDC and xdma.tcl settings.
//
// Clock plan (docs/boards.md): the slot's 100 MHz reference clock enters IBUFDS_GTE4; O feeds
// the GTs (sys_clk_gt), ODIV2 through BUFG_GT feeds XDMA's sys_clk and the core's MMCM (1000
// MHz VCO / 4 = 250 MHz core clock). XDMA's axi_aclk (250 MHz for Gen3 x8 at 256 bits) runs the
// bridge side; it and the core clock are unrelated: the shell crosses between them.
`default_nettype none

module sgpu_usp_board #(
  parameter int unsigned Lanes = 8,
  parameter logic [31:0] BuildId = 32'h0,
  /// Core clock = 1000 MHz / CoreClockDivide.
  parameter int unsigned CoreClockDivide = 4
) (
  input  wire logic             pcie_refclk_p,
  input  wire logic             pcie_refclk_n,
  input  wire logic             pcie_perst_n,
  input  wire logic [Lanes-1:0] pcie_rx_p,
  input  wire logic [Lanes-1:0] pcie_rx_n,
  output      logic [Lanes-1:0] pcie_tx_p,
  output      logic [Lanes-1:0] pcie_tx_n,
  /// HBM catastrophic-temperature input of the Alveo U50, driven low (no HBM in use).
  output      logic             hbm_cattrip
);

  // ------------------------------------------------------------------ reference clock
  logic refclk_gt, refclk_div2, sys_clk;
  IBUFDS_GTE4 #(.REFCLK_HROW_CK_SEL(2'b00)) u_refclk (
    .I(pcie_refclk_p), .IB(pcie_refclk_n), .CEB(1'b0), .O(refclk_gt), .ODIV2(refclk_div2)
  );
  BUFG_GT u_sys_clk (
    .I(refclk_div2), .CE(1'b1), .CEMASK(1'b0), .CLR(1'b0), .CLRMASK(1'b0), .DIV(3'b000), .O(sys_clk)
  );

  // ------------------------------------------------------------------ core clock
  logic core_fb, core_clk_mmcm, core_clk, core_locked;
  MMCME4_BASE #(
    .CLKIN1_PERIOD   (10),
    .CLKFBOUT_MULT_F (10),
    .DIVCLK_DIVIDE   (1),
    .CLKOUT0_DIVIDE_F(CoreClockDivide)
  ) u_core_mmcm (
    .CLKIN1  (sys_clk),
    .CLKFBIN (core_fb),
    .CLKFBOUT(core_fb),
    .CLKOUT0 (core_clk_mmcm),
    .CLKFBOUTB(), .CLKOUT0B(), .CLKOUT1(), .CLKOUT1B(), .CLKOUT2(), .CLKOUT2B(), .CLKOUT3(), .CLKOUT3B(),
    .CLKOUT4(), .CLKOUT5(), .CLKOUT6(),
    .LOCKED  (core_locked),
    .PWRDWN  (1'b0),
    .RST     (1'b0)
  );
  BUFG u_core_bufg (.I(core_clk_mmcm), .O(core_clk));

  // ------------------------------------------------------------------ XDMA (AXI Bridge)
  logic         axi_aclk, axi_aresetn, user_lnk_up;
  logic         m_axib_awvalid, m_axib_awready, m_axib_awlock, m_axib_wvalid, m_axib_wready, m_axib_wlast;
  logic         m_axib_bvalid, m_axib_bready, m_axib_arvalid, m_axib_arready, m_axib_arlock;
  logic         m_axib_rvalid, m_axib_rready, m_axib_rlast;
  logic [3:0]   m_axib_awid, m_axib_bid, m_axib_arid, m_axib_rid, m_axib_awcache, m_axib_arcache;
  logic [63:0]  m_axib_awaddr, m_axib_araddr;
  logic [7:0]   m_axib_awlen, m_axib_arlen;
  logic [2:0]   m_axib_awsize, m_axib_arsize, m_axib_awprot, m_axib_arprot;
  logic [1:0]   m_axib_awburst, m_axib_arburst, m_axib_bresp, m_axib_rresp;
  logic [255:0] m_axib_wdata, m_axib_rdata;
  logic [31:0]  m_axib_wstrb;
  logic         s_axib_awvalid, s_axib_awready, s_axib_wvalid, s_axib_wready, s_axib_wlast;
  logic         s_axib_bvalid, s_axib_bready, s_axib_arvalid, s_axib_arready, s_axib_rvalid, s_axib_rready;
  logic         s_axib_rlast;
  logic [3:0]   s_axib_awid, s_axib_bid, s_axib_arid, s_axib_rid, s_axib_awregion, s_axib_arregion;
  logic [63:0]  s_axib_awaddr, s_axib_araddr;
  logic [7:0]   s_axib_awlen, s_axib_arlen;
  logic [2:0]   s_axib_awsize, s_axib_arsize;
  logic [1:0]   s_axib_awburst, s_axib_arburst, s_axib_bresp, s_axib_rresp;
  logic [255:0] s_axib_wdata, s_axib_rdata;
  logic [31:0]  s_axib_wstrb;
  logic [0:0]   usr_irq_req, usr_irq_ack;
  logic         msi_enable;

  xdma_0 u_xdma (
    .sys_clk(sys_clk), .sys_clk_gt(refclk_gt), .sys_rst_n(pcie_perst_n),
    .pci_exp_txp(pcie_tx_p), .pci_exp_txn(pcie_tx_n), .pci_exp_rxp(pcie_rx_p), .pci_exp_rxn(pcie_rx_n),
    .cfg_ltssm_state(), .user_lnk_up,
    .axi_aclk, .axi_aresetn, .axi_ctl_aresetn(),
    .usr_irq_req, .usr_irq_ack, .msi_enable, .msi_vector_width(),
    .m_axib_awid, .m_axib_awaddr, .m_axib_awlen, .m_axib_awsize, .m_axib_awburst, .m_axib_awprot,
    .m_axib_awvalid, .m_axib_awready, .m_axib_awlock, .m_axib_awcache,
    .m_axib_wdata, .m_axib_wstrb, .m_axib_wlast, .m_axib_wvalid, .m_axib_wready,
    .m_axib_bid, .m_axib_bresp, .m_axib_bvalid, .m_axib_bready,
    .m_axib_arid, .m_axib_araddr, .m_axib_arlen, .m_axib_arsize, .m_axib_arburst, .m_axib_arprot,
    .m_axib_arvalid, .m_axib_arready, .m_axib_arlock, .m_axib_arcache,
    .m_axib_rid, .m_axib_rdata, .m_axib_rresp, .m_axib_rlast, .m_axib_rvalid, .m_axib_rready,
    // Bridge registers: not used.
    .s_axil_awaddr('0), .s_axil_awprot('0), .s_axil_awvalid(1'b0), .s_axil_awready(),
    .s_axil_wdata('0), .s_axil_wstrb('0), .s_axil_wvalid(1'b0), .s_axil_wready(),
    .s_axil_bvalid(), .s_axil_bresp(), .s_axil_bready(1'b1),
    .s_axil_araddr('0), .s_axil_arprot('0), .s_axil_arvalid(1'b0), .s_axil_arready(),
    .s_axil_rdata(), .s_axil_rresp(), .s_axil_rvalid(), .s_axil_rready(1'b1),
    .interrupt_out(),
    .s_axib_awid, .s_axib_awaddr, .s_axib_awregion, .s_axib_awlen, .s_axib_awsize, .s_axib_awburst,
    .s_axib_awvalid, .s_axib_wdata, .s_axib_wstrb, .s_axib_wlast, .s_axib_wvalid, .s_axib_bready,
    .s_axib_arid, .s_axib_araddr, .s_axib_arregion, .s_axib_arlen, .s_axib_arsize, .s_axib_arburst,
    .s_axib_arvalid, .s_axib_rready, .s_axib_awready, .s_axib_wready, .s_axib_bid, .s_axib_bresp,
    .s_axib_bvalid, .s_axib_arready, .s_axib_rid, .s_axib_rdata, .s_axib_rresp, .s_axib_rlast, .s_axib_rvalid
  );

  // ------------------------------------------------------------------ the shell and the core
  sgpu_usp_shell #(.DataWidth(256), .AddrBits(48), .BuildId(BuildId)) u_shell (
    .axi_aclk, .axi_aresetn, .user_lnk_up,
    .m_axib_awvalid, .m_axib_awready, .m_axib_awid, .m_axib_awaddr, .m_axib_awlen, .m_axib_awsize,
    .m_axib_awburst, .m_axib_awprot, .m_axib_awlock, .m_axib_awcache,
    .m_axib_wvalid, .m_axib_wready, .m_axib_wdata, .m_axib_wstrb, .m_axib_wlast,
    .m_axib_bvalid, .m_axib_bready, .m_axib_bid, .m_axib_bresp,
    .m_axib_arvalid, .m_axib_arready, .m_axib_arid, .m_axib_araddr, .m_axib_arlen, .m_axib_arsize,
    .m_axib_arburst, .m_axib_arprot, .m_axib_arlock, .m_axib_arcache,
    .m_axib_rvalid, .m_axib_rready, .m_axib_rid, .m_axib_rdata, .m_axib_rresp, .m_axib_rlast,
    .s_axib_awvalid, .s_axib_awready, .s_axib_awid, .s_axib_awaddr, .s_axib_awregion, .s_axib_awlen,
    .s_axib_awsize, .s_axib_awburst,
    .s_axib_wvalid, .s_axib_wready, .s_axib_wdata, .s_axib_wstrb, .s_axib_wlast,
    .s_axib_bvalid, .s_axib_bready, .s_axib_bid, .s_axib_bresp,
    .s_axib_arvalid, .s_axib_arready, .s_axib_arid, .s_axib_araddr, .s_axib_arregion, .s_axib_arlen,
    .s_axib_arsize, .s_axib_arburst,
    .s_axib_rvalid, .s_axib_rready, .s_axib_rid, .s_axib_rdata, .s_axib_rresp, .s_axib_rlast,
    .usr_irq_req, .usr_irq_ack, .msi_enable,
    .core_clk_i(core_clk),
    .core_rst_ni(core_locked),
    .link_up_o(),
    .reg_write_o(),
    .irq_o()
  );

  assign hbm_cattrip = 1'b0;

endmodule

`default_nettype wire
