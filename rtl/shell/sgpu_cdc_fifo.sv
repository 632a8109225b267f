// Asynchronous FIFO: valid/ready on both sides, each side in its own clock domain.
//
// Gray-coded read and write pointers cross through SyncStages flip-flops (ASYNC_REG); the
// storage is written in the source domain and read combinationally in the destination domain,
// only at entries the source has published through its pointer. Ready and valid depend only
// on pointers (never on the other side's valid/ready). Depth must cover the pointer round trip
// (about 2 x SyncStages + 2 cycles) for full throughput.
//
// Reset: both sides must be reset together (their resets come from one asynchronous source,
// each synchronised into its domain, see sgpu_rst_sync); a side alone in reset would lose the
// entries in flight. Timing (Vivado): the pointer and data paths between the domains are
// constrained with set_max_delay -datapath_only (fpga/constraints/cdc.xdc).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cdc_fifo #(
  /// Bits per entry.
  parameter int unsigned Width = 32,
  /// Entries: a power of two >= 4.
  parameter int unsigned Depth = 8,
  /// Synchroniser flip-flops per pointer bit (>= 2).
  parameter int unsigned SyncStages = 2
) (
  input  wire logic             src_clk_i,
  input  wire logic             src_rst_ni,
  input  wire logic             src_valid_i,
  output      logic             src_ready_o,
  input  wire logic [Width-1:0] src_data_i,

  input  wire logic             dst_clk_i,
  input  wire logic             dst_rst_ni,
  output      logic             dst_valid_o,
  input  wire logic             dst_ready_i,
  output      logic [Width-1:0] dst_data_o
);

  localparam int unsigned AddrBits = $clog2(Depth);
  localparam int unsigned PtrBits = AddrBits + 1;  // one extra bit tells full from empty

  function automatic logic [PtrBits-1:0] bin2gray(logic [PtrBits-1:0] b);
    return b ^ (b >> 1);
  endfunction

  // ------------------------------------------------------------------ source (write) side
  logic [PtrBits-1:0] wr_bin_q, wr_gray_q;
  logic [PtrBits-1:0] rd_gray_at_src;  // the read pointer, synchronised into the source domain
  logic               push;

  // Full: the write pointer is one lap ahead of the read pointer (top two Gray bits inverted).
  assign src_ready_o = wr_gray_q != {~rd_gray_at_src[PtrBits-1 -: 2], rd_gray_at_src[PtrBits-3:0]};
  assign push        = src_valid_i && src_ready_o;

  always_ff @(posedge src_clk_i or negedge src_rst_ni) begin
    if (!src_rst_ni) begin
      wr_bin_q  <= '0;
      wr_gray_q <= '0;
    end else if (push) begin
      wr_bin_q  <= wr_bin_q + 1'b1;
      wr_gray_q <= bin2gray(wr_bin_q + 1'b1);
    end
  end

  // Storage is not reset: the pointers say what is valid (LUT RAM).
  logic [Width-1:0] mem_q [Depth];
  always_ff @(posedge src_clk_i) begin
    if (push) mem_q[wr_bin_q[AddrBits-1:0]] <= src_data_i;
  end

  // ------------------------------------------------------------------ destination (read) side
  logic [PtrBits-1:0] rd_bin_q, rd_gray_q;
  logic [PtrBits-1:0] wr_gray_at_dst;
  logic               pop;

  assign dst_valid_o = rd_gray_q != wr_gray_at_dst;
  assign dst_data_o  = mem_q[rd_bin_q[AddrBits-1:0]];
  assign pop         = dst_valid_o && dst_ready_i;

  always_ff @(posedge dst_clk_i or negedge dst_rst_ni) begin
    if (!dst_rst_ni) begin
      rd_bin_q  <= '0;
      rd_gray_q <= '0;
    end else if (pop) begin
      rd_bin_q  <= rd_bin_q + 1'b1;
      rd_gray_q <= bin2gray(rd_bin_q + 1'b1);
    end
  end

  // ------------------------------------------------------------------ pointer crossings
  sgpu_sync #(.Width(PtrBits), .Stages(SyncStages)) u_wr_to_dst (
    .clk_i (dst_clk_i),
    .rst_ni(dst_rst_ni),
    .d_i   (wr_gray_q),
    .q_o   (wr_gray_at_dst)
  );

  sgpu_sync #(.Width(PtrBits), .Stages(SyncStages)) u_rd_to_src (
    .clk_i (src_clk_i),
    .rst_ni(src_rst_ni),
    .d_i   (rd_gray_q),
    .q_o   (rd_gray_at_src)
  );

  // Elaboration-time checks.
  `SGPU_ASSERT_STATIC(g_bad_depth, Depth >= 4 && (Depth & (Depth - 1)) == 0,
                     "Depth must be a power of two >= 4")
  `SGPU_ASSERT_STATIC(g_bad_stages, SyncStages >= 2, "SyncStages must be at least 2")

endmodule

`default_nettype wire
