// Command processor: fetches ring entries, streams each entry's DMA buffer through the fetch
// engine, decodes and executes packets, and retires the entry (write-back record, head, fence,
// interrupt). Every malformed input stops the engine with a fault record; an engine reset
// drains the bus and returns to idle. docs/architecture.md ("Command processor") has the
// behaviour in full; rtl/README.md the conventions; docs/adding-a-packet.md how to extend it.
//
// Structure (the Ibex split: decoding apart from control, both apart from the wiring here):
//
//   fetch engine ─▶ u_dwords ─▶ dword ─┬─▶ u_decode ── header fault, slot, class ─┐
//     (beats)      (one per cycle)     │                                          ▼
//                                      ├─────────────────────────────────▶ u_ctrl (FSM) ─ state
//                                      │  u_check ◀── entry, packet ──────────┤ │   │      │
//                                      │  faults, what's next, overlap ───────▶ │   │      │
//                                      │                       u_stream ◀── op ─┘   │      │
//                                      │                       position, INDIRECT ──┘      │
//                                      └─▶ u_wr ◀── arguments, records ────────────────────┤
//                                            ▼ one word write            outputs, u_watchdog
//                                          u_wr_buf (two entries, registers) ─▶ write translator
//
// u_dwords shows the head dword and the one behind it: WRITE_DATA takes two a cycle where
// nothing can fault between them (header and address low; address high and a lone first data
// dword; a data pair of one 8-byte word, which leaves as one 64-bit write).
//
// - u_decode (sgpu_cp_decode): the header check and the payload routing, from the generated
//   packet table (sgpu_abi_pkg). Combinational.
// - u_check (sgpu_cp_check): ring-entry checks, faults of payload dwords and of whole packets,
//   what follows a packet, the copy-overlap and WAIT_MEM comparisons. Combinational.
// - u_ctrl (sgpu_cp_ctrl): the FSM and the registers it sequences (ring entry, the packet and
//   its argument register, the fault record, preemption).
// - u_stream (sgpu_cp_stream): the buffer position and the INDIRECT return stack.
// - u_wr (sgpu_cp_wr): the write the CP offers this cycle. Combinational.
// - u_wr_buf (sgpu_cp_wr_buf): the write buffer the offer goes into; the CP's ready is its own
//   register, and the write translator sees the buffer's head, a register.
// - u_watchdog (sgpu_cp_watchdog); the outputs that depend on the state alone are decoded here
//   with the named state sets of sgpu_cp_pkg.
//
// Ring entries and DMA buffers share the one fetch engine; the FSM knows which it is reading.
// Writes leave with GPU addresses through the write buffer and sgpu_wr_xlate (a GART client):
// the buffer takes a write whenever it has room and offers its oldest to the translator until
// it is taken or refused, so the CP goes on while a write is translated (one write per cycle
// still flows; a write leaves a cycle later). The buffer is part of the writes in flight: every
// drain (FENCE, the copy engine, invalidations, WAIT_MEM, TIMESTAMP, retirement, preemption,
// faults) waits for it too (an engine reset or a failed write drops it), and an INDIRECT's or a
// return's stream request waits until it is empty (every write taken was translated). A
// refusal stops the engine with TRANSLATION at that write: the buffer drops what is behind it,
// and its fault replaces one the CP raised meanwhile for a later packet, so nothing after the
// refused write is executed.
// COPY, FILL, BLIT_RECT and FILL_RECT go to the copy engine one at a time, after every earlier
// write was acknowledged; the next packet waits for the engine's status. TLB_INVALIDATE, MAP and
// UNMAP drain the writes, drive the GART's invalidation port and wait for the sweep; MAP and
// UNMAP first write their PTEs (bounds-checked against GART_TABLE_SIZE). WAIT_MEM and INDIRECT
// stop the buffer stream and re-request it later; preemption stops at packet boundaries.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp
  import sgpu_abi_pkg::*;
  import sgpu_cp_pkg::*;
#(
  /// Data width of the fetch engine's stream in bits.
  parameter int unsigned DataWidth = 64,
  /// Deepest INDIRECT nesting below the ring entry's buffer (CAP_MEM.max_indirect_depth), >= 1.
  parameter int unsigned MaxIndirectDepth = 4,
  /// System-physical GPU addresses are [0, 2^SysAddrBits) (READ/WRITE_PHYSICAL's bound).
  parameter int unsigned SysAddrBits = 52
) (
  input  wire logic                        clk_i,
  input  wire logic                        rst_ni,

  // Registers.
  input  wire cp_cfg_t                     cfg_i,
  input  wire cp_cmd_t                     cmd_i,
  output      cp_state_t                   state_o,
  output      cp_evt_t                     evt_o,
  output      cp_fault_rec_t               fault_o,
  /// The free-running cycle counter (CYCLE_LO/HI), for TIMESTAMP.
  input  wire logic [63:0]                 cycle_i,
  /// The copy engine wrote a data beat this cycle (watchdog progress during long copies).
  input  wire logic                        copy_progress_i,

  // The submission being executed, for the GART (privilege check, fault record).
  /// System-physical addresses are allowed: while a ring entry is read (the ring is the
  /// kernel's) and for entries with the privileged or paging flag.
  output      logic                        exec_privileged_o,
  /// Fence and context_id of the entry being executed (0 while an entry is read).
  output      sgpu_gart_pkg::exec_info_t   exec_o,

  // Fetch engine (sgpu_dma_rd).
  output      logic                        dma_req_valid_o,
  input  wire logic                        dma_req_ready_i,
  output      sgpu_dma_pkg::dma_req_t      dma_req_o,
  input  wire logic                        dma_data_valid_i,
  output      logic                        dma_data_ready_o,
  input  wire logic [DataWidth-1:0]        dma_data_i,
  input  wire logic [DataWidth/8-1:0]      dma_data_keep_i,
  input  wire logic                        dma_status_valid_i,
  output      logic                        dma_status_ready_o,
  input  wire sgpu_dma_pkg::dma_status_t   dma_status_i,
  output      logic                        dma_abort_o,
  input  wire logic                        dma_busy_i,

  // Write path (sgpu_wr_xlate in front of sgpu_axi_wr). The address is a GPU address; a write
  // leaves the CP's write buffer (u_wr_buf, registers) and is offered until it is accepted or
  // refused (wr_xlate_fault_i).
  output      logic                        wr_valid_o,
  input  wire logic                        wr_ready_i,
  output      sgpu_pkg::word_wr_t          wr_o,
  /// The write may use system-physical addresses: the write-back and preemption records (the
  /// kernel's) and every write of a privileged or paging entry.
  output      logic                        wr_priv_o,
  /// No translation in flight and every issued write acknowledged (the CP adds its buffer).
  input  wire logic                        wr_idle_i,
  input  wire logic                        wr_err_i,
  input  wire sgpu_pkg::addr_t             wr_err_addr_i,
  /// One-cycle pulse: the GART refused the write being offered (never issued); its GPU address.
  input  wire logic                        wr_xlate_fault_i,
  input  wire sgpu_pkg::addr_t             wr_xlate_fault_addr_i,

  // GART invalidation (TLB_INVALIDATE, MAP, UNMAP), muxed with the register path in sgpu_top.
  /// Held from the first cycle until accepted (an engine reset withdraws it).
  output      logic                        inv_valid_o,
  input  wire logic                        inv_ready_i,
  output      sgpu_gart_pkg::inv_req_t     inv_o,
  /// The GART has an invalidation pending or sweeping; it rises the cycle after acceptance
  /// and falls when the sweep is done.
  input  wire logic                        inv_busy_i,

  // Copy engine (sgpu_copy): one request at a time; the CP waits for each status.
  output      logic                        copy_req_valid_o,
  input  wire logic                        copy_req_ready_i,
  output      sgpu_copy_pkg::copy_req_t    copy_req_o,
  input  wire logic                        copy_status_valid_i,
  output      logic                        copy_status_ready_o,
  input  wire sgpu_copy_pkg::copy_status_t copy_status_i,
  /// Level while the CP drains after a fault, for preemption or for an engine reset.
  output      logic                        copy_abort_o,
  input  wire logic                        copy_busy_i
);

  //////////////////
  // Dword stream //
  //////////////////

  logic        dw_valid, dw_ready, dw_clear, dw_valid2, dw_two, wr_pair, wr_hi;
  logic [31:0] dw, dw2;
  logic [2:0][31:0] dw_next;  // the next cycle's head for each take (0, 1, 2)
  pkt_header_t head_hdr;      // the dword at the head, seen as a header
  assign head_hdr = pkt_header_t'(dw);

  sgpu_cp_dwords #(.DataWidth(DataWidth)) u_dwords (
    .clk_i, .rst_ni,
    .clear_i    (dw_clear),
    .in_valid_i (dma_data_valid_i),
    .in_ready_o (dma_data_ready_o),
    .in_data_i  (dma_data_i),
    .in_keep_i  (dma_data_keep_i),
    .out_valid_o (dw_valid),
    .out_dword_o (dw),
    .out_valid2_o(dw_valid2),
    .out_dword2_o(dw2),
    .out_ready_i (dw_ready),
    .out_two_i   (dw_two),
    .next_head_o (dw_next)
  );

  /////////////////////
  // Stream position //
  /////////////////////

  cp_stream_op_e   stream_op;
  logic [1:0]      stream_take;
  logic            stream_header, stream_save;
  sgpu_pkg::addr_t stream_addr;
  cp_pkt_t         pkt;    // the packet being executed (u_ctrl's packet register)
  ring_entry_t     entry;  // the ring entry being executed (u_ctrl's entry register)
  logic [31:0]     stream_offset, preempt_offset;
  logic [29:0]     stream_start_dwords, stream_left;
  logic            stream_nested, stream_full, stream_left_zero;

  sgpu_cp_stream #(.MaxIndirectDepth(MaxIndirectDepth)) u_stream (
    .clk_i, .rst_ni,
    .op_i            (stream_op),
    .take_i          (stream_take),
    .header_i        (stream_header),
    .save_i          (stream_save),
    .start_base_i    ({entry.buf_addr_hi, entry.buf_addr_lo}),
    .start_offset_i  (entry.start_offset),
    .start_dwords_i  (stream_start_dwords),
    .call_base_i     (pkt.args.target.addr),
    .call_dwords_i   (pkt.args.target.bytes[31:2]),
    .rewind_offset_i (pkt.hdr_off),
    .pkt_dwords_i    (30'(pkt.hdr.dwords)),
    .head_dwords_i   (30'(head_hdr.dwords)),
    .addr_o          (stream_addr),
    .offset_o        (stream_offset),
    .left_o          (stream_left),
    .left_zero_o     (stream_left_zero),
    .nested_o        (stream_nested),
    .full_o          (stream_full),
    .preempt_offset_o(preempt_offset)
  );

  ///////////////////////////////
  // Decoder and operand checks //
  ///////////////////////////////

  cp_fsm_e      fsm;
  logic         privileged;
  logic [15:0]  pkt_idx;
  cp_pkt_step_t pkt_step;
  cp_dec_t      dec, dec_now;
  cp_chk_t      chk;

  assign privileged = entry_privileged(entry);

  // The header check of the dword at the head (and, for the assertion below, the routing of the
  // current packet's next dword, which the execute stage takes from route_q instead).
  sgpu_cp_decode u_decode (
    .hdr_i       (pkt_header_t'(dw)),
    .privileged_i(privileged),
    .buf_left_i  (stream_left),
    .pkt_i       (pkt.hdr),
    .pkt_info_i  (pkt.info),
    .idx_i       (pkt_idx),
    .dec_o       (dec_now)
  );

  //////////////////
  // Decode stage //
  //////////////////

  // What the execute stage (u_ctrl, u_check, u_wr) uses of the packet's next payload dword is
  // decided a cycle ahead and registered: where the dword goes and whether it, or the dword
  // behind it, is the packet's last (route_q); the header check's table part of the head dword
  // (hdr_chk_q); the bounds the range checks compare it with (wphys_max_q, rphys_max_q,
  // range_end_q, map_len_q). The packet register and its index move only by the header load
  // and the payload steps (pkt_step, asserted in u_ctrl), so the next routing is one of four,
  // each decoded from registers: the header at the head at index 0 or 1 (with its address low
  // dword), or the current packet one or two dwords on. The FSM's step only selects. The
  // payload routing therefore starts at a flop instead of the payload index compares, for the
  // write's valid, the dword checks and the FSM's next state.
  cp_route_t   route_q, route_d;
  cp_route_t route_hdr[2], route_inc[2];
  cp_dec_t   dec_hdr[2], dec_inc[2];

  for (genvar i = 0; i < 2; i++) begin : g_route
    sgpu_cp_decode u_hdr (
      .hdr_i       (head_hdr),
      .privileged_i(privileged),
      .buf_left_i  (stream_left),
      .pkt_i       (head_hdr),
      .pkt_info_i  (pkt_info(head_hdr.opcode)),
      .idx_i       (16'(i)),
      .dec_o       (dec_hdr[i])
    );
    sgpu_cp_decode u_inc (
      .hdr_i       (head_hdr),
      .privileged_i(privileged),
      .buf_left_i  (stream_left),
      .pkt_i       (pkt.hdr),
      .pkt_info_i  (pkt.info),
      .idx_i       (pkt_idx + 16'(i + 1)),
      .dec_o       (dec_inc[i])
    );
    assign route_hdr[i] = '{slot: dec_hdr[i].slot, last: dec_hdr[i].last,
                            last2: 16'(i) == head_hdr.dwords - 16'd3};
    assign route_inc[i] = '{slot: dec_inc[i].slot, last: dec_inc[i].last,
                            last2: pkt_idx + 16'(i + 1) == pkt.hdr.dwords - 16'd3};
  end

  always_comb begin
    route_d = route_q;
    if (pkt_step.load) begin
      route_d = route_hdr[pkt_step.step[0]];
    end else if (pkt_step.step == 2'd1) begin
      route_d = route_inc[0];
    end else if (pkt_step.step == 2'd2) begin
      route_d = route_inc[1];
    end
  end

  // READ/WRITE_PHYSICAL's ranges must end at or below L = 2^SysAddrBits. Both ends are
  // {hi, lo} + n with a 32-bit n: with S = lo + n (33 bits: carry c, low word e) the end is above
  // L exactly when hi > K - c - (e != 0), K = 2^(SysAddrBits - 32). So hi meets one of three
  // constants, and the sum is made without it:
  // - WRITE_PHYSICAL: hi is the address high dword, lo the address low dword, n 4 * (dwords - 3).
  //   S is formed when the low dword is at the head (taken with its header, or alone as the
  //   first payload dword), and its c and e != 0 are held (wphys_cz_q) until the next one.
  // - READ_PHYSICAL: hi and lo are the source's (in the packet register two dwords before the
  //   bytes dword), n the bytes dword.
  // Both answers are made a cycle ahead for the dword that will be at the head, for each take,
  // and the take selects one (as the header check below): the dword's fault starts at a
  // flip-flop, with no adder or compare between the stream head and the execute stage.
  localparam logic [33:0] HiLimit = 34'(1) << (SysAddrBits - 32);  // K

  /// [j]: hi > K - j, for j = c + (e != 0) of the sum S. K is a power of two, so each compare
  /// is a reduction and an equality with a constant (no carry chain: hi may be the incoming
  /// beat): hi >= K, hi == K, hi == K - 1.
  function automatic logic [2:0] hi_above(logic [31:0] hi);
    logic ge, eq, eq_below;
    ge       = (34'(hi) >> (SysAddrBits - 32)) != '0;
    eq       = 34'(hi) == HiLimit;
    eq_below = 34'(hi) == HiLimit - 34'd1;
    return {ge || eq_below, ge, ge && !eq};
  endfunction

  /// c + (e != 0) of S = lo + n: which of hi_above's compares decides.
  function automatic logic [1:0] sum_excess(logic [31:0] lo, logic [31:0] n);
    logic [32:0] sum;
    sum = 33'(lo) + 33'(n);
    return 2'(sum[32]) + 2'(sum[31:0] != '0);
  endfunction

  function automatic logic [31:0] wphys_len(logic [15:0] dwords);
    return 32'({dwords - 16'd3, 2'b00});
  endfunction

  logic [1:0] wphys_cz_q, wphys_cz_d;
  always_comb begin
    wphys_cz_d = wphys_cz_q;
    if (fsm == StPktHeader && dw_valid2) begin
      wphys_cz_d = sum_excess(dw2, wphys_len(head_hdr.dwords));
    end else if (fsm == StPktBody && dw_valid && route_q.slot == SlotDstLo) begin
      wphys_cz_d = sum_excess(dw, wphys_len(pkt.hdr.dwords));
    end
  end

  logic [2:0] src_hi_above;
  assign src_hi_above = hi_above(pkt.args.copy.src[63:32]);

  logic [2:0] wphys_over_by, rphys_over_by;
  for (genvar t = 0; t < 3; t++) begin : g_phys_over
    logic [2:0] hi_above_t;
    assign hi_above_t       = hi_above(dw_next[t]);
    assign wphys_over_by[t] = hi_above_t[wphys_cz_d];
    assign rphys_over_by[t] = src_hi_above[sum_excess(pkt.args.copy.src[31:0], dw_next[t])];
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      route_q <= '{slot: SlotNone, last: 1'b0, last2: 1'b0};
    end else begin
      route_q <= route_d;
    end
  end

  // MAP/UNMAP's range end, first_page + count, formed when count is at the head (first_page is
  // in the packet register by then) and checked at pte_flags (MAP) or the dummy PTE's high
  // dword (UNMAP), a dword or two later. Its compare with GART_TABLE_SIZE is registered too
  // (map_oor_q), so the check starts from a flip-flop: the CP sees GART_TABLE_SIZE as it was a
  // cycle before.
  // The compare is made on both candidates, the new sum and the held end, and the load selects
  // the answer: the load's decode is not in front of the compare's carry chain.
  logic [32:0] range_end_q, range_end_d, range_sum;
  logic        map_oor_q, range_load;
  assign range_load  = fsm == StPktBody && dw_valid && route_q.slot == SlotSrcHi;
  assign range_sum   = 33'(pkt.args.range.first_page) + 33'(dw);
  assign range_end_d = range_load ? range_sum : range_end_q;

  // MAP's length check (2 * count + 4 == dwords) compares count with dwords - 4, formed as the
  // header is loaded into the packet register.
  logic [33:0] map_len_q, map_len_d;
  assign map_len_d = pkt_step.load ? 34'(head_hdr.dwords) - 34'd4 : map_len_q;

  always_ff @(posedge clk_i) begin
    map_len_q   <= map_len_d;
    range_end_q <= range_end_d;
    map_oor_q   <= range_load ? range_sum > 33'(cfg_i.gart_table_size)
                              : range_end_q > 33'(cfg_i.gart_table_size);
    wphys_cz_q  <= wphys_cz_d;
  end

  // The header check's table part (opcode known, length, flags, class, privileged packet) of
  // the dword that will be at the head, for each take, selected by the take as the dword window
  // selects its next head: hdr_chk_q is always the table check of the head dword. Only the
  // entry's privilege and the overrun compare with the buffer's rest (both registers) are left
  // to the execute stage.
  //
  // The check is written per opcode (hdr_check_flat) rather than as the table's row and a
  // compare with its bounds (hdr_table_check): the row's min/max are then constants, so the
  // length and flag checks are compares with constants beside the opcode's decode, not compares
  // behind it (the dword may be the incoming beat's, a LUT-RAM read). Asserted equal below.
  function automatic cp_hdr_chk_t hdr_check_flat(pkt_header_t h);
    pkt_info_t   row;
    logic        hit;
    logic [3:0]  pkt_class;
    cp_hdr_chk_t c;
    c         = '{pkt_class: PktClassNop, default: '0};
    pkt_class = '0;
    for (int unsigned op = 0; op < 256; op++) begin
      row = pkt_info(opcode_e'(op));
      hit = h.opcode == opcode_e'(op);
      if (row.known) begin
        c.known      |= hit;
        c.privileged |= hit && row.privileged;
        pkt_class    |= {4{hit}} & row.pkt_class;
        c.length_ok  |= hit && h.dwords >= row.min_dwords && h.dwords <= row.max_dwords;
        c.flags_ok   |= hit && (h.flags & ~row.flags_mask) == '0;
      end
    end
    // An unknown opcode's row is all zero: length [0, 0], no flag allowed, class NOP.
    c.length_ok |= !c.known && h.dwords == '0;
    c.flags_ok  |= !c.known && h.flags == '0;
    c.pkt_class  = pkt_class_e'(pkt_class);
    return c;
  endfunction

  cp_hdr_chk_t hdr_chk_q, hdr_chk_d;
  cp_hdr_chk_t hdr_chk_by[3];
  for (genvar t = 0; t < 3; t++) begin : g_hdr_chk
    pkt_header_t hdr_t;
    cp_hdr_chk_t chk_t, chk_ref;  // chk_ref: the table's check, for the assertion
    assign hdr_t         = pkt_header_t'(dw_next[t]);
    assign chk_t         = hdr_check_flat(hdr_t);
    assign hdr_chk_by[t] = chk_t;
    assign chk_ref       = hdr_table_check(hdr_t);
    // The per-opcode check is the table's, for any dword (each candidate, taken or not).
    `SGPU_ASSERT(HeaderCheckFlatIsTable, chk_t == chk_ref)
  end
  logic [1:0] dw_taken;  // dwords taken this cycle (0, 1, 2): selects the next head
  assign dw_taken  = (dw_valid && dw_ready) ? (dw_two ? 2'd2 : 2'd1) : 2'd0;
  assign hdr_chk_d = hdr_chk_by[dw_taken];

  logic wphys_over_q, rphys_over_q;  // the physical-range answers for the head dword (above)
  always_ff @(posedge clk_i) begin
    hdr_chk_q    <= hdr_chk_d;
    wphys_over_q <= wphys_over_by[dw_taken];
    rphys_over_q <= rphys_over_by[dw_taken];
  end

  // The execute stage's decoder answers: the header check from the registered table part, the
  // routing registered.
  assign dec = '{hdr_fault:      hdr_fault_of(hdr_chk_q.known, hdr_chk_q.length_ok,
                                              hdr_chk_q.flags_ok, hdr_chk_q.privileged,
                                              privileged, 30'(head_hdr.dwords) > stream_left),
                 hdr_class:      hdr_chk_q.pkt_class,
                 hdr_privileged: hdr_chk_q.privileged,
                 info:           dec_now.info,
                 slot:           route_q.slot,
                 last:           route_q.last};

  sgpu_cp_check u_check (
    .pkt_i            (pkt),
    .info_i           (dec.info),
    .dw_i             (dw),
    .slot_i           (dec.slot),
    .nest_full_i      (stream_full),
    .wphys_over_i     (wphys_over_q),
    .rphys_over_i     (rphys_over_q),
    .map_oor_i        (map_oor_q),
    .map_len_i        (map_len_q),
    .gart_table_base_i(cfg_i.gart_table_base),
    .chk_o            (chk)
  );

  ////////////////
  // Controller //
  ////////////////

  logic        wd_expired, wb_second;
  logic [31:0] head, head_next;
  // The write the CP offers (u_wr) into its write buffer (u_wr_buf), the buffer's ready and
  // state; the write path's idle with the buffer in it; a refusal of the buffer's head (a pulse
  // while the buffer is empty answers a write that was dropped) and its FAULT_DETAIL.
  logic               wr_offer_valid, wr_buf_ready, wr_buf_empty, wr_idle, wr_refused;
  logic               wr_flush, wr_head_dropped;
  sgpu_pkg::word_wr_t wr_offer;
  cp_wr_entry_t       wr_head;
  logic [63:0] fence_done;
  logic        preempt_pending, preempt_in_entry, ring_drop;
  // The controller found its own fault (or the watchdog's) last cycle and records it now: this
  // cycle's write, copy and invalidation requests are withheld, and it is not idle.
  logic        fault_late;
  logic        wr_valid;  // the write offered, unless this cycle is squashed

  sgpu_cp_ctrl u_ctrl (
    .clk_i, .rst_ni,
    .cfg_i, .cmd_i,
    .fsm_o             (fsm),
    .head_o            (head),
    .fence_done_o      (fence_done),
    .preempt_pending_o (preempt_pending),
    .preempt_in_entry_o(preempt_in_entry),
    .ring_drop_o       (ring_drop),
    .fault_late_o      (fault_late),
    .evt_o, .fault_o, .cycle_i,
    .wd_expired_i      (wd_expired),
    .wr_taken_i        (wr_valid && wr_buf_ready),
    .entry_o           (entry),
    .head_next_o       (head_next),
    .dw_valid_i        (dw_valid),
    .dw_ready_o        (dw_ready),
    .dw_valid2_i       (dw_valid2),
    .dw2_i             (dw2),
    .dw_two_o          (dw_two),
    .wr_pair_o         (wr_pair),
    .wr_hi_o           (wr_hi),
    .dw_clear_o        (dw_clear),
    .dw_i              (dw),
    .stream_op_o       (stream_op),
    .stream_take_o     (stream_take),
    .stream_header_o   (stream_header),
    .stream_save_o     (stream_save),
    .stream_start_dwords_o(stream_start_dwords),
    .stream_addr_i     (stream_addr),
    .stream_offset_i   (stream_offset),
    .stream_left_i     (stream_left),
    .stream_left_zero_i(stream_left_zero),
    .stream_nested_i   (stream_nested),
    .dec_i             (dec),
    .chk_i             (chk),
    .last2_i           (route_q.last2),
    .pkt_o             (pkt),
    .pkt_idx_o         (pkt_idx),
    .pkt_step_o        (pkt_step),
    .dma_req_valid_o, .dma_req_ready_i, .dma_req_o,
    .dma_status_valid_i, .dma_status_ready_o, .dma_status_i, .dma_abort_o, .dma_busy_i,
    .wb_second_o       (wb_second),
    .wr_ready_i        (wr_buf_ready),
    .wr_idle_i         (wr_idle),
    .wr_buf_empty_i    (wr_buf_empty),
    .wr_err_i, .wr_err_addr_i,
    .wr_xlate_fault_i  (wr_refused),
    .wr_xlate_fault_addr_i,
    .wr_xlate_detail_i (wr_head.detail),
    .wr_dropped_i      (wr_head_dropped),
    .inv_ready_i, .inv_busy_i,
    .copy_req_ready_i, .copy_status_valid_i, .copy_status_ready_o, .copy_status_i, .copy_busy_i
  );

  // Progress: a dword taken from the ring entry or buffer stream (not a WAIT_MEM read, not the
  // next entry's, read ahead while this one retires), a write taken into the write buffer, a
  // copy-engine data beat written.
  sgpu_cp_watchdog u_watchdog (
    .clk_i, .rst_ni,
    .limit_i   (cfg_i.watchdog),
    .active_i  (watched(fsm) && !ring_drop),  // a dropped prefetch is no submission's
    .progress_i((dw_valid && dw_ready && fsm != StWaitData && !retiring(fsm))
                || (wr_valid && wr_buf_ready)
                || copy_progress_i),
    .expired_o (wd_expired)
  );

  /////////////
  // Outputs //
  /////////////

  sgpu_cp_wr u_wr (
    .fsm_i          (fsm),
    .data_i         (dw_valid && (dec.slot == SlotData || wr_hi)),
    .pair_i         (wr_pair),
    .hi_i           (wr_hi),
    .dw2_i          (dw2),
    .wr_idle_i      (wr_idle),
    .args_i         (pkt.args),
    .dw_i           (dw),
    .map_i          (dec.info.pkt_class == PktClassMap),
    .fence_value64_i(pkt.hdr.flags[PktFenceFlagValue64Bit]),
    .second_i       (wb_second),
    .wb_addr_i      (cfg_i.wb_addr),
    .entry_fence_i  ({entry.fence_hi, entry.fence_lo}),
    .head_next_i    (head_next),
    .preempt_addr_i (cfg_i.preempt_addr),
    .preempt_fence_i(cfg_i.preempt_fence),
    .fence_done_i   (fence_done),
    .valid_o        (wr_offer_valid),
    .wr_o           (wr_offer)
  );

  // The write buffer: a write is taken when the buffer has room (its own register), and leaves
  // for the translator from a register. A refusal of its head, a failed write or an engine reset
  // drops what it holds, as the CP stopped offering its write in those cases before the buffer
  // (nothing behind a refused write is issued; the writes behind a failed one are as
  // timing-dependent as those in flight). Otherwise it drains like the writes in flight: through
  // the drain of the CP's own faults (they are earlier than the fault) and before preemption.
  assign wr_valid = wr_offer_valid && !fault_late;

  cp_wr_entry_t wr_in;
  assign wr_in = '{wr:     wr_offer,
                   priv:   writing_record(fsm) || privileged,
                   detail: writing_record(fsm) ? '0 : 32'(pkt.hdr)};

  sgpu_cp_wr_buf #(.Width($bits(cp_wr_entry_t))) u_wr_buf (
    .clk_i, .rst_ni,
    .flush_i    (wr_flush),
    .in_valid_i (wr_valid),
    .in_ready_o (wr_buf_ready),
    .in_i       (wr_in),
    .out_valid_o(wr_valid_o),
    .out_ready_i(wr_ready_i),
    .out_o      (wr_head),
    .empty_o    (wr_buf_empty)
  );
  assign wr_o       = wr_head.wr;
  assign wr_priv_o  = wr_head.priv;
  assign wr_idle    = wr_buf_empty && wr_idle_i;
  assign wr_refused = wr_xlate_fault_i && !wr_buf_empty;
  assign wr_flush   = wr_refused || wr_err_i || cmd_i.engine_reset;
  // The head is dropped unless the translator takes it in the same cycle (the flush does not
  // withdraw the offer): the controller's fence word in flight, if it is the head, never lands.
  assign wr_head_dropped = wr_flush && !wr_buf_empty && !(wr_valid_o && wr_ready_i);

  assign state_o = '{ring_head:        head,
                     fence_done:       fence_done,
                     idle:             at_rest(fsm) && !fault_late && !dma_busy_i && wr_idle
                                       && !copy_busy_i,
                     faulted:          (fsm == StFaulted),
                     resetting:        (fsm == StReset),
                     preempt_pending:  preempt_pending,
                     preempted:        (fsm == StPreempted),
                     preempt_in_entry: preempt_in_entry && (fsm == StPreempted),
                     preempt_offset:   preempt_offset};

  // The entry register is only complete once the entry was read. (The fetch engine's requests
  // carry their own privilege in their tags: this is the copy engine's.)
  assign exec_privileged_o = reading_ring(fsm) || privileged;
  assign exec_o = '{fence:      reading_ring(fsm) ? '0 : {entry.fence_hi, entry.fence_lo},
                    context_id: reading_ring(fsm) ? '0 : entry.context_id};

  assign inv_valid_o = (fsm == StInvReq) && !fault_late;
  assign inv_o       = '{all:   pkt.hdr.flags[PktTlbInvalidateFlagAllBit],
                         first: pkt.args.range.first_page,
                         count: pkt.args.range.count};

  assign copy_req_valid_o = (fsm == StCopyReq) && !fault_late;
  assign copy_req_o       = '{op:        (dec.info.pkt_class inside {PktClassFill,
                                                                     PktClassFillRect})
                                         ? sgpu_copy_pkg::CopyOpFill : sgpu_copy_pkg::CopyOpCopy,
                              src:       pkt.args.copy.src,
                              dst:       pkt.args.copy.dst,
                              width:     pkt.args.copy.width,
                              height:    pkt.args.copy.height,
                              src_pitch: pkt.args.copy.src_pitch,
                              dst_pitch: pkt.args.copy.dst_pitch,
                              pattern:   pkt.args.copy.pattern};
  // Level: the engine drains (issued reads complete, issued bursts finish with zero strobes).
  assign copy_abort_o = draining(fsm);

  ////////////////
  // Invariants //
  ////////////////

  // MAP/UNMAP write only PTEs inside [table base, + 8 * GART_TABLE_SIZE), for privileged
  // entries (the table is system physical).
  `SGPU_ASSERT(MapWritesInTable, wr_valid && (fsm == StUnmapWrite
      || (fsm == StPktBody && dec.info.pkt_class == PktClassMap))
      |-> privileged
          && ({1'b0, wr_offer.addr} >= {1'b0, cfg_i.gart_table_base[63:12], 12'h000})
          && ({1'b0, wr_offer.addr} < {1'b0, cfg_i.gart_table_base[63:12], 12'h000}
                                  + 65'({cfg_i.gart_table_size, 3'b000})))
  // A privileged WRITE_DATA-class packet writes only below 2^SysAddrBits (system physical).
  `SGPU_ASSERT(PhysWritesBelowLimit, wr_valid && fsm == StPktBody
      && dec.info.pkt_class == PktClassWrite && dec.info.privileged
      |-> privileged && ({1'b0, wr_offer.addr} < (65'(1) << SysAddrBits)))
  // UNMAP writes at least one PTE once it is in its write state.
  `SGPU_ASSERT(UnmapCountNonzero, fsm == StUnmapWrite |-> pkt.args.range.pages_left != '0)
  // The invalidation and copy requests stay up until taken (only an engine reset ends them).
  `SGPU_ASSERT(InvValidHeld, inv_valid_o && !inv_ready_i && !cmd_i.engine_reset |=> inv_valid_o)
  `SGPU_ASSERT(CopyReqHeld,
      copy_req_valid_o && !copy_req_ready_i && !cmd_i.engine_reset |=> copy_req_valid_o)
  `SGPU_ASSERT_KNOWN(FsmKnown, fsm)
  // The cycle after the controller found its own fault (or the watchdog's) is squashed: nothing
  // of it reaches another block, so the fault stops the CP where it was found.
  `SGPU_ASSERT(SquashedRequestsNothing, fault_late
      |-> !dma_req_valid_o && !wr_valid && !copy_req_valid_o && !inv_valid_o && !state_o.idle)

  // The decode stage: the registered routing is the decoder's answer for the packet register as
  // it is now, wherever the execute stage uses it (payload states); the registered physical-range
  // answers are those of the 65-bit sums they replace (computed here for comparison).
  `SGPU_ASSERT(HeaderCheckIsHeads, dw_valid |-> hdr_chk_q == hdr_table_check(head_hdr))
  `SGPU_ASSERT(HeaderAnswersDecoded, dw_valid |-> dec.hdr_fault == dec_now.hdr_fault
      && dec.hdr_class == dec_now.hdr_class && dec.hdr_privileged == dec_now.hdr_privileged)
  `SGPU_ASSERT(RouteIsDecoded, fsm == StPktBody
      |-> route_q.slot == dec_now.slot && route_q.last == dec_now.last)
  localparam logic [64:0] PhysLimit = 65'(1) << SysAddrBits;
  logic [64:0] wphys_end, rphys_end;
  assign wphys_end = {1'b0, dw, pkt.args.copy.dst[31:0]}
                     + 65'({pkt.hdr.dwords - 16'd3, 2'b00});
  assign rphys_end = {1'b0, pkt.args.copy.src} + 65'(dw);
  `SGPU_ASSERT(WritePhysBoundExact, fsm == StPktBody && dw_valid
      && dec.info.pkt_class == PktClassWrite && dec.slot == SlotDstHi
      |-> wphys_over_q == (wphys_end > PhysLimit))
  `SGPU_ASSERT(ReadPhysBoundExact, fsm == StPktBody && dw_valid
      && dec.info.pkt_class == PktClassCopy && dec.last
      |-> rphys_over_q == (rphys_end > PhysLimit))
  `SGPU_ASSERT(RangeEndIsArgs, fsm == StPktBody && dw_valid
      && ((dec.info.pkt_class == PktClassMap && dec.slot == SlotPattern)
          || (dec.info.pkt_class == PktClassUnmap && dec.slot == SlotDstPitch))
      |-> range_end_q == 33'(pkt.args.range.first_page) + 33'(pkt.args.range.count))
  `SGPU_ASSERT(MapRangeCompareRegistered,
      map_oor_q == (range_end_q > 33'($past(cfg_i.gart_table_size))))
  `SGPU_ASSERT(MapLenIsHeader, fsm == StPktBody |-> map_len_q == 34'(pkt.hdr.dwords) - 34'd4)
  `SGPU_ASSERT_STATIC(g_bad_range_layout, PldMapPteFlags == PldMapCount + 1
      && PldUnmapDummyHi == PldUnmapCount + 2 && PldMapCount == PldMapFirstPage + 1
      && PldUnmapCount == PldUnmapFirstPage + 1,
      "MAP/UNMAP's range end is formed at count, before the dword that checks it")
  `SGPU_ASSERT_STATIC(g_bad_sys_addr_bits, SysAddrBits >= 32 && SysAddrBits <= 64,
                      "the physical-range checks compare a high dword with 2^(SysAddrBits - 32)")
  `SGPU_ASSERT_STATIC(g_bad_copy_layout, PldCopyBytes >= PldCopySrcHi + 2,
                      "READ_PHYSICAL's bound needs its source a cycle before its bytes dword")

  // A payload write's data halves no longer wait for the pair (sgpu_cp_wr): its strobes, and
  // the bytes they enable, are the word that the pair, the address high dword or a single dword
  // made (which carried zero in the half not written).
  logic        wr_dst4;
  logic [31:0] wr_dword_ref, wr_lo_ref, wr_hi_ref;
  logic [7:0]  wr_strb_ref;
  assign wr_dst4      = pkt.args.copy.dst[2];
  assign wr_dword_ref = (dec.info.pkt_class == PktClassMap && !wr_dst4)
                        ? {dw[31:12], 9'h000, pkt.args.range.pte_flags[2:0]} : dw;
  assign wr_lo_ref    = wr_hi ? dw2 : wr_dword_ref;
  assign wr_hi_ref    = (wr_hi || wr_pair) ? dw2 : wr_dword_ref;
  assign wr_strb_ref  = (wr_pair && !wr_hi) ? 8'hff : wr_dst4 ? 8'hf0 : 8'h0f;
  `SGPU_ASSERT(PayloadWordIsFormed, fsm == StPktBody && wr_offer_valid
      |-> wr_offer.strb == wr_strb_ref
          && (!wr_offer.strb[0] || wr_offer.data[31:0] == wr_lo_ref)
          && (!wr_offer.strb[4] || wr_offer.data[63:32] == wr_hi_ref))

  // Only the routing of the candidates is used; their header checks are u_decode's.
  logic unused_dec;
  assign unused_dec = ^{dec_hdr[0], dec_hdr[1], dec_inc[0], dec_inc[1]};

endmodule

`default_nettype wire
