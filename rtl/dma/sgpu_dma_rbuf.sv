// Data buffer of the DMA fetch engine: a first-word-fall-through FIFO whose storage is a
// simple dual-port RAM with a registered read port, so it maps to block RAM on an FPGA.
//
// The RAM read takes one cycle; a three-entry output FIFO behind it hides that latency, so the
// buffer delivers one entry per cycle under continuous reads. The write side has no
// back-pressure path worth using: the engine reserves space before it issues a read (the
// completion-credit rule), and in_ready_o exists for the assertion that this holds.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_dma_rbuf #(
  /// Width of one entry (one bus beat plus its response bits).
  parameter int unsigned Width = 64,
  /// Entries held by the RAM; >= 2. The buffer holds up to Depth + 4 entries in total.
  parameter int unsigned Depth = 512
) (
  /// Clock.
  input  wire logic             clk_i,
  /// Asynchronous reset, active low.
  input  wire logic             rst_ni,
  /// Drops every entry (takes effect at the next edge).
  input  wire logic             clear_i,

  /// Write port: one entry per cycle while in_ready_o.
  input  wire logic             in_valid_i,
  /// The RAM has room; depends only on the fill level.
  output      logic             in_ready_o,
  /// Entry to write.
  input  wire logic [Width-1:0] in_data_i,

  /// Read port (first word fall through).
  output      logic             out_valid_o,
  /// The consumer takes out_data_o.
  input  wire logic             out_ready_i,
  /// Oldest entry.
  output      logic [Width-1:0] out_data_o
);

  localparam int unsigned PtrWidth = $clog2(Depth);
  localparam int unsigned CntWidth = $clog2(Depth + 1);
  localparam int unsigned OutDepth = 3;

  logic [Width-1:0]    mem_q [Depth];
  logic [Width-1:0]    rdata_q;
  logic [PtrWidth-1:0] wr_ptr_q, wr_ptr_d, rd_ptr_q, rd_ptr_d;
  logic [CntWidth-1:0] ram_cnt_q, ram_cnt_d;
  logic                rd_pend_q, rd_pend_d;
  logic                ram_ready_q, ram_ready_d;  // ram_cnt_q != Depth
  logic                ram_any_q, ram_any_d;      // ram_cnt_q != 0
  logic                push, rd_en;
  logic [1:0]          out_cnt;

  function automatic logic [PtrWidth-1:0] next_ptr(logic [PtrWidth-1:0] ptr);
    return (ptr == PtrWidth'(Depth - 1)) ? '0 : ptr + 1'b1;
  endfunction

  // The RAM's "not full" and "not empty" are flip-flops registered with its count, so the write
  // (behind the bus's rvalid) and the read (behind the output FIFO's count) start from them.
  assign in_ready_o = ram_ready_q;
  assign push       = in_valid_i && in_ready_o;
  // Read the RAM when the output FIFO will have room for the word when it arrives: entries in
  // it plus the word already being read must leave one slot free.
  assign rd_en      = ram_any_q && ({1'b0, out_cnt} + 3'(rd_pend_q) < 3'(OutDepth));

  always_comb begin
    wr_ptr_d    = push  ? next_ptr(wr_ptr_q) : wr_ptr_q;
    rd_ptr_d    = rd_en ? next_ptr(rd_ptr_q) : rd_ptr_q;
    rd_pend_d   = rd_en;
    // The count moves by one at most; each next value is formed from the registers alone.
    ram_cnt_d   = ram_cnt_q;
    ram_ready_d = ram_ready_q;
    ram_any_d   = ram_any_q;
    unique case ({push, rd_en})
      2'b10: begin
        ram_cnt_d   = ram_cnt_q + 1'b1;
        ram_ready_d = (ram_cnt_q != CntWidth'(Depth - 1));
        ram_any_d   = 1'b1;
      end
      2'b01: begin
        ram_cnt_d   = ram_cnt_q - 1'b1;
        ram_ready_d = 1'b1;
        ram_any_d   = (ram_cnt_q != CntWidth'(1));
      end
      default: ;
    endcase
    if (clear_i) begin
      wr_ptr_d    = '0;
      rd_ptr_d    = '0;
      ram_cnt_d   = '0;
      rd_pend_d   = 1'b0;
      ram_ready_d = 1'b1;
      ram_any_d   = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_ptr_q    <= '0;
      rd_ptr_q    <= '0;
      ram_cnt_q   <= '0;
      rd_pend_q   <= 1'b0;
      ram_ready_q <= 1'b1;
      ram_any_q   <= 1'b0;
    end else begin
      wr_ptr_q    <= wr_ptr_d;
      rd_ptr_q    <= rd_ptr_d;
      ram_cnt_q   <= ram_cnt_d;
      rd_pend_q   <= rd_pend_d;
      ram_ready_q <= ram_ready_d;
      ram_any_q   <= ram_any_d;
    end
  end

  // Block RAM: write port and registered read port, no reset (pointers say what is valid).
  always_ff @(posedge clk_i) begin
    if (push && !clear_i) mem_q[wr_ptr_q] <= in_data_i;
    if (rd_en) rdata_q <= mem_q[rd_ptr_q];
  end

  sgpu_fifo #(
    .Width(Width),
    .Depth(OutDepth),
    // The realigner's decisions (the beat's response, its data's shift) start from flip-flops;
    // the input is the RAM's output register.
    .RegOut(1'b1)
  ) u_out_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (clear_i),
    .in_valid_i (rd_pend_q),
    .in_ready_o (),
    .in_data_i  (rdata_q),
    .out_valid_o(out_valid_o),
    .out_ready_i(out_ready_i),
    .out_data_o (out_data_o),
    .count_o    (out_cnt)
  );

  // Elaboration-time checks.
  `SGPU_ASSERT_STATIC(g_bad_depth, Depth >= 2, "Depth must be at least 2")

  // The registered flags equal the compares of the count they replace.
  `SGPU_ASSERT(RamReadyRegistered, ram_ready_q == (ram_cnt_q != CntWidth'(Depth)))
  `SGPU_ASSERT(RamAnyRegistered, ram_any_q == (ram_cnt_q != '0))

  // The engine's credit rule guarantees the RAM never overflows.
  `SGPU_ASSERT(NoWriteWhenFull, in_valid_i && !clear_i |-> in_ready_o)

endmodule

`default_nettype wire
