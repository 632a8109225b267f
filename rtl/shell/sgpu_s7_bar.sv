// BAR0 on a 7-series board: the host's memory requests to BAR0, from the LitePCIe transaction
// layer (gen_tlp_core.py), become 32-bit AXI4-Lite accesses of the core's register port.
//
// Writes: each dword of the request is one AXI-Lite write whose strobes are the request's byte
// enables (first dword: first_be, last dword: last_be, others: all), so a byte write changes
// exactly that byte; dwords without enabled bytes are skipped. Writes are posted; rearm_o pulses
// when one completes (sgpu_irq_msi).
//
// Reads of one to DataWidth/32 dwords are answered with one completion carrying the byte count
// and lower address PCIe requires for the byte enables; a register that answers with an AXI
// error reads as all-ones (what a host sees from a dead bus). Longer reads get an Unsupported
// Request completion. One request is handled at a time, in order; beats of a request beyond its
// payload (the transaction layer's 128-bit realignment can add one) are dropped.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_s7_bar #(
  parameter int unsigned DataWidth = 128
) (
  input  wire logic                   clk_i,
  input  wire logic                   rst_ni,
  /// Completer ID {bus, device, function}.
  input  wire logic [15:0]            completer_id_i,

  input  wire logic                   bar_req_valid,
  output      logic                   bar_req_ready,
  input  wire logic                   bar_req_first,
  input  wire logic                   bar_req_last,
  input  wire logic [15:0]            bar_req_req_id,
  input  wire logic                   bar_req_we,
  input  wire logic [31:0]            bar_req_adr,
  input  wire logic [9:0]             bar_req_len,
  input  wire logic [7:0]             bar_req_tag,
  input  wire logic [DataWidth-1:0]   bar_req_dat,
  input  wire logic [3:0]             bar_req_first_be,
  input  wire logic [3:0]             bar_req_last_be,

  output      logic                   bar_cpl_valid,
  input  wire logic                   bar_cpl_ready,
  output      logic                   bar_cpl_first,
  output      logic                   bar_cpl_last,
  output      logic [15:0]            bar_cpl_req_id,
  output      logic [15:0]            bar_cpl_cmp_id,
  output      logic [31:0]            bar_cpl_adr,
  output      logic [9:0]             bar_cpl_len,
  output      logic                   bar_cpl_end,
  output      logic                   bar_cpl_err,
  output      logic [7:0]             bar_cpl_tag,
  output      logic [DataWidth-1:0]   bar_cpl_dat,
  output      logic [11:0]            bar_cpl_byte_count,
  output      logic [DataWidth/8-1:0] bar_cpl_dat_be,

  output      logic                   m_axil_awvalid,
  input  wire logic                   m_axil_awready,
  output      logic [11:0]            m_axil_awaddr,
  output      logic [2:0]             m_axil_awprot,
  output      logic                   m_axil_wvalid,
  input  wire logic                   m_axil_wready,
  output      logic [31:0]            m_axil_wdata,
  output      logic [3:0]             m_axil_wstrb,
  input  wire logic                   m_axil_bvalid,
  output      logic                   m_axil_bready,
  input  wire logic [1:0]             m_axil_bresp,
  output      logic                   m_axil_arvalid,
  input  wire logic                   m_axil_arready,
  output      logic [11:0]            m_axil_araddr,
  output      logic [2:0]             m_axil_arprot,
  input  wire logic                   m_axil_rvalid,
  output      logic                   m_axil_rready,
  input  wire logic [31:0]            m_axil_rdata,
  input  wire logic [1:0]             m_axil_rresp,

  /// One-cycle pulse: a register write completed.
  output      logic                   rearm_o
);

  localparam int unsigned Dws = DataWidth / 32;
  localparam int unsigned DwBits = $clog2(Dws);

  typedef enum logic [2:0] {Idle, WrIssue, WrResp, WrNext, Drain, RdIssue, RdResp, Complete} state_e;
  state_e state_q, state_d;

  logic [15:0]          req_id_q, req_id_d;
  logic [7:0]           tag_q, tag_d;
  logic [9:0]           adr_q, adr_d;          // dword address of the current access
  logic [6:0]           lower_q, lower_d;      // the request's lower address (completions)
  logic [10:0]          len_q, len_d;          // dwords (a PCIe length of 0 is 1024)
  logic [10:0]          idx_q, idx_d;          // current dword
  logic [3:0]           fbe_q, fbe_d, lbe_q, lbe_d;
  logic [DataWidth-1:0] data_q, data_d;        // write payload beat / read completion data
  logic                 aw_done_q, aw_done_d, w_done_q, w_done_d;
  logic                 unsupported_q, unsupported_d;
  logic [11:0]          byte_count_q, byte_count_d;
  logic                 pkt_last_q, pkt_last_d;    // the request's last beat has been taken

  // Byte enables of dword idx of the request.
  function automatic logic [3:0] dw_strobe(logic [10:0] idx, logic [10:0] len, logic [3:0] fbe, logic [3:0] lbe);
    if (idx == '0) return fbe;
    if (idx == len - 1'b1) return lbe;
    return 4'hf;
  endfunction

  function automatic logic [1:0] first_lane(logic [3:0] be);
    if (be[0]) return 2'd0;
    if (be[1]) return 2'd1;
    if (be[2]) return 2'd2;
    if (be[3]) return 2'd3;
    return 2'd0;
  endfunction

  function automatic logic [1:0] last_lane(logic [3:0] be);
    logic [1:0] lane = 2'd0;
    for (int unsigned i = 0; i < 4; i++) if (be[i]) lane = 2'(i);
    return lane;
  endfunction

  // PCIe byte count of a read (length, first and last byte enables).
  function automatic logic [11:0] read_byte_count(logic [10:0] len, logic [3:0] fbe, logic [3:0] lbe);
    if (len == 11'd1) begin
      if (fbe == '0) return 12'd1;
      return 12'(last_lane(fbe)) - 12'(first_lane(fbe)) + 12'd1;
    end
    return 12'({len, 2'b00}) - 12'(first_lane(fbe)) - (12'd3 - 12'(last_lane(lbe)));
  endfunction

  logic [3:0]  strobe;
  logic [DwBits-1:0] lane;
  assign strobe = dw_strobe(idx_q, len_q, fbe_q, lbe_q);
  assign lane   = DwBits'(idx_q);

  always_comb begin
    state_d       = state_q;
    req_id_d      = req_id_q;
    tag_d         = tag_q;
    adr_d         = adr_q;
    lower_d       = lower_q;
    len_d         = len_q;
    idx_d         = idx_q;
    fbe_d         = fbe_q;
    lbe_d         = lbe_q;
    data_d        = data_q;
    aw_done_d     = aw_done_q;
    w_done_d      = w_done_q;
    unsupported_d = unsupported_q;
    byte_count_d  = byte_count_q;
    pkt_last_d    = pkt_last_q;
    bar_req_ready = 1'b0;
    rearm_o       = 1'b0;

    unique case (state_q)
      Idle: begin
        bar_req_ready = 1'b1;  // the header beat (a write's first payload beat lands in data_d)
        if (bar_req_valid) begin
          pkt_last_d = bar_req_last;
          req_id_d = bar_req_req_id;
          tag_d    = bar_req_tag;
          adr_d    = bar_req_adr[11:2];
          lower_d  = {bar_req_adr[6:2], first_lane(bar_req_first_be)};
          len_d    = (bar_req_len == '0) ? 11'd1024 : {1'b0, bar_req_len};
          idx_d    = '0;
          fbe_d    = bar_req_first_be;
          lbe_d    = bar_req_last_be;
          data_d   = bar_req_dat;
          if (bar_req_we) begin
            state_d   = WrIssue;
            aw_done_d = 1'b0;
            w_done_d  = 1'b0;
          end else begin
            unsupported_d = len_d > 11'(Dws);
            byte_count_d  = read_byte_count(len_d, bar_req_first_be, bar_req_last_be);
            data_d        = '0;
            state_d       = unsupported_d ? Complete : RdIssue;
          end
        end
      end
      WrIssue: begin
        if (strobe == '0) begin
          state_d = WrNext;
        end else begin
          if (m_axil_awvalid && m_axil_awready) aw_done_d = 1'b1;
          if (m_axil_wvalid && m_axil_wready) w_done_d = 1'b1;
          if (aw_done_d && w_done_d) state_d = WrResp;
        end
      end
      WrResp: begin
        if (m_axil_bvalid) begin
          rearm_o = 1'b1;
          state_d = WrNext;
        end
      end
      WrNext: begin
        aw_done_d = 1'b0;
        w_done_d  = 1'b0;
        if (idx_q == len_q - 1'b1) begin
          // Beats the transaction layer adds after the payload are dropped.
          state_d = pkt_last_q ? Idle : Drain;
        end else if (lane != DwBits'(Dws - 1)) begin
          idx_d   = idx_q + 1'b1;
          adr_d   = adr_q + 1'b1;
          state_d = WrIssue;
        end else begin
          bar_req_ready = 1'b1;  // the next payload beat
        end
        if (idx_q != len_q - 1'b1 && lane == DwBits'(Dws - 1) && bar_req_valid) begin
          pkt_last_d = bar_req_last;
          data_d  = bar_req_dat;
          idx_d   = idx_q + 1'b1;
          adr_d   = adr_q + 1'b1;
          state_d = WrIssue;
        end
      end
      Drain: begin
        bar_req_ready = 1'b1;
        if (bar_req_valid && bar_req_last) state_d = Idle;
      end
      RdIssue: begin
        if (m_axil_arvalid && m_axil_arready) state_d = RdResp;
      end
      RdResp: begin
        if (m_axil_rvalid) begin
          data_d[32 * lane +: 32] = (m_axil_rresp == sgpu_pkg::AxiRespOkay) ? m_axil_rdata : '1;
          if (idx_q == len_q - 1'b1) begin
            state_d = Complete;
          end else begin
            idx_d   = idx_q + 1'b1;
            adr_d   = adr_q + 1'b1;
            state_d = RdIssue;
          end
        end
      end
      Complete: begin
        if (bar_cpl_ready) state_d = Idle;
      end
      default: state_d = Idle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q       <= Idle;
      req_id_q      <= '0;
      tag_q         <= '0;
      adr_q         <= '0;
      lower_q       <= '0;
      len_q         <= '0;
      idx_q         <= '0;
      fbe_q         <= '0;
      lbe_q         <= '0;
      data_q        <= '0;
      aw_done_q     <= 1'b0;
      w_done_q      <= 1'b0;
      unsupported_q <= 1'b0;
      byte_count_q  <= '0;
      pkt_last_q    <= 1'b0;
    end else begin
      state_q       <= state_d;
      req_id_q      <= req_id_d;
      tag_q         <= tag_d;
      adr_q         <= adr_d;
      lower_q       <= lower_d;
      len_q         <= len_d;
      idx_q         <= idx_d;
      fbe_q         <= fbe_d;
      lbe_q         <= lbe_d;
      data_q        <= data_d;
      aw_done_q     <= aw_done_d;
      w_done_q      <= w_done_d;
      unsupported_q <= unsupported_d;
      byte_count_q  <= byte_count_d;
      pkt_last_q    <= pkt_last_d;
    end
  end

  // AXI-Lite.
  assign m_axil_awvalid = (state_q == WrIssue) && strobe != '0 && !aw_done_q;
  assign m_axil_awaddr  = {adr_q, 2'b00};
  assign m_axil_awprot  = 3'b000;
  assign m_axil_wvalid  = (state_q == WrIssue) && strobe != '0 && !w_done_q;
  assign m_axil_wdata   = data_q[32 * lane +: 32];
  assign m_axil_wstrb   = strobe;
  assign m_axil_bready  = (state_q == WrResp);
  assign m_axil_arvalid = (state_q == RdIssue);
  assign m_axil_araddr  = {adr_q, 2'b00};
  assign m_axil_arprot  = 3'b000;
  assign m_axil_rready  = (state_q == RdResp);

  // Completion.
  assign bar_cpl_valid      = (state_q == Complete);
  assign bar_cpl_first      = 1'b1;
  assign bar_cpl_last       = 1'b1;
  assign bar_cpl_req_id     = req_id_q;
  assign bar_cpl_cmp_id     = completer_id_i;
  assign bar_cpl_adr        = 32'(lower_q);
  assign bar_cpl_len        = unsupported_q ? 10'd0 : len_q[9:0];
  assign bar_cpl_end        = 1'b1;
  assign bar_cpl_err        = unsupported_q;
  assign bar_cpl_tag        = tag_q;
  assign bar_cpl_dat        = data_q;
  assign bar_cpl_byte_count = unsupported_q ? 12'd4 : byte_count_q;
  assign bar_cpl_dat_be     = (DataWidth/8)'((1 << (4 * len_q)) - 1);

  // BAR0 is 4 KiB of dword registers; writes are posted, so their AXI response has no taker.
  logic unused;
  assign unused = ^{bar_req_adr[31:12], bar_req_adr[1:0], m_axil_bresp, bar_req_first};

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth == 64 || DataWidth == 128, "DataWidth must be 64 or 128")

  // A request is one packet: a read is a single beat, a write's beats follow its first.
  `SGPU_ASSERT(SingleBeatRead,
      (state_q == Idle && bar_req_valid && !bar_req_we) |-> bar_req_first && bar_req_last)

endmodule

`default_nettype wire
