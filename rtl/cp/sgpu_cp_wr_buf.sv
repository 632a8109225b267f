// Write buffer of the command processor: a two-entry register slice between the write the CP
// offers (sgpu_cp_wr) and the write translator (sgpu_wr_xlate).
//
// It cuts the CP's single-cycle loop through the write path: the CP's take of a write (and with
// it the dword stream, the stream position and the next state) waited for the translator's ready,
// which is the cached page's compare with the write's address and the write master's room. Here
// the CP's ready is `!skid_valid_q`, a register of this buffer, and the translator compares a
// registered address: the write leaves a cycle later, one write per cycle still flows (the
// skid entry takes the write of the cycle in which the translator stalls). Its queue behaviour
// is sgpu_fifo's at Depth 2; it is its own module because sgpu_fifo reads its head through the
// read pointer's multiplexer, which would stand in front of the translator's page compare.
//
// The head (out_q) is always the oldest write and is offered until the translator takes it; a
// refusal of its translation, or a failed write, flushes both entries (and a write offered in
// that cycle): nothing behind a refused write is issued. The CP counts the buffer as writes in
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

  logic             out_valid_q, out_valid_d, skid_valid_q, skid_valid_d;
  logic [Width-1:0] out_q, out_d, skid_q, skid_d;
  logic             push, pop;

  assign in_ready_o = !skid_valid_q;
  assign push       = in_valid_i && in_ready_o;
  assign pop        = out_valid_q && out_ready_i;

  always_comb begin
    out_valid_d  = out_valid_q;
    skid_valid_d = skid_valid_q;
    out_d        = out_q;
    skid_d       = skid_q;
    // The skid entry's payload takes the offer whenever the entry is free, whether the write
    // goes there or to the head (then skid_valid_q stays low and the copy is never read): its
    // enable is this buffer's own register, not the translator's ready behind the pop.
    if (!skid_valid_q) skid_d = in_i;
    if (pop || !out_valid_q) begin
      // The head moves on: the skid entry first (nothing is pushed while it is full), else this
      // cycle's write.
      out_valid_d  = skid_valid_q || push;
      out_d        = skid_valid_q ? skid_q : in_i;
      skid_valid_d = 1'b0;
    end else if (push) begin
      skid_valid_d = 1'b1;  // its payload was taken above
    end
    if (flush_i) begin
      out_valid_d  = 1'b0;
      skid_valid_d = 1'b0;
    end
  end

  assign out_valid_o = out_valid_q;
  assign out_o       = out_q;
  assign empty_o     = !out_valid_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      out_valid_q  <= 1'b0;
      skid_valid_q <= 1'b0;
    end else begin
      out_valid_q  <= out_valid_d;
      skid_valid_q <= skid_valid_d;
    end
  end

  // Payload registers: only read while their valid bit says so.
  always_ff @(posedge clk_i) begin
    out_q  <= out_d;
    skid_q <= skid_d;
  end

  // The skid entry is behind the head; the head is held until taken.
  `SGPU_ASSERT(SkidBehindHead, skid_valid_q |-> out_valid_q)
  `SGPU_ASSERT(HeadHeld, out_valid_q && !out_ready_i && !flush_i |=> out_valid_q && $stable(out_q))
  `SGPU_ASSERT_KNOWN_IF(HeadKnown, out_q, out_valid_q)

endmodule

`default_nettype wire
