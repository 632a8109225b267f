// AXI4 write splitter: turns each write burst into bursts ("pieces") whose enabled bytes form
// one contiguous address range, so a bridge that cannot express holes (a PCIe memory write
// has byte enables only for its first and last dword; XDMA's AXI bridge needs contiguous
// strobes) still changes exactly the bytes the strobes name.
//
// A piece also never crosses a boundary of max_bytes_i (the PCIe Max_Payload_Size, a power of
// two; boundaries fall on beat boundaries), so a piece fits one TLP. Each output burst carries
// its byte count on m_axi_awuser and starts at its first enabled byte (unaligned INCR);
// beats with no strobes are dropped, and a burst with no strobes at all becomes no piece.
//
// Pieces are store-and-forward: a piece's beats wait in the buffer until the piece is
// complete, then its AW is issued, then its W beats (AW always before W). All pieces use ID
// OutId, so their responses return in order; one B goes back per input burst, with the input
// burst's ID and the worst response of its pieces. One run of strobes is handled per cycle, so
// ordinary writes (one run per beat) stream at a beat per cycle.
//
// Inputs must be full-width INCR bursts (the core issues nothing else; asserted).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi_wr_split #(
  parameter int unsigned DataWidth = 128,
  parameter int unsigned IdWidth = 4,
  parameter int unsigned AddrWidth = 64,
  /// Largest piece in bytes: a power of two, DataWidth/8 .. 4096 (max_bytes_i is clamped to it).
  parameter int unsigned MaxPieceBytes = 512,
  /// Beats the buffer holds; at least one largest piece (two for full throughput).
  parameter int unsigned BufferBeats = 2 * MaxPieceBytes / (DataWidth / 8),
  /// Input bursts whose response is still awaited.
  parameter int unsigned MaxBursts = 8,
  /// AXI ID of every output burst.
  parameter logic [IdWidth-1:0] OutId = '0
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  /// Pieces never cross a multiple of this many bytes (power of two >= DataWidth/8); 0 or more
  /// than MaxPieceBytes means MaxPieceBytes.
  input  wire logic [12:0]            max_bytes_i,

  input  wire logic                   s_axi_awvalid,
  output      logic                   s_axi_awready,
  input  wire logic [IdWidth-1:0]     s_axi_awid,
  input  wire logic [AddrWidth-1:0]   s_axi_awaddr,
  input  wire logic [7:0]             s_axi_awlen,
  input  wire logic [2:0]             s_axi_awsize,
  input  wire logic [1:0]             s_axi_awburst,
  input  wire logic                   s_axi_wvalid,
  output      logic                   s_axi_wready,
  input  wire logic [DataWidth-1:0]   s_axi_wdata,
  input  wire logic [DataWidth/8-1:0] s_axi_wstrb,
  input  wire logic                   s_axi_wlast,
  output      logic                   s_axi_bvalid,
  input  wire logic                   s_axi_bready,
  output      logic [IdWidth-1:0]     s_axi_bid,
  output      logic [1:0]             s_axi_bresp,

  output      logic                   m_axi_awvalid,
  input  wire logic                   m_axi_awready,
  output      logic [IdWidth-1:0]     m_axi_awid,
  output      logic [AddrWidth-1:0]   m_axi_awaddr,
  output      logic [7:0]             m_axi_awlen,
  output      logic [2:0]             m_axi_awsize,
  output      logic [1:0]             m_axi_awburst,
  /// Enabled bytes of the piece (they are contiguous from m_axi_awaddr).
  output      logic [12:0]            m_axi_awuser,
  output      logic                   m_axi_wvalid,
  input  wire logic                   m_axi_wready,
  output      logic [DataWidth-1:0]   m_axi_wdata,
  output      logic [DataWidth/8-1:0] m_axi_wstrb,
  output      logic                   m_axi_wlast,
  input  wire logic                   m_axi_bvalid,
  output      logic                   m_axi_bready,
  input  wire logic [IdWidth-1:0]     m_axi_bid,
  input  wire logic [1:0]             m_axi_bresp
);

  localparam int unsigned Bytes = DataWidth / 8;
  localparam int unsigned LaneBits = $clog2(Bytes);
  localparam int unsigned BeatBits = 9;     // up to 256 beats per piece
  localparam int unsigned CountBits = 12;   // pieces per input burst (<= 256 beats x Bytes/2 runs)

  typedef struct packed {
    logic [AddrWidth-1:0] addr;   // first enabled byte
    logic [12:0]          bytes;
    logic [BeatBits-1:0]  beats;
  } piece_t;

  typedef struct packed {
    logic [IdWidth-1:0]   id;
    logic [CountBits-1:0] pieces;
  } burst_t;

  // ------------------------------------------------------------------ runtime piece limit
  logic [12:0] limit;
  always_comb begin
    limit = 13'(MaxPieceBytes);
    if (max_bytes_i != '0 && max_bytes_i < 13'(MaxPieceBytes)) limit = max_bytes_i;
    if (limit < 13'(Bytes)) limit = 13'(Bytes);
  end

  // ------------------------------------------------------------------ analyser state
  logic                   busy_q, busy_d;          // an input burst's AW was taken
  logic [IdWidth-1:0]     id_q, id_d;
  logic [AddrWidth-1:0]   beat_addr_q, beat_addr_d;  // address of the current input beat
  logic                   beat_started_q, beat_started_d;
  logic [Bytes-1:0]       rem_q, rem_d;            // strobes of the current beat not yet handled
  logic                   open_q, open_d;          // a piece is being collected
  piece_t                 piece_q, piece_d;
  logic [AddrWidth-1:0]   piece_end_q, piece_end_d;  // address after its last byte
  logic [CountBits-1:0]   count_q, count_d;        // pieces closed for this input burst

  // Lowest run of enabled bytes in the strobes still to handle.
  logic [Bytes-1:0] rem, lowest, run_mask;
  logic [Bytes:0]   carry_sum;
  logic [LaneBits-1:0] run_lo;
  logic [LaneBits:0]   run_len;
  always_comb begin
    rem       = beat_started_q ? rem_q : s_axi_wstrb;
    lowest    = rem & (~rem + 1'b1);
    carry_sum = {1'b0, rem} + {1'b0, lowest};
    run_mask  = rem & ~carry_sum[Bytes-1:0];
    run_lo    = '0;
    run_len   = '0;
    for (int unsigned i = 0; i < Bytes; i++) begin
      if (lowest[i]) run_lo = LaneBits'(i);
      run_len += (LaneBits + 1)'(run_mask[i]);
    end
  end

  logic [AddrWidth-1:0] run_addr, run_end, next_beat_addr;
  logic                 run_at_top, next_at_limit, run_at_limit, grows;
  assign run_addr       = beat_addr_q + AddrWidth'(run_lo);
  assign run_end        = run_addr + AddrWidth'(run_len);
  assign run_at_top     = run_mask[Bytes-1];
  assign next_beat_addr = beat_addr_q + AddrWidth'(Bytes);
  assign next_at_limit  = (next_beat_addr[12:0] & (limit - 1'b1)) == '0;
  assign run_at_limit   = (run_addr[12:0] & (limit - 1'b1)) == '0;
  assign grows        = open_q && (piece_end_q == run_addr) && !run_at_limit;

  // ------------------------------------------------------------------ buffers
  logic   buf_in_valid, buf_in_ready, buf_out_valid, buf_out_ready;
  logic [DataWidth-1:0] buf_out_data;
  logic [Bytes-1:0]     buf_out_strb;
  logic   pc_in_valid, pc_in_ready, pc_out_valid, pc_out_ready;
  piece_t pc_in, pc_out;
  logic   bu_in_valid, bu_in_ready, bu_out_valid, bu_out_ready;
  burst_t bu_in, bu_out;
  logic   wc_in_valid, wc_in_ready, wc_out_valid, wc_out_ready;
  logic [BeatBits-1:0] wc_out;

  // ------------------------------------------------------------------ analyser
  logic close_only;  // this cycle closes the open piece without handling a run
  logic handle_run;  // this cycle handles the lowest run of the current beat
  logic close_new;   // ... and closes the piece it ends up in
  logic beat_done, burst_done;

  always_comb begin
    busy_d         = busy_q;
    id_d           = id_q;
    beat_addr_d    = beat_addr_q;
    beat_started_d = beat_started_q;
    rem_d          = rem_q;
    open_d         = open_q;
    piece_d        = piece_q;
    piece_end_d    = piece_end_q;
    count_d        = count_q;

    s_axi_awready = !busy_q;
    s_axi_wready  = 1'b0;
    buf_in_valid  = 1'b0;
    pc_in_valid   = 1'b0;
    pc_in         = piece_q;
    bu_in_valid   = 1'b0;
    bu_in         = '{id: id_q, pieces: count_q};
    close_only    = 1'b0;
    handle_run    = 1'b0;
    close_new     = 1'b0;
    beat_done     = 1'b0;
    burst_done    = 1'b0;

    if (s_axi_awvalid && s_axi_awready) begin
      busy_d         = 1'b1;
      id_d           = s_axi_awid;
      beat_addr_d    = {s_axi_awaddr[AddrWidth-1:LaneBits], LaneBits'(0)};
      beat_started_d = 1'b0;
      count_d        = '0;
    end else if (busy_q && s_axi_wvalid) begin
      if (rem != '0 && open_q && !grows) begin
        // The run starts a new piece: close the open one first (one piece closes per cycle).
        close_only = 1'b1;
      end else if (rem != '0) begin
        handle_run = 1'b1;
        // The piece cannot grow past this run when the run stops short of the beat's end, the
        // next beat starts at a limit boundary, or this is the burst's last beat.
        close_new = !run_at_top || next_at_limit || (s_axi_wlast && (rem & ~run_mask) == '0);
      end
      beat_done  = handle_run ? ((rem & ~run_mask) == '0) : (rem == '0);
      burst_done = beat_done && s_axi_wlast;
      // The burst's last beat ends with a piece still open (it ended at the top of an earlier
      // beat and this beat had nothing to add): close it now.
      if (burst_done && !handle_run && open_q) close_only = 1'b1;

      if (close_only) begin
        pc_in_valid = 1'b1;
        pc_in       = piece_q;
      end else if (handle_run) begin
        buf_in_valid = 1'b1;
        if (close_new) begin
          pc_in_valid = 1'b1;
          pc_in = grows ? '{addr: piece_q.addr, bytes: piece_q.bytes + 13'(run_len), beats: piece_q.beats + 1'b1}
                          : '{addr: run_addr, bytes: 13'(run_len), beats: BeatBits'(1)};
        end
      end
      if (burst_done) bu_in_valid = 1'b1;

      // Commit only when every FIFO this cycle writes has room; otherwise retry next cycle.
      if ((!buf_in_valid || buf_in_ready) && (!pc_in_valid || pc_in_ready) && (!bu_in_valid || bu_in_ready)) begin
        if (pc_in_valid) count_d = count_q + 1'b1;
        bu_in.pieces = count_q + CountBits'(pc_in_valid);
        if (close_only) begin
          open_d = 1'b0;
        end else if (handle_run) begin
          if (grows) begin
            piece_d.bytes = piece_q.bytes + 13'(run_len);
            piece_d.beats = piece_q.beats + 1'b1;
          end else begin
            piece_d = '{addr: run_addr, bytes: 13'(run_len), beats: BeatBits'(1)};
          end
          piece_end_d = run_end;
          open_d      = !close_new;
        end
        if (handle_run) begin
          rem_d          = rem & ~run_mask;
          beat_started_d = !beat_done;
        end else if (beat_done) begin
          beat_started_d = 1'b0;
        end
        if (beat_done) begin
          s_axi_wready   = 1'b1;
          beat_addr_d    = next_beat_addr;
          beat_started_d = 1'b0;
        end
        if (burst_done) busy_d = 1'b0;
      end else begin
        buf_in_valid = 1'b0;
        pc_in_valid  = 1'b0;
        bu_in_valid  = 1'b0;
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      busy_q         <= 1'b0;
      id_q           <= '0;
      beat_addr_q    <= '0;
      beat_started_q <= 1'b0;
      rem_q          <= '0;
      open_q         <= 1'b0;
      piece_q        <= '0;
      piece_end_q    <= '0;
      count_q        <= '0;
    end else begin
      busy_q         <= busy_d;
      id_q           <= id_d;
      beat_addr_q    <= beat_addr_d;
      beat_started_q <= beat_started_d;
      rem_q          <= rem_d;
      open_q         <= open_d;
      piece_q        <= piece_d;
      piece_end_q    <= piece_end_d;
      count_q        <= count_d;
    end
  end

  // Beats of pieces (data and the strobes of one run).
  sgpu_fifo #(.Width(DataWidth + Bytes), .Depth(BufferBeats)) u_beats (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (buf_in_valid),
    .in_ready_o (buf_in_ready),
    .in_data_i  ({s_axi_wdata, run_mask}),
    .out_valid_o(buf_out_valid),
    .out_ready_i(buf_out_ready),
    .out_data_o ({buf_out_data, buf_out_strb}),
    .count_o    ()
  );

  // Complete pieces waiting for their AW.
  sgpu_fifo #(.Width($bits(piece_t)), .Depth(4)) u_pieces (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (pc_in_valid),
    .in_ready_o (pc_in_ready),
    .in_data_i  (pc_in),
    .out_valid_o(pc_out_valid),
    .out_ready_i(pc_out_ready),
    .out_data_o (pc_out),
    .count_o    ()
  );

  // Input bursts and how many pieces each became, waiting for their responses.
  sgpu_fifo #(.Width($bits(burst_t)), .Depth(MaxBursts)) u_bursts (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (bu_in_valid),
    .in_ready_o (bu_in_ready),
    .in_data_i  (bu_in),
    .out_valid_o(bu_out_valid),
    .out_ready_i(bu_out_ready),
    .out_data_o (bu_out),
    .count_o    ()
  );

  // ------------------------------------------------------------------ AW: one per piece
  assign m_axi_awvalid = pc_out_valid && wc_in_ready;
  assign m_axi_awid    = OutId;
  assign m_axi_awaddr  = pc_out.addr;
  assign m_axi_awlen   = 8'(pc_out.beats - 1'b1);
  assign m_axi_awsize  = 3'(LaneBits);
  assign m_axi_awburst = sgpu_pkg::AxiBurstIncr;
  assign m_axi_awuser  = pc_out.bytes;
  assign pc_out_ready  = m_axi_awready && wc_in_ready;
  assign wc_in_valid   = pc_out_valid && m_axi_awready;

  // Beat counts of pieces whose AW went out: W follows its AW.
  sgpu_fifo #(.Width(BeatBits), .Depth(4)) u_wcount (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (wc_in_valid),
    .in_ready_o (wc_in_ready),
    .in_data_i  (pc_out.beats),
    .out_valid_o(wc_out_valid),
    .out_ready_i(wc_out_ready),
    .out_data_o (wc_out),
    .count_o    ()
  );

  // ------------------------------------------------------------------ W
  logic [BeatBits-1:0] wbeat_q;
  assign m_axi_wvalid  = wc_out_valid && buf_out_valid;
  assign m_axi_wdata   = buf_out_data;
  assign m_axi_wstrb   = buf_out_strb;
  assign m_axi_wlast   = (wbeat_q == wc_out - 1'b1);
  assign buf_out_ready = wc_out_valid && m_axi_wready;
  assign wc_out_ready  = buf_out_valid && m_axi_wready && m_axi_wlast;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) wbeat_q <= '0;
    else if (m_axi_wvalid && m_axi_wready) wbeat_q <= m_axi_wlast ? '0 : wbeat_q + 1'b1;
  end

  // ------------------------------------------------------------------ B: one per input burst
  // Piece responses are taken as they come, even before their burst has been fully split (its
  // record is pushed at its last beat): they all belong to the oldest unanswered burst. Only
  // when that burst is complete and its B waits are further responses held back.
  logic [CountBits-1:0] bseen_q;
  logic [1:0]           bworst_q;
  logic                 head_done;
  assign head_done    = bu_out_valid && bseen_q == bu_out.pieces;
  assign m_axi_bready = !head_done;
  assign s_axi_bvalid = head_done;
  assign s_axi_bid    = bu_out.id;
  assign s_axi_bresp  = bworst_q;
  assign bu_out_ready = head_done && s_axi_bready;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      bseen_q  <= '0;
      bworst_q <= sgpu_pkg::AxiRespOkay;
    end else if (bu_out_ready) begin
      bseen_q  <= '0;
      bworst_q <= sgpu_pkg::AxiRespOkay;
    end else if (m_axi_bvalid && m_axi_bready) begin
      bseen_q  <= bseen_q + 1'b1;
      if (m_axi_bresp > bworst_q) bworst_q <= m_axi_bresp;
    end
  end

  // Beats are counted to wlast (awlen is redundant); the first beat's address is beat aligned;
  // the carry out of the run search is not needed (a run to the top byte shows in run_mask).
  logic unused;
  assign unused = ^{s_axi_awaddr[LaneBits-1:0], s_axi_awlen, carry_sum[Bytes]};

  // Elaboration-time checks.
  `SGPU_ASSERT_STATIC(g_bad_piece,
                     MaxPieceBytes >= Bytes && MaxPieceBytes <= 4096 && (MaxPieceBytes & (MaxPieceBytes - 1)) == 0,
                     "MaxPieceBytes must be a power of two between DataWidth/8 and 4096")
  `SGPU_ASSERT_STATIC(g_bad_buffer, BufferBeats >= MaxPieceBytes / Bytes,
                     "BufferBeats must hold at least one largest piece")

  `SGPU_ASSERT(FullWidthIncr,
      s_axi_awvalid |-> (s_axi_awsize == 3'(LaneBits) && s_axi_awburst == sgpu_pkg::AxiBurstIncr))
  `SGPU_ASSERT(ClosedAtBurstEnd, !busy_q |-> !open_q)
  `SGPU_ASSERT(NoExtraResponses, bu_out_valid |-> bseen_q <= bu_out.pieces)
  `SGPU_ASSERT(InOrderIds, m_axi_bvalid |-> m_axi_bid == OutId)

endmodule

`default_nettype wire
