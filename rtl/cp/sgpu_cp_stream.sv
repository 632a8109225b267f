// Stream position of the command processor: which buffer the decoder is reading, the byte
// offset of its next dword, the dwords not yet decoded, and the INDIRECT return stack (the
// callers' positions). The controller moves it with one operation per cycle (cp_stream_op_e).
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

  input  wire cp_stream_op_e   op_i,
  /// StreamStart: the entry's buffer; StreamCall: the called buffer.
  input  wire sgpu_pkg::addr_t base_i,
  /// StreamStart: the entry's start offset; StreamRewind: the offset of the packet's header.
  input  wire logic [31:0]     offset_i,
  /// StreamStart, StreamCall: dwords of the buffer.
  input  wire logic [29:0]     dwords_i,
  /// StreamHeader(2): the dwords of the packet whose header is at the head (header included).
  input  wire logic [29:0]     head_dwords_i,
  /// StreamRewind: the dwords of the packet being executed, given back.
  input  wire logic [29:0]     pkt_dwords_i,

  /// GPU address and byte offset of the next dword; dwords of the buffer not yet decoded.
  output      sgpu_pkg::addr_t addr_o,
  output      logic [31:0]     offset_o,
  output      logic [29:0]     left_o,
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
  } frame_t;

  sgpu_pkg::addr_t               base_q, base_d;
  logic [31:0]                   offset_q, offset_d;
  logic [29:0]                   left_q, left_d;
  frame_t [MaxIndirectDepth-1:0] stack_q, stack_d;
  logic [DepthWidth-1:0]         depth_q, depth_d;
  logic [IdxWidth-1:0]           push_idx, pop_idx;  // depth_q < Max when pushing, >= 1 popping

  assign push_idx = IdxWidth'(depth_q);
  assign pop_idx  = IdxWidth'(depth_q - DepthWidth'(1));

  // The sums of the operations that have one, formed from the registers and from operands that
  // do not depend on the operation (the head dword, the packet register): the operation, which
  // ends the controller's decision, only selects among them.
  logic [31:0] offset_4, offset_8;
  logic [29:0] left_header, left_rewind;
  assign offset_4    = offset_q + 32'd4;
  assign offset_8    = offset_q + 32'd8;
  assign left_header = left_q - head_dwords_i;
  assign left_rewind = left_q + pkt_dwords_i;

  always_comb begin
    base_d   = base_q;
    offset_d = offset_q;
    left_d   = left_q;
    stack_d  = stack_q;
    depth_d  = depth_q;
    unique case (op_i)
      StreamStart: begin
        base_d   = base_i;
        offset_d = offset_i;
        left_d   = dwords_i;
        depth_d  = '0;
      end
      StreamHeader: begin
        offset_d = offset_4;
        left_d   = left_header;
      end
      StreamHeader2: begin
        offset_d = offset_8;
        left_d   = left_header;
      end
      StreamSkip:  offset_d = offset_4;
      StreamSkip2: offset_d = offset_8;
      StreamCall: begin
        stack_d[push_idx] = '{base: base_q, offset: offset_q, left: left_q};
        depth_d  = depth_q + 1'b1;
        base_d   = base_i;
        offset_d = '0;
        left_d   = dwords_i;
      end
      StreamReturn: begin
        depth_d  = depth_q - 1'b1;
        base_d   = stack_q[pop_idx].base;
        offset_d = stack_q[pop_idx].offset;
        left_d   = stack_q[pop_idx].left;
      end
      StreamRewind: begin
        offset_d = offset_i;
        left_d   = left_rewind;
      end
      default: ;  // StreamHold
    endcase
  end

  assign addr_o           = base_q + sgpu_pkg::addr_t'(offset_q);
  assign offset_o         = offset_q;
  assign left_o           = left_q;
  assign nested_o         = (depth_q != '0);
  assign full_o           = 32'(depth_q) >= MaxIndirectDepth;
  assign preempt_offset_o = (depth_q == '0) ? offset_q : stack_q[0].offset - 32'd16;

  always_ff @(posedge clk_i or negedge rst_ni) begin
    if (!rst_ni) begin
      offset_q <= '0;
      left_q   <= '0;
      depth_q  <= '0;
    end else begin
      offset_q <= offset_d;
      left_q   <= left_d;
      depth_q  <= depth_d;
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
  `SGPU_ASSERT_STATIC(g_bad_depth, MaxIndirectDepth >= 1, "MaxIndirectDepth must be at least 1")

endmodule

`default_nettype wire
