// Write buffer of the command processor: a two-entry register slice between the write the CP
// offers (sgpu_cp_wr) and the write translator (sgpu_wr_xlate).
//
// It cuts the CP's single-cycle loop through the write path: the CP's take of a write (and with
// it the dword stream, the stream position and the next state) waited for the translator's ready,
// which is the cached page's compare with the write's address and the write master's room. Here
// the CP's ready is `!full_q`, a register of this buffer, and the translator compares a
// registered address: the write leaves a cycle later, one write per cycle still flows (the
// second entry takes the write of the cycle in which the translator stalls). Its queue behaviour
// is sgpu_fifo's at Depth 2, and like sgpu_fifo it reads its head through the read pointer's
// multiplexer (one LUT level, its select a register, in front of the translator's page compare):
// that keeps the translator's ready out of every payload register's enable. (Timing pass 15: the
// head used to be a register loaded on the ready, 160 flip-flops behind the translator's page
// compare and room, 8 LUT levels; an entry's payload now loads while it is free.) Its own module
// rather than sgpu_fifo: the status registers (full_q, any_q) are what the CP and the translator
// see, with no count decode.
//
// The head (mem_q[rd_q]) is always the oldest write and is offered until the translator takes
// it; a refusal of its translation, or a failed write, flushes both entries (and a write offered
// in that cycle): nothing behind a refused write is issued. The CP counts the buffer as writes in
// flight (empty_o is part of its write path's idle), so everything that waits for its writes
// waits for these too.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_wr_buf #(
  /// Bits of a write (the CP's: the word, its privilege and its fault detail).
  parameter int unsigned Width = 32
) (
  input  wire logic             clk_i,
  input  wire logic             rst_ni,

  /// Drops every write held and the one offered in this cycle.
  input  wire logic             flush_i,

  /// From the CP: the ready is a register of this buffer (never the translator's ready).
  input  wire logic             in_valid_i,
  output      logic             in_ready_o,
  input  wire logic [Width-1:0] in_i,

  /// To the translator: the oldest write, held until taken (or flushed).
  output      logic             out_valid_o,
  input  wire logic             out_ready_i,
  output      logic [Width-1:0] out_o,

  /// Nothing held.
  output      logic             empty_o
);

  // Two entries in a ring (rd_q: the head; wr_q: where the next write goes). An entry's payload
  // register takes the offer whenever the entry is free (its enable is its own valid bit, a
  // register: a copy nobody pushed is never read), and is held while valid: no payload register
  // waits for the translator's ready or for the CP's valid. Only the valid bits, the pointers and
  // the two status registers (full_q: the CP's ready; any_q: the translator's valid) take the
  // ready, in their last LUT.
  logic [1:0]       valid_q, valid_d;
  logic             rd_q, rd_d, wr_q, wr_d, full_q, full_d, any_q, any_d;
  logic [Width-1:0] mem_q[2];
  logic             push, pop, one;

  assign in_ready_o = !full_q;
  assign push       = in_valid_i && !full_q;
  assign one        = any_q && !full_q;  // exactly one write held
  assign pop        = any_q && out_ready_i;

  always_comb begin
    // The next state for either answer of the translator, formed from registers and the push;
    // the ready selects (pop = any_q && out_ready_i).
    logic [1:0] valid_keep, valid_pop;
    logic       full_keep, any_keep, any_pop;
    valid_keep = valid_q | ({1'b0, push} << wr_q);
    valid_pop  = valid_keep & ~(2'b01 << rd_q);
    full_keep  = full_q || (one && push);
    any_keep   = any_q || push;
    any_pop    = full_q || push;  // the other entry, or this cycle's write
    if (pop) begin
      valid_d = valid_pop;
      full_d  = 1'b0;             // a pop leaves room (a full buffer takes nothing)
      any_d   = any_pop;
      rd_d    = !rd_q;
    end else begin
      valid_d = valid_keep;
      full_d  = full_keep;
      any_d   = any_keep;
      rd_d    = rd_q;
    end
    wr_d = wr_q ^ push;
    if (flush_i) begin
      valid_d = '0;
      full_d  = 1'b0;
      any_d   = 1'b0;
      rd_d    = 1'b0;
      wr_d    = 1'b0;
    end
  end

  assign out_valid_o = any_q;
  // The head through the read pointer's multiplexer (a LUT3 a bit, its select a register).
  assign out_o       = mem_q[rd_q];
  assign empty_o     = !any_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      valid_q <= '0;
      rd_q    <= 1'b0;
      wr_q    <= 1'b0;
      full_q  <= 1'b0;
      any_q   <= 1'b0;
    end else begin
      valid_q <= valid_d;
      rd_q    <= rd_d;
      wr_q    <= wr_d;
      full_q  <= full_d;
      any_q   <= any_d;
    end
  end

  // Payload registers: loaded while free, only read while valid.
  for (genvar i = 0; i < 2; i++) begin : g_entry
    always_ff @(posedge clk_i) begin
      if (!valid_q[i]) mem_q[i] <= in_i;
    end
  end

  // The status registers are the valid bits' summary; the write goes to a free entry, behind the
  // head; the head is held until taken.
  `SGPU_ASSERT(FullIsBoth, full_q == (valid_q == 2'b11))
  `SGPU_ASSERT(AnyIsEither, any_q == (valid_q != 2'b00))
  `SGPU_ASSERT(HeadValid, any_q |-> valid_q[rd_q])
  `SGPU_ASSERT(WriteToFree, !full_q |-> !valid_q[wr_q] && (wr_q == rd_q) == !any_q)
  `SGPU_ASSERT(HeadHeld, any_q && !out_ready_i && !flush_i |=> any_q && $stable(out_o))
  `SGPU_ASSERT_KNOWN_IF(HeadKnown, out_o, any_q)

endmodule

`default_nettype wire
