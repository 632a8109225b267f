// Stream position of the command processor: which buffer the decoder is reading, the byte
// offset of its next dword, the dwords not yet decoded, and the INDIRECT return stack (the
// callers' positions).
//
// Two things move it. The dwords the controller takes from the buffer stream (take_i: 0, 1 or
// 2, the first of them a packet header or not) advance it: that is the end of the controller's
// decision (the take waits for the write buffer's room and the dword window), so it only selects
// among sums formed beforehand from registers. The controller's slower operations
// (cp_stream_op_e: start, call, return, rewind) come from states that take no stream dword, and
// select among candidates that are registers too (the entry, the packet register, the stack).
//
// A call pushes the caller's position, already past the INDIRECT packet (the controller calls
// once the stream stop after it ended), and starts the called buffer; a return pops it. A rewind
// puts the position back to the header of the packet being executed (a copy or WAIT_MEM stopped
// by preemption restarts from its header on resume).
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_stream
  import sgpu_cp_pkg::*;
#(
  /// Deepest INDIRECT nesting below the ring entry's buffer (CAP_MEM.max_indirect_depth), >= 1.
  parameter int unsigned MaxIndirectDepth = 4
) (
  input  wire logic            clk_i,
  input  wire logic            rst_ni,

  /// The controller's operation (StreamHold while it takes stream dwords).
  input  wire cp_stream_op_e   op_i,
  /// Dwords of the buffer stream taken this cycle (0, 1, 2); the first is a packet header
  /// (header_i: the packet's length is taken off the dwords left).
  input  wire logic [1:0]      take_i,
  input  wire logic            header_i,
  /// Write the current position into the stack's free frame above the top (depth unchanged).
  /// The controller raises it throughout the stream stop before a call, while the position no
  /// longer moves, so the frame is there when StreamCall pushes it; the frame's enable is then
  /// a decode of registers, not the end of the controller's decision (the stop's end).
  input  wire logic            save_i,
  /// StreamStart: the entry's buffer, its start offset and its dwords.
  input  wire sgpu_pkg::addr_t start_base_i,
  input  wire logic [31:0]     start_offset_i,
  input  wire logic [29:0]     start_dwords_i,
  /// StreamCall: the called buffer and its dwords.
  input  wire sgpu_pkg::addr_t call_base_i,
  input  wire logic [29:0]     call_dwords_i,
  /// StreamRewind: the offset of the packet's header, and the packet's dwords, given back.
  input  wire logic [31:0]     rewind_offset_i,
  input  wire logic [29:0]     pkt_dwords_i,
  /// A header take: the dwords of the packet whose header is at the head (header included).
  input  wire logic [29:0]     head_dwords_i,

  /// GPU address and byte offset of the next dword; dwords of the buffer not yet decoded.
  output      sgpu_pkg::addr_t addr_o,
  output      logic [31:0]     offset_o,
  output      logic [29:0]     left_o,
  /// left_o is 0 (a register: the buffer's end needs no 30-bit compare behind the position).
  output      logic            left_zero_o,
  /// Inside a called buffer (a return is due when it ends); a call would nest too deep.
  output      logic            nested_o,
  output      logic            full_o,
  /// PREEMPT_OFFSET: in the entry's buffer the offset of the next dword; inside a called buffer
  /// the offset of the level-0 INDIRECT (4 dwords before the caller's saved offset).
  output      logic [31:0]     preempt_offset_o
);

  localparam int unsigned DepthWidth = $clog2(MaxIndirectDepth + 1);
  localparam int unsigned IdxWidth = (MaxIndirectDepth > 1) ? $clog2(MaxIndirectDepth) : 1;

  /// A caller's position: its buffer, the offset of its next dword, its dwords left.
  typedef struct packed {
    sgpu_pkg::addr_t base;
    logic [31:0]     offset;
    logic [29:0]     left;
    logic            left_zero;  ///< left == 0
  } frame_t;

  sgpu_pkg::addr_t               base_q, base_d;
  logic [31:0]                   offset_q, offset_d;
  logic [29:0]                   left_q, left_d;
  logic                          left_zero_q, left_zero_d;  // left_q == 0
  frame_t [MaxIndirectDepth-1:0] stack_q, stack_d;
  logic [DepthWidth-1:0]         depth_q, depth_d;
  logic [IdxWidth-1:0]           push_idx, pop_idx;  // depth_q < Max when pushing, >= 1 popping

  assign push_idx = IdxWidth'(depth_q);
  assign pop_idx  = IdxWidth'(depth_q - DepthWidth'(1));

  // The sums of the takes and of the rewind, formed from the registers and from operands that
  // do not depend on the take or the operation (the head dword, the packet register): those,
  // which end the controller's decision, only select among them.
  logic [31:0] offset_4, offset_8;
  logic [29:0] left_header, left_rewind;
  assign offset_4    = offset_q + 32'd4;
  assign offset_8    = offset_q + 32'd8;
  assign left_header = left_q - head_dwords_i;
  assign left_rewind = left_q + pkt_dwords_i;

  // Whether the dwords left reach 0, formed beside the sums from registers and the head dword:
  // a header takes the rest exactly when its length is the rest; a started, called or rewound
  // buffer always has dwords left (asserted below); a return restores the caller's flag.
  logic left_is_head;
  assign left_is_head = (left_q == head_dwords_i);

  always_comb begin
    base_d      = base_q;
    offset_d    = offset_q;
    left_d      = left_q;
    left_zero_d = left_zero_q;
    stack_d     = stack_q;
    depth_d     = depth_q;
    if (save_i && !full_o) begin  // (full: no frame is free, and no call comes)
      stack_d[push_idx] = '{base: base_q, offset: offset_q, left: left_q,
                            left_zero: left_zero_q};
    end
    unique case (op_i)
      StreamStart: begin
        base_d      = start_base_i;
        offset_d    = start_offset_i;
        left_d      = start_dwords_i;
        left_zero_d = 1'b0;
        depth_d     = '0;
      end
      StreamCall: begin  // the frame above the top was saved (save_i) in this cycle or before
        depth_d     = depth_q + 1'b1;
        base_d      = call_base_i;
        offset_d    = '0;
        left_d      = call_dwords_i;
        left_zero_d = 1'b0;
      end
      StreamReturn: begin
        depth_d     = depth_q - 1'b1;
        base_d      = stack_q[pop_idx].base;
        offset_d    = stack_q[pop_idx].offset;
        left_d      = stack_q[pop_idx].left;
        left_zero_d = stack_q[pop_idx].left_zero;
      end
      StreamRewind: begin
        offset_d    = rewind_offset_i;
        left_d      = left_rewind;
        left_zero_d = 1'b0;
      end
      default: begin  // StreamHold: the dwords taken, if any
        offset_d = (take_i == 2'd2) ? offset_8 : (take_i == 2'd1) ? offset_4 : offset_q;
        if (take_i != 2'd0 && header_i) begin
          left_d      = left_header;
          left_zero_d = left_is_head;
        end
      end
    endcase
  end

  assign addr_o           = base_q + sgpu_pkg::addr_t'(offset_q);
  assign offset_o         = offset_q;
  assign left_o           = left_q;
  assign left_zero_o      = left_zero_q;
  assign nested_o         = (depth_q != '0);
  assign full_o           = 32'(depth_q) >= MaxIndirectDepth;
  assign preempt_offset_o = (depth_q == '0) ? offset_q : stack_q[0].offset - 32'd16;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      offset_q    <= '0;
      left_q      <= '0;
      left_zero_q <= 1'b1;
      depth_q     <= '0;
    end else begin
      offset_q    <= offset_d;
      left_q      <= left_d;
      left_zero_q <= left_zero_d;
      depth_q     <= depth_d;
    end
  end

  // Positions: only read while a buffer is being streamed, so they need no reset.
  always_ff @(posedge clk_i) begin
    base_q  <= base_d;
    stack_q <= stack_d;
  end

  `SGPU_ASSERT(DepthBounded, 32'(depth_q) <= MaxIndirectDepth)
  `SGPU_ASSERT(NoPushWhenFull, op_i == StreamCall |-> !full_o)
  `SGPU_ASSERT(NoPopWhenEmpty, op_i == StreamReturn |-> nested_o)
  // The registered flag is the compare it replaces; the operations that set it to 0 leave
  // dwords (the controller starts only a non-empty entry's buffer, calls only a buffer of at
  // least one dword, and rewinds by a packet's length, at least its header).
  `SGPU_ASSERT(LeftZeroIsLeft, left_zero_q == (left_q == '0))
  `SGPU_ASSERT(StartLeavesDwords, op_i == StreamStart |-> start_dwords_i != '0)
  `SGPU_ASSERT(CallLeavesDwords, op_i == StreamCall |-> call_dwords_i != '0)
  // The caller's frame is saved before the call pushes it, and the position does not move in
  // between: the frame pushed is the position at the call.
`ifndef SYNTHESIS
  frame_t here;
  assign here = '{base: base_q, offset: offset_q, left: left_q, left_zero: left_zero_q};
  logic saved_q;
  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      saved_q <= 1'b0;
    end else begin
      saved_q <= save_i && !full_o && op_i == StreamHold && take_i == 2'd0;
    end
  end
  `SGPU_ASSERT(CallSaved, op_i == StreamCall |-> save_i && saved_q && stack_q[push_idx] == here)
`endif
  // Dwords are taken only while no operation moves the stream.
  `SGPU_ASSERT(TakeOnlyWhenHeld, take_i != 2'd0 |-> op_i == StreamHold)
  `SGPU_ASSERT(TakeAtMostTwo, take_i != 2'd3)
  `SGPU_ASSERT(RewindLeavesDwords, op_i == StreamRewind |-> left_rewind != '0)
  `SGPU_ASSERT_STATIC(g_bad_depth, MaxIndirectDepth >= 1, "MaxIndirectDepth must be at least 1")

endmodule

`default_nettype wire
