// AXI4 write master for small writes: one 64-bit word (with byte strobes) per request, issued as
// a single-beat burst. Used for WRITE_DATA, fences and the write-back record, behind the write
// translation (sgpu_wr_xlate): addresses here are bus addresses.
//
// Writes are issued in request order with one AXI ID, so responses return in order. `idle_o`
// is high when every issued write has been acknowledged: a fence waits for it before writing,
// so a fence is only visible after every earlier write.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi_wr #(
  /// AXI data width in bits (>= 64, power of two).
  parameter int unsigned DataWidth = 64,
  parameter int unsigned IdWidth = 4,
  parameter logic [IdWidth-1:0] AxiId = '0,
  /// Writes in flight (address issued, response not yet received).
  parameter int unsigned MaxOutstanding = 8,
  /// AXI4 write request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_wr_req_t = sgpu_axi_pkg::axi_wr_req_t,
  parameter type axi_wr_rsp_t = sgpu_axi_pkg::axi_wr_rsp_t
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,

  /// Write request: 8-byte aligned address, data and byte strobes of that 64-bit word.
  input  wire logic                   req_valid_i,
  output      logic                   req_ready_o,
  input  wire sgpu_pkg::word_wr_t     req_i,
  /// Address reported on an error (err_addr_o): the GPU address the write was translated from.
  input  wire sgpu_pkg::addr_t        req_err_addr_i,

  /// No write is pending or in flight.
  output      logic                   idle_o,
  /// One-cycle pulse: a write response carried SLVERR/DECERR; err_addr_o is its req_err_addr_i.
  output      logic                   err_o,
  output      sgpu_pkg::addr_t        err_addr_o,

  /// AXI4 write master (aw, w, b).
  output      axi_wr_req_t            axi_wr_req_o,
  input  wire axi_wr_rsp_t            axi_wr_rsp_i
);

  localparam int unsigned StrbWidth = DataWidth / 8;
  localparam int unsigned WordsPerBeat = DataWidth / 64;
  localparam int unsigned LaneBits = (WordsPerBeat > 1) ? $clog2(WordsPerBeat) : 1;
  localparam int unsigned CountWidth = $clog2(MaxOutstanding + 1);

  // The request is split into an AW and a W entry; each channel drains independently, and the
  // response FIFO remembers addresses so an error names the write that failed.
  // The response FIFO holds one entry per accepted write until its response: its fill level
  // is the number of writes in flight.
  logic aw_in_ready, w_in_ready, rsp_in_ready;
  logic [CountWidth-1:0] in_flight;
  logic accept;

  assign req_ready_o = aw_in_ready && w_in_ready && rsp_in_ready;
  assign accept = req_valid_i && req_ready_o;

  // Place the 64-bit word in its lane of the bus.
  logic [DataWidth-1:0] lane_data;
  logic [StrbWidth-1:0] lane_strb;
  logic [LaneBits-1:0]  lane;
  if (WordsPerBeat > 1) begin : g_lane_select
    assign lane = req_i.addr[3 +: LaneBits];
  end else begin : g_single_lane
    assign lane = '0;
  end
  always_comb begin
    lane_data = '0;
    lane_strb = '0;
    for (int unsigned i = 0; i < WordsPerBeat; i++) begin
      if (LaneBits'(i) == lane) begin
        lane_data[64*i +: 64] = req_i.data;
        lane_strb[8*i +: 8]   = req_i.strb;
      end
    end
  end

  sgpu_fifo #(.Width(64), .Depth(2)) u_aw_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (accept), .in_ready_o(aw_in_ready), .in_data_i({req_i.addr[63:3], 3'b000}),
    .out_valid_o(axi_wr_req_o.aw_valid), .out_ready_i(axi_wr_rsp_i.aw_ready),
    .out_data_o (axi_wr_req_o.aw.addr),
    .count_o    ()
  );

  // W leaves two cycles after its request at the earliest (the AW FIFO's register, then the
  // write port's W-order FIFO behind the AW handshake): four entries keep one write a cycle
  // (two would pass only two in three).
  sgpu_fifo #(.Width(DataWidth + StrbWidth), .Depth(4)) u_w_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (accept), .in_ready_o(w_in_ready), .in_data_i({lane_strb, lane_data}),
    .out_valid_o(axi_wr_req_o.w_valid), .out_ready_i(axi_wr_rsp_i.w_ready),
    .out_data_o ({axi_wr_req_o.w.strb, axi_wr_req_o.w.data}),
    .count_o    ()
  );

  sgpu_pkg::addr_t rsp_addr;
  logic            rsp_valid;
  sgpu_fifo #(.Width(64), .Depth(MaxOutstanding)) u_rsp_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (accept), .in_ready_o(rsp_in_ready), .in_data_i(req_err_addr_i),
    .out_valid_o(rsp_valid), .out_ready_i(axi_wr_rsp_i.b_valid), .out_data_o(rsp_addr),
    .count_o    (in_flight)
  );

  assign axi_wr_req_o.aw.id    = AxiId;
  assign axi_wr_req_o.aw.len   = 8'd0;
  assign axi_wr_req_o.aw.size  = 3'($clog2(StrbWidth));
  assign axi_wr_req_o.aw.burst = sgpu_pkg::AxiBurstIncr;
  assign axi_wr_req_o.w.last   = 1'b1;
  assign axi_wr_req_o.b_ready  = 1'b1;

  assign idle_o     = (in_flight == '0);
  assign err_o      = axi_wr_rsp_i.b_valid && axi_wr_rsp_i.b.resp[1];
  assign err_addr_o = rsp_addr;

  // The ID is fixed and only bit 1 of a response tells an error (SLVERR/DECERR).
  // The low address bits are carried by the strobes.
  logic unused_rsp;
  assign unused_rsp = ^{axi_wr_rsp_i.b.id, axi_wr_rsp_i.b.resp[0], req_i.addr[2:0]};

  `SGPU_ASSERT(ResponseHasWrite, axi_wr_rsp_i.b_valid |-> rsp_valid)
  `SGPU_ASSERT(ResponseId, axi_wr_rsp_i.b_valid |-> axi_wr_rsp_i.b.id == AxiId)

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth >= 64 && (DataWidth & (DataWidth - 1)) == 0,
                      "DataWidth must be a power of two >= 64")
  `SGPU_ASSERT_STATIC(g_bad_axi_types, $bits(axi_wr_req_o.w.data) == DataWidth
                      && $bits(axi_wr_req_o.aw.id) == IdWidth,
                      "the AXI types do not match DataWidth and IdWidth")

endmodule

`default_nettype wire
