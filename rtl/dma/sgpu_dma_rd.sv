// DMA fetch engine: reads [addr, addr + len) through an AXI4 read master and streams the bytes,
// packed and in request order, to one consumer; one status per request.
//
// Every reader of memory uses it: ring fetch, DMA-buffer fetch, the copy engine's source. The
// request/data/status contract is in sgpu_dma_pkg.sv; docs/dma.md describes the design.
//
// Pipeline (one item per cycle in every stage):
//
//   req ──▶ u_req_fifo ──▶ page walker ──▶ xlate_req ═▶ translator ═▶ xlate_rsp ──▶ u_seg_fifo
//    └────▶ u_tag_fifo (tags of requests without status)                                 │
//                                                                                        ▼
//   data ◀── u_out_fifo ◀── realigner ◀── u_rbuf ◀══ R    AR ◀══ burst issuer ──▶ u_desc_fifo
//   status ◀── u_status_fifo ◀──┘          (beats)                (credits, outstanding)   │
//                                 ▲──────────────────────────── burst descriptors ◀───────┘
//
// - The page walker cuts each request into page segments (never crossing 4 KiB) and asks the
//   translation port for each; up to XlateDepth translations are in flight, so pages are
//   translated ahead of the reads that need them.
// - The burst issuer cuts translated segments into bus-aligned INCR bursts of at most
//   MaxBurstBeats beats and issues one per cycle while fewer than MaxOutstanding bursts are in
//   flight and the data buffer has room for all of the burst's beats (credits). rready is
//   therefore always high: the buffer never overflows and the bus is never stalled by us.
// - The realigner shifts beats so the first requested byte lands in lane 0, masks bytes
//   outside the request, and turns errors into statuses. Bursts of one request are contiguous
//   in bus address, so the shift is constant per request.
// - On a bus error the realigner tells the issuer to stop issuing that request; bursts already
//   issued are drained and dropped.
// - Abort: stop issuing, let every issued read and translation finish (their data is
//   dropped), then report DmaAborted for each request without a status, in order.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_dma_rd #(
  /// AXI data width in bits: a power of two, 64..512.
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// ID of every read; one ID, so responses return in order.
  parameter logic [IdWidth-1:0] AxiId = '0,
  /// Longest burst in beats, 1..256 (AXI4 INCR). Bursts never cross 4 KiB either way.
  parameter int unsigned MaxBurstBeats = 256,
  /// Most reads (bursts) in flight on the bus.
  parameter int unsigned MaxOutstanding = 16,
  /// Data buffer in beats. A read is issued only when the buffer has room for all of its
  /// beats (completion-credit rule), so BufferBeats bounds the bytes in flight: it should
  /// cover read latency x bus bandwidth plus one burst.
  parameter int unsigned BufferBeats = sgpu_dma_pkg::DefaultBufferBeats,
  /// Most requests accepted and not yet reported (queued, in flight, or draining).
  parameter int unsigned MaxRequests = 32,
  /// Hold the request FIFO's head in flip-flops, so the page walker's decisions start from them
  /// (not from the LUT-RAM's read). Off where the requester's payload arrives late (the CP's
  /// dma_req_o): the request then goes only into LUT-RAM, with no register behind it. The same
  /// cycles either way.
  parameter bit ReqRegOut = 1'b1,
  /// AXI4 read request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_rd_req_t = sgpu_axi_pkg::axi_rd_req_t,
  parameter type axi_rd_rsp_t = sgpu_axi_pkg::axi_rd_rsp_t
) (
  /// Clock.
  input  wire logic                            clk_i,
  /// Asynchronous reset, active low. Resets the engine without draining the bus: use
  /// abort_i to stop an engine whose AXI subordinate is not reset with it.
  input  wire logic                            rst_ni,
  /// Abort (level or pulse): stop issuing, drain every issued read and translation, drop
  /// data, report DmaAborted for every request without a status, then accept requests again
  /// (once abort_i is low).
  input  wire logic                            abort_i,
  /// Requests queued or active, reads or translations in flight, or status not yet taken.
  output      logic                            busy_o,

  /// Request channel (valid/ready); ready depends only on internal state.
  input  wire logic                            req_valid_i,
  /// The engine accepts a request.
  output      logic                            req_ready_o,
  /// {addr, len, tag}; len >= 1 (len 0 completes with DmaOk and no data).
  input  wire sgpu_dma_pkg::dma_req_t          req_i,

  /// Data stream to the consumer (valid/ready), packed and realigned.
  output      logic                            data_valid_o,
  /// The consumer takes a beat.
  input  wire logic                            data_ready_i,
  /// Data; bytes whose keep bit is low are zero.
  output      logic [DataWidth-1:0]            data_o,
  /// Byte enables: all set except on a request's last beat (low bytes set).
  output      logic [DataWidth/8-1:0]          data_keep_o,
  /// Last beat of a request that completed without error.
  output      logic                            data_last_o,

  /// Status channel (valid/ready): one per request, in request order.
  output      logic                            status_valid_o,
  /// The consumer takes a status.
  input  wire logic                            status_ready_i,
  /// {tag, err}.
  output      sgpu_dma_pkg::dma_status_t       status_o,

  /// Translation request (valid/ready), before the first read into each page.
  output      logic                            xlate_req_valid_o,
  /// The translator accepts the request.
  input  wire logic                            xlate_req_ready_i,
  /// The GPU page to translate (write = 0).
  output      sgpu_dma_pkg::xlate_req_t        xlate_req_o,
  /// The tag of the request the page belongs to (with xlate_req_o): a client that gives each
  /// request its own privilege or fault reporting encodes them in the tag.
  output      sgpu_dma_pkg::tag_t              xlate_req_tag_o,
  /// Translation response for the oldest outstanding request (valid/ready).
  input  wire logic                            xlate_rsp_valid_i,
  /// The engine takes the response; never depends on xlate_rsp_valid_i.
  output      logic                            xlate_rsp_ready_o,
  /// {bus page, fault}.
  input  wire sgpu_dma_pkg::xlate_rsp_t        xlate_rsp_i,

  /// AXI4 read master (ar, r).
  output      axi_rd_req_t                     axi_rd_req_o,
  input  wire axi_rd_rsp_t                     axi_rd_rsp_i
);

  import sgpu_dma_pkg::*;

  ////////////////
  // Parameters //
  ////////////////

  localparam int unsigned BusBytes  = DataWidth / 8;
  localparam int unsigned LaneBits  = $clog2(BusBytes);
  localparam int unsigned PageShift = sgpu_pkg::PageShift;
  localparam int unsigned AddrWidth = sgpu_pkg::AddrWidth;
  /// Beats of one page.
  localparam int unsigned PageBeats = sgpu_pkg::PageBytes / BusBytes;
  /// Longest burst actually issued (a burst stays inside one page).
  localparam int unsigned BurstBeats = (MaxBurstBeats < PageBeats) ? MaxBurstBeats : PageBeats;

  localparam int unsigned ReqDepth    = 2;
  localparam int unsigned XlateDepth  = 4;
  localparam int unsigned SegDepth    = 4;
  localparam int unsigned DescDepth   = 2 * MaxOutstanding;
  localparam int unsigned OutDepth    = 2;
  localparam int unsigned StatusDepth = 4;

  localparam int unsigned SeqWidth      = $clog2(MaxRequests) + 1;
  localparam int unsigned SegBytesWidth = PageShift + 1;          // 0..4096
  localparam int unsigned SegBeatsWidth = PageShift - LaneBits + 2;
  localparam int unsigned CreditWidth   = $clog2(BufferBeats + 1);
  localparam int unsigned OutstWidth    = $clog2(MaxOutstanding + 1);
  localparam int unsigned StatCntWidth  = $clog2(StatusDepth + 1);

  ///////////
  // Types //
  ///////////

  /// Sequence number of an accepted request; names it between the issuer and the realigner.
  typedef logic [SeqWidth-1:0] seq_t;
  typedef logic [LaneBits-1:0] lane_t;

  typedef struct packed {
    sgpu_pkg::addr_t addr;
    len_t            len;
    tag_t            tag;
    seq_t            seq;
    logic            one_seg;  ///< ReqRegOut: the request ends in its first page (else unused)
  } queued_req_t;

  /// The part of a request inside one page.
  typedef struct packed {
    logic [PageShift-1:0]     offset;  ///< first byte within the page
    logic [SegBytesWidth-1:0] bytes;   ///< 1..4096 (0 only for a zero-length request)
    logic                     first;   ///< first segment of its request
    logic                     last;    ///< last segment of its request
    seq_t                     seq;
  } seg_t;

  typedef struct packed {
    sgpu_pkg::pfn_t           ppn;
    logic                     fault;
    logic                     empty;        ///< seg.bytes == 0 (a zero-length request)
    logic                     ends;         ///< fault || empty: the request ends here unread
    logic [SegBeatsWidth-1:0] beats;        ///< beats the segment covers (first to last byte)
    logic                     beats_final;  ///< beats <= BurstBeats: one burst reads it all
    lane_t                    hi_lane;      ///< lane of the segment's last byte
    seg_t                     seg;
  } xseg_t;

  /// What the realigner needs to know about each burst, in issue order.
  typedef struct packed {
    desc_kind_e kind;
    dma_err_e   err;      ///< DescEnd: DmaXlateFault, or DmaOk (cancelled / empty request)
    logic [7:0] len;      ///< beats - 1
    logic       len_zero; ///< len == 0 (a one-beat burst)
    logic       first;    ///< first burst of its request
    logic       last;     ///< last burst of its request
    lane_t      lo_lane;  ///< lane of the first requested byte (valid with first)
    logic       lo_zero;  ///< lo_lane == 0
    lane_t      hi_lane;  ///< lane of the last requested byte (valid with last)
    seq_t       seq;
  } desc_t;

  typedef struct packed {
    logic [1:0]           resp;
    logic                 last;
    logic [DataWidth-1:0] data;
  } rbeat_t;

  /// One entry towards the consumer: a data beat, a status, or a last beat and its status.
  typedef struct packed {
    logic                 has_data;
    logic [DataWidth-1:0] data;
    logic [BusBytes-1:0]  keep;
    logic                 last;
    logic                 has_status;
    dma_err_e             err;
  } out_t;

  /////////////////////
  // Abort and reset //
  /////////////////////

  logic abort_q, abort_d;
  logic stop;       // no new translations or reads this cycle
  logic drained;    // nothing of ours is in flight on the translation port or the bus

  assign stop = abort_i || abort_q;

  //////////////
  // Requests //
  //////////////

  logic        rq_in_ready, rq_valid, rq_pop;
  queued_req_t rq_head;
  logic        tag_in_ready, tag_valid, tag_pop;
  tag_t        tag_head;
  logic        req_hs;
  seq_t        seq_q, seq_d;

  // The first segment is the last: len <= PageBytes - offset, i.e. len + offset < PageBytes + 1
  // (one adder and a compare with a constant, no subtraction in front of a compare; compares
  // here are strict: Yosys forms a <= b as a < b or a == b, and the equality is a tree of LUTs
  // beside the carry chain), and the length's high bits are zero. Their zero test is on the
  // carry chain (adding all ones carries out iff they are not zero): a chain, which synthesis
  // does not stretch into a row of LUTs where the path has slack, not a tree of LUTs.
  localparam int unsigned LenHiWidth = LenWidth - PageShift - 2;
  function automatic logic len_small(logic [LenHiWidth-1:0] len_hi);  // len < 4 * PageBytes
    logic [LenHiWidth:0] hi_sum;
    hi_sum = {1'b0, len_hi} + {1'b0, {LenHiWidth{1'b1}}};
    return !hi_sum[LenHiWidth];
  endfunction
  function automatic logic first_seg_last(logic [PageShift-1:0] offset, len_t len);
    return len_small(len[LenWidth-1:PageShift+2]) && !len[PageShift+1] &&
           ((PageShift + 2)'(len[PageShift:0]) + (PageShift + 2)'(offset)
            < (PageShift + 2)'(sgpu_pkg::PageBytes + 1));
  endfunction

  // With the head in a register, whether the request's first segment is its last is computed
  // on the way in (from the requester's registers) and queued with it: the walk's pop, which
  // selects the head register's next value, then starts from a flip-flop, not from the adder
  // and compare behind the head. Without ReqRegOut the requester's payload is late, so it is
  // computed behind the LUT-RAM's read as before.
  logic rq_in_one_seg;
  assign rq_in_one_seg = ReqRegOut ? first_seg_last(req_i.addr[PageShift-1:0], req_i.len) : 1'b0;

  assign req_ready_o = !abort_q && rq_in_ready && tag_in_ready;
  assign req_hs      = req_valid_i && req_ready_o;

  sgpu_fifo #(
    .Width($bits(queued_req_t)),
    .Depth(ReqDepth),
    .RegOut(ReqRegOut)
  ) u_req_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (req_hs),
    .in_ready_o (rq_in_ready),
    .in_data_i  ({req_i.addr, req_i.len, req_i.tag, seq_q, rq_in_one_seg}),
    .out_valid_o(rq_valid),
    .out_ready_i(rq_pop),
    .out_data_o (rq_head),
    .count_o    ()
  );

  // Tags of every request accepted and not yet reported: statuses take their tag from here,
  // and abort reports whatever is left.
  sgpu_fifo #(
    .Width(TagWidth),
    .Depth(MaxRequests)
  ) u_tag_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (1'b0),
    .in_valid_i (req_hs),
    .in_ready_o (tag_in_ready),
    .in_data_i  (req_i.tag),
    .out_valid_o(tag_valid),
    .out_ready_i(tag_pop),
    .out_data_o (tag_head),
    .count_o    ()
  );

  assign seq_d = req_hs ? seq_q + 1'b1 : seq_q;

  /////////////////
  // Page walker //
  /////////////////

  // A request's first segment is cut from the request FIFO's head; the rest of it from the
  // walk registers. After the first segment every segment starts on a page boundary, so the walk
  // keeps only the next page and the bytes left, and "the next segment is the last" is
  // registered with them (wk_last_q = wk_left_q <= PageBytes). Every next walk value is formed
  // in parallel with the segment's own (none from the segment's byte count), so the FIFO head
  // passes through one short chain (the page room and the last-segment compare) into the
  // segment, the pop and the walk registers, and the handshake (wk_go) only selects at the end.
  logic                     wk_active_q, wk_active_d;  // inside a request: its rest is below
  sgpu_pkg::pfn_t           wk_vpn_q, wk_vpn_d;        // page of the next segment (offset 0)
  len_t                     wk_left_q, wk_left_d;      // bytes left (>= 1)
  logic                     wk_last_q, wk_last_d;      // wk_left_q <= PageBytes
  logic [PageShift-1:0]     hd_offset;
  logic [SegBytesWidth-1:0] hd_room;
  logic                     hd_len_small;              // len < 4 * PageBytes
  logic                     hd_last, hd_next_last;
  len_t                     hd_next_left;
  sgpu_pkg::pfn_t           wk_cur_vpn;
  logic                     wk_seg_last, wk_go;
  seg_t                     wk_seg;
  logic                     xq_in_ready, xq_valid;
  logic                     xp_in_ready, xp_valid;
  seg_t                     xp_head;

  // The head request's first segment: up to the end of its page.
  assign hd_offset    = rq_head.addr[PageShift-1:0];
  assign hd_room      = SegBytesWidth'(sgpu_pkg::PageBytes) - SegBytesWidth'(hd_offset);
  // The compares split: the high bits of the length only need to be zero (no carry chain
  // through them behind the subtraction), the low bits are compared with the room.
  // The zero test of the length's high bits is on the carry chain (adding all ones carries out
  // iff they are not zero): a chain, which synthesis does not stretch into a row of LUTs where
  // the path has slack, not a tree of LUTs.
  // (len_small and first_seg_last above.)
  logic hd_last_calc;
  assign hd_len_small = len_small(rq_head.len[LenWidth-1:PageShift+2]);
  assign hd_last_calc = first_seg_last(hd_offset, rq_head.len);
  assign hd_last      = ReqRegOut ? rq_head.one_seg : hd_last_calc;
  // What the walk continues with after it (used only when it is not the last): len - room, as
  // one adder (room = PageBytes - offset, and -PageBytes + offset is {ones, offset}); the
  // segment after it is the last if len - room <= PageBytes, i.e. len + offset < 2 * PageBytes + 1.
  assign hd_next_left = rq_head.len + {{(LenWidth - PageShift){1'b1}}, hd_offset};
  assign hd_next_last = hd_len_small &&
                        ((PageShift + 3)'(rq_head.len[PageShift+1:0]) + (PageShift + 3)'(hd_offset)
                         < (PageShift + 3)'(2 * sgpu_pkg::PageBytes + 1));

  assign wk_cur_vpn  = wk_active_q ? wk_vpn_q : rq_head.addr[AddrWidth-1:PageShift];
  assign wk_seg_last = wk_active_q ? wk_last_q : hd_last;
  // The translation request goes into a two-entry FIFO whose ready is a register, so the
  // translator's ready (late: behind the arbiter's grant among the other clients' valids) is
  // not in the walk's go, the request FIFO's pop nor the walk registers.
  assign wk_go       = rq_valid && !stop && xp_in_ready && xq_in_ready;
  assign rq_pop      = wk_go && wk_seg_last;

  always_comb begin
    if (wk_active_q) begin
      // A whole page, or what is left of the request.
      wk_seg = '{
        offset: '0,
        bytes:  wk_last_q ? wk_left_q[SegBytesWidth-1:0] : SegBytesWidth'(sgpu_pkg::PageBytes),
        first:  1'b0,
        last:   wk_last_q,
        seq:    rq_head.seq
      };
    end else begin
      wk_seg = '{
        offset: hd_offset,
        bytes:  hd_last ? rq_head.len[SegBytesWidth-1:0] : hd_room,
        first:  1'b1,
        last:   hd_last,
        seq:    rq_head.seq
      };
    end
  end

  always_comb begin
    wk_active_d  = wk_active_q;
    wk_vpn_d     = wk_vpn_q;
    wk_left_d    = wk_left_q;
    wk_last_d    = wk_last_q;
    if (wk_go) begin
      wk_active_d  = !wk_seg_last;
      // The next segment starts on the next page (it matters only if this one is not the last).
      wk_vpn_d     = wk_cur_vpn + 1'b1;
      wk_left_d    = wk_active_q ? wk_left_q - len_t'(sgpu_pkg::PageBytes) : hd_next_left;
      wk_last_d    = wk_active_q ? wk_left_q <= len_t'(2 * sgpu_pkg::PageBytes) : hd_next_last;
    end
    // A queued request that is aborted is dropped with the request FIFO.
    if (abort_q) wk_active_d = 1'b0;
  end

  // A translation request, once raised, is held until accepted (even during abort: the FIFO is
  // not cleared). The request leaves the cycle after the walk's go, as from the single request
  // register this replaces; while the translator stalls, the walk may run one segment further
  // ahead (the FIFO's second entry), within XlateDepth. The head is the LUT-RAM's read, not a
  // register: a head register would load on the translator's (late) ready.
  sgpu_pkg::pfn_t xq_vpn;
  tag_t           xq_tag;

  sgpu_fifo #(
    .Width($bits(sgpu_pkg::pfn_t) + TagWidth),
    .Depth(2),
    .RegOut(1'b0)
  ) u_xreq_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (1'b0),
    .in_valid_i (wk_go),
    .in_ready_o (xq_in_ready),
    .in_data_i  ({wk_cur_vpn, rq_head.tag}),
    .out_valid_o(xq_valid),
    .out_ready_i(xlate_req_ready_i),
    .out_data_o ({xq_vpn, xq_tag}),
    .count_o    ()
  );

  assign xlate_req_valid_o = xq_valid;
  assign xlate_req_o       = '{vpn: xq_vpn, write: 1'b0};
  assign xlate_req_tag_o   = xq_tag;

  // Segments whose translation was requested and not yet answered, in order.
  sgpu_fifo #(
    .Width($bits(seg_t)),
    .Depth(XlateDepth),
    // The segment's beat count and "one burst" (on the way into the segment FIFO) start from
    // flip-flops, not from the LUT-RAM's read.
    .RegOut(1'b1)
  ) u_xlate_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (1'b0),
    .in_valid_i (wk_go),
    .in_ready_o (xp_in_ready),
    .in_data_i  (wk_seg),
    .out_valid_o(xp_valid),
    .out_ready_i(xlate_rsp_valid_i && xlate_rsp_ready_o),
    .out_data_o (xp_head),
    .count_o    ()
  );

  logic  sf_in_ready, sf_valid, sf_pop;
  xseg_t sf_head, sf_in, sf_head_pop, sf_head_stay;

  // The segment's beat count, whether one burst covers it, whether it ends the request unread
  // and the lane of its last byte are computed on the way into the segment FIFO (from the
  // translation FIFO's head), not from the segment FIFO's head: the issuer's decision (credits,
  // end, pop) then starts from registered values.
  logic [SegBeatsWidth-1:0] xp_beats;
  logic                     xp_empty;
  assign xp_beats = SegBeatsWidth'(
      ((PageShift + 2)'(xp_head.offset[LaneBits-1:0]) + (PageShift + 2)'(xp_head.bytes) +
       (PageShift + 2)'(BusBytes - 1)) >> LaneBits);
  assign xp_empty = (xp_head.bytes == '0);
  // Only the lane of the last byte is needed, and it depends only on the low bits.
  assign sf_in = '{ppn:         xlate_rsp_i.ppn,
                   fault:       xlate_rsp_i.fault,
                   empty:       xp_empty,
                   ends:        xlate_rsp_i.fault || xp_empty,
                   beats:       xp_beats,
                   beats_final: xp_beats <= SegBeatsWidth'(BurstBeats),
                   hi_lane:     xp_head.offset[LaneBits-1:0] + xp_head.bytes[LaneBits-1:0] -
                                1'b1,
                   seg:         xp_head};

  // During abort every response is taken and dropped.
  assign xlate_rsp_ready_o = abort_q || sf_in_ready;

  sgpu_fifo #(
    .Width($bits(xseg_t)),
    .Depth(SegDepth),
    // The issuer's decision (the credit check, the burst's length, the pop) starts from the
    // head: from flip-flops, not the LUT-RAM's read.
    .RegOut(1'b1)
  ) u_seg_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (xlate_rsp_valid_i && xlate_rsp_ready_o && !abort_q),
    .in_ready_o (sf_in_ready),
    .in_data_i  (sf_in),
    .out_valid_o(sf_valid),
    .out_ready_i(sf_pop),
    .out_data_o (sf_head),
    .count_o    (),
    .head_pop_o (sf_head_pop),
    .head_stay_o(sf_head_stay)
  );

  // Whether the head segment belongs to the request the realigner cancels, registered beside
  // the head: both sequence numbers' next values are known a cycle ahead (the head's for a pop
  // and without one, the realigner's from its registers), so the compare is formed before the
  // register and the pop only selects it. The issuer's end decision and the pop then start from
  // a flip-flop, not from a compare of two sequence numbers.
  logic sf_cancel_q, sf_cancel_d;  // cancel_seq == sf_head.seg.seq
  seq_t cancel_seq_next;
  assign sf_cancel_d = sf_pop ? (cancel_seq_next == sf_head_pop.seg.seq)
                              : (cancel_seq_next == sf_head_stay.seg.seq);
  // Not reset: read only while the head is valid, and loaded with the head every cycle.
  always_ff @(posedge clk_i) begin
    sf_cancel_q <= sf_cancel_d;
  end
  // Only the next heads' sequence numbers are compared.
  logic unused_sf_next;
  assign unused_sf_next = ^{sf_head_pop, sf_head_stay};

  //////////////////
  // Burst issuer //
  //////////////////

  logic                     is_started_q, is_started_d;  // inside the head segment
  sgpu_pkg::addr_t          is_addr_q, is_addr_d, is_cur_addr;
  logic [SegBeatsWidth-1:0] is_left_q, is_left_d, is_cur_left;
  logic                     is_left_final_q, is_left_final_d;  // is_left_q <= BurstBeats
  logic [SegBeatsWidth-1:0] is_burst_beats;
  logic                     is_burst_final;
  logic                     drop_rest_q, drop_rest_d;  // skip the rest of a request
  logic                     cancel_valid;              // realigner: this request failed
  seq_t                     cancel_seq;
  logic                     cancel_hit;
  logic                     is_issue, is_end;
  desc_t                    is_desc;
  logic                     desc_in_ready;
  logic [CreditWidth-1:0]   free_q, free_d;            // beats of the buffer not reserved
  logic [OutstWidth-1:0]    outst_q, outst_d;          // bursts in flight
  logic                     outst_zero_q, outst_zero_d;  // outst_q == 0
  logic                     credit_ok, credit_ok_final, credit_ok_full, outst_ok, ar_free;
  logic                     arvalid_q, arvalid_d;
  sgpu_pkg::addr_t          araddr_q, araddr_d;
  logic [7:0]               arlen_q, arlen_d;

  // Beats left of the head segment, and whether the next burst is its last: both from registers
  // (the segment FIFO's entry, or what the previous burst left), so no compare of the count
  // stands between the FIFO and the issue decision.
  assign is_cur_addr  = is_started_q ? is_addr_q :
                        {sf_head.ppn, sf_head.seg.offset[PageShift-1:LaneBits], lane_t'(0)};
  assign is_cur_left  = is_started_q ? is_left_q : sf_head.beats;
  assign is_burst_final = is_started_q ? is_left_final_q : sf_head.beats_final;
  assign is_burst_beats = is_burst_final ? is_cur_left : SegBeatsWidth'(BurstBeats);

  assign cancel_hit = cancel_valid && sf_cancel_q;
  // Room for the next burst, computed for both of its lengths in parallel with the choice. The
  // buffer's free beats are the register (not the reserved ones), so the check of a final burst
  // is one compare, no adder, behind the segment FIFO's head; the started segment's compare is
  // formed from registers alone and the head's is selected by is_started_q last.
  localparam int unsigned CmpWidth = (CreditWidth > SegBeatsWidth) ? CreditWidth : SegBeatsWidth;
  logic credit_ok_left, credit_ok_head;
  assign credit_ok_left  = !(CmpWidth'(free_q) < CmpWidth'(is_left_q));
  assign credit_ok_head  = !(CmpWidth'(free_q) < CmpWidth'(sf_head.beats));
  assign credit_ok_final = is_started_q ? credit_ok_left : credit_ok_head;
  assign credit_ok_full  = !(free_q < CreditWidth'(BurstBeats));
  assign credit_ok       = is_burst_final ? credit_ok_final : credit_ok_full;
  assign outst_ok   = outst_q < OutstWidth'(MaxOutstanding);
  assign ar_free    = !arvalid_q || axi_rd_rsp_i.ar_ready;

  // The issuer's decisions. The credit check (a compare on the carry chain behind the segment
  // FIFO's head and the free-beat register, then two selects) is the latest of their inputs, so
  // every decision is formed without it and it enters at the last AND: it is one LUT in front
  // of the segment FIFO's pop (whose head register it selects) and of the issue (the AR, the
  // issue registers and the counts). The same decisions as the priority of the cases: a
  // request that already ended drops its remaining segments; a cancelled, faulted or empty
  // segment ends its request unread; otherwise a burst is issued when the AR is free, the
  // credits and the outstanding count allow and the descriptor FIFO has room.
  logic is_go, is_drop, is_cut, is_issue_nc;
  assign is_go       = sf_valid && !stop;
  assign is_drop     = is_go && drop_rest_q;
  assign is_cut      = cancel_hit || sf_head.ends;
  assign is_end      = is_go && !drop_rest_q && is_cut && desc_in_ready;
  assign is_issue_nc = is_go && !drop_rest_q && !is_cut && ar_free && outst_ok && desc_in_ready;
  assign is_issue    = is_issue_nc && credit_ok;
  assign sf_pop      = is_drop || is_end || (is_issue_nc && is_burst_final && credit_ok);

  always_comb begin
    is_started_d = is_started_q;
    is_addr_d    = is_addr_q;
    is_left_d    = is_left_q;
    is_left_final_d = is_left_final_q;
    drop_rest_d  = drop_rest_q;
    // The descriptor's fields are formed whatever the decision (they matter only when it is
    // pushed): an end when the head ends its request here, with a translation fault unless it
    // is empty or cancelled; otherwise a read (whose err is DmaOk, unused).
    is_desc      = '{
      kind:     (cancel_hit || sf_head.ends) ? DescEnd : DescRead,
      err:      (sf_head.fault && !sf_head.empty && !cancel_hit) ? DmaXlateFault : DmaOk,
      len:      8'(is_burst_beats - 1'b1),
      len_zero: is_burst_beats == SegBeatsWidth'(1),
      first:    sf_head.seg.first && !is_started_q,
      last:     sf_head.seg.last && is_burst_final,
      lo_lane:  sf_head.seg.offset[LaneBits-1:0],
      lo_zero:  sf_head.seg.offset[LaneBits-1:0] == '0,
      hi_lane:  sf_head.hi_lane,
      seq:      sf_head.seg.seq
    };

    if (is_drop && sf_head.seg.last) drop_rest_d = 1'b0;
    if (is_end) begin
      // End the request here without reading this page.
      is_started_d = 1'b0;
      drop_rest_d  = !sf_head.seg.last;
    end
    if (is_issue) begin
      if (is_burst_final) begin
        is_started_d = 1'b0;
      end else begin
        is_started_d = 1'b1;
        is_addr_d    = is_cur_addr + AddrWidth'({is_burst_beats, lane_t'(0)});
        is_left_d    = is_cur_left - is_burst_beats;
        // is_left_d <= BurstBeats, without the subtraction in front of the compare.
        is_left_final_d = (SegBeatsWidth + 1)'(is_cur_left) <
                          (SegBeatsWidth + 1)'(2 * BurstBeats + 1);
      end
    end
    if (abort_q) begin
      is_started_d = 1'b0;
      drop_rest_d  = 1'b0;
    end
  end

  // AR register: loaded when a burst is issued, held until the handshake (even during abort).
  always_comb begin
    arvalid_d = arvalid_q && !axi_rd_rsp_i.ar_ready;
    araddr_d  = araddr_q;
    arlen_d   = arlen_q;
    if (is_issue) begin
      arvalid_d = 1'b1;
      araddr_d  = is_cur_addr;
      arlen_d   = is_desc.len;
    end
  end

  assign axi_rd_req_o.ar_valid = arvalid_q;
  assign axi_rd_req_o.ar.id    = AxiId;
  assign axi_rd_req_o.ar.addr  = araddr_q;
  assign axi_rd_req_o.ar.len   = arlen_q;
  assign axi_rd_req_o.ar.size  = 3'(LaneBits);
  assign axi_rd_req_o.ar.burst = sgpu_pkg::AxiBurstIncr;

  logic  desc_valid, desc_pop;
  desc_t desc_head;

  sgpu_fifo #(
    .Width($bits(desc_t)),
    .Depth(DescDepth),
    // The realigner's decisions (the burst's last beat, the pop of the buffer and of this FIFO,
    // the credits returned) start from the head: from flip-flops, not the LUT-RAM's read.
    .RegOut(1'b1)
  ) u_desc_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (is_issue || is_end),
    .in_ready_o (desc_in_ready),
    .in_data_i  (is_desc),
    .out_valid_o(desc_valid),
    .out_ready_i(desc_pop),
    .out_data_o (desc_head),
    .count_o    ()
  );

  /////////////////
  // Read buffer //
  /////////////////

  logic   r_hs, rb_valid, rb_pop;
  rbeat_t rb_head;

  // Space for every beat was reserved at issue, so read data is always accepted.
  assign axi_rd_req_o.r_ready = 1'b1;
  assign r_hs         = axi_rd_rsp_i.r_valid;

  sgpu_dma_rbuf #(
    .Width($bits(rbeat_t)),
    .Depth(BufferBeats)
  ) u_rbuf (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (r_hs && !abort_q),
    .in_ready_o (),
    .in_data_i  ({axi_rd_rsp_i.r.resp, axi_rd_rsp_i.r.last, axi_rd_rsp_i.r.data}),
    .out_valid_o(rb_valid),
    .out_ready_i(rb_pop),
    .out_data_o (rb_head)
  );

  // Every next value of each count is formed from registers while the decisions settle; the
  // buffer's pop (behind the realigner) and then the issue (latest: behind the abort input and
  // the credit check) only select one, the issue at the last multiplexer. Nothing is issued
  // during abort (stop), so the abort's clear is folded into the no-issue side.
  logic [CreditWidth-1:0] free_issue, free_issue_pop, free_idle;
  logic [OutstWidth-1:0]  outst_idle;
  logic                   r_last;
  assign free_issue     = free_q - CreditWidth'(is_burst_beats);
  assign free_issue_pop = free_q - CreditWidth'(is_burst_beats) + 1'b1;
  // During abort the buffer is being emptied: no beat is reserved.
  assign free_idle      = abort_q ? CreditWidth'(BufferBeats) : rb_pop ? free_q + 1'b1 : free_q;
  assign r_last         = r_hs && axi_rd_rsp_i.r.last;
  assign outst_idle     = r_last ? outst_q - 1'b1 : outst_q;

  always_comb begin
    free_d  = is_issue ? (rb_pop ? free_issue_pop : free_issue) : free_idle;
    outst_d = is_issue ? (r_last ? outst_q : outst_q + 1'b1) : outst_idle;
    outst_zero_d = is_issue ? (r_last && outst_zero_q)
                            : (r_last ? (outst_q == OutstWidth'(1)) : outst_zero_q);
  end

  ///////////////
  // Realigner //
  ///////////////

  logic  of_valid, of_pop;
  out_t  of_head;

  sgpu_dma_realign #(
    .DataWidth(DataWidth),
    .SeqWidth (SeqWidth),
    .OutDepth (OutDepth),
    .desc_t   (desc_t),
    .out_t    (out_t)
  ) u_realign (
    .clk_i         (clk_i),
    .rst_ni        (rst_ni),
    .abort_i       (abort_q),
    .desc_valid_i  (desc_valid),
    .desc_pop_o    (desc_pop),
    .desc_i        (desc_head),
    .beat_valid_i  (rb_valid),
    .beat_pop_o    (rb_pop),
    .beat_data_i   (rb_head.data),
    .beat_resp_i   (rb_head.resp),
    .beat_last_i   (rb_head.last),
    .cancel_valid_o(cancel_valid),
    .cancel_seq_o  (cancel_seq),
    .cancel_seq_next_o(cancel_seq_next),
    .out_valid_o   (of_valid),
    .out_ready_i   (of_pop),
    .out_o         (of_head)
  );

  ////////////////////////
  // Consumer interface //
  ////////////////////////

  logic                    st_in_ready, st_push, st_valid;
  dma_status_t             st_entry, st_head;
  logic                    data_hs, status_move, status_hs;
  logic [StatCntWidth-1:0] st_errors_q, st_errors_d;  // non-OK statuses not yet taken
  logic                    st_err_none_q, st_err_none_d;  // st_errors_q == 0
  logic                    st_push_err, st_pop_err;

  // A beat that completes a request also needs room for its status. After an error status,
  // later data waits until that status was taken, so the consumer can tell where a truncated
  // request ended.
  assign data_valid_o = of_valid && of_head.has_data && !abort_q && st_err_none_q &&
                        (!of_head.has_status || st_in_ready);
  assign data_o       = of_head.data;
  assign data_keep_o  = of_head.keep;
  assign data_last_o  = of_head.last;
  assign data_hs      = data_valid_o && data_ready_i;
  assign status_move  = of_valid && !of_head.has_data && !abort_q && st_in_ready;
  assign of_pop       = data_hs || status_move;

  // A status is pushed by a data beat that completes its request, by a status entry, or (during
  // abort, when neither moves) for each request not yet reported. The consumer's data ready
  // only selects between the push formed with the beat and the one formed without it.
  logic st_push_abort, st_push_beat;
  assign st_push_abort = abort_q && drained && tag_valid && st_in_ready;
  assign st_push_beat  = data_valid_o && of_head.has_status;
  assign st_push       = (data_ready_i && st_push_beat) || status_move || st_push_abort;
  assign st_entry      = '{tag: tag_head, err: st_push_abort ? DmaAborted : of_head.err};
  assign tag_pop       = st_push;

  sgpu_fifo #(
    .Width($bits(dma_status_t)),
    .Depth(StatusDepth),
    // The consumer's status and the error count's decrement start from flip-flops.
    .RegOut(1'b1)
  ) u_status_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (1'b0),
    .in_valid_i (st_push),
    .in_ready_o (st_in_ready),
    .in_data_i  (st_entry),
    .out_valid_o(st_valid),
    .out_ready_i(status_ready_i),
    .out_data_o (st_head),
    .count_o    ()
  );

  assign status_valid_o = st_valid;
  assign status_o       = st_head;
  assign status_hs      = st_valid && status_ready_i;

  // The count and its "zero" flag move by one; each next value is formed from the registers
  // while the handshakes settle.
  // A data beat's status is always DmaOk and nothing moves during abort but the DmaAborted
  // statuses, so the consumer's data ready is not in the increment: an error is pushed by a
  // status move with an error, or by abort.
  assign st_push_err = (status_move && (of_head.err != DmaOk)) || st_push_abort;
  assign st_pop_err  = status_hs && (st_head.err != DmaOk);
  always_comb begin
    st_errors_d   = st_errors_q;
    st_err_none_d = st_err_none_q;
    unique case ({st_push_err, st_pop_err})
      2'b10: begin
        st_errors_d   = st_errors_q + 1'b1;
        st_err_none_d = 1'b0;
      end
      2'b01: begin
        st_errors_d   = st_errors_q - 1'b1;
        st_err_none_d = (st_errors_q == StatCntWidth'(1));
      end
      default: ;
    endcase
  end

  ///////////
  // Abort //
  ///////////

  assign drained = outst_zero_q && !xp_valid && !xq_valid;

  always_comb begin
    abort_d = abort_q || abort_i;
    // Done when nothing is in flight and every request was reported.
    if (abort_q && !abort_i && drained && !tag_valid) abort_d = 1'b0;
  end

  assign busy_o = abort_q || tag_valid || st_valid || !outst_zero_q || xp_valid || rq_valid;

  ///////////////
  // Registers //
  ///////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      abort_q       <= 1'b0;
      seq_q         <= '0;
      wk_active_q   <= 1'b0;
      is_started_q  <= 1'b0;
      drop_rest_q   <= 1'b0;
      free_q        <= CreditWidth'(BufferBeats);
      outst_q       <= '0;
      outst_zero_q  <= 1'b1;
      arvalid_q     <= 1'b0;
      st_errors_q   <= '0;
      st_err_none_q <= 1'b1;
    end else begin
      abort_q       <= abort_d;
      seq_q         <= seq_d;
      wk_active_q   <= wk_active_d;
      is_started_q  <= is_started_d;
      drop_rest_q   <= drop_rest_d;
      free_q        <= free_d;
      outst_q       <= outst_d;
      outst_zero_q  <= outst_zero_d;
      arvalid_q     <= arvalid_d;
      st_errors_q   <= st_errors_d;
      st_err_none_q <= st_err_none_d;
    end
  end

  // Datapath and payload registers: only read while the control state above says they are
  // valid, so they need no reset.
  always_ff @(posedge clk_i) begin
    wk_vpn_q      <= wk_vpn_d;
    wk_left_q     <= wk_left_d;
    wk_last_q     <= wk_last_d;
    is_addr_q     <= is_addr_d;
    is_left_q     <= is_left_d;
    is_left_final_q <= is_left_final_d;
    araddr_q      <= araddr_d;
    arlen_q       <= arlen_d;
  end

  // Single ID: the response ID carries no information.
  logic unused_rid;
  assign unused_rid = ^axi_rd_rsp_i.r.id;

  ////////////////////////////
  // Elaboration-time checks //
  ////////////////////////////

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth >= 64 && DataWidth <= 512
                      && (DataWidth & (DataWidth - 1)) == 0,
                      "DataWidth must be a power of two between 64 and 512")
  `SGPU_ASSERT_STATIC(g_bad_burst, MaxBurstBeats >= 1 && MaxBurstBeats <= 256,
                      "MaxBurstBeats must be 1..256 (AXI4 INCR)")
  `SGPU_ASSERT_STATIC(g_bad_outstanding, MaxOutstanding >= 1, "MaxOutstanding must be at least 1")
  `SGPU_ASSERT_STATIC(g_bad_buffer, BufferBeats >= BurstBeats,
                      "BufferBeats must hold the longest burst, else it can never be issued")
  `SGPU_ASSERT_STATIC(g_bad_requests, MaxRequests >= 2, "MaxRequests must be at least 2")
  `SGPU_ASSERT_STATIC(g_bad_axi_types, $bits(axi_rd_rsp_i.r.data) == DataWidth
                      && $bits(axi_rd_req_o.ar.id) == IdWidth,
                      "the AXI types do not match DataWidth and IdWidth")

  ////////////////
  // Invariants //
  ////////////////

  // The credit and outstanding counts stay within what they guard.
  `SGPU_ASSERT(CreditsBounded, free_q <= CreditWidth'(BufferBeats))
  `SGPU_ASSERT(OutstandingBounded, outst_q <= OutstWidth'(MaxOutstanding))
  // The registered "zero" flags equal the compares they replace.
  `SGPU_ASSERT(OutstZeroRegistered, outst_zero_q == (outst_q == '0))
  `SGPU_ASSERT(StatusErrorsZeroRegistered, st_err_none_q == (st_errors_q == '0))
  `SGPU_ASSERT(DataBeatStatusOk, of_valid && of_head.has_data |-> of_head.err == DmaOk)
  `SGPU_ASSERT(StatusPushErrorFormed, st_push_err == (st_push && (st_entry.err != DmaOk)))
  // Nothing moves from the output FIFO during abort, so an abort push never meets another.
  `SGPU_ASSERT(AbortPushAlone, st_push_abort |-> !data_hs && !status_move)
  // Nothing arrives that was not asked for.
  `SGPU_ASSERT(ReadDataExpected, axi_rd_rsp_i.r_valid |-> outst_q != '0)
  `SGPU_ASSERT(XlateRspExpected, xlate_rsp_valid_i |-> xp_valid)
  // The precomputed burst decisions equal the compares they replace.
  `SGPU_ASSERT(NoIssueDuringAbort, is_issue |-> !abort_q)
  // The decisions formed with the credit check last are the cases' one outcome each.
  `SGPU_ASSERT(IssueDecisionsExclusive, $onehot0({is_drop, is_end, is_issue}))
  `SGPU_ASSERT(PopIsDecision, sf_pop == (is_drop || is_end || (is_issue && is_burst_final)))
  // The descriptor formed before the decision is the one each branch describes.
  `SGPU_ASSERT(DescEndFields, is_end |-> is_desc.kind == DescEnd && is_desc.err ==
      ((cancel_hit || sf_head.empty) ? DmaOk : DmaXlateFault))
  `SGPU_ASSERT(DescReadFields, is_issue |-> is_desc.kind == DescRead && is_desc.err == DmaOk)
  `SGPU_ASSERT(BurstFinalPrecomputed, sf_valid
      |-> is_burst_final == (is_cur_left <= SegBeatsWidth'(BurstBeats)))
  // The registered cancel compare equals the compare of the head it replaces.
  `SGPU_ASSERT(CancelHitRegistered, sf_valid
      |-> cancel_hit == (cancel_valid && (cancel_seq == sf_head.seg.seq)))
  // The segment's precomputed facts equal what they replace, from the head's own fields.
  `SGPU_ASSERT(SegEmptyPrecomputed, sf_valid |-> sf_head.empty == (sf_head.seg.bytes == '0))
  `SGPU_ASSERT(SegEndsPrecomputed, sf_valid |-> sf_head.ends == (sf_head.fault || sf_head.empty))
  `SGPU_ASSERT(SegHiLanePrecomputed, sf_valid |-> sf_head.hi_lane ==
      lane_t'(sf_head.seg.offset[LaneBits-1:0] + sf_head.seg.bytes[LaneBits-1:0] - 1'b1))
  // The free-beat register equals the buffer less the beats reserved, counted as before (issue
  // reserves a burst's beats, every beat the realigner takes returns one, abort clears).
`ifndef SYNTHESIS
  logic [CreditWidth-1:0] sim_credits_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) sim_credits_q <= '0;
    else if (abort_q && !is_issue) sim_credits_q <= '0;
    else sim_credits_q <= sim_credits_q + (is_issue ? CreditWidth'(is_burst_beats) : '0) -
                          CreditWidth'(rb_pop);
  end
  `SGPU_ASSERT(FreeBeatsRegistered, free_q == CreditWidth'(BufferBeats) - sim_credits_q)
  `SGPU_ASSERT(CreditOkPrecomputed, sf_valid
      |-> credit_ok == ((CreditWidth + SegBeatsWidth)'(sim_credits_q)
                        + (CreditWidth + SegBeatsWidth)'(is_burst_beats)
                        <= (CreditWidth + SegBeatsWidth)'(BufferBeats)))
`endif
  // The walk's registered "last segment" equals the compare it replaces; a walk is never empty.
  `SGPU_ASSERT(WalkLastRegistered, wk_active_q
      |-> wk_last_q == (wk_left_q <= len_t'(sgpu_pkg::PageBytes)))
  `SGPU_ASSERT(WalkLeftNonZero, wk_active_q |-> wk_left_q != '0)
  `SGPU_ASSERT(LenSmallCarry, hd_len_small == (rq_head.len[LenWidth-1:PageShift+2] == '0))
  // The queued "first segment is the last" equals the compare of the head it replaces.
  `SGPU_ASSERT(OneSegQueued, rq_valid |-> hd_last == hd_last_calc)
  `SGPU_ASSERT(FirstSegLast, rq_valid |-> hd_last_calc ==
      ((LenWidth + 1)'(rq_head.len) <= (LenWidth + 1)'(hd_room)))
  // Every burst stays inside one 4 KiB page.
  `SGPU_ASSERT(BurstInPage, is_issue
      |-> (PageShift - LaneBits + 1)'(is_cur_addr[PageShift-1:LaneBits])
          + (PageShift - LaneBits + 1)'(is_burst_beats) <= (PageShift - LaneBits + 1)'(PageBeats))

endmodule

`default_nettype wire
