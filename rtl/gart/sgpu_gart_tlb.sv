// Fully associative TLB of the GART: Entries pages, each {aperture page index -> bus page,
// writable, snoop}. One lookup port (combinational, from the caller's registers), one fill port
// (overwrites the entry of the same page if there is one, else the oldest entry: FIFO
// replacement), and an invalidation sweep that checks one entry per cycle against a page range
// (or clears everything in one cycle).
//
// The caller keeps fills and sweeps apart (sgpu_gart starts a sweep only while no walk is in
// flight and starts no walk during one); lookups may go on during a sweep and may still hit an
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

  /// Lookup: the aperture page index to translate.
  input  wire logic [IdxWidth-1:0]        lk_idx_i,
  /// An entry holds lk_idx_i.
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

  logic [Entries-1:0]  valid_q, valid_d;
  logic [IdxWidth-1:0] idx_q      [Entries];
  sgpu_pkg::pfn_t      ppn_q      [Entries];
  logic [Entries-1:0]  writable_q, snoop_q;
  logic [PtrWidth-1:0] rep_q, rep_d;

  ////////////
  // Lookup //
  ////////////

  logic [Entries-1:0]  lk_match;
  logic [PtrWidth-1:0] lk_sel;

  // At most one entry matches (OneEntryPerPage), so the matching entry's number is the OR of
  // the numbers of the entries that match: a tree, not a priority chain through every entry.
  // No match gives entry 0, as the lowest-first search did.
  always_comb begin
    lk_sel = '0;
    for (int i = 0; i < Entries; i++) begin
      lk_match[i] = valid_q[i] && (idx_q[i] == lk_idx_i);
      lk_sel |= lk_match[i] ? PtrWidth'(i) : '0;
    end
  end

  assign lk_hit_o      = |lk_match;
  assign lk_ppn_o      = ppn_q[lk_sel];
  assign lk_writable_o = writable_q[lk_sel];
  assign lk_snoop_o    = snoop_q[lk_sel];

  //////////
  // Fill //
  //////////

  logic [Entries-1:0]  fill_match;
  logic [PtrWidth-1:0] fill_sel, fill_slot;

  always_comb begin
    fill_sel = '0;
    for (int i = Entries - 1; i >= 0; i--) begin
      fill_match[i] = valid_q[i] && (idx_q[i] == fill_idx_i);
      if (fill_match[i]) fill_sel = PtrWidth'(i);
    end
  end

  // A page already cached is refreshed in place, so no page is ever cached twice.
  assign fill_slot = (|fill_match) ? fill_sel : rep_q;

  always_comb begin
    rep_d = rep_q;
    if (fill_valid_i && !(|fill_match)) begin
      rep_d = (rep_q == PtrWidth'(Entries - 1)) ? '0 : rep_q + 1'b1;
    end
  end

  ///////////
  // Sweep //
  ///////////

  logic                sw_busy_q, sw_busy_d;
  logic [PtrWidth-1:0] sw_ptr_q, sw_ptr_d;
  logic [31:0]         sw_first_q, sw_first_d, sw_count_q, sw_count_d;
  logic                sw_in_range;

  assign inv_ready_o = !sw_busy_q;
  // idx in [first, first + count), without overflow: idx - first wraps when idx < first.
  assign sw_in_range = (32'(idx_q[sw_ptr_q]) >= sw_first_q) &&
                       (32'(idx_q[sw_ptr_q]) - sw_first_q < sw_count_q);

  always_comb begin
    valid_d    = valid_q;
    sw_busy_d  = sw_busy_q;
    sw_ptr_d   = sw_ptr_q;
    sw_first_d = sw_first_q;
    sw_count_d = sw_count_q;
    inv_done_o = 1'b0;

    if (fill_valid_i) valid_d[fill_slot] = 1'b1;

    if (sw_busy_q) begin
      if (sw_in_range) valid_d[sw_ptr_q] = 1'b0;
      sw_ptr_d = sw_ptr_q + 1'b1;
      if (sw_ptr_q == PtrWidth'(Entries - 1)) begin
        sw_busy_d  = 1'b0;
        inv_done_o = 1'b1;
      end
    end else if (inv_valid_i) begin
      if (inv_i.all) begin
        valid_d    = '0;
        inv_done_o = 1'b1;
      end else begin
        sw_busy_d  = 1'b1;
        sw_ptr_d   = '0;
        sw_first_d = inv_i.first;
        sw_count_d = inv_i.count;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q    <= '0;
      rep_q      <= '0;
      sw_busy_q  <= 1'b0;
      sw_ptr_q   <= '0;
      sw_first_q <= '0;
      sw_count_q <= '0;
    end else begin
      valid_q    <= valid_d;
      rep_q      <= rep_d;
      sw_busy_q  <= sw_busy_d;
      sw_ptr_q   <= sw_ptr_d;
      sw_first_q <= sw_first_d;
      sw_count_q <= sw_count_d;
    end
  end

  // Entry contents: only read while the entry is valid, so they need no reset.
  always_ff @(posedge clk_i) begin
    if (fill_valid_i) begin
      idx_q[fill_slot]      <= fill_idx_i;
      ppn_q[fill_slot]      <= fill_ppn_i;
      writable_q[fill_slot] <= fill_writable_i;
      snoop_q[fill_slot]    <= fill_snoop_i;
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
  `SGPU_ASSERT(OneEntryPerPage, $onehot0(lk_match))
  // The caller never fills while a sweep runs (a stale PTE could survive it).
  `SGPU_ASSERT(NoFillDuringSweep, !(fill_valid_i && sw_busy_q))

endmodule

`default_nettype wire
