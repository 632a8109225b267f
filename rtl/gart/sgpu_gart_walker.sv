// Page-table walker of the GART: reads one line of PTEs (up to 8, 64-byte aligned) from host
// memory through a DMA fetch engine of its own and hands them out one PTE per cycle.
//
// It has its own sgpu_dma_rd (with an identity translator: the table is at a bus address), so
// a walk never waits behind the reads of the engine it translates for; the two AXI read
// masters share the host-memory port through sgpu_axi_rd_arb, told apart by ID. One walk at a
// time: a walk is one short burst, and the GART walks ahead (prefetch) instead of in parallel.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_gart_walker #(
  /// AXI data width in bits (64..512, power of two).
  parameter int unsigned DataWidth = 64,
  /// AXI ID width.
  parameter int unsigned IdWidth = 4,
  /// ID of the walker's reads (must differ from the other masters on the port).
  parameter logic [IdWidth-1:0] AxiId = IdWidth'(1),
  /// AXI4 read request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_rd_req_t = sgpu_axi_pkg::axi_rd_req_t,
  parameter type axi_rd_rsp_t = sgpu_axi_pkg::axi_rd_rsp_t
) (
  /// Clock.
  input  wire logic                 clk_i,
  /// Asynchronous reset, active low (system reset: the bus is reset with it).
  input  wire logic                 rst_ni,

  /// Walk request (valid/ready); ready = no walk in flight, independent of req_valid_i.
  input  wire logic                 req_valid_i,
  /// No walk in flight.
  output      logic                 req_ready_o,
  /// Bus address of the first PTE (8-byte aligned; a walk never crosses 64 bytes).
  input  wire sgpu_pkg::addr_t      req_addr_i,
  /// Number of PTEs, 1..8.
  input  wire logic [3:0]           req_ptes_i,

  /// One PTE of the walk, in order (no back-pressure: the TLB takes one per cycle).
  output      logic                 pte_valid_o,
  /// Position of the PTE in the walk (0 = the PTE at req_addr_i).
  output      logic [2:0]           pte_idx_o,
  /// The PTE.
  output      sgpu_gart_pkg::pte_t  pte_o,
  /// One-cycle pulse: the walk ended (after its last PTE).
  output      logic                 done_o,
  /// With done_o: the read failed (SLVERR/DECERR); PTEs after the failure were not delivered.
  output      logic                 done_err_o,
  /// A walk is in flight.
  output      logic                 busy_o,

  /// AXI4 read master (ar, r).
  output      axi_rd_req_t          axi_rd_req_o,
  input  wire axi_rd_rsp_t          axi_rd_rsp_i
);

  localparam int unsigned BusBytes    = DataWidth / 8;
  localparam int unsigned PtesPerBeat = DataWidth / 64;
  localparam int unsigned LineBeats   = (sgpu_gart_pkg::LineBytes + BusBytes - 1) / BusBytes;
  localparam int unsigned JWidth      = (PtesPerBeat > 1) ? $clog2(PtesPerBeat) : 1;

  logic                      active_q, active_d;
  logic                      req_pend_q, req_pend_d;
  sgpu_pkg::addr_t           addr_q, addr_d;
  logic [3:0]                ptes_q, ptes_d;
  logic [2:0]                cnt_q, cnt_d;
  logic [JWidth-1:0]         j_q, j_d;

  logic                      dma_req_ready, dma_data_valid, dma_data_ready, dma_data_last;
  logic [DataWidth-1:0]      dma_data;
  logic [BusBytes-1:0]       dma_keep;
  logic                      dma_status_valid;
  sgpu_dma_pkg::dma_status_t dma_status;
  logic                      dma_busy;
  logic                      xreq_valid, xreq_ready, xrsp_valid, xrsp_ready;
  sgpu_dma_pkg::xlate_req_t  xreq;
  sgpu_dma_pkg::xlate_rsp_t  xrsp;

  assign req_ready_o = !active_q;
  assign busy_o      = active_q;

  sgpu_dma_rd #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         (AxiId),
    .MaxBurstBeats (LineBeats),
    .MaxOutstanding(2),  // one walk at a time; 2 keeps the engine's counters non-trivial
    .BufferBeats   ((LineBeats < 2) ? 2 : LineBeats),
    .MaxRequests   (2),
    .axi_rd_req_t  (axi_rd_req_t),
    .axi_rd_rsp_t  (axi_rd_rsp_t)
  ) u_dma_rd (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .abort_i          (1'b0),
    .busy_o           (dma_busy),
    .req_valid_i      (req_pend_q),
    .req_ready_o      (dma_req_ready),
    .req_i            ('{addr: addr_q,
                         len:  sgpu_dma_pkg::len_t'({ptes_q, 3'b000}),
                         tag:  '0}),
    .data_valid_o     (dma_data_valid),
    .data_ready_i     (dma_data_ready),
    .data_o           (dma_data),
    .data_keep_o      (dma_keep),
    .data_last_o      (dma_data_last),
    .status_valid_o   (dma_status_valid),
    .status_ready_i   (1'b1),
    .status_o         (dma_status),
    .xlate_req_valid_o(xreq_valid),
    .xlate_req_ready_i(xreq_ready),
    .xlate_req_o      (xreq),
    .xlate_req_tag_o  (),
    .xlate_rsp_valid_i(xrsp_valid),
    .xlate_rsp_ready_o(xrsp_ready),
    .xlate_rsp_i      (xrsp),
    .axi_rd_req_o(axi_rd_req_o), .axi_rd_rsp_i(axi_rd_rsp_i)
  );

  // The page table is addressed by bus address.
  sgpu_xlate_identity u_xlate (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .xlate_req_valid_i(xreq_valid),
    .xlate_req_ready_o(xreq_ready),
    .xlate_req_i      (xreq),
    .xlate_rsp_valid_o(xrsp_valid),
    .xlate_rsp_ready_i(xrsp_ready),
    .xlate_rsp_o      (xrsp)
  );

  ////////////////
  // Serializer //
  ////////////////

  // One PTE per cycle out of each beat: lane group j_q of the beat at the head of the stream.
  logic            last_of_beat;
  logic [JWidth:0] j_next;

  assign j_next       = (JWidth + 1)'(j_q) + 1'b1;
  assign last_of_beat = (j_next == (JWidth + 1)'(PtesPerBeat)) ||
                        !dma_keep[8 * (32'(j_next) % PtesPerBeat)];
  // Ready depends on the beat's contents (keep), never on its valid.
  assign dma_data_ready = last_of_beat;

  assign pte_valid_o = dma_data_valid;
  assign pte_idx_o   = cnt_q;
  assign pte_o       = sgpu_gart_pkg::pte_t'(dma_data[64 * (32'(j_q) % PtesPerBeat) +: 64]);

  always_comb begin
    active_d   = active_q;
    req_pend_d = req_pend_q && !dma_req_ready;
    addr_d     = addr_q;
    ptes_d     = ptes_q;
    cnt_d      = cnt_q;
    j_d        = j_q;
    done_o     = 1'b0;
    done_err_o = 1'b0;

    // The request's address and length are taken in every cycle the walker is free (they are
    // read only while req_pend_q, which is set only with active_q), so the GART's walk start
    // (behind its TLB hit and decision) ends in active_q and req_pend_q alone, not in the
    // payload's 68 load enables (timing pass 15).
    // The PTE count and lane group restart then too (no data streams while the walker is free:
    // NoDataWhenIdle), for the same reason.
    if (req_ready_o) begin
      addr_d = req_addr_i;
      ptes_d = req_ptes_i;
      cnt_d  = '0;
      j_d    = '0;
    end
    if (req_valid_i && req_ready_o) begin
      active_d   = 1'b1;
      req_pend_d = 1'b1;
    end
    if (dma_data_valid) begin
      cnt_d = cnt_q + 1'b1;
      j_d   = last_of_beat ? '0 : JWidth'(j_next);
    end
    if (dma_status_valid) begin
      active_d   = 1'b0;
      done_o     = 1'b1;
      done_err_o = dma_status.err != sgpu_dma_pkg::DmaOk;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      active_q   <= 1'b0;
      req_pend_q <= 1'b0;
      cnt_q      <= '0;
      j_q        <= '0;
    end else begin
      active_q   <= active_d;
      req_pend_q <= req_pend_d;
      cnt_q      <= cnt_d;
      j_q        <= j_d;
    end
  end

  // Request payload: only used while req_pend_q is set.
  always_ff @(posedge clk_i) begin
    addr_q <= addr_d;
    ptes_q <= ptes_d;
  end

  // The walk's end is known from its status; `last` and the single tag carry nothing more.
  logic unused;
  assign unused = dma_data_last ^ (^dma_status.tag) ^ dma_busy;

  ////////////////////////////
  // Elaboration-time checks //
  ////////////////////////////

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth >= 64 && DataWidth <= 512
                      && (DataWidth & (DataWidth - 1)) == 0,
                      "DataWidth must be a power of two between 64 and 512")

  ////////////////
  // Invariants //
  ////////////////

  `SGPU_ASSERT(NoDataWhenIdle, dma_data_valid |-> active_q)
  // The payload is only read while the request is pending, and that is only while active.
  `SGPU_ASSERT(PendOnlyActive, req_pend_q |-> active_q)
  `SGPU_ASSERT(PayloadIsRequest, (req_valid_i && req_ready_o) |=> addr_q == $past(req_addr_i)
                                   && ptes_q == $past(req_ptes_i))
  `SGPU_ASSERT(StartsAtZero, (req_valid_i && req_ready_o) |=> cnt_q == '0 && j_q == '0)
  `SGPU_ASSERT(PayloadHeld, active_q |=> $stable({addr_q, ptes_q}) || !active_q)
  `SGPU_ASSERT(AtMostOneLine, (req_valid_i && req_ready_o) |-> (req_ptes_i >= 4'd1 &&
                                        4'(req_addr_i[5:3]) + req_ptes_i <= 4'd8))

endmodule

`default_nettype wire
