// Identity translator for the DMA engines' translation port: bus page = GPU page, no faults.
//
// Stands in for the GART until it exists, and is what a design without an aperture uses. One
// response register: a request is answered in the next cycle, and a new request is accepted
// in every cycle in which the response is taken (or none is waiting), so it sustains one
// translation per cycle and never limits streaming.
`default_nettype none

module sgpu_xlate_identity (
  /// Clock.
  input  wire logic                     clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                     rst_ni,

  /// Translation request from the engine (valid/ready).
  input  wire logic                     xlate_req_valid_i,
  /// Ready for a request: depends only on the response side, never on xlate_req_valid_i.
  output      logic                     xlate_req_ready_o,
  /// The page to translate.
  input  wire sgpu_dma_pkg::xlate_req_t xlate_req_i,

  /// Response to the oldest request (valid/ready).
  output      logic                     xlate_rsp_valid_o,
  /// The engine takes the response.
  input  wire logic                     xlate_rsp_ready_i,
  /// Bus page (= GPU page) and fault (always 0).
  output      sgpu_dma_pkg::xlate_rsp_t xlate_rsp_o
);

  logic           rsp_valid_q, rsp_valid_d;
  sgpu_pkg::pfn_t ppn_q, ppn_d;

  assign xlate_req_ready_o = !rsp_valid_q || xlate_rsp_ready_i;

  always_comb begin
    rsp_valid_d = rsp_valid_q && !xlate_rsp_ready_i;
    ppn_d       = ppn_q;
    if (xlate_req_valid_i && xlate_req_ready_o) begin
      rsp_valid_d = 1'b1;
      ppn_d       = xlate_req_i.vpn;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rsp_valid_q <= 1'b0;
    end else begin
      rsp_valid_q <= rsp_valid_d;
    end
  end

  // Datapath: only meaningful while rsp_valid_q is set, so it needs no reset.
  always_ff @(posedge clk_i) begin
    ppn_q <= ppn_d;
  end

  assign xlate_rsp_valid_o = rsp_valid_q;
  assign xlate_rsp_o       = '{ppn: ppn_q, fault: 1'b0};

  // The fetch engine only reads; the write bit is part of the port for other clients.
  logic unused_write;
  assign unused_write = xlate_req_i.write;

endmodule

`default_nettype wire
