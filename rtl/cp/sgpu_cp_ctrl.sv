// Command processor controller: the FSM that fetches ring entries, streams their DMA buffers,
// executes packets and retires entries, with the registers it sequences. It decodes and judges
// nothing itself: sgpu_cp_decode checks headers and routes payload dwords, sgpu_cp_check judges
// operands, sgpu_cp_stream keeps the stream position, and the FSM dispatches on the packet
// class once the payload is in. Its states and their named sets are in sgpu_cp_pkg (cp_fsm_e);
// sgpu_cp decodes the outputs that depend on the state alone.
//
// States are grouped by sub-protocol under the banners below. Faults: a state that finds one
// raises a request (fault_req) instead of changing state; after the case the requests of the
// cycle are resolved by priority (a failed write > a refused write translation > the state's
// own fault > the watchdog), the winner is recorded and the FSM drains. The state's own fault and
// the watchdog's are recorded a cycle late (fault_late_q, below): the check at the end of the
// decision only loads a register, and the cycle after it is squashed. Writes are translated
// from a write buffer (sgpu_cp_wr_buf) behind the CP, so a refusal names a write taken earlier
// and also replaces a fault the CP recorded meanwhile for a later packet. An engine reset
// overrides everything.
//
// Retirement has one commit point: the OKAY response of the write-back record's fence word,
// written last (after the head word, each once every earlier write was acknowledged). A fault
// before it leaves the fence unwritten and FENCE_DONE unchanged; after the fence word is issued
// only its own response can fault the entry (the watchdog does not count in StRetireAck), and an
// OKAY response commits even if an engine reset came meanwhile (the reset drains it).
//
// Read-ahead: once the entry's buffer is requested (at level 0, nothing else queued behind it),
// the next ring entry is read; while the entry retires its dwords are taken into a second
// entry register and, if that entry is well formed and its buffer lies inside one page, its
// buffer is read too, and then the entry after it. Read-ahead requests carry their own privilege
// and are quiet (cp_tag_t): the GART answers a translation fault without recording it. Nothing
// of an entry that has not started is visible: at the commit it starts from what was read ahead
// (StRingCheck), or everything read ahead is dropped with the fetch engine's abort (preemption,
// CTRL.enable = 0, a fault, an engine reset). A quiet read that faulted in translation is read
// again, not quietly, once its entry started, so the fault (the CP's and the GART's record) is
// the one the entry would have had without the read-ahead.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_ctrl
  import sgpu_abi_pkg::*;
  import sgpu_cp_pkg::*;
(
  input  wire logic                        clk_i,
  input  wire logic                        rst_ni,

  // Registers.
  input  wire cp_cfg_t                     cfg_i,
  input  wire cp_cmd_t                     cmd_i,
  output      cp_fsm_e                     fsm_o,
  output      logic [31:0]                 head_o,
  output      logic [63:0]                 fence_done_o,
  output      logic                        preempt_pending_o,
  output      logic                        preempt_in_entry_o,
  /// The stream stop is dropping what was read ahead (the next entry is not started).
  output      logic                        ring_drop_o,
  /// The state's own fault (or the watchdog's) was found last cycle: this cycle is squashed.
  /// sgpu_cp withholds the write, copy and invalidation requests and the idle status with it.
  output      logic                        fault_late_o,
  output      cp_evt_t                     evt_o,
  output      cp_fault_rec_t               fault_o,
  /// The free-running cycle counter, for TIMESTAMP.
  input  wire logic [63:0]                 cycle_i,

  /// The watchdog expired (sgpu_cp_watchdog).
  input  wire logic                        wd_expired_i,
  /// The write the CP offers (sgpu_cp_wr) is taken into its write buffer this cycle.
  input  wire logic                        wr_taken_i,

  // The ring entry being executed; the head after it.
  output      ring_entry_t                 entry_o,
  output      logic [31:0]                 head_next_o,

  // Dword stream (sgpu_cp_dwords).
  input  wire logic                        dw_valid_i,
  output      logic                        dw_ready_o,
  /// The dword behind the head is there too (dw2_i); with dw_ready_o, dw_two_o takes both.
  input  wire logic                        dw_valid2_i,
  input  wire logic [31:0]                 dw2_i,
  output      logic                        dw_two_o,
  /// The write offered is a WRITE_* data pair (both dwords, one word), or the first data dword
  /// behind the address high dword at the head (sgpu_cp_wr).
  output      logic                        wr_pair_o,
  output      logic                        wr_hi_o,
  output      logic                        dw_clear_o,
  input  wire logic [31:0]                 dw_i,

  // Stream position (sgpu_cp_stream).
  /// The stream operation, and the dwords of the buffer stream taken (0, 1, 2; the first a
  /// header: stream_header_o), which advance it while the operation is StreamHold.
  output      cp_stream_op_e               stream_op_o,
  output      logic [1:0]                  stream_take_o,
  output      logic                        stream_header_o,
  /// Save the position into the stack's free frame (throughout the stream stop, before a call).
  output      logic                        stream_save_o,
  /// StreamStart's buffer dwords (the entry's; its buffer and start offset are entry_o's).
  output      logic [29:0]                 stream_start_dwords_o,
  input  wire sgpu_pkg::addr_t             stream_addr_i,
  input  wire logic [31:0]                 stream_offset_i,
  input  wire logic [29:0]                 stream_left_i,
  /// stream_left_i is 0 (the stream's register).
  input  wire logic                        stream_left_zero_i,
  input  wire logic                        stream_nested_i,

  // Decoder (sgpu_cp_decode) and operand checks (sgpu_cp_check) of the packet being executed.
  input  wire cp_dec_t                     dec_i,
  input  wire cp_chk_t                     chk_i,
  /// The dword behind the head is the packet's last (the decode stage's, registered).
  input  wire logic                        last2_i,
  output      cp_pkt_t                     pkt_o,
  output      logic [15:0]                 pkt_idx_o,
  /// How the packet register moves this cycle (the decode stage routes the next dword by it).
  output      cp_pkt_step_t                pkt_step_o,

  // Fetch engine (sgpu_dma_rd).
  output      logic                        dma_req_valid_o,
  input  wire logic                        dma_req_ready_i,
  output      sgpu_dma_pkg::dma_req_t      dma_req_o,
  input  wire logic                        dma_status_valid_i,
  output      logic                        dma_status_ready_o,
  input  wire sgpu_dma_pkg::dma_status_t   dma_status_i,
  output      logic                        dma_abort_o,
  input  wire logic                        dma_busy_i,

  // Write port (sgpu_cp_wr forms the write from the state; it goes into the write buffer,
  // sgpu_cp_wr_buf, whose ready is wr_ready_i).
  output      logic                        wb_second_o,
  input  wire logic                        wr_ready_i,
  /// Nothing in the write buffer, no translation in flight, every issued write acknowledged.
  input  wire logic                        wr_idle_i,
  /// The write buffer is empty: every write taken so far was translated.
  input  wire logic                        wr_buf_empty_i,
  input  wire logic                        wr_err_i,
  input  wire sgpu_pkg::addr_t             wr_err_addr_i,
  /// The translator refused the write at the buffer's head: its first byte and FAULT_DETAIL
  /// (the packet's header when it was taken, 0 for a record). The CP may be executing a later
  /// packet by now, or draining for a fault of its own.
  input  wire logic                        wr_xlate_fault_i,
  input  wire sgpu_pkg::addr_t             wr_xlate_fault_addr_i,
  input  wire logic [31:0]                 wr_xlate_detail_i,
  /// The write buffer drops its head this cycle (a refusal, a failed write, an engine reset).
  input  wire logic                        wr_dropped_i,

  // GART invalidation and copy engine (their requests are decoded from the state).
  input  wire logic                        inv_ready_i,
  input  wire logic                        inv_busy_i,
  input  wire logic                        copy_req_ready_i,
  input  wire logic                        copy_status_valid_i,
  output      logic                        copy_status_ready_o,
  input  wire sgpu_copy_pkg::copy_status_t copy_status_i,
  input  wire logic                        copy_busy_i
);

  // The tag of a fetch request: what it reads, with whose privilege, read ahead or not.
  function automatic sgpu_dma_pkg::tag_t fetch_tag(cp_fetch_e kind, logic priv, logic quiet);
    cp_tag_t t;
    t = '{quiet: quiet, priv: priv, kind: kind};
    return sgpu_dma_pkg::tag_t'(t);
  endfunction

  cp_tag_t status_tag;  // the tag of the status offered
  assign status_tag = cp_tag_t'(dma_status_i.tag);

  ///////////////
  // Registers //
  ///////////////

  cp_fsm_e         state_q, state_d;
  logic [31:0]     head_q, head_d;
  ring_entry_t     entry_q, entry_d;
  logic            entry_bad_q, entry_empty_q;    // entry_q's checks, registered with it
  logic [2:0]      entry_idx_q, entry_idx_d;
  cp_pkt_t         pkt_q, pkt_d;                  // the packet being executed
  logic [15:0]     pkt_idx_q, pkt_idx_d;          // its payload dwords consumed
  logic            wb_second_q, wb_second_d;      // second 64-bit word of a record (the fence)
  logic            fence_out_q, fence_out_d;      // the write-back fence word is in flight
  logic [31:0]     wait_cnt_q, wait_cnt_d;        // WAIT_MEM: poll interval countdown
  logic            pre_pend_q, pre_pend_d;        // a preemption request waits
  logic            pre_entry_q, pre_entry_d;      // the preemption stopped inside an entry
  logic [63:0]     fence_done_q, fence_done_d;
  cp_fault_rec_t   fault_q, fault_d;
  logic            fault_late_q, fault_late_d;    // the state's own fault (or the watchdog's) was
  cp_fault_rec_t   late_rec_q, late_rec_d;        // found last cycle, with its record: the
  cp_fault_rec_t   wd_rec_q, wd_rec_d;            // state's own (late_rec_q) or the watchdog's
  logic            late_wd_q, late_wd_d;          // (wd_rec_q, when late_wd_q)
  cp_fault_rec_t   late_rec;                      // the one recorded
  logic            ring_pref_q, ring_pref_d;      // a ring entry read ahead is requested, its
                                                  // status not taken yet
  logic            ring_drop_q, ring_drop_d;      // StStreamStop drops what was read ahead
  ring_entry_t     next_q, next_d;                // the next entry, read ahead while retiring
  logic            next_valid_q, next_valid_d;    // next_q is complete and its read was OK
  logic            next_full_q, next_full_d;      // next_q has its eight dwords (status to come)
  logic            buf_pref_q, buf_pref_d;        // next_q's buffer is requested (read ahead)
  logic            ahead_fail_q, ahead_fail_d;    // a ring read ahead failed: read it again
                                                  // after the commit, nothing more ahead
  logic            quiet_q, quiet_d;              // the ring or buffer read of the started entry
                                                  // was read ahead (quiet)
  logic            replay_q, replay_d;            // StStreamStop: read the buffer again
  logic            dma_abort_q, dma_abort_d;      // the fetch engine's abort pulse, registered
  logic            dma_busy;                      // the fetch engine is busy or its abort pending
  logic            ovl_q, ovl_valid_q;            // COPY/BLIT_RECT overlap, registered in
                                                  // StCopyDrain
  logic [1:0]      ext_step_q, ext_step_d;        // StCopyCheck's cycle (the extents' stages)
  logic            hi_next_q, hi_next_d;          // WRITE_DATA's address high dword is next
                                                  // and may go with the first data dword
  // The fetch request leaves from a register slice (req_*_q): the request is the end of the
  // FSM's decision (the late fault's squash, the read-ahead's choice), and the fetch engine
  // writes it into its request FIFO's LUT-RAM. The FSM hands a request to the slice (req_valid,
  // req) when the slice has room (req_room: it is empty or its request leaves now, registers and
  // the engine's ready only); the request reaches the engine a cycle later.
  logic                   req_valid;     // the FSM's request this cycle
  sgpu_dma_pkg::dma_req_t req, req_case; // its data (req_case: as the FSM's case forms it)
  logic                   req_room;      // the slice takes req_valid this cycle
  logic                   req_valid_q, req_valid_d;
  sgpu_dma_pkg::dma_req_t req_q;

  /////////////
  // Helpers //
  /////////////

  logic [31:0]     ring_mask;
  sgpu_pkg::addr_t entry_addr, buf_addr;
  logic [31:0]     ahead_idx;   // the entry the ring read-ahead reads: after the head's, or
                                // after next_q's once it is read
  logic            next_ready;  // the entry at ahead_idx waits and may be read ahead
  logic            ahead_state; // a state in which a ring entry may be read ahead
  logic            buf_ahead;   // next_q's buffer may be read ahead
  sgpu_pkg::addr_t next_buf, next_buf_q;  // next_q's first buffer byte
  logic [31:0]     next_len, next_len_q;  // next_q's buffer bytes
  logic            next_fit, next_fit_q;  // next_q's buffer may be read ahead (if valid)
  logic [63:0]     entry_fence;
  pkt_header_t     hdr;      // the dword at the stream head, seen as a packet header
  copy_args_t      a;        // the argument register, copy view (slot names)
  logic [31:0]     rows_m1;  // copy engine: rows - 1 (unused when rows = 0: nothing to touch)
  logic [64:0]     src_ext, dst_ext;  // the extents of pkt_q two cycles before (sgpu_cp_extent)
  logic            drained;  // nothing of the CP's is in flight anywhere

  // The ring's index mask, bit i set below RING_SIZE.log2: a 5-bit compare per bit from the
  // configuration (a shift and a 32-bit decrement were in front of the entry address, the
  // head's increment and the read-ahead's room; asserted equal below).
  always_comb begin
    for (int unsigned i = 0; i < 32; i++) ring_mask[i] = 5'(i) < cfg_i.ring_log2;
  end
  assign head_next_o = (head_q + 32'd1) & ring_mask;
  assign ahead_idx   = head_q + {30'd0, next_valid_q, !next_valid_q};
  // The entry at the head while it is read, else the one read ahead: one adder for both.
  // Nothing names the head's entry once it was read (faults name the buffer or WB_ADDR).
  assign entry_addr  = cfg_i.ring_base
                       + sgpu_pkg::addr_t'({(reading_ring(state_q) ? head_q : ahead_idx)
                                            & ring_mask, 5'b00000});
  // Entries waiting: head (being executed) .. tail - 1; the one read ahead must be among them.
  assign next_ready  = cfg_i.enable && !pre_pend_q && !ahead_fail_q && !ring_pref_q
                       && (((cfg_i.ring_tail - head_q) & ring_mask)
                           > {30'd0, next_valid_q, !next_valid_q})
                       && (!next_valid_q || buf_pref_q);
  // A ring entry is read ahead behind the buffer of the entry being executed (requested, at
  // level 0: a called buffer's caller is re-requested after it) or while it retires.
  assign ahead_state = retiring(state_q)
                       || (state_q inside {StPktHeader, StPktBody, StBufStatus} && !stream_nested_i);
  // The next entry's buffer is read ahead only if it will be read at once when the entry starts
  // (well formed, not empty) and lies inside one page: a translation fault then comes before
  // any of its data, so the read is repeated from the buffer's start. These are registered from
  // next_q (next_buf_q, next_len_q, next_fit_q): next_q is complete a cycle before its status
  // makes next_valid_q true, so they are next_q's whenever buf_ahead reads them.
  assign next_buf    = {next_q.buf_addr_hi, next_q.buf_addr_lo}
                       + sgpu_pkg::addr_t'(next_q.start_offset);
  assign next_len    = next_q.end_offset - next_q.start_offset;
  assign next_fit    = !entry_bad(next_q) && !entry_empty(next_q)
                       && next_len <= 32'(sgpu_pkg::PageBytes) - 32'(next_buf[11:0]);
  assign buf_ahead   = retiring(state_q) && next_valid_q && !buf_pref_q && cfg_i.enable
                       && !pre_pend_q && next_fit_q;
  assign buf_addr    = {entry_q.buf_addr_hi, entry_q.buf_addr_lo};
  assign entry_fence = {entry_q.fence_hi, entry_q.fence_lo};
  assign hdr         = pkt_header_t'(dw_i);
  assign a           = pkt_q.args.copy;
  assign rows_m1     = a.height - 32'd1;
  // The write destination's next values, formed from registers and the head dword: the pair
  // (the end of the decision) only selects the sum, it is not an operand of the adder.
  sgpu_pkg::addr_t dst_plus4, dst_plus8, hi_plus4;
  assign dst_plus4 = a.dst + sgpu_pkg::addr_t'(4);
  assign dst_plus8 = a.dst + sgpu_pkg::addr_t'(8);
  assign hi_plus4  = {dw_i, a.dst[31:0]} + sgpu_pkg::addr_t'(4);

  sgpu_cp_extent u_src_ext (
    .clk_i    (clk_i),
    .rows_m1_i(rows_m1),
    .pitch_i  (a.src_pitch),
    .width_i  (a.width),
    .ext_o    (src_ext)
  );

  sgpu_cp_extent u_dst_ext (
    .clk_i    (clk_i),
    .rows_m1_i(rows_m1),
    .pitch_i  (a.dst_pitch),
    .width_i  (a.width),
    .ext_o    (dst_ext)
  );
  assign drained     = !dma_busy && wr_idle_i && !copy_busy_i;

  /////////
  // FSM //
  /////////

  // WRITE_DATA (not the privileged WRITE_PHYSICAL, whose high dword is range checked) whose
  // address low dword (bits `lo`) is dword-aligned, so that its high dword cannot fault, and whose first
  // data dword leaves alone anyway: at an odd dword, or the only one.
  function automatic logic hi_may_pair(logic privileged, logic [2:0] lo, logic [15:0] dwords);
    return !privileged && lo[1:0] == 2'b00 && (lo[2] || dwords == 16'd4);
  endfunction

  // A ring entry register with dword `idx` replaced: one enable per dword, decoded from idx (a
  // variable part-select became a 256-bit shifter in front of the entry registers).
  function automatic ring_entry_t entry_with_dword(ring_entry_t e, logic [2:0] idx,
                                                   logic [31:0] dword);
    logic [RingEntryDwords-1:0][31:0] d;
    d = e;
    for (int unsigned i = 0; i < RingEntryDwords; i++) begin
      if (idx == 3'(i)) d[i] = dword;
    end
    return ring_entry_t'(d);
  endfunction

  // The record of a fault request: every fault names the ring entry being executed, and its
  // fence once the entry was read (a bad entry was read in full; write faults cannot occur while
  // an entry is read).
  function automatic cp_fault_rec_t fault_record(fault_e reason, sgpu_pkg::addr_t addr,
                                                  logic [31:0] detail, logic entry_read);
    return '{reason:     reason,
             ring_index: head_q[23:0],
             addr:       addr,
             fence:      entry_read ? entry_fence : '0,
             detail:     detail};
  endfunction

  cp_fault_req_t fault_req; // the state's own fault or the watchdog's, found this cycle
  cp_fault_req_t wr_fault;  // a write's fault this cycle (recorded at once)
  logic          fault_now; // a fault is recorded this cycle: a write's, or last cycle's own
  logic          wd_fault;  // fault_req is the watchdog's
  logic          bad_entry; // fault_req is BAD_RING_ENTRY (known without comparing
                            // fault_req.reason, which comes last)
  logic          commit;    // the entry retires this cycle
  logic          entry_start; // a ring entry read in full is checked and started this cycle
  logic          body_last; // the payload dword(s) taken this cycle end the packet
  logic          hdr_two;   // a WRITE_* header is taken with its address low dword
  cp_fsm_e       state_case; // the next state before the fault and reset overrides
  logic          stop_d;    // stops_fetch(state_d), formed in parallel (see below)
  logic          drain_d;   // draining(state_d), likewise
  logic          enter_stop;  // the case (or the commit) chose a stop state (StStreamStop) ...
  logic          enter_drain; // ... or a draining one (preemption, an invalid state's reset)

  // WRITE_DATA and WRITE_PHYSICAL take two dwords a cycle where nothing can fault between them
  // (registered state and the dword window only: never the write path's ready):
  // - the header with the address low dword (it has no check of its own);
  // - a data dword at an 8-byte aligned destination with the next data dword: one 64-bit write;
  //   both are in the same word, so the pair faults, translates and is acknowledged as one
  //   dword would be;
  // - WRITE_DATA's address high dword with the first data dword, when the address low dword
  //   was dword-aligned (so the high dword cannot fault: WRITE_PHYSICAL's range check is left
  //   alone) and that data dword goes alone anyway (odd destination, or the only one).
  assign hdr_two   = (state_q == StPktHeader) && dec_i.hdr_class == PktClassWrite && dw_valid2_i;
  assign wr_pair_o = (state_q == StPktBody) && dec_i.info.pkt_class == PktClassWrite
                     && dec_i.slot == SlotData && !a.dst[2] && !dec_i.last && dw_valid2_i;
  // (hi_next_q: decided when the address low dword was taken, so that the write's source
  // select does not wait for the decoder. It is only ever set while in StPktBody, asserted
  // below, so the state needs no decode here.)
  assign wr_hi_o   = hi_next_q && dw_valid2_i;
  assign dw_two_o  = hdr_two || wr_pair_o || wr_hi_o;
  assign body_last = (wr_pair_o || wr_hi_o) ? last2_i : dec_i.last;

  // The take: which states read the dword window, formed in parallel from registers and the
  // window (not through the case's priority chain): the window, the stream position and the
  // decode stage select their next values by it. In the ring entry's states, WAIT_MEM's read
  // and the read-ahead of the next entry (while retiring) every dword is taken; a header unless
  // the buffer is done or a preemption stops at this boundary; a payload dword unless it (or
  // the first data dword going with the address high dword) is a write and the write buffer is
  // full.
  assign dw_ready_o = (state_q inside {StRingData, StWaitData})
                      || (state_q == StPktHeader && !stream_left_zero_i && !pre_pend_q
                          && dw_valid_i)
                      || (state_q == StPktBody && dw_valid_i
                          && (!(dec_i.slot == SlotData || wr_hi_o) || wr_ready_i))
                      || (retiring(state_q) && ring_pref_q && !next_valid_q);
  // The stream dwords taken (0, 1, 2): a packet's header and payload advance the position; the
  // ring entry's and WAIT_MEM's dwords are not the buffer's.
  assign stream_take_o   = (state_q inside {StPktHeader, StPktBody} && dw_valid_i && dw_ready_o)
                           ? (dw_two_o ? 2'd2 : 2'd1) : 2'd0;
  assign stream_header_o = (state_q == StPktHeader);
  // The stop before a call lasts at least two cycles (its first is never its last) and the
  // position does not move in it: the caller's frame is saved there, and the call only pushes
  // it. Saving into the free frame in every stream stop is harmless (nothing reads that frame).
  assign stream_save_o   = (state_q == StStreamStop);
  assign stream_start_dwords_o = 30'((entry_q.end_offset - entry_q.start_offset) >> 2);

  // The record of the state's own fault and of the watchdog's, formed in parallel with the case
  // from the same operands, but without the conditions that decide whether the fault is raised
  // (deep: the header check's overrun compare, the operand checks, the watchdog's priority
  // behind them). A state's data fields are don't-care when it raises nothing (the record is
  // only used in the squashed cycle after a fault), so each state's candidates are selected by
  // registers and the window's count alone; asserted to be the request's fields below.
  cp_fault_req_t own_rec;        // the state's own fault, if it raises one (valid unused)
  logic          own_entry_read; // its record names the entry's fence
  cp_fault_req_t wd_req;         // the watchdog's, if it fires
  always_comb begin
    own_rec        = fetch_fault(dma_status_i.err, stream_addr_i);
    own_entry_read = !reading_ring(state_q);
    unique case (state_q)
      StRingData:   own_rec = fetch_fault(dma_status_i.err, entry_addr);
      StRingStatus: begin
        own_rec = fetch_fault(dma_status_i.err, entry_addr);
        if (dma_status_i.err == sgpu_dma_pkg::DmaOk) begin
          own_rec        = fault(FaultBadRingEntry, entry_addr, entry_q.flags);
          own_entry_read = 1'b1;
        end
      end
      StRingCheck: begin
        own_rec        = fault(FaultBadRingEntry, entry_addr, entry_q.flags);
        own_entry_read = 1'b1;
      end
      StPktHeader: if (dw_valid_i) own_rec = fault(dec_i.hdr_fault, stream_addr_i, dw_i);
      // The payload checks fault at a dword (WRITE_*, MAP, UNMAP) or at the last dword (the
      // other classes), never both in one class: the packet's class (a register) picks the one.
      // Its address is taken from the operands here rather than from the check's record, whose
      // fields are zero unless the check fails (that made them wait for the check).
      StPktBody: begin
        if (dw_valid_i) begin
          own_rec.reason = (dec_i.info.pkt_class inside {PktClassWrite, PktClassMap,
                                                          PktClassUnmap})
                           ? chk_i.dword_fault.reason : chk_i.last_fault.reason;
          own_rec.detail = 32'(pkt_q.hdr);
          unique case (dec_i.info.pkt_class)
            PktClassWrite, PktClassTimestamp: own_rec.addr = {dw_i, a.dst[31:0]};
            PktClassMap:      own_rec.addr = (dec_i.slot == SlotSrcHi) ? pkt_q.hdr_addr
                                             : sgpu_pkg::addr_t'(pkt_q.args.range.first_page);
            PktClassUnmap:    own_rec.addr = sgpu_pkg::addr_t'(pkt_q.args.range.first_page);
            PktClassIndirect: own_rec.addr = (a.dst[1:0] != 2'b00 || dw_i[1:0] != 2'b00)
                                             ? a.dst : pkt_q.hdr_addr;
            PktClassCopy:     own_rec.addr = a.src;
            default:          own_rec.addr = a.dst;  // FENCE, WAIT_MEM
          endcase
        end
      end
      StCopyDrain:  own_rec = fault(FaultCopyOverlap, a.dst, 32'(pkt_q.hdr));
      StCopyWait:   own_rec = fault((copy_status_i.err inside {sgpu_copy_pkg::CopyXlateFault,
                                                             sgpu_copy_pkg::CopyWrXlateFault})
                                    ? FaultTranslation : FaultBusError, copy_status_i.addr,
                                    32'(pkt_q.hdr));
      StWaitData, StWaitStatus:
                    own_rec = fault(fetch_reason(dma_status_i.err), pkt_q.args.wait_mem.addr,
                                    32'(pkt_q.hdr));
      default: ;  // StBufStatus: the fetch fault above; the other states raise none
    endcase
    if (reading_ring(state_q)) begin
      wd_req = fault(FaultWatchdog, entry_addr, '0);
    end else if (retiring(state_q)) begin
      wd_req = fault(FaultWatchdog, cfg_i.wb_addr, '0);
    end else if (between_packets(state_q)) begin
      wd_req = fault(FaultWatchdog, stream_addr_i, '0);
    end else begin
      wd_req = fault(FaultWatchdog, pkt_q.hdr_addr, 32'(pkt_q.hdr));
    end
  end

  // The request's data, selected by the state and the read-ahead's register choice alone: it
  // is don't-care while no request is made, so the choices that decide whether one is made
  // (the ring's room, next_ready; the late squash) stay out of the slice's data (asserted equal
  // to the case's request whenever one is made).
  always_comb begin
    unique case (state_q)
      StRingReq:   req = '{addr: entry_addr, len: sgpu_dma_pkg::len_t'(RingEntryBytes),
                           tag: fetch_tag(FetchRing, 1'b1, 1'b0)};
      StBufReq:    req = '{addr: buf_addr + sgpu_pkg::addr_t'(entry_q.start_offset),
                           len:  sgpu_dma_pkg::len_t'(entry_q.end_offset - entry_q.start_offset),
                           tag:  fetch_tag(FetchBuffer, entry_privileged(entry_q), 1'b0)};
      StBufResume: req = '{addr: stream_addr_i,
                           len:  sgpu_dma_pkg::len_t'({stream_left_i, 2'b00}),
                           tag:  fetch_tag(FetchBuffer, entry_privileged(entry_q), 1'b0)};
      StWaitReq:   req = '{addr: pkt_q.args.wait_mem.addr, len: sgpu_dma_pkg::len_t'(4),
                           tag: fetch_tag(FetchWait, entry_privileged(entry_q), 1'b0)};
      default:     req = buf_ahead
                         ? '{addr: next_buf_q, len: sgpu_dma_pkg::len_t'(next_len_q),
                             tag:  fetch_tag(FetchBuffer, entry_privileged(next_q), 1'b1)}
                         : '{addr: entry_addr, len: sgpu_dma_pkg::len_t'(RingEntryBytes),
                             tag:  fetch_tag(FetchRing, 1'b1, 1'b1)};
    endcase
  end

  always_comb begin
    state_d        = state_q;
    head_d         = head_q;
    entry_d        = entry_q;
    entry_idx_d    = entry_idx_q;
    pkt_d          = pkt_q;
    pkt_idx_d      = pkt_idx_q;
    wb_second_d    = wb_second_q;
    wait_cnt_d     = wait_cnt_q;
    pre_pend_d     = pre_pend_q || cmd_i.preempt_req;
    pre_entry_d    = pre_entry_q;
    fence_done_d   = fence_done_q;
    fence_out_d    = fence_out_q;
    fault_d        = fault_q;
    ring_pref_d    = ring_pref_q;
    ring_drop_d    = ring_drop_q;
    next_d         = next_q;
    next_valid_d   = next_valid_q;
    next_full_d    = next_full_q;
    buf_pref_d     = buf_pref_q;
    ahead_fail_d   = ahead_fail_q;
    quiet_d        = quiet_q;
    replay_d       = replay_q;
    hi_next_d      = hi_next_q;
    fault_req      = '0;
    wd_fault       = 1'b0;
    bad_entry      = 1'b0;
    commit         = 1'b0;
    entry_start    = 1'b0;
    pkt_step_o     = '0;
    enter_stop     = 1'b0;
    enter_drain    = 1'b0;

    stream_op_o         = StreamHold;
    copy_status_ready_o = draining(state_q);
    dma_status_ready_o  = draining(state_q);
    dw_clear_o          = draining(state_q);
    req_valid           = 1'b0;
    req_case            = '0;
    evt_o               = '0;

    unique case (state_q)
      ////////////////
      // Ring entry //
      ////////////////

      StIdle: begin
        if (pre_pend_q) begin
          state_d     = StPreemptDrain;
          enter_drain = 1'b1;
          pre_entry_d = 1'b0;
        end else if (cfg_i.enable && ((head_q & ring_mask) != (cfg_i.ring_tail & ring_mask))) begin
          state_d = StRingReq;
        end
      end

      StRingReq: begin
        req_valid       = 1'b1;
        req_case        = '{addr: entry_addr, len: sgpu_dma_pkg::len_t'(RingEntryBytes),
                            tag: fetch_tag(FetchRing, 1'b1, 1'b0)};
        entry_idx_d     = '0;
        quiet_d         = 1'b0;
        if (req_room) state_d = StRingData;
      end

      StRingData: begin
        if (dw_valid_i) begin
          entry_d = entry_with_dword(entry_q, entry_idx_q, dw_i);
          entry_idx_d = entry_idx_q + 1'b1;
          if (entry_idx_q == 3'(RingEntryDwords - 1)) state_d = StRingStatus;
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          if (quiet_q && dma_status_i.err == sgpu_dma_pkg::DmaXlateFault) begin
            state_d = StRingReq;  // read ahead, unrecorded: read it again (no data came)
          end else begin
            fault_req = fetch_fault(dma_status_i.err, entry_addr);
          end
        end
      end

      StRingStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (quiet_q && dma_status_i.err == sgpu_dma_pkg::DmaXlateFault) begin
            state_d = StRingReq;
          end else if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            fault_req = fetch_fault(dma_status_i.err, entry_addr);
          end else begin
            entry_start = 1'b1;
          end
        end
      end

      // The entry read ahead (its status was OK) starts: checked as in StRingStatus; its buffer
      // may be requested already (quiet_q).
      StRingCheck: begin
        entry_start = 1'b1;
      end

      ///////////////////
      // Buffer stream //
      ///////////////////

      StBufReq: begin
        req_valid       = 1'b1;
        req_case        = '{addr: buf_addr + sgpu_pkg::addr_t'(entry_q.start_offset),
                            len:  sgpu_dma_pkg::len_t'(entry_q.end_offset - entry_q.start_offset),
                            tag:  fetch_tag(FetchBuffer, entry_privileged(entry_q), 1'b0)};
        quiet_d         = 1'b0;
        if (req_room) state_d = StPktHeader;
      end

      // The rest of the buffer, from the byte after the packet that stopped the stream (or a
      // called buffer from its start).
      // The request waits until every write taken so far was translated (the write buffer is
      // empty): a refused write stops the engine with nothing after it executed, and a read of
      // the called (or returned-to) buffer refused first would be in the GART's fault record.
      StBufResume: begin
        if (stream_left_zero_i) begin
          state_d = StBufEnd;
        end else if (wr_buf_empty_i) begin
          req_valid       = 1'b1;
          req_case        = '{addr: stream_addr_i,
                              len:  sgpu_dma_pkg::len_t'({stream_left_i, 2'b00}),
                              tag:  fetch_tag(FetchBuffer, entry_privileged(entry_q), 1'b0)};
          quiet_d         = 1'b0;
          if (req_room) state_d = StPktHeader;
        end
      end

      StBufStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            fault_req = fetch_fault(dma_status_i.err, stream_addr_i);
          end else begin
            state_d = StBufEnd;
          end
        end
      end

      // Back to the caller of an INDIRECT, or the entry's buffer is done.
      StBufEnd: begin
        if (stream_nested_i) begin
          stream_op_o = StreamReturn;
          state_d     = StBufResume;
        end else begin
          state_d     = StRetireDrain;
          wb_second_d = 1'b0;
        end
      end

      /////////////
      // Packets //
      /////////////

      StPktHeader: begin
        if (stream_left_zero_i) begin
          state_d = StBufStatus;
        end else if (pre_pend_q) begin
          // A packet boundary: the stream position is the next header.
          state_d     = StPreemptDrain;
          enter_drain = 1'b1;
          pre_entry_d = 1'b1;
        end else if (dw_valid_i) begin
          quiet_d        = 1'b0;  // data came: the buffer read ahead was not refused
          pkt_d.hdr      = hdr;
          pkt_d.info     = pkt_info(hdr.opcode);
          pkt_d.hdr_addr = stream_addr_i;
          pkt_d.hdr_off  = stream_offset_i;
          pkt_idx_d      = '0;
          pkt_step_o     = '{load: 1'b1, step: 2'd0};
          // One row without pitches unless a 2-D packet's payload says otherwise.
          pkt_d.args.copy.height    = 32'd1;
          pkt_d.args.copy.src_pitch = '0;
          pkt_d.args.copy.dst_pitch = '0;
          // The header check decides nothing here: a header that faults is taken as if it
          // passed, and the next cycle is squashed (fault_late_q). Nothing reads the stream
          // position or the packet register after a fault (the record is made now).
          if (dec_i.hdr_fault != FaultNone) begin
            fault_req = fault(dec_i.hdr_fault, stream_addr_i, dw_i);
          end
          if (hdr.dwords != 16'd1) state_d = StPktBody;
          hi_next_d = 1'b0;
          if (hdr_two) begin  // WRITE_* (at least 4 dwords): the address low dword too
            pkt_idx_d                 = 16'd1;
            pkt_step_o.step           = 2'd1;
            pkt_d.args.copy.dst[31:0] = dw2_i;
            // (Only towards StPktBody: a header of one dword, which faults, stays here.)
            hi_next_d = hi_may_pair(dec_i.hdr_privileged, dw2_i[2:0], hdr.dwords)
                        && hdr.dwords != 16'd1;
          end
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          if (quiet_q && dma_status_i.err == sgpu_dma_pkg::DmaXlateFault) begin
            // The buffer read ahead (one page) was refused before any of its data: stop the
            // stream (what was read ahead behind it goes too) and read it again, not quietly.
            state_d  = StStreamStop;
            replay_d = 1'b1;
            enter_stop = 1'b1;
          end else begin
            fault_req = fetch_fault(dma_status_i.err, stream_addr_i);
          end
        end
      end

      // Payload: each dword goes where the decoder says; a data dword leaves as a write (it is
      // taken when the write is). After the last one the packet faults or goes on by its class.
      StPktBody: begin
        if (dw_valid_i) begin
          pkt_d.args.copy = capture(a, dec_i.slot, dw_i);
          if (dec_i.slot == SlotData && wr_ready_i) begin
            pkt_d.args.copy.dst = wr_pair_o ? dst_plus8 : dst_plus4;
          end
          if (wr_hi_o && wr_ready_i) begin
            pkt_d.args.copy.dst = hi_plus4;
          end
          // MAP (at pte_flags) and UNMAP (at the dummy PTE's high dword) set up their writes.
          if (dec_i.info.pkt_class == PktClassMap && dec_i.slot == SlotPattern) begin
            pkt_d.args.range.pte_addr = chk_i.table_pte;
          end
          if (dec_i.info.pkt_class == PktClassUnmap && dec_i.slot == SlotDstPitch) begin
            pkt_d.args.range.pte_addr   = chk_i.table_pte;
            pkt_d.args.range.pages_left = pkt_q.args.range.count;
          end
          fault_req = chk_i.dword_fault;
          // The packet's own last-dword fault is never on a write's dword (asserted below), so
          // it is raised without waiting for the write path's ready.
          if (!chk_i.dword_fault.valid && body_last && chk_i.last_fault.valid) begin
            fault_req = chk_i.last_fault;
          end
          // INDIRECT's last dword (its bytes) is never a write's either (asserted below): the
          // call's stream stop is flagged without the write path's ready too. As every step
          // here, also when the dword faults: the next cycle is squashed. The call itself is
          // made when the stop ends (StStreamStop).
          if (body_last && chk_i.next == NextCall) enter_stop = 1'b1;
          if (dw_ready_o) begin
            hi_next_d = dec_i.info.pkt_class == PktClassWrite && dec_i.slot == SlotDstLo
                        && hi_may_pair(dec_i.info.privileged, dw_i[2:0], pkt_q.hdr.dwords);
          end
          // The stream moves past every dword taken, also one that faults: after a fault
          // nothing reads the position again (the entry ends, the next one starts the stream
          // afresh), so the checks stay out of the stream position's path. An INDIRECT's last
          // dword only moves past it too: the position is then the caller's, which the call
          // pushes when the stream stop ends (the operation does not wait for the bytes'
          // compare, the check's next step and the return stack's level).
          if (dw_ready_o) begin
            pkt_idx_d   = pkt_idx_q + (dw_two_o ? 16'd2 : 16'd1);
            pkt_step_o  = '{load: 1'b0, step: dw_two_o ? 2'd2 : 2'd1};
            if (body_last) begin
              unique case (chk_i.next)
                NextFence:      state_d = StFenceDrain;
                NextInvalidate: state_d = StInvDrain;
                NextUnmap:      state_d = StUnmapWrite;
                NextCopy:       state_d = StCopyCheck;
                NextWait:       state_d = StWaitDrain;
                NextTimestamp:  state_d = StTsDrain;
                NextCall:       state_d = StStreamStop;
                default:        state_d = StPktHeader;
              endcase
            end
          end
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          fault_req          = fetch_fault(dma_status_i.err, stream_addr_i);
        end
      end

      ///////////
      // FENCE //
      ///////////

      StFenceDrain: if (wr_idle_i) state_d = StFenceWrite;
      StFenceWrite: if (wr_ready_i) state_d = StFenceAck;

      StFenceAck: begin
        if (wr_idle_i) begin
          evt_o.dma_completed = pkt_q.hdr.flags[PktFenceFlagIrqBit];
          state_d             = StPktHeader;
        end
      end

      ///////////////////////////////////////
      // TLB_INVALIDATE, MAP, UNMAP ranges //
      ///////////////////////////////////////

      // The page-table writes of earlier packets are in memory before the GART is asked, and
      // the next packet starts only after the sweep.
      StInvDrain: if (wr_idle_i) state_d = StInvReq;
      StInvReq:   if (inv_ready_i) state_d = StInvWait;
      StInvWait:  if (!inv_busy_i) state_d = StPktHeader;

      // UNMAP: one 64-bit write of the dummy PTE per page, then the invalidation.
      StUnmapWrite: begin
        if (wr_ready_i) begin
          pkt_d.args.range.pte_addr   = pkt_q.args.range.pte_addr + sgpu_pkg::addr_t'(8);
          pkt_d.args.range.pages_left = pkt_q.args.range.pages_left - 32'd1;
          if (pkt_q.args.range.pages_left == 32'd1) state_d = StInvDrain;
        end
      end

      /////////////////
      // Copy engine //
      /////////////////

      // An overlapping COPY or BLIT_RECT is refused; otherwise the writes of earlier packets
      // are acknowledged before the engine reads (no read overtakes them), and the next packet
      // starts after the engine reported (every copy write acknowledged). The extents are
      // registered first: a 32 x 32 multiply stays out of the compare path, and is itself
      // three stages (sgpu_cp_extent) that see the packet held here for three cycles.
      StCopyCheck: begin
        if (ext_step_q == 2'd2) begin
          pkt_d.src_ext = src_ext;
          pkt_d.dst_ext = dst_ext;
          state_d       = StCopyDrain;
        end
      end

      StCopyDrain: begin
        if (!ovl_valid_q) begin
          // The overlap is registered (ovl_q) from the extents StCopyCheck registered: the 66-bit
          // ends and compares are a cycle of their own, not in front of the fault and the state.
        end else if (ovl_q) begin
          fault_req = fault(FaultCopyOverlap, a.dst, 32'(pkt_q.hdr));
        end else if (wr_idle_i) begin
          state_d = StCopyReq;
        end
      end

      StCopyReq: if (copy_req_ready_i) state_d = StCopyWait;

      StCopyWait: begin
        copy_status_ready_o = 1'b1;
        if (pre_pend_q && !copy_status_valid_i) begin
          // Stopped mid-copy: the packet restarts from its header on resume.
          state_d     = StPreemptDrain;
          enter_drain = 1'b1;
          pre_entry_d = 1'b1;
          stream_op_o = StreamRewind;
        end else if (copy_status_valid_i) begin
          if (copy_status_i.err == sgpu_copy_pkg::CopyOk) begin
            state_d = StPktHeader;
          end else begin
            fault_req = fault((copy_status_i.err inside {sgpu_copy_pkg::CopyXlateFault,
                                                         sgpu_copy_pkg::CopyWrXlateFault})
                              ? FaultTranslation : FaultBusError, copy_status_i.addr,
                              32'(pkt_q.hdr));
          end
        end
      end

      //////////////
      // WAIT_MEM //
      //////////////

      // Earlier writes are acknowledged before the first read (a wait sees what the submission
      // wrote); then the buffer stream is stopped so the fetch engine can poll.
      StWaitDrain: begin
        if (wr_idle_i) begin
          state_d    = StStreamStop;
          enter_stop = 1'b1;
        end
      end

      // The abort pulse was given on entry (below): every issued read completes and is dropped,
      // with the statuses; the dword unpacker is emptied. INDIRECT comes here too, and calls as
      // it leaves: the caller's position (after the INDIRECT) is pushed and the called buffer
      // (pkt_q's address and bytes) starts. Its first cycle is never the last (the abort pulse
      // counts as busy), so a call that faults (the return stack full, a misaligned buffer) is
      // squashed before it is made.
      StStreamStop: begin
        dma_status_ready_o = 1'b1;
        dw_clear_o         = 1'b1;
        if (!dma_busy) begin
          ring_drop_d = 1'b0;
          replay_d    = 1'b0;
          if (ring_drop_q) begin
            state_d = StIdle;
          end else if (replay_q) begin
            state_d = StBufResume;
          end else if (dec_i.info.pkt_class == PktClassIndirect) begin
            state_d     = StBufResume;
            stream_op_o = StreamCall;
          end else begin
            state_d = StWaitReq;
          end
        end
      end

      StWaitReq: begin
        req_valid       = 1'b1;
        req_case        = '{addr: pkt_q.args.wait_mem.addr, len: sgpu_dma_pkg::len_t'(4),
                            tag: fetch_tag(FetchWait, entry_privileged(entry_q), 1'b0)};
        if (req_room) state_d = StWaitData;
      end

      StWaitData: begin
        if (dw_valid_i) begin
          pkt_d.wait_val = dw_i;
          state_d    = StWaitStatus;
        end else if (dma_status_valid_i) begin
          dma_status_ready_o = 1'b1;
          fault_req = fault(fetch_reason(dma_status_i.err), pkt_q.args.wait_mem.addr,
                            32'(pkt_q.hdr));
        end
      end

      StWaitStatus: begin
        dma_status_ready_o = 1'b1;
        if (dma_status_valid_i) begin
          if (dma_status_i.err != sgpu_dma_pkg::DmaOk) begin
            fault_req = fault(fetch_reason(dma_status_i.err), pkt_q.args.wait_mem.addr,
                            32'(pkt_q.hdr));
          end else if (chk_i.wait_hit) begin
            state_d = StBufResume;
          end else begin
            state_d    = StWaitPause;
            wait_cnt_d = pkt_q.args.wait_mem.interval;
          end
        end
      end

      StWaitPause: begin
        if (pre_pend_q) begin
          // Between reads: the WAIT_MEM restarts from its header on resume. Its stream is
          // already stopped, so the fetch engine is idle.
          state_d     = StPreemptDrain;
          enter_drain = 1'b1;
          pre_entry_d = 1'b1;
          stream_op_o = StreamRewind;
        end else if (wait_cnt_q == '0) begin
          state_d = StWaitReq;
        end else begin
          wait_cnt_d = wait_cnt_q - 32'd1;
        end
      end

      ///////////////
      // TIMESTAMP //
      ///////////////

      // The value is the counter in the first cycle every earlier write is acknowledged; the
      // write is posted.
      StTsDrain: begin
        if (wr_idle_i) begin
          pkt_d.args.target.value = cycle_i;
          state_d             = StTsWrite;
        end
      end

      StTsWrite: if (wr_ready_i) state_d = StPktHeader;

      ////////////////
      // Retirement //
      ////////////////

      // Write-back record: {reserved, head} at WB_ADDR + 8 once every write of the submission
      // was acknowledged, then the fence at WB_ADDR once the head word was: nothing can fail
      // after the fence word is issued except that write itself.
      // Meanwhile the entry read ahead comes in (below the case); it is started only at the
      // commit, and dropped as if never read if the entry faults, is reset or a preemption
      // comes first.
      StRetireDrain: begin
        if (wr_idle_i && wr_ready_i) begin
          wb_second_d = 1'b1;
          if (wb_second_q) begin
            fence_out_d = 1'b1;
            state_d     = StRetireAck;
          end
        end
      end

      // Waiting for the fence word's response: the commit point (below the case). A failed
      // response is a fault, resolved below, and changes nothing.
      StRetireAck: ;

      ////////////////
      // Preemption //
      ////////////////

      // Everything issued completes (reads and the copy engine's work are dropped), then the
      // record {PREEMPT_FENCE, last completed fence} is written like the write-back.
      StPreemptDrain: begin
        if (drained) begin
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
          evt_o.preempted = 1'b1;
          pre_pend_d      = cmd_i.preempt_req;  // a request in this very cycle waits
          state_d         = StPreempted;
        end
      end

      // Resume continues the stopped buffer (its remaining bytes are fetched again).
      StPreempted: if (cmd_i.preempt_resume) state_d = pre_entry_q ? StBufResume : StIdle;

      //////////////////////
      // Faults and reset //
      //////////////////////

      StFaultDrain: begin
        if (drained) begin
          evt_o.fault = 1'b1;
          state_d     = StFaulted;
        end
      end

      StFaulted: ;

      StReset: begin
        if (drained) begin
          head_d  = '0;
          fault_d = '0;
          state_d = StIdle;
        end
      end

      default: begin
        state_d     = StReset;
        enter_drain = 1'b1;
      end
    endcase

    // The ring entry starts, read just now (StRingStatus) or taken from the read-ahead register
    // (StRingCheck, whose buffer may be requested already: quiet_q): one place for the checks,
    // so the two ways in cannot record a bad entry differently.
    if (entry_start) begin
      if (entry_bad_q) begin
        fault_req = fault(FaultBadRingEntry, entry_addr, entry_q.flags);
        bad_entry = 1'b1;
      end else if (entry_empty_q) begin
        state_d     = StRetireDrain;
        wb_second_d = 1'b0;
      end else begin
        state_d         = (state_q == StRingCheck && quiet_q) ? StPktHeader : StBufReq;
        stream_op_o     = StreamStart;
      end
    end

    ////////////////
    // Read-ahead //
    ////////////////

    // While the entry retires, the dwords of the ring entry read ahead are taken into next_q,
    // then its status: OK completes next_q (all eight dwords came: the status follows the last
    // one); an error ends the read-ahead, and the entry is read again after the commit. (Once
    // next_q is complete, a ring read in flight is the entry after it, behind next_q's buffer.)
    if (retiring(state_q) && ring_pref_q && !next_valid_q) begin
      if (dw_valid_i) begin
        next_d = entry_with_dword(next_q, entry_idx_q, dw_i);
        entry_idx_d = entry_idx_q + 1'b1;
        if (entry_idx_q == 3'(RingEntryDwords - 1)) next_full_d = 1'b1;
      end else if (dma_status_valid_i) begin
        dma_status_ready_o = 1'b1;
        ring_pref_d        = 1'b0;
        next_valid_d       = dma_status_i.err == sgpu_dma_pkg::DmaOk;
        ahead_fail_d       = dma_status_i.err != sgpu_dma_pkg::DmaOk;
      end
    end

    // Requests: the next entry's buffer first (its data comes before the entry after it), then
    // the next ring entry. The FSM's own requests are never in these states.
    if (buf_ahead) begin
      req_valid       = 1'b1;
      req_case        = '{addr: next_buf_q, len: sgpu_dma_pkg::len_t'(next_len_q),
                          tag:  fetch_tag(FetchBuffer, entry_privileged(next_q), 1'b1)};
      buf_pref_d      = req_room;
    end else if (ahead_state && next_ready) begin
      req_valid       = 1'b1;
      req_case        = '{addr: entry_addr, len: sgpu_dma_pkg::len_t'(RingEntryBytes),
                          tag:  fetch_tag(FetchRing, 1'b1, 1'b1)};
      ring_pref_d     = req_room;
      if (req_room) begin
        entry_idx_d = '0;
        next_full_d = 1'b0;
      end
    end

    // The commit point: the fence word acknowledged OKAY. In StRetireAck, or in StReset when an
    // engine reset came while it was in flight: the entry retired all the same (its fence is in
    // memory), so FENCE_DONE says so; the reset clears the head anyway. Responses come in order
    // and the fence word was issued with nothing else in flight: an error now is its own.
    // The fence word dropped from the write buffer (refused in translation, or an engine reset
    // before the translator took it) never lands: no commit, also in StReset. (In this cycle
    // the buffer still holds it, so the path is not idle.)
    if (wr_dropped_i) fence_out_d = 1'b0;
    if (fence_out_q && (wr_idle_i || wr_err_i)) begin
      fence_out_d = 1'b0;
      if (!wr_err_i) begin
        commit              = 1'b1;
        fence_done_d        = entry_fence;
        evt_o.dma_completed = 1'b1;
        if (state_q == StRetireAck) begin
          head_d  = head_next_o;
          state_d = StIdle;
          // The entry read ahead (at the new head) starts now: from next_q if it was read in
          // full (StRingCheck; its buffer may be requested already, quiet), else collecting the
          // rest of its dwords (StRingData). If CTRL.enable was cleared or a preemption is
          // pending, everything read ahead is dropped: the stream stop aborts the reads and
          // drops their dwords and statuses, then idles (the head stays on it: not started).
          // A request offered in this cycle and taken counts as read ahead too. After a failed
          // read-ahead the entry is read again from StIdle.
          entry_d      = next_d;
          quiet_d      = 1'b1;
          ahead_fail_d = 1'b0;
          if (!(cfg_i.enable && !pre_pend_q)) begin
            if (ring_pref_d || next_valid_d) begin
              ring_drop_d = 1'b1;
              state_d     = StStreamStop;
              enter_stop  = 1'b1;
            end
          end else if (next_valid_d) begin
            quiet_d = buf_pref_d;
            state_d = StRingCheck;
          end else if (ring_pref_d) begin
            ring_pref_d = 1'b0;
            state_d     = next_full_d ? StRingStatus : StRingData;
          end
          next_valid_d = 1'b0;
          buf_pref_d   = 1'b0;
        end
      end
    end

    // Fault resolution, lowest priority first. The watchdog fires when no progress was made
    // for CP_WATCHDOG cycles (it names the ring entry being read, the next dword needed between
    // packets, WB_ADDR while retiring, else the packet); a refused write translation names the
    // write at the head of the write buffer; a failed write belongs to an earlier write and wins.
    // Never in the cycle a write is taken (into the write buffer, from which it will be issued
    // unless a write fault drops it): it would be in flight for an entry reported faulted (the
    // fence word of the write-back record would be in memory).
    if (!fault_req.valid && wd_expired_i && !wr_taken_i) begin
      wd_fault  = 1'b1;
      fault_req = wd_req;  // formed above, by the state alone
    end
    // The state's own fault and the watchdog's are recorded a cycle late: found now, the record
    // is registered (late_rec_q) and the case's next state stands for one cycle, which is
    // squashed: its requests, writes and events are withheld (here and in sgpu_cp), and the fault
    // takes over from the registers. So the checks end at a register, not in the next state, the
    // stream position, the read-ahead and the abort. The squashed cycle finds no fault of its
    // own, and a write's fault now replaces the late one (as it replaces one recorded before).
    // Both records are formed without the fault's validity (the checks, the header's overrun
    // compare, the priority of the watchdog behind them): each state has one fault of its own,
    // chosen among its candidates by registers and the dword window's count, and the watchdog's
    // record is the state's alone. Only the one-bit choice between them (late_wd_q) and the
    // fault's reason wait for the checks; the record is picked from the two registers in the
    // squashed cycle (asserted equal to the request's record below).
    late_rec_d = fault_record(own_rec.reason, own_rec.addr, own_rec.detail, own_entry_read);
    wd_rec_d   = fault_record(FaultWatchdog, wd_req.addr, wd_req.detail, !reading_ring(state_q));
    late_wd_d  = wd_fault;

    // The refused write was taken before anything the CP did since (it is translated from the
    // write buffer), so its fault also replaces one the CP raised meanwhile for a later packet
    // (StFaultDrain): nothing after the write executes, as if the CP had stopped at it. A write
    // fault found the buffer flushed, so this is never after a bus error; an engine reset
    // (StReset) ignores it. Its FAULT_DETAIL was taken with the write.
    wr_fault = '0;
    if (wr_xlate_fault_i && !(state_q inside {StFaulted, StReset})) begin
      wr_fault = fault(FaultTranslation, wr_xlate_fault_addr_i, wr_xlate_detail_i);
    end
    if (wr_err_i && !halted(state_q)) begin
      wr_fault = fault(FaultBusError, wr_err_addr_i, '0);
    end
    fault_late_d = fault_req.valid && !fault_late_q && !wr_fault.valid && !cmd_i.engine_reset;

    // The next state the case and the commit chose; a fault or a reset overrides it below.
    state_case = state_d;

    fault_now = wr_fault.valid || fault_late_q;
    if (wr_fault.valid) begin
      state_d = StFaultDrain;
      fault_d = fault_record(wr_fault.reason, wr_fault.addr, wr_fault.detail,
                             !reading_ring(state_q));
    end else if (fault_late_q) begin
      state_d = StFaultDrain;
      fault_d = late_rec;
    end
    // The squashed cycle's effects that would outlive it are withheld: the fetch request, and
    // the write-back's fence word, which the case takes as issued when the write path is
    // ready, but sgpu_cp does not offer it (the watchdog may fire in the cycle after the head
    // word was taken). It raises no event (asserted): those follow a write taken or a state
    // that finds no fault of its own.
    if (fault_late_q) begin
      req_valid       = 1'b0;
      fence_out_d     = fence_out_q;
    end

    if (cmd_i.engine_reset) begin
      state_d    = StReset;
      pre_pend_d = 1'b0;
    end
    // The overrides leave StPktBody: the address high dword is no longer next.
    if (fault_now || cmd_i.engine_reset) hi_next_d = 1'b0;

    // What was read ahead is dropped by every abort of the fetch engine (fault, reset,
    // preemption, a stream stop). The decision is formed from the fault and reset requests and
    // the case's own next state in parallel (both overrides are stop states), not decoded from
    // the final state_d behind them (asserted equal).
    // The case's own choice is flagged where it is made (enter_stop, enter_drain) or is to stay
    // in the stop state it is in (until the drain ends), so the decision is not a decode of the
    // multiplexed next state either.
    drain_d = cmd_i.engine_reset || fault_now || enter_drain
              || (draining(state_q) && !drained);
    stop_d  = drain_d || enter_stop || (state_q == StStreamStop && dma_busy);
    if (stop_d) begin
      ring_pref_d  = 1'b0;
      next_valid_d = 1'b0;
      buf_pref_d   = 1'b0;
      ahead_fail_d = 1'b0;
      quiet_d      = 1'b0;
    end
    if (drain_d) begin
      ring_drop_d = 1'b0;
      replay_d    = 1'b0;
    end

    // The fetch engine latches an abort: one pulse when draining starts stops it, and it
    // reports not-busy once every read it issued has returned. The pulse leaves from a register
    // (dma_abort_q), a cycle after the state that decided it: the CP's next state is deep logic
    // (the write path's ready, faults), the fetch engine's request FIFOs too.
    dma_abort_d = stop_d && !stops_fetch(state_q);
  end

  // While the pulse is on its way the fetch engine does not know yet: it counts as busy, so no
  // drain ends before the engine took the abort. The stop states drop its data and statuses in
  // that cycle as in every other.
  assign late_rec    = late_wd_q ? wd_rec_q : late_rec_q;

  // The request slice. The abort pulse (dma_abort_q) drops a request still in it: the stop
  // that decided the abort drops everything requested anyway, and the request offered with the
  // pulse would be taken by an engine being stopped. The squashed cycle after a late fault does
  // not offer it either (nothing of that cycle reaches another block; the abort follows). The
  // slice's data is loaded whenever it has room (the FSM's request select is its data, not its
  // enable): it holds while its request waits.
  // No request is loaded while the pulse is out: the FSM is in a stop state then (asserted).
  assign dma_req_valid_o = req_valid_q && !dma_abort_q && !fault_late_q;
  assign req_room        = !req_valid_q || (!dma_abort_q && !fault_late_q && dma_req_ready_i);
  assign dma_req_o       = req_q;
  always_comb begin
    req_valid_d = req_valid_q;
    if (dma_req_valid_o && dma_req_ready_i) req_valid_d = 1'b0;
    if (req_valid && req_room) req_valid_d = 1'b1;
    if (dma_abort_q) req_valid_d = 1'b0;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      req_valid_q <= 1'b0;
    end else begin
      req_valid_q <= req_valid_d;
    end
  end

  always_ff @(posedge clk_i) begin
    if (req_room) req_q <= req;
  end

  `SGPU_ASSERT(NoRequestWithAbort, req_valid |-> !dma_abort_q)
  `SGPU_ASSERT(RequestDataIsCase, req_valid |-> req == req_case)
  // A request left in the slice by a stop is dropped by the stop's abort pulse.
  `SGPU_ASSERT(SliceDroppedByStop, req_valid_q && stops_fetch(state_q) |-> dma_abort_q)
  `SGPU_ASSERT(SliceHeld, dma_req_valid_o && !dma_req_ready_i |=> req_valid_q && $stable(req_q))

  assign dma_busy    = dma_busy_i || dma_abort_q;
  assign dma_abort_o = dma_abort_q;

  assign fsm_o              = state_q;
  assign head_o             = head_q;
  assign fence_done_o       = fence_done_q;
  assign preempt_pending_o  = pre_pend_q;
  assign preempt_in_entry_o = pre_entry_q;
  assign ring_drop_o        = ring_drop_q;
  assign fault_late_o       = fault_late_q;
  assign fault_o            = fault_q;
  assign entry_o            = entry_q;
  assign pkt_o              = pkt_q;
  assign pkt_idx_o          = pkt_idx_q;
  assign wb_second_o        = wb_second_q;

  ///////////////////
  // State storage //
  ///////////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q      <= StIdle;
      head_q       <= '0;
      entry_idx_q  <= '0;
      pkt_idx_q    <= '0;
      wb_second_q  <= 1'b0;
      fence_out_q  <= 1'b0;
      wait_cnt_q   <= '0;
      pre_pend_q   <= 1'b0;
      pre_entry_q  <= 1'b0;
      fence_done_q <= '0;
      fault_q      <= '0;
      fault_late_q <= 1'b0;
      ring_pref_q  <= 1'b0;
      hi_next_q    <= 1'b0;
      ring_drop_q  <= 1'b0;
      dma_abort_q  <= 1'b0;
      next_valid_q <= 1'b0;
      next_full_q  <= 1'b0;
      buf_pref_q   <= 1'b0;
      ahead_fail_q <= 1'b0;
      quiet_q      <= 1'b0;
      replay_q     <= 1'b0;
    end else begin
      state_q      <= state_d;
      head_q       <= head_d;
      entry_idx_q  <= entry_idx_d;
      pkt_idx_q    <= pkt_idx_d;
      wb_second_q  <= wb_second_d;
      fence_out_q  <= fence_out_d;
      wait_cnt_q   <= wait_cnt_d;
      pre_pend_q   <= pre_pend_d;
      pre_entry_q  <= pre_entry_d;
      fence_done_q <= fence_done_d;
      fault_q      <= fault_d;
      fault_late_q <= fault_late_d;
      ring_pref_q  <= ring_pref_d;
      hi_next_q    <= hi_next_d;
      ring_drop_q  <= ring_drop_d;
      dma_abort_q  <= dma_abort_d;
      next_valid_q <= next_valid_d;
      next_full_q  <= next_full_d;
      buf_pref_q   <= buf_pref_d;
      ahead_fail_q <= ahead_fail_d;
      quiet_q      <= quiet_d;
      replay_q     <= replay_d;
    end
  end

  // COPY/BLIT_RECT's overlap, from pkt_q's registered extents: valid from the second cycle of
  // StCopyDrain (pkt_q does not change there). StCopyCheck's cycles count from its first.
  assign ext_step_d = (state_q == StCopyCheck) ? ext_step_q + 2'd1 : 2'd0;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ovl_q       <= 1'b0;
      ovl_valid_q <= 1'b0;
      ext_step_q  <= '0;
    end else begin
      ovl_q       <= chk_i.copy_overlap;
      ovl_valid_q <= state_q == StCopyDrain;
      ext_step_q  <= ext_step_d;
    end
  end

  // Datapath registers: only meaningful in the states that load them.
  // The entry's checks are formed from its next value and registered with it, so the entry's
  // start (its fault, the stream start, the first request) begins at flip-flops; the entry may
  // start in the cycle after its last dword or its copy from next_q came.
  always_ff @(posedge clk_i) begin
    entry_q       <= entry_d;
    entry_bad_q   <= entry_bad(entry_d);
    entry_empty_q <= entry_empty(entry_d);
    next_q     <= next_d;
    pkt_q      <= pkt_d;
    late_rec_q <= late_rec_d;
    wd_rec_q   <= wd_rec_d;
    late_wd_q  <= late_wd_d;
    next_buf_q <= next_buf;
    next_len_q <= next_len;
    next_fit_q <= next_fit;
  end

  // The rest of the configuration and of the packet table row is used elsewhere.
  logic unused;
  assign unused = ^{status_tag.priv, cfg_i.watchdog, cfg_i.preempt_fence, cfg_i.preempt_addr,
                    cfg_i.gart_table_base, cfg_i.gart_table_size,
                    dec_i.info[$bits(pkt_info_t)-1:$bits(pkt_class_e)],
                    own_rec.valid};

  ////////////////
  // Invariants //
  ////////////////

  // A status belongs to the request the FSM is reading (except while draining, which drops all).
  `SGPU_ASSERT(StatusMatchesRequest,
      dma_status_valid_i && dma_status_ready_o && !stops_fetch(state_q)
      |-> status_tag.kind == ((state_q inside {StRingData, StRingStatus} || retiring(state_q))
                              ? FetchRing
                              : (state_q inside {StWaitData, StWaitStatus}) ? FetchWait
                              : FetchBuffer))
  // The stream is only re-requested once the aborted one drained.
  `SGPU_ASSERT(ResumeAfterDrain, state_q == StStreamStop && state_d == StWaitReq |-> !dma_busy)
  `SGPU_ASSERT(OverlapIsRegistered, state_q == StCopyDrain && ovl_valid_q |-> ovl_q == chk_i.copy_overlap)
  `SGPU_ASSERT(EntryChecksRegistered, entry_bad_q == entry_bad(entry_q)
                                      && entry_empty_q == entry_empty(entry_q))
  `SGPU_ASSERT(NextIsRegistered, next_valid_q |-> next_fit_q == next_fit && next_buf_q == next_buf
                                                && next_len_q == next_len)
  `SGPU_ASSERT(BodyHasPayload, state_q == StPktBody && !fault_late_q |-> pkt_q.hdr.dwords >= 16'd2)
  // Two dwords are taken only where neither can fault (WRITE_DATA: the header, which then
  // passed its check, with at least three payload dwords; no check at the address high dword).
  `SGPU_ASSERT(TwoWithoutFault, dw_ready_o && dw_two_o && state_q == StPktBody
      |-> !chk_i.dword_fault.valid)
  `SGPU_ASSERT(HiNextOnlyInBody, hi_next_q |-> state_q == StPktBody)
  `SGPU_ASSERT(HiPairIsWriteData, wr_hi_o |-> dec_i.info.pkt_class == PktClassWrite
      && !dec_i.info.privileged && dec_i.slot == SlotDstHi && a.dst[1:0] == 2'b00)
  // A packet's last-dword fault is raised without the write path's ready: such a dword is
  // never a write's.
  `SGPU_ASSERT(LastFaultNotAWrite, state_q == StPktBody && dw_valid_i && chk_i.last_fault.valid
      |-> dec_i.slot != SlotData && !wr_hi_o)
  `SGPU_ASSERT(HeaderTwoIsWrite, dw_ready_o && hdr_two && dec_i.hdr_fault == FaultNone
      |-> hdr.dwords >= 16'd4)
  `SGPU_ASSERT(StateValid, state_q <= StReset)
  `SGPU_ASSERT(RingMaskIsDecrement, ring_mask == (32'd1 << cfg_i.ring_log2) - 32'd1)
  // The call is made as the stream stop ends, never in the cycle a fault squashes (the stop's
  // first, while the abort pulse counts as busy): a call that faults is never made.
  `SGPU_ASSERT(CallWhenStopEnds, stream_op_o == StreamCall
      |-> state_q == StStreamStop && !fault_late_q && !dma_busy)
  `SGPU_ASSERT(CallNotAWrite, state_q == StPktBody && dw_valid_i && body_last
      && chk_i.next == NextCall |-> dec_i.slot != SlotData && !wr_hi_o && dw_ready_o)
  `SGPU_ASSERT(Last2IsIndex,
      state_q == StPktBody |-> last2_i == (pkt_idx_q == pkt_q.hdr.dwords - 16'd3))
  // The stop decision formed in parallel is the final next state's.
  `SGPU_ASSERT(StopIsNextState, stop_d == stops_fetch(state_d))
  `SGPU_ASSERT(DrainIsNextState, drain_d == draining(state_d))
  `SGPU_ASSERT(CaseStopIsFlagged,
      state_q inside {StPreemptDrain, StFaultDrain, StReset, StStreamStop}
      || (stops_fetch(state_case) == (enter_stop || enter_drain)
          && draining(state_case) == enter_drain))
  // The packet step the decode stage follows moves the payload index as the FSM does.
  `SGPU_ASSERT(PktStepMatchesIndex,
      pkt_idx_d == (pkt_step_o.load ? 16'(pkt_step_o.step) : pkt_idx_q + 16'(pkt_step_o.step)))
  `SGPU_ASSERT(PktLoadOnlyAtHeader, pkt_step_o.load |-> state_q == StPktHeader)
  `SGPU_ASSERT(DropOnlyInStreamStop, ring_drop_q |-> state_q == StStreamStop)
  // The read-ahead: the ring entry is read behind an executing entry's buffer, taken into
  // next_q while it retires; next_q's buffer is read ahead only after next_q was read in full.
  `SGPU_ASSERT(RingAheadWhileExecuting, ring_pref_q |-> !(state_q inside {StIdle, StRingReq,
      StRingData, StRingStatus, StBufReq, StBufResume, StWaitReq, StWaitData, StWaitStatus,
      StWaitPause, StStreamStop}) && !draining(state_q))
  `SGPU_ASSERT(NextOnlyWhileRetiring, next_valid_q |-> retiring(state_q))
  `SGPU_ASSERT(BufAheadAfterNext, buf_pref_q |-> next_valid_q)
  `SGPU_ASSERT(ReplayOnlyInStreamStop, replay_q |-> state_q == StStreamStop)
  // A quiet read of the started entry refused in translation delivered no data: it is read
  // again from its start. (While retiring, a refused read-ahead is the next entry's.)
  `SGPU_ASSERT(QuietFaultAtStart, dma_status_valid_i && dma_status_ready_o && quiet_q
      && !retiring(state_q) && status_tag.quiet && dma_status_i.err == sgpu_dma_pkg::DmaXlateFault
      |-> (state_q inside {StRingData, StRingStatus} && entry_idx_q == '0)
          || (state_q == StPktHeader && stream_offset_i == entry_q.start_offset
              && !stream_nested_i))
  // The FSM's own requests never meet a read-ahead request.
  `SGPU_ASSERT(AheadPortFree, (buf_ahead || (ahead_state && next_ready))
      |-> !(state_q inside {StRingReq, StBufReq, StBufResume, StWaitReq}))

  // Retirement's commit point: FENCE_DONE and the head move only when the fence word is
  // acknowledged OKAY, and nothing faults the entry in that cycle or after the fence word issued
  // (the watchdog is not watching then).
  `SGPU_ASSERT(CommitOnlyOnFenceAck,
      (fence_done_d != fence_done_q || head_d != head_q) && !cmd_i.engine_reset && state_q != StReset
      |-> commit)
  `SGPU_ASSERT(BadEntryIsTheFault,
      bad_entry == (fault_req.valid && fault_req.reason == FaultBadRingEntry))
  `SGPU_ASSERT(CommitIsFinal, commit |-> !fault_req.valid && !fault_now
      && state_q inside {StRetireAck, StReset})
  // The squashed cycle after a late fault takes no write (sgpu_cp withholds it), and no fence
  // word is in flight in it: late faults are never found after the fence word was issued.
  `SGPU_ASSERT(SquashedTakesNoWrite, fault_late_q |-> !wr_taken_i)
  `SGPU_ASSERT(SquashedWithoutFence, fault_late_q |-> !fence_out_q)
  `SGPU_ASSERT(SquashedRaisesNoEvent, fault_late_q |-> evt_o == '0)
  `SGPU_ASSERT(SquashedRecordsLate, fault_late_q && !wr_fault.valid && !cmd_i.engine_reset
      |=> fault_q == $past(late_rec) && state_q == StFaultDrain)
  // The records formed without the fault's validity are the request's: the state's own when it
  // raises one, the watchdog's when it fires.
  `SGPU_ASSERT(OwnRecordIsRequest, fault_req.valid && !wd_fault
      |-> own_rec.reason == fault_req.reason && own_rec.addr == fault_req.addr
          && own_rec.detail == fault_req.detail
          && own_entry_read == (!reading_ring(state_q) || bad_entry))
  `SGPU_ASSERT(PayloadFaultsByClass,
      (dec_i.info.pkt_class inside {PktClassWrite, PktClassMap, PktClassUnmap})
      ? !chk_i.last_fault.valid : !chk_i.dword_fault.valid)
  `SGPU_ASSERT(WatchdogRecordIsRequest, wd_fault
      |-> wd_req.addr == fault_req.addr && wd_req.detail == fault_req.detail
          && fault_req.reason == FaultWatchdog)
  `SGPU_ASSERT(FenceOutOnlyWhileRetiring, fence_out_q |-> state_q inside {StRetireAck, StReset})
  `SGPU_ASSERT(RetireAckHasFenceOut, state_q == StRetireAck |-> fence_out_q)
  `SGPU_ASSERT(NoWatchdogAfterFenceIssue, state_q == StRetireAck |-> !wd_expired_i)
  `SGPU_ASSERT(NoFaultAsFenceIssues,
      state_q == StRetireDrain && wb_second_q && wr_taken_i |-> !fault_req.valid)

`ifndef SYNTHESIS
  // The fault record's address is never a register that was not loaded for this entry: the
  // packet register is loaded at each header, the stream position when the buffer starts.
  logic pkt_loaded_q, stream_started_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pkt_loaded_q     <= 1'b0;
      stream_started_q <= 1'b0;
    end else if (state_q == StRingReq) begin
      pkt_loaded_q     <= 1'b0;
      stream_started_q <= 1'b0;
    end else begin
      if (state_q == StPktHeader && dw_ready_o) pkt_loaded_q <= 1'b1;
      if (stream_op_o == StreamStart) stream_started_q <= 1'b1;
    end
  end
  `SGPU_ASSERT(WatchdogPacketAddrLoaded,
      wd_fault && !reading_ring(state_q) && !retiring(state_q) && !between_packets(state_q)
      |-> pkt_loaded_q)
  // The registered table row is the header's (the decoder routes the payload by it).
  `SGPU_ASSERT(PacketInfoOfHeader, pkt_loaded_q |-> pkt_q.info == pkt_info(pkt_q.hdr.opcode))
  `SGPU_ASSERT(WatchdogStreamAddrLoaded, wd_fault && between_packets(state_q) |-> stream_started_q)
  `SGPU_ASSERT(FaultAddrKnown, fault_req.valid |-> !$isunknown(fault_req.addr))
`endif

endmodule

`default_nettype wire
