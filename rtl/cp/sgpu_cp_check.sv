// Operand checks of the command processor. Fully combinational: it has no clock.
//
// For the ring entry it tells the controller whether it is malformed or empty. For the payload
// dword at the head of the stream (routed by sgpu_cp_decode) and the arguments captured so far:
// - the fault the dword itself causes, checked as it arrives and before anything of the packet
//   is written (WRITE_*'s address, MAP's length and range, UNMAP's range);
// - the fault the packet causes once its last dword is in (alignment, INDIRECT nesting, a
//   privileged copy's physical range), and otherwise what comes next (cp_next_e).
// It also makes the comparisons later states need on the registered arguments: the copy
// overlap, the WAIT_MEM condition and the address of the first PTE MAP/UNMAP write.
//
// The two physical-range checks take their answer from the CP's decode stage (sgpu_cp), which
// made it for the dword a cycle before it reached the head: no adder and no compare between
// the stream head and the fault.
`default_nettype none

module sgpu_cp_check
  import sgpu_abi_pkg::*;
  import sgpu_cp_pkg::*;
(
  /// The packet being executed and its row of the packet table.
  input  wire cp_pkt_t         pkt_i,
  input  wire pkt_info_t       info_i,
  /// The payload dword at the head of the stream and where it goes.
  input  wire logic [31:0]     dw_i,
  input  wire cp_slot_e        slot_i,
  /// INDIRECT: the return stack is full (the call would nest too deep).
  input  wire logic            nest_full_i,
  /// WRITE_PHYSICAL at its address high dword: the range ends above 2^SysAddrBits (sgpu_cp's
  /// decode stage: the high dword against hi_above's constants, chosen by the low dword's sum).
  input  wire logic            wphys_over_i,
  /// READ_PHYSICAL at its bytes dword: the bytes are more than 2^SysAddrBits - src.
  input  wire logic            rphys_over_i,
  /// MAP/UNMAP: first_page + count > GART_TABLE_SIZE, registered from count at the head
  /// (sgpu_cp).
  input  wire logic            map_oor_i,
  /// MAP: the packet's dwords - 4 (34-bit), registered with its header (sgpu_cp).
  input  wire logic [33:0]     map_len_i,
  /// GART_TABLE_BASE (bits 11:0 ignored).
  input  wire sgpu_pkg::addr_t gart_table_base_i,

  output      cp_chk_t         chk_o
);

  cp_args_u   args;
  copy_args_t a;  // the copy view: slot names
  assign args = pkt_i.args;
  assign a    = args.copy;

  cp_fault_req_t   dword_fault, last_fault;
  cp_next_e        next;
  logic            copy_overlap, wait_hit;
  sgpu_pkg::addr_t table_pte;
  assign chk_o = '{dword_fault:  dword_fault,
                   last_fault:   last_fault,
                   next:         next,
                   copy_overlap: copy_overlap,
                   wait_hit:     wait_hit,
                   table_pte:    table_pte};

  logic [31:0] pkt;  // the header: the detail of every packet fault
  assign pkt = 32'(pkt_i.hdr);

  // MAP/UNMAP: the range must end at or below GART_TABLE_SIZE (map_oor_i).
  assign table_pte = {gart_table_base_i[63:12], 12'h000}
                     + sgpu_pkg::addr_t'({args.range.first_page, 3'b000});

  ////////////////////
  // Dword by dword //
  ////////////////////

  always_comb begin
    dword_fault = '0;
    unique case (info_i.pkt_class)
      // The address is complete at addr_hi: aligned, and a privileged write's range physical.
      PktClassWrite: begin
        if (slot_i == SlotDstHi && a.dst[1:0] != 2'b00) begin
          dword_fault = fault(FaultBadAlignment, {dw_i, a.dst[31:0]}, pkt);
        end else if (slot_i == SlotDstHi && info_i.privileged && wphys_over_i) begin
          dword_fault = fault(FaultPhysicalRange, {dw_i, a.dst[31:0]}, pkt);
        end
      end
      // MAP: the length is checked at count, the range at pte_flags (before any PTE is
      // written); UNMAP's range once its dummy PTE is in. (2 * count + 4 != dwords, 34-bit:
      // the subtraction was made on the header, off the head dword's path.)
      PktClassMap: begin
        if (slot_i == SlotSrcHi && {1'b0, dw_i, 1'b0} != map_len_i) begin
          dword_fault = fault(FaultBadLength, pkt_i.hdr_addr, pkt);
        end else if (slot_i == SlotPattern && map_oor_i) begin
          dword_fault = fault(FaultMapRange, sgpu_pkg::addr_t'(args.range.first_page), pkt);
        end
      end
      PktClassUnmap: begin
        if (slot_i == SlotDstPitch && map_oor_i) begin
          dword_fault = fault(FaultMapRange, sgpu_pkg::addr_t'(args.range.first_page), pkt);
        end
      end
      default: ;
    endcase
  end

  //////////////////
  // Whole packet //
  //////////////////

  logic fence_value64;
  assign fence_value64 = pkt_i.hdr.flags[PktFenceFlagValue64Bit];

  always_comb begin
    last_fault = '0;
    next       = NextHeader;
    unique case (info_i.pkt_class)
      PktClassFence: begin
        if ((fence_value64 && a.dst[2:0] != 3'b000) || a.dst[1:0] != 2'b00) begin
          last_fault = fault(FaultBadAlignment, a.dst, pkt);
        end
        next = NextFence;
      end
      PktClassWaitMem: begin
        if (a.dst[1:0] != 2'b00) last_fault = fault(FaultBadAlignment, a.dst, pkt);
        next = NextWait;
      end
      // The last dword is addr_hi; the low bits arrived with addr_lo.
      PktClassTimestamp: begin
        if (a.dst[2:0] != 3'b000) last_fault = fault(FaultBadAlignment, {dw_i, a.dst[31:0]}, pkt);
        next = NextTimestamp;
      end
      // The last dword is bytes: alignment, then depth; bytes = 0 calls nothing.
      PktClassIndirect: begin
        if (a.dst[1:0] != 2'b00 || dw_i[1:0] != 2'b00) begin
          last_fault = fault(FaultBadAlignment, a.dst, pkt);
        end else if (nest_full_i) begin
          last_fault = fault(FaultIndirectDepth, pkt_i.hdr_addr, pkt);
        end
        next = (dw_i != '0) ? NextCall : NextHeader;
      end
      PktClassInvalidate, PktClassMap: next = NextInvalidate;
      PktClassUnmap: next = (args.range.count == '0) ? NextInvalidate : NextUnmap;
      // The last dword is bytes: a privileged copy's physical source range is checked before
      // the overlap.
      PktClassCopy: begin
        if (info_i.privileged && rphys_over_i) begin
          last_fault = fault(FaultPhysicalRange, a.src, pkt);
        end
        next = NextCopy;
      end
      PktClassFill, PktClassBlitRect, PktClassFillRect: next = NextCopy;
      default: next = NextHeader;  // NOP, WRITE_DATA, WRITE_PHYSICAL
    endcase
  end

  ///////////////////////
  // Later comparisons //
  ///////////////////////

  // COPY / BLIT_RECT: the source extent [src, src + src_ext) and the destination extent
  // [dst, dst + dst_ext) overlap (66-bit ends: nothing wraps past 2^64). For COPY the extents
  // are the byte ranges (one row). An empty request (width or height 0) overlaps nothing.
  logic [65:0] copy_src_end, copy_dst_end;
  assign copy_src_end   = {2'b00, a.src} + 66'(pkt_i.src_ext);
  assign copy_dst_end   = {2'b00, a.dst} + 66'(pkt_i.dst_ext);
  assign copy_overlap = (info_i.pkt_class inside {PktClassCopy, PktClassBlitRect})
                          && (a.width != '0) && (a.height != '0)
                          && ({2'b00, a.src} < copy_dst_end) && ({2'b00, a.dst} < copy_src_end);

  // WAIT_MEM: (value & mask) func ref, unsigned.
  logic [31:0]    wait_masked, wait_ref;
  wait_mem_func_e wait_func;
  assign wait_masked = pkt_i.wait_val & args.wait_mem.mask;
  assign wait_ref    = args.wait_mem.ref_value;
  assign wait_func   = wait_mem_func_e'(
                           pkt_i.hdr.flags[PktWaitMemFlagFuncBit +: PktWaitMemFlagFuncWidth]);
  always_comb begin
    unique case (wait_func)
      WaitMemFuncAlways: wait_hit = 1'b1;
      WaitMemFuncLt:     wait_hit = wait_masked <  wait_ref;
      WaitMemFuncLe:     wait_hit = wait_masked <= wait_ref;
      WaitMemFuncEq:     wait_hit = wait_masked == wait_ref;
      WaitMemFuncNe:     wait_hit = wait_masked != wait_ref;
      WaitMemFuncGe:     wait_hit = wait_masked >= wait_ref;
      WaitMemFuncGt:     wait_hit = wait_masked >  wait_ref;
      default:           wait_hit = 1'b0;  // NEVER
    endcase
  end

  // Bits 11:0 of GART_TABLE_BASE are ignored (docs/gart.md); the rest of the packet and of its
  // table row is the controller's and the decoder's.
  logic unused;
  assign unused = ^{gart_table_base_i[11:0], a.src_pitch, a.dst_pitch, a.pattern, info_i.known,
                    info_i.min_dwords, info_i.max_dwords, info_i.flags_mask, pkt_i.hdr_off,
                    pkt_i.info};

endmodule

`default_nettype wire
