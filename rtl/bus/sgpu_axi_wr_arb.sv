// Two AXI4 write masters onto one write port: master 0 the command processor's small-write
// master (sgpu_axi_wr), master 1 the copy engine's burst writer (sgpu_dma_wr).
//
// AW is granted round-robin as in sgpu_axi_rd_arb (by the same sgpu_axi_arb_ctrl): the grant
// is a register, the AW readies depend only on it, on the port's awready and on room in the
// W-order FIFO, and once the granted master raises awvalid the grant stays until the
// handshake. AXI4 has no WID: write data must follow the order of the addresses. Every AW
// handshake on the port pushes its master's number into a FIFO, and W beats are taken only
// from the master at the head of it, until that burst's wlast; so W never runs ahead of its AW
// on the port (a master may present W early: it simply waits). B responses are routed by ID
// (S1Id to master 1, every other ID to master 0); both masters must accept B at any time.
`default_nettype none

module sgpu_axi_wr_arb #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// The ID master 1 uses; B responses with this ID go to master 1, all others to master 0.
  parameter logic [IdWidth-1:0] S1Id = IdWidth'(2),
  /// AW handshakes whose data has not been sent yet (the W-order FIFO's depth).
  parameter int unsigned MaxPending = 16
) (
  /// Clock.
  input  wire logic                   clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                   rst_ni,

  /// Master 0 (the CP's write master).
  input  wire logic                   s0_axi_awvalid,
  output      logic                   s0_axi_awready,
  input  wire logic [IdWidth-1:0]     s0_axi_awid,
  input  wire logic [63:0]            s0_axi_awaddr,
  input  wire logic [7:0]             s0_axi_awlen,
  input  wire logic [2:0]             s0_axi_awsize,
  input  wire logic [1:0]             s0_axi_awburst,
  input  wire logic                   s0_axi_wvalid,
  output      logic                   s0_axi_wready,
  input  wire logic [DataWidth-1:0]   s0_axi_wdata,
  input  wire logic [DataWidth/8-1:0] s0_axi_wstrb,
  input  wire logic                   s0_axi_wlast,
  output      logic                   s0_axi_bvalid,
  input  wire logic                   s0_axi_bready,
  output      logic [IdWidth-1:0]     s0_axi_bid,
  output      logic [1:0]             s0_axi_bresp,

  /// Master 1 (the copy engine's writer).
  input  wire logic                   s1_axi_awvalid,
  output      logic                   s1_axi_awready,
  input  wire logic [IdWidth-1:0]     s1_axi_awid,
  input  wire logic [63:0]            s1_axi_awaddr,
  input  wire logic [7:0]             s1_axi_awlen,
  input  wire logic [2:0]             s1_axi_awsize,
  input  wire logic [1:0]             s1_axi_awburst,
  input  wire logic                   s1_axi_wvalid,
  output      logic                   s1_axi_wready,
  input  wire logic [DataWidth-1:0]   s1_axi_wdata,
  input  wire logic [DataWidth/8-1:0] s1_axi_wstrb,
  input  wire logic                   s1_axi_wlast,
  output      logic                   s1_axi_bvalid,
  input  wire logic                   s1_axi_bready,
  output      logic [IdWidth-1:0]     s1_axi_bid,
  output      logic [1:0]             s1_axi_bresp,

  /// The shared port.
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

  logic grant;  // 0: master 0, 1: master 1
  logic ord_in_ready, ord_valid, ord_head;

  // An AW is passed on only while the W-order FIFO has room for its master's number.
  sgpu_axi_arb_ctrl #(.IdWidth(IdWidth), .S1Id(S1Id)) u_ctrl (
    .clk_i, .rst_ni,
    .s0_req_valid_i(s0_axi_awvalid), .s0_req_ready_o(s0_axi_awready), .s0_req_id_i(s0_axi_awid),
    .s1_req_valid_i(s1_axi_awvalid), .s1_req_ready_o(s1_axi_awready), .s1_req_id_i(s1_axi_awid),
    .req_valid_o   (m_axi_awvalid),  .req_ready_i   (m_axi_awready),  .req_enable_i(ord_in_ready),
    .grant_o       (grant),
    .rsp_valid_i   (m_axi_bvalid),   .rsp_ready_o   (m_axi_bready),   .rsp_id_i   (m_axi_bid),
    .s0_rsp_valid_o(s0_axi_bvalid),  .s0_rsp_ready_i(s0_axi_bready),
    .s1_rsp_valid_o(s1_axi_bvalid),  .s1_rsp_ready_i(s1_axi_bready)
  );

  ////////
  // AW //
  ////////

  assign m_axi_awid     = grant ? s1_axi_awid    : s0_axi_awid;
  assign m_axi_awaddr   = grant ? s1_axi_awaddr  : s0_axi_awaddr;
  assign m_axi_awlen    = grant ? s1_axi_awlen   : s0_axi_awlen;
  assign m_axi_awsize   = grant ? s1_axi_awsize  : s0_axi_awsize;
  assign m_axi_awburst  = grant ? s1_axi_awburst : s0_axi_awburst;

  ///////
  // W //
  ///////

  logic aw_go, w_go;
  assign aw_go = m_axi_awvalid && m_axi_awready;
  assign w_go  = m_axi_wvalid && m_axi_wready && m_axi_wlast;

  sgpu_fifo #(.Width(1), .Depth(MaxPending)) u_order (
    .clk_i, .rst_ni, .clear_i(1'b0),
    .in_valid_i (aw_go), .in_ready_o(ord_in_ready), .in_data_i(grant),
    .out_valid_o(ord_valid), .out_ready_i(w_go), .out_data_o(ord_head), .count_o()
  );

  assign m_axi_wvalid  = ord_valid && (ord_head ? s1_axi_wvalid : s0_axi_wvalid);
  assign m_axi_wdata   = ord_head ? s1_axi_wdata : s0_axi_wdata;
  assign m_axi_wstrb   = ord_head ? s1_axi_wstrb : s0_axi_wstrb;
  assign m_axi_wlast   = ord_head ? s1_axi_wlast : s0_axi_wlast;
  assign s0_axi_wready = ord_valid && !ord_head && m_axi_wready;
  assign s1_axi_wready = ord_valid && ord_head && m_axi_wready;

  ///////
  // B //
  ///////

  assign s0_axi_bid    = m_axi_bid;
  assign s0_axi_bresp  = m_axi_bresp;
  assign s1_axi_bid    = m_axi_bid;
  assign s1_axi_bresp  = m_axi_bresp;

endmodule

`default_nettype wire
