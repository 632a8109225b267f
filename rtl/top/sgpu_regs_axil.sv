// AXI4-Lite front end of the generated register block (sgpu_regs, PeakRDL regblock with the
// passthrough CPU interface): takes AW+W and AR, offers one request at a time to the block from
// registers, and returns the block's acknowledgements in order on B and R.
//
// Why not PeakRDL's own AXI4-Lite interface: it chooses between the read and the write address
// and decodes the chosen one in the cycle the request arrives, so every register field's write
// enable and the readback's first stage sat behind that choice (about 7 LUT levels on an ECP5,
// docs/fpga.md timing pass 14). Here the request, its address and its data leave flip-flops; the
// choice is made a cycle earlier from the captured channels. A register access takes one cycle
// more than with PeakRDL's interface.
//
// Protocol with the block (PeakRDL's passthrough interface): a request is taken in a cycle with
// req high unless it is a write and req_stall_wr is high (the block holds a write back for a
// cycle behind a read, so that their acknowledgements do not meet); it is then acknowledged
// (rd_ack or wr_ack, with its error and read data) in that cycle (a write) or a later one (a
// read), in order, at most one acknowledgement per cycle.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_regs_axil #(
  /// Byte address width of the register map.
  parameter int unsigned AddrWidth = 12,
  /// Requests between issue and the end of their response (the response FIFO's depth), >= 1.
  parameter int unsigned MaxPending = 4
) (
  input  wire logic                 clk_i,
  input  wire logic                 rst_ni,

  // AXI4-Lite slave.
  input  wire logic                 s_axil_awvalid,
  output      logic                 s_axil_awready,
  input  wire logic [AddrWidth-1:0] s_axil_awaddr,
  input  wire logic                 s_axil_wvalid,
  output      logic                 s_axil_wready,
  input  wire logic [31:0]          s_axil_wdata,
  input  wire logic [3:0]           s_axil_wstrb,
  output      logic                 s_axil_bvalid,
  input  wire logic                 s_axil_bready,
  output      logic [1:0]           s_axil_bresp,
  input  wire logic                 s_axil_arvalid,
  output      logic                 s_axil_arready,
  input  wire logic [AddrWidth-1:0] s_axil_araddr,
  output      logic                 s_axil_rvalid,
  input  wire logic                 s_axil_rready,
  output      logic [31:0]          s_axil_rdata,
  output      logic [1:0]           s_axil_rresp,

  // The register block's passthrough CPU interface.
  output      logic                 cpuif_req_o,
  output      logic                 cpuif_req_is_wr_o,
  output      logic [AddrWidth-1:0] cpuif_addr_o,
  output      logic [31:0]          cpuif_wr_data_o,
  output      logic [31:0]          cpuif_wr_biten_o,
  input  wire logic                 cpuif_req_stall_wr_i,
  input  wire logic                 cpuif_req_stall_rd_i,
  input  wire logic                 cpuif_rd_ack_i,
  input  wire logic                 cpuif_rd_err_i,
  input  wire logic [31:0]          cpuif_rd_data_i,
  input  wire logic                 cpuif_wr_ack_i,
  input  wire logic                 cpuif_wr_err_i
);

  localparam int unsigned PendWidth = $clog2(MaxPending + 1);

  typedef struct packed {
    logic        is_wr;
    logic        err;
    logic [31:0] data;
  } rsp_t;

  ///////////////////////
  // Channel capture   //
  ///////////////////////

  // Each channel is taken into a register while it is empty; ready depends on that register only.
  logic                 ar_valid_q, aw_valid_q, w_valid_q;
  logic [AddrWidth-1:2] ar_addr_q, aw_addr_q;
  logic [31:0]          w_data_q;
  logic [3:0]           w_strb_q;

  // Byte offsets inside a register: the block decodes whole 32-bit registers.
  logic unused_byte_offsets;
  assign unused_byte_offsets = ^{s_axil_awaddr[1:0], s_axil_araddr[1:0]};

  assign s_axil_arready = !ar_valid_q;
  assign s_axil_awready = !aw_valid_q;
  assign s_axil_wready  = !w_valid_q;

  /////////////
  // Request //
  /////////////

  logic                 req_q, req_is_wr_q, prev_rd_q;
  logic [AddrWidth-1:0] req_addr_q;
  logic [31:0]          req_data_q, req_biten_q;
  logic [PendWidth-1:0] pend_q, pend_d;
  logic                 taken, issue, issue_rd, issue_wr, rsp_done;

  // The request register is free when empty or taken this cycle; a new request needs room for its
  // response. Reads and writes alternate when both wait (a write behind a read first).
  assign taken    = req_q && !(req_is_wr_q ? cpuif_req_stall_wr_i : cpuif_req_stall_rd_i);
  assign issue    = (!req_q || taken) && (pend_q != PendWidth'(MaxPending));
  assign issue_wr = issue && aw_valid_q && w_valid_q && (prev_rd_q || !ar_valid_q);
  assign issue_rd = issue && ar_valid_q && !issue_wr;

  assign cpuif_req_o       = req_q;
  assign cpuif_req_is_wr_o = req_is_wr_q;
  assign cpuif_addr_o      = req_addr_q;
  assign cpuif_wr_data_o   = req_data_q;
  assign cpuif_wr_biten_o  = req_biten_q;

  function automatic logic [31:0] strb_to_biten(logic [3:0] strb);
    logic [31:0] biten;
    for (int unsigned i = 0; i < 4; i++) biten[8*i +: 8] = {8{strb[i]}};
    return biten;
  endfunction

  //////////////
  // Response //
  //////////////

  // Acknowledgements go into a FIFO whose head drives B or R from a register. A request counts
  // as pending from its issue until its response is handed over, so the FIFO never overflows.
  logic rsp_valid, rsp_push, rsp_room;
  rsp_t rsp_in, rsp_head;

  assign rsp_push = cpuif_rd_ack_i || cpuif_wr_ack_i;
  assign rsp_in   = cpuif_rd_ack_i ? '{is_wr: 1'b0, err: cpuif_rd_err_i, data: cpuif_rd_data_i}
                                   : '{is_wr: 1'b1, err: cpuif_wr_err_i, data: '0};

  sgpu_fifo #(
    .Width ($bits(rsp_t)),
    .Depth (MaxPending),
    .RegOut(1'b1)
  ) u_rsp_fifo (
    .clk_i,
    .rst_ni,
    .clear_i    (1'b0),
    .in_valid_i (rsp_push),
    .in_ready_o (rsp_room),
    .in_data_i  (rsp_in),
    .out_valid_o(rsp_valid),
    .out_ready_i(rsp_head.is_wr ? s_axil_bready : s_axil_rready),
    .out_data_o (rsp_head),
    .count_o    ()
  );

  assign s_axil_bvalid = rsp_valid && rsp_head.is_wr;
  assign s_axil_rvalid = rsp_valid && !rsp_head.is_wr;
  assign s_axil_bresp  = rsp_head.err ? 2'b10 : 2'b00;  // SLVERR or OKAY
  assign s_axil_rresp  = s_axil_bresp;
  assign s_axil_rdata  = rsp_head.data;
  assign rsp_done      = (s_axil_bvalid && s_axil_bready) || (s_axil_rvalid && s_axil_rready);

  always_comb begin
    unique case ({issue_rd || issue_wr, rsp_done})
      2'b10:   pend_d = pend_q + 1'b1;
      2'b01:   pend_d = pend_q - 1'b1;
      default: pend_d = pend_q;
    endcase
  end

  ///////////////
  // Registers //
  ///////////////

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      ar_valid_q  <= 1'b0;
      aw_valid_q  <= 1'b0;
      w_valid_q   <= 1'b0;
      req_q       <= 1'b0;
      req_is_wr_q <= 1'b0;
      prev_rd_q   <= 1'b0;
      pend_q      <= '0;
    end else begin
      if (s_axil_arvalid && s_axil_arready) ar_valid_q <= 1'b1;
      else if (issue_rd)                    ar_valid_q <= 1'b0;
      if (s_axil_awvalid && s_axil_awready) aw_valid_q <= 1'b1;
      else if (issue_wr)                    aw_valid_q <= 1'b0;
      if (s_axil_wvalid && s_axil_wready)   w_valid_q  <= 1'b1;
      else if (issue_wr)                    w_valid_q  <= 1'b0;
      if (issue_rd || issue_wr) begin
        req_q       <= 1'b1;
        req_is_wr_q <= issue_wr;
        prev_rd_q   <= issue_rd;
      end else if (taken) begin
        req_q       <= 1'b0;
      end
      pend_q <= pend_d;
    end
  end

  // Payload registers: read only while their valid bits say so.
  always_ff @(posedge clk_i) begin
    if (s_axil_arvalid && s_axil_arready) ar_addr_q <= s_axil_araddr[AddrWidth-1:2];
    if (s_axil_awvalid && s_axil_awready) aw_addr_q <= s_axil_awaddr[AddrWidth-1:2];
    if (s_axil_wvalid && s_axil_wready) begin
      w_data_q <= s_axil_wdata;
      w_strb_q <= s_axil_wstrb;
    end
    if (issue_rd || issue_wr) begin
      req_addr_q  <= {(issue_wr ? aw_addr_q : ar_addr_q), 2'b00};
      req_data_q  <= w_data_q;
      req_biten_q <= strb_to_biten(w_strb_q);
    end
  end

  ////////////////
  // Invariants //
  ////////////////

  `SGPU_ASSERT_STATIC(g_bad_pending, MaxPending >= 1, "MaxPending must be at least 1")
  // Every acknowledgement answers a request still pending, one at a time, and finds room.
  `SGPU_ASSERT(OneAckPerCycle, !(cpuif_rd_ack_i && cpuif_wr_ack_i))
  `SGPU_ASSERT(AckHasRoom, rsp_push |-> rsp_room)
  `SGPU_ASSERT(PendingBounded, pend_q <= PendWidth'(MaxPending))
  // A request waits in its register until taken.
  `SGPU_ASSERT(RequestHeld, req_q && !taken |=> req_q && $stable(req_is_wr_q) && $stable(req_addr_q))

endmodule

`default_nettype wire
