// Turns the core's level interrupt into message-signalled interrupts (MSI) for a bridge with a
// request/acknowledge handshake (7-series cfg_interrupt/cfg_interrupt_rdy, XDMA
// usr_irq_req/usr_irq_ack).
//
// An MSI is an edge: one message per request. The line can stay high while the host handles
// one event and another arrives, so besides every rising edge of the line, a message is also
// sent when the host finishes a register write (typically its write-1-to-clear acknowledge)
// and the line is still high afterwards: a host that waits for a message after acknowledging
// never misses an event. A pending message that the line no longer asks for (the host cleared
// the status by polling) is dropped, unless it is already being requested: a request is held
// until it is acknowledged, then released for at least one cycle.
`default_nettype none

module sgpu_irq_msi (
  input  wire logic clk_i,
  input  wire logic rst_ni,
  /// The core's interrupt line, synchronised into clk_i's domain.
  input  wire logic irq_i,
  /// One-cycle pulse: a host register write has completed.
  input  wire logic rearm_i,
  /// The host enabled MSI and bus mastering; requests wait until it does.
  input  wire logic enable_i,
  output      logic msi_req_o,
  input  wire logic msi_ack_i,
  /// One-cycle pulse per message sent (for counters).
  output      logic msi_sent_o
);

  logic irq_q, pending_q, pending_d, req_q, req_d, gap_q, gap_d;

  always_comb begin
    pending_d = pending_q;
    req_d     = req_q;
    gap_d     = 1'b0;
    if ((irq_i && !irq_q) || (rearm_i && irq_i)) pending_d = 1'b1;
    if (!irq_i && !req_q) pending_d = 1'b0;
    if (req_q && msi_ack_i) begin
      // An event that arrived while this message was requested stays pending (pending_d).
      req_d     = 1'b0;
      gap_d     = 1'b1;
    end else if (!req_q && !gap_q && pending_q && enable_i) begin
      req_d     = 1'b1;
      pending_d = 1'b0;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      irq_q     <= 1'b0;
      pending_q <= 1'b0;
      req_q     <= 1'b0;
      gap_q     <= 1'b0;
    end else begin
      irq_q     <= irq_i;
      pending_q <= pending_d;
      req_q     <= req_d;
      gap_q     <= gap_d;
    end
  end

  assign msi_req_o  = req_q;
  assign msi_sent_o = req_q && msi_ack_i;

endmodule

`default_nettype wire
