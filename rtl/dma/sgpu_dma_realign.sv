// Realigner of the DMA fetch engine (sgpu_dma_rd): turns the read beats of the issued bursts,
// in issue order, into the engine's output entries: data beats shifted so that the first
// requested byte is in lane 0, with every byte outside the request zeroed, and one status per
// request. A bus error ends its request with that error; the issuer is told to stop issuing it
// (cancel) and the rest of its beats are dropped. Bursts of one request are contiguous in bus
// address, so the shift is constant per request. The entries wait in a small output FIFO.
//
// Output beat k of a request = bytes [shift, BusBytes) of raw beat k, then bytes [0, shift) of
// raw beat k + 1; an unaligned request's tail may need one more output beat (flush).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_dma_realign
  import sgpu_dma_pkg::*;
#(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64,
  /// Width of the request sequence numbers.
  parameter int unsigned SeqWidth = 6,
  /// Output FIFO entries.
  parameter int unsigned OutDepth = 2,
  /// sgpu_dma_rd's burst descriptor {kind, err, len, len_zero, first, last, lo_lane, lo_zero,
  /// hi_lane, seq} and output entry {has_data, data, keep, last, has_status, err}.
  parameter type desc_t = logic,
  parameter type out_t = logic
) (
  input  wire logic                 clk_i,
  input  wire logic                 rst_ni,
  /// The engine is aborting: drop everything (and reset the realignment state).
  input  wire logic                 abort_i,

  /// Burst descriptors, in issue order (the descriptor FIFO's head).
  input  wire logic                 desc_valid_i,
  output      logic                 desc_pop_o,
  input  wire desc_t                desc_i,

  /// Read beats, in order (the read buffer's head); `last` only feeds an assertion.
  input  wire logic                 beat_valid_i,
  output      logic                 beat_pop_o,
  input  wire logic [DataWidth-1:0] beat_data_i,
  input  wire logic [1:0]           beat_resp_i,
  input  wire logic                 beat_last_i,

  /// The request with this sequence number failed: issue nothing more of it.
  output      logic                 cancel_valid_o,
  output      logic [SeqWidth-1:0]  cancel_seq_o,
  /// cancel_seq_o's next value (from registers: the issuer registers its compare with its
  /// segment FIFO's next head beside that head).
  output      logic [SeqWidth-1:0]  cancel_seq_next_o,

  /// Output entries towards the consumer.
  output      logic                 out_valid_o,
  input  wire logic                 out_ready_i,
  output      out_t                 out_o
);

  localparam int unsigned BusBytes = DataWidth / 8;
  localparam int unsigned LaneBits = $clog2(BusBytes);

  typedef logic [SeqWidth-1:0] seq_t;
  typedef logic [LaneBits-1:0] lane_t;

  logic [7:0]          beat_cnt_q, beat_cnt_d;
  logic                cnt_zero_q, cnt_zero_d;   // beat_cnt_q == 0: a burst's first beat
  logic                end_q, end_d;             // beat_cnt_q == desc_i.len (when !cnt_zero_q)
  lane_t               shift_q, shift_d;
  logic                shift_zero_q, shift_zero_d;  // shift_q == 0
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
  logic                ra_tail_spills;       // final beat: hi_lane + 1 > shift_q
  logic                ra_aligned;           // ra_shift == 0
  logic [DataWidth-1:0] ra_combined, ra_first_shifted;
  dma_err_e            ra_beat_err_code;

  assign cancel_valid_o = drop_q;
  assign cancel_seq_o   = drop_seq_q;
  // Outside a drop the sequence number follows the descriptor's, so a drop starts with it (as
  // when it was loaded only then) and its next value is a choice between two registers, not
  // behind the beat's error and the output FIFO's room. Read only with cancel_valid_o.
  assign drop_seq_d        = drop_q ? drop_seq_q : desc_i.seq;
  assign cancel_seq_next_o = drop_seq_d;

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

  // The burst's last beat, its first and the alignment are registered facts about the beat
  // count and the shift (or the descriptor's, on a burst's first beat), not compares of the
  // count with the descriptor: the decisions below (pops, pushes, credits) start one compare
  // earlier.
  assign ra_burst_end  = cnt_zero_q ? desc_i.len_zero : end_q;
  assign ra_final      = desc_i.last && ra_burst_end;
  assign ra_first_beat = desc_i.first && cnt_zero_q;
  assign ra_shift      = ra_first_beat ? desc_i.lo_lane : shift_q;
  assign ra_aligned    = ra_first_beat ? desc_i.lo_zero : shift_zero_q;
  assign ra_hi         = ra_final ? desc_i.hi_lane : lane_t'(BusBytes - 1);
  assign ra_hi_bytes   = (LaneBits + 1)'(ra_hi) + 1'b1;
  // On the final beat ra_hi_bytes = hi_lane + 1, so "ra_hi_bytes > shift_q" is this compare of
  // the descriptor with a register: no final-beat choice and increment in front of it (the
  // flush decision is on the realigner's deepest path).
  assign ra_tail_spills = !(desc_i.hi_lane < shift_q);
  assign ra_beat_err   = beat_resp_i[1];  // SLVERR or DECERR (EXOKAY counts as OKAY)
  assign ra_beat_err_code = beat_resp_i[0] ? DmaBusDecErr : DmaBusSlvErr;
  // Output beat k of a request = bytes [shift, BusBytes) of raw beat k, then bytes
  // [0, shift) of raw beat k + 1.
  assign ra_combined      = (prev_q >> {shift_q, 3'b000}) |
                            (beat_data_i << {lane_t'(BusBytes) - shift_q, 3'b000});
  assign ra_first_shifted = beat_data_i >> {ra_shift, 3'b000};

  always_comb begin
    beat_cnt_d    = beat_cnt_q;
    cnt_zero_d    = cnt_zero_q;
    end_d         = end_q;
    shift_d       = shift_q;
    shift_zero_d  = shift_zero_q;
    prev_d        = prev_q;
    flush_d       = flush_q;
    flush_bytes_d = flush_bytes_q;
    drop_d        = drop_q;
    err_d         = err_q;
    of_push       = 1'b0;
    of_entry      = status_entry(DmaOk);
    beat_pop_o        = 1'b0;
    desc_pop_o      = 1'b0;
    ra_advance    = 1'b0;

    if (abort_i) begin
      flush_d    = 1'b0;
      drop_d     = 1'b0;
      beat_cnt_d = '0;
      cnt_zero_d = 1'b1;
    end else if (flush_q) begin
      // The tail of an unaligned request that did not fit into the previous output beat.
      of_entry = data_entry(prev_q >> {shift_q, 3'b000}, flush_bytes_q, 1'b1);
      if (of_in_ready) begin
        of_push = 1'b1;
        flush_d = 1'b0;
      end
    end else if (desc_valid_i && (desc_i.kind == DescEnd)) begin
      // Translation fault, cancel after a bus error, or an empty request.
      of_entry = status_entry(drop_q ? err_q : desc_i.err);
      if (of_in_ready) begin
        of_push  = 1'b1;
        desc_pop_o = 1'b1;
        drop_d   = 1'b0;
      end
    end else if (desc_valid_i && beat_valid_i) begin
      if (drop_q || ra_beat_err) begin
        // A failed request: drop the beat; its last beat ends the request with the error.
        of_entry = status_entry(drop_q ? err_q : ra_beat_err_code);
        if (!ra_final || of_in_ready) begin
          ra_advance = 1'b1;
          of_push    = ra_final;
          drop_d     = !ra_final;
          if (!drop_q) err_d = ra_beat_err_code;
        end
      end else if (ra_aligned) begin
        // Aligned request: beats pass straight through.
        of_entry = data_entry(beat_data_i, ra_final ? ra_hi_bytes : (LaneBits + 1)'(BusBytes),
                              ra_final);
        if (of_in_ready) begin
          of_push    = 1'b1;
          ra_advance = 1'b1;
        end
      end else if (ra_first_beat && !ra_final) begin
        // First beat of an unaligned request: keep it, it completes the next output beat.
        ra_advance = 1'b1;
        prev_d     = beat_data_i;
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
        end else if (!ra_tail_spills) begin
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
          prev_d     = beat_data_i;
          if (ra_final && ra_tail_spills) begin
            flush_d       = 1'b1;
            flush_bytes_d = ra_hi_bytes - (LaneBits + 1)'(shift_q);
          end
        end
      end

      if (ra_advance) begin
        beat_pop_o = 1'b1;
        if (ra_first_beat) begin
          shift_d      = desc_i.lo_lane;
          shift_zero_d = desc_i.lo_zero;
        end
        if (ra_burst_end) begin
          beat_cnt_d = '0;
          cnt_zero_d = 1'b1;
          desc_pop_o = 1'b1;
        end else begin
          // The next beat is the burst's last if the count after this one reaches the length.
          beat_cnt_d = beat_cnt_q + 1'b1;
          cnt_zero_d = 1'b0;
          end_d      = (beat_cnt_q + 1'b1) == desc_i.len;
        end
      end
    end
  end

  // The output FIFO holds the control fields (has_data, last, has_status, err) of its head in
  // flip-flops (the low bits, RegOutWidth), so the engine's consumer-side decisions (data valid,
  // the status push, the error count) start from registers; the data and its byte enables are
  // read from the LUT-RAM (they are only passed on).
  localparam int unsigned DataBits = DataWidth + BusBytes;
  localparam int unsigned CtlBits  = $bits(out_t) - DataBits;
  logic [DataBits+CtlBits-1:0] of_in, of_out;
  assign of_in = {of_entry.data, of_entry.keep,
                  of_entry.has_data, of_entry.last, of_entry.has_status, of_entry.err};

  sgpu_fifo #(
    .Width      (DataBits + CtlBits),
    .Depth      (OutDepth),
    .RegOut     (1'b1),
    .RegOutWidth(CtlBits)
  ) u_out_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (abort_i),
    .in_valid_i (of_push),
    .in_ready_o (of_in_ready),
    .in_data_i  (of_in),
    .out_valid_o(out_valid_o),
    .out_ready_i(out_ready_i),
    .out_data_o (of_out),
    .count_o    ()
  );

  assign {out_o.data, out_o.keep, out_o.has_data, out_o.last, out_o.has_status, out_o.err} =
      of_out;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      beat_cnt_q <= '0;
      cnt_zero_q <= 1'b1;
      flush_q    <= 1'b0;
      drop_q     <= 1'b0;
    end else begin
      beat_cnt_q <= beat_cnt_d;
      cnt_zero_q <= cnt_zero_d;
      flush_q    <= flush_d;
      drop_q     <= drop_d;
    end
  end

  // Datapath registers: only read while the control state above says they are valid.
  always_ff @(posedge clk_i) begin
    shift_q       <= shift_d;
    shift_zero_q  <= shift_zero_d;
    end_q         <= end_d;
    prev_q        <= prev_d;
    flush_bytes_q <= flush_bytes_d;
    err_q         <= err_d;
    drop_seq_q    <= drop_seq_d;
  end

  // A drop names the request of the descriptor that started it: the register equals one loaded
  // only as the drop starts (as before it followed the descriptor).
`ifndef SYNTHESIS
  seq_t sim_drop_seq_q;
  always_ff @(posedge clk_i) begin
    if (!drop_q && drop_d) sim_drop_seq_q <= desc_i.seq;
  end
  `SGPU_ASSERT(DropSeqStarted, drop_q |-> drop_seq_q == sim_drop_seq_q)
`endif
  // The registered facts equal the compares they replace.
  `SGPU_ASSERT(CntZeroRegistered, cnt_zero_q == (beat_cnt_q == '0))
  `SGPU_ASSERT(BurstEndRegistered, desc_valid_i && desc_i.kind == DescRead
      |-> ra_burst_end == (beat_cnt_q == desc_i.len))
  `SGPU_ASSERT(AlignedRegistered, desc_valid_i && desc_i.kind == DescRead && beat_valid_i
      |-> ra_aligned == (ra_shift == '0))
  `SGPU_ASSERT(DescLenZero, desc_valid_i |-> desc_i.len_zero == (desc_i.len == '0))
  `SGPU_ASSERT(DescLoZero, desc_valid_i |-> desc_i.lo_zero == (desc_i.lo_lane == '0))
  // Read data matches the burst it belongs to (single ID, in order).
  `SGPU_ASSERT(TailSpillsCompare,
      ra_final |-> ra_tail_spills == (ra_hi_bytes > (LaneBits + 1)'(shift_q)))
  `SGPU_ASSERT(RlastMatchesBurst, beat_pop_o && !abort_i |-> beat_last_i == ra_burst_end)

endmodule

`default_nettype wire
