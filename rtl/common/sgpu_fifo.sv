// Synchronous first-word-fall-through FIFO with valid/ready on both sides.
//
// in_ready_o and out_valid_o depend only on the fill level: there is no combinational path
// through the FIFO, and ready never depends on valid. A full FIFO accepts again one cycle
// after a pop. Both are flip-flops (the fill level's "not full" and "not empty", registered
// with it), so a producer's push and a consumer's pop start from a register, not a compare of
// the count.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_fifo #(
  /// Width of one entry in bits.
  parameter int unsigned Width = 32,
  /// Number of entries; any value >= 1.
  parameter int unsigned Depth = 4,
  /// Hold the head entry in a register, loaded from the input (into an empty FIFO, or one whose
  /// only entry leaves) or from the entry after the head (a second read of the memory) as the
  /// head leaves: its readers then start from flip-flops, not from the memory's read
  /// multiplexer. The same cycles at both ports; Width more flip-flops and a second read port.
  parameter bit RegOut = 1'b0,
  /// With RegOut: only the low RegOutWidth bits of the head are held in the register; the others
  /// are read from the memory (for an entry whose control fields are registered and whose data
  /// is only passed on). 1..Width.
  parameter int unsigned RegOutWidth = Width,
  /// Dependent parameter, do not override.
  parameter int unsigned CountWidth = $clog2(Depth + 1),
  /// Dependent parameter, do not override: bits of an entry in the head register (RegOut) and
  /// in mem_q; the rest, if any, in mem_hi_q.
  parameter int unsigned HeadWidth = (RegOut && RegOutWidth >= 1 && RegOutWidth < Width)
                                   ? RegOutWidth : Width
) (
  input  wire logic                  clk_i,
  input  wire logic                  rst_ni,
  /// Empties the FIFO (entries are dropped).
  input  wire logic                  clear_i,

  input  wire logic                  in_valid_i,
  output      logic                  in_ready_o,
  input  wire logic [Width-1:0]      in_data_i,

  output      logic                  out_valid_o,
  input  wire logic                  out_ready_i,
  output      logic [Width-1:0]      out_data_o,

  /// Entries currently held.
  output      logic [CountWidth-1:0] count_o,

  /// The head's next value (its low HeadWidth bits: RegOutWidth with RegOut, else Width) if the
  /// head leaves this cycle (head_pop_o) or stays (head_stay_o; the input while the FIFO is
  /// empty): a user can form a compare of the next head a cycle ahead from both and select it
  /// with its own pop, to register it beside the head. Optional (lint.vlt): most leave them out.
  output      logic [HeadWidth-1:0]  head_pop_o,
  output      logic [HeadWidth-1:0]  head_stay_o
);

  localparam int unsigned PtrWidth = (Depth > 1) ? $clog2(Depth) : 1;

  logic [HeadWidth-1:0] mem_q [Depth];
  logic [PtrWidth-1:0] rd_ptr_q, rd_ptr_d, wr_ptr_q, wr_ptr_d;
  logic [CountWidth-1:0] count_q, count_d;

  logic push, pop;
  logic [CountWidth-1:0] count_inc, count_dec;
  logic ready_q, ready_d;  // count_q != Depth
  logic valid_q, valid_d;  // count_q != 0
  assign count_inc = count_q + 1'b1;
  assign count_dec = count_q - 1'b1;
  assign in_ready_o  = ready_q;
  assign out_valid_o = valid_q;
  assign count_o     = count_q;

  assign push = in_valid_i && in_ready_o;
  assign pop  = out_valid_o && out_ready_i;

  function automatic logic [PtrWidth-1:0] next_ptr(logic [PtrWidth-1:0] ptr);
    if (Depth == 1) return '0;
    return (ptr == PtrWidth'(Depth - 1)) ? '0 : ptr + 1'b1;
  endfunction

  logic [PtrWidth-1:0] rd_next;
  assign rd_next = next_ptr(rd_ptr_q);

  if (RegOut) begin : g_reg_out
    logic [HeadWidth-1:0] head_q, head_d, head_pop, head_stay;
    logic                 one_q, one_d;  // count_q == 1
    // The head changes as it leaves, or as an entry arrives that becomes the head. The input
    // is taken whenever the FIFO is empty or its only entry leaves, pushed or not (without a
    // push the FIFO is empty next, and the head unread), so the push (often late) is not in
    // the register's choice. Both candidates are formed from flip-flops, the memory and the
    // input while the pop (often late) settles; the pop only selects between them.
    assign head_pop  = one_q ? in_data_i[HeadWidth-1:0] : mem_q[rd_next];
    assign head_stay = valid_q ? head_q : in_data_i[HeadWidth-1:0];
    assign head_d    = pop ? head_pop : head_stay;
    assign head_pop_o  = head_pop;
    assign head_stay_o = head_stay;
    // Not reset: read only while out_valid_o, and loaded whenever the FIFO is empty.
    always_ff @(posedge clk_i) begin
      head_q <= head_d;
    end
    always_comb begin
      unique case ({push, pop})
        2'b10:   one_d = !valid_q;
        2'b01:   one_d = (count_q == CountWidth'(2));
        default: one_d = one_q;
      endcase
      if (clear_i) one_d = 1'b0;
    end
    always_ff @(posedge clk_i or negedge rst_ni) begin
      if (!rst_ni) one_q <= 1'b0;
      else         one_q <= one_d;
    end
    if (HeadWidth < Width) begin : g_part
      // The bits above the head register have their own memory, read at the head only: each
      // memory has one read port (LUT-RAM), not two.
      logic [Width-HeadWidth-1:0] mem_hi_q [Depth];
      always_ff @(posedge clk_i) begin
        if (push && !clear_i) mem_hi_q[wr_ptr_q] <= in_data_i[Width-1:HeadWidth];
      end
      assign out_data_o = {mem_hi_q[rd_ptr_q], head_q};
    end else begin : g_all
      assign out_data_o = head_q;
    end
    logic [HeadWidth-1:0] mem_head;
    assign mem_head = mem_q[rd_ptr_q];
    `SGPU_ASSERT(HeadRegistered, out_valid_o |-> head_q == mem_head)
    `SGPU_ASSERT(OneRegistered, one_q == (count_q == CountWidth'(1)))
  end else begin : g_mem_out
    assign out_data_o = mem_q[rd_ptr_q];
    // The head after this cycle, as with RegOut (a second read of the memory, if used).
    assign head_pop_o  = (count_q == CountWidth'(1)) ? in_data_i : mem_q[rd_next];
    assign head_stay_o = valid_q ? mem_q[rd_ptr_q] : in_data_i;
  end

  always_comb begin
    rd_ptr_d = pop  ? rd_next : rd_ptr_q;
    wr_ptr_d = push ? next_ptr(wr_ptr_q) : wr_ptr_q;
    // The next count is chosen among values computed from count_q alone, so push and pop
    // (whose readiness often arrives late) only drive a multiplexer, not an adder.
    // The flags follow the count: each next value is a compare of count_q, formed in parallel.
    ready_d = ready_q;
    valid_d = valid_q;
    unique case ({push, pop})
      2'b10: begin
        count_d = count_inc;
        ready_d = (count_q != CountWidth'(Depth - 1));
        valid_d = 1'b1;
      end
      2'b01: begin
        count_d = count_dec;
        ready_d = 1'b1;
        valid_d = (count_q != CountWidth'(1));
      end
      default: count_d = count_q;
    endcase
    if (clear_i) begin
      rd_ptr_d = '0;
      wr_ptr_d = '0;
      count_d  = '0;
      ready_d  = 1'b1;
      valid_d  = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_ptr_q <= '0;
      wr_ptr_q <= '0;
      count_q  <= '0;
      ready_q  <= 1'b1;
      valid_q  <= 1'b0;
    end else begin
      rd_ptr_q <= rd_ptr_d;
      wr_ptr_q <= wr_ptr_d;
      count_q  <= count_d;
      ready_q  <= ready_d;
      valid_q  <= valid_d;
    end
  end

  // Storage is not reset: only the pointers say what is valid (FPGA-friendly, maps to LUTRAM).
  always_ff @(posedge clk_i) begin
    if (push && !clear_i) mem_q[wr_ptr_q] <= in_data_i[HeadWidth-1:0];
  end

  // Elaboration-time checks.
  `SGPU_ASSERT_STATIC(g_bad_depth, Depth >= 1, "Depth must be at least 1")
  `SGPU_ASSERT_STATIC(g_bad_reg_out_width, RegOutWidth >= 1 && RegOutWidth <= Width,
                      "RegOutWidth must be 1..Width")

  `SGPU_ASSERT(CountInRange, count_q <= CountWidth'(Depth))
  // The registered flags equal the compares of the count they replace.
  `SGPU_ASSERT(ReadyRegistered, ready_q == (count_q != CountWidth'(Depth)))
  `SGPU_ASSERT(ValidRegistered, valid_q == (count_q != '0))

endmodule

`default_nettype wire
