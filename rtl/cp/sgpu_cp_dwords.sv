// Splits the fetch engine's data beats into a stream of 32-bit dwords, lowest lane first.
//
// Packets and ring entries are dword-aligned with dword lengths, so every beat holds a whole
// number of dwords: the packed stream of the fetch engine puts them in the low lanes and marks
// them with byte enables. One dword leaves per cycle; the next beat is taken in the same cycle
// as the last dword of the current one, so a stream of beats is unpacked without bubbles.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_dwords #(
  /// Data width of the incoming beats in bits (multiple of 32).
  parameter int unsigned DataWidth = 64
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  /// Drops the beat being unpacked (engine reset, fault).
  input  wire logic                   clear_i,

  input  wire logic                   in_valid_i,
  output      logic                   in_ready_o,
  input  wire logic [DataWidth-1:0]   in_data_i,
  input  wire logic [DataWidth/8-1:0] in_keep_i,

  output      logic                   out_valid_o,
  input  wire logic                   out_ready_i,
  output      logic [31:0]            out_dword_o
);

  localparam int unsigned Dwords = DataWidth / 32;
  localparam int unsigned IdxWidth = (Dwords > 1) ? $clog2(Dwords) : 1;
  localparam int unsigned CntWidth = $clog2(Dwords + 1);

  logic [DataWidth-1:0] data_q, data_d;
  logic [IdxWidth-1:0]  idx_q, idx_d;
  logic [CntWidth-1:0]  left_q, left_d;
  logic [CntWidth-1:0]  in_dwords;

  // Whole dwords present in the incoming beat (enables are contiguous from lane 0).
  always_comb begin
    in_dwords = '0;
    for (int unsigned i = 0; i < Dwords; i++) begin
      if (in_keep_i[4*i]) in_dwords = CntWidth'(i + 1);
    end
  end

  assign out_valid_o = (left_q != '0);
  assign out_dword_o = data_q[32*idx_q +: 32];
  // Room for a new beat when empty, or when the last dword leaves in this cycle.
  assign in_ready_o  = (left_q == '0) || (left_q == CntWidth'(1) && out_ready_i);

  always_comb begin
    data_d = data_q;
    idx_d  = idx_q;
    left_d = left_q;
    if (out_valid_o && out_ready_i) begin
      idx_d  = idx_q + 1'b1;
      left_d = left_q - 1'b1;
    end
    if (in_valid_i && in_ready_o) begin
      data_d = in_data_i;
      idx_d  = '0;
      left_d = in_dwords;
    end
    if (clear_i) begin
      left_d = '0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      idx_q  <= '0;
      left_q <= '0;
    end else begin
      idx_q  <= idx_d;
      left_q <= left_d;
    end
  end

  always_ff @(posedge clk_i) begin
    data_q <= data_d;
  end

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth % 32 == 0 && DataWidth >= 32,
                      "DataWidth must be a multiple of 32")

  // A beat must carry whole dwords: byte enables come in groups of four.
  logic [Dwords-1:0] whole_dwords;
  for (genvar i = 0; i < Dwords; i++) begin : g_whole
    assign whole_dwords[i] = (in_keep_i[4*i +: 4] == 4'h0) || (in_keep_i[4*i +: 4] == 4'hf);
  end
  `SGPU_ASSERT(WholeDwords, (in_valid_i && in_ready_o) |-> &whole_dwords)

endmodule

`default_nettype wire
