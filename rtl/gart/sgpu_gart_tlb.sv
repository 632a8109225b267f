// Fully associative TLB of the GART: Entries pages, each {aperture page index -> bus page,
// writable, snoop}. One lookup port (registered compare: the page the caller will hold in the
// next cycle is compared in this one, and the match vector is read out the next cycle), one fill port
// (overwrites the entry of the same page if there is one, else the oldest entry: FIFO
// replacement; registered compare too: a PTE is compared with the entries in the cycle it
// arrives and written in the next), and an invalidation sweep that checks one entry per cycle
// against a page range (or clears everything in one cycle).
//
// The caller keeps fills and sweeps apart (sgpu_gart starts a sweep only while no walk is in
// flight and starts no walk during one; a fill's write, a cycle after the walk's last PTE, still
// comes before the sweep's first check); lookups may go on during a sweep and may still hit an
// entry the sweep has not reached yet: an invalidation takes effect when it completes.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_gart_tlb #(
  /// Number of entries (pages), at least 8 (one walk fills up to 8).
  parameter int unsigned Entries = 32,
  /// Width of an aperture page index.
  parameter int unsigned IdxWidth = 16
) (
  /// Clock.
  input  wire logic                       clk_i,
  /// Asynchronous reset, active low: every entry invalid.
  input  wire logic                       rst_ni,

  /// Lookup, compared one cycle ahead: the page index of the request being taken (lk_take_i)...
  input  wire logic [IdxWidth-1:0]        lk_idx_new_i,
  /// ... or else of the one held (the caller's register).
  input  wire logic [IdxWidth-1:0]        lk_idx_cur_i,
  /// The caller takes a new request this cycle (selects lk_idx_new_i for the next cycle).
  input  wire logic                       lk_take_i,
  /// The lookup result below is up to date: no fill arrived or was written in the previous
  /// cycle (a fill may have replaced a matched entry or added the page after the compare; it is
  /// written the cycle after its PTE arrives, and seen by the compares after that). Read hit
  /// only when set.
  output      logic                       lk_fresh_o,
  /// An entry holds the page held (compared in the previous cycle, still valid now).
  output      logic                       lk_hit_o,
  /// Its bus page.
  output      sgpu_pkg::pfn_t             lk_ppn_o,
  /// Its writable bit.
  output      logic                       lk_writable_o,
  /// Its snoop bit.
  output      logic                       lk_snoop_o,

  /// Fill one entry (a valid PTE read by the walker).
  input  wire logic                       fill_valid_i,
  /// Page index of the PTE.
  input  wire logic [IdxWidth-1:0]        fill_idx_i,
  /// Bus page of the PTE.
  input  wire sgpu_pkg::pfn_t             fill_ppn_i,
  /// Writable bit of the PTE.
  input  wire logic                       fill_writable_i,
  /// Snoop bit of the PTE.
  input  wire logic                       fill_snoop_i,

  /// Start an invalidation sweep (valid/ready; ready = no sweep running).
  input  wire logic                       inv_valid_i,
  /// No sweep is running; depends on state only.
  output      logic                       inv_ready_o,
  /// All entries, or a page range.
  input  wire sgpu_gart_pkg::inv_req_t    inv_i,
  /// One-cycle pulse: the sweep finished (every matching entry is invalid).
  output      logic                       inv_done_o
);

  localparam int unsigned PtrWidth = $clog2(Entries);
  // The lookup's and the fill's ORs over the entries are registered by groups of eight.
  localparam int unsigned Groups   = Entries / 8;

  logic [Entries-1:0]  valid_q, valid_d;
  logic [IdxWidth-1:0] idx_q      [Entries];
  sgpu_pkg::pfn_t      ppn_q      [Entries];
  logic [Entries-1:0]  writable_q, snoop_q;
  logic [PtrWidth-1:0] rep_q, rep_d;

  ////////////
  // Lookup //
  ////////////

  // The compare is registered so that it is not in series with the caller's decision: both
  // candidates for the next cycle's page (a new request, the held one) are compared against the
  // entries in this cycle, and everything the lookup answers is formed for each of them and
  // registered: the hit and the matching entry's writable and snoop bits as ORs over groups of
  // eight entries, the matching entry's number for the PPN's LUT-RAM. Whether the caller takes
  // a new request (lk_take_i, its ready, behind this lookup's hit) is registered too and selects
  // between the two in the next cycle. So the take reaches only one flip-flop, and the answers
  // are one selection and one or two levels of OR from registers (timing pass 19; before it the
  // take selected the match vector into the register, and the hit was a 32-way OR of it).
  // Staleness: an entry the sweep clears, or an invalidation of everything, at the end of this
  // cycle is taken out of the hit as it is registered (lk_clear), so an invalidation takes
  // effect exactly as with a combinational compare; a fill may rewrite an entry (its page, its
  // bits, its PPN), so the cycle after a fill arrived or was written the result is not fresh and
  // the caller waits (the compare after the write sees the filled entries).
  logic [Entries-1:0]  lk_match_new, lk_match_cur, lk_clear;
  logic                fill_q;
  logic                fw_valid_q;  // a fill is written this cycle (see Fill)
  logic                sw_busy_q, sw_hit_q;
  logic [Entries-1:0]  sw_oh_q;

  always_comb begin
    for (int i = 0; i < Entries; i++) begin
      lk_match_new[i] = valid_q[i] && (idx_q[i] == lk_idx_new_i);
      lk_match_cur[i] = valid_q[i] && (idx_q[i] == lk_idx_cur_i);
    end
  end

  // The entries whose valid bit is cleared at the end of this cycle (see Sweep).
  assign lk_clear = ({Entries{sw_busy_q && sw_hit_q}} & sw_oh_q)
                    | {Entries{!sw_busy_q && inv_valid_i && inv_i.all}};

  // The number of the one set bit of a vector with at most one bit set: bit b of the number is
  // the OR of the entries whose number has bit b set. Written as one reduction OR per bit so
  // that it is a balanced tree (a running `|=` over the entries is a chain through every entry
  // until ABC rebalances it, and deeper than the tree even after).
  function automatic logic [PtrWidth-1:0] onehot_index(logic [Entries-1:0] onehot);
    logic [Entries-1:0] has_bit;
    logic [PtrWidth-1:0] index;
    for (int b = 0; b < PtrWidth; b++) begin
      for (int i = 0; i < Entries; i++) has_bit[i] = onehot[i] && ((i >> b) & 1) != 0;
      index[b] = |has_bit;
    end
    return index;
  endfunction

  function automatic logic [Groups-1:0] group_or(logic [Entries-1:0] v);
    logic [Groups-1:0] grp;
    for (int g = 0; g < Groups; g++) grp[g] = |v[8*g +: 8];
    return grp;
  endfunction

  // What the lookup answers, for one candidate page. At most one entry matches
  // (OneEntryPerPage), so the matching entry's number is the OR of the numbers of the entries
  // that match (a tree, not a priority chain) and its one-bit fields are the OR of the matching
  // entries' bits, with no encode and decode of the number in between (only the PPN, held in
  // LUT-RAM, needs it). With no match they read 0; the caller uses them only on a hit.
  typedef struct packed {
    logic [Groups-1:0]   hit;
    logic [Groups-1:0]   writable;
    logic [Groups-1:0]   snoop;
    logic [PtrWidth-1:0] sel;
  } lk_ans_t;

  function automatic lk_ans_t lk_answer(logic [Entries-1:0] match, logic [Entries-1:0] clear);
    return '{hit:      group_or(match & ~clear),
             writable: group_or(match & writable_q),
             snoop:    group_or(match & snoop_q),
             sel:      onehot_index(match)};
  endfunction

  lk_ans_t lk_new_q, lk_cur_q, lk_ans;
  logic    lk_take_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      lk_new_q  <= '0;
      lk_cur_q  <= '0;
      lk_take_q <= 1'b0;
      fill_q    <= 1'b0;
    end else begin
      lk_new_q  <= lk_answer(lk_match_new, lk_clear);
      lk_cur_q  <= lk_answer(lk_match_cur, lk_clear);
      lk_take_q <= lk_take_i;
      fill_q    <= fill_valid_i || fw_valid_q;
    end
  end

  assign lk_ans        = lk_take_q ? lk_new_q : lk_cur_q;
  assign lk_fresh_o    = !fill_q;
  assign lk_hit_o      = |lk_ans.hit;
  assign lk_ppn_o      = ppn_q[lk_ans.sel];
  assign lk_writable_o = |lk_ans.writable;
  assign lk_snoop_o    = |lk_ans.snoop;

  //////////
  // Fill //
  //////////

  // Two stages, so that the 32 compares are not in series with the write enables they decide:
  // a PTE is compared with the entries in the cycle it arrives (fill_*_i, from the walker's
  // registers and its stream) and the match vector is registered with it (fm_q, with the ORs of
  // its groups of eight entries, fgrp_q); the next cycle writes it (fw_valid_q), choosing its
  // entry from those registers alone: the entry that holds the page, else the replacement
  // pointer's (rep_oh_q, one-hot beside rep_q). The compare is made against the entries as they
  // are after the write of the same cycle, the previous PTE's: that write cannot give the page
  // an entry (a walk's PTEs are of different pages) and, refreshing the previous PTE's page in
  // place, leaves no entry of this page either; but a write to the replacement entry
  // (fw_repl: no entry held the previous page) may replace the entry that held this page, so
  // that entry is masked out of the compare. So the write's enables are one level of registers
  // (fill_we) and the OR of the match, registered by groups, two (timing pass 19: the corrected
  // vector was formed in the write cycle, its 32-way OR in front of every enable and valid bit).
  logic [Entries-1:0]  fm_d, fm_q;
  logic [Groups-1:0]   fgrp_d, fgrp_q;
  logic [IdxWidth-1:0] fc_idx_q;
  sgpu_pkg::pfn_t      fc_ppn_q;
  logic                fc_writable_q, fc_snoop_q;
  logic [Entries-1:0]  rep_oh_q, rep_oh_d;
  logic                fill_any, fw_repl;
  logic [PtrWidth-1:0] fill_slot;
  logic [Entries-1:0]  fill_we;

  // An entry holds the written PTE's page (at most one, OneEntryPerPage): refresh it in place,
  // so no page is ever cached twice.
  assign fill_any = |fgrp_q;
  // This cycle's write goes to the replacement entry.
  assign fw_repl  = fw_valid_q && !fill_any;

  always_comb begin
    for (int i = 0; i < Entries; i++) begin
      fm_d[i] = valid_q[i] && (idx_q[i] == fill_idx_i) && !(fw_repl && rep_oh_q[i]);
    end
    for (int g = 0; g < Groups; g++) fgrp_d[g] = |fm_d[8*g +: 8];
  end

  // The written entry, one-hot for the flip-flop fields and the valid bits (its own match, else
  // the replacement entry), and its number for the PPN's LUT-RAM: the matching entry's number is
  // an OR tree of the matching entries' numbers, as for the lookup, not a priority chain.
  assign fill_we   = fm_q | (rep_oh_q & {Entries{!fill_any}});
  assign fill_slot = fill_any ? onehot_index(fm_q) : rep_q;

  always_comb begin
    rep_d    = rep_q;
    rep_oh_d = rep_oh_q;
    if (fw_repl) begin
      rep_d    = (rep_q == PtrWidth'(Entries - 1)) ? '0 : rep_q + 1'b1;
      rep_oh_d = {rep_oh_q[Entries-2:0], rep_oh_q[Entries-1]};
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      fw_valid_q <= 1'b0;
      rep_oh_q   <= Entries'(1);
    end else begin
      fw_valid_q <= fill_valid_i;
      rep_oh_q   <= rep_oh_d;
    end
  end

  // The PTE and its match: only read while fw_valid_q is set.
  always_ff @(posedge clk_i) begin
    fm_q          <= fm_d;
    fgrp_q        <= fgrp_d;
    fc_idx_q      <= fill_idx_i;
    fc_ppn_q      <= fill_ppn_i;
    fc_writable_q <= fill_writable_i;
    fc_snoop_q    <= fill_snoop_i;
  end

  ///////////
  // Sweep //
  ///////////

  // Each entry's range check is made the cycle before its turn and registered (sw_hit_q), so
  // the clear is one level of registers and the range compare, behind a 32-way read of idx_q,
  // is not in front of the valid bits (nor, through them, of the lookup's hit): the range is
  // registered as two bounds of IdxWidth + 1 bits, [sw_lo_q, sw_hi_q), clamped to the index
  // space, so the check is two short compares in parallel where it was a subtraction in series
  // with a compare. Entry 0's check is made as the sweep starts, against the request itself
  // (inv_i is the caller's register) and against the entry as it will be after this cycle's
  // write: a fill's write may still land in the sweep's first cycle (see the header), the
  // written PTE's page checked beside the entry's (timing pass 19; asserted: SweepHitIsCheck).
  localparam int unsigned BndWidth = IdxWidth + 1;
  localparam logic [63:0] IdxSpan  = 64'(1) << IdxWidth;
  typedef logic [BndWidth-1:0] bnd_t;

  logic                sw_busy_d;
  logic [Entries-1:0]  sw_oh_d;               // sw_oh_q: the entry checked this cycle, one-hot
  logic [PtrWidth-1:0] sw_nxt_q, sw_nxt_d;    // the entry checked next
  bnd_t                sw_lo_q, sw_lo_d, sw_hi_q, sw_hi_d;
  logic                sw_hit_d;              // sw_hit_q: the entry checked this cycle is in range
  logic [63:0]         inv_end;
  logic                inv_hit_old, inv_hit_new;

  assign inv_ready_o = !sw_busy_q;

  function automatic logic in_bounds(logic [IdxWidth-1:0] idx, bnd_t lo, bnd_t hi);
    return (BndWidth'(idx) >= lo) && (BndWidth'(idx) < hi);
  endfunction

  // The request's range [first, first + count) without overflow, for entry 0's check.
  assign inv_end     = 64'(inv_i.first) + 64'(inv_i.count);
  assign inv_hit_old = (32'(idx_q[0]) >= inv_i.first) && (64'(idx_q[0]) < inv_end);
  assign inv_hit_new = (32'(fc_idx_q) >= inv_i.first) && (64'(fc_idx_q) < inv_end);

  always_comb begin
    valid_d    = valid_q;
    sw_busy_d  = sw_busy_q;
    sw_oh_d    = sw_oh_q;
    sw_nxt_d   = sw_nxt_q;
    sw_lo_d    = sw_lo_q;
    sw_hi_d    = sw_hi_q;
    sw_hit_d   = in_bounds(idx_q[sw_nxt_q], sw_lo_q, sw_hi_q);
    inv_done_o = 1'b0;

    if (fw_valid_q) valid_d = valid_d | fill_we;

    if (sw_busy_q) begin
      if (sw_hit_q) valid_d = valid_d & ~sw_oh_q;
      sw_oh_d  = sw_oh_q << 1;
      sw_nxt_d = sw_nxt_q + 1'b1;
      if (sw_oh_q[Entries-1]) begin
        sw_busy_d  = 1'b0;
        inv_done_o = 1'b1;
      end
    end else if (inv_valid_i) begin
      if (inv_i.all) begin
        valid_d    = '0;
        inv_done_o = 1'b1;
      end else begin
        sw_busy_d = 1'b1;
        sw_oh_d   = Entries'(1);
        sw_nxt_d  = PtrWidth'(1);
        sw_lo_d   = (64'(inv_i.first) >= IdxSpan) ? BndWidth'(IdxSpan) : BndWidth'(inv_i.first);
        sw_hi_d   = (inv_end >= IdxSpan) ? BndWidth'(IdxSpan) : BndWidth'(inv_end);
        sw_hit_d  = (fw_valid_q && fill_we[0]) ? inv_hit_new : inv_hit_old;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q   <= '0;
      rep_q     <= '0;
      sw_busy_q <= 1'b0;
      sw_oh_q   <= '0;
      sw_nxt_q  <= '0;
      sw_hit_q  <= 1'b0;
    end else begin
      valid_q   <= valid_d;
      rep_q     <= rep_d;
      sw_busy_q <= sw_busy_d;
      sw_oh_q   <= sw_oh_d;
      sw_nxt_q  <= sw_nxt_d;
      sw_hit_q  <= sw_hit_d;
    end
  end

  // The bounds: only read while the sweep runs.
  always_ff @(posedge clk_i) begin
    sw_lo_q <= sw_lo_d;
    sw_hi_q <= sw_hi_d;
  end

  // Entry contents: only read while the entry is valid, so they need no reset.
  always_ff @(posedge clk_i) begin
    if (fw_valid_q) begin
      ppn_q[fill_slot] <= fc_ppn_q;
    end
    for (int i = 0; i < Entries; i++) begin
      if (fw_valid_q && fill_we[i]) begin
        idx_q[i]      <= fc_idx_q;
        writable_q[i] <= fc_writable_q;
        snoop_q[i]    <= fc_snoop_q;
      end
    end
  end

  ////////////////////////////
  // Elaboration-time checks //
  ////////////////////////////

  `SGPU_ASSERT_STATIC(g_bad_entries, Entries >= 8 && (Entries & (Entries - 1)) == 0,
                      "Entries must be a power of two, at least 8 (one walk fills up to 8)")
  `SGPU_ASSERT_STATIC(g_bad_idx, IdxWidth >= 1 && IdxWidth <= 32, "IdxWidth must be 1..32")

  ////////////////
  // Invariants //
  ////////////////

  // A page is never cached twice.
  `SGPU_ASSERT(OneEntryPerPage, $onehot0(lk_match_cur) && (!fw_valid_q || $onehot0(fm_q)))
  // The one-hot write enables name the entry fill_slot numbers (FillWriteIsSlot).
  `SGPU_ASSERT(FillWriteIsSlot, fill_we == (Entries'(1) << fill_slot))
  // The registered fill compare, made against the entries as they are after the previous PTE's
  // write, is the compare with the entries as they are when the fill is written; its group ORs
  // are its OR.
  logic [Entries-1:0] fill_match_now;
  always_comb begin
    for (int i = 0; i < Entries; i++) fill_match_now[i] = valid_q[i] && (idx_q[i] == fc_idx_q);
  end
  `SGPU_ASSERT(FillCompareIsCurrent, fw_valid_q |-> fm_q == fill_match_now)
  `SGPU_ASSERT(FillAnyIsOr, fw_valid_q |-> fill_any == (|fm_q))
  // The one-hot replacement pointer is the binary one, decoded.
  `SGPU_ASSERT(ReplacementOneHot, rep_oh_q == (Entries'(1) << rep_q))
  // A lookup is never reported fresh while a fill waits to be written: its compare cannot have
  // seen it, and the caller would walk for a page the TLB is about to hold.
  `SGPU_ASSERT(FreshMeansNoFillPending, lk_fresh_o |-> !fw_valid_q)
  // The lookup's registered answers are those of the match vector kept as before timing pass
  // 19 (the take selecting the compare into a register, ANDed with the valid bits as read):
  // the hit whenever the result is fresh, the entry's fields on a fresh hit.
`ifndef SYNTHESIS
  logic [Entries-1:0] ref_match_q, ref_match;
  logic [PtrWidth-1:0] ref_sel;
  sgpu_pkg::pfn_t      ref_ppn;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ref_match_q <= '0;
    else         ref_match_q <= lk_take_i ? lk_match_new : lk_match_cur;
  end
  assign ref_match = ref_match_q & valid_q;
  assign ref_sel   = onehot_index(ref_match_q);
  assign ref_ppn   = ppn_q[ref_sel];
  `SGPU_ASSERT(LookupHitIsMatch, lk_fresh_o |-> lk_hit_o == (|ref_match))
  `SGPU_ASSERT(LookupEntryIsMatch, (lk_fresh_o && lk_hit_o) |-> lk_ppn_o == ref_ppn
      && lk_writable_o == (|(ref_match_q & writable_q)) && lk_snoop_o == (|(ref_match_q & snoop_q)))
`endif
  // The sweep's registered check is the check of the entry it clears, as it was made before
  // timing pass 19: idx in [first, first + count), compared in the sweep's cycle.
`ifndef SYNTHESIS
  logic [PtrWidth-1:0] ref_ptr_q;
  logic [31:0]         ref_first_q, ref_count_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ref_ptr_q   <= '0;
      ref_first_q <= '0;
      ref_count_q <= '0;
    end else if (sw_busy_q) begin
      ref_ptr_q <= ref_ptr_q + 1'b1;
    end else if (inv_valid_i && !inv_i.all) begin
      ref_ptr_q   <= '0;
      ref_first_q <= inv_i.first;
      ref_count_q <= inv_i.count;
    end
  end
  logic [31:0] ref_idx;
  assign ref_idx = 32'(idx_q[ref_ptr_q]);
  `SGPU_ASSERT(SweepHitIsCheck, sw_busy_q |-> sw_oh_q == (Entries'(1) << ref_ptr_q)
      && sw_hit_q == (ref_idx >= ref_first_q && ref_idx - ref_first_q < ref_count_q))
`endif
  // The caller never fills while a sweep runs (a stale PTE could survive it).
  `SGPU_ASSERT(NoFillDuringSweep, !((fill_valid_i || fw_valid_q) && sw_busy_q))

endmodule

`default_nettype wire
