// softgpu front end: registers (AXI4-Lite, BAR0), command processor, DMA fetch engine, GART
// (aperture translation with its page-table walker), the write master and the copy/fill/blit
// engine, sharing one AXI4 master port to host memory (two read arbiters, one write arbiter),
// and one interrupt line.
//
// GPU address map (docs/gart.md): system-physical addresses [0, 2^SysAddrBits) (identity,
// privileged submissions only), the memory segment [MemSegBase, +MemSegSize) (linear to
// MemSegBusBase: board DDR, or a window of host memory in simulation) and the aperture segment
// [ApSegBase, +ApSegSize) (page table). Reported in CAP_MEMSEG_*, CAP_APSEG_* and GART_CAP.
//
// Ports are flat vectors because this is the Verilated top and the board top's child: Verilator
// cannot put interfaces on a top-level module and maps plain vectors simply to C++.
`default_nettype none

module sgpu_top #(
  /// Host-memory bus data width in bits (64, 128 or 256).
  parameter int unsigned DataWidth = 64,
  /// AXI ID width of the host-memory port.
  parameter int unsigned IdWidth = 4,
  /// Reported in ID_BUILD (e.g. a source hash).
  parameter logic [31:0] BuildId = 32'h0,
  /// Longest read burst in beats.
  parameter int unsigned MaxBurstBeats = 256,
  /// Read bursts the fetch engine keeps in flight.
  parameter int unsigned MaxReadsInFlight = 16,
  /// Fetch engine data buffer in beats: bounds the reads in flight by the room for their data.
  parameter int unsigned ReadBufferBeats = 512,
  /// Writes the write master keeps in flight.
  parameter int unsigned MaxWritesInFlight = 8,
  /// Largest ring the command processor accepts (log2 of entries).
  parameter int unsigned MaxRingLog2 = 16,
  /// Deepest INDIRECT nesting below a ring entry's buffer (CAP_MEM.max_indirect_depth), 1..255.
  parameter int unsigned MaxIndirectDepth = 4,
  /// GART TLB entries (pages), a power of two >= 8.
  parameter int unsigned TlbEntries = 32,
  /// System-physical GPU addresses are [0, 2^SysAddrBits).
  parameter int unsigned SysAddrBits = 52,
  /// GPU base of the memory segment (local video memory), aligned to its size.
  parameter logic [63:0] MemSegBase = 64'h0010_0000_0000_0000,
  /// Size of the memory segment: a power of two >= 4 KiB, or 0 for none.
  parameter logic [63:0] MemSegSize = 64'h0000_0000_1000_0000,
  /// Bus address of the memory segment's first byte (board DDR; in simulation host memory).
  parameter logic [63:0] MemSegBusBase = 64'h0000_8000_0000_0000,
  /// GPU base of the aperture segment, aligned to its size.
  parameter logic [63:0] ApSegBase = 64'h0018_0000_0000_0000,
  /// Size of the aperture segment: a power of two, 32 KiB .. 16 TiB (256 MiB: 512 KiB table).
  parameter logic [63:0] ApSegSize = 64'h0000_0000_1000_0000
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,

  // Register slave (AXI4-Lite, 4 KiB).
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

  // Host-memory master (AXI4).
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

  /// Level interrupt: high while any enabled INT_STATUS bit is set.
  output      logic                   irq_o
);

  sgpu_regs_pkg::sgpu_regs__in_t  hwif_in;
  sgpu_regs_pkg::sgpu_regs__out_t hwif_out;

  sgpu_regs u_regs (
    .clk     (clk_i),
    .arst_n  (rst_ni),
    .s_axil_awready, .s_axil_awvalid, .s_axil_awaddr, .s_axil_awprot,
    .s_axil_wready,  .s_axil_wvalid,  .s_axil_wdata,  .s_axil_wstrb,
    .s_axil_bready,  .s_axil_bvalid,  .s_axil_bresp,
    .s_axil_arready, .s_axil_arvalid, .s_axil_araddr, .s_axil_arprot,
    .s_axil_rready,  .s_axil_rvalid,  .s_axil_rdata,  .s_axil_rresp,
    .hwif_in, .hwif_out
  );

  // ------------------------------------------------------------------ fetch engine
  logic                        dma_req_valid, dma_req_ready;
  sgpu_dma_pkg::dma_req_t      dma_req;
  logic                        dma_data_valid, dma_data_ready, dma_data_last;
  logic [DataWidth-1:0]        dma_data;
  logic [DataWidth/8-1:0]      dma_data_keep;
  logic                        dma_status_valid, dma_status_ready;
  sgpu_dma_pkg::dma_status_t   dma_status;
  logic                        dma_abort, dma_busy;
  logic                        xlate_req_valid, xlate_req_ready, xlate_rsp_valid, xlate_rsp_ready;
  sgpu_dma_pkg::xlate_req_t    xlate_req;
  sgpu_dma_pkg::xlate_rsp_t    xlate_rsp;

  // Read masters before the arbiter: 0 = fetch engine (ID 0), 1 = GART walker (ID 1).
  logic                        fe_arvalid, fe_arready, fe_rvalid, fe_rready, fe_rlast;
  logic [IdWidth-1:0]          fe_arid, fe_rid;
  logic [63:0]                 fe_araddr;
  logic [7:0]                  fe_arlen;
  logic [2:0]                  fe_arsize;
  logic [1:0]                  fe_arburst, fe_rresp;
  logic [DataWidth-1:0]        fe_rdata;
  logic                        wk_arvalid, wk_arready, wk_rvalid, wk_rready, wk_rlast;
  logic [IdWidth-1:0]          wk_arid, wk_rid;
  logic [63:0]                 wk_araddr;
  logic [7:0]                  wk_arlen;
  logic [2:0]                  wk_arsize;
  logic [1:0]                  wk_arburst, wk_rresp;
  logic [DataWidth-1:0]        wk_rdata;

  sgpu_dma_rd #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         ('0),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(MaxReadsInFlight),
    .BufferBeats   (ReadBufferBeats)
  ) u_dma_rd (
    .clk_i, .rst_ni,
    .abort_i          (dma_abort),
    .busy_o           (dma_busy),
    .req_valid_i      (dma_req_valid),
    .req_ready_o      (dma_req_ready),
    .req_i            (dma_req),
    .data_valid_o     (dma_data_valid),
    .data_ready_i     (dma_data_ready),
    .data_o           (dma_data),
    .data_keep_o      (dma_data_keep),
    .data_last_o      (dma_data_last),
    .status_valid_o   (dma_status_valid),
    .status_ready_i   (dma_status_ready),
    .status_o         (dma_status),
    .xlate_req_valid_o(xlate_req_valid),
    .xlate_req_ready_i(xlate_req_ready),
    .xlate_req_o      (xlate_req),
    .xlate_rsp_valid_i(xlate_rsp_valid),
    .xlate_rsp_ready_o(xlate_rsp_ready),
    .xlate_rsp_i      (xlate_rsp),
    .m_axi_arvalid    (fe_arvalid),
    .m_axi_arready    (fe_arready),
    .m_axi_arid       (fe_arid),
    .m_axi_araddr     (fe_araddr),
    .m_axi_arlen      (fe_arlen),
    .m_axi_arsize     (fe_arsize),
    .m_axi_arburst    (fe_arburst),
    .m_axi_rvalid     (fe_rvalid),
    .m_axi_rready     (fe_rready),
    .m_axi_rid        (fe_rid),
    .m_axi_rdata      (fe_rdata),
    .m_axi_rresp      (fe_rresp),
    .m_axi_rlast      (fe_rlast)
  );

  // ------------------------------------------------------------------ GART
  localparam logic [IdWidth-1:0] WalkAxiId = IdWidth'(1);

  logic                        cp_exec_privileged;
  sgpu_gart_pkg::exec_info_t   exec_info;
  sgpu_gart_pkg::fault_rec_t   gart_fault;
  logic                        gart_fault_evt, gart_walk_busy, gart_inv_busy, gart_inv_ready;
  logic                        gart_rsp_snoop;
  logic [31:0]                 gart_lookups, gart_misses, gart_walks;

  // Translation-port clients (sgpu_gart_pkg::Client*): 0 the fetch engine, with the privilege
  // of what the CP is reading; 1 the CP's write path, with the privilege of each write; 2 and
  // 3 the copy engine's source reads and destination writes, with the submission's privilege.
  localparam int unsigned XlateClients = 4;

  logic                     [XlateClients-1:0] cl_req_valid, cl_req_ready, cl_priv;
  logic                     [XlateClients-1:0] cl_rsp_valid, cl_rsp_ready;
  sgpu_dma_pkg::xlate_req_t [XlateClients-1:0] cl_req;
  sgpu_dma_pkg::xlate_rsp_t [XlateClients-1:0] cl_rsp;
  logic                     [XlateClients-1:0] cl_rsp_snoop;
  logic                                        g_req_valid, g_req_ready, g_rsp_valid, g_rsp_ready;
  sgpu_dma_pkg::xlate_req_t                    g_req;
  sgpu_gart_pkg::xlate_src_t                   g_src;
  sgpu_dma_pkg::xlate_rsp_t                    g_rsp;
  logic                                        xw_req_valid, xw_req_ready, xw_priv;
  logic                                        xw_rsp_valid, xw_rsp_ready;
  sgpu_dma_pkg::xlate_req_t                    xw_req;

  assign cl_req_valid[sgpu_gart_pkg::ClientFetch] = xlate_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientFetch]       = xlate_req;
  assign cl_priv[sgpu_gart_pkg::ClientFetch]      = cp_exec_privileged;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientFetch] = xlate_rsp_ready;
  assign xlate_req_ready = cl_req_ready[sgpu_gart_pkg::ClientFetch];
  assign xlate_rsp_valid = cl_rsp_valid[sgpu_gart_pkg::ClientFetch];
  assign xlate_rsp       = cl_rsp[sgpu_gart_pkg::ClientFetch];

  assign cl_req_valid[sgpu_gart_pkg::ClientCpWr] = xw_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientCpWr]       = xw_req;
  assign cl_priv[sgpu_gart_pkg::ClientCpWr]      = xw_priv;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientCpWr] = xw_rsp_ready;
  assign xw_req_ready = cl_req_ready[sgpu_gart_pkg::ClientCpWr];
  assign xw_rsp_valid = cl_rsp_valid[sgpu_gart_pkg::ClientCpWr];

  logic                     cr_req_valid, cr_req_ready, cr_rsp_ready;
  sgpu_dma_pkg::xlate_req_t cr_req;
  logic                     cw_req_valid, cw_req_ready, cw_rsp_ready;
  sgpu_dma_pkg::xlate_req_t cw_req;

  assign cl_req_valid[sgpu_gart_pkg::ClientCopyRd] = cr_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientCopyRd]       = cr_req;
  assign cl_priv[sgpu_gart_pkg::ClientCopyRd]      = cp_exec_privileged;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientCopyRd] = cr_rsp_ready;
  assign cr_req_ready = cl_req_ready[sgpu_gart_pkg::ClientCopyRd];

  assign cl_req_valid[sgpu_gart_pkg::ClientCopyWr] = cw_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientCopyWr]       = cw_req;
  assign cl_priv[sgpu_gart_pkg::ClientCopyWr]      = cp_exec_privileged;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientCopyWr] = cw_rsp_ready;
  assign cw_req_ready = cl_req_ready[sgpu_gart_pkg::ClientCopyWr];

  sgpu_gart_arb #(
    .Clients(XlateClients)
  ) u_gart_arb (
    .clk_i, .rst_ni,
    .cl_req_valid_i   (cl_req_valid),
    .cl_req_ready_o   (cl_req_ready),
    .cl_req_i         (cl_req),
    .cl_priv_i        (cl_priv),
    .cl_rsp_valid_o   (cl_rsp_valid),
    .cl_rsp_ready_i   (cl_rsp_ready),
    .cl_rsp_o         (cl_rsp),
    .cl_rsp_snoop_o   (cl_rsp_snoop),
    .xlate_req_valid_o(g_req_valid),
    .xlate_req_ready_i(g_req_ready),
    .xlate_req_o      (g_req),
    .xlate_src_o      (g_src),
    .xlate_rsp_valid_i(g_rsp_valid),
    .xlate_rsp_ready_o(g_rsp_ready),
    .xlate_rsp_i      (g_rsp),
    .xlate_rsp_snoop_i(gart_rsp_snoop)
  );

  // Invalidation commands from GART_CMD wait here until the GART takes them. A command that
  // arrives while another waits turns it into an invalidate-all (always safe).
  logic                    inv_pend_q, inv_pend_d;
  sgpu_gart_pkg::inv_req_t inv_req_q, inv_req_d;
  logic                    inv_cmd;
  // The GART's one invalidation port is shared by the register path and the command
  // processor's TLB_INVALIDATE: the register path has priority, so a CP request waits (its
  // ready is low) while a register command is pending; ready never depends on either valid.
  logic                    cp_inv_valid, cp_inv_ready;
  sgpu_gart_pkg::inv_req_t cp_inv_req;
  logic                    g_inv_valid;
  sgpu_gart_pkg::inv_req_t g_inv_req;

  assign g_inv_valid  = inv_pend_q || cp_inv_valid;
  assign g_inv_req    = inv_pend_q ? inv_req_q : cp_inv_req;
  assign cp_inv_ready = gart_inv_ready && !inv_pend_q;

  assign inv_cmd = hwif_out.GART_CMD.inv_range.value || hwif_out.GART_CMD.inv_all.value;

  always_comb begin
    inv_pend_d = inv_pend_q && !gart_inv_ready;  // the register path wins the mux
    inv_req_d  = inv_req_q;
    if (inv_cmd) begin
      inv_pend_d = 1'b1;
      inv_req_d  = '{all:   hwif_out.GART_CMD.inv_all.value || inv_pend_d,
                     first: hwif_out.GART_INV_FIRST.page.value,
                     count: hwif_out.GART_INV_COUNT.count.value};
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      inv_pend_q <= 1'b0;
      inv_req_q  <= '0;
    end else begin
      inv_pend_q <= inv_pend_d;
      inv_req_q  <= inv_req_d;
    end
  end

  sgpu_gart #(
    .DataWidth    (DataWidth),
    .IdWidth      (IdWidth),
    .WalkAxiId    (WalkAxiId),
    .TlbEntries   (TlbEntries),
    .SysAddrBits  (SysAddrBits),
    .MemSegBase   (MemSegBase),
    .MemSegSize   (MemSegSize),
    .MemSegBusBase(MemSegBusBase),
    .ApSegBase    (ApSegBase),
    .ApSegSize    (ApSegSize)
  ) u_gart (
    .clk_i, .rst_ni,
    .enable_i         (hwif_out.GART_CTRL.enable.value),
    .table_base_i     ({hwif_out.GART_TABLE_BASE_HI.value.value,
                        hwif_out.GART_TABLE_BASE_LO.value.value}),
    .table_size_i     (hwif_out.GART_TABLE_SIZE.entries.value),
    .exec_i           (exec_info),
    .xlate_req_valid_i(g_req_valid),
    .xlate_req_ready_o(g_req_ready),
    .xlate_req_i      (g_req),
    .xlate_src_i      (g_src),
    .xlate_rsp_valid_o(g_rsp_valid),
    .xlate_rsp_ready_i(g_rsp_ready),
    .xlate_rsp_o      (g_rsp),
    .xlate_rsp_snoop_o(gart_rsp_snoop),
    .inv_valid_i      (g_inv_valid),
    .inv_ready_o      (gart_inv_ready),
    .inv_i            (g_inv_req),
    .inv_busy_o       (gart_inv_busy),
    .inv_done_o       (),
    .fault_clear_i    (hwif_out.GART_CMD.fault_clear.value || hwif_out.RESET.engine.value),
    .fault_o          (gart_fault),
    .fault_evt_o      (gart_fault_evt),
    .walk_busy_o      (gart_walk_busy),
    .perf_lookups_o   (gart_lookups),
    .perf_misses_o    (gart_misses),
    .perf_walks_o     (gart_walks),
    .m_axi_arvalid    (wk_arvalid),
    .m_axi_arready    (wk_arready),
    .m_axi_arid       (wk_arid),
    .m_axi_araddr     (wk_araddr),
    .m_axi_arlen      (wk_arlen),
    .m_axi_arsize     (wk_arsize),
    .m_axi_arburst    (wk_arburst),
    .m_axi_rvalid     (wk_rvalid),
    .m_axi_rready     (wk_rready),
    .m_axi_rid        (wk_rid),
    .m_axi_rdata      (wk_rdata),
    .m_axi_rresp      (wk_rresp),
    .m_axi_rlast      (wk_rlast)
  );

  // The host-memory port has no ARCACHE/AWCACHE yet: the snoop hint has nowhere to go.
  logic unused_snoop;
  assign unused_snoop = ^cl_rsp_snoop;

  // ------------------------------------------------------------------ read arbiters
  // Fetch engine (ID 0) + walker (ID 1) -> u_rd_arb -> u_rd_arb_copy (+ copy engine, ID 2) -> port.
  localparam logic [IdWidth-1:0] CopyAxiId = IdWidth'(2);

  logic                        fw_arvalid, fw_arready, fw_rvalid, fw_rready, fw_rlast;
  logic [IdWidth-1:0]          fw_arid, fw_rid;
  logic [63:0]                 fw_araddr;
  logic [7:0]                  fw_arlen;
  logic [2:0]                  fw_arsize;
  logic [1:0]                  fw_arburst, fw_rresp;
  logic [DataWidth-1:0]        fw_rdata;
  logic                        ce_arvalid, ce_arready, ce_rvalid, ce_rready, ce_rlast;
  logic [IdWidth-1:0]          ce_arid, ce_rid;
  logic [63:0]                 ce_araddr;
  logic [7:0]                  ce_arlen;
  logic [2:0]                  ce_arsize;
  logic [1:0]                  ce_arburst, ce_rresp;
  logic [DataWidth-1:0]        ce_rdata;

  sgpu_axi_rd_arb #(
    .DataWidth(DataWidth),
    .IdWidth  (IdWidth),
    .S1Id     (WalkAxiId)
  ) u_rd_arb (
    .clk_i, .rst_ni,
    .s0_axi_arvalid(fe_arvalid), .s0_axi_arready(fe_arready), .s0_axi_arid(fe_arid),
    .s0_axi_araddr (fe_araddr),  .s0_axi_arlen  (fe_arlen),   .s0_axi_arsize(fe_arsize),
    .s0_axi_arburst(fe_arburst), .s0_axi_rvalid (fe_rvalid),  .s0_axi_rready(fe_rready),
    .s0_axi_rid    (fe_rid),     .s0_axi_rdata  (fe_rdata),   .s0_axi_rresp (fe_rresp),
    .s0_axi_rlast  (fe_rlast),
    .s1_axi_arvalid(wk_arvalid), .s1_axi_arready(wk_arready), .s1_axi_arid(wk_arid),
    .s1_axi_araddr (wk_araddr),  .s1_axi_arlen  (wk_arlen),   .s1_axi_arsize(wk_arsize),
    .s1_axi_arburst(wk_arburst), .s1_axi_rvalid (wk_rvalid),  .s1_axi_rready(wk_rready),
    .s1_axi_rid    (wk_rid),     .s1_axi_rdata  (wk_rdata),   .s1_axi_rresp (wk_rresp),
    .s1_axi_rlast  (wk_rlast),
    .m_axi_arvalid (fw_arvalid), .m_axi_arready(fw_arready), .m_axi_arid   (fw_arid),
    .m_axi_araddr  (fw_araddr),  .m_axi_arlen  (fw_arlen),   .m_axi_arsize (fw_arsize),
    .m_axi_arburst (fw_arburst), .m_axi_rvalid (fw_rvalid),  .m_axi_rready (fw_rready),
    .m_axi_rid     (fw_rid),     .m_axi_rdata  (fw_rdata),   .m_axi_rresp  (fw_rresp),
    .m_axi_rlast   (fw_rlast)
  );

  sgpu_axi_rd_arb #(
    .DataWidth(DataWidth),
    .IdWidth  (IdWidth),
    .S1Id     (CopyAxiId)
  ) u_rd_arb_copy (
    .clk_i, .rst_ni,
    .s0_axi_arvalid(fw_arvalid), .s0_axi_arready(fw_arready), .s0_axi_arid(fw_arid),
    .s0_axi_araddr (fw_araddr),  .s0_axi_arlen  (fw_arlen),   .s0_axi_arsize(fw_arsize),
    .s0_axi_arburst(fw_arburst), .s0_axi_rvalid (fw_rvalid),  .s0_axi_rready(fw_rready),
    .s0_axi_rid    (fw_rid),     .s0_axi_rdata  (fw_rdata),   .s0_axi_rresp (fw_rresp),
    .s0_axi_rlast  (fw_rlast),
    .s1_axi_arvalid(ce_arvalid), .s1_axi_arready(ce_arready), .s1_axi_arid(ce_arid),
    .s1_axi_araddr (ce_araddr),  .s1_axi_arlen  (ce_arlen),   .s1_axi_arsize(ce_arsize),
    .s1_axi_arburst(ce_arburst), .s1_axi_rvalid (ce_rvalid),  .s1_axi_rready(ce_rready),
    .s1_axi_rid    (ce_rid),     .s1_axi_rdata  (ce_rdata),   .s1_axi_rresp (ce_rresp),
    .s1_axi_rlast  (ce_rlast),
    .m_axi_arvalid, .m_axi_arready, .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize,
    .m_axi_arburst, .m_axi_rvalid, .m_axi_rready, .m_axi_rid, .m_axi_rdata, .m_axi_rresp,
    .m_axi_rlast
  );

  // Packets and ring entries are consumed as dwords; the end of a request is known from its
  // length, so `last` only feeds the assertions of the engine's own tests.
  logic unused_last;
  assign unused_last = dma_data_last;

  // ------------------------------------------------------------------ write path
  // CP (GPU addresses) -> write translation (GART client 1) -> write master (bus addresses).
  logic               wr_valid, wr_ready, wr_idle, wr_err, wr_priv;
  sgpu_pkg::word_wr_t wr;
  sgpu_pkg::addr_t    wr_err_addr;
  logic            wr_xlate_fault, xw_idle;
  sgpu_pkg::addr_t wr_xlate_fault_addr;
  logic            aw_valid, aw_ready, aw_idle;
  sgpu_pkg::addr_t aw_addr, aw_gpu_addr;
  logic [63:0]     aw_data;
  logic [7:0]      aw_strb;
  // The CP's write master before the write arbiter.
  logic                   cw_awvalid, cw_awready, cw_wvalid, cw_wready, cw_wlast, cw_bvalid, cw_bready;
  logic [IdWidth-1:0]     cw_awid, cw_bid;
  logic [63:0]            cw_awaddr;
  logic [7:0]             cw_awlen;
  logic [2:0]             cw_awsize;
  logic [1:0]             cw_awburst, cw_bresp;
  logic [DataWidth-1:0]   cw_wdata;
  logic [DataWidth/8-1:0] cw_wstrb;

  sgpu_wr_xlate u_wr_xlate (
    .clk_i, .rst_ni,
    .enable_i         (hwif_out.GART_CTRL.enable.value),
    .inv_busy_i       (inv_pend_q || cp_inv_valid || gart_inv_busy),
    .req_valid_i      (wr_valid),
    .req_ready_o      (wr_ready),
    .req_addr_i       (wr.addr),
    .req_data_i       (wr.data),
    .req_strb_i       (wr.strb),
    .req_priv_i       (wr_priv),
    .out_valid_o      (aw_valid),
    .out_ready_i      (aw_ready),
    .out_addr_o       (aw_addr),
    .out_data_o       (aw_data),
    .out_strb_o       (aw_strb),
    .out_gpu_addr_o   (aw_gpu_addr),
    .idle_o           (xw_idle),
    .fault_o          (wr_xlate_fault),
    .fault_addr_o     (wr_xlate_fault_addr),
    .xlate_req_valid_o(xw_req_valid),
    .xlate_req_ready_i(xw_req_ready),
    .xlate_req_o      (xw_req),
    .xlate_priv_o     (xw_priv),
    .xlate_rsp_valid_i(xw_rsp_valid),
    .xlate_rsp_ready_o(xw_rsp_ready),
    .xlate_rsp_i      (cl_rsp[sgpu_gart_pkg::ClientCpWr])
  );

  // The CP waits for both: no translation owed and every issued write acknowledged.
  assign wr_idle = xw_idle && aw_idle;

  sgpu_axi_wr #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         ('0),
    .MaxOutstanding(MaxWritesInFlight)
  ) u_axi_wr (
    .clk_i, .rst_ni,
    .req_valid_i(aw_valid), .req_ready_o(aw_ready),
    .req_addr_i (aw_addr),  .req_data_i (aw_data), .req_strb_i(aw_strb),
    .req_err_addr_i(aw_gpu_addr),
    .idle_o     (aw_idle),  .err_o      (wr_err),  .err_addr_o(wr_err_addr),
    .m_axi_awvalid(cw_awvalid), .m_axi_awready(cw_awready), .m_axi_awid  (cw_awid),
    .m_axi_awaddr (cw_awaddr),  .m_axi_awlen  (cw_awlen),   .m_axi_awsize(cw_awsize),
    .m_axi_awburst(cw_awburst), .m_axi_wvalid (cw_wvalid),  .m_axi_wready(cw_wready),
    .m_axi_wdata  (cw_wdata),   .m_axi_wstrb  (cw_wstrb),   .m_axi_wlast (cw_wlast),
    .m_axi_bvalid (cw_bvalid),  .m_axi_bready (cw_bready),  .m_axi_bid   (cw_bid),
    .m_axi_bresp  (cw_bresp)
  );

  // ------------------------------------------------------------------ copy engine
  // Source reads: its own fetch engine (AXI ID 2, GART client 2); destination writes: its burst
  // writer (AXI ID 2, GART client 3). The CP's small writes (ID 0) and the copy engine's bursts
  // share the write channel through sgpu_axi_wr_arb (W in AW order, B by ID).
  logic                        ce_awvalid, ce_awready, ce_wvalid, ce_wready, ce_wlast;
  logic                        ce_bvalid, ce_bready;
  logic [IdWidth-1:0]          ce_awid, ce_bid;
  logic [63:0]                 ce_awaddr;
  logic [7:0]                  ce_awlen;
  logic [2:0]                  ce_awsize;
  logic [1:0]                  ce_awburst, ce_bresp;
  logic [DataWidth-1:0]        ce_wdata;
  logic [DataWidth/8-1:0]      ce_wstrb;
  logic                        copy_req_valid, copy_req_ready, copy_status_valid, copy_status_ready;
  logic                        copy_abort, copy_busy;
  sgpu_copy_pkg::copy_req_t    copy_req;
  sgpu_copy_pkg::copy_status_t copy_status;

  sgpu_copy #(
    .DataWidth        (DataWidth),
    .IdWidth          (IdWidth),
    .AxiId            (CopyAxiId),
    .MaxBurstBeats    (MaxBurstBeats),
    .MaxReadsInFlight (MaxReadsInFlight),
    .ReadBufferBeats  (ReadBufferBeats),
    .MaxWritesInFlight(MaxWritesInFlight)
  ) u_copy (
    .clk_i, .rst_ni,
    .req_valid_i         (copy_req_valid),
    .req_ready_o         (copy_req_ready),
    .req_i               (copy_req),
    .status_valid_o      (copy_status_valid),
    .status_ready_i      (copy_status_ready),
    .status_o            (copy_status),
    .abort_i             (copy_abort),
    .busy_o              (copy_busy),
    .xlate_req_valid_o   (cr_req_valid),
    .xlate_req_ready_i   (cr_req_ready),
    .xlate_req_o         (cr_req),
    .xlate_rsp_valid_i   (cl_rsp_valid[sgpu_gart_pkg::ClientCopyRd]),
    .xlate_rsp_ready_o   (cr_rsp_ready),
    .xlate_rsp_i         (cl_rsp[sgpu_gart_pkg::ClientCopyRd]),
    .wr_xlate_req_valid_o(cw_req_valid),
    .wr_xlate_req_ready_i(cw_req_ready),
    .wr_xlate_req_o      (cw_req),
    .wr_xlate_rsp_valid_i(cl_rsp_valid[sgpu_gart_pkg::ClientCopyWr]),
    .wr_xlate_rsp_ready_o(cw_rsp_ready),
    .wr_xlate_rsp_i      (cl_rsp[sgpu_gart_pkg::ClientCopyWr]),
    .m_axi_arvalid(ce_arvalid), .m_axi_arready(ce_arready), .m_axi_arid   (ce_arid),
    .m_axi_araddr (ce_araddr),  .m_axi_arlen  (ce_arlen),   .m_axi_arsize (ce_arsize),
    .m_axi_arburst(ce_arburst), .m_axi_rvalid (ce_rvalid),  .m_axi_rready (ce_rready),
    .m_axi_rid    (ce_rid),     .m_axi_rdata  (ce_rdata),   .m_axi_rresp  (ce_rresp),
    .m_axi_rlast  (ce_rlast),
    .m_axi_awvalid(ce_awvalid), .m_axi_awready(ce_awready), .m_axi_awid  (ce_awid),
    .m_axi_awaddr (ce_awaddr),  .m_axi_awlen  (ce_awlen),   .m_axi_awsize(ce_awsize),
    .m_axi_awburst(ce_awburst), .m_axi_wvalid (ce_wvalid),  .m_axi_wready(ce_wready),
    .m_axi_wdata  (ce_wdata),   .m_axi_wstrb  (ce_wstrb),   .m_axi_wlast (ce_wlast),
    .m_axi_bvalid (ce_bvalid),  .m_axi_bready (ce_bready),  .m_axi_bid   (ce_bid),
    .m_axi_bresp  (ce_bresp)
  );

  sgpu_axi_wr_arb #(
    .DataWidth(DataWidth),
    .IdWidth  (IdWidth),
    .S1Id     (CopyAxiId)
  ) u_wr_arb (
    .clk_i, .rst_ni,
    .s0_axi_awvalid(cw_awvalid), .s0_axi_awready(cw_awready), .s0_axi_awid  (cw_awid),
    .s0_axi_awaddr (cw_awaddr),  .s0_axi_awlen  (cw_awlen),   .s0_axi_awsize(cw_awsize),
    .s0_axi_awburst(cw_awburst), .s0_axi_wvalid (cw_wvalid),  .s0_axi_wready(cw_wready),
    .s0_axi_wdata  (cw_wdata),   .s0_axi_wstrb  (cw_wstrb),   .s0_axi_wlast (cw_wlast),
    .s0_axi_bvalid (cw_bvalid),  .s0_axi_bready (cw_bready),  .s0_axi_bid   (cw_bid),
    .s0_axi_bresp  (cw_bresp),
    .s1_axi_awvalid(ce_awvalid), .s1_axi_awready(ce_awready), .s1_axi_awid  (ce_awid),
    .s1_axi_awaddr (ce_awaddr),  .s1_axi_awlen  (ce_awlen),   .s1_axi_awsize(ce_awsize),
    .s1_axi_awburst(ce_awburst), .s1_axi_wvalid (ce_wvalid),  .s1_axi_wready(ce_wready),
    .s1_axi_wdata  (ce_wdata),   .s1_axi_wstrb  (ce_wstrb),   .s1_axi_wlast (ce_wlast),
    .s1_axi_bvalid (ce_bvalid),  .s1_axi_bready (ce_bready),  .s1_axi_bid   (ce_bid),
    .s1_axi_bresp  (ce_bresp),
    .m_axi_awvalid, .m_axi_awready, .m_axi_awid, .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize,
    .m_axi_awburst, .m_axi_wvalid, .m_axi_wready, .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast,
    .m_axi_bvalid, .m_axi_bready, .m_axi_bid, .m_axi_bresp
  );

  // ------------------------------------------------------------------ cycle counter
  // Reading CYCLE_LO latches the high half so a LO-then-HI read pair is consistent. TIMESTAMP packets
  // write cycle_q.
  logic [63:0] cycle_q;
  logic [31:0] cycle_hi_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cycle_q    <= '0;
      cycle_hi_q <= '0;
    end else begin
      cycle_q <= cycle_q + 64'd1;
      if (hwif_out.CYCLE_LO.value.swacc) cycle_hi_q <= cycle_q[63:32];
    end
  end

  // ------------------------------------------------------------------ command processor
  sgpu_cp_pkg::cp_cfg_t       cp_cfg;
  sgpu_cp_pkg::cp_cmd_t       cp_cmd;
  sgpu_cp_pkg::cp_state_t     cp_state;
  sgpu_cp_pkg::cp_evt_t       cp_evt;
  sgpu_cp_pkg::cp_fault_rec_t cp_fault;

  assign cp_cfg = '{
    enable:          hwif_out.CTRL.enable.value,
    ring_base:       {hwif_out.RING_BASE_HI.value.value, hwif_out.RING_BASE_LO.value.value},
    // A ring larger than the hardware supports is clamped, never wrapped into a smaller one.
    ring_log2:       (32'(hwif_out.RING_SIZE.log2_entries.value) > MaxRingLog2)
                     ? 5'(MaxRingLog2) : hwif_out.RING_SIZE.log2_entries.value,
    ring_tail:       hwif_out.RING_TAIL.index.value,
    wb_addr:         {hwif_out.WB_ADDR_HI.value.value, hwif_out.WB_ADDR_LO.value.value},
    watchdog:        hwif_out.CP_WATCHDOG.cycles.value,
    preempt_fence:   {hwif_out.PREEMPT_FENCE_HI.value.value, hwif_out.PREEMPT_FENCE_LO.value.value},
    preempt_addr:    {hwif_out.PREEMPT_ADDR_HI.value.value, hwif_out.PREEMPT_ADDR_LO.value.value},
    gart_table_base: {hwif_out.GART_TABLE_BASE_HI.value.value,
                      hwif_out.GART_TABLE_BASE_LO.value.value},
    gart_table_size: hwif_out.GART_TABLE_SIZE.entries.value
  };
  assign cp_cmd = '{engine_reset:   hwif_out.RESET.engine.value,
                    preempt_req:    hwif_out.PREEMPT.request.value,
                    preempt_resume: hwif_out.PREEMPT.resume.value};

  sgpu_cp #(.DataWidth(DataWidth), .MaxIndirectDepth(MaxIndirectDepth), .SysAddrBits(SysAddrBits)) u_cp (
    .clk_i, .rst_ni,
    .cfg_i             (cp_cfg),
    .cmd_i             (cp_cmd),
    .state_o           (cp_state),
    .evt_o             (cp_evt),
    .fault_o           (cp_fault),
    .cycle_i           (cycle_q),
    .copy_progress_i   (ce_wvalid && ce_wready),
    .exec_privileged_o (cp_exec_privileged),
    .exec_o            (exec_info),
    .dma_req_valid_o   (dma_req_valid),
    .dma_req_ready_i   (dma_req_ready),
    .dma_req_o         (dma_req),
    .dma_data_valid_i  (dma_data_valid),
    .dma_data_ready_o  (dma_data_ready),
    .dma_data_i        (dma_data),
    .dma_data_keep_i   (dma_data_keep),
    .dma_status_valid_i(dma_status_valid),
    .dma_status_ready_o(dma_status_ready),
    .dma_status_i      (dma_status),
    .dma_abort_o       (dma_abort),
    .dma_busy_i        (dma_busy),
    .wr_valid_o        (wr_valid),
    .wr_ready_i        (wr_ready),
    .wr_o              (wr),
    .wr_priv_o         (wr_priv),
    .wr_idle_i         (wr_idle),
    .wr_err_i          (wr_err),
    .wr_err_addr_i     (wr_err_addr),
    .wr_xlate_fault_i  (wr_xlate_fault),
    .wr_xlate_fault_addr_i(wr_xlate_fault_addr),
    .inv_valid_o       (cp_inv_valid),
    .inv_ready_i       (cp_inv_ready),
    .inv_o             (cp_inv_req),
    .inv_busy_i        (gart_inv_busy),
    .copy_req_valid_o  (copy_req_valid),
    .copy_req_ready_i  (copy_req_ready),
    .copy_req_o        (copy_req),
    .copy_status_valid_i(copy_status_valid),
    .copy_status_ready_o(copy_status_ready),
    .copy_status_i     (copy_status),
    .copy_abort_o      (copy_abort),
    .copy_busy_i       (copy_busy)
  );

  // ------------------------------------------------------------------ register inputs
  // Every hwif_in member is assigned by name (the generated struct is unpacked).
  always_comb begin
    hwif_in.ID_BUILD.value.next                  = BuildId;
    hwif_in.CAP_BUS.data_bytes.next              = 8'(DataWidth / 8);
    hwif_in.CAP_BUS.addr_bits.next               = 8'(sgpu_pkg::AddrWidth);
    hwif_in.CAP_BUS.max_burst_m1.next            = 8'(MaxBurstBeats - 1);
    hwif_in.CAP_BUS.outstanding_reads.next       = 8'(MaxReadsInFlight);
    hwif_in.CAP_MEM.page_shift.next              = 8'(sgpu_pkg::PageShift);
    hwif_in.CAP_MEM.max_ring_log2.next           = 8'(MaxRingLog2);
    hwif_in.CAP_MEM.max_indirect_depth.next      = 8'(MaxIndirectDepth);
    hwif_in.CAP_FEATURES.gart.next               = 1'b1;
    hwif_in.CAP_FEATURES.copy_engine.next        = 1'b1;
    hwif_in.CAP_FEATURES.preemption.next         = 1'b1;
    hwif_in.CAP_FEATURES.memory_segment.next     = MemSegSize != '0;
    hwif_in.CAP_MEMSEG_BASE_LO.value.next        = (MemSegSize != '0) ? MemSegBase[31:0] : '0;
    hwif_in.CAP_MEMSEG_BASE_HI.value.next        = (MemSegSize != '0) ? MemSegBase[63:32] : '0;
    hwif_in.CAP_MEMSEG_SIZE_LO.value.next        = MemSegSize[31:0];
    hwif_in.CAP_MEMSEG_SIZE_HI.value.next        = MemSegSize[63:32];
    hwif_in.CAP_APSEG_BASE_LO.value.next         = ApSegBase[31:0];
    hwif_in.CAP_APSEG_BASE_HI.value.next         = ApSegBase[63:32];
    hwif_in.CAP_APSEG_SIZE_LO.value.next         = ApSegSize[31:0];
    hwif_in.CAP_APSEG_SIZE_HI.value.next         = ApSegSize[63:32];
    hwif_in.STATUS.idle.next                     = cp_state.idle;
    hwif_in.STATUS.faulted.next                  = cp_state.faulted;
    hwif_in.STATUS.resetting.next                = cp_state.resetting;
    hwif_in.CYCLE_LO.value.next                  = cycle_q[31:0];
    hwif_in.CYCLE_HI.value.next                  = cycle_hi_q;
    hwif_in.RING_HEAD.index.next                 = cp_state.ring_head;
    hwif_in.FENCE_DONE_LO.value.next             = cp_state.fence_done[31:0];
    hwif_in.FENCE_DONE_HI.value.next             = cp_state.fence_done[63:32];
    hwif_in.INT_STATUS.dma_completed.hwset       = cp_evt.dma_completed;
    hwif_in.INT_STATUS.fault.hwset               = cp_evt.fault;
    hwif_in.INT_STATUS.preempted.hwset           = cp_evt.preempted;
    hwif_in.PREEMPT_STATUS.pending.next          = cp_state.preempt_pending;
    hwif_in.PREEMPT_STATUS.preempted.next        = cp_state.preempted;
    hwif_in.PREEMPT_STATUS.in_entry.next         = cp_state.preempt_in_entry;
    hwif_in.PREEMPT_OFFSET.value.next            = cp_state.preempt_offset;
    hwif_in.INT_STATUS.gart_fault.hwset          = gart_fault_evt;
    hwif_in.FAULT_STATUS.reason.next             = cp_fault.reason;
    hwif_in.FAULT_STATUS.ring_index.next         = cp_fault.ring_index;
    hwif_in.FAULT_ADDR_LO.value.next             = cp_fault.addr[31:0];
    hwif_in.FAULT_ADDR_HI.value.next             = cp_fault.addr[63:32];
    hwif_in.FAULT_FENCE_LO.value.next            = cp_fault.fence[31:0];
    hwif_in.FAULT_FENCE_HI.value.next            = cp_fault.fence[63:32];
    hwif_in.FAULT_DETAIL.value.next              = cp_fault.detail;
    hwif_in.GART_CAP.tlb_entries.next            = 8'(TlbEntries);
    hwif_in.GART_CAP.ptes_per_walk.next          = 8'(sgpu_gart_pkg::LinePtes);
    hwif_in.GART_CAP.sys_addr_bits.next          = 8'(SysAddrBits);
    hwif_in.GART_STATUS.inv_busy.next            = inv_pend_q || cp_inv_valid || gart_inv_busy;
    hwif_in.GART_STATUS.walk_busy.next           = gart_walk_busy;
    hwif_in.GART_FAULT_STATUS.valid.next         = gart_fault.valid;
    hwif_in.GART_FAULT_STATUS.more_faults.next   = gart_fault.more;
    hwif_in.GART_FAULT_STATUS.write.next         = gart_fault.write;
    hwif_in.GART_FAULT_STATUS.privileged.next    = gart_fault.privileged;
    hwif_in.GART_FAULT_STATUS.reason.next        = 4'(gart_fault.reason);
    hwif_in.GART_FAULT_STATUS.client.next        = gart_fault.client;
    hwif_in.GART_FAULT_ADDR_LO.value.next        = gart_fault.addr[31:0];
    hwif_in.GART_FAULT_ADDR_HI.value.next        = gart_fault.addr[63:32];
    hwif_in.GART_FAULT_FENCE_LO.value.next       = gart_fault.fence[31:0];
    hwif_in.GART_FAULT_FENCE_HI.value.next       = gart_fault.fence[63:32];
    hwif_in.GART_FAULT_CONTEXT.value.next        = gart_fault.context_id;
    hwif_in.GART_PERF_LOOKUPS.value.next         = gart_lookups;
    hwif_in.GART_PERF_MISSES.value.next          = gart_misses;
    hwif_in.GART_PERF_WALKS.value.next           = gart_walks;
  end

  assign irq_o = (hwif_out.INT_STATUS.dma_completed.value && hwif_out.INT_ENABLE.dma_completed.value)
              || (hwif_out.INT_STATUS.fault.value         && hwif_out.INT_ENABLE.fault.value)
              || (hwif_out.INT_STATUS.preempted.value     && hwif_out.INT_ENABLE.preempted.value)
              || (hwif_out.INT_STATUS.gart_fault.value    && hwif_out.INT_ENABLE.gart_fault.value);

  // Elaboration-time checks.
  if (DataWidth < 64 || DataWidth > 256 || (DataWidth & (DataWidth - 1)) != 0) begin : g_bad_width
    $error("sgpu_top: DataWidth must be 64, 128 or 256");
  end
  if (MaxBurstBeats < 1 || MaxBurstBeats > 256) begin : g_bad_burst
    $error("sgpu_top: MaxBurstBeats must be 1..256");
  end
  if (MaxIndirectDepth < 1 || MaxIndirectDepth > 255) begin : g_bad_depth
    $error("sgpu_top: MaxIndirectDepth must be 1..255");
  end
  if (MaxRingLog2 > 31) begin : g_bad_ring
    $error("sgpu_top: MaxRingLog2 must be <= 31");
  end

endmodule

`default_nettype wire
