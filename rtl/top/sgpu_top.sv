// softgpu front end: registers (AXI4-Lite, BAR0), command processor, DMA fetch engine and the
// write master, sharing one AXI4 master port to host memory, and one interrupt line.
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
  parameter int unsigned MaxRingLog2 = 16
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
    .m_axi_arvalid, .m_axi_arready, .m_axi_arid, .m_axi_araddr, .m_axi_arlen, .m_axi_arsize,
    .m_axi_arburst, .m_axi_rvalid, .m_axi_rready, .m_axi_rid, .m_axi_rdata, .m_axi_rresp,
    .m_axi_rlast
  );

  // Until the GART arrives, GPU addresses are bus addresses.
  sgpu_xlate_identity u_xlate (
    .clk_i, .rst_ni,
    .xlate_req_valid_i(xlate_req_valid),
    .xlate_req_ready_o(xlate_req_ready),
    .xlate_req_i      (xlate_req),
    .xlate_rsp_valid_o(xlate_rsp_valid),
    .xlate_rsp_ready_i(xlate_rsp_ready),
    .xlate_rsp_o      (xlate_rsp)
  );

  // Packets and ring entries are consumed as dwords; the end of a request is known from its
  // length, so `last` only feeds the assertions of the engine's own tests.
  logic unused_last;
  assign unused_last = dma_data_last;

  // ------------------------------------------------------------------ write master
  logic            wr_valid, wr_ready, wr_idle, wr_err;
  sgpu_pkg::addr_t wr_addr, wr_err_addr;
  logic [63:0]     wr_data;
  logic [7:0]      wr_strb;

  sgpu_axi_wr #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         ('0),
    .MaxOutstanding(MaxWritesInFlight)
  ) u_axi_wr (
    .clk_i, .rst_ni,
    .req_valid_i(wr_valid), .req_ready_o(wr_ready),
    .req_addr_i (wr_addr),  .req_data_i (wr_data), .req_strb_i(wr_strb),
    .idle_o     (wr_idle),  .err_o      (wr_err),  .err_addr_o(wr_err_addr),
    .m_axi_awvalid, .m_axi_awready, .m_axi_awid, .m_axi_awaddr, .m_axi_awlen, .m_axi_awsize,
    .m_axi_awburst, .m_axi_wvalid, .m_axi_wready, .m_axi_wdata, .m_axi_wstrb, .m_axi_wlast,
    .m_axi_bvalid, .m_axi_bready, .m_axi_bid, .m_axi_bresp
  );

  // ------------------------------------------------------------------ command processor
  logic [31:0]               ring_head;
  logic [63:0]               fence_done;
  logic                      cp_idle, cp_faulted, cp_resetting;
  sgpu_abi_pkg::fault_e      fault_reason;
  logic [23:0]               fault_ring_index;
  sgpu_pkg::addr_t           fault_addr;
  logic [63:0]               fault_fence;
  logic [31:0]               fault_detail;
  logic                      evt_dma_completed, evt_fault;
  logic [4:0]                ring_log2;

  // A ring larger than the hardware supports is clamped, never wrapped into a smaller one.
  assign ring_log2 = (32'(hwif_out.RING_SIZE.log2_entries.value) > MaxRingLog2)
                     ? 5'(MaxRingLog2) : hwif_out.RING_SIZE.log2_entries.value;

  sgpu_cp #(.DataWidth(DataWidth)) u_cp (
    .clk_i, .rst_ni,
    .enable_i          (hwif_out.CTRL.enable.value),
    .ring_base_i       ({hwif_out.RING_BASE_HI.value.value, hwif_out.RING_BASE_LO.value.value}),
    .ring_log2_i       (ring_log2),
    .ring_tail_i       (hwif_out.RING_TAIL.index.value),
    .wb_addr_i         ({hwif_out.WB_ADDR_HI.value.value, hwif_out.WB_ADDR_LO.value.value}),
    .engine_reset_i    (hwif_out.RESET.engine.value),
    .ring_head_o       (ring_head),
    .fence_done_o      (fence_done),
    .idle_o            (cp_idle),
    .faulted_o         (cp_faulted),
    .resetting_o       (cp_resetting),
    .fault_reason_o    (fault_reason),
    .fault_ring_index_o(fault_ring_index),
    .fault_addr_o      (fault_addr),
    .fault_fence_o     (fault_fence),
    .fault_detail_o    (fault_detail),
    .evt_dma_completed_o(evt_dma_completed),
    .evt_fault_o       (evt_fault),
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
    .wr_addr_o         (wr_addr),
    .wr_data_o         (wr_data),
    .wr_strb_o         (wr_strb),
    .wr_idle_i         (wr_idle),
    .wr_err_i          (wr_err),
    .wr_err_addr_i     (wr_err_addr)
  );

  // ------------------------------------------------------------------ cycle counter
  // Reading CYCLE_LO latches the high half so a LO-then-HI read pair is consistent.
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
    hwif_in.CAP_MEM.max_indirect_depth.next      = 8'd0;
    // No GART, copy engine, preemption or memory segment yet: feature bits and segments read 0.
    hwif_in.CAP_FEATURES.gart.next               = 1'b0;
    hwif_in.CAP_FEATURES.copy_engine.next        = 1'b0;
    hwif_in.CAP_FEATURES.preemption.next         = 1'b0;
    hwif_in.CAP_FEATURES.memory_segment.next     = 1'b0;
    hwif_in.CAP_MEMSEG_BASE_LO.value.next        = '0;
    hwif_in.CAP_MEMSEG_BASE_HI.value.next        = '0;
    hwif_in.CAP_MEMSEG_SIZE_LO.value.next        = '0;
    hwif_in.CAP_MEMSEG_SIZE_HI.value.next        = '0;
    hwif_in.CAP_APSEG_BASE_LO.value.next         = '0;
    hwif_in.CAP_APSEG_BASE_HI.value.next         = '0;
    hwif_in.CAP_APSEG_SIZE_LO.value.next         = '0;
    hwif_in.CAP_APSEG_SIZE_HI.value.next         = '0;
    hwif_in.STATUS.idle.next                     = cp_idle;
    hwif_in.STATUS.faulted.next                  = cp_faulted;
    hwif_in.STATUS.resetting.next                = cp_resetting;
    hwif_in.CYCLE_LO.value.next                  = cycle_q[31:0];
    hwif_in.CYCLE_HI.value.next                  = cycle_hi_q;
    hwif_in.RING_HEAD.index.next                 = ring_head;
    hwif_in.FENCE_DONE_LO.value.next             = fence_done[31:0];
    hwif_in.FENCE_DONE_HI.value.next             = fence_done[63:32];
    hwif_in.INT_STATUS.dma_completed.hwset       = evt_dma_completed;
    hwif_in.INT_STATUS.fault.hwset               = evt_fault;
    hwif_in.INT_STATUS.preempted.hwset           = 1'b0;
    hwif_in.FAULT_STATUS.reason.next             = fault_reason;
    hwif_in.FAULT_STATUS.ring_index.next         = fault_ring_index;
    hwif_in.FAULT_ADDR_LO.value.next             = fault_addr[31:0];
    hwif_in.FAULT_ADDR_HI.value.next             = fault_addr[63:32];
    hwif_in.FAULT_FENCE_LO.value.next            = fault_fence[31:0];
    hwif_in.FAULT_FENCE_HI.value.next            = fault_fence[63:32];
    hwif_in.FAULT_DETAIL.value.next              = fault_detail;
  end

  assign irq_o = (hwif_out.INT_STATUS.dma_completed.value && hwif_out.INT_ENABLE.dma_completed.value)
              || (hwif_out.INT_STATUS.fault.value         && hwif_out.INT_ENABLE.fault.value)
              || (hwif_out.INT_STATUS.preempted.value     && hwif_out.INT_ENABLE.preempted.value);

  // Elaboration-time checks.
  if (DataWidth < 64 || DataWidth > 256 || (DataWidth & (DataWidth - 1)) != 0) begin : g_bad_width
    $error("sgpu_top: DataWidth must be 64, 128 or 256");
  end
  if (MaxBurstBeats < 1 || MaxBurstBeats > 256) begin : g_bad_burst
    $error("sgpu_top: MaxBurstBeats must be 1..256");
  end
  if (MaxRingLog2 > 31) begin : g_bad_ring
    $error("sgpu_top: MaxRingLog2 must be <= 31");
  end

endmodule

`default_nettype wire
