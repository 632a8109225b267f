// The core's host-memory port on a 7-series board: AXI4 reads and writes become PCIe memory
// requests on the user port of the LitePCIe transaction layer (gen_tlp_core.py).
//
// Reads: a burst is split at Max_Read_Request_Size boundaries (at most 512 bytes, LitePCIe's
// completion buffers) into beat-aligned requests; one is issued whenever LitePCIe has a free
// tag (dma_rd_credit), so as many reads are in flight as it has tags. Completions come back in
// request order (LitePCIe reorders by tag) and become R beats; an error completion (UR/CA)
// turns the rest of its request into SLVERR beats.
//
// Writes arrive from sgpu_axi_wr_split: each burst is one contiguous run of awuser bytes that
// fits one TLP. It becomes one memory write whose first/last byte enables and realigned
// payload (the first dword of the run first) say exactly which bytes change. Writes are
// posted; B is returned when the TLP has left for the hard block (s_axis_tx), so a fence the
// core writes before raising its interrupt is on the link before the MSI is requested.
//
// Refused, with an error response and nothing sent: addresses at or above 2^AddrBits (DECERR:
// beyond the bridge's reach), and any request while the host has not enabled bus mastering, or
// a burst that is not full-width INCR (SLVERR).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_s7_dma #(
  /// AXI and TLP data width (64 or 128).
  parameter int unsigned DataWidth = 128,
  parameter int unsigned IdWidth = 4,
  /// Bus address bits the bridge reaches (32 or 64: the TLP core's address width).
  parameter int unsigned AddrBits = 64,
  /// Read requests LitePCIe keeps in flight (its tags); sizes the request tracking FIFO.
  parameter int unsigned Tags = 8
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,

  /// Requester ID {bus, device, function} from the hard block.
  input  wire logic [15:0]            requester_id_i,
  /// Command register bit 2 (Bus Master Enable).
  input  wire logic                   bus_master_i,
  /// Max_Read_Request_Size in bytes (128 .. 4096).
  input  wire logic [12:0]            max_read_bytes_i,

  input  wire logic                   s_axi_awvalid,
  output      logic                   s_axi_awready,
  input  wire logic [IdWidth-1:0]     s_axi_awid,
  input  wire logic [63:0]            s_axi_awaddr,
  input  wire logic [7:0]             s_axi_awlen,
  input  wire logic [2:0]             s_axi_awsize,
  input  wire logic [1:0]             s_axi_awburst,
  /// Bytes of the run (sgpu_axi_wr_split), contiguous from s_axi_awaddr.
  input  wire logic [12:0]            s_axi_awuser,
  input  wire logic                   s_axi_wvalid,
  output      logic                   s_axi_wready,
  input  wire logic [DataWidth-1:0]   s_axi_wdata,
  input  wire logic [DataWidth/8-1:0] s_axi_wstrb,
  input  wire logic                   s_axi_wlast,
  output      logic                   s_axi_bvalid,
  input  wire logic                   s_axi_bready,
  output      logic [IdWidth-1:0]     s_axi_bid,
  output      logic [1:0]             s_axi_bresp,
  input  wire logic                   s_axi_arvalid,
  output      logic                   s_axi_arready,
  input  wire logic [IdWidth-1:0]     s_axi_arid,
  input  wire logic [63:0]            s_axi_araddr,
  input  wire logic [7:0]             s_axi_arlen,
  input  wire logic [2:0]             s_axi_arsize,
  input  wire logic [1:0]             s_axi_arburst,
  output      logic                   s_axi_rvalid,
  input  wire logic                   s_axi_rready,
  output      logic [IdWidth-1:0]     s_axi_rid,
  output      logic [DataWidth-1:0]   s_axi_rdata,
  output      logic [1:0]             s_axi_rresp,
  output      logic                   s_axi_rlast,

  // LitePCIe user master port (requests out, completions in).
  output      logic                   dma_req_valid,
  input  wire logic                   dma_req_ready,
  output      logic                   dma_req_first,
  output      logic                   dma_req_last,
  output      logic [15:0]            dma_req_req_id,
  output      logic                   dma_req_we,
  output      logic [63:0]            dma_req_adr,
  output      logic [9:0]             dma_req_len,
  output      logic [DataWidth-1:0]   dma_req_dat,
  output      logic [7:0]             dma_req_user_id,
  output      logic [3:0]             dma_req_first_be,
  output      logic [3:0]             dma_req_last_be,
  output      logic [DataWidth/8-1:0] dma_req_dat_be,
  input  wire logic                   dma_cpl_valid,
  output      logic                   dma_cpl_ready,
  input  wire logic                   dma_cpl_last,
  input  wire logic                   dma_cpl_err,
  input  wire logic [DataWidth-1:0]   dma_cpl_dat,
  input  wire logic                   dma_rd_credit,

  // The hard block's transmit stream, observed (to know when a write TLP has left).
  input  wire logic                   tx_valid_i,
  input  wire logic                   tx_ready_i,
  input  wire logic                   tx_last_i,
  input  wire logic [31:0]            tx_dw0_i
);

  localparam int unsigned Bytes = DataWidth / 8;
  localparam int unsigned LaneBits = $clog2(Bytes);
  localparam int unsigned Dws = DataWidth / 32;
  localparam int unsigned DwBits = $clog2(Dws);
  localparam int unsigned BeatBits = 9;
  localparam int unsigned MaxReadBytes = 512;  // LitePCIe's completion buffers per tag

  // Address bits the bridge cannot carry: a request with any of them set is refused.
  localparam logic [63:0] BeyondReach = (AddrBits >= 64) ? 64'h0 : ~((64'h1 << AddrBits) - 1);

  // ================================================================== reads
  typedef struct packed {
    logic [IdWidth-1:0]  id;
    logic [BeatBits-1:0] beats;   // R beats this entry produces
    logic                last;    // the burst's last entry (rlast on its last beat)
    logic [1:0]          refuse;  // != OKAY: no request was sent; answer every beat with it
  } rd_track_t;

  logic                 ar_busy_q, ar_busy_d;
  logic [IdWidth-1:0]   ar_id_q, ar_id_d;
  logic [63:0]          ar_addr_q, ar_addr_d;     // next request address (beat aligned)
  logic [BeatBits-1:0]  ar_left_q, ar_left_d;     // beats still to request
  logic [1:0]           ar_refuse_q, ar_refuse_d;

  logic [12:0] rd_limit;
  always_comb begin
    rd_limit = max_read_bytes_i;
    if (rd_limit > 13'(MaxReadBytes) || rd_limit == '0) rd_limit = 13'(MaxReadBytes);
    if (rd_limit < 13'(Bytes)) rd_limit = 13'(Bytes);
  end

  // This request: up to the next rd_limit boundary, at most the beats left.
  logic [12:0]         to_boundary;
  logic [BeatBits-1:0] req_beats;
  always_comb begin
    to_boundary = rd_limit - (ar_addr_q[12:0] & (rd_limit - 1'b1));
    req_beats   = BeatBits'(to_boundary >> LaneBits);
    if (req_beats > ar_left_q) req_beats = ar_left_q;
  end

  logic      trk_in_valid, trk_in_ready, trk_out_valid, trk_out_ready;
  rd_track_t trk_in, trk_out;
  logic      rd_req_valid, rd_req_fire;

  always_comb begin
    ar_busy_d   = ar_busy_q;
    ar_id_d     = ar_id_q;
    ar_addr_d   = ar_addr_q;
    ar_left_d   = ar_left_q;
    ar_refuse_d = ar_refuse_q;
    s_axi_arready = !ar_busy_q;
    trk_in_valid  = 1'b0;
    trk_in        = '{id: ar_id_q, beats: req_beats, last: req_beats == ar_left_q, refuse: ar_refuse_q};

    if (s_axi_arvalid && s_axi_arready) begin
      ar_busy_d = 1'b1;
      ar_id_d   = s_axi_arid;
      ar_addr_d = {s_axi_araddr[63:LaneBits], LaneBits'(0)};
      ar_left_d = BeatBits'(s_axi_arlen) + 1'b1;
      ar_refuse_d = sgpu_pkg::AxiRespOkay;
      if ((s_axi_araddr & BeyondReach) != '0) ar_refuse_d = sgpu_pkg::AxiRespDecErr;
      else if (!bus_master_i || s_axi_arsize != 3'(LaneBits) || s_axi_arburst != sgpu_pkg::AxiBurstIncr)
        ar_refuse_d = sgpu_pkg::AxiRespSlvErr;
    end else if (ar_busy_q) begin
      if (ar_refuse_q != sgpu_pkg::AxiRespOkay) begin
        // Nothing goes out: one tracking entry answers the whole burst.
        trk_in = '{id: ar_id_q, beats: ar_left_q, last: 1'b1, refuse: ar_refuse_q};
        trk_in_valid = 1'b1;
        if (trk_in_ready) ar_busy_d = 1'b0;
      end else begin
        trk_in_valid = rd_req_fire;
        if (rd_req_fire) begin
          ar_addr_d = ar_addr_q + (64'(req_beats) << LaneBits);
          ar_left_d = ar_left_q - req_beats;
          if (req_beats == ar_left_q) ar_busy_d = 1'b0;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ar_busy_q   <= 1'b0;
      ar_id_q     <= '0;
      ar_addr_q   <= '0;
      ar_left_q   <= '0;
      ar_refuse_q <= '0;
    end else begin
      ar_busy_q   <= ar_busy_d;
      ar_id_q     <= ar_id_d;
      ar_addr_q   <= ar_addr_d;
      ar_left_q   <= ar_left_d;
      ar_refuse_q <= ar_refuse_d;
    end
  end

  // A read request is offered when LitePCIe has a tag for it and its tracking entry has room.
  assign rd_req_valid = ar_busy_q && ar_refuse_q == sgpu_pkg::AxiRespOkay && dma_rd_credit && trk_in_ready;

  sgpu_fifo #(.Width($bits(rd_track_t)), .Depth(2 * Tags)) u_rd_track (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (trk_in_valid),
    .in_ready_o (trk_in_ready),
    .in_data_i  (trk_in),
    .out_valid_o(trk_out_valid),
    .out_ready_i(trk_out_ready),
    .out_data_o (trk_out),
    .count_o    ()
  );

  // R: completion beats of the head entry, or error beats for refused/failed requests.
  logic [BeatBits-1:0] r_beat_q;
  logic                r_fill_q;   // an error completion ended this request: fill with SLVERR
  logic                r_last_beat, r_fire, cpl_err_beat;

  assign r_last_beat  = (r_beat_q == trk_out.beats - 1'b1);
  assign cpl_err_beat = dma_cpl_valid && dma_cpl_err;

  always_comb begin
    s_axi_rvalid  = 1'b0;
    s_axi_rid     = trk_out.id;
    s_axi_rdata   = dma_cpl_dat;
    s_axi_rresp   = sgpu_pkg::AxiRespOkay;
    s_axi_rlast   = trk_out.last && r_last_beat;
    dma_cpl_ready = 1'b0;
    if (trk_out_valid) begin
      if (trk_out.refuse != sgpu_pkg::AxiRespOkay || r_fill_q) begin
        s_axi_rvalid = 1'b1;
        s_axi_rdata  = '0;
        s_axi_rresp  = r_fill_q ? sgpu_pkg::AxiRespSlvErr : trk_out.refuse;
      end else if (cpl_err_beat) begin
        dma_cpl_ready = 1'b1;  // the error completion carries no data: consume it, then fill
      end else begin
        s_axi_rvalid  = dma_cpl_valid;
        dma_cpl_ready = s_axi_rready;
      end
    end
  end

  assign r_fire        = s_axi_rvalid && s_axi_rready;
  assign trk_out_ready = r_fire && r_last_beat;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      r_beat_q <= '0;
      r_fill_q <= 1'b0;
    end else begin
      if (r_fire) r_beat_q <= r_last_beat ? '0 : r_beat_q + 1'b1;
      if (trk_out_ready) r_fill_q <= 1'b0;
      else if (trk_out_valid && trk_out.refuse == sgpu_pkg::AxiRespOkay && !r_fill_q && cpl_err_beat) r_fill_q <= 1'b1;
    end
  end

  // ================================================================== writes
  typedef struct packed {
    logic [IdWidth-1:0] id;
    logic [1:0]         resp;
    logic               sent;   // a TLP went out: answer when it has left
  } wr_done_t;

  logic                 w_busy_q, w_busy_d;
  logic [IdWidth-1:0]   w_id_q, w_id_d;
  logic [63:0]          w_addr_q, w_addr_d;        // dword-aligned TLP address
  logic [9:0]           w_len_q, w_len_d;          // dwords
  logic [3:0]           w_fbe_q, w_fbe_d, w_lbe_q, w_lbe_d;
  logic [DwBits-1:0]    w_shift_q, w_shift_d;      // dword of the first beat the payload starts at
  logic [BeatBits-1:0]  w_in_left_q, w_in_left_d;  // W beats still to take
  logic [BeatBits-1:0]  w_out_left_q, w_out_left_d;  // request beats still to send
  logic                 w_first_q, w_first_d;      // next request beat is the first
  logic                 w_have_q, w_have_d;        // prev_q holds a beat (shifted writes)
  logic [DataWidth-1:0] w_prev_q, w_prev_d;
  logic [1:0]           w_refuse_q, w_refuse_d;

  logic     done_in_valid, done_in_ready, done_out_valid, done_out_ready;
  wr_done_t done_in, done_out;

  // Header of the write that an AW describes.
  logic [63:0] aw_end;
  logic [9:0]  aw_len;
  logic [3:0]  aw_first_mask, aw_last_mask;
  always_comb begin
    aw_end        = s_axi_awaddr + 64'(s_axi_awuser) - 1'b1;  // last byte
    aw_len        = 10'((aw_end[63:2] - s_axi_awaddr[63:2]) + 1'b1);
    aw_first_mask = 4'hf << s_axi_awaddr[1:0];
    aw_last_mask  = 4'hf >> (2'd3 - aw_end[1:0]);
  end

  logic [2*DataWidth-1:0] w_pair;
  logic [DataWidth-1:0]   w_out_data;
  logic                   w_out_valid, w_take, w_fire, w_out_last;
  logic [DataWidth/8-1:0] w_out_be;
  logic [9:0]             w_tail_dws;

  always_comb begin
    // Shifted payload: the dword at the run's start first.
    w_pair     = {s_axi_wdata, w_prev_q};
    if (w_in_left_q == '0) w_pair = {{DataWidth{1'b0}}, w_prev_q};
    w_out_data = (w_shift_q == '0) ? s_axi_wdata : DataWidth'(w_pair >> (32 * w_shift_q));
    w_out_last = (w_out_left_q == BeatBits'(1));
    // Valid dwords of the last beat (the payload starts at its first beat's dword 0).
    w_tail_dws = ((w_len_q - 1'b1) & 10'(Dws - 1)) + 1'b1;
    w_out_be   = '1;
    if (w_out_last && w_tail_dws < 10'(Dws)) w_out_be = (DataWidth/8)'((1 << (4 * w_tail_dws)) - 1);
  end

  // Which beat the write path offers now, and whether it takes a W beat with it.
  always_comb begin
    w_out_valid = 1'b0;
    w_take      = 1'b0;
    if (w_busy_q && w_refuse_q == sgpu_pkg::AxiRespOkay && done_in_ready) begin
      if (w_shift_q == '0) begin
        w_out_valid = s_axi_wvalid;
        w_take      = 1'b1;
      end else if (!w_have_q) begin
        w_take = 1'b1;  // prime prev_q: no output
      end else if (w_in_left_q != '0) begin
        w_out_valid = s_axi_wvalid;
        w_take      = 1'b1;
      end else begin
        w_out_valid = 1'b1;  // tail: only what prev_q still holds
      end
    end
  end

  // ------------------------------------------------------------------ request arbitration
  // A request stays on the port, unchanged, until LitePCIe takes it (its controller decides on
  // the first cycle it sees a request). Reads and writes alternate when both wait.
  typedef enum logic [1:0] {GrantNone, GrantRead, GrantWrite} grant_e;
  grant_e grant_q, grant_d, sel;
  logic   prefer_write_q;

  always_comb begin
    sel = grant_q;
    if (grant_q == GrantNone) begin
      if (w_out_valid && (prefer_write_q || !rd_req_valid)) sel = GrantWrite;
      else if (rd_req_valid) sel = GrantRead;
    end
  end

  assign rd_req_fire = (sel == GrantRead) && dma_req_ready;
  assign w_fire      = (sel == GrantWrite) && w_out_valid && dma_req_ready;

  always_comb begin
    dma_req_valid    = 1'b0;
    dma_req_first    = 1'b1;
    dma_req_last     = 1'b1;
    dma_req_req_id   = requester_id_i;
    dma_req_we       = 1'b0;
    dma_req_adr      = ar_addr_q;
    dma_req_len      = 10'((13'(req_beats) << LaneBits) >> 2);
    dma_req_dat      = '0;
    dma_req_user_id  = '0;
    dma_req_first_be = 4'hf;
    dma_req_last_be  = (dma_req_len == 10'd1) ? 4'h0 : 4'hf;
    dma_req_dat_be   = '0;
    if (sel == GrantRead) begin
      dma_req_valid = 1'b1;
    end else if (sel == GrantWrite) begin
      dma_req_valid    = w_out_valid;
      dma_req_first    = w_first_q;
      dma_req_last     = w_out_last;
      dma_req_we       = 1'b1;
      dma_req_adr      = w_addr_q;
      dma_req_len      = w_len_q;
      dma_req_dat      = w_out_data;
      dma_req_first_be = w_fbe_q;
      dma_req_last_be  = w_lbe_q;
      dma_req_dat_be   = w_out_be;
    end
  end

  always_comb begin
    grant_d = grant_q;
    if (sel == GrantRead) grant_d = rd_req_fire ? GrantNone : GrantRead;
    else if (sel == GrantWrite) grant_d = (w_fire && w_out_last) ? GrantNone : GrantWrite;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      grant_q        <= GrantNone;
      prefer_write_q <= 1'b0;
    end else begin
      grant_q <= grant_d;
      if (rd_req_fire) prefer_write_q <= 1'b1;
      else if (w_fire && w_out_last) prefer_write_q <= 1'b0;
    end
  end

  // ------------------------------------------------------------------ write state
  always_comb begin
    w_busy_d     = w_busy_q;
    w_id_d       = w_id_q;
    w_addr_d     = w_addr_q;
    w_len_d      = w_len_q;
    w_fbe_d      = w_fbe_q;
    w_lbe_d      = w_lbe_q;
    w_shift_d    = w_shift_q;
    w_in_left_d  = w_in_left_q;
    w_out_left_d = w_out_left_q;
    w_first_d    = w_first_q;
    w_have_d     = w_have_q;
    w_prev_d     = w_prev_q;
    w_refuse_d   = w_refuse_q;
    s_axi_awready = !w_busy_q;
    s_axi_wready  = 1'b0;
    done_in_valid = 1'b0;
    done_in       = '{id: w_id_q, resp: w_refuse_q, sent: 1'b0};

    if (s_axi_awvalid && s_axi_awready) begin
      w_busy_d     = 1'b1;
      w_id_d       = s_axi_awid;
      w_addr_d     = {s_axi_awaddr[63:2], 2'b00};
      w_len_d      = aw_len;
      w_fbe_d      = (aw_len == 10'd1) ? (aw_first_mask & aw_last_mask) : aw_first_mask;
      w_lbe_d      = (aw_len == 10'd1) ? 4'h0 : aw_last_mask;
      w_shift_d    = s_axi_awaddr[LaneBits-1:2];
      w_in_left_d  = BeatBits'(s_axi_awlen) + 1'b1;
      w_out_left_d = BeatBits'((aw_len + 10'(Dws - 1)) >> DwBits);
      w_first_d    = 1'b1;
      w_have_d     = 1'b0;
      w_refuse_d   = sgpu_pkg::AxiRespOkay;
      if ((s_axi_awaddr & BeyondReach) != '0) w_refuse_d = sgpu_pkg::AxiRespDecErr;
      else if (!bus_master_i || s_axi_awsize != 3'(LaneBits) || s_axi_awburst != sgpu_pkg::AxiBurstIncr ||
               s_axi_awuser == '0)
        w_refuse_d = sgpu_pkg::AxiRespSlvErr;
    end else if (w_busy_q && w_refuse_q != sgpu_pkg::AxiRespOkay) begin
      // Refused: take the data, send nothing, answer once the last beat is in.
      s_axi_wready = done_in_ready;
      if (s_axi_wvalid && s_axi_wlast && done_in_ready) begin
        done_in_valid = 1'b1;
        w_busy_d      = 1'b0;
      end
    end else if (w_busy_q) begin
      // A W beat goes in either with an output beat or to prime prev_q.
      if (w_take && (w_out_valid ? w_fire : s_axi_wvalid)) begin
        s_axi_wready = 1'b1;
        w_prev_d     = s_axi_wdata;
        w_have_d     = 1'b1;
        w_in_left_d  = w_in_left_q - 1'b1;
      end
      if (w_fire) begin
        w_first_d    = 1'b0;
        w_out_left_d = w_out_left_q - 1'b1;
        if (w_out_last) begin
          done_in_valid = 1'b1;
          done_in.sent  = 1'b1;
          w_busy_d      = 1'b0;
        end
      end
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      w_busy_q     <= 1'b0;
      w_id_q       <= '0;
      w_addr_q     <= '0;
      w_len_q      <= '0;
      w_fbe_q      <= '0;
      w_lbe_q      <= '0;
      w_shift_q    <= '0;
      w_in_left_q  <= '0;
      w_out_left_q <= '0;
      w_first_q    <= 1'b0;
      w_have_q     <= 1'b0;
      w_prev_q     <= '0;
      w_refuse_q   <= '0;
    end else begin
      w_busy_q     <= w_busy_d;
      w_id_q       <= w_id_d;
      w_addr_q     <= w_addr_d;
      w_len_q      <= w_len_d;
      w_fbe_q      <= w_fbe_d;
      w_lbe_q      <= w_lbe_d;
      w_shift_q    <= w_shift_d;
      w_in_left_q  <= w_in_left_d;
      w_out_left_q <= w_out_left_d;
      w_first_q    <= w_first_d;
      w_have_q     <= w_have_d;
      w_prev_q     <= w_prev_d;
      w_refuse_q   <= w_refuse_d;
    end
  end

  sgpu_fifo #(.Width($bits(wr_done_t)), .Depth(8)) u_wr_done (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (done_in_valid),
    .in_ready_o (done_in_ready),
    .in_data_i  (done_in),
    .out_valid_o(done_out_valid),
    .out_ready_i(done_out_ready),
    .out_data_o (done_out),
    .count_o    ()
  );

  // ------------------------------------------------------------------ write TLPs leaving
  // Memory writes seen on the hard block's transmit stream (Fmt = with data, Type = memory)
  // that no B has been matched with yet. Only this module sends memory writes.
  logic       tx_in_pkt_q, tx_is_wr_q, tx_fire, tx_first_is_wr, tx_wr_left;
  logic [3:0] left_q;  // write TLPs that left and await their B (<= wr_done depth)

  assign tx_fire        = tx_valid_i && tx_ready_i;
  assign tx_first_is_wr = tx_dw0_i[30] && tx_dw0_i[28:24] == 5'b00000;
  assign tx_wr_left     = tx_fire && tx_last_i && (tx_in_pkt_q ? tx_is_wr_q : tx_first_is_wr);

  assign done_out_ready = done_out_valid && s_axi_bready && (!done_out.sent || left_q != '0 || tx_wr_left);
  assign s_axi_bvalid   = done_out_valid && (!done_out.sent || left_q != '0 || tx_wr_left);
  assign s_axi_bid      = done_out.id;
  assign s_axi_bresp    = done_out.resp;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      tx_in_pkt_q <= 1'b0;
      tx_is_wr_q  <= 1'b0;
      left_q      <= '0;
    end else begin
      if (tx_fire) begin
        tx_in_pkt_q <= !tx_last_i;
        if (!tx_in_pkt_q) tx_is_wr_q <= tx_first_is_wr;
      end
      left_q <= left_q + 4'(tx_wr_left) - 4'(done_out_ready && done_out.sent);
    end
  end

  // Runs are contiguous (sgpu_axi_wr_split): the byte enables come from awaddr and awuser, not
  // from the strobes. Completions are counted in beats, not by their packet boundaries.
  logic unused;
  assign unused = ^{s_axi_wstrb, dma_cpl_last, tx_dw0_i[31], tx_dw0_i[29], tx_dw0_i[23:0]};

  // Elaboration-time checks.
  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth == 64 || DataWidth == 128, "DataWidth must be 64 or 128")
  `SGPU_ASSERT_STATIC(g_bad_addr, AddrBits == 32 || AddrBits == 64, "AddrBits must be 32 or 64")

  // A run never spans more TLP payload than its beats hold.
  `SGPU_ASSERT(RunFitsBurst,
      (s_axi_awvalid && s_axi_awready && w_refuse_d == sgpu_pkg::AxiRespOkay) |->
      ((aw_len + 10'(Dws) - 1'b1) >> DwBits) <= 10'(s_axi_awlen) + 1'b1)
  `SGPU_ASSERT(WriteBeatsMatch,
      (w_fire && w_out_last) |-> (w_in_left_q == '0 || (w_in_left_q == BeatBits'(1) && w_take)))

endmodule

`default_nettype wire
