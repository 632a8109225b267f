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
// cannot put interfaces on a top-level module and maps plain vectors simply to C++. Inside,
// every AXI master and arbiter speaks the request/response structs of sgpu_axi_typedef.svh,
// the command processor takes and returns register structs (sgpu_cp_pkg), and every output is
// checked for unknown values.
`include "sgpu_assert.svh"
`include "sgpu_axi_typedef.svh"
`include "sgpu_axi_assign.svh"

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
  parameter int unsigned ReadBufferBeats = sgpu_dma_pkg::DefaultBufferBeats,
  /// Write bursts the copy engine keeps in flight.
  parameter int unsigned MaxWritesInFlight = 8,
  /// Writes the command processor's write master keeps in flight (WRITE_DATA, fences, records):
  /// single-beat writes, so at a write latency L the CP writes at most CpWritesInFlight / L words
  /// per cycle (64 / 64: the CP's peak, one word a cycle from a beat of two data dwords).
  parameter int unsigned CpWritesInFlight = 64,
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

  `SGPU_AXI_TYPEDEF_RD(axi_rd, logic [IdWidth-1:0], logic [DataWidth-1:0])
  `SGPU_AXI_TYPEDEF_WR(axi_wr, logic [IdWidth-1:0], logic [DataWidth-1:0], logic [DataWidth/8-1:0])

  // AXI IDs on the host-memory port: fetch engine and CP writes 0, walker 1, copy engine 2.
  localparam logic [IdWidth-1:0] FetchAxiId = IdWidth'(0);
  localparam logic [IdWidth-1:0] WalkAxiId  = IdWidth'(1);
  localparam logic [IdWidth-1:0] CopyAxiId  = IdWidth'(2);

  //////////////////
  // Register map //
  //////////////////

  sgpu_cp_pkg::cp_cfg_t       cp_cfg;
  sgpu_cp_pkg::cp_cmd_t       cp_cmd;
  sgpu_cp_pkg::cp_state_t     cp_state;
  sgpu_cp_pkg::cp_evt_t       cp_evt;
  sgpu_cp_pkg::cp_fault_rec_t cp_fault;
  logic [63:0]                cycle;
  sgpu_gart_pkg::gart_cfg_t   gart_cfg;
  sgpu_gart_pkg::gart_state_t gart_state;
  logic                       gart_fault_clear, gart_fault_evt;
  logic                       reg_inv_valid, gart_inv_ready;
  sgpu_gart_pkg::inv_req_t    reg_inv_req;

  sgpu_reg_map #(
    .DataWidth       (DataWidth),
    .BuildId         (BuildId),
    .MaxBurstBeats   (MaxBurstBeats),
    .MaxReadsInFlight(MaxReadsInFlight),
    .MaxRingLog2     (MaxRingLog2),
    .MaxIndirectDepth(MaxIndirectDepth),
    .TlbEntries      (TlbEntries),
    .SysAddrBits     (SysAddrBits),
    .MemSegBase      (MemSegBase),
    .MemSegSize      (MemSegSize),
    .ApSegBase       (ApSegBase),
    .ApSegSize       (ApSegSize)
  ) u_reg_map (
    .clk_i, .rst_ni,
    .s_axil_awvalid, .s_axil_awready, .s_axil_awaddr, .s_axil_awprot,
    .s_axil_wvalid,  .s_axil_wready,  .s_axil_wdata,  .s_axil_wstrb,
    .s_axil_bvalid,  .s_axil_bready,  .s_axil_bresp,
    .s_axil_arvalid, .s_axil_arready, .s_axil_araddr, .s_axil_arprot,
    .s_axil_rvalid,  .s_axil_rready,  .s_axil_rdata,  .s_axil_rresp,
    .cp_cfg_o          (cp_cfg),
    .cp_cmd_o          (cp_cmd),
    .cp_state_i        (cp_state),
    .cp_evt_i          (cp_evt),
    .cp_fault_i        (cp_fault),
    .cycle_o           (cycle),
    .gart_cfg_o        (gart_cfg),
    .gart_fault_clear_o(gart_fault_clear),
    .gart_state_i      (gart_state),
    .gart_fault_evt_i  (gart_fault_evt),
    .inv_valid_o       (reg_inv_valid),
    .inv_ready_i       (gart_inv_ready),
    .inv_o             (reg_inv_req),
    .irq_o
  );

  //////////////////
  // Fetch engine //
  //////////////////

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
  sgpu_cp_pkg::cp_tag_t        xlate_req_tag;  // the request's: its privilege, read ahead or not
  sgpu_dma_pkg::xlate_rsp_t    xlate_rsp;
  axi_rd_req_t                 fetch_rd_req;
  axi_rd_rsp_t                 fetch_rd_rsp;

  sgpu_dma_rd #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         (FetchAxiId),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(MaxReadsInFlight),
    .BufferBeats   (ReadBufferBeats),
    // The CP's request payload is formed late (its FSM's choice, an address adder): it goes only
    // into the request FIFO's LUT-RAM, not into a head register as well.
    .ReqRegOut     (1'b0),
    .axi_rd_req_t  (axi_rd_req_t),
    .axi_rd_rsp_t  (axi_rd_rsp_t)
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
    .xlate_req_tag_o  (xlate_req_tag),
    .xlate_rsp_valid_i(xlate_rsp_valid),
    .xlate_rsp_ready_o(xlate_rsp_ready),
    .xlate_rsp_i      (xlate_rsp),
    .axi_rd_req_o     (fetch_rd_req),
    .axi_rd_rsp_i     (fetch_rd_rsp)
  );

  // Packets and ring entries are consumed as dwords; the end of a request is known from its
  // length, so `last` only feeds the assertions of the engine's own tests.
  logic unused_last;
  assign unused_last = dma_data_last;

  //////////
  // GART //
  //////////

  logic                        cp_exec_privileged;
  sgpu_gart_pkg::exec_info_t   exec_info;
  sgpu_gart_pkg::fault_rec_t   gart_fault;
  logic                        gart_walk_busy, gart_inv_busy, gart_rsp_snoop;
  logic [31:0]                 gart_lookups, gart_misses, gart_walks;
  axi_rd_req_t                 walk_rd_req;
  axi_rd_rsp_t                 walk_rd_rsp;

  // Translation-port clients (sgpu_gart_pkg::Client*): the fetch engine, with the privilege of
  // each request (its tag: the kernel's ring, or the entry whose buffer it reads, which may be
  // the next entry's, read ahead); the CP's write path, with the privilege of each write; the
  // copy engine's source reads and destination writes, with the submission's privilege. A
  // request read ahead for an entry that has not started is quiet: a fault of its translation
  // is not recorded (the CP reads the page again when the entry starts, and faults then).
  localparam int unsigned XlateClients = 4;

  logic                     [XlateClients-1:0] cl_req_valid, cl_req_ready, cl_priv, cl_quiet;
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
  logic                                        cr_req_valid, cr_req_ready, cr_rsp_ready;
  sgpu_dma_pkg::xlate_req_t                    cr_req;
  logic                                        cw_req_valid, cw_req_ready, cw_rsp_ready;
  sgpu_dma_pkg::xlate_req_t                    cw_req;

  assign cl_req_valid[sgpu_gart_pkg::ClientFetch]  = xlate_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientFetch]        = xlate_req;
  assign cl_priv[sgpu_gart_pkg::ClientFetch]       = xlate_req_tag.priv;
  assign cl_quiet[sgpu_gart_pkg::ClientFetch]      = xlate_req_tag.quiet;
  logic unused_tag_kind;
  assign unused_tag_kind = ^xlate_req_tag.kind;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientFetch]  = xlate_rsp_ready;
  assign xlate_req_ready = cl_req_ready[sgpu_gart_pkg::ClientFetch];
  assign xlate_rsp_valid = cl_rsp_valid[sgpu_gart_pkg::ClientFetch];
  assign xlate_rsp       = cl_rsp[sgpu_gart_pkg::ClientFetch];

  assign cl_req_valid[sgpu_gart_pkg::ClientCpWr]   = xw_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientCpWr]         = xw_req;
  assign cl_priv[sgpu_gart_pkg::ClientCpWr]        = xw_priv;
  assign cl_quiet[sgpu_gart_pkg::ClientCpWr]       = 1'b0;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientCpWr]   = xw_rsp_ready;
  assign xw_req_ready = cl_req_ready[sgpu_gart_pkg::ClientCpWr];
  assign xw_rsp_valid = cl_rsp_valid[sgpu_gart_pkg::ClientCpWr];

  assign cl_req_valid[sgpu_gart_pkg::ClientCopyRd] = cr_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientCopyRd]       = cr_req;
  assign cl_priv[sgpu_gart_pkg::ClientCopyRd]      = cp_exec_privileged;
  assign cl_quiet[sgpu_gart_pkg::ClientCopyRd]     = 1'b0;
  assign cl_rsp_ready[sgpu_gart_pkg::ClientCopyRd] = cr_rsp_ready;
  assign cr_req_ready = cl_req_ready[sgpu_gart_pkg::ClientCopyRd];

  assign cl_req_valid[sgpu_gart_pkg::ClientCopyWr] = cw_req_valid;
  assign cl_req[sgpu_gart_pkg::ClientCopyWr]       = cw_req;
  assign cl_priv[sgpu_gart_pkg::ClientCopyWr]      = cp_exec_privileged;
  assign cl_quiet[sgpu_gart_pkg::ClientCopyWr]     = 1'b0;
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
    .cl_quiet_i       (cl_quiet),
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

  // The GART's one invalidation port is shared by the register path (GART_CMD, queued in
  // u_reg_map) and the command processor's TLB_INVALIDATE/MAP/UNMAP: the register path has
  // priority, so a CP request waits (its ready is low) while a register command is pending;
  // ready never depends on either valid.
  logic                    cp_inv_valid, cp_inv_ready;
  sgpu_gart_pkg::inv_req_t cp_inv_req;
  logic                    g_inv_valid, inv_busy;
  sgpu_gart_pkg::inv_req_t g_inv_req;

  assign g_inv_valid  = reg_inv_valid || cp_inv_valid;
  assign g_inv_req    = reg_inv_valid ? reg_inv_req : cp_inv_req;
  assign cp_inv_ready = gart_inv_ready && !reg_inv_valid;
  assign inv_busy     = reg_inv_valid || cp_inv_valid || gart_inv_busy;

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
    .ApSegSize    (ApSegSize),
    .axi_rd_req_t (axi_rd_req_t),
    .axi_rd_rsp_t (axi_rd_rsp_t)
  ) u_gart (
    .clk_i, .rst_ni,
    .enable_i         (gart_cfg.enable),
    .table_base_i     (gart_cfg.table_base),
    .table_size_i     (gart_cfg.table_size),
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
    .fault_clear_i    (gart_fault_clear),
    .fault_o          (gart_fault),
    .fault_evt_o      (gart_fault_evt),
    .walk_busy_o      (gart_walk_busy),
    .perf_lookups_o   (gart_lookups),
    .perf_misses_o    (gart_misses),
    .perf_walks_o     (gart_walks),
    .axi_rd_req_o     (walk_rd_req),
    .axi_rd_rsp_i     (walk_rd_rsp)
  );

  assign gart_state = '{inv_busy:  inv_busy,
                        walk_busy: gart_walk_busy,
                        fault:     gart_fault,
                        lookups:   gart_lookups,
                        misses:    gart_misses,
                        walks:     gart_walks};

  // The host-memory port has no ARCACHE/AWCACHE yet: the snoop hint has nowhere to go.
  logic unused_snoop;
  assign unused_snoop = ^cl_rsp_snoop;

  ////////////////
  // Write path //
  ////////////////

  // CP (GPU addresses) -> write translation (GART client 1) -> write master (bus addresses).
  logic               cp_wr_valid, cp_wr_ready, cp_wr_idle, cp_wr_err, cp_wr_priv;
  sgpu_pkg::word_wr_t cp_wr, xw_out;
  sgpu_pkg::addr_t    cp_wr_err_addr, xw_gpu_addr, xw_fault_addr;
  logic               xw_fault, xw_idle, xw_out_valid, xw_out_ready, aw_idle;
  axi_wr_req_t        cp_wr_req;
  axi_wr_rsp_t        cp_wr_rsp;

  sgpu_wr_xlate u_wr_xlate (
    .clk_i, .rst_ni,
    .enable_i         (gart_cfg.enable),
    .inv_busy_i       (inv_busy),
    .req_valid_i      (cp_wr_valid),
    .req_ready_o      (cp_wr_ready),
    .req_i            (cp_wr),
    .req_priv_i       (cp_wr_priv),
    .out_valid_o      (xw_out_valid),
    .out_ready_i      (xw_out_ready),
    .out_o            (xw_out),
    .out_gpu_addr_o   (xw_gpu_addr),
    .idle_o           (xw_idle),
    .fault_o          (xw_fault),
    .fault_addr_o     (xw_fault_addr),
    .xlate_req_valid_o(xw_req_valid),
    .xlate_req_ready_i(xw_req_ready),
    .xlate_req_o      (xw_req),
    .xlate_priv_o     (xw_priv),
    .xlate_rsp_valid_i(xw_rsp_valid),
    .xlate_rsp_ready_o(xw_rsp_ready),
    .xlate_rsp_i      (cl_rsp[sgpu_gart_pkg::ClientCpWr])
  );

  // The CP waits for both: no translation owed and every issued write acknowledged.
  assign cp_wr_idle = xw_idle && aw_idle;

  sgpu_axi_wr #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         (FetchAxiId),
    .MaxOutstanding(CpWritesInFlight),
    .axi_wr_req_t  (axi_wr_req_t),
    .axi_wr_rsp_t  (axi_wr_rsp_t)
  ) u_axi_wr (
    .clk_i, .rst_ni,
    .req_valid_i   (xw_out_valid),
    .req_ready_o   (xw_out_ready),
    .req_i         (xw_out),
    .req_err_addr_i(xw_gpu_addr),
    .idle_o        (aw_idle),
    .err_o         (cp_wr_err),
    .err_addr_o    (cp_wr_err_addr),
    .axi_wr_req_o  (cp_wr_req),
    .axi_wr_rsp_i  (cp_wr_rsp)
  );

  /////////////////
  // Copy engine //
  /////////////////

  // Source reads: its own fetch engine (AXI ID 2, GART client 2); destination writes: its burst
  // writer (AXI ID 2, GART client 3).
  logic                        copy_req_valid, copy_req_ready, copy_status_valid, copy_status_ready;
  logic                        copy_abort, copy_busy;
  sgpu_copy_pkg::copy_req_t    copy_req;
  sgpu_copy_pkg::copy_status_t copy_status;
  axi_rd_req_t                 copy_rd_req;
  axi_rd_rsp_t                 copy_rd_rsp;
  axi_wr_req_t                 copy_wr_req;
  axi_wr_rsp_t                 copy_wr_rsp;

  sgpu_copy #(
    .DataWidth        (DataWidth),
    .IdWidth          (IdWidth),
    .AxiId            (CopyAxiId),
    .MaxBurstBeats    (MaxBurstBeats),
    .MaxReadsInFlight (MaxReadsInFlight),
    .ReadBufferBeats  (ReadBufferBeats),
    .MaxWritesInFlight(MaxWritesInFlight),
    .axi_rd_req_t     (axi_rd_req_t),
    .axi_rd_rsp_t     (axi_rd_rsp_t),
    .axi_wr_req_t     (axi_wr_req_t),
    .axi_wr_rsp_t     (axi_wr_rsp_t)
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
    .axi_rd_req_o        (copy_rd_req),
    .axi_rd_rsp_i        (copy_rd_rsp),
    .axi_wr_req_o        (copy_wr_req),
    .axi_wr_rsp_i        (copy_wr_rsp)
  );

  //////////////
  // Arbiters //
  //////////////

  // Reads: fetch engine (ID 0) + walker (ID 1) -> u_rd_arb -> u_rd_arb_copy (+ copy engine,
  // ID 2) -> port. Writes: the CP's small writes (ID 0) + the copy engine's bursts (ID 2) ->
  // u_wr_arb (W in AW order, B by ID) -> port.
  axi_rd_req_t fw_rd_req, rd_req;
  axi_rd_rsp_t fw_rd_rsp, rd_rsp;
  axi_wr_req_t wr_req;
  axi_wr_rsp_t wr_rsp;

  sgpu_axi_rd_arb #(
    .IdWidth     (IdWidth),
    .S1Id        (WalkAxiId),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t)
  ) u_rd_arb (
    .clk_i, .rst_ni,
    .s_req_i({walk_rd_req, fetch_rd_req}),
    .s_rsp_o({walk_rd_rsp, fetch_rd_rsp}),
    .m_req_o(fw_rd_req),
    .m_rsp_i(fw_rd_rsp)
  );

  sgpu_axi_rd_arb #(
    .IdWidth     (IdWidth),
    .S1Id        (CopyAxiId),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t)
  ) u_rd_arb_copy (
    .clk_i, .rst_ni,
    .s_req_i({copy_rd_req, fw_rd_req}),
    .s_rsp_o({copy_rd_rsp, fw_rd_rsp}),
    .m_req_o(rd_req),
    .m_rsp_i(rd_rsp)
  );

  sgpu_axi_wr_arb #(
    .IdWidth     (IdWidth),
    .S1Id        (CopyAxiId),
    .axi_wr_req_t(axi_wr_req_t),
    .axi_wr_rsp_t(axi_wr_rsp_t)
  ) u_wr_arb (
    .clk_i, .rst_ni,
    .s_req_i({copy_wr_req, cp_wr_req}),
    .s_rsp_o({copy_wr_rsp, cp_wr_rsp}),
    .m_req_o(wr_req),
    .m_rsp_i(wr_rsp)
  );

  // The host-memory port, flat.
  `SGPU_AXI_FLAT_RD(rd_req, rd_rsp)
  `SGPU_AXI_FLAT_WR(wr_req, wr_rsp)

  ///////////////////////
  // Command processor //
  ///////////////////////

  sgpu_cp #(
    .DataWidth       (DataWidth),
    .MaxIndirectDepth(MaxIndirectDepth),
    .SysAddrBits     (SysAddrBits)
  ) u_cp (
    .clk_i, .rst_ni,
    .cfg_i                (cp_cfg),
    .cmd_i                (cp_cmd),
    .state_o              (cp_state),
    .evt_o                (cp_evt),
    .fault_o              (cp_fault),
    .cycle_i              (cycle),
    .copy_progress_i      (copy_wr_req.w_valid && copy_wr_rsp.w_ready),
    .exec_privileged_o    (cp_exec_privileged),
    .exec_o               (exec_info),
    .dma_req_valid_o      (dma_req_valid),
    .dma_req_ready_i      (dma_req_ready),
    .dma_req_o            (dma_req),
    .dma_data_valid_i     (dma_data_valid),
    .dma_data_ready_o     (dma_data_ready),
    .dma_data_i           (dma_data),
    .dma_data_keep_i      (dma_data_keep),
    .dma_status_valid_i   (dma_status_valid),
    .dma_status_ready_o   (dma_status_ready),
    .dma_status_i         (dma_status),
    .dma_abort_o          (dma_abort),
    .dma_busy_i           (dma_busy),
    .wr_valid_o           (cp_wr_valid),
    .wr_ready_i           (cp_wr_ready),
    .wr_o                 (cp_wr),
    .wr_priv_o            (cp_wr_priv),
    .wr_idle_i            (cp_wr_idle),
    .wr_err_i             (cp_wr_err),
    .wr_err_addr_i        (cp_wr_err_addr),
    .wr_xlate_fault_i     (xw_fault),
    .wr_xlate_fault_addr_i(xw_fault_addr),
    .inv_valid_o          (cp_inv_valid),
    .inv_ready_i          (cp_inv_ready),
    .inv_o                (cp_inv_req),
    .inv_busy_i           (gart_inv_busy),
    .copy_req_valid_o     (copy_req_valid),
    .copy_req_ready_i     (copy_req_ready),
    .copy_req_o           (copy_req),
    .copy_status_valid_i  (copy_status_valid),
    .copy_status_ready_o  (copy_status_ready),
    .copy_status_i        (copy_status),
    .copy_abort_o         (copy_abort),
    .copy_busy_i          (copy_busy)
  );

  ////////////////
  // Invariants //
  ////////////////

  // Every handshake signal is known out of reset; a payload whenever its valid is high.
  `SGPU_ASSERT_KNOWN(RegAwreadyKnown, s_axil_awready)
  `SGPU_ASSERT_KNOWN(RegWreadyKnown, s_axil_wready)
  `SGPU_ASSERT_KNOWN(RegBvalidKnown, s_axil_bvalid)
  `SGPU_ASSERT_KNOWN_IF(RegBrespKnown, s_axil_bresp, s_axil_bvalid)
  `SGPU_ASSERT_KNOWN(RegArreadyKnown, s_axil_arready)
  `SGPU_ASSERT_KNOWN(RegRvalidKnown, s_axil_rvalid)
  `SGPU_ASSERT_KNOWN_IF(RegRpayloadKnown, {s_axil_rdata, s_axil_rresp}, s_axil_rvalid)
  `SGPU_ASSERT_KNOWN(ArvalidKnown, m_axi_arvalid)
  `SGPU_ASSERT_KNOWN_IF(ArKnown, {m_axi_arid, m_axi_araddr, m_axi_arlen, m_axi_arsize,
                                  m_axi_arburst}, m_axi_arvalid)
  `SGPU_ASSERT_KNOWN(RreadyKnown, m_axi_rready)
  `SGPU_ASSERT_KNOWN(AwvalidKnown, m_axi_awvalid)
  `SGPU_ASSERT_KNOWN_IF(AwKnown, {m_axi_awid, m_axi_awaddr, m_axi_awlen, m_axi_awsize,
                                  m_axi_awburst}, m_axi_awvalid)
  `SGPU_ASSERT_KNOWN(WvalidKnown, m_axi_wvalid)
  `SGPU_ASSERT_KNOWN_IF(WKnown, {m_axi_wdata, m_axi_wstrb, m_axi_wlast}, m_axi_wvalid)
  `SGPU_ASSERT_KNOWN(BreadyKnown, m_axi_bready)
  `SGPU_ASSERT_KNOWN(IrqKnown, irq_o)

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth >= 64 && DataWidth <= 256
                      && (DataWidth & (DataWidth - 1)) == 0, "DataWidth must be 64, 128 or 256")
  `SGPU_ASSERT_STATIC(g_bad_burst, MaxBurstBeats >= 1 && MaxBurstBeats <= 256,
                      "MaxBurstBeats must be 1..256")
  `SGPU_ASSERT_STATIC(g_bad_depth, MaxIndirectDepth >= 1 && MaxIndirectDepth <= 255,
                      "MaxIndirectDepth must be 1..255")
  `SGPU_ASSERT_STATIC(g_bad_ring, MaxRingLog2 <= 31, "MaxRingLog2 must be <= 31")
  `SGPU_ASSERT_STATIC(g_bad_ids, IdWidth >= 2, "IdWidth must be at least 2 (IDs 0, 1 and 2)")

endmodule

`default_nettype wire
