// Simulation top for the GART's tests and benchmark (Verilator): the read path of sgpu_top
// without the command processor. A DMA fetch engine (the client) and the GART's walker share
// one AXI4 read port through sgpu_axi_rd_arb, exactly as in sgpu_top. Struct ports are
// flattened into plain vectors for the C++ harness.
//
// The GART's translation port is shared through sgpu_gart_arb, as in sgpu_top: client 0 is the
// fetch engine, client 1 the harness's direct port (dx_*: exact per-request checks against the
// C++ model; it stands in for the CP's write path). mode_i:
//   0, 2  the fetch engine is translated by the GART (both clients may run at once)
//   1     the fetch engine is translated by sgpu_xlate_identity (the GART sees only the direct
//         port): the identity baseline of the benchmark
`include "sgpu_axi_typedef.svh"
`include "sgpu_axi_assign.svh"
`include "sgpu_tb_axi_ports.svh"

`default_nettype none

module sgpu_gart_tb_top #(
  /// AXI data width in bits.
  parameter int unsigned DataWidth = 64,
  /// GART TLB entries.
  parameter int unsigned TlbEntries = 32
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  input  wire logic [1:0]             mode_i,

  // Fetch engine.
  input  wire logic                   abort_i,
  output      logic                   busy_o,
  /// The fetch engine's data buffer in beats (its default), for bounds that depend on it.
  output      logic [31:0]            buffer_beats_o,
  input  wire logic                   req_valid_i,
  output      logic                   req_ready_o,
  input  wire logic [63:0]            req_addr_i,
  input  wire logic [31:0]            req_len_i,
  input  wire logic [3:0]             req_tag_i,
  output      logic                   data_valid_o,
  input  wire logic                   data_ready_i,
  output      logic [DataWidth-1:0]   data_o,
  output      logic [DataWidth/8-1:0] data_keep_o,
  output      logic                   data_last_o,
  output      logic                   status_valid_o,
  input  wire logic                   status_ready_i,
  output      logic [3:0]             status_tag_o,
  output      logic [2:0]             status_err_o,

  // Direct translation port (mode 2).
  input  wire logic                   dx_req_valid_i,
  output      logic                   dx_req_ready_o,
  input  wire logic [51:0]            dx_req_vpn_i,
  input  wire logic                   dx_req_write_i,
  output      logic                   dx_rsp_valid_o,
  input  wire logic                   dx_rsp_ready_i,
  output      logic [51:0]            dx_rsp_ppn_o,
  output      logic                   dx_rsp_fault_o,
  output      logic                   dx_rsp_snoop_o,

  // GART configuration and the submission being executed.
  input  wire logic                   enable_i,
  input  wire logic [63:0]            table_base_i,
  input  wire logic [31:0]            table_size_i,
  input  wire logic                   priv_i,
  input  wire logic [63:0]            fence_i,
  input  wire logic [31:0]            context_i,

  // Invalidation.
  input  wire logic                   inv_valid_i,
  output      logic                   inv_ready_o,
  input  wire logic                   inv_all_i,
  input  wire logic [31:0]            inv_first_i,
  input  wire logic [31:0]            inv_count_i,
  output      logic                   inv_busy_o,
  output      logic                   inv_done_o,

  // Fault record.
  input  wire logic                   fault_clear_i,
  output      logic                   fault_valid_o,
  output      logic                   fault_more_o,
  output      logic                   fault_write_o,
  output      logic                   fault_priv_o,
  output      logic [3:0]             fault_reason_o,
  output      logic [3:0]             fault_client_o,
  output      logic [63:0]            fault_addr_o,
  output      logic [63:0]            fault_fence_o,
  output      logic [31:0]            fault_context_o,
  output      logic                   fault_evt_o,

  output      logic                   walk_busy_o,
  output      logic [31:0]            perf_lookups_o,
  output      logic [31:0]            perf_misses_o,
  output      logic [31:0]            perf_walks_o,

  // The shared AXI4 read port.
  /// AXI4 read port (fetch engine and walker through the read arbiter), flat.
  `SGPU_TB_AXI_RD_PORTS(4, DataWidth)
);

  localparam logic [3:0] WalkId = 4'd1;

  sgpu_dma_pkg::dma_status_t status;
  sgpu_dma_pkg::xlate_req_t  fe_xreq, g_xreq;
  sgpu_dma_pkg::xlate_rsp_t  fe_xrsp, g_xrsp, id_xrsp;
  logic                      fe_xreq_valid, fe_xreq_ready, fe_xrsp_valid, fe_xrsp_ready;
  logic                      g_xreq_valid, g_xreq_ready, g_xrsp_valid, g_xrsp_ready;
  logic                      id_xreq_ready, id_xrsp_valid;
  logic                      use_identity;
  sgpu_gart_pkg::xlate_src_t g_src;

  assign use_identity = (mode_i == 2'd1);

  `SGPU_AXI_TYPEDEF_RD(axi_rd, logic [3:0], logic [DataWidth-1:0])
  axi_rd_req_t fetch_rd_req, walk_rd_req, rd_req;
  axi_rd_rsp_t fetch_rd_rsp, walk_rd_rsp, rd_rsp;
  `SGPU_AXI_FLAT_RD(rd_req, rd_rsp)

  assign buffer_beats_o = 32'(sgpu_dma_pkg::DefaultBufferBeats);

  sgpu_dma_rd #(
    .DataWidth   (DataWidth),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t)
  ) u_fetch (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .abort_i          (abort_i),
    .busy_o           (busy_o),
    .req_valid_i      (req_valid_i),
    .req_ready_o      (req_ready_o),
    .req_i            ('{addr: req_addr_i, len: req_len_i, tag: req_tag_i}),
    .data_valid_o     (data_valid_o),
    .data_ready_i     (data_ready_i),
    .data_o           (data_o),
    .data_keep_o      (data_keep_o),
    .data_last_o      (data_last_o),
    .status_valid_o   (status_valid_o),
    .status_ready_i   (status_ready_i),
    .status_o         (status),
    .xlate_req_valid_o(fe_xreq_valid),
    .xlate_req_ready_i(fe_xreq_ready),
    .xlate_req_o      (fe_xreq),
    .xlate_req_tag_o  (),
    .xlate_rsp_valid_i(fe_xrsp_valid),
    .xlate_rsp_ready_o(fe_xrsp_ready),
    .xlate_rsp_i      (fe_xrsp),
    .axi_rd_req_o     (fetch_rd_req),
    .axi_rd_rsp_i     (fetch_rd_rsp)
  );

  sgpu_xlate_identity u_identity (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .xlate_req_valid_i(fe_xreq_valid && use_identity),
    .xlate_req_ready_o(id_xreq_ready),
    .xlate_req_i      (fe_xreq),
    .xlate_rsp_valid_o(id_xrsp_valid),
    .xlate_rsp_ready_i(fe_xrsp_ready && use_identity),
    .xlate_rsp_o      (id_xrsp)
  );

  // The GART's clients: the fetch engine (unless identity-translated) and the direct port.
  logic                     [1:0] cl_req_valid, cl_req_ready, cl_rsp_valid, cl_rsp_ready;
  sgpu_dma_pkg::xlate_req_t [1:0] cl_req;
  sgpu_dma_pkg::xlate_rsp_t [1:0] cl_rsp;
  logic                     [1:0] cl_rsp_snoop;
  logic                           g_xrsp_snoop;

  assign cl_req_valid[0] = fe_xreq_valid && !use_identity;
  assign cl_req[0]       = fe_xreq;
  assign cl_rsp_ready[0] = fe_xrsp_ready && !use_identity;
  assign cl_req_valid[1] = dx_req_valid_i;
  assign cl_req[1]       = '{vpn: dx_req_vpn_i, write: dx_req_write_i};
  assign cl_rsp_ready[1] = dx_rsp_ready_i;

  sgpu_gart_arb #(
    .Clients(2)
  ) u_gart_arb (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .cl_req_valid_i   (cl_req_valid),
    .cl_req_ready_o   (cl_req_ready),
    .cl_req_i         (cl_req),
    .cl_priv_i        ({priv_i, priv_i}),
    .cl_quiet_i       (2'b00),
    .cl_rsp_valid_o   (cl_rsp_valid),
    .cl_rsp_ready_i   (cl_rsp_ready),
    .cl_rsp_o         (cl_rsp),
    .cl_rsp_snoop_o   (cl_rsp_snoop),
    .xlate_req_valid_o(g_xreq_valid),
    .xlate_req_ready_i(g_xreq_ready),
    .xlate_req_o      (g_xreq),
    .xlate_src_o      (g_src),
    .xlate_rsp_valid_i(g_xrsp_valid),
    .xlate_rsp_ready_o(g_xrsp_ready),
    .xlate_rsp_i      (g_xrsp),
    .xlate_rsp_snoop_i(g_xrsp_snoop)
  );

  assign dx_req_ready_o = cl_req_ready[1];
  assign dx_rsp_valid_o = cl_rsp_valid[1];
  assign dx_rsp_ppn_o   = cl_rsp[1].ppn;
  assign dx_rsp_fault_o = cl_rsp[1].fault;
  assign dx_rsp_snoop_o = cl_rsp_snoop[1];

  assign fe_xreq_ready = use_identity ? id_xreq_ready : cl_req_ready[0];
  assign fe_xrsp_valid = use_identity ? id_xrsp_valid : cl_rsp_valid[0];
  assign fe_xrsp       = use_identity ? id_xrsp : cl_rsp[0];

  sgpu_gart_pkg::fault_rec_t fault;

  sgpu_gart #(
    .DataWidth (DataWidth),
    .IdWidth   (4),
    .WalkAxiId (WalkId),
    .TlbEntries(TlbEntries),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t)
  ) u_gart (
    .clk_i            (clk_i),
    .rst_ni           (rst_ni),
    .enable_i         (enable_i),
    .table_base_i     (table_base_i),
    .table_size_i     (table_size_i),
    .exec_i           ('{fence: fence_i, context_id: context_i}),
    .xlate_req_valid_i(g_xreq_valid),
    .xlate_req_ready_o(g_xreq_ready),
    .xlate_req_i      (g_xreq),
    .xlate_src_i      (g_src),
    .xlate_rsp_valid_o(g_xrsp_valid),
    .xlate_rsp_ready_i(g_xrsp_ready),
    .xlate_rsp_o      (g_xrsp),
    .xlate_rsp_snoop_o(g_xrsp_snoop),
    .inv_valid_i      (inv_valid_i),
    .inv_ready_o      (inv_ready_o),
    .inv_i            ('{all: inv_all_i, first: inv_first_i, count: inv_count_i}),
    .inv_busy_o       (inv_busy_o),
    .inv_done_o       (inv_done_o),
    .fault_clear_i    (fault_clear_i),
    .fault_o          (fault),
    .fault_evt_o      (fault_evt_o),
    .walk_busy_o      (walk_busy_o),
    .perf_lookups_o   (perf_lookups_o),
    .perf_misses_o    (perf_misses_o),
    .perf_walks_o     (perf_walks_o),
    .axi_rd_req_o     (walk_rd_req),
    .axi_rd_rsp_i     (walk_rd_rsp)
  );

  assign fault_valid_o   = fault.valid;
  assign fault_more_o    = fault.more;
  assign fault_write_o   = fault.write;
  assign fault_priv_o    = fault.privileged;
  assign fault_reason_o  = 4'(fault.reason);
  assign fault_client_o  = fault.client;
  assign fault_addr_o    = fault.addr;
  assign fault_fence_o   = fault.fence;
  assign fault_context_o = fault.context_id;

  sgpu_axi_rd_arb #(
    .IdWidth     (4),
    .S1Id        (WalkId),
    .axi_rd_req_t(axi_rd_req_t),
    .axi_rd_rsp_t(axi_rd_rsp_t)
  ) u_arb (
    .clk_i  (clk_i),
    .rst_ni (rst_ni),
    .s_req_i({walk_rd_req, fetch_rd_req}),
    .s_rsp_o({walk_rd_rsp, fetch_rd_rsp}),
    .m_req_o(rd_req),
    .m_rsp_i(rd_rsp)
  );

  assign status_tag_o = status.tag;
  assign status_err_o = status.err;

endmodule

`default_nettype wire
