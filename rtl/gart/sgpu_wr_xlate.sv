// Write translation: makes the command processor's write path (WRITE_DATA, FENCE, the
// write-back record) a client of the GART. Sits between the CP's write buffer (sgpu_cp_wr_buf)
// and sgpu_axi_wr.
//
// A write is accepted only once its page is translated, so a refused write is still held (at
// the head of the CP's write buffer) when the refusal arrives: it never reaches the bus, and the
// CP drops what is behind it and faults naming it. The last successful translation is kept in
// a one-entry cache tagged with {GPU page, privilege, GART enable}; writes to that page pass in
// the same cycle (one per cycle, as without translation). The write comes from a register (the
// buffer's head), so the page compare and the ready behind it start from flip-flops. A write
// to another page asks the GART (write = 1, so write-protect applies) and is accepted the cycle
// after the answer: about five cycles per new page on a TLB hit. The request leaves from a
// register, a cycle after the miss: the miss is not in front of the translation arbiter and,
// through its grant, the other clients' request FIFOs.
//
// Invalidation: while an invalidation is pending or running (inv_busy_i) the cache is dropped,
// and an answer to a request that overlapped one is used once, for the write that asked, and
// not kept: every write translated after an invalidation completed uses the new table.
//
// idle_o is low while a translation is in flight; a CP that stops offering its write (fault or
// engine reset) must wait for idle_o, as it waits for the write master, before it resets.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_wr_xlate (
  /// Clock.
  input  wire logic                      clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                      rst_ni,

  /// GART_CTRL.enable: part of the cache tag (identity translations are not kept across it).
  input  wire logic                      enable_i,
  /// An invalidation is pending or running.
  input  wire logic                      inv_busy_i,

  /// Write request from the CP's write buffer (a register): 8-byte aligned GPU address, data
  /// and strobes, privilege.
  input  wire logic                      req_valid_i,
  /// Ready: the page is translated and the write master takes the write. Depends on the
  /// address, the privilege and the write master, never on req_valid_i.
  output      logic                      req_ready_o,
  input  wire sgpu_pkg::word_wr_t        req_i,
  /// The write may use system-physical addresses (write-back record, privileged submissions).
  input  wire logic                      req_priv_i,

  /// Translated write to sgpu_axi_wr.
  output      logic                      out_valid_o,
  input  wire logic                      out_ready_i,
  output      sgpu_pkg::word_wr_t        out_o,
  /// The write's GPU address, for the write master's error report.
  output      sgpu_pkg::addr_t           out_gpu_addr_o,

  /// No translation in flight.
  output      logic                      idle_o,
  /// One-cycle pulse: the GART refused the write being offered; fault_addr_o is its GPU
  /// address (the first written byte). The write is not issued.
  output      logic                      fault_o,
  output      sgpu_pkg::addr_t           fault_addr_o,

  /// Translation port (through sgpu_gart_arb).
  output      logic                      xlate_req_valid_o,
  input  wire logic                      xlate_req_ready_i,
  output      sgpu_dma_pkg::xlate_req_t  xlate_req_o,
  output      logic                      xlate_priv_o,
  input  wire logic                      xlate_rsp_valid_i,
  output      logic                      xlate_rsp_ready_o,
  input  wire sgpu_dma_pkg::xlate_rsp_t  xlate_rsp_i
);

  localparam int unsigned PageShift = sgpu_pkg::PageShift;

  sgpu_pkg::pfn_t req_vpn;
  assign req_vpn = req_i.addr[sgpu_pkg::AddrWidth-1:PageShift];

  ///////////
  // Cache //
  ///////////

  logic           c_valid_q, c_valid_d;
  logic           c_once_q, c_once_d;   // answer of a request that overlapped an invalidation
  sgpu_pkg::pfn_t c_vpn_q, c_vpn_d, c_ppn_q, c_ppn_d;
  logic           c_priv_q, c_priv_d, c_en_q, c_en_d;
  logic           hit;

  assign hit = c_valid_q && c_vpn_q == req_vpn && c_priv_q == req_priv_i && c_en_q == enable_i;

  assign req_ready_o = hit && out_ready_i;
  assign out_valid_o = req_valid_i && hit;
  assign out_o       = '{addr: {c_ppn_q, req_i.addr[PageShift-1:0]}, data: req_i.data,
                         strb: req_i.strb};
  assign out_gpu_addr_o = req_i.addr;

  /////////////////
  // Translation //
  /////////////////

  logic           pend_q, pend_d;       // a request is registered, not yet accepted
  logic           wait_q, wait_d;       // a request was accepted; its answer is owed
  logic           stale_q, stale_d;     // an invalidation overlapped it
  sgpu_pkg::pfn_t w_vpn_q, w_vpn_d;
  logic           w_priv_q, w_priv_d, w_en_q, w_en_d;
  sgpu_pkg::addr_t w_addr_q, w_addr_d;

  // Ask only for a write that is being offered and misses; one request at a time. The page,
  // privilege and first byte are registered with the miss; the request is held until accepted
  // even if the write goes away (its answer is then used by nobody, or dropped as a fault of a
  // halted CP).
  logic miss;
  assign miss              = req_valid_i && !hit && !wait_q && !pend_q;
  assign xlate_req_valid_o = pend_q;
  assign xlate_req_o       = '{vpn: w_vpn_q, write: 1'b1};
  assign xlate_priv_o      = w_priv_q;
  assign xlate_rsp_ready_o = 1'b1;

  logic req_hs, rsp_hs;
  assign req_hs = pend_q && xlate_req_ready_i;
  assign rsp_hs = xlate_rsp_valid_i && wait_q;

  // First written byte: the CP writes one dword (strobes 0x0f or 0xf0) or a 64-bit word.
  sgpu_pkg::addr_t req_first_byte;
  assign req_first_byte = {req_i.addr[sgpu_pkg::AddrWidth-1:3], (req_i.strb[3:0] == '0), 2'b00};

  always_comb begin
    c_valid_d = c_valid_q;
    c_once_d  = c_once_q;
    c_vpn_d   = c_vpn_q;
    c_ppn_d   = c_ppn_q;
    c_priv_d  = c_priv_q;
    c_en_d    = c_en_q;
    pend_d    = pend_q;
    wait_d    = wait_q;
    stale_d   = stale_q || inv_busy_i;
    w_vpn_d   = w_vpn_q;
    w_priv_d  = w_priv_q;
    w_en_d    = w_en_q;
    w_addr_d  = w_addr_q;

    // A kept translation is dropped while an invalidation runs; a one-use answer as soon as
    // it is not being used (the write that asked went away, or was issued).
    if (inv_busy_i && !c_once_q) c_valid_d = 1'b0;
    if (c_once_q && !(req_valid_i && hit && !out_ready_i)) c_valid_d = 1'b0;

    // The page, privilege and first byte are taken from the write offered in every cycle that
    // no request is registered or owed, so the miss (behind the 52-bit page compare) ends in
    // pend_q alone, not in their 117 load enables: in the cycle of the miss they are the miss's,
    // and they are read only while the request is registered or owed (timing pass 19).
    if (!pend_q && !wait_q) begin
      w_vpn_d  = req_vpn;
      w_priv_d = req_priv_i;
      w_addr_d = req_first_byte;
    end
    if (miss) pend_d = 1'b1;

    // GART_CTRL.enable and the overlap with an invalidation count from the acceptance, as the
    // GART translates from then on: both are taken in every cycle the request waits, the last
    // time in the cycle it is accepted, so the arbiter's ready (behind the other clients'
    // requests) ends in pend_q and wait_q alone (timing pass 19).
    if (pend_q) begin
      stale_d = inv_busy_i;
      w_en_d  = enable_i;
    end
    if (req_hs) begin
      pend_d = 1'b0;
      wait_d = 1'b1;
    end

    if (rsp_hs) begin
      wait_d = 1'b0;
      if (!xlate_rsp_i.fault) begin
        c_valid_d = 1'b1;
        c_once_d  = stale_q || inv_busy_i;
        c_vpn_d   = w_vpn_q;
        c_ppn_d   = xlate_rsp_i.ppn;
        c_priv_d  = w_priv_q;
        c_en_d    = w_en_q;
      end
    end
  end

  assign fault_o      = rsp_hs && xlate_rsp_i.fault;
  assign fault_addr_o = w_addr_q;
  assign idle_o       = !wait_q && !pend_q;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      c_valid_q <= 1'b0;
      c_once_q  <= 1'b0;
      pend_q    <= 1'b0;
      wait_q    <= 1'b0;
      stale_q   <= 1'b0;
    end else begin
      c_valid_q <= c_valid_d;
      c_once_q  <= c_once_d;
      pend_q    <= pend_d;
      wait_q    <= wait_d;
      stale_q   <= stale_d;
    end
  end

  // Payload registers: only read while their valid bit says so.
  always_ff @(posedge clk_i) begin
    c_vpn_q  <= c_vpn_d;
    c_ppn_q  <= c_ppn_d;
    c_priv_q <= c_priv_d;
    c_en_q   <= c_en_d;
    w_vpn_q  <= w_vpn_d;
    w_priv_q <= w_priv_d;
    w_en_q   <= w_en_d;
    w_addr_q <= w_addr_d;
  end

  // The high strobes only matter to the write master.
  logic unused;
  assign unused = ^req_i.strb[7:4];

  // The fault names the write being offered: the CP's buffer holds it until it is accepted or
  // refused.
  `SGPU_ASSERT(OneRequestAtATime, wait_q |-> !xlate_req_valid_o)
  `SGPU_ASSERT(RequestHeld, xlate_req_valid_o && !xlate_req_ready_i |=> xlate_req_valid_o)
  `SGPU_ASSERT(NoAnswerUnasked, xlate_rsp_valid_i |-> wait_q)
  // The registered request is the write that missed (taken while idle), and stays so.
  `SGPU_ASSERT(RequestIsMiss, miss |=> w_vpn_q == $past(req_vpn) && w_priv_q == $past(req_priv_i)
                                        && w_addr_q == $past(req_first_byte))
  `SGPU_ASSERT(RequestIsHeld, (pend_q || wait_q) |=> $stable({w_vpn_q, w_priv_q, w_addr_q}))

endmodule

`default_nettype wire
