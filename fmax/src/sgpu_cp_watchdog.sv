// Watchdog of the command processor: counts the cycles since the last progress while a
// submission is executed, and expires after CP_WATCHDOG of them (0 = never).
//
// Progress is a dword taken from the ring entry or buffer stream (not a WAIT_MEM read), a write
// taken into the CP's write buffer, or a copy-engine data beat written; the controller faults
// the packet (WATCHDOG) when the watchdog expires. The count saturates.
//
// Progress is registered before it clears the count: it arrives late in the cycle (a dword
// taken is the end of the controller's decision), and the count is a 32-bit increment and
// compare behind it. The count restarts at 1 one cycle after progress, and progress_q masks
// the expiry in between, so the count and the expiry are those of a count cleared at once,
// cycle for cycle.
`default_nettype none

module sgpu_cp_watchdog (
  input  wire logic        clk_i,
  input  wire logic        rst_ni,
  /// CP_WATCHDOG: cycles without progress; 0 = off.
  input  wire logic [31:0] limit_i,
  /// A submission is being executed (sgpu_cp_pkg::watched): outside it the count restarts.
  input  wire logic        active_i,
  /// Progress this cycle.
  input  wire logic        progress_i,
  output      logic        expired_o
);

  logic [31:0] count_q, count_d;
  logic        progress_q;

  always_comb begin
    count_d = (count_q == '1) ? count_q : count_q + 32'd1;
    if (progress_q) count_d = 32'd1;  // the cycle after progress counted: as if cleared then
    if (!active_i) count_d = '0;
  end

  assign expired_o = (limit_i != '0) && active_i && !progress_q && (count_q >= limit_i);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q    <= '0;
      progress_q <= 1'b0;
    end else begin
      count_q    <= count_d;
      progress_q <= progress_i;
    end
  end

endmodule

`default_nettype wire
