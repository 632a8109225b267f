// AXI4 write master for small writes: one 64-bit word (with byte strobes) per request, issued as
// a single-beat burst. Used for WRITE_DATA, fences and the write-back record, behind the write
// translation (sgpu_wr_xlate): addresses here are bus addresses.
//
// Writes are issued in request order with one AXI ID, so responses return in order. `idle_o`
// is high when every issued write has been acknowledged: a fence waits for it before writing,
// so a fence is only visible after every earlier write.
`default_nettype none

module sgpu_axi_wr #(
  /// AXI data width in bits (>= 64, power of two).
  parameter int unsigned DataWidth = 64,
  parameter int unsigned IdWidth = 4,
  parameter logic [IdWidth-1:0] AxiId = '0,
  /// Writes in flight (address issued, response not yet received).
  parameter int unsigned MaxOutstanding = 8
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,

  /// Write request: 8-byte aligned address, data and byte strobes of that 64-bit word.
  input  wire logic                   req_valid_i,
  output      logic                   req_ready_o,
  input  wire sgpu_pkg::addr_t        req_addr_i,
  input  wire logic [63:0]            req_data_i,
  input  wire logic [7:0]             req_strb_i,
  /// Address reported on an error (err_addr_o): the GPU address the write was translated from.
  input  wire sgpu_pkg::addr_t        req_err_addr_i,

  /// No write is pending or in flight.
  output      logic                   idle_o,
  /// One-cycle pulse: a write response carried SLVERR/DECERR; err_addr_o is its req_err_addr_i.
  output      logic                   err_o,
  output      sgpu_pkg::addr_t        err_addr_o,

  output      logic                   m_axi_awvalid,
  input  wire logic                   m_axi_awready,
  output      logic [IdWidth-1:0]     m_axi_awid,
  output      logic [63:0]            m_axi_awaddr,
  output      logic [7:0]             m_axi_awlen,
  output      logic [2:0]             m_axi_awsize,
  output      logic [1:0]             m_axi_awburst,
  output      logic                   m_axi_wvalid,
  input  wire logic                   m_axi_wready,
  output      logic [DataWidth-1:0]   m_axi_wdata,
  output      logic [DataWidth/8-1:0] m_axi_wstrb,
  output      logic                   m_axi_wlast,
  input  wire logic                   m_axi_bvalid,
  output      logic                   m_axi_bready,
  input  wire logic [IdWidth-1:0]     m_axi_bid,
  input  wire logic [1:0]             m_axi_bresp
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
    assign lane = req_addr_i[3 +: LaneBits];
  end else begin : g_single_lane
    assign lane = '0;
  end
  always_comb begin
    lane_data = '0;
    lane_strb = '0;
    for (int unsigned i = 0; i < WordsPerBeat; i++) begin
      if (LaneBits'(i) == lane) begin
        lane_data[64*i +: 64] = req_data_i;
        lane_strb[8*i +: 8]   = req_strb_i;
      end
    end
  end

  sgpu_fifo #(.Width(64), .Depth(2)) u_aw_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (accept), .in_ready_o(aw_in_ready), .in_data_i({req_addr_i[63:3], 3'b000}),
    .out_valid_o(m_axi_awvalid), .out_ready_i(m_axi_awready), .out_data_o(m_axi_awaddr),
    .count_o    ()
  );

  sgpu_fifo #(.Width(DataWidth + StrbWidth), .Depth(2)) u_w_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (accept), .in_ready_o(w_in_ready), .in_data_i({lane_strb, lane_data}),
    .out_valid_o(m_axi_wvalid), .out_ready_i(m_axi_wready), .out_data_o({m_axi_wstrb, m_axi_wdata}),
    .count_o    ()
  );

  sgpu_pkg::addr_t rsp_addr;
  logic            rsp_valid;
  sgpu_fifo #(.Width(64), .Depth(MaxOutstanding)) u_rsp_fifo (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (accept), .in_ready_o(rsp_in_ready), .in_data_i(req_err_addr_i),
    .out_valid_o(rsp_valid), .out_ready_i(m_axi_bvalid), .out_data_o(rsp_addr),
    .count_o    (in_flight)
  );

  assign m_axi_awid    = AxiId;
  assign m_axi_awlen   = 8'd0;
  assign m_axi_awsize  = 3'($clog2(StrbWidth));
  assign m_axi_awburst = sgpu_pkg::AxiBurstIncr;
  assign m_axi_wlast   = 1'b1;
  assign m_axi_bready  = 1'b1;

  assign idle_o     = (in_flight == '0);
  assign err_o      = m_axi_bvalid && m_axi_bresp[1];
  assign err_addr_o = rsp_addr;

  // The ID is fixed and only bit 1 of a response tells an error (SLVERR/DECERR).
  // The low address bits are carried by the strobes.
  logic unused_rsp;
  assign unused_rsp = ^{m_axi_bid, m_axi_bresp[0], req_addr_i[2:0]};

`ifndef SYNTHESIS
  ResponseHasWrite: assert property (@(posedge clk_i) disable iff (!rst_ni)
      m_axi_bvalid |-> rsp_valid);
  ResponseId: assert property (@(posedge clk_i) disable iff (!rst_ni)
      m_axi_bvalid |-> m_axi_bid == AxiId);
`endif

  if (DataWidth < 64 || (DataWidth & (DataWidth - 1)) != 0) begin : g_bad_width
    $error("sgpu_axi_wr: DataWidth must be a power of two >= 64");
  end

endmodule

`default_nettype wire
