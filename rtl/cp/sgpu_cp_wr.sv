// Write issue of the command processor: the one write the CP offers in a cycle, decoded from
// the controller's state. Fully combinational: it has no clock.
//
// Which write is a function of registered state and the dword at the head of the stream, never
// of the write path's ready (that depends on the address: a request that depended on ready
// would close a loop). Every write is one 64-bit word at an 8-byte aligned address with byte
// strobes: a dword of WRITE_DATA, WRITE_PHYSICAL or MAP goes into its half of the word, two
// WRITE_* dwords of one word (the controller's pair) fill it; FENCE
// writes 32 or 64 bits; UNMAP's dummy PTE, TIMESTAMP's counter and the records are whole words.
//
// The write-back record's fence word is written last, and each of its two words only once
// every earlier write was acknowledged: the fence word's OKAY response is the commit point of
// retirement (docs/programming-guide.md, "Retiring"), so nothing of the entry can fail after
// its fence is in memory.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_wr
  import sgpu_abi_pkg::*;
  import sgpu_cp_pkg::*;
(
  /// The controller's state, and what it is reading: a data dword (WRITE_*, MAP) is at the
  /// head of the stream, or (hi_i) the address high dword that goes with the data dword behind.
  input  wire cp_fsm_e            fsm_i,
  input  wire logic               data_i,
  /// WRITE_DATA pair: the head dword (8-byte aligned destination) and dw2_i behind it leave as
  /// one 64-bit write. hi_i: the head is the address high dword, dw2_i the first data dword.
  input  wire logic               pair_i,
  input  wire logic               hi_i,
  input  wire logic [31:0]        dw2_i,
  /// The write path is idle (each word of the write-back record waits for every earlier write).
  input  wire logic               wr_idle_i,
  /// The packet's arguments (dst counts up through WRITE_* and MAP data; the range view's
  /// pte_addr through UNMAP's writes).
  input  wire cp_args_u           args_i,
  /// The data dword at the head of the stream.
  input  wire logic [31:0]        dw_i,
  /// The packet is a MAP: its low PTE dwords (8-byte aligned) get the PTE flags in bits 2:0.
  input  wire logic               map_i,
  /// FENCE: write all 64 bits of the value.
  input  wire logic               fence_value64_i,
  /// The second 64-bit word of a record (of the write-back record: the fence word).
  input  wire logic               second_i,
  /// The write-back record: WB_ADDR, the entry's fence, the head after it.
  input  wire sgpu_pkg::addr_t    wb_addr_i,
  input  wire logic [63:0]        entry_fence_i,
  input  wire logic [31:0]        head_next_i,
  /// The preemption record: PREEMPT_ADDR, PREEMPT_FENCE, the last completed fence.
  input  wire sgpu_pkg::addr_t    preempt_addr_i,
  input  wire logic [63:0]        preempt_fence_i,
  input  wire logic [63:0]        fence_done_i,

  output      logic               valid_o,
  output      sgpu_pkg::word_wr_t wr_o
);

  typedef enum logic [2:0] {
    WrNone,       // nothing
    WrData,       // the data dword at the head of the stream
    WrUnmap,      // UNMAP's dummy PTE at the next PTE address
    WrFence,      // FENCE's value
    WrTimestamp,  // TIMESTAMP's sampled counter
    WrPreempt,    // the preemption record (two words)
    WrWriteback   // the write-back record (two words, each after every earlier write)
  } src_e;

  // The source follows from the state alone; whether the write is offered this cycle also
  // from the stream head (a data dword) and the write path (idle, for the record). The word is
  // formed from the source and goes into the CP's write buffer (sgpu_cp_wr_buf), whose ready is
  // its own register: the write translator compares the buffered word's page.
  src_e src;
  always_comb begin
    src = WrNone;
    unique case (fsm_i)
      StPktBody:      src = WrData;
      StUnmapWrite:   src = WrUnmap;
      StFenceWrite:   src = WrFence;
      StTsWrite:      src = WrTimestamp;
      StPreemptWrite: src = WrPreempt;
      StRetireDrain:  src = WrWriteback;
      default: ;
    endcase
  end

  sgpu_pkg::addr_t dst;
  sgpu_pkg::addr_t preempt_addr8, wb_addr8;  // the records' second words
  logic [31:0]     dword;
  writeback_t      wb;  // the record as the ABI lays it out: fence in word 0, head in word 1
  assign wb    = '{fence_lo: entry_fence_i[31:0], fence_hi: entry_fence_i[63:32],
                   head: head_next_i, reserved: '0};
  assign dst   = args_i.copy.dst;
  assign preempt_addr8 = preempt_addr_i + sgpu_pkg::addr_t'(8);
  assign wb_addr8      = wb_addr_i + sgpu_pkg::addr_t'(8);
  assign dword = (map_i && !dst[2]) ? {dw_i[31:12], 9'h000, args_i.range.pte_flags[2:0]} : dw_i;

  always_comb begin
    valid_o = (src != WrNone) && (src != WrData || data_i) && (src != WrWriteback || wr_idle_i);
    wr_o    = '0;
    unique case (src)
      WrData: begin
        // The data lanes do not wait for the pair (a decision of the controller's, behind the
        // decoder's routing): each half carries the dword it would hold in any of the three
        // cases, and only the strobes tell which: the low half is written by an 8-byte aligned
        // single dword, a pair's first or the data dword behind the address high dword; the
        // high half by a 4-byte aligned single or hi's, or a pair's second. A half whose strobes
        // are off carries a dword that is not written (it was zero).
        wr_o.addr = {hi_i ? dw_i : dst[63:32], dst[31:3], 3'b000};
        wr_o.data = {(hi_i || !dst[2]) ? dw2_i : dword, hi_i ? dw2_i : dword};
        wr_o.strb = {{4{dst[2] || (pair_i && !hi_i)}}, {4{!dst[2]}}};
      end
      WrUnmap: begin
        wr_o.addr = args_i.range.pte_addr;
        wr_o.data = {args_i.range.dummy_hi, args_i.range.dummy_lo};
        wr_o.strb = 8'hff;
      end
      WrFence: begin
        wr_o.addr = {dst[63:3], 3'b000};
        if (fence_value64_i) begin
          wr_o.data = args_i.target.value;
          wr_o.strb = 8'hff;
        end else begin
          wr_o.data = dst[2] ? {args_i.target.value[31:0], 32'h0}
                             : {32'h0, args_i.target.value[31:0]};
          wr_o.strb = dst[2] ? 8'hf0 : 8'h0f;
        end
      end
      WrTimestamp: begin
        wr_o.addr = dst;
        wr_o.data = args_i.target.value;
        wr_o.strb = 8'hff;
      end
      // {PREEMPT_FENCE, last completed fence}.
      WrPreempt: begin
        wr_o.addr = second_i ? preempt_addr8 : preempt_addr_i;
        wr_o.data = second_i ? fence_done_i : preempt_fence_i;
        wr_o.strb = 8'hff;
      end
      // {reserved, head} first, then the fence.
      WrWriteback: begin
        wr_o.addr = second_i ? wb_addr_i : wb_addr8;
        wr_o.data = second_i ? wb[63:0] : wb[127:64];
        wr_o.strb = 8'hff;
      end
      default: ;
    endcase
  end

  `SGPU_ASSERT_STATIC(g_bad_writeback, WritebackBytes == 16,
                      "the write-back record must be two 64-bit words (spec/abi.toml)")

endmodule

`default_nettype wire
