// The register map of sgpu_top: the register block (u_regs, generated from
// spec/registers.rdl by PeakRDL) and everything between its hardware interface and the blocks.
// It builds the blocks' configuration and command structs from the registers and every register
// input from the blocks' state structs. It also keeps what belongs to the register file itself:
// the capability registers, the cycle counter (CYCLE_LO/HI), the queue of GART_CMD
// invalidations and the interrupt line.
`default_nettype none

module sgpu_reg_map #(
  /// The capabilities sgpu_top reports (its parameters of the same names).
  parameter int unsigned DataWidth        = 64,
  parameter logic [31:0] BuildId          = 32'h0,
  parameter int unsigned MaxBurstBeats    = 256,
  parameter int unsigned MaxReadsInFlight = 16,
  parameter int unsigned MaxRingLog2      = 16,
  parameter int unsigned MaxIndirectDepth = 4,
  parameter int unsigned TlbEntries       = 32,
  parameter int unsigned SysAddrBits      = 52,
  parameter logic [63:0] MemSegBase       = 64'h0010_0000_0000_0000,
  parameter logic [63:0] MemSegSize       = 64'h0000_0000_1000_0000,
  parameter logic [63:0] ApSegBase        = 64'h0018_0000_0000_0000,
  parameter logic [63:0] ApSegSize        = 64'h0000_0000_1000_0000
) (
  input  wire logic                       clk_i,
  input  wire logic                       rst_ni,

  /// Register slave (AXI4-Lite, 4 KiB).
  input  wire logic                       s_axil_awvalid,
  output      logic                       s_axil_awready,
  input  wire logic [11:0]                s_axil_awaddr,
  input  wire logic [2:0]                 s_axil_awprot,
  input  wire logic                       s_axil_wvalid,
  output      logic                       s_axil_wready,
  input  wire logic [31:0]                s_axil_wdata,
  input  wire logic [3:0]                 s_axil_wstrb,
  output      logic                       s_axil_bvalid,
  input  wire logic                       s_axil_bready,
  output      logic [1:0]                 s_axil_bresp,
  input  wire logic                       s_axil_arvalid,
  output      logic                       s_axil_arready,
  input  wire logic [11:0]                s_axil_araddr,
  input  wire logic [2:0]                 s_axil_arprot,
  output      logic                       s_axil_rvalid,
  input  wire logic                       s_axil_rready,
  output      logic [31:0]                s_axil_rdata,
  output      logic [1:0]                 s_axil_rresp,

  /// Command processor: configuration and commands out, state, events and fault record in.
  output      sgpu_cp_pkg::cp_cfg_t       cp_cfg_o,
  output      sgpu_cp_pkg::cp_cmd_t       cp_cmd_o,
  input  wire sgpu_cp_pkg::cp_state_t     cp_state_i,
  input  wire sgpu_cp_pkg::cp_evt_t       cp_evt_i,
  input  wire sgpu_cp_pkg::cp_fault_rec_t cp_fault_i,
  /// The free-running cycle counter (TIMESTAMP).
  output      logic [63:0]                cycle_o,

  /// GART: configuration out, state in; the fault record is cleared by GART_CMD.fault_clear
  /// and by an engine reset.
  output      sgpu_gart_pkg::gart_cfg_t   gart_cfg_o,
  output      logic                       gart_fault_clear_o,
  input  wire sgpu_gart_pkg::gart_state_t gart_state_i,
  input  wire logic                       gart_fault_evt_i,
  /// GART_CMD invalidations, held until the GART takes them (valid/ready). A command that
  /// arrives while another waits turns it into an invalidate-all (always safe).
  output      logic                       inv_valid_o,
  input  wire logic                       inv_ready_i,
  output      sgpu_gart_pkg::inv_req_t    inv_o,

  /// Level interrupt: high while any enabled INT_STATUS bit is set.
  output      logic                       irq_o
);

  sgpu_regs_pkg::sgpu_regs__in_t  hwif_in;
  sgpu_regs_pkg::sgpu_regs__out_t hwif_out;

  // The register block takes its requests from sgpu_regs_axil (PeakRDL's passthrough CPU
  // interface): address, data and the read/write choice leave flip-flops (timing pass 14).
  localparam int unsigned RegAddrWidth = sgpu_regs_pkg::SGPU_REGS_MIN_ADDR_WIDTH;
  logic                    cpuif_req, cpuif_req_is_wr, cpuif_req_stall_wr, cpuif_req_stall_rd;
  logic                    cpuif_rd_ack, cpuif_rd_err, cpuif_wr_ack, cpuif_wr_err;
  logic [RegAddrWidth-1:0] cpuif_addr;
  logic [31:0]             cpuif_wr_data, cpuif_wr_biten, cpuif_rd_data;

  sgpu_regs_axil #(.AddrWidth(RegAddrWidth)) u_axil (
    .clk_i, .rst_ni,
    .s_axil_awvalid, .s_axil_awready, .s_axil_awaddr,
    .s_axil_wvalid,  .s_axil_wready,  .s_axil_wdata, .s_axil_wstrb,
    .s_axil_bvalid,  .s_axil_bready,  .s_axil_bresp,
    .s_axil_arvalid, .s_axil_arready, .s_axil_araddr,
    .s_axil_rvalid,  .s_axil_rready,  .s_axil_rdata, .s_axil_rresp,
    .cpuif_req_o         (cpuif_req),
    .cpuif_req_is_wr_o   (cpuif_req_is_wr),
    .cpuif_addr_o        (cpuif_addr),
    .cpuif_wr_data_o     (cpuif_wr_data),
    .cpuif_wr_biten_o    (cpuif_wr_biten),
    .cpuif_req_stall_wr_i(cpuif_req_stall_wr),
    .cpuif_req_stall_rd_i(cpuif_req_stall_rd),
    .cpuif_rd_ack_i      (cpuif_rd_ack),
    .cpuif_rd_err_i      (cpuif_rd_err),
    .cpuif_rd_data_i     (cpuif_rd_data),
    .cpuif_wr_ack_i      (cpuif_wr_ack),
    .cpuif_wr_err_i      (cpuif_wr_err)
  );

  sgpu_regs u_regs (
    .clk                 (clk_i),
    .arst_n              (rst_ni),
    .s_cpuif_req         (cpuif_req),
    .s_cpuif_req_is_wr   (cpuif_req_is_wr),
    .s_cpuif_addr        (cpuif_addr),
    .s_cpuif_wr_data     (cpuif_wr_data),
    .s_cpuif_wr_biten    (cpuif_wr_biten),
    .s_cpuif_req_stall_wr(cpuif_req_stall_wr),
    .s_cpuif_req_stall_rd(cpuif_req_stall_rd),
    .s_cpuif_rd_ack      (cpuif_rd_ack),
    .s_cpuif_rd_err      (cpuif_rd_err),
    .s_cpuif_rd_data     (cpuif_rd_data),
    .s_cpuif_wr_ack      (cpuif_wr_ack),
    .s_cpuif_wr_err      (cpuif_wr_err),
    .hwif_in             (hwif_in),
    .hwif_out            (hwif_out)
  );

  // AXI4-Lite protection bits carry nothing for a register block.
  logic unused_prot;
  assign unused_prot = ^{s_axil_awprot, s_axil_arprot};

  // The blocks' state and events, a cycle late: the CP's status (idle, faulted, ...) and the
  // events are formed from its state, engines' busy signals and the write path, and would
  // otherwise run on into the readback and INT_STATUS registers in the same cycle. Every
  // status and event moves by the same cycle, so what software reads stays consistent; the
  // fault records are registers in their blocks already and are visible before their events.
  sgpu_cp_pkg::cp_state_t cp_state_q;
  sgpu_cp_pkg::cp_evt_t   cp_evt_q;
  logic                   gart_fault_evt_q, gart_inv_busy_q, gart_walk_busy_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cp_state_q       <= '0;
      cp_evt_q         <= '0;
      gart_fault_evt_q <= 1'b0;
      gart_inv_busy_q  <= 1'b0;
      gart_walk_busy_q <= 1'b0;
    end else begin
      cp_state_q       <= cp_state_i;
      cp_evt_q         <= cp_evt_i;
      gart_fault_evt_q <= gart_fault_evt_i;
      gart_inv_busy_q  <= gart_state_i.inv_busy;
      gart_walk_busy_q <= gart_state_i.walk_busy;
    end
  end

  ///////////////////////////
  // Configuration structs //
  ///////////////////////////

  assign cp_cfg_o = '{
    enable:          hwif_out.CTRL.enable.value,
    ring_base:       {hwif_out.RING_BASE_HI.value.value, hwif_out.RING_BASE_LO.value.value},
    // A ring larger than the hardware supports is clamped, never wrapped into a smaller one.
    ring_log2:       (32'(hwif_out.RING_SIZE.log2_entries.value) > MaxRingLog2)
                     ? 5'(MaxRingLog2) : hwif_out.RING_SIZE.log2_entries.value,
    ring_tail:       hwif_out.RING_TAIL.index.value,
    wb_addr:         {hwif_out.WB_ADDR_HI.value.value, hwif_out.WB_ADDR_LO.value.value},
    watchdog:        hwif_out.CP_WATCHDOG.cycles.value,
    preempt_fence:   {hwif_out.PREEMPT_FENCE_HI.value.value,
                      hwif_out.PREEMPT_FENCE_LO.value.value},
    preempt_addr:    {hwif_out.PREEMPT_ADDR_HI.value.value,
                      hwif_out.PREEMPT_ADDR_LO.value.value},
    gart_table_base: gart_cfg_o.table_base,
    gart_table_size: gart_cfg_o.table_size
  };
  assign cp_cmd_o = '{engine_reset:   hwif_out.RESET.engine.value,
                      preempt_req:    hwif_out.PREEMPT.request.value,
                      preempt_resume: hwif_out.PREEMPT.resume.value};

  assign gart_cfg_o = '{enable:     hwif_out.GART_CTRL.enable.value,
                        table_base: {hwif_out.GART_TABLE_BASE_HI.value.value,
                                     hwif_out.GART_TABLE_BASE_LO.value.value},
                        table_size: hwif_out.GART_TABLE_SIZE.entries.value};
  assign gart_fault_clear_o = hwif_out.GART_CMD.fault_clear.value || hwif_out.RESET.engine.value;

  ///////////////////////////
  // GART_CMD invalidation //
  ///////////////////////////

  logic                    inv_pend_q, inv_pend_d;
  sgpu_gart_pkg::inv_req_t inv_req_q, inv_req_d;
  logic                    inv_cmd;

  assign inv_cmd = hwif_out.GART_CMD.inv_range.value || hwif_out.GART_CMD.inv_all.value;

  always_comb begin
    inv_pend_d = inv_pend_q && !inv_ready_i;
    inv_req_d  = inv_req_q;
    if (inv_cmd) begin
      inv_pend_d = 1'b1;
      inv_req_d  = '{all:   hwif_out.GART_CMD.inv_all.value || inv_pend_d,
                     first: hwif_out.GART_INV_FIRST.page.value,
                     count: hwif_out.GART_INV_COUNT.count.value};
    end
  end

  assign inv_valid_o = inv_pend_q;
  assign inv_o       = inv_req_q;

  ///////////////////
  // Cycle counter //
  ///////////////////

  // Reading CYCLE_LO latches the high half so a LO-then-HI read pair is consistent.
  logic [63:0] cycle_q;
  logic [31:0] cycle_hi_q;

  assign cycle_o = cycle_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      inv_pend_q <= 1'b0;
      inv_req_q  <= '0;
      cycle_q    <= '0;
      cycle_hi_q <= '0;
    end else begin
      inv_pend_q <= inv_pend_d;
      inv_req_q  <= inv_req_d;
      cycle_q    <= cycle_q + 64'd1;
      if (hwif_out.CYCLE_LO.value.swacc) cycle_hi_q <= cycle_q[63:32];
    end
  end

  /////////////////////
  // Register inputs //
  /////////////////////

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
    hwif_in.STATUS.idle.next                     = cp_state_q.idle;
    hwif_in.STATUS.faulted.next                  = cp_state_q.faulted;
    hwif_in.STATUS.resetting.next                = cp_state_q.resetting;
    hwif_in.CYCLE_LO.value.next                  = cycle_q[31:0];
    hwif_in.CYCLE_HI.value.next                  = cycle_hi_q;
    hwif_in.RING_HEAD.index.next                 = cp_state_q.ring_head;
    hwif_in.FENCE_DONE_LO.value.next             = cp_state_q.fence_done[31:0];
    hwif_in.FENCE_DONE_HI.value.next             = cp_state_q.fence_done[63:32];
    hwif_in.INT_STATUS.dma_completed.hwset       = cp_evt_q.dma_completed;
    hwif_in.INT_STATUS.fault.hwset               = cp_evt_q.fault;
    hwif_in.INT_STATUS.preempted.hwset           = cp_evt_q.preempted;
    hwif_in.PREEMPT_STATUS.pending.next          = cp_state_q.preempt_pending;
    hwif_in.PREEMPT_STATUS.preempted.next        = cp_state_q.preempted;
    hwif_in.PREEMPT_STATUS.in_entry.next         = cp_state_q.preempt_in_entry;
    hwif_in.PREEMPT_OFFSET.value.next            = cp_state_q.preempt_offset;
    hwif_in.INT_STATUS.gart_fault.hwset          = gart_fault_evt_q;
    hwif_in.FAULT_STATUS.reason.next             = cp_fault_i.reason;
    hwif_in.FAULT_STATUS.ring_index.next         = cp_fault_i.ring_index;
    hwif_in.FAULT_ADDR_LO.value.next             = cp_fault_i.addr[31:0];
    hwif_in.FAULT_ADDR_HI.value.next             = cp_fault_i.addr[63:32];
    hwif_in.FAULT_FENCE_LO.value.next            = cp_fault_i.fence[31:0];
    hwif_in.FAULT_FENCE_HI.value.next            = cp_fault_i.fence[63:32];
    hwif_in.FAULT_DETAIL.value.next              = cp_fault_i.detail;
    hwif_in.GART_CAP.tlb_entries.next            = 8'(TlbEntries);
    hwif_in.GART_CAP.ptes_per_walk.next          = 8'(sgpu_gart_pkg::LinePtes);
    hwif_in.GART_CAP.sys_addr_bits.next          = 8'(SysAddrBits);
    hwif_in.GART_STATUS.inv_busy.next            = gart_inv_busy_q;
    hwif_in.GART_STATUS.walk_busy.next           = gart_walk_busy_q;
    hwif_in.GART_FAULT_STATUS.valid.next         = gart_state_i.fault.valid;
    hwif_in.GART_FAULT_STATUS.more_faults.next   = gart_state_i.fault.more;
    hwif_in.GART_FAULT_STATUS.write.next         = gart_state_i.fault.write;
    hwif_in.GART_FAULT_STATUS.privileged.next    = gart_state_i.fault.privileged;
    hwif_in.GART_FAULT_STATUS.reason.next        = 4'(gart_state_i.fault.reason);
    hwif_in.GART_FAULT_STATUS.client.next        = gart_state_i.fault.client;
    hwif_in.GART_FAULT_ADDR_LO.value.next        = gart_state_i.fault.addr[31:0];
    hwif_in.GART_FAULT_ADDR_HI.value.next        = gart_state_i.fault.addr[63:32];
    hwif_in.GART_FAULT_FENCE_LO.value.next       = gart_state_i.fault.fence[31:0];
    hwif_in.GART_FAULT_FENCE_HI.value.next       = gart_state_i.fault.fence[63:32];
    hwif_in.GART_FAULT_CONTEXT.value.next        = gart_state_i.fault.context_id;
    hwif_in.GART_PERF_LOOKUPS.value.next         = gart_state_i.lookups;
    hwif_in.GART_PERF_MISSES.value.next          = gart_state_i.misses;
    hwif_in.GART_PERF_WALKS.value.next           = gart_state_i.walks;
  end

  assign irq_o =
      (hwif_out.INT_STATUS.dma_completed.value && hwif_out.INT_ENABLE.dma_completed.value)
      || (hwif_out.INT_STATUS.fault.value      && hwif_out.INT_ENABLE.fault.value)
      || (hwif_out.INT_STATUS.preempted.value  && hwif_out.INT_ENABLE.preempted.value)
      || (hwif_out.INT_STATUS.gart_fault.value && hwif_out.INT_ENABLE.gart_fault.value);

endmodule

`default_nettype wire
