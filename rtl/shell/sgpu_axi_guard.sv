// Refuses host-memory accesses beyond a bridge's reach before they reach the bridge: a burst
// whose address has bits set at or above AddrBits is answered here with DECERR (reads: every
// beat; writes: after taking its data) and never forwarded, so it can neither wrap into a wrong
// address nor hang in the bridge. Everything else passes through unchanged.
//
// A refused burst waits until the forwarded bursts of its direction have all been answered, so
// responses stay in order whatever the IDs; refusals are rare (a bad address is a driver bug or
// a fault being tested), so this costs nothing in normal operation.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi_guard #(
  parameter int unsigned DataWidth = 256,
  parameter int unsigned IdWidth = 4,
  /// Bus address bits the bridge reaches.
  parameter int unsigned AddrBits = 48,
  /// Forwarded bursts per direction in flight (the bridge's limit or more).
  parameter int unsigned MaxOutstanding = 32
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,

  input  wire logic                   s_axi_awvalid,
  output      logic                   s_axi_awready,
  input  wire logic [IdWidth-1:0]     s_axi_awid,
  input  wire logic [63:0]            s_axi_awaddr,
  input  wire logic [7:0]             s_axi_awlen,
  input  wire logic [2:0]             s_axi_awsize,
  input  wire logic [1:0]             s_axi_awburst,
  input  wire logic                   s_axi_wvalid,
  output      logic                   s_axi_wready,
  input  wire logic [DataWidth-1:0]   s_axi_wdata,
  input  wire logic [DataWidth/8-1:0] s_axi_wstrb,
  input  wire logic                   s_axi_wlast,
  output      logic                   s_axi_bvalid,
  input  wire logic                   s_axi_bready,
  output      logic [IdWidth-1:0]     s_axi_bid,
  output      logic [1:0]             s_axi_bresp,
  input  wire logic                   s_axi_arvalid,
  output      logic                   s_axi_arready,
  input  wire logic [IdWidth-1:0]     s_axi_arid,
  input  wire logic [63:0]            s_axi_araddr,
  input  wire logic [7:0]             s_axi_arlen,
  input  wire logic [2:0]             s_axi_arsize,
  input  wire logic [1:0]             s_axi_arburst,
  output      logic                   s_axi_rvalid,
  input  wire logic                   s_axi_rready,
  output      logic [IdWidth-1:0]     s_axi_rid,
  output      logic [DataWidth-1:0]   s_axi_rdata,
  output      logic [1:0]             s_axi_rresp,
  output      logic                   s_axi_rlast,

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
  input  wire logic [1:0]             m_axi_bresp,
  output      logic                   m_axi_arvalid,
  input  wire logic                   m_axi_arready,
  output      logic [IdWidth-1:0]     m_axi_arid,
  output      logic [63:0]            m_axi_araddr,
  output      logic [7:0]             m_axi_arlen,
  output      logic [2:0]             m_axi_arsize,
  output      logic [1:0]             m_axi_arburst,
  input  wire logic                   m_axi_rvalid,
  output      logic                   m_axi_rready,
  input  wire logic [IdWidth-1:0]     m_axi_rid,
  input  wire logic [DataWidth-1:0]   m_axi_rdata,
  input  wire logic [1:0]             m_axi_rresp,
  input  wire logic                   m_axi_rlast
);

  localparam logic [63:0] BeyondReach = (AddrBits >= 64) ? 64'h0 : ~((64'h1 << AddrBits) - 1);
  localparam int unsigned CountBits = $clog2(MaxOutstanding + 1);

  // ------------------------------------------------------------------ reads
  logic                 ar_refuse, rd_busy_q;        // rd_busy_q: answering a refused burst
  logic [IdWidth-1:0]   rd_id_q;
  logic [7:0]           rd_left_q;
  logic [CountBits-1:0] rd_out_q;                    // forwarded reads without their last beat
  logic                 ar_fwd, r_last_fwd;

  assign ar_refuse     = (s_axi_araddr & BeyondReach) != '0;
  assign m_axi_arvalid = s_axi_arvalid && !ar_refuse && !rd_busy_q && rd_out_q != CountBits'(MaxOutstanding);
  assign m_axi_arid    = s_axi_arid;
  assign m_axi_araddr  = s_axi_araddr;
  assign m_axi_arlen   = s_axi_arlen;
  assign m_axi_arsize  = s_axi_arsize;
  assign m_axi_arburst = s_axi_arburst;
  // A refused burst is taken once nothing forwarded is in flight.
  assign s_axi_arready = !rd_busy_q && (ar_refuse ? rd_out_q == '0
                                                  : (m_axi_arready && rd_out_q != CountBits'(MaxOutstanding)));
  assign ar_fwd        = m_axi_arvalid && m_axi_arready;

  assign s_axi_rvalid  = rd_busy_q || m_axi_rvalid;
  assign s_axi_rid     = rd_busy_q ? rd_id_q : m_axi_rid;
  assign s_axi_rdata   = rd_busy_q ? '0 : m_axi_rdata;
  assign s_axi_rresp   = rd_busy_q ? sgpu_pkg::AxiRespDecErr : m_axi_rresp;
  assign s_axi_rlast   = rd_busy_q ? (rd_left_q == '0) : m_axi_rlast;
  assign m_axi_rready  = !rd_busy_q && s_axi_rready;
  assign r_last_fwd    = m_axi_rvalid && m_axi_rready && m_axi_rlast;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_busy_q <= 1'b0;
      rd_id_q   <= '0;
      rd_left_q <= '0;
      rd_out_q  <= '0;
    end else begin
      rd_out_q <= rd_out_q + CountBits'(ar_fwd) - CountBits'(r_last_fwd);
      if (s_axi_arvalid && s_axi_arready && ar_refuse) begin
        rd_busy_q <= 1'b1;
        rd_id_q   <= s_axi_arid;
        rd_left_q <= s_axi_arlen;
      end else if (rd_busy_q && s_axi_rready) begin
        if (rd_left_q == '0) rd_busy_q <= 1'b0;
        else rd_left_q <= rd_left_q - 1'b1;
      end
    end
  end

  // ------------------------------------------------------------------ writes
  logic                 aw_refuse, wr_drop_q, wr_resp_q;  // dropping a refused burst's data / answering it
  logic [IdWidth-1:0]   wr_id_q;
  logic [CountBits-1:0] wr_out_q;                   // forwarded writes without their B
  logic [CountBits-1:0] w_owed_q;                   // forwarded writes whose data is not all sent
  logic                 aw_fwd, b_fwd, w_fwd_last, w_may;

  assign aw_refuse     = (s_axi_awaddr & BeyondReach) != '0;
  assign m_axi_awvalid = s_axi_awvalid && !aw_refuse && !wr_drop_q && !wr_resp_q &&
                         wr_out_q != CountBits'(MaxOutstanding);
  assign m_axi_awid    = s_axi_awid;
  assign m_axi_awaddr  = s_axi_awaddr;
  assign m_axi_awlen   = s_axi_awlen;
  assign m_axi_awsize  = s_axi_awsize;
  assign m_axi_awburst = s_axi_awburst;
  assign s_axi_awready = !wr_drop_q && !wr_resp_q &&
                         (aw_refuse ? wr_out_q == '0 : (m_axi_awready && wr_out_q != CountBits'(MaxOutstanding)));
  assign aw_fwd        = m_axi_awvalid && m_axi_awready;

  // W follows AW in order: data goes on only for a forwarded AW (a beat offered early, before
  // its AW was taken, waits: from the cycle after it); a refused burst's data is taken here.
  assign w_may         = w_owed_q != '0;
  assign m_axi_wvalid  = s_axi_wvalid && !wr_drop_q && w_may;
  assign m_axi_wdata   = s_axi_wdata;
  assign m_axi_wstrb   = s_axi_wstrb;
  assign m_axi_wlast   = s_axi_wlast;
  assign s_axi_wready  = wr_drop_q ? 1'b1 : (m_axi_wready && w_may);
  assign w_fwd_last    = m_axi_wvalid && m_axi_wready && m_axi_wlast;

  assign s_axi_bvalid  = wr_resp_q || m_axi_bvalid;
  assign s_axi_bid     = wr_resp_q ? wr_id_q : m_axi_bid;
  assign s_axi_bresp   = wr_resp_q ? sgpu_pkg::AxiRespDecErr : m_axi_bresp;
  assign m_axi_bready  = !wr_resp_q && s_axi_bready;
  assign b_fwd         = m_axi_bvalid && m_axi_bready;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      wr_drop_q <= 1'b0;
      wr_resp_q <= 1'b0;
      wr_id_q   <= '0;
      wr_out_q  <= '0;
      w_owed_q  <= '0;
    end else begin
      wr_out_q <= wr_out_q + CountBits'(aw_fwd) - CountBits'(b_fwd);
      w_owed_q <= w_owed_q + CountBits'(aw_fwd) - CountBits'(w_fwd_last);
      if (s_axi_awvalid && s_axi_awready && aw_refuse) begin
        wr_drop_q <= 1'b1;
        wr_id_q   <= s_axi_awid;
      end else if (wr_drop_q && s_axi_wvalid && s_axi_wlast) begin
        wr_drop_q <= 1'b0;
        wr_resp_q <= 1'b1;
      end else if (wr_resp_q && s_axi_bready) begin
        wr_resp_q <= 1'b0;
      end
    end
  end

  // A refused write's data arrives after its AW: nothing forwarded is still sending data then.
  `SGPU_ASSERT(NoForwardedDataWhileDropping, wr_drop_q |-> wr_out_q == '0)

endmodule

`default_nettype wire
