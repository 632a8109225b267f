// softgpu on a 7-series PCIe board: everything between the PCIe hard block (pcie_7x, created
// by Vivado from fpga/boards/common/s7/pcie_s7.tcl) and the core. The board top instantiates the
// hard block, its clocking and this shell; the co-simulation (tb/board) puts a root-complex
// model where the hard block would be, on exactly these ports.
//
//   hard block --AXI-Stream--> LitePCIe TLP layer (gen_tlp_core.py, user clock)
//     BAR0 requests --> sgpu_s7_bar --AXI-Lite--> sgpu_cdc_axil --> sgpu_axil_cap_patch --> core
//     core --AXI4--> sgpu_cdc_axi --> sgpu_axi_wr_split (writes) --> sgpu_s7_dma --> requests
//     core irq --> sgpu_sync --> sgpu_irq_msi --> cfg_interrupt (MSI)
//
// Clock plan (docs/boards.md): the hard block's user clock (user_clk_i: 125 MHz for Gen2 x4 at
// 128 bits) runs the transaction layer and the bridges; the core runs on core_clk_i from its
// own MMCM. Both domains are reset together from the hard block's user_reset (link down, hot
// reset) or core_rst_ni (the core clock is not ready).
`default_nettype none

module sgpu_s7_shell #(
  /// TLP and core data width: 128 (x4 Gen2) or 64.
  parameter int unsigned DataWidth = 128,
  /// Bus address bits the TLP layer carries (gen_tlp_core.py --address-width).
  parameter int unsigned AddrBits = 64,
  /// Read requests the TLP layer keeps in flight (gen_tlp_core.py --tags).
  parameter int unsigned Tags = 8,
  /// Reported in ID_BUILD.
  parameter logic [31:0] BuildId = 32'h0,
  /// Core: size of the memory segment (0: no local video memory on this board yet).
  parameter logic [63:0] MemSegSize = 64'h0
) (
  // ---- PCIe hard block, user side (user_clk_i domain)
  input  wire logic                   user_clk_i,
  input  wire logic                   user_reset_i,
  input  wire logic                   user_lnk_up_i,
  output      logic                   s_axis_tx_tvalid,
  input  wire logic                   s_axis_tx_tready,
  output      logic [DataWidth-1:0]   s_axis_tx_tdata,
  output      logic [DataWidth/8-1:0] s_axis_tx_tkeep,
  output      logic                   s_axis_tx_tlast,
  output      logic [3:0]             s_axis_tx_tuser,
  input  wire logic                   m_axis_rx_tvalid,
  output      logic                   m_axis_rx_tready,
  input  wire logic [DataWidth-1:0]   m_axis_rx_tdata,
  input  wire logic [DataWidth/8-1:0] m_axis_rx_tkeep,
  input  wire logic                   m_axis_rx_tlast,
  input  wire logic [21:0]            m_axis_rx_tuser,
  output      logic                   cfg_interrupt,
  input  wire logic                   cfg_interrupt_rdy,
  output      logic                   cfg_interrupt_assert,
  output      logic [7:0]             cfg_interrupt_di,
  input  wire logic                   cfg_interrupt_msienable,
  input  wire logic [15:0]            cfg_command,
  input  wire logic [15:0]            cfg_dcommand,
  input  wire logic [7:0]             cfg_bus_number,
  input  wire logic [4:0]             cfg_device_number,
  input  wire logic [2:0]             cfg_function_number,

  // ---- core clock
  input  wire logic                   core_clk_i,
  /// Asynchronous, active low: the core clock is not usable yet (MMCM not locked).
  input  wire logic                   core_rst_ni,

  // ---- status (LEDs, counters): link up and a pulse per completed register write (user
  // clock), the interrupt line (core clock)
  output      logic                   link_up_o,
  output      logic                   reg_write_o,
  output      logic                   irq_o
);

  localparam int unsigned IdWidth = 4;

  // ------------------------------------------------------------------ resets
  logic rst_src_n, user_rst_n, core_rst_n;
  assign rst_src_n = !user_reset_i && core_rst_ni;

  sgpu_rst_sync u_user_rst (.clk_i(user_clk_i), .rst_ni(rst_src_n), .rst_no(user_rst_n));
  sgpu_rst_sync u_core_rst (.clk_i(core_clk_i), .rst_ni(rst_src_n), .rst_no(core_rst_n));

  assign link_up_o = user_lnk_up_i;

  // ------------------------------------------------------------------ configuration
  // Set by the host through config space; read from the hard block in the user clock domain.
  logic [15:0] pcie_id;
  logic        bus_master;
  logic [12:0] max_payload_bytes, max_read_bytes;
  assign pcie_id           = {cfg_bus_number, cfg_device_number, cfg_function_number};
  assign bus_master        = cfg_command[2];
  assign max_payload_bytes = 13'd128 << cfg_dcommand[7:5];
  assign max_read_bytes    = 13'd128 << cfg_dcommand[14:12];

  // ------------------------------------------------------------------ transaction layer
  logic                   bar_req_valid, bar_req_ready, bar_req_first, bar_req_last, bar_req_we;
  logic [15:0]            bar_req_req_id;
  logic [31:0]            bar_req_adr;
  logic [9:0]             bar_req_len;
  logic [7:0]             bar_req_tag;
  logic [DataWidth-1:0]   bar_req_dat;
  logic [3:0]             bar_req_first_be, bar_req_last_be;
  logic                   bar_cpl_valid, bar_cpl_ready, bar_cpl_first, bar_cpl_last, bar_cpl_end, bar_cpl_err;
  logic [15:0]            bar_cpl_req_id, bar_cpl_cmp_id;
  logic [31:0]            bar_cpl_adr;
  logic [9:0]             bar_cpl_len;
  logic [7:0]             bar_cpl_tag;
  logic [DataWidth-1:0]   bar_cpl_dat;
  logic [11:0]            bar_cpl_byte_count;
  logic [DataWidth/8-1:0] bar_cpl_dat_be;
  logic                   dma_req_valid, dma_req_ready, dma_req_first, dma_req_last, dma_req_we;
  logic [15:0]            dma_req_req_id;
  logic [63:0]            dma_req_adr;
  logic [9:0]             dma_req_len;
  logic [DataWidth-1:0]   dma_req_dat;
  logic [7:0]             dma_req_user_id;
  logic [3:0]             dma_req_first_be, dma_req_last_be;
  logic [DataWidth/8-1:0] dma_req_dat_be;
  logic                   dma_cpl_valid, dma_cpl_ready, dma_cpl_first, dma_cpl_last, dma_cpl_end, dma_cpl_err;
  logic [31:0]            dma_cpl_adr;
  logic [9:0]             dma_cpl_len;
  logic [DataWidth-1:0]   dma_cpl_dat;
  logic [7:0]             dma_cpl_user_id;
  logic                   dma_rd_credit;

  assign s_axis_tx_tuser = '0;

  sgpu_litepcie_s7 u_tlp (
    .clk(user_clk_i),
    .rst(!user_rst_n),
    .s_axis_tx_tvalid, .s_axis_tx_tready, .s_axis_tx_tdata, .s_axis_tx_tkeep, .s_axis_tx_tlast,
    .m_axis_rx_tvalid, .m_axis_rx_tready, .m_axis_rx_tdata, .m_axis_rx_tkeep, .m_axis_rx_tlast, .m_axis_rx_tuser,
    .bar_req_valid, .bar_req_ready, .bar_req_first, .bar_req_last, .bar_req_req_id, .bar_req_we,
    .bar_req_adr, .bar_req_len, .bar_req_tag, .bar_req_dat, .bar_req_first_be, .bar_req_last_be,
    .bar_cpl_valid, .bar_cpl_ready, .bar_cpl_first, .bar_cpl_last, .bar_cpl_req_id, .bar_cpl_cmp_id,
    .bar_cpl_adr, .bar_cpl_len, .bar_cpl_end, .bar_cpl_err, .bar_cpl_tag, .bar_cpl_dat,
    .bar_cpl_byte_count, .bar_cpl_dat_be,
    .dma_req_valid, .dma_req_ready, .dma_req_first, .dma_req_last, .dma_req_req_id, .dma_req_we,
    .dma_req_adr, .dma_req_len, .dma_req_dat, .dma_req_user_id, .dma_req_first_be, .dma_req_last_be,
    .dma_req_dat_be,
    .dma_cpl_valid, .dma_cpl_ready, .dma_cpl_first, .dma_cpl_last, .dma_cpl_adr, .dma_cpl_len,
    .dma_cpl_end, .dma_cpl_err, .dma_cpl_dat, .dma_cpl_user_id,
    .dma_rd_credit
  );

  // ------------------------------------------------------------------ BAR0 -> register port
  logic        ua_awvalid, ua_awready, ua_wvalid, ua_wready, ua_bvalid, ua_bready;
  logic        ua_arvalid, ua_arready, ua_rvalid, ua_rready;
  logic [11:0] ua_awaddr, ua_araddr;
  logic [2:0]  ua_awprot, ua_arprot;
  logic [31:0] ua_wdata, ua_rdata;
  logic [3:0]  ua_wstrb;
  logic [1:0]  ua_bresp, ua_rresp;
  logic        rearm;

  sgpu_s7_bar #(.DataWidth(DataWidth)) u_bar (
    .clk_i(user_clk_i), .rst_ni(user_rst_n),
    .completer_id_i(pcie_id),
    .bar_req_valid, .bar_req_ready, .bar_req_first, .bar_req_last, .bar_req_req_id, .bar_req_we,
    .bar_req_adr, .bar_req_len, .bar_req_tag, .bar_req_dat, .bar_req_first_be, .bar_req_last_be,
    .bar_cpl_valid, .bar_cpl_ready, .bar_cpl_first, .bar_cpl_last, .bar_cpl_req_id, .bar_cpl_cmp_id,
    .bar_cpl_adr, .bar_cpl_len, .bar_cpl_end, .bar_cpl_err, .bar_cpl_tag, .bar_cpl_dat,
    .bar_cpl_byte_count, .bar_cpl_dat_be,
    .m_axil_awvalid(ua_awvalid), .m_axil_awready(ua_awready), .m_axil_awaddr(ua_awaddr), .m_axil_awprot(ua_awprot),
    .m_axil_wvalid(ua_wvalid), .m_axil_wready(ua_wready), .m_axil_wdata(ua_wdata), .m_axil_wstrb(ua_wstrb),
    .m_axil_bvalid(ua_bvalid), .m_axil_bready(ua_bready), .m_axil_bresp(ua_bresp),
    .m_axil_arvalid(ua_arvalid), .m_axil_arready(ua_arready), .m_axil_araddr(ua_araddr), .m_axil_arprot(ua_arprot),
    .m_axil_rvalid(ua_rvalid), .m_axil_rready(ua_rready), .m_axil_rdata(ua_rdata), .m_axil_rresp(ua_rresp),
    .rearm_o(rearm)
  );
  assign reg_write_o = rearm;

  // Core's host-memory port and interrupt, in the user clock domain.
  logic                   bm_awvalid, bm_awready, bm_wvalid, bm_wready, bm_wlast, bm_bvalid, bm_bready;
  logic                   bm_arvalid, bm_arready, bm_rvalid, bm_rready, bm_rlast;
  logic [IdWidth-1:0]     bm_awid, bm_bid, bm_arid, bm_rid;
  logic [63:0]            bm_awaddr, bm_araddr;
  logic [7:0]             bm_awlen, bm_arlen;
  logic [2:0]             bm_awsize, bm_arsize;
  logic [1:0]             bm_awburst, bm_arburst, bm_bresp, bm_rresp;
  logic [DataWidth-1:0]   bm_wdata, bm_rdata;
  logic [DataWidth/8-1:0] bm_wstrb;
  logic                   irq_user;

  // ------------------------------------------------------------------ core and crossings
  sgpu_shell_core #(
    .DataWidth (DataWidth),
    .IdWidth   (IdWidth),
    .AddrBits  (AddrBits),
    .BuildId   (BuildId),
    .MemSegSize(MemSegSize)
  ) u_core (
    .bridge_clk_i(user_clk_i), .bridge_rst_ni(user_rst_n),
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
    .irq_bridge_o(irq_user),
    .irq_core_o  (irq_o)
  );

  // ------------------------------------------------------------------ core -> host memory
  // Writes: contiguous runs that each fit one TLP (Max_Payload_Size); reads go straight on.
  logic                   sp_awvalid, sp_awready, sp_wvalid, sp_wready, sp_wlast, sp_bvalid, sp_bready;
  logic [IdWidth-1:0]     sp_awid, sp_bid;
  logic [63:0]            sp_awaddr;
  logic [7:0]             sp_awlen;
  logic [2:0]             sp_awsize;
  logic [1:0]             sp_awburst, sp_bresp;
  logic [12:0]            sp_awuser;
  logic [DataWidth-1:0]   sp_wdata;
  logic [DataWidth/8-1:0] sp_wstrb;

  sgpu_axi_wr_split #(
    .DataWidth    (DataWidth),
    .IdWidth      (IdWidth),
    .MaxPieceBytes(512)
  ) u_split (
    .clk_i(user_clk_i), .rst_ni(user_rst_n),
    .max_bytes_i(max_payload_bytes),
    .s_axi_awvalid(bm_awvalid), .s_axi_awready(bm_awready), .s_axi_awid(bm_awid), .s_axi_awaddr(bm_awaddr),
    .s_axi_awlen(bm_awlen), .s_axi_awsize(bm_awsize), .s_axi_awburst(bm_awburst),
    .s_axi_wvalid(bm_wvalid), .s_axi_wready(bm_wready), .s_axi_wdata(bm_wdata), .s_axi_wstrb(bm_wstrb),
    .s_axi_wlast(bm_wlast),
    .s_axi_bvalid(bm_bvalid), .s_axi_bready(bm_bready), .s_axi_bid(bm_bid), .s_axi_bresp(bm_bresp),
    .m_axi_awvalid(sp_awvalid), .m_axi_awready(sp_awready), .m_axi_awid(sp_awid), .m_axi_awaddr(sp_awaddr),
    .m_axi_awlen(sp_awlen), .m_axi_awsize(sp_awsize), .m_axi_awburst(sp_awburst), .m_axi_awuser(sp_awuser),
    .m_axi_wvalid(sp_wvalid), .m_axi_wready(sp_wready), .m_axi_wdata(sp_wdata), .m_axi_wstrb(sp_wstrb),
    .m_axi_wlast(sp_wlast),
    .m_axi_bvalid(sp_bvalid), .m_axi_bready(sp_bready), .m_axi_bid(sp_bid), .m_axi_bresp(sp_bresp)
  );

  sgpu_s7_dma #(
    .DataWidth(DataWidth),
    .IdWidth  (IdWidth),
    .AddrBits (AddrBits),
    .Tags     (Tags)
  ) u_dma (
    .clk_i(user_clk_i), .rst_ni(user_rst_n),
    .requester_id_i  (pcie_id),
    .bus_master_i    (bus_master),
    .max_read_bytes_i(max_read_bytes),
    .s_axi_awvalid(sp_awvalid), .s_axi_awready(sp_awready), .s_axi_awid(sp_awid), .s_axi_awaddr(sp_awaddr),
    .s_axi_awlen(sp_awlen), .s_axi_awsize(sp_awsize), .s_axi_awburst(sp_awburst), .s_axi_awuser(sp_awuser),
    .s_axi_wvalid(sp_wvalid), .s_axi_wready(sp_wready), .s_axi_wdata(sp_wdata), .s_axi_wstrb(sp_wstrb),
    .s_axi_wlast(sp_wlast),
    .s_axi_bvalid(sp_bvalid), .s_axi_bready(sp_bready), .s_axi_bid(sp_bid), .s_axi_bresp(sp_bresp),
    .s_axi_arvalid(bm_arvalid), .s_axi_arready(bm_arready), .s_axi_arid(bm_arid), .s_axi_araddr(bm_araddr),
    .s_axi_arlen(bm_arlen), .s_axi_arsize(bm_arsize), .s_axi_arburst(bm_arburst),
    .s_axi_rvalid(bm_rvalid), .s_axi_rready(bm_rready), .s_axi_rid(bm_rid), .s_axi_rdata(bm_rdata),
    .s_axi_rresp(bm_rresp), .s_axi_rlast(bm_rlast),
    .dma_req_valid, .dma_req_ready, .dma_req_first, .dma_req_last, .dma_req_req_id, .dma_req_we,
    .dma_req_adr, .dma_req_len, .dma_req_dat, .dma_req_user_id, .dma_req_first_be, .dma_req_last_be,
    .dma_req_dat_be,
    .dma_cpl_valid, .dma_cpl_ready, .dma_cpl_last, .dma_cpl_err, .dma_cpl_dat,
    .dma_rd_credit,
    .tx_valid_i(s_axis_tx_tvalid),
    .tx_ready_i(s_axis_tx_tready),
    .tx_last_i (s_axis_tx_tlast),
    .tx_dw0_i  (s_axis_tx_tdata[31:0])
  );

  // ------------------------------------------------------------------ interrupt -> MSI
  logic msi_enable;
  assign msi_enable           = cfg_interrupt_msienable && bus_master;
  assign cfg_interrupt_assert = 1'b0;   // MSI only (no legacy INTx)
  assign cfg_interrupt_di     = 8'h00;  // vector 0

  sgpu_irq_msi u_msi (
    .clk_i(user_clk_i), .rst_ni(user_rst_n),
    .irq_i     (irq_user),
    .rearm_i   (rearm),
    .enable_i  (msi_enable),
    .msi_req_o (cfg_interrupt),
    .msi_ack_i (cfg_interrupt_rdy),
    .msi_sent_o()
  );

  // The TLP layer's completion fields this shell does not use (it counts beats instead).
  logic unused;
  assign unused = ^{dma_cpl_first, dma_cpl_adr, dma_cpl_len, dma_cpl_end, dma_cpl_user_id, cfg_command[15:3],
                    cfg_command[1:0], cfg_dcommand[15], cfg_dcommand[11:8], cfg_dcommand[4:0]};

endmodule

`default_nettype wire
