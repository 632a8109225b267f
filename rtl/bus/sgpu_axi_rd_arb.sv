// Two AXI4 read masters onto one read port. Address requests are granted round-robin; read
// data is routed back by ID, so the masters must use different IDs (S1Id for master 1, any
// other ID for master 0) and must accept read data at any time (rready high, as every
// sgpu_dma_rd does: it reserves buffer room before issuing).
//
// The grant is a register: the AR readies depend only on it and on the port's arready, never
// on an arvalid. Once the granted master raises arvalid the grant stays until the handshake,
// so the port's AR payload is stable as AXI requires. Switching to a waiting master costs one
// cycle, which is nothing next to bursts of up to 256 beats.
`default_nettype none

module sgpu_axi_rd_arb #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// The ID master 1 uses; R beats with this ID go to master 1, all others to master 0.
  parameter logic [IdWidth-1:0] S1Id = IdWidth'(1)
) (
  /// Clock.
  input  wire logic                 clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                 rst_ni,

  /// Master 0 (e.g. the DMA fetch engine).
  input  wire logic                 s0_axi_arvalid,
  output      logic                 s0_axi_arready,
  input  wire logic [IdWidth-1:0]   s0_axi_arid,
  input  wire logic [63:0]          s0_axi_araddr,
  input  wire logic [7:0]           s0_axi_arlen,
  input  wire logic [2:0]           s0_axi_arsize,
  input  wire logic [1:0]           s0_axi_arburst,
  output      logic                 s0_axi_rvalid,
  input  wire logic                 s0_axi_rready,
  output      logic [IdWidth-1:0]   s0_axi_rid,
  output      logic [DataWidth-1:0] s0_axi_rdata,
  output      logic [1:0]           s0_axi_rresp,
  output      logic                 s0_axi_rlast,

  /// Master 1 (e.g. the GART's page-table walker).
  input  wire logic                 s1_axi_arvalid,
  output      logic                 s1_axi_arready,
  input  wire logic [IdWidth-1:0]   s1_axi_arid,
  input  wire logic [63:0]          s1_axi_araddr,
  input  wire logic [7:0]           s1_axi_arlen,
  input  wire logic [2:0]           s1_axi_arsize,
  input  wire logic [1:0]           s1_axi_arburst,
  output      logic                 s1_axi_rvalid,
  input  wire logic                 s1_axi_rready,
  output      logic [IdWidth-1:0]   s1_axi_rid,
  output      logic [DataWidth-1:0] s1_axi_rdata,
  output      logic [1:0]           s1_axi_rresp,
  output      logic                 s1_axi_rlast,

  /// The shared read port.
  output      logic                 m_axi_arvalid,
  input  wire logic                 m_axi_arready,
  output      logic [IdWidth-1:0]   m_axi_arid,
  output      logic [63:0]          m_axi_araddr,
  output      logic [7:0]           m_axi_arlen,
  output      logic [2:0]           m_axi_arsize,
  output      logic [1:0]           m_axi_arburst,
  input  wire logic                 m_axi_rvalid,
  output      logic                 m_axi_rready,
  input  wire logic [IdWidth-1:0]   m_axi_rid,
  input  wire logic [DataWidth-1:0] m_axi_rdata,
  input  wire logic [1:0]           m_axi_rresp,
  input  wire logic                 m_axi_rlast
);

  ////////
  // AR //
  ////////

  logic grant_q, grant_d;  // 0: master 0, 1: master 1

  assign m_axi_arvalid  = grant_q ? s1_axi_arvalid : s0_axi_arvalid;
  assign m_axi_arid     = grant_q ? s1_axi_arid    : s0_axi_arid;
  assign m_axi_araddr   = grant_q ? s1_axi_araddr  : s0_axi_araddr;
  assign m_axi_arlen    = grant_q ? s1_axi_arlen   : s0_axi_arlen;
  assign m_axi_arsize   = grant_q ? s1_axi_arsize  : s0_axi_arsize;
  assign m_axi_arburst  = grant_q ? s1_axi_arburst : s0_axi_arburst;
  assign s0_axi_arready = !grant_q && m_axi_arready;
  assign s1_axi_arready = grant_q && m_axi_arready;

  logic own_valid, other_valid;
  assign own_valid   = grant_q ? s1_axi_arvalid : s0_axi_arvalid;
  assign other_valid = grant_q ? s0_axi_arvalid : s1_axi_arvalid;

  // Keep the grant while its master waits; hand it over after a handshake (round-robin) or
  // when the granted master is idle and the other one asks.
  always_comb begin
    grant_d = grant_q;
    if (other_valid && (!own_valid || m_axi_arready)) grant_d = !grant_q;
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      grant_q <= 1'b0;
    end else begin
      grant_q <= grant_d;
    end
  end

  ///////
  // R //
  ///////

  logic to_s1;
  assign to_s1 = (m_axi_rid == S1Id);

  assign s0_axi_rvalid = m_axi_rvalid && !to_s1;
  assign s1_axi_rvalid = m_axi_rvalid && to_s1;
  assign m_axi_rready  = to_s1 ? s1_axi_rready : s0_axi_rready;

  assign s0_axi_rid    = m_axi_rid;
  assign s0_axi_rdata  = m_axi_rdata;
  assign s0_axi_rresp  = m_axi_rresp;
  assign s0_axi_rlast  = m_axi_rlast;
  assign s1_axi_rid    = m_axi_rid;
  assign s1_axi_rdata  = m_axi_rdata;
  assign s1_axi_rresp  = m_axi_rresp;
  assign s1_axi_rlast  = m_axi_rlast;

  ////////////////
  // Invariants //
  ////////////////

`ifndef SYNTHESIS
  // Master 0 must not use master 1's ID, or its read data would be misrouted.
  DistinctIds: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s0_axi_arvalid |-> s0_axi_arid != S1Id);
  Master1Id: assert property (@(posedge clk_i) disable iff (!rst_ni)
      s1_axi_arvalid |-> s1_axi_arid == S1Id);
  // A raised AR keeps its master until the handshake.
  GrantHeld: assert property (@(posedge clk_i) disable iff (!rst_ni)
      (m_axi_arvalid && !m_axi_arready) |=> $stable(grant_q));
`endif

endmodule

`default_nettype wire
