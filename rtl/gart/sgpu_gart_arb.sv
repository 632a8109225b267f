// Translation-port arbiter: several clients (the fetch engine, the CP's write path, later the
// copy engine's two sides) share the GART's one translation port.
//
// Requests: round-robin among the clients whose request is valid and that have room for the
// answer; the granted request goes with its privilege and its client number (the port index),
// which the GART keeps for the privilege check and the fault record, into a two-entry register
// slice in front of the GART's port. The slice takes one request per cycle and its ready is a
// register, so no client's handshake waits on the GART's decision for the request before (its
// TLB hit, the page-table bounds and the fault checks): that decision only pops the slice
// (timing pass 12, docs/fpga.md). It costs one cycle of translation latency. The client of
// every accepted request is remembered in a FIFO; the GART answers in request order, so each
// answer goes to the client at the head of that FIFO.
//
// Answers are taken from the GART at once into a small FIFO per client, and a client is only
// granted while its requests in flight plus answers waiting fit that FIFO (credits). So a client
// that does not take its answers (the fetch engine with a full buffer, waiting for the CP) never
// blocks another (the CP's write path, which the CP waits on): no head-of-line blocking, no
// deadlock. The answer FIFO costs one cycle of latency per translation.
//
// Ready to a client depends on the grant (other clients' valids), the credits and the levels of
// the slice and the owner FIFO, never on the client's own valid nor on the GART.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_gart_arb #(
  /// Number of clients, 1..16.
  parameter int unsigned Clients = 2,
  /// Accepted requests whose answer is still owed (at most four: the slice's two, the GART's
  /// request and response registers).
  parameter int unsigned Depth = 4,
  /// Answers buffered per client, and so its translations in flight at most (5 keeps one
  /// translation per cycle per client: request, slice, GART, answer FIFO, client).
  parameter int unsigned RspDepth = 5
) (
  /// Clock.
  input  wire logic                                  clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                                  rst_ni,

  /// Client requests (valid/ready per client).
  input  wire logic                     [Clients-1:0] cl_req_valid_i,
  /// Ready per client.
  output      logic                     [Clients-1:0] cl_req_ready_o,
  /// Request per client.
  input  wire sgpu_dma_pkg::xlate_req_t [Clients-1:0] cl_req_i,
  /// Privilege per client (system-physical addresses allowed), sampled with the request.
  input  wire logic                     [Clients-1:0] cl_priv_i,
  /// Quiet per client (a fault is not recorded: a read ahead), sampled with the request.
  input  wire logic                     [Clients-1:0] cl_quiet_i,
  /// Response valid per client (only the owner of the oldest request).
  output      logic                     [Clients-1:0] cl_rsp_valid_o,
  /// Response ready per client.
  input  wire logic                     [Clients-1:0] cl_rsp_ready_i,
  /// Response per client.
  output      sgpu_dma_pkg::xlate_rsp_t [Clients-1:0] cl_rsp_o,
  /// With each response: the PTE's snoop (cache-coherent) hint.
  output      logic                     [Clients-1:0] cl_rsp_snoop_o,

  /// To the GART's translation port.
  output      logic                                  xlate_req_valid_o,
  input  wire logic                                  xlate_req_ready_i,
  output      sgpu_dma_pkg::xlate_req_t              xlate_req_o,
  output      sgpu_gart_pkg::xlate_src_t             xlate_src_o,
  input  wire logic                                  xlate_rsp_valid_i,
  output      logic                                  xlate_rsp_ready_o,
  input  wire sgpu_dma_pkg::xlate_rsp_t              xlate_rsp_i,
  input  wire logic                                  xlate_rsp_snoop_i
);

  localparam int unsigned CW   = sgpu_gart_pkg::ClientWidth;
  localparam int unsigned IdxW = (Clients > 1) ? $clog2(Clients) : 1;
  localparam int unsigned CntW = $clog2(RspDepth + 1);
  typedef logic [IdxW-1:0] idx_t;
  typedef logic [CntW-1:0] cnt_t;

  // Per client: requests accepted and answers not yet taken by the client.
  cnt_t [Clients-1:0] cnt_q, cnt_d;
  logic [Clients-1:0] can_ask;

  always_comb begin
    for (int unsigned c = 0; c < Clients; c++) can_ask[c] = cnt_q[c] != cnt_t'(RspDepth);
  end

  ///////////
  // Grant //
  ///////////

  // Round-robin: the first valid client at or after `next_q`.
  idx_t next_q, next_d;
  idx_t gnt;
  logic gnt_valid;

  // The same round robin as a priority search from next_q, formed for every start in parallel
  // (each a fixed-order chain) and selected by next_q; whether anything is granted does not
  // depend on the order at all. So the clients' valids reach the grant through a short chain and
  // a multiplexer instead of a search whose indices are computed from next_q.
  logic [Clients-1:0] asking;
  idx_t               gnt_from [Clients];

  assign asking    = cl_req_valid_i & can_ask;
  assign gnt_valid = |asking;

  always_comb begin
    for (int unsigned n = 0; n < Clients; n++) begin
      gnt_from[n] = '0;  // nobody asks: 0, as the search gave
      for (int unsigned k = Clients; k > 0; k--) begin
        // Scanned from the lowest priority up, so the highest-priority asker is written last.
        if (asking[(n + k - 1) % Clients]) gnt_from[n] = idx_t'((n + k - 1) % Clients);
      end
    end
    gnt = gnt_from[0];
    for (int unsigned n = 1; n < Clients; n++) begin
      if (next_q == idx_t'(n)) gnt = gnt_from[n];
    end
  end

  ///////////////////////////
  // Owners of the answers //
  ///////////////////////////

  logic own_in_ready, own_valid;
  idx_t own_head;
  logic req_hs, rsp_hs;

  logic                      slice_in_ready;
  sgpu_gart_pkg::xlate_src_t gnt_src;

  assign gnt_src = '{priv: cl_priv_i[gnt], quiet: cl_quiet_i[gnt], client: CW'(gnt)};

  assign req_hs = gnt_valid && own_in_ready && slice_in_ready;

  // The grant one-hot as well, for the handshakes and the credit counts: each client's grant is
  // its own request with none of higher priority from next_q, a function of the requests and
  // next_q alone, so a client's valid reaches its ready, its credit count and next_q through
  // that and one selection, not through the encoded grant and a compare of it (timing pass 19;
  // asserted: OneHotGrant). The encoded grant still selects the request's payload.
  logic [Clients-1:0] gnt_oh, hs_oh;

  always_comb begin
    for (int unsigned c = 0; c < Clients; c++) begin
      gnt_oh[c] = asking[c];
      for (int unsigned k = 0; k < Clients; k++) begin
        // k is ahead of c in the round robin from next_q: next_q <= k < c, cyclically.
        if (k != c && ((32'(next_q) <= k && k < c) || (c < 32'(next_q) && (k < c || k >= 32'(next_q))))) begin
          if (asking[k]) gnt_oh[c] = 1'b0;
        end
      end
    end
    hs_oh          = gnt_oh & {Clients{own_in_ready && slice_in_ready}};
    cl_req_ready_o = hs_oh;
  end

  // The request slice: two entries in flip-flops, the head (sl_head_q) always the oldest, the
  // second (sl_skid_q) behind it; the same cycles at both ports as sgpu_fifo at Depth 2 (ready
  // while the second entry is free, valid while the head is held, first word falls through a
  // cycle after the push). Its own registers rather than sgpu_fifo with RegOut: synthesis
  // folded that FIFO's head register into its memory's read port (a LUT-RAM read behind a
  // registered address), so the GART's current request (cur_*), its TLB lookup and the port's
  // ready started behind a LUT-RAM read instead of at flip-flops (timing pass 15). Here the
  // head's next value is chosen by the pop among registers and the granted request only.
  typedef struct packed {
    sgpu_dma_pkg::xlate_req_t  req;
    sgpu_gart_pkg::xlate_src_t src;
  } slice_t;

  logic   sl_head_valid_q, sl_head_valid_d, sl_skid_valid_q, sl_skid_valid_d;
  slice_t sl_head_q, sl_head_d, sl_skid_q, sl_skid_d, sl_in;
  logic   sl_push, sl_pop;

  assign sl_in          = '{req: cl_req_i[gnt], src: gnt_src};
  assign slice_in_ready = !sl_skid_valid_q;
  assign sl_push        = gnt_valid && own_in_ready && slice_in_ready;
  assign sl_pop         = sl_head_valid_q && xlate_req_ready_i;

  always_comb begin
    sl_head_valid_d = sl_head_valid_q;
    sl_skid_valid_d = sl_skid_valid_q;
    sl_head_d       = sl_head_q;
    sl_skid_d       = sl_skid_q;
    // The second entry's payload takes the offer whenever the entry is free, pushed or not (it
    // is read only while sl_skid_valid_q): its enable is a register, not the grant.
    if (!sl_skid_valid_q) sl_skid_d = sl_in;
    if (sl_pop || !sl_head_valid_q) begin
      // The head moves on: to the second entry if held (nothing is pushed then), else to this
      // cycle's request (taken whether pushed or not; without a push the head is empty next).
      sl_head_valid_d = sl_skid_valid_q || sl_push;
      sl_head_d       = sl_skid_valid_q ? sl_skid_q : sl_in;
      sl_skid_valid_d = 1'b0;
    end else if (sl_push) begin
      sl_skid_valid_d = 1'b1;  // its payload was taken above
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      sl_head_valid_q <= 1'b0;
      sl_skid_valid_q <= 1'b0;
    end else begin
      sl_head_valid_q <= sl_head_valid_d;
      sl_skid_valid_q <= sl_skid_valid_d;
    end
  end

  // Payload registers: only read while their valid bit says so.
  always_ff @(posedge clk_i) begin
    sl_head_q <= sl_head_d;
    sl_skid_q <= sl_skid_d;
  end

  assign xlate_req_valid_o = sl_head_valid_q;
  assign xlate_req_o       = sl_head_q.req;
  assign xlate_src_o       = sl_head_q.src;

  sgpu_fifo #(
    .Width(IdxW),
    .Depth(Depth)
  ) u_owner_fifo (
    .clk_i      (clk_i),
    .rst_ni     (rst_ni),
    .clear_i    (1'b0),
    .in_valid_i (req_hs),
    .in_ready_o (own_in_ready),
    .in_data_i  (gnt),
    .out_valid_o(own_valid),
    .out_ready_i(rsp_hs),
    .out_data_o (own_head),
    .count_o    ()
  );

  // Every answer has a place reserved (credits): take it at once.
  assign xlate_rsp_ready_o = 1'b1;
  assign rsp_hs            = xlate_rsp_valid_i;

  /////////////////////////
  // Answers per client //
  /////////////////////////

  logic [Clients-1:0] buf_in_ready;

  for (genvar c = 0; c < Clients; c++) begin : g_rsp
    sgpu_fifo #(
      .Width($bits(sgpu_dma_pkg::xlate_rsp_t) + 1),
      .Depth(RspDepth)
    ) u_rsp_fifo (
      .clk_i      (clk_i),
      .rst_ni     (rst_ni),
      .clear_i    (1'b0),
      .in_valid_i (rsp_hs && own_head == idx_t'(c)),
      .in_ready_o (buf_in_ready[c]),
      .in_data_i  ({xlate_rsp_snoop_i, xlate_rsp_i}),
      .out_valid_o(cl_rsp_valid_o[c]),
      .out_ready_i(cl_rsp_ready_i[c]),
      .out_data_o ({cl_rsp_snoop_o[c], cl_rsp_o[c]}),
      .count_o    ()
    );
  end

  always_comb begin
    // The handshakes select among the counts' next values, formed from cnt_q alone.
    for (int unsigned c = 0; c < Clients; c++) begin
      unique case ({hs_oh[c], cl_rsp_valid_o[c] && cl_rsp_ready_i[c]})
        2'b10:   cnt_d[c] = cnt_q[c] + 1'b1;
        2'b01:   cnt_d[c] = cnt_q[c] - 1'b1;
        default: cnt_d[c] = cnt_q[c];
      endcase
    end
  end

  // The client after the granted one, as an OR over the one-hot handshake (at most one is set).
  always_comb begin
    next_d = req_hs ? '0 : next_q;
    for (int unsigned c = 0; c < Clients; c++) begin
      if (hs_oh[c]) next_d = next_d | idx_t'((c + 1) % Clients);
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      next_q <= '0;
      cnt_q  <= '0;
    end else begin
      next_q <= next_d;
      cnt_q  <= cnt_d;
    end
  end

  ////////////////
  // Invariants //
  ////////////////

  // The GART never answers a request it was not given.
  `SGPU_ASSERT(NextInRange, 32'(next_q) < Clients)
  // The grant is the first asking client from next_q on, in round-robin order.
  `SGPU_ASSERT(GrantIsFirstFromNext, gnt_valid |-> asking[gnt]
      && (32'(gnt) >= 32'(next_q) ? (asking & ((Clients'(1) << gnt) - (Clients'(1) << next_q))) == '0
                                   : (asking & ~((Clients'(1) << next_q) - Clients'(1))) == '0
                                     && (asking & ((Clients'(1) << gnt) - Clients'(1))) == '0))
  // The one-hot grant is the encoded one, decoded.
  `SGPU_ASSERT(OneHotGrant, gnt_oh == (gnt_valid ? (Clients'(1) << gnt) : '0))
  // The slice: the second entry is behind the head, the head is held until taken.
  `SGPU_ASSERT(SliceSkidBehindHead, sl_skid_valid_q |-> sl_head_valid_q)
  `SGPU_ASSERT(SliceHeadHeld, sl_head_valid_q && !xlate_req_ready_i |=> sl_head_valid_q
                              && $stable(sl_head_q))
  `SGPU_ASSERT(ResponseHasOwner, xlate_rsp_valid_i |-> own_valid)
  // Credits: an answer always finds room.
  `SGPU_ASSERT(AnswerHasRoom, xlate_rsp_valid_i |-> buf_in_ready[own_head])

  `SGPU_ASSERT_STATIC(g_bad_clients, Clients >= 1 && Clients <= (1 << CW),
                      "Clients must be at least 1 and fit the client field")

endmodule

`default_nettype wire
