// GART: translates GPU pages to bus pages for the DMA engines' translation port, enforcing the
// GPU address map:
//
//   aperture segment   [ApSegBase, +ApSegSize)    page by page through a single-level table of
//                                                 64-bit PTEs in host memory, cached in a TLB
//   memory segment     [MemSegBase, +MemSegSize)  linear, to [MemSegBusBase, +MemSegSize)
//   system physical    [0, 2^SysAddrBits)         identity; privileged submissions only
//   anything else                                 fault (OUT_OF_RANGE)
//
// With enable_i low every page is its own bus page and nothing faults (bring-up).
//
// One translation port; several clients share it through sgpu_gart_arb, which passes each
// request's privilege and client number (xlate_src_i) for the privilege check and the record.
//
// A refused translation answers {fault: 1}: the client issues no access for the page. The GART
// records the first fault (address, read/write, reason, the submission's fence and context)
// with a sticky more-faults bit, and pulses fault_evt_o.
//
// Pipeline: a request is taken into `cur`, classified from registers in the next cycle and, if
// it can be decided (not an aperture page missing from the TLB), answered into the response
// register: one translation per cycle on hits, responses in request order. The TLB compares
// the page a request will hold while it is being taken (a registered compare), so the lookup
// cycle only reads the matched entry; the cycle after a TLB fill the lookup waits a cycle. A miss starts a
// walk of the PTE line (8 PTEs) holding the page and waits for it; the PTE is taken straight
// from the walk as it streams past, and every valid PTE of the line is cached. Each aperture
// lookup also queues a prefetch of the next line, so a stream through consecutive pages finds
// its PTEs cached. docs/gart.md has the details and the contract of the invalidation port.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_gart #(
  /// AXI data width of the walker's read master (64..512).
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// ID of the walker's reads.
  parameter logic [IdWidth-1:0] WalkAxiId = IdWidth'(1),
  /// TLB entries (pages), a power of two >= 8.
  parameter int unsigned TlbEntries = 32,
  /// System-physical addresses are GPU addresses below 2^SysAddrBits (13..63).
  parameter int unsigned SysAddrBits = 52,
  /// GPU base of the memory segment (aligned to its size).
  parameter logic [63:0] MemSegBase = 64'h0010_0000_0000_0000,
  /// Size of the memory segment in bytes: a power of two >= 4 KiB, or 0 for none.
  parameter logic [63:0] MemSegSize = 64'h0000_0000_1000_0000,
  /// Bus address the memory segment maps to (aligned to its size).
  parameter logic [63:0] MemSegBusBase = 64'h0000_8000_0000_0000,
  /// GPU base of the aperture segment (aligned to its size).
  parameter logic [63:0] ApSegBase = 64'h0018_0000_0000_0000,
  /// Size of the aperture segment in bytes: a power of two, 32 KiB .. 16 TiB.
  parameter logic [63:0] ApSegSize = 64'h0000_0000_1000_0000,
  /// AXI4 read request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_rd_req_t = sgpu_axi_pkg::axi_rd_req_t,
  parameter type axi_rd_rsp_t = sgpu_axi_pkg::axi_rd_rsp_t
) (
  /// Clock.
  input  wire logic                        clk_i,
  /// Asynchronous reset, active low (system reset).
  input  wire logic                        rst_ni,

  /// Enforce the address map (GART_CTRL.enable); 0 = identity for every page.
  input  wire logic                        enable_i,
  /// Bus address of PTE 0 (bits 11:0 ignored).
  input  wire sgpu_pkg::addr_t             table_base_i,
  /// PTEs in the table (clamped to the aperture's pages).
  input  wire logic [31:0]                 table_size_i,
  /// The submission being executed: fence and context for fault records.
  input  wire sgpu_gart_pkg::exec_info_t   exec_i,

  /// Translation request (valid/ready), as sgpu_dma_rd's translation port.
  input  wire logic                        xlate_req_valid_i,
  /// Ready; depends on registers and xlate_rsp_ready_i, never on xlate_req_valid_i.
  output      logic                        xlate_req_ready_o,
  /// {vpn, write}.
  input  wire sgpu_dma_pkg::xlate_req_t    xlate_req_i,
  /// With the request: its privilege and client (sgpu_gart_arb supplies them).
  input  wire sgpu_gart_pkg::xlate_src_t   xlate_src_i,
  /// Translation response, in request order (valid/ready).
  output      logic                        xlate_rsp_valid_o,
  /// The client takes the response.
  input  wire logic                        xlate_rsp_ready_i,
  /// {ppn, fault}.
  output      sgpu_dma_pkg::xlate_rsp_t    xlate_rsp_o,
  /// With the response: the PTE's snoop (cache-coherent) hint; 0 outside the aperture.
  output      logic                        xlate_rsp_snoop_o,

  /// TLB invalidation (valid/ready): registers today, a privileged packet later.
  input  wire logic                        inv_valid_i,
  /// Ready for an invalidation; depends on state only.
  output      logic                        inv_ready_o,
  /// {all, first page, count}.
  input  wire sgpu_gart_pkg::inv_req_t     inv_i,
  /// An invalidation is accepted and not finished.
  output      logic                        inv_busy_o,
  /// One-cycle pulse: an invalidation finished.
  output      logic                        inv_done_o,

  /// Clear the fault record.
  input  wire logic                        fault_clear_i,
  /// The fault record.
  output      sgpu_gart_pkg::fault_rec_t   fault_o,
  /// One-cycle pulse per refused translation.
  output      logic                        fault_evt_o,

  /// A walk is in flight or a prefetch waits to start.
  output      logic                        walk_busy_o,
  /// Aperture translations answered.
  output      logic [31:0]                 perf_lookups_o,
  /// Aperture translations that waited for a walk.
  output      logic [31:0]                 perf_misses_o,
  /// Walks started (demand and prefetch).
  output      logic [31:0]                 perf_walks_o,

  /// AXI4 read master (ar, r).
  output      axi_rd_req_t                 axi_rd_req_o,
  input  wire axi_rd_rsp_t                 axi_rd_rsp_i
);

  import sgpu_gart_pkg::*;

  ////////////////
  // Parameters //
  ////////////////

  localparam int unsigned PageShift  = sgpu_pkg::PageShift;
  localparam int unsigned PfnWidth   = sgpu_pkg::AddrWidth - PageShift;
  localparam logic [63:0] ApPages    = ApSegSize >> PageShift;
  localparam int unsigned ApIdxWidth = $clog2(ApPages);
  localparam int unsigned LineWidth  = ApIdxWidth - LineShift;
  localparam int unsigned MsIdxWidth = (MemSegSize >= 64'(sgpu_pkg::PageBytes)) ?
                                       $clog2(MemSegSize >> PageShift) : 1;
  localparam int unsigned SysPfnBits = SysAddrBits - PageShift;

  localparam sgpu_pkg::pfn_t ApBasePfn = sgpu_pkg::pfn_t'(ApSegBase >> PageShift);
  localparam sgpu_pkg::pfn_t MsBasePfn = sgpu_pkg::pfn_t'(MemSegBase >> PageShift);
  localparam sgpu_pkg::pfn_t MsBusPfn  = sgpu_pkg::pfn_t'(MemSegBusBase >> PageShift);

  typedef logic [ApIdxWidth-1:0] idx_t;
  typedef logic [LineWidth-1:0]  line_t;

  //////////////////
  // Table window //
  //////////////////

  // Pages the table covers: table_size_i clamped to the aperture.
  logic [32:0] eff_size;
  assign eff_size = (33'(table_size_i) > 33'(ApPages)) ? 33'(ApPages) : 33'(table_size_i);

  ////////////////////
  // Request in use //
  ////////////////////

  logic           cur_valid_q, cur_valid_d;
  sgpu_pkg::pfn_t cur_vpn_q, cur_vpn_d;
  logic           cur_write_q, cur_write_d;
  logic           cur_priv_q, cur_priv_d;
  logic           cur_quiet_q, cur_quiet_d;
  logic [ClientWidth-1:0] cur_client_q, cur_client_d;
  logic           cur_missed_q, cur_missed_d;   // counted as a miss already
  logic           res_valid_q, res_valid_d;     // PTE for cur captured from a walk
  logic           res_err_q, res_err_d;         // ... or the walk for it failed
  pte_t           res_pte_q, res_pte_d;

  logic           rsp_valid_q, rsp_valid_d;
  sgpu_pkg::pfn_t rsp_ppn_q, rsp_ppn_d;
  logic           rsp_fault_q, rsp_fault_d;
  logic           rsp_snoop_q, rsp_snoop_d;

  // Classification of cur.
  logic        in_ap, in_ms, in_sys, in_table;
  idx_t        ap_idx;
  line_t       ap_line;

  // The segment a page is in depends on the page alone: classified as the request is taken
  // (from the arbiter's page, beside the TLB's compare of it) and kept with it, so cur's
  // decision, and through it the port's ready, starts from registers instead of three wide
  // compares of cur_vpn_q (timing pass 6b, docs/fpga.md; asserted: SegmentIsKept). The table's
  // bound is compared live: table_size_i may change while a request is held.
  logic cur_in_ap_q, cur_in_ap_d, cur_in_ms_q, cur_in_ms_d, cur_in_sys_q, cur_in_sys_d;

  function automatic logic seg_ap(sgpu_pkg::pfn_t vpn);
    return (vpn >> ApIdxWidth) == (ApBasePfn >> ApIdxWidth);
  endfunction
  function automatic logic seg_ms(sgpu_pkg::pfn_t vpn);
    return (MemSegSize != '0) && ((vpn >> MsIdxWidth) == (MsBasePfn >> MsIdxWidth));
  endfunction
  function automatic logic seg_sys(sgpu_pkg::pfn_t vpn);
    return (vpn >> SysPfnBits) == '0;
  endfunction

  assign in_ap    = cur_in_ap_q;
  assign ap_idx   = cur_vpn_q[ApIdxWidth-1:0];
  assign ap_line  = ap_idx[ApIdxWidth-1:LineShift];
  // ap_idx < eff_size, with the two bounds of the clamp compared in parallel instead of the
  // clamp's compare in series with this one.
  assign in_table = (33'(ap_idx) < 33'(table_size_i)) && (33'(ap_idx) < 33'(ApPages));
  assign in_sys   = cur_in_sys_q;
  assign in_ms    = cur_in_ms_q;

  // TLB lookup of cur.
  logic           tlb_hit, tlb_fresh, tlb_writable, tlb_snoop;
  sgpu_pkg::pfn_t tlb_ppn;

  logic           decided, need_walk, ap_lookup, ap_wait;
  gart_fault_e    fault;
  sgpu_pkg::pfn_t ppn;
  logic           snoop;

  assign ap_lookup = enable_i && in_ap && in_table;
  assign ap_wait   = ap_lookup && !res_valid_q;

  // cur's decision, formed once for each value of the TLB's hit (g_dec[h]) and selected by it:
  // the hit is the deepest input (the registered compare's 32 matches ORed), and the decision
  // below it is a priority case several levels deep; selected at the end, the hit reaches the
  // port's ready (and through it the arbiter's request slice and the next request's TLB
  // compare), the walk start and the fault record through one level instead of through the
  // case (timing pass 6b, docs/fpga.md). The selection is an AND-OR, not a multiplexer, so that
  // Yosys's opt_share does not fold the two cases back into one behind the hit.
  typedef struct packed {
    logic           decided;
    logic           need_walk;
    gart_fault_e    fault;
    sgpu_pkg::pfn_t ppn;
    logic           snoop;
  } decision_t;

  for (genvar h = 0; h < 2; h++) begin : g_dec
    decision_t d;
    pte_t      pte;
    logic      walk_err;

    always_comb begin
      d          = '{decided: 1'b1, need_walk: 1'b0, fault: GartFaultNone, ppn: cur_vpn_q,
                     snoop: 1'b0};
      walk_err   = 1'b0;
      pte        = '0;
      if (!enable_i) begin
        // Identity.
      end else if (in_ap) begin
        if (!in_table) begin
          d.fault = GartFaultOutOfRange;
        end else begin
          if (res_valid_q && !res_err_q) begin
            // cur's PTE, taken from a walk as it streamed past (the same PTE the TLB caches if
            // valid): answered without waiting for the stream's fills to end.
            pte = res_pte_q;
          end else if (!tlb_fresh) begin
            // The TLB compare is a cycle old and a fill came in between: look again.
            d.decided = 1'b0;
          end else if (h == 1) begin
            pte = '{ppn: tlb_ppn, reserved: '0, snoop: tlb_snoop, writable: tlb_writable,
                    valid: 1'b1};
          end else if (res_valid_q) begin
            walk_err = 1'b1;
          end else begin
            d.decided   = 1'b0;
            d.need_walk = 1'b1;
          end
          if (walk_err)                          d.fault = GartFaultWalkError;
          else if (!pte.valid)                   d.fault = GartFaultInvalidPte;
          else if (cur_write_q && !pte.writable) d.fault = GartFaultWriteProtect;
          d.ppn   = pte.ppn;
          d.snoop = pte.snoop;
        end
      end else if (in_ms) begin
        d.ppn = {MsBusPfn[PfnWidth-1:MsIdxWidth], cur_vpn_q[MsIdxWidth-1:0]};
      end else if (in_sys) begin
        if (!cur_priv_q) d.fault = GartFaultPrivilege;
      end else begin
        d.fault = GartFaultOutOfRange;
      end
      if (!d.decided) d.fault = GartFaultNone;
    end
  end

  decision_t dec;
  assign dec       = decision_t'(({$bits(decision_t){tlb_hit}} & g_dec[1].d)
                                 | ({$bits(decision_t){!tlb_hit}} & g_dec[0].d));
  // Whether cur is decided, written out with the TLB's hit last (the decision's table above,
  // with the hit fixed, gives the same): decided from registers alone, or by the table bound
  // (a live compare), or by a fresh hit. So the hit (two levels from the TLB's registers) and
  // the bound reach the port's ready, the arbiter's request slice and the TLB's take through
  // one level (timing pass 19; asserted: DecidedIsDecision).
  logic dec_regs;
  assign dec_regs  = !enable_i || !in_ap || (res_valid_q && (!res_err_q || tlb_fresh));
  assign decided   = dec_regs || !in_table || (tlb_fresh && tlb_hit);
  assign need_walk = dec.need_walk;
  assign fault     = dec.fault;
  assign ppn       = dec.ppn;
  assign snoop     = dec.snoop;

  logic rsp_free, resolve;
  assign rsp_free          = !rsp_valid_q || xlate_rsp_ready_i;
  assign resolve           = cur_valid_q && decided && rsp_free;
  assign xlate_req_ready_o = !cur_valid_q || resolve;

  ////////////
  // Walker //
  ////////////

  logic            wk_req_valid, wk_req_ready;
  sgpu_pkg::addr_t wk_req_addr;
  logic [3:0]      wk_req_ptes;
  line_t           wk_start_line;
  logic            wk_pte_valid, wk_done, wk_done_err, wk_busy;
  logic [2:0]      wk_pte_idx;
  pte_t            wk_pte;
  line_t           wk_line_q, wk_line_d;
  logic [3:0]      wk_got_q, wk_got_d;   // PTEs the current walk delivered

  sgpu_gart_walker #(
    .DataWidth(DataWidth),
    .IdWidth  (IdWidth),
    .AxiId    (WalkAxiId),
    .axi_rd_req_t  (axi_rd_req_t),
    .axi_rd_rsp_t  (axi_rd_rsp_t)
  ) u_walker (
    .clk_i        (clk_i),
    .rst_ni       (rst_ni),
    .req_valid_i  (wk_req_valid),
    .req_ready_o  (wk_req_ready),
    .req_addr_i   (wk_req_addr),
    .req_ptes_i   (wk_req_ptes),
    .pte_valid_o  (wk_pte_valid),
    .pte_idx_o    (wk_pte_idx),
    .pte_o        (wk_pte),
    .done_o       (wk_done),
    .done_err_o   (wk_done_err),
    .busy_o       (wk_busy),
    .axi_rd_req_o(axi_rd_req_o), .axi_rd_rsp_i(axi_rd_rsp_i)
  );

  // Prefetch request and the lines walked most recently (not prefetched again).
  logic  pf_pend_q, pf_pend_d;

  assign walk_busy_o = wk_busy || pf_pend_q;
  line_t pf_line_q, pf_line_d;
  logic  hist0_valid_q, hist0_valid_d, hist1_valid_q, hist1_valid_d;
  line_t hist0_q, hist0_d, hist1_q, hist1_d;

  // Invalidation.
  logic     inv_pend_q, inv_pend_d;
  inv_req_t inv_q, inv_d;
  logic     tlb_inv_valid, tlb_inv_ready, tlb_inv_done;
  logic     walk_block;

  // No walk starts while an invalidation waits or sweeps: a walk that read the table before the
  // host changed it must not fill the TLB after the sweep.
  assign walk_block = inv_pend_q || !tlb_inv_ready;

  logic  wk_start_demand, wk_start_pf;
  assign wk_start_demand = cur_valid_q && need_walk && !walk_block;
  assign wk_start_pf     = !wk_start_demand && pf_pend_q && !walk_block;
  // wk_start_demand || wk_start_pf, with the demand (behind the TLB's hit) entering last.
  assign wk_req_valid    = !walk_block && (pf_pend_q || (cur_valid_q && need_walk));
  assign wk_start_line   = wk_start_demand ? ap_line : pf_line_q;

  // The walk's PTE address and length for each of the two lines it may start at, formed from
  // registers in parallel; the start (behind the TLB's hit, need_walk) only selects. Adding
  // after the choice put the 64-bit carry chain behind the hit, into the walker's registers
  // (timing pass 6b, docs/fpga.md).
  // The length, min(8, eff_size - 8 * line), without the clamp and the subtraction in series
  // with the compare: a line walked lies inside the table (WalkInsideTable) and the aperture,
  // so it is a whole line if line < table_size_i / 8, and else the table's last, partial one,
  // of table_size_i mod 8 PTEs (the clamp to the aperture can only shorten a line past it).
  function automatic logic [3:0] line_ptes(line_t line);
    return (32'(line) < (table_size_i >> 3)) ? 4'd8 : {1'b0, table_size_i[2:0]};
  endfunction
  function automatic sgpu_pkg::addr_t line_addr(line_t line);
    return {table_base_i[63:PageShift], {PageShift{1'b0}}} + sgpu_pkg::addr_t'({line, 6'b000000});
  endfunction

  assign wk_req_ptes = wk_start_demand ? line_ptes(ap_line) : line_ptes(pf_line_q);
  assign wk_req_addr = wk_start_demand ? line_addr(ap_line) : line_addr(pf_line_q);

  logic  wk_go;
  assign wk_go = wk_req_valid && wk_req_ready;

  /////////
  // TLB //
  /////////

  idx_t wk_fill_idx;
  assign wk_fill_idx = {wk_line_q, wk_pte_idx};

  sgpu_gart_tlb #(
    .Entries (TlbEntries),
    .IdxWidth(ApIdxWidth)
  ) u_tlb (
    .clk_i          (clk_i),
    .rst_ni         (rst_ni),
    .lk_idx_new_i   (xlate_req_i.vpn[ApIdxWidth-1:0]),
    .lk_idx_cur_i   (ap_idx),
    .lk_take_i      (xlate_req_valid_i && xlate_req_ready_o),
    .lk_fresh_o     (tlb_fresh),
    .lk_hit_o       (tlb_hit),
    .lk_ppn_o       (tlb_ppn),
    .lk_writable_o  (tlb_writable),
    .lk_snoop_o     (tlb_snoop),
    .fill_valid_i   (wk_pte_valid && wk_pte.valid),
    .fill_idx_i     (wk_fill_idx),
    .fill_ppn_i     (wk_pte.ppn),
    .fill_writable_i(wk_pte.writable),
    .fill_snoop_i   (wk_pte.snoop),
    .inv_valid_i    (tlb_inv_valid),
    .inv_ready_o    (tlb_inv_ready),
    .inv_i          (inv_q),
    .inv_done_o     (tlb_inv_done)
  );

  // The sweep starts once no walk is in flight (and none starts: walk_block).
  assign tlb_inv_valid = inv_pend_q && wk_req_ready && tlb_inv_ready;
  assign inv_ready_o   = !inv_pend_q;
  assign inv_busy_o    = inv_pend_q || !tlb_inv_ready;
  assign inv_done_o    = tlb_inv_done;

  //////////////////
  // Fault record //
  //////////////////

  fault_rec_t rec_q, rec_d, rec_now;
  logic       resolve_fault;

  // A quiet request's fault (a read ahead for work that may never start) is answered, not
  // recorded: its client asks again, not quietly, if the work starts.
  assign resolve_fault = resolve && (fault != GartFaultNone) && !cur_quiet_q;

  // The record takes a fault a cycle late, and the port shows it on time: a fault is kept in
  // fl_rec_q (registered with every field it records, whatever happens) and merged into rec_q, the
  // record as of the previous cycle's clear, by the port's view rec_now (from registers: a
  // multiplexer) and by the next cycle's update. A clear in the fault's cycle is applied to the
  // record before the fault, one in the next cycle after it, as before. So resolve_fault, behind
  // the TLB's hit and the decision, ends in one flip-flop (and the reason in four) instead of
  // the record's 180 load enables and the interrupt status (timing pass 6d, docs/fpga.md;
  // asserted: RecordIsOnTime).
  logic       fl_valid_q;
  fault_rec_t fl_rec_q;  // the record this cycle's translation would make (valid, not more)

  // The clear is registered too (clr_q) and applied to rec_q as it is read, so fault_clear_i
  // (a register write decoded in the register block) ends in one flip-flop instead of the
  // record's valid and more bits behind the merge: rec_q is the record before the previous
  // cycle's clear, rec_base the record as of it (timing pass 19; the port is unchanged, asserted
  // by RecordIsOnTime).
  logic       clr_q;
  fault_rec_t rec_base;

  always_comb begin
    rec_base = rec_q;
    if (clr_q) begin
      rec_base.valid = 1'b0;
      rec_base.more  = 1'b0;
    end
    rec_now = rec_base;
    if (fl_valid_q) begin
      if (!rec_base.valid) begin
        rec_now = fl_rec_q;
      end else begin
        rec_now.more = 1'b1;
      end
    end
    rec_d = rec_now;
  end

  // The event is the registered fault too: it pulses in the cycle the port first shows the
  // fault in the record (a cycle after the fault is answered; before pass 6d it pulsed with the
  // answer, a cycle before the record showed it). INT_STATUS.gart_fault and the interrupt are
  // set a cycle later; the record is on time.
  assign fault_o     = rec_now;
  assign fault_evt_o = fl_valid_q;

  //////////////////
  // Performance //
  //////////////////

  logic [31:0] perf_lookups_q, perf_lookups_d, perf_misses_q, perf_misses_d;
  logic [31:0] perf_walks_q, perf_walks_d;

  // Each counter's event selects its incremented value, not an addend: the event (behind the
  // TLB's hit) then ends at the flip-flops' enables instead of entering a 32-bit carry chain.
  always_comb begin
    perf_lookups_d = perf_lookups_q;
    perf_misses_d  = perf_misses_q;
    perf_walks_d   = perf_walks_q;
    if (resolve && ap_lookup)                      perf_lookups_d = perf_lookups_q + 1'b1;
    if (cur_valid_q && need_walk && !cur_missed_q) perf_misses_d  = perf_misses_q + 1'b1;
    if (wk_go)                                     perf_walks_d   = perf_walks_q + 1'b1;
  end

  assign perf_lookups_o = perf_lookups_q;
  assign perf_misses_o  = perf_misses_q;
  assign perf_walks_o   = perf_walks_q;

  ////////////////
  // Main logic //
  ////////////////

  line_t next_line;
  assign next_line = ap_line + 1'b1;

  // The prefetch's decision, made as cur is answered, from registers and the answer alone:
  // cur's next line is kept with it (cur_nl_q, cur_nl_nz_q: formed as the request is taken, so
  // no adder is in front of the compares), and in a cycle that answers cur no demand walk starts
  // (an answer and need_walk exclude each other), so the walk that starts, if any, is the
  // pending prefetch's (pf_go, from registers): the history as it will be after this cycle's
  // walk start is the history or the pending line and hist0, selected by registers, not by the
  // walk start behind the TLB's hit (timing pass 19; asserted: PrefetchDecision).
  line_t cur_nl_q, cur_nl_d;
  logic  cur_nl_nz_q, cur_nl_nz_d;
  logic  pf_go, pf_hist0_eq, pf_hist1_eq, pf_line_eq, pf_seen, pf_want;
  assign pf_go       = pf_pend_q && !walk_block && wk_req_ready;
  assign pf_hist0_eq = hist0_valid_q && (hist0_q == cur_nl_q);
  assign pf_hist1_eq = hist1_valid_q && (hist1_q == cur_nl_q);
  assign pf_line_eq  = pf_line_q == cur_nl_q;
  assign pf_seen     = pf_go ? (pf_line_eq || pf_hist0_eq) : (pf_hist0_eq || pf_hist1_eq);
  // The next line inside the table: {line, 000} < eff_size, where the clamp to the aperture
  // cannot shorten it ({line, 000} has ApIdxWidth bits).
  assign pf_want     = ap_lookup && (33'({cur_nl_q, 3'b000}) < 33'(table_size_i)) && cur_nl_nz_q
                       && !pf_seen;

  always_comb begin
    cur_valid_d  = cur_valid_q;
    cur_vpn_d    = cur_vpn_q;
    cur_nl_d     = cur_nl_q;
    cur_nl_nz_d  = cur_nl_nz_q;
    cur_in_ap_d  = cur_in_ap_q;
    cur_in_ms_d  = cur_in_ms_q;
    cur_in_sys_d = cur_in_sys_q;
    cur_write_d  = cur_write_q;
    cur_priv_d   = cur_priv_q;
    cur_quiet_d  = cur_quiet_q;
    cur_client_d = cur_client_q;
    cur_missed_d = cur_missed_q;
    res_valid_d  = res_valid_q;
    res_err_d    = res_err_q;
    res_pte_d    = res_pte_q;
    rsp_valid_d  = rsp_valid_q && !xlate_rsp_ready_i;
    rsp_ppn_d    = rsp_ppn_q;
    rsp_fault_d  = rsp_fault_q;
    rsp_snoop_d  = rsp_snoop_q;
    wk_line_d    = wk_line_q;
    wk_got_d     = wk_got_q;
    pf_pend_d    = pf_pend_q;
    pf_line_d    = pf_line_q;
    hist0_valid_d = hist0_valid_q;
    hist1_valid_d = hist1_valid_q;
    hist0_d      = hist0_q;
    hist1_d      = hist1_q;
    inv_pend_d   = inv_pend_q;
    inv_d        = inv_q;

    // A walk starts.
    if (wk_go) begin
      wk_line_d     = wk_start_line;
      wk_got_d      = '0;
      hist1_valid_d = hist0_valid_q;
      hist1_d       = hist0_q;
      hist0_valid_d = 1'b1;
      hist0_d       = wk_start_line;
      // The walk covers the pending prefetch's line: the prefetch itself starts, or a demand
      // walk of the same line (the compare with ap_line is from registers, not behind the
      // choice of wk_start_line).
      if (pf_pend_q && (!wk_start_demand || pf_line_q == ap_line)) pf_pend_d = 1'b0;
    end

    // A PTE streams past: take it if cur may be waiting for it (ap_wait, not need_walk: while
    // the stream fills the TLB the lookup is not fresh and cur waits without asking for a walk;
    // an invalid PTE is not cached, so it must be taken here). A TLB hit takes priority.
    if (wk_pte_valid) begin
      wk_got_d = wk_got_q + 1'b1;
      if (cur_valid_q && ap_wait && ap_idx == wk_fill_idx) begin
        res_valid_d = 1'b1;
        res_err_d   = 1'b0;
        res_pte_d   = wk_pte;
      end
    end

    // A walk failed before delivering cur's PTE.
    if (wk_done && wk_done_err && cur_valid_q && ap_wait && ap_line == wk_line_q &&
        4'(ap_idx[LineShift-1:0]) >= wk_got_q) begin
      res_valid_d = 1'b1;
      res_err_d   = 1'b1;
    end

    if (cur_valid_q && need_walk) cur_missed_d = 1'b1;

    // Answer cur.
    if (resolve) begin
      rsp_valid_d = 1'b1;
      rsp_ppn_d   = ppn;
      rsp_fault_d = fault != GartFaultNone;
      rsp_snoop_d = snoop;
      cur_valid_d = 1'b0;
      // Prefetch the next line of the table unless it was walked lately.
      if (pf_want) begin
        pf_pend_d = 1'b1;
        pf_line_d = cur_nl_q;
      end
    end

    // Take the next request.
    if (xlate_req_valid_i && xlate_req_ready_o) begin
      cur_valid_d  = 1'b1;
      cur_vpn_d    = xlate_req_i.vpn;
      cur_nl_d     = line_t'(xlate_req_i.vpn[ApIdxWidth-1:LineShift]) + 1'b1;
      cur_nl_nz_d  = ~&xlate_req_i.vpn[ApIdxWidth-1:LineShift];
      cur_in_ap_d  = seg_ap(xlate_req_i.vpn);
      cur_in_ms_d  = seg_ms(xlate_req_i.vpn);
      cur_in_sys_d = seg_sys(xlate_req_i.vpn);
      cur_write_d  = xlate_req_i.write;
      cur_priv_d   = xlate_src_i.priv;
      cur_quiet_d  = xlate_src_i.quiet;
      cur_client_d = xlate_src_i.client;
      cur_missed_d = 1'b0;
      res_valid_d  = 1'b0;
    end

    // Invalidation: accept, then sweep when no walk is in flight. Whatever was walked before is
    // forgotten: captured PTEs, history and a pending prefetch.
    // The request is taken in every cycle none is pending (it is read only while one is), so the
    // valid from the register block and the CP ends in inv_pend_q alone, not in the request's
    // 65 load enables (timing pass 19).
    if (!inv_pend_q) inv_d = inv_i;
    if (inv_valid_i && inv_ready_o) inv_pend_d = 1'b1;
    if (tlb_inv_valid) begin
      inv_pend_d    = 1'b0;
      res_valid_d   = 1'b0;
      hist0_valid_d = 1'b0;
      hist1_valid_d = 1'b0;
      pf_pend_d     = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      cur_valid_q    <= 1'b0;
      cur_missed_q   <= 1'b0;
      res_valid_q    <= 1'b0;
      rsp_valid_q    <= 1'b0;
      pf_pend_q      <= 1'b0;
      hist0_valid_q  <= 1'b0;
      hist1_valid_q  <= 1'b0;
      inv_pend_q     <= 1'b0;
      wk_got_q       <= '0;
      fl_valid_q     <= 1'b0;
      rec_q          <= '{reason: GartFaultNone, default: '0};
      clr_q          <= 1'b0;
      perf_lookups_q <= '0;
      perf_misses_q  <= '0;
      perf_walks_q   <= '0;
    end else begin
      cur_valid_q    <= cur_valid_d;
      cur_missed_q   <= cur_missed_d;
      res_valid_q    <= res_valid_d;
      rsp_valid_q    <= rsp_valid_d;
      pf_pend_q      <= pf_pend_d;
      hist0_valid_q  <= hist0_valid_d;
      hist1_valid_q  <= hist1_valid_d;
      inv_pend_q     <= inv_pend_d;
      wk_got_q       <= wk_got_d;
      rec_q          <= rec_d;
      clr_q          <= fault_clear_i;
      fl_valid_q     <= resolve_fault;
      perf_lookups_q <= perf_lookups_d;
      perf_misses_q  <= perf_misses_d;
      perf_walks_q   <= perf_walks_d;
    end
  end

  // Payload registers: only read while their valid bit says so.
  always_ff @(posedge clk_i) begin
    cur_vpn_q   <= cur_vpn_d;
    cur_nl_q    <= cur_nl_d;
    cur_nl_nz_q <= cur_nl_nz_d;
    cur_in_ap_q  <= cur_in_ap_d;
    cur_in_ms_q  <= cur_in_ms_d;
    cur_in_sys_q <= cur_in_sys_d;
    cur_write_q <= cur_write_d;
    cur_priv_q  <= cur_priv_d;
    cur_quiet_q <= cur_quiet_d;
    cur_client_q <= cur_client_d;
    res_err_q   <= res_err_d;
    res_pte_q   <= res_pte_d;
    rsp_ppn_q   <= rsp_ppn_d;
    rsp_fault_q <= rsp_fault_d;
    rsp_snoop_q <= rsp_snoop_d;
    wk_line_q   <= wk_line_d;
    pf_line_q   <= pf_line_d;
    hist0_q     <= hist0_d;
    hist1_q     <= hist1_d;
    inv_q       <= inv_d;
    fl_rec_q    <= '{valid:      1'b1,
                     more:       1'b0,
                     write:      cur_write_q,
                     privileged: cur_priv_q,
                     reason:     fault,
                     client:     cur_client_q,
                     addr:       {cur_vpn_q, {PageShift{1'b0}}},
                     fence:      exec_i.fence,
                     context_id: exec_i.context_id};
  end

  // The table is 4 KiB aligned; PTE bits 11:3 are reserved.
  logic unused;
  assign unused = (^table_base_i[PageShift-1:0]) ^ (^g_dec[0].pte.reserved) ^ (^g_dec[1].pte.reserved);

  assign xlate_rsp_valid_o = rsp_valid_q;
  assign xlate_rsp_o       = '{ppn: rsp_ppn_q, fault: rsp_fault_q};
  assign xlate_rsp_snoop_o = rsp_snoop_q;

  ////////////////////////////
  // Elaboration-time checks //
  ////////////////////////////

  `SGPU_ASSERT_STATIC(g_bad_apseg_size, ApSegSize >= 64'h8000 && ApSegSize <= 64'h1000_0000_0000
                      && (ApSegSize & (ApSegSize - 1)) == '0,
                      "ApSegSize must be a power of two from 32 KiB to 16 TiB")
  `SGPU_ASSERT_STATIC(g_bad_apseg_base, (ApSegBase & (ApSegSize - 1)) == '0,
                      "ApSegBase must be aligned to ApSegSize")
  `SGPU_ASSERT_STATIC(g_bad_memseg, MemSegSize == '0
                      || (MemSegSize >= 64'h1000 && (MemSegSize & (MemSegSize - 1)) == '0
                          && (MemSegBase & (MemSegSize - 1)) == '0
                          && (MemSegBusBase & (MemSegSize - 1)) == '0),
                      "MemSegSize must be 0 or a power of two >= 4 KiB, the bases aligned to it")
  `SGPU_ASSERT_STATIC(g_bad_sys, SysAddrBits >= 13 && SysAddrBits <= 63,
                      "SysAddrBits must be 13..63")
  `SGPU_ASSERT_STATIC(g_bad_overlap_sys, (ApSegBase >> SysAddrBits) != '0
                      && (MemSegSize == '0 || (MemSegBase >> SysAddrBits) != '0),
                      "the segments must lie above the system-physical range [0, 2^SysAddrBits)")
  `SGPU_ASSERT_STATIC(g_bad_overlap, MemSegSize == '0 || MemSegBase >= ApSegBase + ApSegSize
                      || ApSegBase >= MemSegBase + MemSegSize,
                      "the memory and aperture segments overlap")

  ////////////////
  // Invariants //
  ////////////////

  `SGPU_ASSERT(DecidedIsDecision, decided == dec.decided)
  `SGPU_ASSERT(InvalidationIsAccepted, (inv_valid_i && inv_ready_o) |=> inv_q == $past(inv_i))
  `SGPU_ASSERT(InvalidationIsHeld, inv_pend_q |=> $stable(inv_q))
  `SGPU_ASSERT(RspHeldUntilTaken, (rsp_valid_q && !xlate_rsp_ready_i)
                                  |=> (rsp_valid_q && $stable(xlate_rsp_o)))
  `SGPU_ASSERT(NoWalkDuringInvalidation, wk_go |-> !walk_block)
  `SGPU_ASSERT(SweepWithoutWalk, tlb_inv_valid |-> !wk_busy)
  `SGPU_ASSERT(SegmentIsKept, cur_valid_q |-> in_ap == seg_ap(cur_vpn_q) && in_ms == seg_ms(cur_vpn_q)
                                             && in_sys == seg_sys(cur_vpn_q))
  `SGPU_ASSERT(WalkStartIsEither, wk_req_valid == (wk_start_demand || wk_start_pf))
  `SGPU_ASSERT(WalkInsideTable, wk_go |-> 33'({wk_start_line, 3'b000}) < eff_size)
  // The address and length chosen are those of the line chosen.
  logic [32:0] wk_rem_chosen;
  assign wk_rem_chosen = eff_size - 33'({wk_start_line, 3'b000});
  `SGPU_ASSERT(WalkRequestOfLine, wk_req_valid |->
      wk_req_addr == line_addr(wk_start_line)
      && wk_req_ptes == ((wk_rem_chosen >= 33'd8) ? 4'd8 : wk_rem_chosen[3:0]))
  `SGPU_ASSERT(InTableIsClampedCompare, in_table == (33'(ap_idx) < eff_size))
  // The prefetch's decision, from registers and the answer, is the one made before timing pass
  // 19: next_line against the history as it will be after this cycle's walk start, and inside
  // the clamped table.
  logic ref_seen0, ref_seen1;
  assign ref_seen0 = hist0_valid_d && hist0_d == next_line;
  assign ref_seen1 = hist1_valid_d && hist1_d == next_line;
  `SGPU_ASSERT(NextLineIsKept, cur_valid_q |-> cur_nl_q == next_line
                                              && cur_nl_nz_q == (next_line != '0))
  `SGPU_ASSERT(AnswerStartsNoDemandWalk, resolve |-> wk_go == pf_go)
  `SGPU_ASSERT(PrefetchDecision, (resolve && !tlb_inv_valid) |-> pf_want == (ap_lookup
      && (33'({next_line, 3'b000}) < eff_size) && (next_line != '0) && !ref_seen0 && !ref_seen1))

`ifndef SYNTHESIS
  // The record as it was kept before timing pass 6d: captured in the fault's cycle. The port
  // shows the same record in every cycle.
  fault_rec_t ref_rec_q, ref_rec_d;
  always_comb begin
    ref_rec_d = ref_rec_q;
    if (fault_clear_i) begin
      ref_rec_d.valid = 1'b0;
      ref_rec_d.more  = 1'b0;
    end
    if (resolve_fault) begin
      if (!ref_rec_d.valid) begin
        ref_rec_d = '{valid: 1'b1, more: 1'b0, write: cur_write_q, privileged: cur_priv_q,
                      reason: fault, client: cur_client_q, addr: {cur_vpn_q, {PageShift{1'b0}}},
                      fence: exec_i.fence, context_id: exec_i.context_id};
      end else begin
        ref_rec_d.more = 1'b1;
      end
    end
  end
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) ref_rec_q <= '{reason: GartFaultNone, default: '0};
    else         ref_rec_q <= ref_rec_d;
  end
  `SGPU_ASSERT(RecordIsOnTime, fault_o == ref_rec_q)
`endif

endmodule

`default_nettype wire
