// Copy/fill/blit engine: executes one request {op, src, dst, width, height, pitches, pattern}
// at a time. Each row is one read request to its own sgpu_dma_rd (source side) and one row of
// its burst write master sgpu_dma_wr (destination side); rows are issued ahead on both sides,
// so reads, realignment and writes of consecutive rows overlap. A linear copy or fill is the
// one-row case; BLIT_RECT / FILL_RECT are the pitched case (docs/copy-engine.md).
//
//   req ─▶ row sequencer ─┬─▶ source rows ─▶ u_rd (sgpu_dma_rd) ─▶ data ─┐ (COPY)
//                         │                  └─▶ status: errors          ├─▶ u_wr ─▶ AW/W/B
//                         └─▶ destination rows ──────────────────────────┤   (sgpu_dma_wr)
//                                            pattern beat (FILL) ────────┘
//
// One status per request. On a read error, a translation fault, a write error or abort_i the
// engine drains: the reader is aborted (issued reads complete and are dropped), issued write
// bursts complete with zero strobes, every response is awaited; then the status is reported.
// Writes never leave [dst + r * dst_pitch, + width) of any row r.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_copy #(
  /// AXI data width in bits: a power of two, 64..512.
  parameter int unsigned DataWidth = 64,
  /// AXI ID width (shared by the read and write ports).
  parameter int unsigned IdWidth = 4,
  /// AXI ID of reads and of writes.
  parameter logic [IdWidth-1:0] AxiId = '0,
  /// Longest burst in beats, both directions.
  parameter int unsigned MaxBurstBeats = 256,
  /// Read bursts in flight.
  parameter int unsigned MaxReadsInFlight = 16,
  /// Read data buffer in beats (see sgpu_dma_rd).
  parameter int unsigned ReadBufferBeats = sgpu_dma_pkg::DefaultBufferBeats,
  /// Write bursts between AW and B.
  parameter int unsigned MaxWritesInFlight = 8,
  /// AXI4 read request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_rd_req_t = sgpu_axi_pkg::axi_rd_req_t,
  parameter type axi_rd_rsp_t = sgpu_axi_pkg::axi_rd_rsp_t,
  /// AXI4 write request/response structs (sgpu_axi_typedef.svh) of DataWidth and IdWidth.
  parameter type axi_wr_req_t = sgpu_axi_pkg::axi_wr_req_t,
  parameter type axi_wr_rsp_t = sgpu_axi_pkg::axi_wr_rsp_t
) (
  /// Clock.
  input  wire logic                        clk_i,
  /// Asynchronous reset, active low.
  input  wire logic                        rst_ni,

  /// Request channel (valid/ready); accepted only when the engine is idle.
  input  wire logic                        req_valid_i,
  /// The engine accepts a request; depends only on its state.
  output      logic                        req_ready_o,
  /// The request.
  input  wire sgpu_copy_pkg::copy_req_t    req_i,
  /// Status channel (valid/ready): one per request.
  output      logic                        status_valid_o,
  /// The consumer takes the status.
  input  wire logic                        status_ready_i,
  /// {err, addr}.
  output      sgpu_copy_pkg::copy_status_t status_o,
  /// Abort the running request (pulse or level); it drains and reports CopyAborted.
  input  wire logic                        abort_i,
  /// A request is running or its status waits.
  output      logic                        busy_o,

  /// Translation port of the source reads (see sgpu_dma_rd).
  output      logic                        xlate_req_valid_o,
  input  wire logic                        xlate_req_ready_i,
  output      sgpu_dma_pkg::xlate_req_t    xlate_req_o,
  input  wire logic                        xlate_rsp_valid_i,
  output      logic                        xlate_rsp_ready_o,
  input  wire sgpu_dma_pkg::xlate_rsp_t    xlate_rsp_i,
  /// Translation port of the destination writes (write = 1; one request per new page).
  output      logic                        wr_xlate_req_valid_o,
  input  wire logic                        wr_xlate_req_ready_i,
  output      sgpu_dma_pkg::xlate_req_t    wr_xlate_req_o,
  input  wire logic                        wr_xlate_rsp_valid_i,
  output      logic                        wr_xlate_rsp_ready_o,
  input  wire sgpu_dma_pkg::xlate_rsp_t    wr_xlate_rsp_i,

  /// AXI4 read master (ar, r).
  output      axi_rd_req_t                 axi_rd_req_o,
  input  wire axi_rd_rsp_t                 axi_rd_rsp_i,
  /// AXI4 write master (aw, w, b).
  output      axi_wr_req_t                 axi_wr_req_o,
  input  wire axi_wr_rsp_t                 axi_wr_rsp_i
);

  import sgpu_copy_pkg::*;

  typedef enum logic [1:0] {
    StIdle,    // waiting for a request
    StRun,     // rows issued to both sides, data flowing
    StDrain,   // error or abort: reader aborted, writer flushed, waiting for the bus
    StReport   // status waiting to be taken
  } state_e;

  state_e          state_q, state_d;
  copy_req_t       req_q, req_d;
  logic [31:0]     rd_rows_q, rd_rows_d;     // source rows not yet requested
  logic [31:0]     wr_rows_q, wr_rows_d;     // destination rows not yet queued
  logic [31:0]     st_rows_q, st_rows_d;     // source rows whose status has not arrived
  // The row counts' compares, kept in registers beside them (timing pass 14, docs/fpga.md): a
  // 32-bit compare of each count stood in front of the row requests' valids, and the compare of
  // each next count with zero (behind the decrement, behind the reader's and the writer's
  // handshakes) in front of the state (asserted equal: RowFlags).
  logic            rd_more_q, rd_more_d;     // rd_rows_q != 0
  logic            wr_more_q, wr_more_d;     // wr_rows_q != 0
  logic            st_zero_q, st_zero_d;     // st_rows_q == 0
  logic            st_one_q, st_one_d;       // st_rows_q == 1
  sgpu_pkg::addr_t rd_addr_q, rd_addr_d;     // next source row
  sgpu_pkg::addr_t wr_addr_q, wr_addr_d;     // next destination row
  sgpu_pkg::addr_t in_row_q, in_row_d;       // source row the writer is taking input from
  copy_err_e       err_q, err_d;
  sgpu_pkg::addr_t err_addr_q, err_addr_d;

  ////////////
  // Reader //
  ////////////

  logic                      rd_req_valid, rd_req_ready, rd_data_valid, rd_data_ready;
  logic                      rd_status_valid, rd_status_ready, rd_abort, rd_busy, rd_last;
  logic                      rd_abort_q;  // the reader's abort pulse, registered (below)
  logic [DataWidth-1:0]      rd_data;
  logic [DataWidth/8-1:0]    rd_keep;
  sgpu_dma_pkg::dma_status_t rd_status;

  sgpu_dma_rd #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         (AxiId),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(MaxReadsInFlight),
    .BufferBeats   (ReadBufferBeats),
    .axi_rd_req_t  (axi_rd_req_t),
    .axi_rd_rsp_t  (axi_rd_rsp_t)
  ) u_rd (
    .clk_i, .rst_ni,
    .abort_i          (rd_abort),
    .busy_o           (rd_busy),
    .req_valid_i      (rd_req_valid),
    .req_ready_o      (rd_req_ready),
    .req_i            ('{addr: rd_addr_q, len: req_q.width, tag: '0}),
    .data_valid_o     (rd_data_valid),
    .data_ready_i     (rd_data_ready),
    .data_o           (rd_data),
    .data_keep_o      (rd_keep),
    .data_last_o      (rd_last),
    .status_valid_o   (rd_status_valid),
    .status_ready_i   (rd_status_ready),
    .status_o         (rd_status),
    .xlate_req_valid_o, .xlate_req_ready_i, .xlate_req_o, .xlate_req_tag_o(),
    .xlate_rsp_valid_i, .xlate_rsp_ready_o, .xlate_rsp_i,
    .axi_rd_req_o(axi_rd_req_o), .axi_rd_rsp_i(axi_rd_rsp_i)
  );

  // Rows are consumed by length: the writer takes exactly a row's beats, so keep and last
  // carry nothing new (lanes beyond the row get no strobe).
  logic unused_rd;
  assign unused_rd = ^{rd_keep, rd_last, rd_status.tag};

  ////////////
  // Writer //
  ////////////

  logic                 wr_row_valid, wr_row_ready, wr_in_valid, wr_in_ready, wr_flush;
  logic                 wr_in_row_done, wr_idle, wr_err, wr_xerr;
  sgpu_pkg::addr_t      wr_xerr_addr;
  logic [31:0]          wr_in_row_bytes;
  logic [DataWidth-1:0] wr_in_data;
  sgpu_pkg::addr_t      wr_err_addr;

  sgpu_dma_wr #(
    .DataWidth     (DataWidth),
    .IdWidth       (IdWidth),
    .AxiId         (AxiId),
    .MaxBurstBeats (MaxBurstBeats),
    .MaxOutstanding(MaxWritesInFlight),
    .axi_wr_req_t  (axi_wr_req_t),
    .axi_wr_rsp_t  (axi_wr_rsp_t)
  ) u_wr (
    .clk_i, .rst_ni,
    .flush_i       (wr_flush),
    .xlate_req_valid_o(wr_xlate_req_valid_o),
    .xlate_req_ready_i(wr_xlate_req_ready_i),
    .xlate_req_o      (wr_xlate_req_o),
    .xlate_rsp_valid_i(wr_xlate_rsp_valid_i),
    .xlate_rsp_ready_o(wr_xlate_rsp_ready_o),
    .xlate_rsp_i      (wr_xlate_rsp_i),
    .xlate_clear_i    (state_q == StIdle),
    .xerr_o           (wr_xerr),
    .xerr_addr_o      (wr_xerr_addr),
    .row_valid_i   (wr_row_valid),
    .row_ready_o   (wr_row_ready),
    .row_i         ('{addr: wr_addr_q, len: req_q.width}),
    .in_valid_i    (wr_in_valid),
    .in_ready_o    (wr_in_ready),
    .in_data_i     (wr_in_data),
    .in_row_done_o (wr_in_row_done),
    .in_row_bytes_o(wr_in_row_bytes),
    .idle_o        (wr_idle),
    .err_o         (wr_err),
    .err_addr_o    (wr_err_addr),
    .axi_wr_req_o(axi_wr_req_o), .axi_wr_rsp_i(axi_wr_rsp_i)
  );

  // FILL: every input beat is the pattern in every dword (byte i of a row = pattern byte i mod 4).
  logic fill;
  assign fill          = (req_q.op == CopyOpFill);
  assign wr_in_valid   = fill ? (state_q == StRun) : rd_data_valid;
  assign wr_in_data    = fill ? {(DataWidth / 32){req_q.pattern}} : rd_data;
  assign rd_data_ready = !fill && wr_in_ready;

  /////////
  // FSM //
  /////////

  assign req_ready_o  = (state_q == StIdle);
  assign rd_req_valid = (state_q == StRun) && rd_more_q;
  assign wr_row_valid = (state_q == StRun) && wr_more_q;
  // Statuses are taken as they come: OK ones count rows, an error starts the drain.
  assign rd_status_ready = (state_q inside {StRun, StDrain});
  assign wr_flush     = (state_q == StDrain);

  // What ends a run early: a read error status, a write error, a refused destination page, an
  // abort.
  logic stat_err, to_drain;
  assign stat_err = rd_status_valid && (rd_status.err != sgpu_dma_pkg::DmaOk);
  assign to_drain = stat_err || wr_err || wr_xerr || abort_i;

  always_comb begin
    state_d    = state_q;
    req_d      = req_q;
    rd_rows_d  = rd_rows_q;
    wr_rows_d  = wr_rows_q;
    st_rows_d  = st_rows_q;
    rd_more_d  = rd_more_q;
    wr_more_d  = wr_more_q;
    st_zero_d  = st_zero_q;
    st_one_d   = st_one_q;
    rd_addr_d  = rd_addr_q;
    wr_addr_d  = wr_addr_q;
    in_row_d   = in_row_q;
    err_d      = err_q;
    err_addr_d = err_addr_q;

    unique case (state_q)
      StIdle: begin
        // The request's registers are loaded every idle cycle, whether or not a request is
        // offered (nothing reads them before the engine runs or reports): only the state waits
        // for the request's valid, which leaves the CP's controller late (timing pass 14,
        // docs/fpga.md). The counts and their kept compares are loaded together.
        req_d      = req_i;
        rd_addr_d  = req_i.src;
        wr_addr_d  = req_i.dst;
        in_row_d   = req_i.src;
        err_d      = CopyOk;
        err_addr_d = '0;
        rd_rows_d  = (req_i.op == CopyOpFill) ? '0 : req_i.height;
        st_rows_d  = (req_i.op == CopyOpFill) ? '0 : req_i.height;
        wr_rows_d  = req_i.height;
        rd_more_d  = (req_i.op != CopyOpFill) && (req_i.height != '0);
        wr_more_d  = (req_i.height != '0);
        st_zero_d  = (req_i.op == CopyOpFill) || (req_i.height == '0);
        st_one_d   = (req_i.op != CopyOpFill) && (req_i.height == 32'd1);
        if (req_valid_i) begin
          state_d = (req_i.width == '0 || req_i.height == '0) ? StReport : StRun;
        end
      end

      StRun: begin
        if (rd_req_valid && rd_req_ready) begin
          rd_rows_d = rd_rows_q - 32'd1;
          rd_more_d = (rd_rows_q != 32'd1);
          rd_addr_d = rd_addr_q + sgpu_pkg::addr_t'(req_q.src_pitch);
        end
        if (wr_row_valid && wr_row_ready) begin
          wr_rows_d = wr_rows_q - 32'd1;
          wr_more_d = (wr_rows_q != 32'd1);
          wr_addr_d = wr_addr_q + sgpu_pkg::addr_t'(req_q.dst_pitch);
        end
        if (wr_in_row_done) in_row_d = in_row_q + sgpu_pkg::addr_t'(req_q.src_pitch);
        if (rd_status_valid && !stat_err) begin
          st_rows_d = st_rows_q - 32'd1;
          st_zero_d = st_one_q;
          st_one_d  = (st_rows_q == 32'd2);
        end
        // A failure or abort starts the drain; the first of them by priority names it (a write
        // error, a read error, a refused destination page, the abort). Data stops at a read
        // error: the writer waits in the failing row. Formed flat from the events (to_drain),
        // not from a next state behind them.
        if (to_drain) state_d = StDrain;
        if (wr_err) begin
          err_d      = CopyWriteError;
          err_addr_d = wr_err_addr;
        end else if (stat_err) begin
          err_d      = (rd_status.err == sgpu_dma_pkg::DmaXlateFault) ? CopyXlateFault
                                                                        : CopyReadError;
          err_addr_d = in_row_q + sgpu_pkg::addr_t'(wr_in_row_bytes);
        end else if (wr_xerr) begin
          err_d      = CopyWrXlateFault;
          err_addr_d = wr_xerr_addr;
        end else if (abort_i) begin
          err_d      = CopyAborted;
        end
        // Every row requested, queued and written, every status in: from the kept compares (no
        // row is queued once wr_rows_q is 0, every status is in once st_rows_d is 0, and the
        // source rows requested never outnumber those with a status to come: asserted RowsDone).
        if (!to_drain && !wr_more_q && (st_zero_q || (st_one_q && rd_status_valid))
            && wr_idle) begin
          state_d = StReport;
        end
      end

      StDrain: begin
        if (wr_err && err_q == CopyAborted) begin
          err_d      = CopyWriteError;
          err_addr_d = wr_err_addr;
        end
        if (!rd_busy && !rd_abort_q && wr_idle) state_d = StReport;
      end

      StReport: begin
        if (status_ready_i) state_d = StIdle;
      end

      default: state_d = StIdle;
    endcase
  end

  // One pulse when draining starts; the reader latches it and drains. The pulse leaves from a
  // register, a cycle after the state that decided it: the next state is behind the reader's and
  // writer's statuses and errors, the reader's stop in front of its request FIFOs. Until it has
  // left the reader counts as busy (the drain does not end before the reader took it).
  assign rd_abort = rd_abort_q;

  assign status_valid_o = (state_q == StReport);
  assign status_o       = '{err: err_q, addr: err_addr_q};
  assign busy_o         = (state_q != StIdle);

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      rd_abort_q <= 1'b0;
    end else begin
      rd_abort_q <= (state_q == StRun) && to_drain;
    end
  end

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      state_q   <= StIdle;
      rd_rows_q <= '0;
      wr_rows_q <= '0;
      st_rows_q <= '0;
      rd_more_q <= 1'b0;
      wr_more_q <= 1'b0;
      st_zero_q <= 1'b1;
      st_one_q  <= 1'b0;
      err_q     <= CopyOk;
    end else begin
      state_q   <= state_d;
      rd_rows_q <= rd_rows_d;
      wr_rows_q <= wr_rows_d;
      st_rows_q <= st_rows_d;
      rd_more_q <= rd_more_d;
      wr_more_q <= wr_more_d;
      st_zero_q <= st_zero_d;
      st_one_q  <= st_one_d;
      err_q     <= err_d;
    end
  end

  // Payload registers: loaded with the request, read only while a request runs.
  always_ff @(posedge clk_i) begin
    req_q      <= req_d;
    rd_addr_q  <= rd_addr_d;
    wr_addr_q  <= wr_addr_d;
    in_row_q   <= in_row_d;
    err_addr_q <= err_addr_d;
  end

  // The reader's abort leaves in the first cycle of the drain, and the drain ends only after it.
  `SGPU_ASSERT(AbortPulseInDrain, rd_abort_q |-> state_q == StDrain)
  `SGPU_ASSERT(DrainEndsAfterAbort, state_q == StDrain && state_d != StDrain |-> !rd_abort_q)

  // The writer only ever takes input for rows it was given.
  `SGPU_ASSERT(NoStrayStatus, (state_q == StRun && rd_status_valid
                               && rd_status.err == sgpu_dma_pkg::DmaOk) |-> st_rows_q != '0)

  // The kept compares are the compares of the counts, and a status comes only for a row requested
  // (so the rows with a status to come are at least the rows not yet requested).
  `SGPU_ASSERT(RowFlags, rd_more_q == (rd_rows_q != '0) && wr_more_q == (wr_rows_q != '0)
                         && st_zero_q == (st_rows_q == '0) && st_one_q == (st_rows_q == 32'd1))
  `SGPU_ASSERT(StatusesCoverRequests, st_rows_q >= rd_rows_q)
  // The end of a run from the kept compares is the compare of the next counts it replaces.
  `SGPU_ASSERT(RowsDone, state_q == StRun && state_d != StDrain |->
      (state_d == StReport) == (rd_rows_d == '0 && wr_rows_d == '0 && st_rows_d == '0 && wr_idle
                                && !(wr_row_valid && wr_row_ready)))

endmodule

`default_nettype wire
