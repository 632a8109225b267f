// Splits the fetch engine's data beats into a stream of 32-bit dwords, lowest lane first, and
// shows the controller the first two: it takes one per cycle, or two (a WRITE_DATA dword pair
// that leaves as one 64-bit write).
//
// Packets and ring entries are dword-aligned with dword lengths, so every beat holds a whole
// number of dwords: the packed stream of the fetch engine puts them in the low lanes and marks
// them with byte enables. The dwords wait in a window of two beats and two dwords, a shift
// register whose head is the decoder's dword (straight from a flop, no lane multiplexer in front
// of the decoder). A beat is taken when the window has room for it before this cycle's dwords
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

  logic [Window-1:0][31:0] win_q, win_d;
  logic [CntWidth-1:0]     count_q, count_d;
  logic [CntWidth-1:0]     in_dwords;

  // Whole dwords present in the incoming beat (enables are contiguous from lane 0).
  always_comb begin
    in_dwords = '0;
    for (int unsigned i = 0; i < Dwords; i++) begin
      if (in_keep_i[4*i]) in_dwords = CntWidth'(i + 1);
    end
  end

  assign out_valid_o  = (count_q != '0);
  assign out_valid2_o = (count_q >= CntWidth'(2));
  assign out_dword_o  = win_q[0];
  assign out_dword2_o = win_q[1];

  // The input's ready depends on neither the take nor in_valid_i.
  assign in_ready_o = ({1'b0, count_q} + (CntWidth + 1)'(Dwords)) <= (CntWidth + 1)'(Window);

  logic in_fire;
  assign in_fire = in_valid_i && in_ready_o;

  // The next window and count for each number of dwords taken (0, 1, 2), from the registers and
  // the beat alone: shift the remaining dwords to the head, append the beat's behind them. The
  // take (behind the CP's decoder and its write path's ready) only selects one of the three;
  // computed after it, the count kept and the compares of where the beat lands were behind it.
  logic [2:0][CntWidth-1:0]          kept_by, count_by;
  logic [2:0][Window-1:0][31:0]      win_by;
  always_comb begin
    for (int unsigned t = 0; t < 3; t++) begin
      kept_by[t]  = count_q - CntWidth'(t);
      count_by[t] = in_fire ? kept_by[t] + in_dwords : kept_by[t];
      for (int unsigned i = 0; i < Window; i++) begin
        win_by[t][i] = win_q[(i + t < Window) ? i + t : i];
        if (in_fire) begin
          for (int unsigned j = 0; j < Dwords; j++) begin
            if (CntWidth'(i) == kept_by[t] + CntWidth'(j)) win_by[t][i] = in_data_i[32*j +: 32];
          end
        end
      end
    end
  end

  for (genvar t = 0; t < 3; t++) begin : g_next_head
    assign next_head_o[t] = win_by[t][0];
  end

  always_comb begin
    win_d   = win_by[0];
    count_d = count_by[0];
    if (out_valid_o && out_ready_i) begin
      win_d   = out_two_i ? win_by[2] : win_by[1];
      count_d = out_two_i ? count_by[2] : count_by[1];
    end
    if (clear_i) begin
      count_d = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q <= '0;
    end else begin
      count_q <= count_d;
    end
  end

  // Dwords beyond count_q are never read.
  always_ff @(posedge clk_i) begin
    win_q <= win_d;
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
  `SGPU_ASSERT(NextHeadIsHead, next_head_o[(out_valid_o && out_ready_i) ? (out_two_i ? 2 : 1) : 0]
      == win_d[0])

endmodule

`default_nettype wire
