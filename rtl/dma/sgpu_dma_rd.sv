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
  parameter int unsigned BufferBeats = 512,
  /// Most requests accepted and not yet reported (queued, in flight, or draining).
  parameter int unsigned MaxRequests = 32
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
  /// Translation response for the oldest outstanding request (valid/ready).
  input  wire logic                            xlate_rsp_valid_i,
  /// The engine takes the response; never depends on xlate_rsp_valid_i.
  output      logic                            xlate_rsp_ready_o,
  /// {bus page, fault}.
  input  wire sgpu_dma_pkg::xlate_rsp_t        xlate_rsp_i,

  /// AXI4 read address channel.
  output      logic                            m_axi_arvalid,
  input  wire logic                            m_axi_arready,
  output      logic [IdWidth-1:0]              m_axi_arid,
  output      logic [63:0]                     m_axi_araddr,
  output      logic [7:0]                      m_axi_arlen,
  output      logic [2:0]                      m_axi_arsize,
  output      logic [1:0]                      m_axi_arburst,
  /// AXI4 read data channel; rready is always high (space is reserved before issue).
  input  wire logic                            m_axi_rvalid,
  output      logic                            m_axi_rready,
  input  wire logic [IdWidth-1:0]              m_axi_rid,
  input  wire logic [DataWidth-1:0]            m_axi_rdata,
  input  wire logic [1:0]                      m_axi_rresp,
  input  wire logic                            m_axi_rlast
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
    seq_t            seq;
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
    sgpu_pkg::pfn_t ppn;
    logic           fault;
    seg_t           seg;
  } xseg_t;

  typedef enum logic {
    DescRead = 1'b0,  ///< a burst was issued; its beats follow in the data buffer
    DescEnd  = 1'b1   ///< the request ends here without (more) reads
  } desc_kind_e;

  /// What the realigner needs to know about each burst, in issue order.
  typedef struct packed {
    desc_kind_e kind;
    dma_err_e   err;      ///< DescEnd: DmaXlateFault, or DmaOk (cancelled / empty request)
    logic [7:0] len;      ///< beats - 1
    logic       first;    ///< first burst of its request
    logic       last;     ///< last burst of its request
    lane_t      lo_lane;  ///< lane of the first requested byte (valid with first)
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

  assign req_ready_o = !abort_q && rq_in_ready && tag_in_ready;
  assign req_hs      = req_valid_i && req_ready_o;

  sgpu_fifo #(
    .Width($bits(queued_req_t)),
    .Depth(ReqDepth)
  ) u_req_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (req_hs),
    .in_ready_o (rq_in_ready),
    .in_data_i  ({req_i.addr, req_i.len, seq_q}),
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

  logic                     wk_active_q, wk_active_d;
  sgpu_pkg::addr_t          wk_addr_q, wk_addr_d, wk_cur_addr;
  len_t                     wk_left_q, wk_left_d, wk_cur_left;
  logic [SegBytesWidth-1:0] wk_page_room;
  logic                     wk_seg_last, wk_go;
  seg_t                     wk_seg;
  logic                     xreq_valid_q, xreq_valid_d;
  sgpu_pkg::pfn_t           xreq_vpn_q, xreq_vpn_d;
  logic                     xp_in_ready, xp_valid;
  seg_t                     xp_head;

  assign wk_cur_addr  = wk_active_q ? wk_addr_q : rq_head.addr;
  assign wk_cur_left  = wk_active_q ? wk_left_q : rq_head.len;
  assign wk_page_room = SegBytesWidth'(sgpu_pkg::PageBytes) -
                        SegBytesWidth'(wk_cur_addr[PageShift-1:0]);
  assign wk_seg_last  = wk_cur_left <= len_t'(wk_page_room);
  assign wk_go        = rq_valid && !stop && xp_in_ready && (!xreq_valid_q || xlate_req_ready_i);
  assign rq_pop       = wk_go && wk_seg_last;

  always_comb begin
    wk_seg = '{
      offset: wk_cur_addr[PageShift-1:0],
      bytes:  wk_seg_last ? wk_cur_left[SegBytesWidth-1:0] : wk_page_room,
      first:  !wk_active_q,
      last:   wk_seg_last,
      seq:    rq_head.seq
    };
  end

  always_comb begin
    wk_active_d  = wk_active_q;
    wk_addr_d    = wk_addr_q;
    wk_left_d    = wk_left_q;
    xreq_valid_d = xreq_valid_q && !xlate_req_ready_i;
    xreq_vpn_d   = xreq_vpn_q;
    if (wk_go) begin
      xreq_valid_d = 1'b1;
      xreq_vpn_d   = wk_cur_addr[AddrWidth-1:PageShift];
      wk_active_d  = !wk_seg_last;
      wk_addr_d    = wk_cur_addr + AddrWidth'(wk_seg.bytes);
      wk_left_d    = wk_cur_left - len_t'(wk_seg.bytes);
    end
    // A queued request that is aborted is dropped with the request FIFO.
    if (abort_q) wk_active_d = 1'b0;
  end

  // A translation request, once raised, is held until accepted (even during abort).
  assign xlate_req_valid_o = xreq_valid_q;
  assign xlate_req_o       = '{vpn: xreq_vpn_q, write: 1'b0};

  // Segments whose translation was requested and not yet answered, in order.
  sgpu_fifo #(
    .Width($bits(seg_t)),
    .Depth(XlateDepth)
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
  xseg_t sf_head;

  // During abort every response is taken and dropped.
  assign xlate_rsp_ready_o = abort_q || sf_in_ready;

  sgpu_fifo #(
    .Width($bits(xseg_t)),
    .Depth(SegDepth)
  ) u_seg_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (xlate_rsp_valid_i && xlate_rsp_ready_o && !abort_q),
    .in_ready_o (sf_in_ready),
    .in_data_i  ({xlate_rsp_i.ppn, xlate_rsp_i.fault, xp_head}),
    .out_valid_o(sf_valid),
    .out_ready_i(sf_pop),
    .out_data_o (sf_head),
    .count_o    ()
  );

  //////////////////
  // Burst issuer //
  //////////////////

  logic                     is_started_q, is_started_d;  // inside the head segment
  sgpu_pkg::addr_t          is_addr_q, is_addr_d, is_cur_addr;
  logic [SegBeatsWidth-1:0] is_left_q, is_left_d, is_cur_left, is_seg_beats;
  logic [SegBeatsWidth-1:0] is_burst_beats;
  logic                     is_burst_final;
  logic                     drop_rest_q, drop_rest_d;  // skip the rest of a request
  logic                     cancel_valid;              // realigner: this request failed
  seq_t                     cancel_seq;
  logic                     cancel_hit;
  logic                     is_issue, is_end;
  desc_t                    is_desc;
  logic                     desc_in_ready;
  logic [CreditWidth-1:0]   credits_q, credits_d;      // beats reserved in the buffer
  logic [OutstWidth-1:0]    outst_q, outst_d;          // bursts in flight
  logic                     credit_ok, outst_ok, ar_free;
  logic                     arvalid_q, arvalid_d;
  sgpu_pkg::addr_t          araddr_q, araddr_d;
  logic [7:0]               arlen_q, arlen_d;
  lane_t                    seg_end_lane;              // lane of offset + bytes - 1

  // Beats the head segment covers: from its first byte's beat to its last byte's beat.
  assign is_seg_beats = SegBeatsWidth'(
      ((PageShift + 2)'(sf_head.seg.offset[LaneBits-1:0]) + (PageShift + 2)'(sf_head.seg.bytes) +
       (PageShift + 2)'(BusBytes - 1)) >> LaneBits);
  assign is_cur_addr  = is_started_q ? is_addr_q :
                        {sf_head.ppn, sf_head.seg.offset[PageShift-1:LaneBits], lane_t'(0)};
  assign is_cur_left  = is_started_q ? is_left_q : is_seg_beats;
  assign is_burst_final = is_cur_left <= SegBeatsWidth'(BurstBeats);
  assign is_burst_beats = is_burst_final ? is_cur_left : SegBeatsWidth'(BurstBeats);
  // Only the lane of the last byte is needed, and it depends only on the low bits.
  assign seg_end_lane = sf_head.seg.offset[LaneBits-1:0] + sf_head.seg.bytes[LaneBits-1:0] -
                        1'b1;

  assign cancel_hit = cancel_valid && (cancel_seq == sf_head.seg.seq);
  assign credit_ok  = (CreditWidth + 1)'(credits_q) + (CreditWidth + 1)'(is_burst_beats) <=
                      (CreditWidth + 1)'(BufferBeats);
  assign outst_ok   = outst_q < OutstWidth'(MaxOutstanding);
  assign ar_free    = !arvalid_q || m_axi_arready;

  always_comb begin
    is_started_d = is_started_q;
    is_addr_d    = is_addr_q;
    is_left_d    = is_left_q;
    drop_rest_d  = drop_rest_q;
    sf_pop       = 1'b0;
    is_issue     = 1'b0;
    is_end       = 1'b0;
    is_desc      = '{
      kind:    DescRead,
      err:     DmaOk,
      len:     8'(is_burst_beats - 1'b1),
      first:   sf_head.seg.first && !is_started_q,
      last:    sf_head.seg.last && is_burst_final,
      lo_lane: sf_head.seg.offset[LaneBits-1:0],
      hi_lane: seg_end_lane,
      seq:     sf_head.seg.seq
    };

    if (sf_valid && !stop) begin
      if (drop_rest_q) begin
        // The request already ended (fault or cancel): drop its remaining segments.
        sf_pop = 1'b1;
        if (sf_head.seg.last) drop_rest_d = 1'b0;
      end else if (cancel_hit || sf_head.fault || (sf_head.seg.bytes == '0)) begin
        // End the request here without reading this page.
        is_desc.kind = DescEnd;
        is_desc.err  = (cancel_hit || (sf_head.seg.bytes == '0)) ? DmaOk : DmaXlateFault;
        if (desc_in_ready) begin
          is_end       = 1'b1;
          sf_pop       = 1'b1;
          is_started_d = 1'b0;
          drop_rest_d  = !sf_head.seg.last;
        end
      end else if (ar_free && credit_ok && outst_ok && desc_in_ready) begin
        is_issue = 1'b1;
        if (is_burst_final) begin
          sf_pop       = 1'b1;
          is_started_d = 1'b0;
        end else begin
          is_started_d = 1'b1;
          is_addr_d    = is_cur_addr + AddrWidth'({is_burst_beats, lane_t'(0)});
          is_left_d    = is_cur_left - is_burst_beats;
        end
      end
    end
    if (abort_q) begin
      is_started_d = 1'b0;
      drop_rest_d  = 1'b0;
    end
  end

  // AR register: loaded when a burst is issued, held until the handshake (even during abort).
  always_comb begin
    arvalid_d = arvalid_q && !m_axi_arready;
    araddr_d  = araddr_q;
    arlen_d   = arlen_q;
    if (is_issue) begin
      arvalid_d = 1'b1;
      araddr_d  = is_cur_addr;
      arlen_d   = is_desc.len;
    end
  end

  assign m_axi_arvalid = arvalid_q;
  assign m_axi_arid    = AxiId;
  assign m_axi_araddr  = araddr_q;
  assign m_axi_arlen   = arlen_q;
  assign m_axi_arsize  = 3'(LaneBits);
  assign m_axi_arburst = sgpu_pkg::AxiBurstIncr;

  logic  desc_valid, desc_pop;
  desc_t desc_head;

  sgpu_fifo #(
    .Width($bits(desc_t)),
    .Depth(DescDepth)
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
  assign m_axi_rready = 1'b1;
  assign r_hs         = m_axi_rvalid;

  sgpu_dma_rbuf #(
    .Width($bits(rbeat_t)),
    .Depth(BufferBeats)
  ) u_rbuf (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (r_hs && !abort_q),
    .in_ready_o (),
    .in_data_i  ({m_axi_rresp, m_axi_rlast, m_axi_rdata}),
    .out_valid_o(rb_valid),
    .out_ready_i(rb_pop),
    .out_data_o (rb_head)
  );

  always_comb begin
    credits_d = credits_q + (is_issue ? CreditWidth'(is_burst_beats) : '0) -
                CreditWidth'(rb_pop);
    outst_d   = outst_q + OutstWidth'(is_issue) - OutstWidth'(r_hs && m_axi_rlast);
    // Nothing is issued during abort and the buffer is being emptied: no beat is reserved.
    if (abort_q) credits_d = '0;
  end

  ///////////////
  // Realigner //
  ///////////////

  logic [7:0]          beat_cnt_q, beat_cnt_d;
  lane_t               shift_q, shift_d;
  logic [DataWidth-1:0] prev_q, prev_d;      // previous beat, for the bytes it still owes
  logic                flush_q, flush_d;     // one more output beat from prev_q
  logic [LaneBits:0]   flush_bytes_q, flush_bytes_d;
  logic                drop_q, drop_d;       // the current request failed: drop its beats
  dma_err_e            err_q, err_d;
  seq_t                drop_seq_q, drop_seq_d;

  logic                of_in_ready, of_push;
  out_t                of_entry;

  logic                ra_final, ra_burst_end, ra_first_beat, ra_beat_err, ra_advance;
  lane_t               ra_shift, ra_hi;
  logic [LaneBits:0]   ra_hi_bytes;          // hi + 1
  logic [DataWidth-1:0] ra_combined, ra_first_shifted;
  dma_err_e            ra_beat_err_code;

  assign cancel_valid = drop_q;
  assign cancel_seq   = drop_seq_q;

  /// Byte enables of the low `n` lanes (n = 0..BusBytes).
  function automatic logic [BusBytes-1:0] low_lanes(logic [LaneBits:0] n);
    logic [BusBytes-1:0] mask;
    for (int unsigned i = 0; i < BusBytes; i++) mask[i] = (LaneBits + 1)'(i) < n;
    return mask;
  endfunction

  /// Data with every byte outside `keep` zeroed: nothing outside the request leaves the engine.
  function automatic logic [DataWidth-1:0] masked(logic [DataWidth-1:0] data,
                                                  logic [BusBytes-1:0] keep);
    logic [DataWidth-1:0] out;
    for (int unsigned i = 0; i < BusBytes; i++) out[8*i +: 8] = keep[i] ? data[8*i +: 8] : 8'h00;
    return out;
  endfunction

  function automatic out_t data_entry(logic [DataWidth-1:0] data, logic [LaneBits:0] n_bytes,
                                      logic last);
    logic [BusBytes-1:0] keep;
    keep = low_lanes(n_bytes);
    return '{has_data: 1'b1, data: masked(data, keep), keep: keep, last: last,
             has_status: last, err: DmaOk};
  endfunction

  function automatic out_t status_entry(dma_err_e err);
    return '{has_data: 1'b0, data: '0, keep: '0, last: 1'b0, has_status: 1'b1, err: err};
  endfunction

  assign ra_final      = desc_head.last && (beat_cnt_q == desc_head.len);
  assign ra_burst_end  = beat_cnt_q == desc_head.len;
  assign ra_first_beat = desc_head.first && (beat_cnt_q == '0);
  assign ra_shift      = ra_first_beat ? desc_head.lo_lane : shift_q;
  assign ra_hi         = ra_final ? desc_head.hi_lane : lane_t'(BusBytes - 1);
  assign ra_hi_bytes   = (LaneBits + 1)'(ra_hi) + 1'b1;
  assign ra_beat_err   = rb_head.resp[1];  // SLVERR or DECERR (EXOKAY counts as OKAY)
  assign ra_beat_err_code = rb_head.resp[0] ? DmaBusDecErr : DmaBusSlvErr;
  // Output beat k of a request = bytes [shift, BusBytes) of raw beat k, then bytes
  // [0, shift) of raw beat k + 1.
  assign ra_combined      = (prev_q >> {shift_q, 3'b000}) |
                            (rb_head.data << {lane_t'(BusBytes) - shift_q, 3'b000});
  assign ra_first_shifted = rb_head.data >> {ra_shift, 3'b000};

  always_comb begin
    beat_cnt_d    = beat_cnt_q;
    shift_d       = shift_q;
    prev_d        = prev_q;
    flush_d       = flush_q;
    flush_bytes_d = flush_bytes_q;
    drop_d        = drop_q;
    err_d         = err_q;
    drop_seq_d    = drop_seq_q;
    of_push       = 1'b0;
    of_entry      = status_entry(DmaOk);
    rb_pop        = 1'b0;
    desc_pop      = 1'b0;
    ra_advance    = 1'b0;

    if (abort_q) begin
      flush_d    = 1'b0;
      drop_d     = 1'b0;
      beat_cnt_d = '0;
    end else if (flush_q) begin
      // The tail of an unaligned request that did not fit into the previous output beat.
      of_entry = data_entry(prev_q >> {shift_q, 3'b000}, flush_bytes_q, 1'b1);
      if (of_in_ready) begin
        of_push = 1'b1;
        flush_d = 1'b0;
      end
    end else if (desc_valid && (desc_head.kind == DescEnd)) begin
      // Translation fault, cancel after a bus error, or an empty request.
      of_entry = status_entry(drop_q ? err_q : desc_head.err);
      if (of_in_ready) begin
        of_push  = 1'b1;
        desc_pop = 1'b1;
        drop_d   = 1'b0;
      end
    end else if (desc_valid && rb_valid) begin
      if (drop_q || ra_beat_err) begin
        // A failed request: drop the beat; its last beat ends the request with the error.
        of_entry = status_entry(drop_q ? err_q : ra_beat_err_code);
        if (!ra_final || of_in_ready) begin
          ra_advance = 1'b1;
          of_push    = ra_final;
          drop_d     = !ra_final;
          if (!drop_q) begin
            err_d      = ra_beat_err_code;
            drop_seq_d = desc_head.seq;
          end
        end
      end else if (ra_shift == '0) begin
        // Aligned request: beats pass straight through.
        of_entry = data_entry(rb_head.data, ra_final ? ra_hi_bytes : (LaneBits + 1)'(BusBytes),
                              ra_final);
        if (of_in_ready) begin
          of_push    = 1'b1;
          ra_advance = 1'b1;
        end
      end else if (ra_first_beat && !ra_final) begin
        // First beat of an unaligned request: keep it, it completes the next output beat.
        ra_advance = 1'b1;
        prev_d     = rb_head.data;
      end else if (ra_first_beat) begin
        // The whole unaligned request is in one beat.
        of_entry = data_entry(ra_first_shifted, ra_hi_bytes - (LaneBits + 1)'(ra_shift), 1'b1);
        if (of_in_ready) begin
          of_push    = 1'b1;
          ra_advance = 1'b1;
        end
      end else begin
        if (!ra_final) begin
          of_entry = data_entry(ra_combined, (LaneBits + 1)'(BusBytes), 1'b0);
        end else if (ra_hi_bytes <= (LaneBits + 1)'(shift_q)) begin
          // The last raw beat's bytes all fit into this output beat.
          of_entry = data_entry(ra_combined, (LaneBits + 1)'(BusBytes) -
                                (LaneBits + 1)'(shift_q) + ra_hi_bytes, 1'b1);
        end else begin
          // Emit a full beat now and the rest of the last raw beat next cycle.
          of_entry = data_entry(ra_combined, (LaneBits + 1)'(BusBytes), 1'b0);
        end
        if (of_in_ready) begin
          of_push    = 1'b1;
          ra_advance = 1'b1;
          prev_d     = rb_head.data;
          if (ra_final && (ra_hi_bytes > (LaneBits + 1)'(shift_q))) begin
            flush_d       = 1'b1;
            flush_bytes_d = ra_hi_bytes - (LaneBits + 1)'(shift_q);
          end
        end
      end

      if (ra_advance) begin
        rb_pop = 1'b1;
        if (ra_first_beat) shift_d = desc_head.lo_lane;
        if (ra_burst_end) begin
          beat_cnt_d = '0;
          desc_pop   = 1'b1;
        end else begin
          beat_cnt_d = beat_cnt_q + 1'b1;
        end
      end
    end
  end

  ////////////////////////
  // Consumer interface //
  ////////////////////////

  logic                    of_valid, of_pop;
  out_t                    of_head;
  logic                    st_in_ready, st_push, st_valid;
  dma_status_t             st_entry, st_head;
  logic                    data_hs, status_move, status_hs;
  logic [StatCntWidth-1:0] st_errors_q, st_errors_d;  // non-OK statuses not yet taken

  sgpu_fifo #(
    .Width($bits(out_t)),
    .Depth(OutDepth)
  ) u_out_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_q),
    .in_valid_i (of_push),
    .in_ready_o (of_in_ready),
    .in_data_i  (of_entry),
    .out_valid_o(of_valid),
    .out_ready_i(of_pop),
    .out_data_o (of_head),
    .count_o    ()
  );

  // A beat that completes a request also needs room for its status. After an error status,
  // later data waits until that status was taken, so the consumer can tell where a truncated
  // request ended.
  assign data_valid_o = of_valid && of_head.has_data && !abort_q && (st_errors_q == '0) &&
                        (!of_head.has_status || st_in_ready);
  assign data_o       = of_head.data;
  assign data_keep_o  = of_head.keep;
  assign data_last_o  = of_head.last;
  assign data_hs      = data_valid_o && data_ready_i;
  assign status_move  = of_valid && !of_head.has_data && !abort_q && st_in_ready;
  assign of_pop       = data_hs || status_move;

  always_comb begin
    st_push  = 1'b0;
    st_entry = '{tag: tag_head, err: of_head.err};
    if ((data_hs && of_head.has_status) || status_move) begin
      st_push = 1'b1;
    end else if (abort_q && drained && tag_valid && st_in_ready) begin
      st_push  = 1'b1;
      st_entry = '{tag: tag_head, err: DmaAborted};
    end
  end
  assign tag_pop = st_push;

  sgpu_fifo #(
    .Width($bits(dma_status_t)),
    .Depth(StatusDepth)
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

  assign st_errors_d = st_errors_q + StatCntWidth'(st_push && (st_entry.err != DmaOk)) -
                       StatCntWidth'(status_hs && (st_head.err != DmaOk));

  ///////////
  // Abort //
  ///////////

  assign drained = (outst_q == '0) && !xp_valid && !xreq_valid_q;

  always_comb begin
    abort_d = abort_q || abort_i;
    // Done when nothing is in flight and every request was reported.
    if (abort_q && !abort_i && drained && !tag_valid) abort_d = 1'b0;
  end

  assign busy_o = abort_q || tag_valid || st_valid || (outst_q != '0) || xp_valid || rq_valid;

  ///////////////
  // Registers //
  ///////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      abort_q       <= 1'b0;
      seq_q         <= '0;
      wk_active_q   <= 1'b0;
      xreq_valid_q  <= 1'b0;
      is_started_q  <= 1'b0;
      drop_rest_q   <= 1'b0;
      credits_q     <= '0;
      outst_q       <= '0;
      arvalid_q     <= 1'b0;
      beat_cnt_q    <= '0;
      flush_q       <= 1'b0;
      drop_q        <= 1'b0;
      st_errors_q   <= '0;
    end else begin
      abort_q       <= abort_d;
      seq_q         <= seq_d;
      wk_active_q   <= wk_active_d;
      xreq_valid_q  <= xreq_valid_d;
      is_started_q  <= is_started_d;
      drop_rest_q   <= drop_rest_d;
      credits_q     <= credits_d;
      outst_q       <= outst_d;
      arvalid_q     <= arvalid_d;
      beat_cnt_q    <= beat_cnt_d;
      flush_q       <= flush_d;
      drop_q        <= drop_d;
      st_errors_q   <= st_errors_d;
    end
  end

  // Datapath and payload registers: only read while the control state above says they are
  // valid, so they need no reset.
  always_ff @(posedge clk_i) begin
    wk_addr_q     <= wk_addr_d;
    wk_left_q     <= wk_left_d;
    xreq_vpn_q    <= xreq_vpn_d;
    is_addr_q     <= is_addr_d;
    is_left_q     <= is_left_d;
    araddr_q      <= araddr_d;
    arlen_q       <= arlen_d;
    shift_q       <= shift_d;
    prev_q        <= prev_d;
    flush_bytes_q <= flush_bytes_d;
    err_q         <= err_d;
    drop_seq_q    <= drop_seq_d;
  end

  // Single ID: the response ID carries no information.
  logic unused_rid;
  assign unused_rid = ^m_axi_rid;

  ////////////////////////////
  // Elaboration-time checks //
  ////////////////////////////

  if (DataWidth < 64 || DataWidth > 512 || (DataWidth & (DataWidth - 1)) != 0) begin : g_bad_width
    $error("%m: DataWidth must be a power of two between 64 and 512");
  end
  if (MaxBurstBeats < 1 || MaxBurstBeats > 256) begin : g_bad_burst
    $error("%m: MaxBurstBeats must be 1..256 (AXI4 INCR)");
  end
  if (MaxOutstanding < 1) begin : g_bad_outstanding
    $error("%m: MaxOutstanding must be at least 1");
  end
  if (BufferBeats < BurstBeats) begin : g_bad_buffer
    $error("%m: BufferBeats must hold the longest burst, else it can never be issued");
  end
  if (MaxRequests < 2) begin : g_bad_requests
    $error("%m: MaxRequests must be at least 2");
  end

  ////////////////
  // Invariants //
  ////////////////

`ifndef SYNTHESIS
  always_ff @(posedge clk_i) begin
    if (rst_ni) begin
      assert (credits_q <= CreditWidth'(BufferBeats))
        else $error("%m: more beats reserved than the buffer holds");
      assert (outst_q <= OutstWidth'(MaxOutstanding))
        else $error("%m: more reads in flight than MaxOutstanding");
      assert (!(m_axi_rvalid && outst_q == '0))
        else $error("%m: AXI read data with no read in flight");
      assert (!(xlate_rsp_valid_i && !xp_valid))
        else $error("%m: translation response with no request outstanding");
      // Read data must match the burst it belongs to (single ID, in order).
      assert (!(rb_pop && !abort_q) || (rb_head.last == ra_burst_end))
        else $error("%m: rlast does not match the issued burst length");
      // Every burst stays inside one 4 KiB page.
      assert (!is_issue || ((PageShift - LaneBits + 1)'(is_cur_addr[PageShift-1:LaneBits]) +
                            (PageShift - LaneBits + 1)'(is_burst_beats) <=
                            (PageShift - LaneBits + 1)'(PageBeats)))
        else $error("%m: burst crosses a 4 KiB boundary");
    end
  end
`endif

endmodule

`default_nettype wire
