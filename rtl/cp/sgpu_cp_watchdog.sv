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
//
// The expiry itself is registered too (ge_q: the next count reaches the limit, decided from the
// current count a cycle ahead), so the controller's fault choice starts from a flip-flop rather
// than from a 32-bit compare. For that the limit is taken a cycle late (limit_q): a CP_WATCHDOG
// write reaches the watchdog one cycle after the register changes.
//
// The saturation is registered as well (sat_q: count_q is all ones), decided from the count a
// cycle ahead, so the count's next value is the increment and a multiplexer behind registers,
// without a 32-bit compare in series.
`include "sgpu_assert.svh"

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

  logic [31:0] count_q, count_d, limit_q;
  logic        progress_q, ge_q, ge_d;
  logic        sat_q, sat_d;  // count_q == '1

  always_comb begin
    count_d = sat_q ? count_q : count_q + 32'd1;
    sat_d   = sat_q || count_q == 32'hFFFF_FFFE;
    if (progress_q) begin  // the cycle after progress counted: as if cleared then
      count_d = 32'd1;
      sat_d   = 1'b0;
    end
    if (!active_i) begin
      count_d = '0;
      sat_d   = 1'b0;
    end
  end

  // count_d >= limit_i for a limit other than 0 (0 never expires: limit_q masks it), without the
  // increment in front of the compare: count_q + 1 >= limit is count_q >= limit - 1, also when
  // the count saturates; limit_i comes from a register, so its decrement is not in series.
  always_comb begin
    ge_d = count_q >= limit_i - 32'd1;
    if (progress_q) ge_d = limit_i <= 32'd1;
    if (!active_i) ge_d = 1'b0;
  end

  assign expired_o = (limit_q != '0) && active_i && !progress_q && ge_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      count_q    <= '0;
      sat_q      <= 1'b0;
      progress_q <= 1'b0;
      ge_q       <= 1'b0;
      limit_q    <= '0;
    end else begin
      count_q    <= count_d;
      sat_q      <= sat_d;
      progress_q <= progress_i;
      ge_q       <= ge_d;
      limit_q    <= limit_i;
    end
  end

  // The registered saturation is the compare it replaces.
  `SGPU_ASSERT(SatIsAllOnes, sat_q == (count_q == '1))

endmodule

`default_nettype wire
