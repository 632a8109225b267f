// AXI4 subordinate to AXI4-Lite manager, for a bridge that maps BAR0 onto a full AXI4 master
// (XDMA's m_axib): each 32-bit word a beat touches becomes one register access.
//
// Writes: every word with strobes set in a beat is written with exactly those strobes. Reads:
// the words covering the beat's bytes (address and size) are read and placed in their lanes.
// INCR and FIXED bursts of any size up to the bus width are supported; a WRAP burst is answered
// with SLVERR (and its data taken) without touching a register. One transaction at a time; the
// worst register response of a burst is its response. Registers are 4 KiB: address bits above
// 11 are ignored (BAR0 is 4 KiB).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_axi2axil #(
  parameter int unsigned DataWidth = 256,
  parameter int unsigned IdWidth = 4
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

  localparam int unsigned Bytes = DataWidth / 8;
  localparam int unsigned LaneBits = $clog2(Bytes);
  localparam int unsigned Words = DataWidth / 32;
  localparam int unsigned WordBits = $clog2(Words);

  typedef enum logic [2:0] {Idle, WrBeat, WrAccess, WrResp, Bresp, RdAccess, RdResp, Rbeat} state_e;
  state_e state_q, state_d;

  logic [IdWidth-1:0]   id_q, id_d;
  logic [11:0]          addr_q, addr_d;        // address of the current beat
  logic [7:0]           left_q, left_d;        // beats after this one
  logic [2:0]           size_q, size_d;
  logic                 fixed_q, fixed_d;
  logic                 wrap_q, wrap_d;
  logic [Words-1:0]     todo_q, todo_d;        // words of this beat still to access
  logic [DataWidth-1:0] data_q, data_d;        // write beat / read beat being assembled
  logic [Bytes-1:0]     strb_q, strb_d;
  logic [1:0]           resp_q, resp_d;        // worst register response so far
  logic                 aw_done_q, aw_done_d, w_done_q, w_done_d;

  // Lowest word still to do.
  logic [WordBits-1:0] word;
  always_comb begin
    word = '0;
    for (int i = Words - 1; i >= 0; i--) if (todo_q[i]) word = WordBits'(i);
  end

  // Words a read beat at `addr` of 2^size bytes covers.
  function automatic logic [Words-1:0] read_words(logic [LaneBits-1:0] lane_addr, logic [2:0] size);
    logic [Words-1:0] m;
    logic [LaneBits-1:0] lo, hi;
    lo = lane_addr & ~LaneBits'((1 << size) - 1);
    hi = lo + LaneBits'((1 << size) - 1);
    m = '0;
    for (int unsigned w = 0; w < Words; w++)
      if (LaneBits'(4 * w + 3) >= lo && LaneBits'(4 * w) <= hi) m[w] = 1'b1;
    return m;
  endfunction

  // Words of a write beat with any strobe set.
  function automatic logic [Words-1:0] write_words(logic [Bytes-1:0] strb);
    logic [Words-1:0] m;
    for (int unsigned w = 0; w < Words; w++) m[w] = |strb[4 * w +: 4];
    return m;
  endfunction

  function automatic logic [11:0] next_addr(logic [11:0] addr, logic [2:0] size, logic fixed);
    if (fixed) return addr;
    return (addr & ~12'((1 << size) - 1)) + 12'(1 << size);
  endfunction

  function automatic logic [1:0] worst(logic [1:0] a, logic [1:0] b);
    return (a > b) ? a : b;
  endfunction

  logic [11:0]         next_beat;
  logic [LaneBits-1:0] next_lane;
  assign next_beat = next_addr(addr_q, size_q, fixed_q);
  assign next_lane = next_beat[LaneBits-1:0];

  always_comb begin
    state_d   = state_q;
    id_d      = id_q;
    addr_d    = addr_q;
    left_d    = left_q;
    size_d    = size_q;
    fixed_d   = fixed_q;
    wrap_d    = wrap_q;
    todo_d    = todo_q;
    data_d    = data_q;
    strb_d    = strb_q;
    resp_d    = resp_q;
    aw_done_d = aw_done_q;
    w_done_d  = w_done_q;
    s_axi_awready = 1'b0;
    s_axi_arready = 1'b0;
    s_axi_wready  = 1'b0;
    rearm_o       = 1'b0;

    unique case (state_q)
      Idle: begin
        // Writes first: a register write followed by a read of the same register stays ordered.
        s_axi_awready = 1'b1;
        s_axi_arready = !s_axi_awvalid;
        resp_d = sgpu_pkg::AxiRespOkay;
        if (s_axi_awvalid) begin
          id_d    = s_axi_awid;
          addr_d  = s_axi_awaddr[11:0];
          left_d  = s_axi_awlen;
          size_d  = s_axi_awsize;
          fixed_d = s_axi_awburst == 2'b00;
          wrap_d  = s_axi_awburst == 2'b10;
          state_d = WrBeat;
        end else if (s_axi_arvalid) begin
          id_d    = s_axi_arid;
          addr_d  = s_axi_araddr[11:0];
          left_d  = s_axi_arlen;
          size_d  = s_axi_arsize;
          fixed_d = s_axi_arburst == 2'b00;
          wrap_d  = s_axi_arburst == 2'b10;
          todo_d  = (s_axi_arburst == 2'b10) ? '0 : read_words(s_axi_araddr[LaneBits-1:0], s_axi_arsize);
          data_d  = '0;
          if (s_axi_arburst == 2'b10) resp_d = sgpu_pkg::AxiRespSlvErr;
          state_d = RdAccess;
        end
      end
      WrBeat: begin
        s_axi_wready = 1'b1;
        if (s_axi_wvalid) begin
          data_d    = s_axi_wdata;
          strb_d    = s_axi_wstrb;
          todo_d    = wrap_q ? '0 : write_words(s_axi_wstrb);
          if (wrap_q) resp_d = sgpu_pkg::AxiRespSlvErr;
          aw_done_d = 1'b0;
          w_done_d  = 1'b0;
          state_d   = WrAccess;
          // wlast ends the burst (with a correct manager it agrees with awlen).
          if (s_axi_wlast) left_d = '0;
        end
      end
      WrAccess: begin
        if (todo_q == '0) begin
          if (left_q == '0) state_d = Bresp;
          else begin
            left_d  = left_q - 1'b1;
            addr_d  = next_beat;
            state_d = WrBeat;
          end
        end else begin
          if (m_axil_awvalid && m_axil_awready) aw_done_d = 1'b1;
          if (m_axil_wvalid && m_axil_wready) w_done_d = 1'b1;
          if (aw_done_d && w_done_d) state_d = WrResp;
        end
      end
      WrResp: begin
        if (m_axil_bvalid) begin
          rearm_o   = 1'b1;
          resp_d    = worst(resp_q, m_axil_bresp);
          todo_d    = todo_q & ~(Words'(1) << word);
          aw_done_d = 1'b0;
          w_done_d  = 1'b0;
          state_d   = WrAccess;
        end
      end
      Bresp: begin
        if (s_axi_bready) state_d = Idle;
      end
      RdAccess: begin
        if (todo_q == '0) state_d = Rbeat;
        else if (m_axil_arvalid && m_axil_arready) state_d = RdResp;
      end
      RdResp: begin
        if (m_axil_rvalid) begin
          data_d[32 * word +: 32] = m_axil_rdata;
          resp_d  = worst(resp_q, m_axil_rresp);
          todo_d  = todo_q & ~(Words'(1) << word);
          state_d = RdAccess;
        end
      end
      Rbeat: begin
        if (s_axi_rready) begin
          if (left_q == '0) begin
            state_d = Idle;
          end else begin
            left_d  = left_q - 1'b1;
            addr_d  = next_beat;
            todo_d  = wrap_q ? '0 : read_words(next_lane, size_q);
            data_d  = '0;
            resp_d  = wrap_q ? sgpu_pkg::AxiRespSlvErr : sgpu_pkg::AxiRespOkay;
            state_d = RdAccess;
          end
        end
      end
      default: state_d = Idle;
    endcase
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q   <= Idle;
      id_q      <= '0;
      addr_q    <= '0;
      left_q    <= '0;
      size_q    <= '0;
      fixed_q   <= 1'b0;
      wrap_q    <= 1'b0;
      todo_q    <= '0;
      data_q    <= '0;
      strb_q    <= '0;
      resp_q    <= '0;
      aw_done_q <= 1'b0;
      w_done_q  <= 1'b0;
    end else begin
      state_q   <= state_d;
      id_q      <= id_d;
      addr_q    <= addr_d;
      left_q    <= left_d;
      size_q    <= size_d;
      fixed_q   <= fixed_d;
      wrap_q    <= wrap_d;
      todo_q    <= todo_d;
      data_q    <= data_d;
      strb_q    <= strb_d;
      resp_q    <= resp_d;
      aw_done_q <= aw_done_d;
      w_done_q  <= w_done_d;
    end
  end

  // Register port.
  logic [11:0] word_addr;
  assign word_addr      = {addr_q[11:LaneBits], word, 2'b00};
  assign m_axil_awvalid = (state_q == WrAccess) && todo_q != '0 && !aw_done_q;
  assign m_axil_awaddr  = word_addr;
  assign m_axil_awprot  = 3'b000;
  assign m_axil_wvalid  = (state_q == WrAccess) && todo_q != '0 && !w_done_q;
  assign m_axil_wdata   = data_q[32 * word +: 32];
  assign m_axil_wstrb   = strb_q[4 * word +: 4];
  assign m_axil_bready  = (state_q == WrResp);
  assign m_axil_arvalid = (state_q == RdAccess) && todo_q != '0;
  assign m_axil_araddr  = word_addr;
  assign m_axil_arprot  = 3'b000;
  assign m_axil_rready  = (state_q == RdResp);

  // Responses.
  assign s_axi_bvalid = (state_q == Bresp);
  assign s_axi_bid    = id_q;
  assign s_axi_bresp  = resp_q;
  assign s_axi_rvalid = (state_q == Rbeat);
  assign s_axi_rid    = id_q;
  assign s_axi_rdata  = data_q;
  assign s_axi_rresp  = resp_q;
  assign s_axi_rlast  = (left_q == '0);

  // Address bits above the 4 KiB register window are not decoded (BAR0 is 4 KiB).
  logic unused;
  assign unused = ^{s_axi_awaddr[63:12], s_axi_araddr[63:12]};

  `SGPU_ASSERT_STATIC(g_bad_width, DataWidth >= 32 && (DataWidth & (DataWidth - 1)) == 0,
                     "DataWidth must be a power of two >= 32")

endmodule

`default_nettype wire
