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

  logic    pf_in_ready, pf_valid, pf_pop;
  wr_row_t pf_head;
  logic    wf_in_ready, wf_valid, wf_pop;
  wr_row_t wf_head;

  assign row_ready_o = pf_in_ready && wf_in_ready && !flush_i;

  sgpu_fifo #(.Width($bits(wr_row_t)), .Depth(RowDepth)) u_plan_fifo (
    .clk_i, .rst_ni, .clear_i(flush_i),
    .in_valid_i (row_valid_i && row_ready_o), .in_ready_o(pf_in_ready), .in_data_i(row_i),
    .out_valid_o(pf_valid), .out_ready_i(pf_pop), .out_data_o(pf_head), .count_o()
  );

  sgpu_fifo #(.Width($bits(wr_row_t)), .Depth(RowDepth + 1)) u_wrow_fifo (
    .clk_i, .rst_ni, .clear_i(flush_i),
    .in_valid_i (row_valid_i && row_ready_o), .in_ready_o(wf_in_ready), .in_data_i(row_i),
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

  assign pl_room  = beats_t'((sgpu_pkg::PageBytes - 32'(pl_addr_q[PageShift-1:0])) >> LaneBits);

  // The burst is min(beats left, BurstBeats, the page's room). Each of the three is compared
  // with the others in parallel and the choice selects, one-hot, among the values each would
  // give, all formed from registers: the next address (for the room: the next page's start),
  // the beats left after it, AWLEN, whether the row goes on and whether the page does. Taking
  // the minimum first (two compares and multiplexers in series) and adding after it put four
  // carry chains in series in front of the planner's registers (timing pass 6b, docs/fpga.md;
  // asserted equal to that: BurstIsMin).
  localparam beats_t BurstB = beats_t'(BurstBeats);
  logic            pl_l_gt_b, pl_l_gt_r, pl_l_lt_r, pl_b_gt_r, pl_b_lt_r;
  logic            pl_sel_l, pl_sel_b, pl_sel_r;
  sgpu_pkg::addr_t pl_next_l, pl_next_b, pl_next_r, pl_next;
  beats_t          pl_rest_b, pl_rest_r, pl_rest;
  logic [7:0]      pl_len_l, pl_len_b, pl_len_r, pl_awlen;
  logic            pl_goes_on, pl_same_page;

  assign pl_l_gt_b = pl_left_q > BurstB;
  assign pl_l_gt_r = pl_left_q > pl_room;
  assign pl_l_lt_r = pl_left_q < pl_room;
  assign pl_b_gt_r = BurstB > pl_room;
  assign pl_b_lt_r = BurstB < pl_room;
  // The first rule that clamps wins, as in min(min(left, BurstBeats), room).
  assign pl_sel_l  = !pl_l_gt_b && !pl_l_gt_r;
  assign pl_sel_b  = pl_l_gt_b && !pl_b_gt_r;
  assign pl_sel_r  = (!pl_l_gt_b && pl_l_gt_r) || (pl_l_gt_b && pl_b_gt_r);

  assign pl_next_l = pl_addr_q + sgpu_pkg::addr_t'({pl_left_q, lane_t'(0)});
  assign pl_next_b = pl_addr_q + sgpu_pkg::addr_t'({BurstB, lane_t'(0)});
  assign pl_next_r = {pl_addr_q[63:PageShift] + 1'b1, {PageShift{1'b0}}};
  assign pl_rest_b = pl_left_q - BurstB;
  assign pl_rest_r = pl_left_q - pl_room;
  assign pl_len_l  = 8'(pl_left_q - 1'b1);
  assign pl_len_b  = 8'(BurstB - 1'b1);
  assign pl_len_r  = 8'(pl_room - 1'b1);

  assign pl_burst     = ({$bits(beats_t){pl_sel_l}} & pl_left_q) | ({$bits(beats_t){pl_sel_b}} & BurstB)
                        | ({$bits(beats_t){pl_sel_r}} & pl_room);
  assign pl_next      = ({64{pl_sel_l}} & pl_next_l) | ({64{pl_sel_b}} & pl_next_b)
                        | ({64{pl_sel_r}} & pl_next_r);
  assign pl_rest      = ({$bits(beats_t){pl_sel_b}} & pl_rest_b) | ({$bits(beats_t){pl_sel_r}} & pl_rest_r);
  assign pl_awlen     = ({8{pl_sel_l}} & pl_len_l) | ({8{pl_sel_b}} & pl_len_b) | ({8{pl_sel_r}} & pl_len_r);
  // The row goes on unless the burst is all of it; the burst stays in its page unless it is all
  // of the page's room (a tie with the row's or BurstBeats' count included).
  assign pl_goes_on   = !pl_sel_l;
  assign pl_same_page = (pl_sel_l && pl_l_lt_r) || (pl_sel_b && pl_b_lt_r);
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
    if (pf_pop) begin
      pl_active_d = 1'b1;
      pl_addr_d   = {pf_head.addr[63:LaneBits], lane_t'(0)};
      pl_left_d   = out_beats(pf_head);
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

  logic                   w_free, burst_ok, start_burst, needs_in, produce, row_last;
  logic [8:0]             burst_beats;               // beats of the burst this beat belongs to
  lane_t                  lane_d, lane_hi;
  beats_t                 row_out_beats, row_in_beats;
  logic [DataWidth-1:0]   data_in, data_out;
  logic [BusBytes-1:0]    strb_out;

  assign w_free        = !wvalid_q || axi_wr_rsp_i.w_ready;
  assign start_burst   = (burst_left_q == '0);
  assign burst_ok      = !start_burst || (wd_valid && aw_credit_q != '0);
  assign lane_d        = wf_head.addr[LaneBits-1:0];
  assign lane_hi       = lane_t'(32'(lane_d) + wf_head.len - 32'd1);
  assign row_out_beats = out_beats(wf_head);
  assign row_in_beats  = in_beats(wf_head.len);

  // The row's beat counts compared without forming them: the head comes from the row FIFO's
  // LUT-RAM, and an adder there (the counts are rounded-up divisions) in series with the
  // compares put two carry chains in front of the input's ready and every W register (timing
  // pass 6b, docs/fpga.md). With B bus bytes, k < ceil(len / B) is k * B < len, and (k being at
  // most the row's last output beat) k == ceil((lane + len) / B) - 1 is (k + 1) * B - lane >=
  // len, where (k + 1) * B - lane is {k, B - lane} for lane > 0 (no carry) and {k + 1, 0} for
  // lane 0; likewise the input count's last beat. (Asserted equal: BeatCompares.)
  localparam int unsigned CmpWidth = BeatsWidth + LaneBits + 1;
  typedef logic [CmpWidth-1:0] cmp_t;
  cmp_t k_bytes, k_end, in_cnt_end;
  assign k_bytes    = cmp_t'({k_q, lane_t'(0)});
  assign k_end      = (lane_d == '0) ? cmp_t'({k_q + 1'b1, lane_t'(0)})
                                     : cmp_t'({k_q, lane_t'(-lane_d)});
  assign in_cnt_end = cmp_t'({in_cnt_q + 1'b1, lane_t'(0)});
  assign needs_in   = (k_bytes < cmp_t'(wf_head.len));
  assign row_last   = (k_end >= cmp_t'(wf_head.len));
  assign in_ready_o    = !flush_i && w_free && burst_ok && wf_valid && needs_in;
  assign produce       = w_free && burst_ok &&
                         (flush_i || (wf_valid && (!needs_in || in_valid_i)));

  assign burst_beats = start_burst ? 9'(wd_head) + 9'd1 : burst_left_q;
  assign data_in = needs_in ? in_data_i : '0;
  always_comb begin
    if (lane_d == '0) begin
      data_out = data_in;
    end else begin
      data_out = (data_in << {lane_d, 3'b000}) | (prev_q >> {lane_t'(BusBytes) - lane_d, 3'b000});
    end
    for (int unsigned j = 0; j < BusBytes; j++) begin
      strb_out[j] = !((k_q == '0) && (lane_t'(j) < lane_d))
                    && !(row_last && (lane_t'(j) > lane_hi));
    end
  end

  always_comb begin
    aw_credit_d  = aw_credit_q + CreditWidth'(axi_wr_req_o.aw_valid && axi_wr_rsp_i.aw_ready);
    burst_left_d = burst_left_q;
    k_d          = k_q;
    in_cnt_d     = in_cnt_q;
    prev_d       = prev_q;
    wvalid_d     = wvalid_q && !axi_wr_rsp_i.w_ready;
    wlast_d      = wlast_q;
    wdata_d      = wdata_q;
    wstrb_d      = wstrb_q;
    wd_pop       = 1'b0;
    wf_pop       = 1'b0;
    in_row_done_o = 1'b0;
    if (produce) begin
      if (start_burst) begin
        wd_pop      = 1'b1;
        aw_credit_d = aw_credit_d - 1'b1;
      end
      burst_left_d = burst_beats - 9'd1;
      wvalid_d     = 1'b1;
      wlast_d      = (burst_beats == 9'd1);
      if (flush_i) begin
        wdata_d = '0;
        wstrb_d = '0;
      end else begin
        wdata_d = data_out;
        wstrb_d = strb_out;
        if (needs_in) begin
          prev_d = in_data_i;
          if (in_cnt_end >= cmp_t'(wf_head.len)) begin
            in_cnt_d      = '0;
            in_row_done_o = 1'b1;
          end else begin
            in_cnt_d = in_cnt_q + 1'b1;
          end
        end
        if (row_last) begin
          wf_pop = 1'b1;
          k_d    = '0;
          prev_d = '0;
        end else begin
          k_d = k_q + 1'b1;
        end
      end
    end
    if (flush_i) begin
      k_d      = '0;
      in_cnt_d = '0;
      prev_d   = '0;
    end
  end

  assign in_row_bytes_o = 32'({in_cnt_q, lane_t'(0)});

  assign axi_wr_req_o.w_valid = wvalid_q;
  assign axi_wr_req_o.w.data  = wdata_q;
  assign axi_wr_req_o.w.strb  = wstrb_q;
  assign axi_wr_req_o.w.last  = wlast_q;

  assign idle_o = !pf_valid && !wf_valid && !pl_active_q && !awvalid_q && !wd_valid && !rsp_valid &&
                  (burst_left_q == '0) && !wvalid_q && !tr_req_q && !tr_pend_q;

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
      wvalid_q     <= 1'b0;
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
      wvalid_q     <= wvalid_d;
    end
  end

  // Payload registers: read only while the valid/state bits above say they hold something.
  always_ff @(posedge clk_i) begin
    pl_addr_q <= pl_addr_d;
    pl_first_q <= pl_first_d;
    pl_same_q  <= pl_same_d;
    pl_row_q  <= pl_row_d;
    tr_vpn_q  <= tr_vpn_d;
    tr_ppn_q  <= tr_ppn_d;
    pl_left_q <= pl_left_d;
    awaddr_q  <= awaddr_d;
    awlen_q   <= awlen_d;
    prev_q    <= prev_d;
    wlast_q   <= wlast_d;
    wdata_q   <= wdata_d;
    wstrb_q   <= wstrb_d;
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
  // The beat compares are the compares of the beat counts, for the row at the head (the output
  // beat never passes the row's last; input beats are taken only while needed).
  `SGPU_ASSERT(BeatCompares, wf_valid && !flush_i |->
      k_q < row_out_beats && needs_in == (k_q < row_in_beats)
      && row_last == (k_q == row_out_beats - 1'b1)
      && (!needs_in || in_cnt_q < row_in_beats)
      && (!needs_in || (in_cnt_end >= cmp_t'(wf_head.len)) == (in_cnt_q == row_in_beats - 1'b1)))
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
      && pl_next == pl_addr_q + sgpu_pkg::addr_t'({pl_burst_min, lane_t'(0)})
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
