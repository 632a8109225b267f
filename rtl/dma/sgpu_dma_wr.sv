// Burst write master of the copy engine: writes rows [addr, addr + len) from a packed byte
// stream (byte i of a row in lane i mod bus bytes of the row's input beat i / bus bytes, as
// sgpu_dma_rd delivers it) through AXI4 INCR bursts.
//
//   rows ─┬─▶ u_plan_fifo ─▶ burst planner ─▶ AW register ─▶ AW
//         │                       ├──────────▶ u_wdesc_fifo (burst lengths) ─┐
//         │                       └──────────▶ u_rsp_fifo (addresses, until B)│
//         └─▶ u_wrow_fifo ─▶ realigner ◀── in (packed stream)                 │
//                               └──▶ W register ─▶ W  ◀── bursts whose AW was accepted
//
// - Bursts are full-width, bus-aligned, at most MaxBurstBeats beats and never cross 4 KiB.
// - The realigner shifts the packed stream to the destination lane: output beat k of a row
//   takes the top bytes of input beat k - 1 and the low bytes of input beat k. Strobes cover
//   exactly the row's bytes, so nothing outside [addr, addr + len) is ever written.
// - At most MaxOutstanding bursts are between AW and B. A W beat is only sent for a burst whose
//   AW was accepted. W and AW run ahead of B, so writes overlap the reads feeding them.
// - flush_i (level): no new AW; queued rows and input are dropped; bursts whose AW was issued
//   are completed with zero strobes (AXI needs every beat); responses are still awaited.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_dma_wr #(
  /// AXI data width in bits: a power of two, 64..512.
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// ID of every write (one ID: responses return in order).
  parameter logic [IdWidth-1:0] AxiId = '0,
  /// Longest burst in beats, 1..256.
  parameter int unsigned MaxBurstBeats = 256,
  /// Most bursts between AW and B.
  parameter int unsigned MaxOutstanding = 8,
  /// Rows queued ahead of the one being written.
  parameter int unsigned RowDepth = 4,
  /// AXI4 write request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_wr_req_t = sgpu_axi_pkg::axi_wr_req_t,
  parameter type axi_wr_rsp_t = sgpu_axi_pkg::axi_wr_rsp_t
) (
  /// Clock.
  input  wire logic                           clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                           rst_ni,
  /// Stop: no new bursts, drop queued rows and input, finish issued bursts with no strobes.
  input  wire logic                           flush_i,

  /// Destination translation (GPU page -> bus page), one request per new page before the
  /// first burst into it (sgpu_dma_pkg::xlate_* with write = 1). The last translation is kept
  /// until xlate_clear_i (the engine starts a new request) or flush_i.
  output      logic                           xlate_req_valid_o,
  input  wire logic                           xlate_req_ready_i,
  output      sgpu_dma_pkg::xlate_req_t       xlate_req_o,
  input  wire logic                           xlate_rsp_valid_i,
  /// Always 1: an answer is taken whenever it comes (also while flushing).
  output      logic                           xlate_rsp_ready_o,
  input  wire sgpu_dma_pkg::xlate_rsp_t       xlate_rsp_i,
  /// Forget the kept translation (only while no row is queued or planned).
  input  wire logic                           xlate_clear_i,
  /// One-cycle pulse: translation refused a destination page; nothing was issued to it.
  /// xerr_addr_o is the GPU address of the first byte of the row in that page.
  output      logic                           xerr_o,
  output      sgpu_pkg::addr_t                xerr_addr_o,

  /// Row channel (valid/ready).
  input  wire logic                           row_valid_i,
  /// A row is accepted; depends only on internal state.
  output      logic                           row_ready_o,
  /// {addr, len >= 1}.
  input  wire sgpu_dma_pkg::wr_row_t         row_i,

  /// Packed input stream (valid/ready); beats beyond a row's length are never taken.
  input  wire logic                           in_valid_i,
  /// Taken; never depends on in_valid_i.
  output      logic                           in_ready_o,
  /// Data; lanes beyond the row's last byte are ignored.
  input  wire logic [DataWidth-1:0]           in_data_i,
  /// One-cycle pulse: the last input beat of a row was taken.
  output      logic                           in_row_done_o,
  /// Input beats taken of the current row, in bytes.
  output      logic [31:0]                    in_row_bytes_o,

  /// No row queued, no burst planned or in flight, no response outstanding.
  output      logic                           idle_o,
  /// One-cycle pulse: a write response carried SLVERR/DECERR; err_addr_o is its burst address.
  output      logic                           err_o,
  /// Address of the failing burst.
  output      sgpu_pkg::addr_t                err_addr_o,

  /// AXI4 write master (aw, w, b).
  output      axi_wr_req_t                    axi_wr_req_o,
  input  wire axi_wr_rsp_t                    axi_wr_rsp_i
);

  import sgpu_dma_pkg::*;

  localparam int unsigned BusBytes  = DataWidth / 8;
  localparam int unsigned LaneBits  = $clog2(BusBytes);
  localparam int unsigned PageShift = sgpu_pkg::PageShift;
  localparam int unsigned PageBeats = sgpu_pkg::PageBytes / BusBytes;
  localparam int unsigned BurstBeats = (MaxBurstBeats < PageBeats) ? MaxBurstBeats : PageBeats;
  /// Beats of a row: up to (2^32 + BusBytes) / BusBytes.
  localparam int unsigned BeatsWidth = 33 - LaneBits + 1;
  localparam int unsigned CreditWidth = $clog2(MaxOutstanding + 1) + 1;

  typedef logic [LaneBits-1:0]   lane_t;
  localparam logic [33:0] BusM1 = 34'(BusBytes) - 34'd1;
  typedef logic [BeatsWidth-1:0] beats_t;

  /// Beats a row covers on the bus.
  function automatic beats_t out_beats(wr_row_t r);
    return beats_t'((34'(r.addr[LaneBits-1:0]) + 34'(r.len) + BusM1) >> LaneBits);
  endfunction
  /// Input beats of a row.
  function automatic beats_t in_beats(logic [31:0] len);
    return beats_t'((34'(len) + BusM1) >> LaneBits);
  endfunction

  //////////
  // Rows //
  //////////

  localparam beats_t BurstB = beats_t'(BurstBeats);
  localparam beats_t PageB  = beats_t'(PageBeats);

  /// Beats from a bus-aligned page offset to the page's end.
  function automatic beats_t room_of(logic [PageShift-1:0] offset);
    return beats_t'((sgpu_pkg::PageBytes - 32'(offset)) >> LaneBits);
  endfunction

  // What each side reads of a row, formed as the row is queued from the engine's registers
  // instead of behind the FIFOs' LUT-RAM reads, where they stood in front of the planner's and
  // the W side's decisions (timing pass 14, docs/fpga.md).
  // The planner: the row's first byte, its beats, and the compares that choose its first burst
  // (below: the beats left, BurstBeats and the page's room, each against the others).
  typedef struct packed {
    sgpu_pkg::addr_t addr;
    beats_t          beats;
    logic            l_gt_b, l_gt_r, l_lt_r, b_gt_r, b_lt_r;
  } plan_t;
  // The W side: the lanes of the row's first and last bytes, lane + len (its last output beat k
  // has (k + 1) * B >= span), whether its first output beat is its last (span <= B) and whether
  // its first input beat is (len <= B). len stays the low 32 bits (the fast model's idle skip
  // reads it, tb/sim/idle_skip.cpp).
  typedef struct packed {
    logic        first_last, first_in_last;
    lane_t       lane, lane_hi;
    logic [32:0] span;
    logic [31:0] len;
  } wrow_t;

  plan_t  row_plan;
  wrow_t  row_w;
  beats_t row_beats, row_room;
  assign row_beats = out_beats(row_i);
  assign row_room  = room_of({row_i.addr[PageShift-1:LaneBits], lane_t'(0)});
  assign row_plan  = '{addr: row_i.addr, beats: row_beats,
                       l_gt_b: row_beats > BurstB, l_gt_r: row_beats > row_room,
                       l_lt_r: row_beats < row_room, b_gt_r: BurstB > row_room,
                       b_lt_r: BurstB < row_room};
  assign row_w     = '{first_last: 34'(row_i.addr[LaneBits-1:0]) + 34'(row_i.len)
                                   <= 34'(BusBytes),
                       first_in_last: row_i.len <= 32'(BusBytes),
                       lane: row_i.addr[LaneBits-1:0],
                       lane_hi: lane_t'(32'(row_i.addr[LaneBits-1:0]) + row_i.len - 32'd1),
                       span: 33'(row_i.addr[LaneBits-1:0]) + 33'(row_i.len),
                       len: row_i.len};

  logic  pf_in_ready, pf_valid, pf_pop;
  plan_t pf_head;
  logic  wf_in_ready, wf_valid, wf_pop;
  wrow_t wf_head;

  assign row_ready_o = pf_in_ready && wf_in_ready && !flush_i;

  sgpu_fifo #(.Width($bits(plan_t)), .Depth(RowDepth)) u_plan_fifo (
    .clk_i, .rst_ni, .clear_i(flush_i),
    .in_valid_i (row_valid_i && row_ready_o), .in_ready_o(pf_in_ready), .in_data_i(row_plan),
    .out_valid_o(pf_valid), .out_ready_i(pf_pop), .out_data_o(pf_head), .count_o()
  );

  sgpu_fifo #(.Width($bits(wrow_t)), .Depth(RowDepth + 1)) u_wrow_fifo (
    .clk_i, .rst_ni, .clear_i(flush_i),
    .in_valid_i (row_valid_i && row_ready_o), .in_ready_o(wf_in_ready), .in_data_i(row_w),
    .out_valid_o(wf_valid), .out_ready_i(wf_pop), .out_data_o(wf_head), .count_o()
  );

  ////////////////////
  // Burst planner  //
  ////////////////////

  logic            pl_active_q, pl_active_d;
  sgpu_pkg::addr_t pl_addr_q, pl_addr_d;   // bus-aligned address of the next beat
  beats_t          pl_left_q, pl_left_d;   // beats of the row not yet planned
  beats_t          pl_room, pl_burst;
  logic            pl_issue;
  logic            awvalid_q, awvalid_d;
  sgpu_pkg::addr_t awaddr_q, awaddr_d;
  logic [7:0]      awlen_q, awlen_d;
  logic            wd_in_ready, wd_valid, wd_pop;
  logic [7:0]      wd_head;
  logic            rsp_in_ready, rsp_valid;
  sgpu_pkg::addr_t rsp_head;

  assign pl_room  = room_of(pl_addr_q[PageShift-1:0]);

  // The burst is min(beats left, BurstBeats, the page's room). Each of the three is compared
  // with the others in parallel and the choice selects, one-hot, among the values each would
  // give, all formed from registers: the next address (for the room: the next page's start),
  // the beats left after it, AWLEN, whether the row goes on and whether the page does. Taking
  // the minimum first (two compares and multiplexers in series) and adding after it put four
  // carry chains in series in front of the planner's registers (timing pass 6b, docs/fpga.md;
  // asserted equal to that: BurstIsMin).
  // The compares themselves are registers (pl_*_q), formed a burst ahead: a new row's come with
  // it from the plan FIFO (formed as it was queued), and after a burst that leaves some of the
  // row the next burst's follow from this one's choice by compares of registers with constants
  // (below). Compared live, the room's subtraction and two carry chains stood in front of the
  // choice and every planner register behind it (timing pass 14, docs/fpga.md; asserted equal
  // to the compares: PlanComparesKept).
  logic            pl_l_gt_b_q, pl_l_gt_r_q, pl_l_lt_r_q, pl_b_gt_r_q, pl_b_lt_r_q;
  logic            pl_l_gt_b_d, pl_l_gt_r_d, pl_l_lt_r_d, pl_b_gt_r_d, pl_b_lt_r_d;
  logic            nx_l_gt_b, nx_l_gt_r, nx_l_lt_r, nx_b_gt_r, nx_b_lt_r;  // after this burst
  logic            pl_sel_l, pl_sel_b, pl_sel_r;
  sgpu_pkg::addr_t pl_next_b, pl_next_r, pl_next;
  beats_t          pl_rest_b, pl_rest_r, pl_rest;
  logic [7:0]      pl_len_l, pl_len_b, pl_len_r, pl_awlen;
  logic            pl_goes_on, pl_same_page;

  // The first rule that clamps wins, as in min(min(left, BurstBeats), room).
  assign pl_sel_l  = !pl_l_gt_b_q && !pl_l_gt_r_q;
  assign pl_sel_b  = pl_l_gt_b_q && !pl_b_gt_r_q;
  assign pl_sel_r  = (!pl_l_gt_b_q && pl_l_gt_r_q) || (pl_l_gt_b_q && pl_b_gt_r_q);

  // The next address matters only while the row goes on (the burst is not all of it).
  assign pl_next_b = pl_addr_q + sgpu_pkg::addr_t'({BurstB, lane_t'(0)});
  assign pl_next_r = {pl_addr_q[63:PageShift] + 1'b1, {PageShift{1'b0}}};
  assign pl_rest_b = pl_left_q - BurstB;
  assign pl_rest_r = pl_left_q - pl_room;
  assign pl_len_l  = 8'(pl_left_q - 1'b1);
  assign pl_len_b  = 8'(BurstB - 1'b1);
  assign pl_len_r  = 8'(pl_room - 1'b1);

  assign pl_burst     = ({$bits(beats_t){pl_sel_l}} & pl_left_q) | ({$bits(beats_t){pl_sel_b}} & BurstB)
                        | ({$bits(beats_t){pl_sel_r}} & pl_room);
  assign pl_next      = pl_sel_b ? pl_next_b : pl_next_r;
  assign pl_rest      = ({$bits(beats_t){pl_sel_b}} & pl_rest_b) | ({$bits(beats_t){pl_sel_r}} & pl_rest_r);
  assign pl_awlen     = ({8{pl_sel_l}} & pl_len_l) | ({8{pl_sel_b}} & pl_len_b) | ({8{pl_sel_r}} & pl_len_r);
  // The row goes on unless the burst is all of it; the burst stays in its page unless it is all
  // of the page's room (a tie with the row's or BurstBeats' count included).
  assign pl_goes_on   = !pl_sel_l;
  assign pl_same_page = (pl_sel_l && pl_l_lt_r_q) || (pl_sel_b && pl_b_lt_r_q);

  // The next burst's compares, where the row goes on (B = BurstBeats, P = the page's beats,
  // left and room this burst's):
  // - BurstBeats inside the page (B < room): left - B and room - B remain; left - B against B
  //   is left against 2B, against room - B it is left against room (kept), and B against
  //   room - B is 2B against room.
  // - BurstBeats to the page's end (B == room): left - B and a whole page remain: left against
  //   2B and B + P; B against P is fixed.
  // - the room (room < B, or left > room at B > room): left - room and a whole page: left
  //   against room + B and room + P.
  localparam beats_t Burst2B = beats_t'(2 * BurstBeats);
  localparam beats_t BurstP  = beats_t'(BurstBeats + PageBeats);
  beats_t pl_room_b, pl_room_p;
  logic   pl_in_page;
  assign pl_room_b  = pl_room + BurstB;
  assign pl_room_p  = pl_room + PageB;
  assign pl_in_page = pl_sel_b && pl_b_lt_r_q;
  always_comb begin
    if (pl_in_page) begin
      nx_l_gt_b = pl_left_q > Burst2B;
      nx_l_gt_r = pl_l_gt_r_q;
      nx_l_lt_r = pl_l_lt_r_q;
      nx_b_gt_r = Burst2B > pl_room;
      nx_b_lt_r = Burst2B < pl_room;
    end else if (pl_sel_b) begin
      nx_l_gt_b = pl_left_q > Burst2B;
      nx_l_gt_r = pl_left_q > BurstP;
      nx_l_lt_r = pl_left_q < BurstP;
      nx_b_gt_r = BurstB > PageB;
      nx_b_lt_r = BurstB < PageB;
    end else begin
      nx_l_gt_b = pl_left_q > pl_room_b;
      nx_l_gt_r = pl_left_q > pl_room_p;
      nx_l_lt_r = pl_left_q < pl_room_p;
      nx_b_gt_r = BurstB > PageB;
      nx_b_lt_r = BurstB < PageB;
    end
  end
  // Destination translation: the planner issues a burst only through a translated page.
  logic            tr_valid_q, tr_valid_d;   // tr_vpn_q -> tr_ppn_q is known
  sgpu_pkg::pfn_t  tr_vpn_q, tr_vpn_d, tr_ppn_q, tr_ppn_d;
  logic            tr_req_q, tr_req_d;       // request offered to the translation port
  logic            tr_pend_q, tr_pend_d;     // request accepted, answer not yet taken
  logic            tr_fault_q, tr_fault_d;   // a page was refused: plan nothing until the flush
  logic            tr_drop_q, tr_drop_d;     // the pending answer belongs to a flushed request
  logic            pl_first_q, pl_first_d;   // next burst is the row's first
  sgpu_pkg::addr_t pl_row_q, pl_row_d;       // GPU address of the row's first byte
  logic            pl_hit;
  logic            pl_same_q, pl_same_d;     // tr_vpn_q is pl_addr_q's page

  // The translated page is pl_addr_q's: kept in a register (pl_same_q) instead of a 52-bit
  // compare in front of every burst's issue (timing pass 6b, docs/fpga.md). The two change only
  // where pl_same_d follows them: a new row compares its page with tr_vpn_q (from the plan
  // FIFO's head, not behind the issue); a burst stays in its page unless it fills the page's
  // room (bursts never cross 4 KiB), and then moves to the next page; a new page's request
  // takes pl_addr_q's page.
  assign pl_hit   = tr_valid_q && pl_same_q;
  assign pl_issue = pl_active_q && pl_hit && !flush_i && (!awvalid_q || axi_wr_rsp_i.aw_ready)
                    && wd_in_ready && rsp_in_ready;

  logic tr_ask;
  assign tr_ask = pl_active_q && !pl_hit && !flush_i && !tr_req_q && !tr_pend_q && !tr_fault_q;

  assign xlate_req_valid_o = tr_req_q;
  assign xlate_req_o       = '{vpn: tr_vpn_q, write: 1'b1};
  assign xlate_rsp_ready_o = 1'b1;
  assign xerr_addr_o       = pl_first_q ? pl_row_q : pl_addr_q;

  always_comb begin
    tr_valid_d = tr_valid_q;
    tr_vpn_d   = tr_vpn_q;
    tr_ppn_d   = tr_ppn_q;
    tr_req_d   = tr_req_q && !xlate_req_ready_i;
    tr_pend_d  = tr_pend_q || (tr_req_q && xlate_req_ready_i);
    tr_fault_d = tr_fault_q;
    tr_drop_d  = tr_drop_q;
    xerr_o     = 1'b0;
    if (xlate_rsp_valid_i) begin
      tr_pend_d = 1'b0;
      tr_drop_d = 1'b0;
      if (!tr_drop_q && !flush_i) begin
        if (xlate_rsp_i.fault) begin
          tr_fault_d = 1'b1;
          xerr_o     = 1'b1;
        end else begin
          tr_valid_d = 1'b1;
          tr_ppn_d   = xlate_rsp_i.ppn;
        end
      end
    end
    // A new page: ask once (the request is held until accepted, also across a flush).
    if (tr_ask) begin
      tr_req_d   = 1'b1;
      tr_valid_d = 1'b0;
      tr_vpn_d   = pl_addr_q[63:PageShift];
    end
    if (flush_i || xlate_clear_i) begin
      tr_valid_d = 1'b0;
      tr_fault_d = 1'b0;
      // An answer still owed (or a request not yet taken) is dropped when it comes.
      if (tr_req_d || tr_pend_d) tr_drop_d = 1'b1;
    end
  end
  assign pf_pop   = !pl_active_q && pf_valid && !flush_i;

  always_comb begin
    pl_active_d = pl_active_q;
    pl_addr_d   = pl_addr_q;
    pl_left_d   = pl_left_q;
    awvalid_d   = awvalid_q && !axi_wr_rsp_i.aw_ready;
    awaddr_d    = awaddr_q;
    awlen_d     = awlen_q;
    pl_first_d  = pl_first_q;
    pl_row_d    = pl_row_q;
    pl_same_d   = pl_same_q;
    pl_l_gt_b_d = pl_l_gt_b_q;
    pl_l_gt_r_d = pl_l_gt_r_q;
    pl_l_lt_r_d = pl_l_lt_r_q;
    pl_b_gt_r_d = pl_b_gt_r_q;
    pl_b_lt_r_d = pl_b_lt_r_q;
    if (pf_pop) begin
      pl_active_d = 1'b1;
      pl_addr_d   = {pf_head.addr[63:LaneBits], lane_t'(0)};
      pl_left_d   = pf_head.beats;
      pl_l_gt_b_d = pf_head.l_gt_b;
      pl_l_gt_r_d = pf_head.l_gt_r;
      pl_l_lt_r_d = pf_head.l_lt_r;
      pl_b_gt_r_d = pf_head.b_gt_r;
      pl_b_lt_r_d = pf_head.b_lt_r;
      pl_first_d  = 1'b1;
      pl_row_d    = pf_head.addr;
      pl_same_d   = (tr_vpn_q == pf_head.addr[63:PageShift]);
    end
    if (tr_ask) pl_same_d = 1'b1;
    if (pl_issue) begin
      pl_same_d   = pl_same_page;
      awvalid_d   = 1'b1;
      awaddr_d    = {tr_ppn_q, pl_addr_q[PageShift-1:0]};
      pl_first_d  = 1'b0;
      awlen_d     = pl_awlen;
      pl_addr_d   = pl_next;
      pl_left_d   = pl_rest;
      pl_active_d = pl_goes_on;
      pl_l_gt_b_d = nx_l_gt_b;
      pl_l_gt_r_d = nx_l_gt_r;
      pl_l_lt_r_d = nx_l_lt_r;
      pl_b_gt_r_d = nx_b_gt_r;
      pl_b_lt_r_d = nx_b_lt_r;
    end
    if (flush_i) pl_active_d = 1'b0;
  end

  assign axi_wr_req_o.aw_valid = awvalid_q;
  assign axi_wr_req_o.aw.id    = AxiId;
  assign axi_wr_req_o.aw.addr  = awaddr_q;
  assign axi_wr_req_o.aw.len   = awlen_q;
  assign axi_wr_req_o.aw.size  = 3'(LaneBits);
  assign axi_wr_req_o.aw.burst = sgpu_pkg::AxiBurstIncr;

  // Lengths of planned bursts, for the W side (never cleared: each was issued on AW).
  sgpu_fifo #(.Width(8), .Depth(MaxOutstanding)) u_wdesc_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (pl_issue), .in_ready_o(wd_in_ready), .in_data_i(pl_awlen),
    .out_valid_o(wd_valid), .out_ready_i(wd_pop), .out_data_o(wd_head), .count_o()
  );

  // Addresses of bursts between AW and B: its fill level is the outstanding-write count.
  sgpu_fifo #(.Width(64), .Depth(MaxOutstanding)) u_rsp_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (pl_issue), .in_ready_o(rsp_in_ready), .in_data_i(pl_addr_q),
    .out_valid_o(rsp_valid), .out_ready_i(axi_wr_rsp_i.b_valid), .out_data_o(rsp_head), .count_o()
  );

  assign axi_wr_req_o.b_ready = 1'b1;
  assign err_o        = axi_wr_rsp_i.b_valid && axi_wr_rsp_i.b.resp[1];
  assign err_addr_o   = rsp_head;

  /////////////////////////
  // Realigner and W side //
  /////////////////////////

  logic [CreditWidth-1:0] aw_credit_q, aw_credit_d;  // AWs accepted whose burst has not started
  logic [8:0]             burst_left_q, burst_left_d;
  beats_t                 k_q, k_d;                  // output beat of the current row
  beats_t                 in_cnt_q, in_cnt_d;        // input beats taken of the current row
  logic [DataWidth-1:0]   prev_q, prev_d;
  logic                   wvalid_q, wvalid_d, wlast_q, wlast_d;
  logic [DataWidth-1:0]   wdata_q, wdata_d;
  logic [BusBytes-1:0]    wstrb_q, wstrb_d;
  logic                   sk_valid_q, sk_valid_d, sk_last_q, sk_last_d;
  logic [DataWidth-1:0]   sk_data_q, sk_data_d;
  logic [BusBytes-1:0]    sk_strb_q, sk_strb_d;

  logic                   w_free, burst_ok, start_burst, can_go, needs_in, produce, row_last;
  logic                   in_last, beat_ready;
  logic [8:0]             burst_beats;               // beats of the burst this beat belongs to
  logic [DataWidth-1:0]   data_in, data_out, beat_data;
  logic [BusBytes-1:0]    strb_out, beat_strb;
  logic                   beat_last;

  // The W register and its skid. The beat producer writes into the skid's room, a register,
  // not into "W is free", which is behind the port's wready (the write arbiter's W order): with
  // wready in front of it, the decision to produce and everything it moves (the row and burst
  // counters, the FIFOs' pops, the input's ready) were a LUT chain behind the port (timing pass
  // 14, docs/fpga.md). A beat produced while W waits is kept in the skid and leaves next; W
  // shows the same beats in the same cycles (it took a beat whenever it was free before too), the
  // input may be taken a cycle earlier while W waits.
  assign w_free      = !wvalid_q || axi_wr_rsp_i.w_ready;
  assign start_burst = (burst_left_q == '0);
  assign burst_ok    = !start_burst || (wd_valid && aw_credit_q != '0);
  assign can_go      = !sk_valid_q && burst_ok;

  // The beat's compares with the row are registers formed a beat ahead (timing pass 14): the
  // first beat's come with the row (wrow_t, formed as it was queued), and as k_q moves on, the
  // next beat needs input unless this one took the last, and the two "last" compares are those
  // of k + 1: (k + 2) * B >= len (its input beat is the last) and (k + 2) * B >= span (it is the
  // row's last beat). Compared live, the row FIFO's LUT-RAM read, an adder and a carry chain
  // stood in front of the decision to produce (timing pass 7 left them; asserted equal:
  // BeatFlags).
  localparam int unsigned CmpWidth = BeatsWidth + LaneBits + 1;
  typedef logic [CmpWidth-1:0] cmp_t;
  logic  at_first_q, at_first_d;  // k_q == 0
  logic  needs_in_q, needs_in_d;  // beat k_q > 0 takes an input beat
  logic  in_last_q, in_last_d;    // beat k_q > 0 takes the row's last input beat
  logic  row_last_q, row_last_d;  // beat k_q > 0 is the row's last
  assign needs_in = at_first_q || needs_in_q;
  assign in_last  = at_first_q ? wf_head.first_in_last : in_last_q;
  assign row_last = at_first_q ? wf_head.first_last : row_last_q;

  assign beat_ready    = !needs_in || in_valid_i;
  assign in_ready_o    = !flush_i && can_go && wf_valid && needs_in;
  assign produce       = can_go && (flush_i || (wf_valid && beat_ready));

  assign burst_beats = start_burst ? 9'(wd_head) + 9'd1 : burst_left_q;
  assign data_in = needs_in ? in_data_i : '0;
  // Output byte j is input byte j - lane, or for j < lane byte j + B - lane of the previous input
  // beat: one multiplexer of B candidates per byte, selected by the lane. (As two shifters, one
  // by B - lane, ORed, it was three multiplexer layers behind a subtraction.)
  logic [BusBytes-1:0][BusBytes-1:0][7:0] byte_cand;  // [output byte][lane]
  always_comb begin
    for (int unsigned j = 0; j < BusBytes; j++) begin
      for (int unsigned l = 0; l < BusBytes; l++) begin
        byte_cand[j][l] = (j >= l) ? data_in[8*(j-l) +: 8] : prev_q[8*(j+BusBytes-l) +: 8];
      end
      data_out[8*j +: 8] = byte_cand[j][wf_head.lane];
    end
    for (int unsigned j = 0; j < BusBytes; j++) begin
      strb_out[j] = !(at_first_q && (lane_t'(j) < wf_head.lane))
                    && !(row_last && (lane_t'(j) > wf_head.lane_hi));
    end
  end
  // The beat produced this cycle (if any): a flush completes a burst with zero strobes.
  assign beat_data = flush_i ? '0 : data_out;
  assign beat_strb = flush_i ? '0 : strb_out;
  assign beat_last = start_burst ? (wd_head == 8'd0) : (burst_left_q == 9'd1);

  always_comb begin
    aw_credit_d  = aw_credit_q + CreditWidth'(axi_wr_req_o.aw_valid && axi_wr_rsp_i.aw_ready);
    burst_left_d = burst_left_q;
    k_d          = k_q;
    in_cnt_d     = in_cnt_q;
    prev_d       = prev_q;
    at_first_d   = at_first_q;
    needs_in_d   = needs_in_q;
    in_last_d    = in_last_q;
    row_last_d   = row_last_q;
    wd_pop       = 1'b0;
    wf_pop       = 1'b0;
    in_row_done_o = 1'b0;
    if (produce) begin
      if (start_burst) begin
        wd_pop      = 1'b1;
        aw_credit_d = aw_credit_d - 1'b1;
      end
      burst_left_d = burst_beats - 9'd1;
      if (!flush_i) begin
        if (needs_in) begin
          prev_d = in_data_i;
          if (in_last) begin
            in_cnt_d      = '0;
            in_row_done_o = 1'b1;
          end else begin
            in_cnt_d = in_cnt_q + 1'b1;
          end
        end
        if (row_last) begin
          wf_pop     = 1'b1;
          k_d        = '0;
          prev_d     = '0;
          at_first_d = 1'b1;
        end else begin
          k_d        = k_q + 1'b1;
          at_first_d = 1'b0;
          needs_in_d = needs_in && !in_last;
          // (k + 2) * B formed here, not as a signal of its own: the fast model's idle skip
          // compares every signal but the counters across a streaming cycle.
          in_last_d  = cmp_t'({k_q + beats_t'(2), lane_t'(0)}) >= cmp_t'(wf_head.len);
          row_last_d = cmp_t'({k_q + beats_t'(2), lane_t'(0)}) >= cmp_t'(wf_head.span);
        end
      end
    end
    if (flush_i) begin
      k_d        = '0;
      in_cnt_d   = '0;
      prev_d     = '0;
      at_first_d = 1'b1;
    end
  end

  // The W register takes the skid's beat, else the one produced, whenever it is free; the skid
  // takes the one produced while W waits. Payloads are loaded whether or not a beat comes (the
  // valid bits say what they hold).
  always_comb begin
    wvalid_d   = w_free ? (sk_valid_q || produce) : 1'b1;
    sk_valid_d = !w_free && (sk_valid_q || produce);
    wdata_d    = wdata_q;
    wstrb_d    = wstrb_q;
    wlast_d    = wlast_q;
    sk_data_d  = sk_data_q;
    sk_strb_d  = sk_strb_q;
    sk_last_d  = sk_last_q;
    if (w_free) begin
      wdata_d = sk_valid_q ? sk_data_q : beat_data;
      wstrb_d = sk_valid_q ? sk_strb_q : beat_strb;
      wlast_d = sk_valid_q ? sk_last_q : beat_last;
    end
    if (!sk_valid_q) begin
      sk_data_d = beat_data;
      sk_strb_d = beat_strb;
      sk_last_d = beat_last;
    end
  end

  assign in_row_bytes_o = 32'({in_cnt_q, lane_t'(0)});

  assign axi_wr_req_o.w_valid = wvalid_q;
  assign axi_wr_req_o.w.data  = wdata_q;
  assign axi_wr_req_o.w.strb  = wstrb_q;
  assign axi_wr_req_o.w.last  = wlast_q;

  assign idle_o = !pf_valid && !wf_valid && !pl_active_q && !awvalid_q && !wd_valid && !rsp_valid &&
                  (burst_left_q == '0) && !wvalid_q && !sk_valid_q && !tr_req_q && !tr_pend_q;

  ///////////////
  // Registers //
  ///////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      pl_active_q  <= 1'b0;
      awvalid_q    <= 1'b0;
      aw_credit_q  <= '0;
      burst_left_q <= '0;
      k_q          <= '0;
      in_cnt_q     <= '0;
      at_first_q   <= 1'b1;
      wvalid_q     <= 1'b0;
      sk_valid_q   <= 1'b0;
      tr_valid_q   <= 1'b0;
      tr_req_q     <= 1'b0;
      tr_pend_q    <= 1'b0;
      tr_fault_q   <= 1'b0;
      tr_drop_q    <= 1'b0;
    end else begin
      tr_valid_q   <= tr_valid_d;
      tr_req_q     <= tr_req_d;
      tr_pend_q    <= tr_pend_d;
      tr_fault_q   <= tr_fault_d;
      tr_drop_q    <= tr_drop_d;
      pl_active_q  <= pl_active_d;
      awvalid_q    <= awvalid_d;
      aw_credit_q  <= aw_credit_d;
      burst_left_q <= burst_left_d;
      k_q          <= k_d;
      in_cnt_q     <= in_cnt_d;
      at_first_q   <= at_first_d;
      wvalid_q     <= wvalid_d;
      sk_valid_q   <= sk_valid_d;
    end
  end

  // Payload registers: read only while the valid/state bits above say they hold something
  // (the beat flags only while at_first_q is low).
  always_ff @(posedge clk_i) begin
    pl_addr_q <= pl_addr_d;
    pl_first_q <= pl_first_d;
    pl_same_q  <= pl_same_d;
    pl_l_gt_b_q <= pl_l_gt_b_d;
    pl_l_gt_r_q <= pl_l_gt_r_d;
    pl_l_lt_r_q <= pl_l_lt_r_d;
    pl_b_gt_r_q <= pl_b_gt_r_d;
    pl_b_lt_r_q <= pl_b_lt_r_d;
    pl_row_q  <= pl_row_d;
    tr_vpn_q  <= tr_vpn_d;
    tr_ppn_q  <= tr_ppn_d;
    pl_left_q <= pl_left_d;
    awaddr_q  <= awaddr_d;
    awlen_q   <= awlen_d;
    prev_q    <= prev_d;
    needs_in_q <= needs_in_d;
    in_last_q  <= in_last_d;
    row_last_q <= row_last_d;
    wlast_q   <= wlast_d;
    wdata_q   <= wdata_d;
    wstrb_q   <= wstrb_d;
    sk_last_q <= sk_last_d;
    sk_data_q <= sk_data_d;
    sk_strb_q <= sk_strb_d;
  end

  // One ID, and only bit 1 of a response tells an error.
  logic unused_b;
  assign unused_b = ^{axi_wr_rsp_i.b.id, axi_wr_rsp_i.b.resp[0]};

  //////////////////////////////
  // Elaboration-time checks  //
  //////////////////////////////

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth >= 64 && DataWidth <= 512
                      && (DataWidth & (DataWidth - 1)) == 0,
                      "DataWidth must be a power of two between 64 and 512")
  `SGPU_ASSERT_STATIC(g_bad_burst, MaxBurstBeats >= 1 && MaxBurstBeats <= 256,
                      "MaxBurstBeats must be 1..256 (AXI4 INCR)")
  `SGPU_ASSERT_STATIC(g_bad_outstanding, MaxOutstanding >= 1, "MaxOutstanding must be at least 1")
  `SGPU_ASSERT_STATIC(g_bad_axi_types, $bits(axi_wr_req_o.w.data) == DataWidth
                      && $bits(axi_wr_req_o.aw.id) == IdWidth,
                      "the AXI types do not match DataWidth and IdWidth")

  `SGPU_ASSERT(ResponseHasBurst, axi_wr_rsp_i.b_valid |-> rsp_valid)
  // The beat flags are the compares of the beat counts, for the row at the head (the output
  // beat never passes the row's last; input beats are taken only while needed, the input count
  // following the output beat until the last).
  wr_row_t wf_row;
  beats_t  row_out_beats, row_in_beats;
  assign wf_row        = '{addr: 64'(wf_head.lane), len: wf_head.len};
  assign row_out_beats = out_beats(wf_row);
  assign row_in_beats  = in_beats(wf_head.len);
  `SGPU_ASSERT(BeatFlags, wf_valid && !flush_i |->
      at_first_q == (k_q == '0) && k_q < row_out_beats && needs_in == (k_q < row_in_beats)
      && row_last == (k_q == row_out_beats - 1'b1)
      && in_cnt_q == (needs_in ? k_q : '0)
      && (!needs_in || in_last == (in_cnt_q == row_in_beats - 1'b1)))
  // The row's entry is formed from the row as queued.
  `SGPU_ASSERT(RowEntry, wf_valid |-> wf_head.span == 33'(wf_head.lane) + 33'(wf_head.len)
      && wf_head.lane_hi == lane_t'(32'(wf_head.lane) + wf_head.len - 32'd1)
      && wf_head.first_last == (wf_head.span <= 33'(BusBytes))
      && wf_head.first_in_last == (wf_head.len <= 32'(BusBytes)))
  // The kept burst compares are the compares (a new row's come from the plan FIFO, the next
  // burst's from this one's choice).
  `SGPU_ASSERT(PlanComparesKept, pl_active_q |->
      pl_l_gt_b_q == (pl_left_q > BurstB) && pl_l_gt_r_q == (pl_left_q > pl_room)
      && pl_l_lt_r_q == (pl_left_q < pl_room) && pl_b_gt_r_q == (BurstB > pl_room)
      && pl_b_lt_r_q == (BurstB < pl_room))
  // The skid holds a beat only while W waits.
  `SGPU_ASSERT(SkidBehindW, sk_valid_q |-> wvalid_q)
  // The kept page compare is the compare (tr_vpn_q and pl_addr_q are loaded only where it is).
  `SGPU_ASSERT(SamePageIsCompare, pl_active_q |-> pl_same_q == (tr_vpn_q == pl_addr_q[63:PageShift]))
  // The parallel choice is the minimum taken in series, and what follows from it.
  beats_t pl_burst_min;
  always_comb begin
    pl_burst_min = pl_left_q;
    if (pl_burst_min > BurstB) pl_burst_min = BurstB;
    if (pl_burst_min > pl_room) pl_burst_min = pl_room;
  end
  `SGPU_ASSERT(BurstIsMin, pl_active_q |-> $onehot({pl_sel_l, pl_sel_b, pl_sel_r})
      && pl_burst == pl_burst_min
      && (!pl_goes_on || pl_next == pl_addr_q + sgpu_pkg::addr_t'({pl_burst_min, lane_t'(0)}))
      && pl_rest == pl_left_q - pl_burst_min
      && pl_awlen == 8'(pl_burst_min - 1'b1)
      && pl_goes_on == (pl_left_q != pl_burst_min)
      && pl_same_page == (pl_burst_min != pl_room))
  `SGPU_ASSERT(BurstInPage, pl_issue |-> (32'(pl_addr_q[PageShift-1:0])
                                          + 32'({pl_burst, lane_t'(0)}) <= sgpu_pkg::PageBytes))
  `SGPU_ASSERT(XlateReqHeld, xlate_req_valid_o && !xlate_req_ready_i
                             |=> xlate_req_valid_o && $stable(xlate_req_o))
  `SGPU_ASSERT(OneXlateInFlight, xlate_rsp_valid_i |-> tr_pend_q)
  `SGPU_ASSERT(CreditNeverNegative, (produce && start_burst) |-> aw_credit_q != '0)

endmodule

`default_nettype wire
