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
// the register path in sgpu_top) and waits until the sweep is done.
`default_nettype none

module sgpu_cp
  import sgpu_abi_pkg::*;
#(
  /// Data width of the fetch engine's stream in bits.
  parameter int unsigned DataWidth = 64
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

  typedef enum logic [4:0] {
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
    StCopyCheck,    // copy engine packets: registering the source and destination extents
    StCopyDrain,    // copy engine packets: overlap check; waiting for every earlier write
    StCopyReq,      // copy engine packets: offering the request to the copy engine
    StCopyWait,     // copy engine packets: waiting for the engine's status
    StBufStatus,    // all packets consumed; waiting for the fetch status
    StRetireDrain,  // waiting for the submission's writes, then writing the write-back record
    StRetireAck,    // waiting for the write-back record to be acknowledged
    StFaultDrain,   // fault recorded; aborting the fetch and draining writes
    StFaulted,      // stopped until an engine reset
    StReset         // engine reset: draining, then clearing
  } state_e;

  localparam sgpu_dma_pkg::tag_t TagRing   = sgpu_dma_pkg::tag_t'(0);
  localparam sgpu_dma_pkg::tag_t TagBuffer = sgpu_dma_pkg::tag_t'(1);

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
  logic [64:0]     src_ext_q, src_ext_d;         // (rows - 1) * pitch + bytes: extents checked
  logic [64:0]     dst_ext_q, dst_ext_d;         // for overlap
  logic            wb_second_q, wb_second_d;     // second dword pair of the write-back record
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

  assign ring_mask     = (32'd1 << ring_log2_i) - 32'd1;
  assign head_next     = (head_q + 32'd1) & ring_mask;
  assign entry_addr    = ring_base_i + sgpu_pkg::addr_t'({head_q & ring_mask, 5'b00000});
  assign buf_addr      = {entry_q.buf_addr_hi, entry_q.buf_addr_lo};
  assign next_gpu_addr = buf_addr + sgpu_pkg::addr_t'(offset_q);
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
      OpTlbInvalidate: begin
        hdr_privileged = PktTlbInvalidatePrivileged;
        if (!(32'(hdr.dwords) inside {[PktTlbInvalidateMinDwords:PktTlbInvalidateMaxDwords]})) hdr_fault = FaultBadLength;
        else if ((hdr.flags & ~PktTlbInvalidateFlagsMask) != '0) hdr_fault = FaultReservedBits;
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
  assign copy_overlap = (pkt_q.opcode inside {OpCopy, OpBlitRect}) && (pkt_len_q != '0)
                        && (pkt_rows_q != '0)
                        && ({2'b00, pkt_value_q} < copy_dst_end) && ({2'b00, pkt_addr_q} < copy_src_end);

  logic fence_value64;
  assign fence_value64 = pkt_q.flags[PktFenceFlagValue64Bit];
  logic last_dword;  // the payload dword at the stream head is the packet's last
  assign last_dword = (pkt_idx_q == pkt_q.dwords - 16'd2);

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

    unique case (state_q)
      StIdle: begin
        if (enable_i && ((head_q & ring_mask) != (ring_tail_i & ring_mask))) state_d = StRingReq;
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
            offset_d   = entry_q.start_offset;
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
        end else if (dw_valid) begin
          dw_ready     = 1'b1;
          offset_d     = offset_q + 32'd4;
          pkt_d        = hdr;
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
            OpWriteData: begin
              if (pkt_idx_q == 16'd0) begin
                dw_ready = 1'b1;
                pkt_addr_d[31:0] = dw;
              end else if (pkt_idx_q == 16'd1) begin
                dw_ready = 1'b1;
                pkt_addr_d[63:32] = dw;
                if (pkt_addr_q[1:0] != 2'b00) begin
                  state_d        = StFaultDrain;
                  fault_reason_d = FaultBadAlignment;
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
                2'd0: pkt_addr_d[31:0]   = dw;
                2'd1: pkt_addr_d[63:32]  = dw;
                2'd2: pkt_value_d[31:0]  = dw;
                default: pkt_value_d[63:32] = dw;
              endcase
            end
            // COPY: src -> pkt_value, dst -> pkt_addr, bytes -> pkt_len.
            OpCopy: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'd0: pkt_value_d[31:0]  = dw;
                3'd1: pkt_value_d[63:32] = dw;
                3'd2: pkt_addr_d[31:0]   = dw;
                3'd3: pkt_addr_d[63:32]  = dw;
                default: pkt_len_d       = dw;
              endcase
            end
            // FILL: dst -> pkt_addr, bytes -> pkt_len, pattern -> pkt_pat.
            OpFill: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[1:0])
                2'd0: pkt_addr_d[31:0]  = dw;
                2'd1: pkt_addr_d[63:32] = dw;
                2'd2: pkt_len_d         = dw;
                default: pkt_pat_d      = dw;
              endcase
            end
            // BLIT_RECT: src -> pkt_value, dst -> pkt_addr, width, height, pitches.
            OpBlitRect: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'd0: pkt_value_d[31:0]  = dw;
                3'd1: pkt_value_d[63:32] = dw;
                3'd2: pkt_addr_d[31:0]   = dw;
                3'd3: pkt_addr_d[63:32]  = dw;
                3'd4: pkt_len_d          = dw;
                3'd5: pkt_rows_d         = dw;
                3'd6: pkt_spitch_d       = dw;
                default: pkt_dpitch_d    = dw;
              endcase
            end
            // FILL_RECT: dst -> pkt_addr, width, height, dst_pitch, pattern.
            OpFillRect: begin
              dw_ready = 1'b1;
              unique case (pkt_idx_q[2:0])
                3'd0: pkt_addr_d[31:0]  = dw;
                3'd1: pkt_addr_d[63:32] = dw;
                3'd2: pkt_len_d         = dw;
                3'd3: pkt_rows_d        = dw;
                3'd4: pkt_dpitch_d      = dw;
                default: pkt_pat_d      = dw;
              endcase
            end
            OpTlbInvalidate: begin
              dw_ready = 1'b1;
              if (pkt_idx_q[0]) pkt_value_d[63:32] = dw;  // count
              else              pkt_value_d[31:0]  = dw;  // first_page
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
              end else if (pkt_q.opcode == OpTlbInvalidate) begin
                state_d = StInvDrain;
              end else if (pkt_q.opcode inside {OpCopy, OpFill, OpBlitRect, OpFillRect}) begin
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
        if (copy_status_valid_i) begin
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

      StBufStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            state_d        = StFaultDrain;
            fault_reason_d = dma_fault(dma_status_i.err);
            fault_addr_d   = next_gpu_addr;
            fault_detail_d = 32'(dma_status_i.err);
          end else begin
            state_d     = StRetireDrain;
            wb_second_d = 1'b0;
          end
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

    // A refused write translation faults at the write being offered (WRITE_DATA, FENCE or the
    // write-back record): nothing after it was executed. FAULT_DETAIL is the packet header, 0
    // for the write-back record. A bus error (below) belongs to an earlier write and wins.
    if (wr_xlate_fault_i && !(state_q inside {StFaultDrain, StFaulted, StReset})) begin
      state_d        = StFaultDrain;
      fault_reason_d = FaultTranslation;
      fault_addr_d   = wr_xlate_fault_addr_i;
      fault_detail_d = (state_q == StRetireDrain) ? '0 : 32'(pkt_q);
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
      if (state_q != StRingData && state_q != StRingStatus) fault_fence_d = {entry_q.fence_hi, entry_q.fence_lo};
    end

    if (engine_reset_i) state_d = StReset;

    // The fetch engine latches an abort: one pulse when draining starts stops it, and it reports
    // not-busy once every read it issued has returned.
    dma_abort_o = (state_d inside {StFaultDrain, StReset}) && !(state_q inside {StFaultDrain, StReset});
  end

  // ------------------------------------------------------------------ write request
  // A function of registered state and the dword at the head of the stream, never of
  // wr_ready_i: the write path's ready depends on the address (sgpu_wr_xlate accepts a write
  // once its page is translated), so a request that depended on ready would close a loop.
  logic wr_data_dword;  // the stream head is a WRITE_DATA data dword
  assign wr_data_dword = (state_q == StPktBody) && dw_valid && (pkt_q.opcode == OpWriteData)
                         && (pkt_idx_q >= 16'd2);

  always_comb begin
    wr_valid_o = 1'b0;
    wr_addr_o  = '0;
    wr_data_o  = '0;
    wr_strb_o  = '0;
    if (wr_data_dword) begin
      wr_valid_o = 1'b1;
      wr_addr_o  = {pkt_addr_q[63:3], 3'b000};
      wr_data_o  = pkt_addr_q[2] ? {dw, 32'h0} : {32'h0, dw};
      wr_strb_o  = pkt_addr_q[2] ? 8'hf0 : 8'h0f;
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
  assign copy_abort_o     = state_q inside {StFaultDrain, StReset};
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
  end

  assign ring_head_o        = head_q;
  assign fence_done_o       = fence_done_q;
  assign faulted_o          = (state_q == StFaulted);
  assign resetting_o        = (state_q == StReset);
  assign idle_o             = (state_q inside {StIdle, StFaulted}) && !dma_busy_i && wr_idle_i
                              && !copy_busy_i;
  assign fault_reason_o     = fault_reason_q;
  assign fault_ring_index_o = fault_index_q;
  assign fault_addr_o       = fault_addr_q;
  assign fault_fence_o      = fault_fence_q;
  assign fault_detail_o     = fault_detail_q;

  // entry_q is only complete once StRingData has collected it.
  logic reading_ring;
  assign reading_ring      = state_q inside {StIdle, StRingReq, StRingData, StRingStatus};
  assign exec_privileged_o = reading_ring || privileged;
  assign exec_fence_o      = reading_ring ? '0 : {entry_q.fence_hi, entry_q.fence_lo};
  assign exec_context_o    = reading_ring ? '0 : entry_q.context_id;
  assign wr_priv_o         = (state_q == StRetireDrain) || privileged;

`ifndef SYNTHESIS
  // A status belongs to the request the FSM is reading (except while draining, which drops all).
  StatusMatchesRequest: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (dma_status_valid_i && dma_status_ready_o && !(state_q inside {StFaultDrain, StReset}))
      |-> dma_status_i.tag == ((state_q inside {StRingData, StRingStatus}) ? TagRing : TagBuffer));
  // The invalidation request stays up until the GART takes it (only an engine reset ends it).
  InvValidHeld: assert property (@(posedge clk_i) disable iff (!rst_ni)
      inv_valid_o && !inv_ready_i && !engine_reset_i |=> inv_valid_o);
  CopyReqHeld: assert property (@(posedge clk_i) disable iff (!rst_ni)
      copy_req_valid_o && !copy_req_ready_i && !engine_reset_i |=> copy_req_valid_o);
  BodyHasPayload: assert property (@(posedge clk_i) disable iff (!rst_ni)
      state_q == StPktBody |-> pkt_q.dwords >= 16'd2);
`endif

endmodule

`default_nettype wire
