// Command processor: fetches ring entries, streams each entry's DMA buffer through the fetch
// engine, decodes and executes packets, and retires the entry (write-back record, head, fence,
// interrupt). Every malformed input stops the engine with a fault record; an engine reset
// drains the bus and returns to idle.
//
// Data path: fetch engine beats -> sgpu_cp_dwords -> one dword per cycle into the FSM below.
// Ring entries and DMA buffers share the one fetch engine; the FSM knows which it is reading.
// Writes leave with GPU addresses through sgpu_wr_xlate (a GART client): a write is offered
// until it is taken or refused; a refusal stops the engine with TRANSLATION at that write.
// COPY, FILL, BLIT_RECT and FILL_RECT go to the copy engine (sgpu_copy) one at a time, after
// every earlier write was acknowledged; the next packet waits for the engine's status. The
// privileged TLB_INVALIDATE drains the writes, drives the GART's invalidation port (muxed with
// the register path in sgpu_top) and waits until the sweep is done. The privileged MAP and
// UNMAP write PTEs at gart_table_base_i + 8 * page (system-physical writes of a privileged
// entry, bounds-checked against gart_table_size_i: MAP_RANGE) and then end like TLB_INVALIDATE
// over their page range. MAP streams its bus addresses as WRITE_DATA streams data dwords (the
// PTE flags go into the low dword); UNMAP writes its 64-bit dummy PTE count times.
// WRITE_PHYSICAL is WRITE_DATA and READ_PHYSICAL is COPY, with the physical range checked
// against 2^SysAddrBits first (PHYSICAL_RANGE): a privileged entry's address below that is
// system physical, which the GART passes untranslated (identity), enabled or not.
//
// WAIT_MEM reads memory through the same fetch engine: it stops the buffer stream (abort: the
// engine drains the reads it issued), polls the dword with 4-byte requests, and once the
// condition holds re-requests the rest of the buffer from the byte after the packet.
// TIMESTAMP drains the writes, samples cycle_i and posts one 64-bit write. A watchdog faults a
// packet that makes no progress (no stream dword taken, no write accepted, no copy-engine data
// beat written) for watchdog_i cycles.
//
// INDIRECT uses the same stop-and-re-request: the calling buffer's {base, offset, dwords left}
// is pushed on a small stack (MaxIndirectDepth entries), its stream stopped, the called buffer
// streamed; when that is done the frame is popped and the rest of the caller re-requested.
//
// Preemption: a request is honoured at the next packet boundary (or at once between entries); a
// copy-engine packet in progress and a WAIT_MEM between reads are stopped and restart from their
// header. The engine drains, writes the preemption record and stops with its state (entry,
// offsets, INDIRECT stack) kept until resume (re-request the current buffer) or engine reset.
`default_nettype none

module sgpu_cp
  import sgpu_abi_pkg::*;
#(
  /// Data width of the fetch engine's stream in bits.
  parameter int unsigned DataWidth = 64,
  /// Deepest INDIRECT nesting below the ring entry's buffer (CAP_MEM.max_indirect_depth), >= 1.
  parameter int unsigned MaxIndirectDepth = 4,
  /// System-physical GPU addresses are [0, 2^SysAddrBits) (READ/WRITE_PHYSICAL's bound).
  parameter int unsigned SysAddrBits = 52
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,

  // Configuration (registers).
  /// Fetch new ring entries while high; an entry already started always finishes.
  input  wire logic                   enable_i,
  input  wire sgpu_pkg::addr_t        ring_base_i,
  input  wire logic [4:0]             ring_log2_i,
  input  wire logic [31:0]            ring_tail_i,
  input  wire sgpu_pkg::addr_t        wb_addr_i,
  /// One-cycle request to reset the engine.
  input  wire logic                   engine_reset_i,
  /// CP_WATCHDOG: cycles without progress before a packet faults with WATCHDOG; 0 = off.
  input  wire logic [31:0]            watchdog_i,
  /// The free-running cycle counter (CYCLE_LO/HI), for TIMESTAMP.
  input  wire logic [63:0]            cycle_i,
  /// The copy engine wrote a data beat this cycle (watchdog progress during long copies).
  input  wire logic                   copy_progress_i,
  /// One-cycle pulses: PREEMPT.request and PREEMPT.resume.
  input  wire logic                   preempt_req_i,
  input  wire logic                   preempt_resume_i,
  /// PREEMPT_FENCE and PREEMPT_ADDR (the preemption record).
  input  wire logic [63:0]            preempt_fence_i,
  input  wire sgpu_pkg::addr_t        preempt_addr_i,
  /// GART_TABLE_BASE (bus address, bits 11:0 ignored) and GART_TABLE_SIZE (entries): where
  /// MAP and UNMAP write their PTEs, and their bounds.
  input  wire sgpu_pkg::addr_t        gart_table_base_i,
  input  wire logic [31:0]            gart_table_size_i,

  // State (registers).
  output      logic [31:0]            ring_head_o,
  output      logic [63:0]            fence_done_o,
  output      logic                   idle_o,
  output      logic                   faulted_o,
  output      logic                   resetting_o,
  output      fault_e                 fault_reason_o,
  output      logic [23:0]            fault_ring_index_o,
  output      sgpu_pkg::addr_t        fault_addr_o,
  output      logic [63:0]            fault_fence_o,
  output      logic [31:0]            fault_detail_o,
  /// One-cycle event pulses for INT_STATUS.
  output      logic                   evt_dma_completed_o,
  output      logic                   evt_fault_o,
  output      logic                   evt_preempted_o,
  /// PREEMPT_STATUS and PREEMPT_OFFSET.
  output      logic                   preempt_pending_o,
  output      logic                   preempted_o,
  output      logic                   preempt_in_entry_o,
  output      logic [31:0]            preempt_offset_o,

  // The submission being executed, for the GART (privilege check, fault record).
  /// System-physical addresses are allowed: while a ring entry is read (the ring is the
  /// kernel's) and for entries with the privileged or paging flag.
  output      logic                   exec_privileged_o,
  /// Fence of the entry being executed (0 while an entry is read).
  output      logic [63:0]            exec_fence_o,
  /// context_id of the entry being executed (0 while an entry is read).
  output      logic [31:0]            exec_context_o,

  // Fetch engine (sgpu_dma_rd).
  output      logic                   dma_req_valid_o,
  input  wire logic                   dma_req_ready_i,
  output      sgpu_dma_pkg::dma_req_t dma_req_o,
  input  wire logic                   dma_data_valid_i,
  output      logic                   dma_data_ready_o,
  input  wire logic [DataWidth-1:0]   dma_data_i,
  input  wire logic [DataWidth/8-1:0] dma_data_keep_i,
  input  wire logic                   dma_status_valid_i,
  output      logic                   dma_status_ready_o,
  input  wire sgpu_dma_pkg::dma_status_t dma_status_i,
  output      logic                   dma_abort_o,
  input  wire logic                   dma_busy_i,

  // Write path (sgpu_wr_xlate in front of sgpu_axi_wr). wr_addr_o is a GPU address; a write
  // is offered until it is accepted or refused (wr_xlate_fault_i).
  output      logic                   wr_valid_o,
  input  wire logic                   wr_ready_i,
  output      sgpu_pkg::addr_t        wr_addr_o,
  output      logic [63:0]            wr_data_o,
  output      logic [7:0]             wr_strb_o,
  /// The write may use system-physical addresses: the write-back record (the kernel's) and
  /// every write of a privileged or paging entry.
  output      logic                   wr_priv_o,
  input  wire logic                   wr_idle_i,
  input  wire logic                   wr_err_i,
  input  wire sgpu_pkg::addr_t        wr_err_addr_i,
  /// One-cycle pulse: the GART refused the write being offered (never issued); its GPU address.
  input  wire logic                   wr_xlate_fault_i,
  input  wire sgpu_pkg::addr_t        wr_xlate_fault_addr_i,

  // GART invalidation (TLB_INVALIDATE), muxed with the register path in sgpu_top.
  /// Held from the first cycle until accepted (an engine reset withdraws it).
  output      logic                   inv_valid_o,
  input  wire logic                   inv_ready_i,
  output      sgpu_gart_pkg::inv_req_t inv_o,
  /// The GART has an invalidation pending or sweeping; it rises the cycle after acceptance
  /// and falls when the sweep is done.
  input  wire logic                   inv_busy_i,

  // Copy engine (sgpu_copy): COPY, FILL, BLIT_RECT and FILL_RECT run one at a time; the CP
  // waits for each status.
  output      logic                   copy_req_valid_o,
  input  wire logic                   copy_req_ready_i,
  output      sgpu_copy_pkg::copy_req_t copy_req_o,
  input  wire logic                   copy_status_valid_i,
  output      logic                   copy_status_ready_o,
  input  wire sgpu_copy_pkg::copy_status_t copy_status_i,
  /// Level while the CP drains after a fault or for an engine reset.
  output      logic                   copy_abort_o,
  input  wire logic                   copy_busy_i
);

  typedef enum logic [5:0] {
    StIdle,         // waiting for head != tail
    StRingReq,      // requesting the ring entry
    StRingData,     // collecting its eight dwords
    StRingStatus,   // waiting for the fetch status, then checking the entry
    StBufReq,       // requesting the DMA buffer
    StPktHeader,    // next dword is a packet header (or the buffer is done)
    StPktBody,      // consuming the payload of the current packet
    StFenceDrain,   // FENCE: waiting for every earlier write to be acknowledged
    StFenceWrite,   // FENCE: issuing the fence write
    StFenceAck,     // FENCE: waiting for its acknowledgement
    StInvDrain,     // TLB_INVALIDATE: waiting for every earlier write to be acknowledged
    StInvReq,       // TLB_INVALIDATE: offering the invalidation to the GART
    StInvWait,      // TLB_INVALIDATE: waiting until the GART's sweep is done
    StUnmapWrite,   // UNMAP: writing the dummy PTE to each page of the range
    StCopyCheck,    // copy engine packets: registering the source and destination extents
    StCopyDrain,    // copy engine packets: overlap check; waiting for every earlier write
    StCopyReq,      // copy engine packets: offering the request to the copy engine
    StCopyWait,     // copy engine packets: waiting for the engine's status
    StWaitDrain,    // WAIT_MEM: waiting for every earlier write to be acknowledged
    StStreamStop,   // WAIT_MEM: buffer stream aborted; draining the fetch engine
    StWaitReq,      // WAIT_MEM: requesting the polled dword
    StWaitData,     // WAIT_MEM: collecting it
    StWaitStatus,   // WAIT_MEM: its fetch status; comparing
    StWaitPause,    // WAIT_MEM: condition false, waiting `interval` cycles before the next read
    StBufResume,    // re-requesting the rest of the buffer after the stream was stopped
    StBufEnd,       // a buffer is done: return to the caller (INDIRECT) or retire the entry
    StTsDrain,      // TIMESTAMP: waiting for every earlier write, then sampling the counter
    StTsWrite,      // TIMESTAMP: issuing the write
    StBufStatus,    // all packets consumed; waiting for the fetch status
    StRetireDrain,  // waiting for the submission's writes, then writing the write-back record
    StRetireAck,    // waiting for the write-back record to be acknowledged
    StPreemptDrain, // preemption: aborting the fetch and the copy engine, draining writes
    StPreemptWrite, // preemption: writing the preemption record
    StPreemptAck,   // preemption: waiting for it to be acknowledged
    StPreempted,    // stopped by preemption until resume or engine reset
    StFaultDrain,   // fault recorded; aborting the fetch and draining writes
    StFaulted,      // stopped until an engine reset
    StReset         // engine reset: draining, then clearing
  } state_e;

  localparam sgpu_dma_pkg::tag_t TagRing   = sgpu_dma_pkg::tag_t'(0);
  localparam sgpu_dma_pkg::tag_t TagBuffer = sgpu_dma_pkg::tag_t'(1);
  localparam sgpu_dma_pkg::tag_t TagWait   = sgpu_dma_pkg::tag_t'(2);

  state_e          state_q, state_d;
  logic [31:0]     head_q, head_d;
  ring_entry_t     entry_q, entry_d;
  logic [2:0]      entry_idx_q, entry_idx_d;
  logic [29:0]     buf_left_q, buf_left_d;       // dwords of the buffer not yet decoded
  logic [31:0]     offset_q, offset_d;           // byte offset of the next dword in the buffer
  pkt_header_t     pkt_q, pkt_d;
  logic [15:0]     pkt_idx_q, pkt_idx_d;         // payload dwords consumed
  sgpu_pkg::addr_t pkt_addr_q, pkt_addr_d;
  logic [63:0]     pkt_value_q, pkt_value_d;
  logic [31:0]     pkt_len_q, pkt_len_d;         // copy engine: bytes (per row)
  logic [31:0]     pkt_pat_q, pkt_pat_d;         // FILL/FILL_RECT: pattern
  logic [31:0]     pkt_rows_q, pkt_rows_d;       // copy engine: rows (1 for COPY/FILL)
  logic [31:0]     pkt_spitch_q, pkt_spitch_d;   // BLIT_RECT: source pitch
  logic [31:0]     pkt_dpitch_q, pkt_dpitch_d;   // BLIT_RECT/FILL_RECT: destination pitch
                                                 // (UNMAP: dummy PTE in {dpitch, spitch},
                                                 // pages left in pkt_len; MAP: flags in pkt_pat)
  logic [64:0]     src_ext_q, src_ext_d;         // (rows - 1) * pitch + bytes: extents checked
  logic [64:0]     dst_ext_q, dst_ext_d;         // for overlap
  logic            wb_second_q, wb_second_d;     // second dword pair of the write-back record
  sgpu_pkg::addr_t pkt_hdr_addr_q, pkt_hdr_addr_d; // GPU address of the current packet's header
  logic [31:0]     wait_val_q, wait_val_d;       // WAIT_MEM: the dword read
  logic [31:0]     wait_cnt_q, wait_cnt_d;       // WAIT_MEM: poll interval countdown
  logic [31:0]     wd_q, wd_d;                   // watchdog: cycles without progress
  sgpu_pkg::addr_t buf_base_q, buf_base_d;       // GPU address offset_q counts from
  logic [31:0]     pkt_hdr_off_q, pkt_hdr_off_d; // offset_q of the current packet's header
  logic            pre_pend_q, pre_pend_d;       // a preemption request waits
  logic            pre_entry_q, pre_entry_d;     // the preemption stopped inside an entry

  // INDIRECT return stack: the callers' {base, offset of the next dword, dwords left}.
  localparam int unsigned DepthWidth = $clog2(MaxIndirectDepth + 1);
  typedef struct packed {
    sgpu_pkg::addr_t base;
    logic [31:0]     offset;
    logic [29:0]     left;
  } frame_t;
  localparam int unsigned IdxWidth = (MaxIndirectDepth > 1) ? $clog2(MaxIndirectDepth) : 1;
  frame_t [MaxIndirectDepth-1:0] stack_q, stack_d;
  logic [DepthWidth-1:0]         depth_q, depth_d;
  logic [IdxWidth-1:0]           push_idx, pop_idx;  // depth_q < Max when pushing, >= 1 when popping
  assign push_idx = IdxWidth'(depth_q);
  assign pop_idx  = IdxWidth'(depth_q - DepthWidth'(1));
  logic [63:0]     fence_done_q, fence_done_d;

  fault_e          fault_reason_q, fault_reason_d;
  logic [23:0]     fault_index_q, fault_index_d;
  sgpu_pkg::addr_t fault_addr_q, fault_addr_d;
  logic [63:0]     fault_fence_q, fault_fence_d;
  logic [31:0]     fault_detail_q, fault_detail_d;

  // ------------------------------------------------------------------ dword stream
  logic        dw_valid, dw_ready, dw_clear;
  logic [31:0] dw;

  sgpu_cp_dwords #(.DataWidth(DataWidth)) u_dwords (
    .clk_i, .rst_ni,
    .clear_i    (dw_clear),
    .in_valid_i (dma_data_valid_i),
    .in_ready_o (dma_data_ready_o),
    .in_data_i  (dma_data_i),
    .in_keep_i  (dma_data_keep_i),
    .out_valid_o(dw_valid),
    .out_ready_i(dw_ready),
    .out_dword_o(dw)
  );

  // ------------------------------------------------------------------ helpers
  logic [31:0]     ring_mask;
  logic [31:0]     head_next;
  sgpu_pkg::addr_t entry_addr, buf_addr, next_gpu_addr;
  pkt_header_t     hdr;
  logic            privileged;
  logic            reading_ring;  // a ring entry is being fetched (entry_q not complete)

  assign ring_mask     = (32'd1 << ring_log2_i) - 32'd1;
  assign head_next     = (head_q + 32'd1) & ring_mask;
  assign entry_addr    = ring_base_i + sgpu_pkg::addr_t'({head_q & ring_mask, 5'b00000});
  assign buf_addr      = {entry_q.buf_addr_hi, entry_q.buf_addr_lo};
  assign next_gpu_addr = buf_base_q + sgpu_pkg::addr_t'(offset_q);
  assign hdr           = pkt_header_t'(dw);
  assign privileged    = entry_q.flags[RingFlagPrivilegedBit] || entry_q.flags[RingFlagPagingBit];

  // Static checks of a packet header; the first failing check names the fault.
  fault_e hdr_fault;
  logic   hdr_privileged;
  always_comb begin
    hdr_fault      = FaultNone;
    hdr_privileged = 1'b0;
    unique case (hdr.opcode)
      OpNop: begin
        hdr_privileged = PktNopPrivileged;
        if (!(32'(hdr.dwords) inside {[PktNopMinDwords:PktNopMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktNopFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpWriteData: begin
        hdr_privileged = PktWriteDataPrivileged;
        if (!(32'(hdr.dwords) inside {[PktWriteDataMinDwords:PktWriteDataMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktWriteDataFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpFence: begin
        hdr_privileged = PktFencePrivileged;
        if (!(32'(hdr.dwords) inside {[PktFenceMinDwords:PktFenceMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktFenceFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpCopy: begin
        hdr_privileged = PktCopyPrivileged;
        if (!(32'(hdr.dwords) inside {[PktCopyMinDwords:PktCopyMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktCopyFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpFill: begin
        hdr_privileged = PktFillPrivileged;
        if (!(32'(hdr.dwords) inside {[PktFillMinDwords:PktFillMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktFillFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpBlitRect: begin
        hdr_privileged = PktBlitRectPrivileged;
        if (!(32'(hdr.dwords) inside {[PktBlitRectMinDwords:PktBlitRectMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktBlitRectFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpFillRect: begin
        hdr_privileged = PktFillRectPrivileged;
        if (!(32'(hdr.dwords) inside {[PktFillRectMinDwords:PktFillRectMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktFillRectFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpWaitMem: begin
        hdr_privileged = PktWaitMemPrivileged;
        if (!(32'(hdr.dwords) inside {[PktWaitMemMinDwords:PktWaitMemMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktWaitMemFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpTimestamp: begin
        hdr_privileged = PktTimestampPrivileged;
        if (!(32'(hdr.dwords) inside {[PktTimestampMinDwords:PktTimestampMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktTimestampFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpIndirect: begin
        hdr_privileged = PktIndirectPrivileged;
        if (!(32'(hdr.dwords) inside {[PktIndirectMinDwords:PktIndirectMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktIndirectFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpTlbInvalidate: begin
        hdr_privileged = PktTlbInvalidatePrivileged;
        if (!(32'(hdr.dwords) inside {[PktTlbInvalidateMinDwords:PktTlbInvalidateMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktTlbInvalidateFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpReadPhysical: begin
        hdr_privileged = PktReadPhysicalPrivileged;
        if (!(32'(hdr.dwords) inside {[PktReadPhysicalMinDwords:PktReadPhysicalMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktReadPhysicalFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpWritePhysical: begin
        hdr_privileged = PktWritePhysicalPrivileged;
        if (!(32'(hdr.dwords) inside {[PktWritePhysicalMinDwords:PktWritePhysicalMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktWritePhysicalFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpMap: begin
        hdr_privileged = PktMapPrivileged;
        if (!(32'(hdr.dwords) inside {[PktMapMinDwords:PktMapMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktMapFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      OpUnmap: begin
        hdr_privileged = PktUnmapPrivileged;
        if (!(32'(hdr.dwords) inside {[PktUnmapMinDwords:PktUnmapMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktUnmapFlagsMask) != '0) hdr_fault = FaultReservedBits;
      end
      default: hdr_fault = FaultIllegalOpcode;
    endcase
    if (hdr_fault == FaultNone && hdr_privileged && !privileged) hdr_fault = FaultPrivilegedPacket;
    if (hdr_fault == FaultNone && 30'(hdr.dwords) > buf_left_q) hdr_fault = FaultBufferOverrun;
  end

  // Maps a failed fetch to its fault.
  function automatic fault_e dma_fault(sgpu_dma_pkg::dma_err_e err);
    return (err == sgpu_dma_pkg::DmaXlateFault) ? FaultTranslation : FaultBusError;
  endfunction

  // COPY / BLIT_RECT: the source extent [src, src + src_ext) and the destination extent
  // [dst, dst + dst_ext) overlap (66-bit ends: nothing wraps past 2^64). For COPY the extents
  // are the byte ranges (one row).
  logic [31:0] rows_m1;  // rows - 1 (unused when rows = 0: such a request touches nothing)
  assign rows_m1 = pkt_rows_q - 32'd1;

  logic        copy_overlap;
  logic [65:0] copy_src_end, copy_dst_end;
  assign copy_src_end = {2'b00, pkt_value_q} + 66'(src_ext_q);
  assign copy_dst_end = {2'b00, pkt_addr_q} + 66'(dst_ext_q);
  assign copy_overlap = (pkt_q.opcode inside {OpCopy, OpReadPhysical, OpBlitRect}) && (pkt_len_q != '0)
                        && (pkt_rows_q != '0)
                        && ({2'b00, pkt_value_q} < copy_dst_end) && ({2'b00, pkt_addr_q} < copy_src_end);

  // WAIT_MEM: ref in pkt_value[31:0], mask in pkt_value[63:32], the dword read in wait_val.
  logic [31:0]    wait_masked;
  logic           wait_hit;
  wait_mem_func_e wait_func;
  assign wait_masked = wait_val_q & pkt_value_q[63:32];
  assign wait_func   = wait_mem_func_e'(pkt_q.flags[PktWaitMemFlagFuncBit +: PktWaitMemFlagFuncWidth]);
  always_comb begin
    unique case (wait_func)
      WaitMemFuncAlways: wait_hit = 1'b1;
      WaitMemFuncLt:     wait_hit = wait_masked <  pkt_value_q[31:0];
      WaitMemFuncLe:     wait_hit = wait_masked <= pkt_value_q[31:0];
      WaitMemFuncEq:     wait_hit = wait_masked == pkt_value_q[31:0];
      WaitMemFuncNe:     wait_hit = wait_masked != pkt_value_q[31:0];
      WaitMemFuncGe:     wait_hit = wait_masked >= pkt_value_q[31:0];
      WaitMemFuncGt:     wait_hit = wait_masked >  pkt_value_q[31:0];
      default:           wait_hit = 1'b0;  // NEVER
    endcase
  end

  // Watchdog: wd_q counts the cycles since the last progress while a submission is executed.
  logic wd_active;
  assign wd_active = !(state_q inside {StIdle, StFaultDrain, StFaulted, StReset, StPreemptDrain,
                                       StPreemptWrite, StPreemptAck, StPreempted});

  logic fence_value64;
  assign fence_value64 = pkt_q.flags[PktFenceFlagValue64Bit];
  // MAP/UNMAP: first_page in pkt_value[31:0], count in pkt_value[63:32] (as TLB_INVALIDATE).
  // The range must end at or below GART_TABLE_SIZE; its PTEs start at table_pte.
  logic            map_out_of_range;
  sgpu_pkg::addr_t table_pte;
  assign map_out_of_range = (33'(pkt_value_q[31:0]) + 33'(pkt_value_q[63:32]))
                            > 33'(gart_table_size_i);
  assign table_pte = {gart_table_base_i[63:12], 12'h000}
                     + sgpu_pkg::addr_t'({pkt_value_q[31:0], 3'b000});
  logic unused_table_base;  // bits 11:0 of GART_TABLE_BASE are ignored (docs/gart.md)
  assign unused_table_base = ^gart_table_base_i[11:0];

  // READ/WRITE_PHYSICAL: the range must end at or below 2^SysAddrBits (65-bit ends).
  localparam logic [64:0] PhysLimit = 65'(1) << SysAddrBits;
  logic [64:0] wphys_end, rphys_end;
  assign wphys_end = {1'b0, dw, pkt_addr_q[31:0]} + 65'({pkt_q.dwords - 16'd3, 2'b00});
  assign rphys_end = {1'b0, pkt_value_q} + 65'(dw);

  logic last_dword;  // the payload dword at the stream head is the packet's last
  assign last_dword = (pkt_idx_q == pkt_q.dwords - 16'd2);

  // Payload decoding below takes dword positions from sgpu_abi_pkg (spec/abi.toml); these
  // checks hold what its shortcuts assume: packets that share a decoder share their layout, and
  // the field a `default` branch collects is the packet's last fixed dword.
  if (PldWritePhysicalAddrLo != PldWriteDataAddrLo || PldWritePhysicalAddrHi != PldWriteDataAddrHi
      || PldWritePhysicalData != PldWriteDataData
      || PldReadPhysicalSrcLo != PldCopySrcLo || PldReadPhysicalSrcHi != PldCopySrcHi
      || PldReadPhysicalDstLo != PldCopyDstLo || PldReadPhysicalDstHi != PldCopyDstHi
      || PldReadPhysicalBytes != PldCopyBytes) begin : g_bad_shared_layout
    $error("sgpu_cp: WRITE_PHYSICAL/WRITE_DATA or READ_PHYSICAL/COPY payload layouts differ");
  end
  if (PldFenceValueHi != PldFenceDwords || PldCopyBytes != PldCopyDwords || PldFillPattern != PldFillDwords
      || PldBlitRectDstPitch != PldBlitRectDwords || PldFillRectPattern != PldFillRectDwords
      || PldWaitMemInterval != PldWaitMemDwords || PldUnmapDummyHi != PldUnmapDwords
      || PldBlitRectDwords > 8 || PldFenceDwords > 4 || PldFillDwords > 4 || PldUnmapDwords > 4)
  begin : g_bad_payload_order
    $error("sgpu_cp: a payload decoder's last field or index width does not match sgpu_abi_pkg");
  end

  // ------------------------------------------------------------------ main FSM
  always_comb begin
    state_d        = state_q;
    head_d         = head_q;
    entry_d        = entry_q;
    entry_idx_d    = entry_idx_q;
    buf_left_d     = buf_left_q;
    offset_d       = offset_q;
    pkt_d          = pkt_q;
    pkt_idx_d      = pkt_idx_q;
    pkt_addr_d     = pkt_addr_q;
    pkt_value_d    = pkt_value_q;
    pkt_len_d      = pkt_len_q;
    pkt_pat_d      = pkt_pat_q;
    pkt_rows_d     = pkt_rows_q;
    pkt_spitch_d   = pkt_spitch_q;
    pkt_dpitch_d   = pkt_dpitch_q;
    src_ext_d      = src_ext_q;
    dst_ext_d      = dst_ext_q;
    wb_second_d    = wb_second_q;
    pkt_hdr_addr_d = pkt_hdr_addr_q;
    wait_val_d     = wait_val_q;
    wait_cnt_d     = wait_cnt_q;
    buf_base_d     = buf_base_q;
    pkt_hdr_off_d  = pkt_hdr_off_q;
    pre_pend_d     = pre_pend_q || preempt_req_i;
    pre_entry_d    = pre_entry_q;
    stack_d        = stack_q;
    depth_d        = depth_q;
    fence_done_d   = fence_done_q;
    fault_reason_d = fault_reason_q;
    fault_index_d  = fault_index_q;
    fault_addr_d   = fault_addr_q;
    fault_fence_d  = fault_fence_q;
    fault_detail_d = fault_detail_q;

    copy_status_ready_o = 1'b0;
    dma_req_valid_o     = 1'b0;
    dma_req_o           = '0;
    dma_status_ready_o  = 1'b0;
    dma_abort_o         = 1'b0;
    dw_ready            = 1'b0;
    dw_clear            = 1'b0;
    evt_dma_completed_o = 1'b0;
    evt_fault_o         = 1'b0;
    evt_preempted_o     = 1'b0;

    unique case (state_q)
      StIdle: begin
        if (pre_pend_q) begin
          state_d     = StPreemptDrain;
          pre_entry_d = 1'b0;
        end else if (enable_i && ((head_q & ring_mask) != (ring_tail_i & ring_mask))) begin
          state_d = StRingReq;
        end
      end

      StRingReq: begin
        dma_req_valid_o = 1'b1;
        dma_req_o       = '{addr: entry_addr, len: sgpu_dma_pkg::len_t'(RingEntryBytes), tag: TagRing};
        entry_idx_d     = '0;
        if (dma_req_ready_i) state_d = StRingData;
      end

      StRingData: begin
        dw_ready = 1'b1;
        if (dw_valid) begin
          entry_d[32*entry_idx_q +: 32] = dw;
          entry_idx_d = entry_idx_q + 1'b1;
          if (entry_idx_q == 3'(RingEntryDwords - 1)) state_d = StRingStatus;
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          state_d = StFaultDrain;
          fault_reason_d = dma_fault(dma_status_i.err);
          fault_addr_d   = entry_addr;
          fault_fence_d  = '0;
          fault_detail_d = 32'(dma_status_i.err);
        end
      end

      StRingStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            state_d        = StFaultDrain;
            fault_reason_d = dma_fault(dma_status_i.err);
            fault_addr_d   = entry_addr;
            fault_fence_d  = '0;
            fault_detail_d = 32'(dma_status_i.err);
          end else if (entry_q.buf_addr_lo[1:0] != 2'b00 || entry_q.start_offset[1:0] != 2'b00
                       || entry_q.end_offset[1:0] != 2'b00 || entry_q.start_offset > entry_q.end_offset
                       || (entry_q.flags & ~RingFlagsMask) != '0) begin
            state_d        = StFaultDrain;
            fault_reason_d = FaultBadRingEntry;
            fault_addr_d   = entry_addr;
            fault_fence_d  = {entry_q.fence_hi, entry_q.fence_lo};
            fault_detail_d = entry_q.flags;
          end else if (entry_q.start_offset == entry_q.end_offset
                       || entry_q.flags[RingFlagNullRenderBit]) begin
            state_d     = StRetireDrain;
            wb_second_d = 1'b0;
          end else begin
            state_d    = StBufReq;
            buf_left_d = 30'((entry_q.end_offset - entry_q.start_offset) >> 2);
            buf_base_d = buf_addr;
            offset_d   = entry_q.start_offset;
            depth_d    = '0;
          end
        end
      end

      StBufReq: begin
        dma_req_valid_o = 1'b1;
        dma_req_o       = '{addr: buf_addr + sgpu_pkg::addr_t'(entry_q.start_offset),
                            len:  sgpu_dma_pkg::len_t'(entry_q.end_offset - entry_q.start_offset),
                            tag:  TagBuffer};
        if (dma_req_ready_i) state_d = StPktHeader;
      end

      StPktHeader: begin
        if (buf_left_q == '0) begin
          state_d = StBufStatus;
        end else if (pre_pend_q) begin
          // A packet boundary: offset_q is the next header.
          state_d     = StPreemptDrain;
          pre_entry_d = 1'b1;
        end else if (dw_valid) begin
          dw_ready     = 1'b1;
          offset_d     = offset_q + 32'd4;
          pkt_d        = hdr;
          pkt_hdr_addr_d = next_gpu_addr;
          pkt_hdr_off_d  = offset_q;
          pkt_idx_d    = '0;
          // One row without pitches unless a 2-D packet's payload says otherwise.
          pkt_rows_d   = 32'd1;
          pkt_spitch_d = '0;
          pkt_dpitch_d = '0;
          if (hdr_fault != FaultNone) begin
            state_d        = StFaultDrain;
            fault_reason_d = hdr_fault;
            fault_addr_d   = next_gpu_addr;
            fault_detail_d = dw;
          end else begin
            buf_left_d = buf_left_q - 30'(hdr.dwords);
            if (hdr.dwords != 16'd1) state_d = StPktBody;
          end
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          state_d        = StFaultDrain;
          fault_reason_d = dma_fault(dma_status_i.err);
          fault_addr_d   = next_gpu_addr;
          fault_detail_d = 32'(dma_status_i.err);
        end
      end

      StPktBody: begin
        if (dw_valid) begin
          unique case (pkt_q.opcode)
            OpWriteData, OpWritePhysical: begin
              if (pkt_idx_q == 16'(PldWriteDataAddrLo - 1)) begin
                dw_ready = 1'b1;
                pkt_addr_d[31:0] = dw;
              end else if (pkt_idx_q == 16'(PldWriteDataAddrHi - 1)) begin
                dw_ready = 1'b1;
                pkt_addr_d[63:32] = dw;
                if (pkt_addr_q[1:0] != 2'b00) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadAlignment;
                  fault_addr_d   = {dw, pkt_addr_q[31:0]};
                  fault_detail_d = 32'(pkt_q);
                end else if (pkt_q.opcode == OpWritePhysical && wphys_end > PhysLimit) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultPhysicalRange;
                  fault_addr_d   = {dw, pkt_addr_q[31:0]};
                  fault_detail_d = 32'(pkt_q);
                end
              end else begin
                // A data dword: the write request offers it (below); it leaves when taken.
                dw_ready   = wr_ready_i;
                if (wr_ready_i) pkt_addr_d = pkt_addr_q + sgpu_pkg::addr_t'(4);
              end
            end
            OpFence: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[1:0])
                2'(PldFenceAddrLo - 1): pkt_addr_d[31:0]   = dw;
                2'(PldFenceAddrHi - 1): pkt_addr_d[63:32]  = dw;
                2'(PldFenceValueLo - 1): pkt_value_d[31:0]  = dw;
                default: pkt_value_d[63:32] = dw;  // PldFenceValueHi
              endcase
            end
            // COPY, READ_PHYSICAL: src -> pkt_value, dst -> pkt_addr, bytes -> pkt_len.
            OpCopy, OpReadPhysical: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'(PldCopySrcLo - 1): pkt_value_d[31:0]  = dw;
                3'(PldCopySrcHi - 1): pkt_value_d[63:32] = dw;
                3'(PldCopyDstLo - 1): pkt_addr_d[31:0]   = dw;
                3'(PldCopyDstHi - 1): pkt_addr_d[63:32]  = dw;
                default: pkt_len_d       = dw;  // PldCopyBytes
              endcase
            end
            // FILL: dst -> pkt_addr, bytes -> pkt_len, pattern -> pkt_pat.
            OpFill: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[1:0])
                2'(PldFillDstLo - 1): pkt_addr_d[31:0]  = dw;
                2'(PldFillDstHi - 1): pkt_addr_d[63:32] = dw;
                2'(PldFillBytes - 1): pkt_len_d         = dw;
                default: pkt_pat_d      = dw;  // PldFillPattern
              endcase
            end
            // BLIT_RECT: src -> pkt_value, dst -> pkt_addr, width, height, pitches.
            OpBlitRect: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'(PldBlitRectSrcLo - 1): pkt_value_d[31:0]  = dw;
                3'(PldBlitRectSrcHi - 1): pkt_value_d[63:32] = dw;
                3'(PldBlitRectDstLo - 1): pkt_addr_d[31:0]   = dw;
                3'(PldBlitRectDstHi - 1): pkt_addr_d[63:32]  = dw;
                3'(PldBlitRectWidth - 1): pkt_len_d          = dw;
                3'(PldBlitRectHeight - 1): pkt_rows_d         = dw;
                3'(PldBlitRectSrcPitch - 1): pkt_spitch_d       = dw;
                default: pkt_dpitch_d    = dw;  // PldBlitRectDstPitch
              endcase
            end
            // FILL_RECT: dst -> pkt_addr, width, height, dst_pitch, pattern.
            OpFillRect: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'(PldFillRectDstLo - 1): pkt_addr_d[31:0]  = dw;
                3'(PldFillRectDstHi - 1): pkt_addr_d[63:32] = dw;
                3'(PldFillRectWidth - 1): pkt_len_d         = dw;
                3'(PldFillRectHeight - 1): pkt_rows_d        = dw;
                3'(PldFillRectDstPitch - 1): pkt_dpitch_d      = dw;
                default: pkt_pat_d      = dw;  // PldFillRectPattern
              endcase
            end
            // WAIT_MEM: addr -> pkt_addr, ref -> pkt_value[31:0], mask -> pkt_value[63:32],
            // interval -> pkt_len.
            OpWaitMem: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'(PldWaitMemAddrLo - 1): pkt_addr_d[31:0]   = dw;
                3'(PldWaitMemAddrHi - 1): pkt_addr_d[63:32]  = dw;
                3'(PldWaitMemRef - 1): pkt_value_d[31:0]  = dw;
                3'(PldWaitMemMask - 1): pkt_value_d[63:32] = dw;
                default: pkt_len_d       = dw;  // PldWaitMemInterval
              endcase
            end
            OpTimestamp: begin
              dw_ready = 1'b1;
              if (pkt_idx_q[0]) pkt_addr_d[63:32] = dw;
              else              pkt_addr_d[31:0]  = dw;
            end
            // INDIRECT: addr -> pkt_addr; bytes is the last dword (used as it arrives).
            OpIndirect: begin
              dw_ready = 1'b1;
              if (pkt_idx_q == 16'(PldIndirectAddrLo - 1))      pkt_addr_d[31:0]  = dw;
              else if (pkt_idx_q == 16'(PldIndirectAddrHi - 1)) pkt_addr_d[63:32] = dw;
            end
            OpTlbInvalidate: begin
              dw_ready = 1'b1;
              if (pkt_idx_q[0]) pkt_value_d[63:32] = dw;  // count
              else              pkt_value_d[31:0]  = dw;  // first_page
            end
            // MAP: the length is checked at count, the range at pte_flags (before any PTE is
            // written); every bus address dword is then written like a WRITE_DATA dword.
            OpMap: begin
              if (pkt_idx_q == 16'(PldMapFirstPage - 1)) begin
                dw_ready = 1'b1;
                pkt_value_d[31:0] = dw;
              end else if (pkt_idx_q == 16'(PldMapCount - 1)) begin
                dw_ready = 1'b1;
                pkt_value_d[63:32] = dw;
                if ({1'b0, dw, 1'b0} + 34'd4 != 34'(pkt_q.dwords)) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadLength;
                  fault_addr_d   = pkt_hdr_addr_q;
                  fault_detail_d = 32'(pkt_q);
                end
              end else if (pkt_idx_q == 16'(PldMapPteFlags - 1)) begin
                dw_ready   = 1'b1;
                pkt_pat_d  = dw;
                pkt_addr_d = table_pte;
                if (map_out_of_range) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultMapRange;
                  fault_addr_d   = sgpu_pkg::addr_t'(pkt_value_q[31:0]);
                  fault_detail_d = 32'(pkt_q);
                end
              end else begin
                dw_ready = wr_ready_i;
                if (wr_ready_i) pkt_addr_d = pkt_addr_q + sgpu_pkg::addr_t'(4);
              end
            end
            // UNMAP: first_page, count -> pkt_value; dummy PTE -> {pkt_dpitch, pkt_spitch}.
            OpUnmap: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[1:0])
                2'(PldUnmapFirstPage - 1): pkt_value_d[31:0]  = dw;
                2'(PldUnmapCount - 1): pkt_value_d[63:32] = dw;
                2'(PldUnmapDummyLo - 1): pkt_spitch_d       = dw;
                default: begin  // PldUnmapDummyHi
                  pkt_dpitch_d = dw;
                  pkt_addr_d   = table_pte;
                  pkt_len_d    = pkt_value_q[63:32];
                  if (map_out_of_range) begin
                    state_d        = StFaultDrain;
                    fault_reason_d = FaultMapRange;
                    fault_addr_d   = sgpu_pkg::addr_t'(pkt_value_q[31:0]);
                    fault_detail_d = 32'(pkt_q);
                  end
                end
              endcase
            end
            default: dw_ready = 1'b1;  // NOP payload is skipped
          endcase
          if (dw_ready && state_d == StPktBody) begin
            offset_d  = offset_q + 32'd4;
            pkt_idx_d = pkt_idx_q + 16'd1;
            if (last_dword) begin
              if (pkt_q.opcode == OpFence) begin
                if ((fence_value64 && pkt_addr_q[2:0] != 3'b000) || pkt_addr_q[1:0] != 2'b00) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadAlignment;
                  fault_addr_d   = pkt_addr_q;
                  fault_detail_d = 32'(pkt_q);
                end else begin
                  state_d = StFenceDrain;
                end
              end else if (pkt_q.opcode == OpWaitMem) begin
                if (pkt_addr_q[1:0] != 2'b00) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadAlignment;
                  fault_addr_d   = pkt_addr_q;
                  fault_detail_d = 32'(pkt_q);
                end else begin
                  state_d = StWaitDrain;
                end
              end else if (pkt_q.opcode == OpTimestamp) begin
                // The last dword is addr_hi; the low bits arrived with addr_lo.
                if (pkt_addr_q[2:0] != 3'b000) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadAlignment;
                  fault_addr_d   = {dw, pkt_addr_q[31:0]};
                  fault_detail_d = 32'(pkt_q);
                end else begin
                  state_d = StTsDrain;
                end
              end else if (pkt_q.opcode == OpIndirect) begin
                // dw = bytes. Checks: alignment, depth; then bytes = 0 is nothing, else call.
                if (pkt_addr_q[1:0] != 2'b00 || dw[1:0] != 2'b00) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadAlignment;
                  fault_addr_d   = pkt_addr_q;
                  fault_detail_d = 32'(pkt_q);
                end else if (32'(depth_q) >= MaxIndirectDepth) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultIndirectDepth;
                  fault_addr_d   = pkt_hdr_addr_q;
                  fault_detail_d = 32'(pkt_q);
                end else if (dw != '0) begin
                  stack_d[push_idx] = '{base: buf_base_q, offset: offset_q + 32'd4,
                                                        left: buf_left_q};
                  depth_d    = depth_q + 1'b1;
                  buf_base_d = pkt_addr_q;
                  offset_d   = '0;
                  buf_left_d = dw[31:2];
                  state_d    = StStreamStop;
                end else begin
                  state_d = StPktHeader;
                end
              end else if (pkt_q.opcode inside {OpTlbInvalidate, OpMap}) begin
                state_d = StInvDrain;
              end else if (pkt_q.opcode == OpUnmap) begin
                state_d = (pkt_value_q[63:32] == '0) ? StInvDrain : StUnmapWrite;
              end else if (pkt_q.opcode == OpReadPhysical && rphys_end > PhysLimit) begin
                // dw = bytes: the physical source range is checked before the overlap.
                state_d        = StFaultDrain;
                fault_reason_d = FaultPhysicalRange;
                fault_addr_d   = pkt_value_q;
                fault_detail_d = 32'(pkt_q);
              end else if (pkt_q.opcode inside {OpCopy, OpReadPhysical, OpFill, OpBlitRect, OpFillRect}) begin
                state_d = StCopyCheck;
              end else begin
                state_d = StPktHeader;
              end
            end
          end
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          state_d        = StFaultDrain;
          fault_reason_d = dma_fault(dma_status_i.err);
          fault_addr_d   = next_gpu_addr;
          fault_detail_d = 32'(dma_status_i.err);
        end
      end

      StFenceDrain: begin
        if (wr_idle_i) state_d = StFenceWrite;
      end

      StFenceWrite: begin
        if (wr_ready_i) state_d = StFenceAck;
      end

      StFenceAck: begin
        if (wr_idle_i) begin
          evt_dma_completed_o = pkt_q.flags[PktFenceFlagIrqBit];
          state_d = StPktHeader;
        end
      end

      // TLB_INVALIDATE: the page-table writes of earlier packets are in memory before the GART
      // is asked, and the next packet starts only after the sweep.
      StInvDrain: begin
        if (wr_idle_i) state_d = StInvReq;
      end

      StInvReq: begin
        if (inv_ready_i) state_d = StInvWait;
      end

      StInvWait: begin
        if (!inv_busy_i) state_d = StPktHeader;
      end

      // UNMAP: one 64-bit write of the dummy PTE per page, then the invalidation.
      StUnmapWrite: begin
        if (wr_ready_i) begin
          pkt_addr_d = pkt_addr_q + sgpu_pkg::addr_t'(8);
          pkt_len_d  = pkt_len_q - 32'd1;
          if (pkt_len_q == 32'd1) state_d = StInvDrain;
        end
      end

      // Copy engine packets: an overlapping COPY or BLIT_RECT is refused; otherwise the packet writes of earlier
      // packets are acknowledged before the engine reads (no read overtakes them), and the
      // next packet starts after the engine reported (every copy write acknowledged).
      // The extents are registered first: a 32 x 32 multiply stays out of the compare path.
      StCopyCheck: begin
        src_ext_d = {1'b0, 64'(rows_m1) * 64'(pkt_spitch_q)} + 65'(pkt_len_q);
        dst_ext_d = {1'b0, 64'(rows_m1) * 64'(pkt_dpitch_q)} + 65'(pkt_len_q);
        state_d   = StCopyDrain;
      end

      StCopyDrain: begin
        if (copy_overlap) begin
          state_d        = StFaultDrain;
          fault_reason_d = FaultCopyOverlap;
          fault_addr_d   = pkt_addr_q;
          fault_detail_d = 32'(pkt_q);
        end else if (wr_idle_i) begin
          state_d = StCopyReq;
        end
      end

      StCopyReq: begin
        if (copy_req_ready_i) state_d = StCopyWait;
      end

      StCopyWait: begin
        copy_status_ready_o = 1'b1;
        if (pre_pend_q && !copy_status_valid_i) begin
          // Stopped mid-copy: the packet restarts from its header on resume.
          state_d     = StPreemptDrain;
          pre_entry_d = 1'b1;
          offset_d    = pkt_hdr_off_q;
          buf_left_d  = buf_left_q + 30'(pkt_q.dwords);
        end else if (copy_status_valid_i) begin
          if (copy_status_i.err == sgpu_copy_pkg::CopyOk) begin
            state_d = StPktHeader;
          end else begin
            state_d        = StFaultDrain;
            fault_reason_d = (copy_status_i.err inside {sgpu_copy_pkg::CopyXlateFault,
                                                        sgpu_copy_pkg::CopyWrXlateFault})
                             ? FaultTranslation : FaultBusError;
            fault_addr_d   = copy_status_i.addr;
            fault_detail_d = 32'(pkt_q);
          end
        end
      end

      // WAIT_MEM: earlier writes are acknowledged before the first read (a wait sees what the
      // submission wrote); then the buffer stream is stopped so the fetch engine can poll.
      StWaitDrain: begin
        if (wr_idle_i) state_d = StStreamStop;
      end

      // The abort pulse was given on entry (below): every issued read completes and is dropped,
      // with the statuses; the dword unpacker is emptied.
      StStreamStop: begin
        dma_status_ready_o = 1'b1;
        dw_clear           = 1'b1;
        if (!dma_busy_i) state_d = (pkt_q.opcode == OpIndirect) ? StBufResume : StWaitReq;
      end

      StWaitReq: begin
        dma_req_valid_o = 1'b1;
        dma_req_o       = '{addr: pkt_addr_q, len: sgpu_dma_pkg::len_t'(4), tag: TagWait};
        if (dma_req_ready_i) state_d = StWaitData;
      end

      StWaitData: begin
        dw_ready = 1'b1;
        if (dw_valid) begin
          wait_val_d = dw;
          state_d    = StWaitStatus;
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          state_d        = StFaultDrain;
          fault_reason_d = dma_fault(dma_status_i.err);
          fault_addr_d   = pkt_addr_q;
          fault_detail_d = 32'(pkt_q);
        end
      end

      StWaitStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            state_d        = StFaultDrain;
            fault_reason_d = dma_fault(dma_status_i.err);
            fault_addr_d   = pkt_addr_q;
            fault_detail_d = 32'(pkt_q);
          end else if (wait_hit) begin
            state_d = StBufResume;
          end else begin
            state_d    = StWaitPause;
            wait_cnt_d = pkt_len_q;
          end
        end
      end

      StWaitPause: begin
        if (pre_pend_q) begin
          // Between reads: the WAIT_MEM restarts from its header on resume. Its stream is
          // already stopped, so the fetch engine is idle.
          state_d     = StPreemptDrain;
          pre_entry_d = 1'b1;
          offset_d    = pkt_hdr_off_q;
          buf_left_d  = buf_left_q + 30'(pkt_q.dwords);
        end else if (wait_cnt_q == '0) begin
          state_d = StWaitReq;
        end else begin
          wait_cnt_d = wait_cnt_q - 32'd1;
        end
      end

      // The rest of the buffer, from the byte after the packet that stopped the stream (or a
      // called buffer from its start).
      StBufResume: begin
        if (buf_left_q == '0) begin
          state_d = StBufEnd;
        end else begin
          dma_req_valid_o = 1'b1;
          dma_req_o       = '{addr: next_gpu_addr, len: sgpu_dma_pkg::len_t'({buf_left_q, 2'b00}),
                              tag: TagBuffer};
          if (dma_req_ready_i) state_d = StPktHeader;
        end
      end

      // TIMESTAMP: the value is the counter in the first cycle every earlier write is
      // acknowledged; the write is posted.
      StTsDrain: begin
        if (wr_idle_i) begin
          pkt_value_d = cycle_i;
          state_d     = StTsWrite;
        end
      end

      StTsWrite: begin
        if (wr_ready_i) state_d = StPktHeader;
      end

      StBufStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            state_d        = StFaultDrain;
            fault_reason_d = dma_fault(dma_status_i.err);
            fault_addr_d   = next_gpu_addr;
            fault_detail_d = 32'(dma_status_i.err);
          end else begin
            state_d = StBufEnd;
          end
        end
      end

      // Back to the caller of an INDIRECT, or the entry's buffer is done.
      StBufEnd: begin
        if (depth_q == '0) begin
          state_d     = StRetireDrain;
          wb_second_d = 1'b0;
        end else begin
          depth_d    = depth_q - 1'b1;
          buf_base_d = stack_q[pop_idx].base;
          offset_d   = stack_q[pop_idx].offset;
          buf_left_d = stack_q[pop_idx].left;
          state_d    = StBufResume;
        end
      end

      StRetireDrain: begin
        // Write-back record: the fence first, then {reserved, head}; both after all writes of
        // the submission were acknowledged (the first write waits for idle, the second follows).
        if ((wr_idle_i || wb_second_q) && wr_ready_i) begin
          wb_second_d = 1'b1;
          if (wb_second_q) state_d = StRetireAck;
        end
      end

      StRetireAck: begin
        if (wr_idle_i) begin
          head_d              = head_next;
          fence_done_d        = {entry_q.fence_hi, entry_q.fence_lo};
          evt_dma_completed_o = 1'b1;
          state_d             = StIdle;
        end
      end

      // Preemption: everything issued completes (reads and the copy engine's work are dropped),
      // then the record {PREEMPT_FENCE, last completed fence} is written like the write-back.
      StPreemptDrain: begin
        dma_status_ready_o  = 1'b1;
        copy_status_ready_o = 1'b1;
        dw_clear            = 1'b1;
        if (!dma_busy_i && wr_idle_i && !copy_busy_i) begin
          state_d     = StPreemptWrite;
          wb_second_d = 1'b0;
        end
      end

      StPreemptWrite: begin
        if (wr_ready_i) begin
          wb_second_d = 1'b1;
          if (wb_second_q) state_d = StPreemptAck;
        end
      end

      StPreemptAck: begin
        if (wr_idle_i) begin
          evt_preempted_o = 1'b1;
          pre_pend_d      = preempt_req_i;  // a request in this very cycle waits for the next stop
          state_d         = StPreempted;
        end
      end

      // Resume continues the stopped buffer (its remaining bytes are fetched again).
      StPreempted: begin
        if (preempt_resume_i) state_d = pre_entry_q ? StBufResume : StIdle;
      end

      StFaultDrain: begin
        dma_status_ready_o  = 1'b1;
        copy_status_ready_o = 1'b1;
        dw_clear            = 1'b1;
        if (!dma_busy_i && wr_idle_i && !copy_busy_i) begin
          evt_fault_o = 1'b1;
          state_d     = StFaulted;
        end
      end

      StFaulted: ;

      StReset: begin
        dma_status_ready_o  = 1'b1;
        copy_status_ready_o = 1'b1;
        dw_clear            = 1'b1;
        if (!dma_busy_i && wr_idle_i && !copy_busy_i) begin
          head_d         = '0;
          fault_reason_d = FaultNone;
          fault_index_d  = '0;
          fault_addr_d   = '0;
          fault_fence_d  = '0;
          fault_detail_d = '0;
          state_d        = StIdle;
        end
      end

      default: state_d = StReset;
    endcase

    // Watchdog: no progress for watchdog_i cycles. Any other fault of the same cycle wins.
    if (watchdog_i != '0 && wd_active && wd_q >= watchdog_i && state_d != StFaultDrain) begin
      state_d        = StFaultDrain;
      fault_reason_d = FaultWatchdog;
      if (reading_ring) begin
        fault_addr_d   = entry_addr;
        fault_fence_d  = '0;
        fault_detail_d = '0;
      end else if (state_q inside {StPktHeader, StBufStatus, StBufResume, StBufEnd, StRetireDrain,
                                   StRetireAck}) begin
        // Between packets: the next dword the decoder needs.
        fault_addr_d   = next_gpu_addr;
        fault_detail_d = '0;
      end else begin
        fault_addr_d   = pkt_hdr_addr_q;
        fault_detail_d = 32'(pkt_q);
      end
    end

    // A refused write translation faults at the write being offered (WRITE_DATA, FENCE or the
    // write-back record): nothing after it was executed. FAULT_DETAIL is the packet header, 0
    // for the write-back record. A bus error (below) belongs to an earlier write and wins.
    if (wr_xlate_fault_i && !(state_q inside {StFaultDrain, StFaulted, StReset})) begin
      state_d        = StFaultDrain;
      fault_reason_d = FaultTranslation;
      fault_addr_d   = wr_xlate_fault_addr_i;
      fault_detail_d = (state_q inside {StRetireDrain, StPreemptWrite}) ? '0 : 32'(pkt_q);
    end

    // A failed write faults the submission wherever the FSM is (it cannot be pending in Idle:
    // retiring waits for every acknowledgement).
    if (wr_err_i && !(state_q inside {StFaultDrain, StFaulted, StReset})) begin
      state_d        = StFaultDrain;
      fault_reason_d = FaultBusError;
      fault_addr_d   = wr_err_addr_i;
      fault_detail_d = '0;
    end

    // Every new fault names the ring entry being executed.
    if (state_d == StFaultDrain && state_q != StFaultDrain) begin
      fault_index_d = head_q[23:0];
      if (!reading_ring) fault_fence_d = {entry_q.fence_hi, entry_q.fence_lo};
    end

    if (engine_reset_i) begin
      state_d    = StReset;
      pre_pend_d = 1'b0;
    end

    // The fetch engine latches an abort: one pulse when draining starts stops it, and it reports
    // not-busy once every read it issued has returned.
    dma_abort_o = (state_d inside {StFaultDrain, StReset, StStreamStop, StPreemptDrain})
                  && !(state_q inside {StFaultDrain, StReset, StStreamStop, StPreemptDrain});
  end

  // Progress: a dword taken from the ring entry or buffer stream (not a WAIT_MEM read), a write
  // accepted, a copy-engine data beat written.
  always_comb begin
    wd_d = (wd_q == '1) ? wd_q : wd_q + 32'd1;
    if (!wd_active || (dw_valid && dw_ready && state_q != StWaitData) || (wr_valid_o && wr_ready_i)
        || copy_progress_i) begin
      wd_d = '0;
    end
  end

  // ------------------------------------------------------------------ write request
  // A function of registered state and the dword at the head of the stream, never of
  // wr_ready_i: the write path's ready depends on the address (sgpu_wr_xlate accepts a write
  // once its page is translated), so a request that depended on ready would close a loop.
  logic wr_data_dword;  // the stream head is a WRITE_DATA data dword
  assign wr_data_dword = (state_q == StPktBody) && dw_valid
                         && (((pkt_q.opcode inside {OpWriteData, OpWritePhysical}) && (pkt_idx_q >= 16'(PldWriteDataData - 1)))
                             || ((pkt_q.opcode == OpMap) && (pkt_idx_q >= 16'(PldMapBusAddr - 1))));
  // The dword written: MAP's low PTE dwords (8-byte aligned) get the flags in bits 2:0.
  logic [31:0] wr_dword;
  assign wr_dword = (pkt_q.opcode == OpMap && !pkt_addr_q[2]) ? {dw[31:12], 9'h000, pkt_pat_q[2:0]}
                                                              : dw;

  always_comb begin
    wr_valid_o = 1'b0;
    wr_addr_o  = '0;
    wr_data_o  = '0;
    wr_strb_o  = '0;
    if (wr_data_dword) begin
      wr_valid_o = 1'b1;
      wr_addr_o  = {pkt_addr_q[63:3], 3'b000};
      wr_data_o  = pkt_addr_q[2] ? {wr_dword, 32'h0} : {32'h0, wr_dword};
      wr_strb_o  = pkt_addr_q[2] ? 8'hf0 : 8'h0f;
    end else if (state_q == StUnmapWrite) begin
      wr_valid_o = 1'b1;
      wr_addr_o  = pkt_addr_q;
      wr_data_o  = {pkt_dpitch_q, pkt_spitch_q};
      wr_strb_o  = 8'hff;
    end else if (state_q == StFenceWrite) begin
      wr_valid_o = 1'b1;
      wr_addr_o  = {pkt_addr_q[63:3], 3'b000};
      if (fence_value64) begin
        wr_data_o = pkt_value_q;
        wr_strb_o = 8'hff;
      end else begin
        wr_data_o = pkt_addr_q[2] ? {pkt_value_q[31:0], 32'h0} : {32'h0, pkt_value_q[31:0]};
        wr_strb_o = pkt_addr_q[2] ? 8'hf0 : 8'h0f;
      end
    end else if (state_q == StTsWrite) begin
      wr_valid_o = 1'b1;
      wr_addr_o  = pkt_addr_q;
      wr_data_o  = pkt_value_q;
      wr_strb_o  = 8'hff;
    end else if (state_q == StPreemptWrite) begin
      // Preemption record: {PREEMPT_FENCE, last completed fence} (StPreemptDrain drained).
      wr_valid_o = 1'b1;
      wr_strb_o  = 8'hff;
      wr_addr_o  = wb_second_q ? preempt_addr_i + sgpu_pkg::addr_t'(8) : preempt_addr_i;
      wr_data_o  = wb_second_q ? fence_done_q : preempt_fence_i;
    end else if (state_q == StRetireDrain && (wr_idle_i || wb_second_q)) begin
      // Write-back record: the fence first, then {reserved, head}.
      wr_valid_o = 1'b1;
      wr_strb_o  = 8'hff;
      wr_addr_o  = wb_second_q ? wb_addr_i + sgpu_pkg::addr_t'(8) : wb_addr_i;
      wr_data_o  = wb_second_q ? {32'h0, head_next} : {entry_q.fence_hi, entry_q.fence_lo};
    end
  end

  assign inv_valid_o = (state_q == StInvReq);

  assign copy_req_valid_o = (state_q == StCopyReq);
  assign copy_req_o       = '{op:        (pkt_q.opcode inside {OpFill, OpFillRect})
                                             ? sgpu_copy_pkg::CopyOpFill : sgpu_copy_pkg::CopyOpCopy,
                              src:       pkt_value_q,
                              dst:       pkt_addr_q,
                              width:     pkt_len_q,
                              height:    pkt_rows_q,
                              src_pitch: pkt_spitch_q,
                              dst_pitch: pkt_dpitch_q,
                              pattern:   pkt_pat_q};
  // Level: the engine drains (issued reads complete, issued bursts finish with zero strobes).
  assign copy_abort_o     = state_q inside {StFaultDrain, StReset, StPreemptDrain};
  assign inv_o       = '{all:   pkt_q.flags[PktTlbInvalidateFlagAllBit],
                         first: pkt_value_q[31:0],
                         count: pkt_value_q[63:32]};

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q        <= StIdle;
      head_q         <= '0;
      entry_idx_q    <= '0;
      buf_left_q     <= '0;
      offset_q       <= '0;
      pkt_idx_q      <= '0;
      wb_second_q    <= 1'b0;
      wait_cnt_q     <= '0;
      wd_q           <= '0;
      depth_q        <= '0;
      pre_pend_q     <= 1'b0;
      pre_entry_q    <= 1'b0;
      fence_done_q   <= '0;
      fault_reason_q <= FaultNone;
      fault_index_q  <= '0;
      fault_addr_q   <= '0;
      fault_fence_q  <= '0;
      fault_detail_q <= '0;
    end else begin
      state_q        <= state_d;
      head_q         <= head_d;
      entry_idx_q    <= entry_idx_d;
      buf_left_q     <= buf_left_d;
      offset_q       <= offset_d;
      pkt_idx_q      <= pkt_idx_d;
      wb_second_q    <= wb_second_d;
      wait_cnt_q     <= wait_cnt_d;
      wd_q           <= wd_d;
      depth_q        <= depth_d;
      pre_pend_q     <= pre_pend_d;
      pre_entry_q    <= pre_entry_d;
      fence_done_q   <= fence_done_d;
      fault_reason_q <= fault_reason_d;
      fault_index_q  <= fault_index_d;
      fault_addr_q   <= fault_addr_d;
      fault_fence_q  <= fault_fence_d;
      fault_detail_q <= fault_detail_d;
    end
  end

  // Datapath registers: only meaningful in the states that load them.
  always_ff @(posedge clk_i) begin
    entry_q     <= entry_d;
    pkt_q       <= pkt_d;
    pkt_addr_q  <= pkt_addr_d;
    pkt_value_q <= pkt_value_d;
    pkt_len_q   <= pkt_len_d;
    pkt_pat_q   <= pkt_pat_d;
    pkt_rows_q  <= pkt_rows_d;
    pkt_spitch_q <= pkt_spitch_d;
    pkt_dpitch_q <= pkt_dpitch_d;
    src_ext_q   <= src_ext_d;
    dst_ext_q   <= dst_ext_d;
    pkt_hdr_addr_q <= pkt_hdr_addr_d;
    wait_val_q  <= wait_val_d;
    buf_base_q  <= buf_base_d;
    pkt_hdr_off_q <= pkt_hdr_off_d;
    stack_q     <= stack_d;
  end

  assign ring_head_o        = head_q;
  assign fence_done_o       = fence_done_q;
  assign faulted_o          = (state_q == StFaulted);
  assign resetting_o        = (state_q == StReset);
  assign idle_o             = (state_q inside {StIdle, StFaulted, StPreempted}) && !dma_busy_i && wr_idle_i
                              && !copy_busy_i;
  assign fault_reason_o     = fault_reason_q;
  assign fault_ring_index_o = fault_index_q;
  assign fault_addr_o       = fault_addr_q;
  assign fault_fence_o      = fault_fence_q;
  assign fault_detail_o     = fault_detail_q;
  assign preempt_pending_o  = pre_pend_q;
  assign preempted_o        = (state_q == StPreempted);
  assign preempt_in_entry_o = pre_entry_q && (state_q == StPreempted);
  // Inside a called buffer: the level-0 INDIRECT (4 dwords) before the caller's saved offset.
  assign preempt_offset_o   = (depth_q == '0) ? offset_q : stack_q[0].offset - 32'd16;

  // entry_q is only complete once StRingData has collected it.
  assign reading_ring      = state_q inside {StIdle, StRingReq, StRingData, StRingStatus};
  assign exec_privileged_o = reading_ring || privileged;
  assign exec_fence_o      = reading_ring ? '0 : {entry_q.fence_hi, entry_q.fence_lo};
  assign exec_context_o    = reading_ring ? '0 : entry_q.context_id;
  assign wr_priv_o         = (state_q inside {StRetireDrain, StPreemptWrite}) || privileged;

`ifndef SYNTHESIS
  // A status belongs to the request the FSM is reading (except while draining, which drops all).
  StatusMatchesRequest: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (dma_status_valid_i && dma_status_ready_o && !(state_q inside {StFaultDrain, StReset, StStreamStop}))
      |-> dma_status_i.tag == ((state_q inside {StRingData, StRingStatus}) ? TagRing
                               : (state_q inside {StWaitData, StWaitStatus}) ? TagWait : TagBuffer));
  // The stream is only re-requested once the aborted one drained.
  ResumeAfterDrain: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StStreamStop && state_d == StWaitReq |-> !dma_busy_i);
  // MAP/UNMAP write only PTEs inside [table base, + 8 * GART_TABLE_SIZE), and only when the
  // range check passed (a privileged entry: the table is system physical).
  MapWritesInTable: assert property (@(posedge clk_i) disable iff (!rst_ni)
      wr_valid_o && ((state_q == StUnmapWrite) || (wr_data_dword && pkt_q.opcode == OpMap))
      |-> privileged && !map_out_of_range
          && ({1'b0, wr_addr_o} >= {1'b0, gart_table_base_i[63:12], 12'h000})
          && ({1'b0, wr_addr_o} < {1'b0, gart_table_base_i[63:12], 12'h000}
                                  + 65'({gart_table_size_i, 3'b000})));
  // WRITE_PHYSICAL writes only below 2^SysAddrBits (system physical: never translated).
  PhysWritesBelowLimit: assert property (@(posedge clk_i) disable iff (!rst_ni)
      wr_valid_o && wr_data_dword && pkt_q.opcode == OpWritePhysical
      |-> privileged && ({1'b0, wr_addr_o} < PhysLimit));
  // UNMAP writes at least one PTE once it is in its write state.
  UnmapCountNonzero: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StUnmapWrite |-> pkt_len_q != '0);
  // The invalidation request stays up until the GART takes it (only an engine reset ends it).
  InvValidHeld: assert property (@(posedge clk_i) disable iff (!rst_ni)
      inv_valid_o && !inv_ready_i && !engine_reset_i |=> inv_valid_o);
  CopyReqHeld: assert property (@(posedge clk_i) disable iff (!rst_ni)
      copy_req_valid_o && !copy_req_ready_i && !engine_reset_i |=> copy_req_valid_o);
  DepthBounded: assert property (@(posedge clk_i) disable iff (!rst_ni)
      32'(depth_q) <= MaxIndirectDepth);
  BodyHasPayload: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StPktBody |-> pkt_q.dwords >= 16'd2);
`endif

endmodule

`default_nettype wire
