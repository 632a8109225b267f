// Splits the fetch engine's data beats into a stream of 32-bit dwords, lowest lane first, and
// shows the controller the first two: it takes one per cycle, or two (a WRITE_DATA dword pair
// that leaves as one 64-bit write).
//
// Packets and ring entries are dword-aligned with dword lengths, so every beat holds a whole
// number of dwords: the packed stream of the fetch engine puts them in the low lanes and marks
// them with byte enables. The dwords wait in a window of two beats and two dwords: a head pair
// of flops, the decoder's dword and the one behind it (no lane multiplexer in front of the
// decoder), and the back in a ring of slots that the beat is written into (only the head pair
// and a few pointer and count bits wait for the take). A beat is taken when the window has room for it before this cycle's dwords
// leave: the input's ready is a register compare, not the end of the controller's decision
// (which waits for the write path's ready), and the two extra dwords keep a pair at the head
// whenever the window was too full for a beat, so a stream of beats is still unpacked without
// bubbles at one dword per cycle, and at two dwords per cycle while the controller takes pairs.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_dwords #(
  /// Data width of the incoming beats in bits (multiple of 32).
  parameter int unsigned DataWidth = 64
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  /// Drops the dwords not yet taken (engine reset, fault, a stopped stream).
  input  wire logic                   clear_i,

  input  wire logic                   in_valid_i,
  output      logic                   in_ready_o,
  input  wire logic [DataWidth-1:0]   in_data_i,
  input  wire logic [DataWidth/8-1:0] in_keep_i,

  /// The dword at the head (out_valid_o) and the one behind it (out_valid2_o).
  output      logic                   out_valid_o,
  output      logic [31:0]            out_dword_o,
  output      logic                   out_valid2_o,
  output      logic [31:0]            out_dword2_o,
  /// Takes the head dword; with out_two_i both (only while out_valid2_o).
  input  wire logic                   out_ready_i,
  input  wire logic                   out_two_i,
  /// The head dword of the next cycle for each number of dwords taken now (0, 1, 2), from the
  /// registers and the incoming beat alone (the take selects it, as it selects the window): a
  /// decode stage can judge the next head a cycle ahead.
  output      logic [2:0][31:0]       next_head_o
);

  localparam int unsigned Dwords = DataWidth / 32;
  localparam int unsigned Window = 2 * Dwords + 2;
  localparam int unsigned CntWidth = $clog2(Window + 1);
  /// Slots of the back of the window (a power of two, at least 2 * Dwords: see below).
  localparam int unsigned Back = 2 ** $clog2(2 * Dwords);
  localparam int unsigned PtrWidth = (Back > 1) ? $clog2(Back) : 1;

  // The window is the head pair (head_q: window positions 0 and 1, straight from flops for the
  // decoder) and its back, positions 2 and on, in a ring of slots (back_q) read from rd_q. Only
  // the head pair and the few pointer and count bits depend on the take (behind the CP's
  // decoder and its write path's ready); the back's slots are written with the beat at the
  // tail, rd_q + (count_q - 2), whenever the input is ready (a register compare): their
  // enable and data never wait for the take. (A shift register of all positions made each of
  // its flip-flops a multiplexer behind the take.) The ring holds the back and a beat: the
  // input is ready only while count_q + Dwords <= Window, so at most Dwords dwords are in the
  // back then, and the beat's Dwords slots never overlap them.
  logic [1:0][31:0]               head_q, head_d;
  logic [Back-1:0][31:0]          back_q;
  logic [PtrWidth-1:0]            rd_q, rd_d, tail;
  logic [CntWidth-1:0]            count_q, count_d;
  logic [CntWidth-1:0]            in_dwords, back_cnt, new_head, kept_head, count_taken;
  logic [1:0]                     taken;

  // Whole dwords present in the incoming beat (enables are contiguous from lane 0).
  always_comb begin
    in_dwords = '0;
    for (int unsigned i = 0; i < Dwords; i++) begin
      if (in_keep_i[4*i]) in_dwords = CntWidth'(i + 1);
    end
  end

  assign out_valid_o  = (count_q != '0);
  assign out_valid2_o = (count_q >= CntWidth'(2));
  assign out_dword_o  = head_q[0];
  assign out_dword2_o = head_q[1];

  // The input's ready depends on neither the take nor in_valid_i.
  assign in_ready_o = ({1'b0, count_q} + (CntWidth + 1)'(Dwords)) <= (CntWidth + 1)'(Window);

  logic in_fire;
  assign in_fire = in_valid_i && in_ready_o;

  // The dwords in the back, and where the beat goes in the ring.
  assign back_cnt = (count_q > CntWidth'(2)) ? count_q - CntWidth'(2) : '0;
  assign tail     = rd_q + PtrWidth'(back_cnt);
  logic unused_back_cnt;  // the ring's index wraps: only the low bits of the count are used
  assign unused_back_cnt = ^back_cnt;

  // The stream from the head on: the dwords held, then the beat's. seq[k] is position k of the
  // window before the take, from the registers and the beat alone; the head of the next cycle
  // is seq[taken], seq[taken + 1]. (Positions past the dwords held and the beat's are never
  // read: their value is don't-care.)
  logic [3:0][31:0] seq;
  always_comb begin
    for (int unsigned k = 0; k < 4; k++) begin
      if (k < 2) seq[k] = head_q[k[0]];
      else       seq[k] = back_q[PtrWidth'(rd_q + PtrWidth'(k - 2))];
      if (CntWidth'(k) >= count_q) begin
        for (int unsigned j = 0; j < Dwords; j++) begin
          if (CntWidth'(k) == count_q + CntWidth'(j)) seq[k] = in_data_i[32*j +: 32];
        end
      end
    end
  end

  for (genvar t = 0; t < 3; t++) begin : g_next_head
    assign next_head_o[t] = seq[t];
  end

  // The take selects the head pair; it also moves the count and the ring's read pointer by the
  // dwords that leave the back (or the beat) for the head: the head pair keeps what the take
  // leaves of it and fills up to two from the back and the beat.
  assign taken       = (out_valid_o && out_ready_i) ? (out_two_i ? 2'd2 : 2'd1) : 2'd0;
  assign count_taken = count_q - CntWidth'(taken) + (in_fire ? in_dwords : '0);
  assign new_head    = (count_taken > CntWidth'(2)) ? CntWidth'(2) : count_taken;
  assign kept_head   = ((count_q > CntWidth'(2)) ? CntWidth'(2) : count_q) - CntWidth'(taken);

  always_comb begin
    head_d[0] = seq[taken];
    head_d[1] = seq[2'(taken + 2'd1)];
    rd_d      = rd_q + PtrWidth'(new_head - kept_head);
    count_d   = clear_i ? '0 : count_taken;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= '0;
      rd_q    <= '0;
    end else begin
      count_q <= count_d;
      rd_q    <= rd_d;
    end
  end

  // Dwords beyond count_q are never read. The beat is written at the tail whenever the input
  // is ready (a beat that does not come leaves slots past the back, which are not read).
  always_ff @(posedge clk_i) begin
    head_q <= head_d;
    if (in_ready_o) begin
      for (int unsigned j = 0; j < Dwords; j++) begin
        back_q[PtrWidth'(tail + PtrWidth'(j))] <= in_data_i[32*j +: 32];
      end
    end
  end

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth % 32 == 0 && DataWidth >= 32,
                      "DataWidth must be a multiple of 32")

  // A beat must carry whole dwords: byte enables come in groups of four.
  logic [Dwords-1:0] whole_dwords;
  for (genvar i = 0; i < Dwords; i++) begin : g_whole
    assign whole_dwords[i] = (in_keep_i[4*i +: 4] == 4'h0) || (in_keep_i[4*i +: 4] == 4'hf);
  end
  `SGPU_ASSERT(WholeDwords, (in_valid_i && in_ready_o) |-> &whole_dwords)
  // A pair is only taken while two dwords are there.
  `SGPU_ASSERT(TwoOnlyWhenTwo, out_ready_i && out_two_i && out_valid_o |-> out_valid2_o)
  `SGPU_ASSERT(CountBounded, 32'(count_q) <= Window)
  `SGPU_ASSERT(NextHeadIsHead, next_head_o[taken] == head_d[0])
  `SGPU_ASSERT_STATIC(g_back_fits, Back >= 2 * Dwords && Back >= 2, "the ring must hold a beat")

`ifndef SYNTHESIS
  // The shift register this window replaced, kept as the reference: every position held is the
  // same dword (the head pair and the back behind the read pointer).
  logic [Window-1:0][31:0] ref_q, ref_d;
  always_comb begin
    logic [CntWidth-1:0] kept;
    kept = count_q - CntWidth'(taken);
    for (int unsigned i = 0; i < Window; i++) begin
      ref_d[i] = ref_q[(i + 32'(taken) < Window) ? i + 32'(taken) : i];
      if (in_fire) begin
        for (int unsigned j = 0; j < Dwords; j++) begin
          if (CntWidth'(i) == kept + CntWidth'(j)) ref_d[i] = in_data_i[32*j +: 32];
        end
      end
    end
  end
  always_ff @(posedge clk_i) begin
    ref_q <= ref_d;
  end
  logic [Window-1:0] same;
  for (genvar i = 0; i < Window; i++) begin : g_same
    if (i < 2) begin : g_head
      assign same[i] = (CntWidth'(i) >= count_q) || head_q[i] == ref_q[i];
    end else begin : g_back
      assign same[i] = (CntWidth'(i) >= count_q)
                       || back_q[PtrWidth'(rd_q + PtrWidth'(i - 2))] == ref_q[i];
    end
  end
  `SGPU_ASSERT(WindowIsShifted, &same)
`endif

endmodule

`default_nettype wire
