// Packet decoder of the command processor. Fully combinational: it has no clock.
//
// Two questions, both answered from the generated packet table (sgpu_abi_pkg::pkt_info, from
// spec/abi.toml) and the generated payload positions (Pld<Packet><Field>):
//
// - Header check: is the dword at the head of the stream an acceptable packet header here? The
//   checks and their order are those of the host's Render (decode_header) and of the reference
//   model (check_header): unknown opcode, length outside [min, max], undefined flag bits, a
//   privileged packet in an unprivileged entry, a packet longer than the rest of its buffer.
// - Payload routing: where does the current packet's next payload dword go? Into a slot of the
//   argument register (sgpu_cp_pkg::cp_slot_e), to memory as a data dword, or nowhere.
//
// Packets of one class share their payload layout (tools/gen_abi.py refuses a spec where they
// do not), so the routing table has one row per class and names each class's payload fields
// by the positions of one packet of that class. A new packet of an existing class needs no
// change here. The `unique case` on a few low index bits is exact because the header check
// already bounded the packet length.
`include "sgpu_assert.svh"

`default_nettype none

module sgpu_cp_decode
  import sgpu_abi_pkg::*;
  import sgpu_cp_pkg::*;
(
  // Header check.
  /// The dword at the head of the stream, seen as a packet header.
  input  wire pkt_header_t hdr_i,
  /// The entry being executed is privileged (privileged or paging flag).
  input  wire logic        privileged_i,
  /// Dwords of the buffer not yet decoded, this header included.
  input  wire logic [29:0] buf_left_i,

  // Payload routing.
  /// Header of the packet whose payload is being read (accepted by the check above), and its
  /// row of the table (pkt_info(pkt_i.opcode), registered with it by the controller).
  input  wire pkt_header_t pkt_i,
  input  wire pkt_info_t   pkt_info_i,
  /// Payload dwords of it already consumed (0 = the dword after the header is next).
  input  wire logic [15:0] idx_i,

  /// The header's fault (FaultNone, or the first check it fails) and class; the packet's row of
  /// the table; where its next payload dword goes; whether that dword is its last.
  output      cp_dec_t     dec_o
);

  fault_e    hdr_fault;
  pkt_info_t hdr_info, info;
  cp_slot_e  slot;
  logic      last;
  assign dec_o = '{hdr_fault: hdr_fault, hdr_class: hdr_info.pkt_class,
                   hdr_privileged: hdr_info.privileged, info: info, slot: slot, last: last};

  //////////////////
  // Header check //
  //////////////////

  assign hdr_info = pkt_info(hdr_i.opcode);

  // The table part and the fault's order are shared with the CP's decode stage (sgpu_cp_pkg).
  cp_hdr_chk_t hdr_chk;
  assign hdr_chk   = hdr_table_check(hdr_i);
  assign hdr_fault = hdr_fault_of(hdr_chk.known, hdr_chk.length_ok, hdr_chk.flags_ok,
                                  hdr_chk.privileged, privileged_i, 30'(hdr_i.dwords) > buf_left_i);

  /////////////////////
  // Payload routing //
  /////////////////////

  assign info = pkt_info_i;
  assign last = (idx_i == pkt_i.dwords - 16'd2);

  // Payload field Pld<Packet><Field> (its dword index, header = 0) is next when
  // idx_i == Pld<Packet><Field> - 1. Rows compare as few index bits as their layout needs.
  logic [2:0] idx3;
  logic [1:0] idx2;
  assign idx3 = idx_i[2:0];
  assign idx2 = idx_i[1:0];

  always_comb begin
    slot = SlotNone;
    unique case (info.pkt_class)
      PktClassNop: slot = SlotNone;

      /////////////////////////////////////////////////
      // WRITE_DATA, WRITE_PHYSICAL: addr, data...   //
      /////////////////////////////////////////////////
      PktClassWrite: begin
        if (idx_i == 16'(PldWriteDataAddrLo - 1))      slot = SlotDstLo;
        else if (idx_i == 16'(PldWriteDataAddrHi - 1)) slot = SlotDstHi;
        else                                           slot = SlotData;  // PldWriteDataData..
      end

      ////////////////////////
      // FENCE: addr, value //
      ////////////////////////
      PktClassFence: begin
        unique case (idx2)
          2'(PldFenceAddrLo - 1):  slot = SlotDstLo;
          2'(PldFenceAddrHi - 1):  slot = SlotDstHi;
          2'(PldFenceValueLo - 1): slot = SlotSrcLo;
          default:                 slot = SlotSrcHi;  // PldFenceValueHi
        endcase
      end

      ///////////////////////////////////////////////////////////////////////
      // Copy engine (copy view): COPY/READ_PHYSICAL, FILL, BLIT_RECT,     //
      // FILL_RECT                                                         //
      ///////////////////////////////////////////////////////////////////////
      PktClassCopy: begin
        unique case (idx3)
          3'(PldCopySrcLo - 1): slot = SlotSrcLo;
          3'(PldCopySrcHi - 1): slot = SlotSrcHi;
          3'(PldCopyDstLo - 1): slot = SlotDstLo;
          3'(PldCopyDstHi - 1): slot = SlotDstHi;
          default:              slot = SlotWidth;  // PldCopyBytes
        endcase
      end
      PktClassFill: begin
        unique case (idx2)
          2'(PldFillDstLo - 1): slot = SlotDstLo;
          2'(PldFillDstHi - 1): slot = SlotDstHi;
          2'(PldFillBytes - 1): slot = SlotWidth;
          default:              slot = SlotPattern;  // PldFillPattern
        endcase
      end
      PktClassBlitRect: begin
        unique case (idx3)
          3'(PldBlitRectSrcLo - 1):    slot = SlotSrcLo;
          3'(PldBlitRectSrcHi - 1):    slot = SlotSrcHi;
          3'(PldBlitRectDstLo - 1):    slot = SlotDstLo;
          3'(PldBlitRectDstHi - 1):    slot = SlotDstHi;
          3'(PldBlitRectWidth - 1):    slot = SlotWidth;
          3'(PldBlitRectHeight - 1):   slot = SlotHeight;
          3'(PldBlitRectSrcPitch - 1): slot = SlotSrcPitch;
          default:                     slot = SlotDstPitch;  // PldBlitRectDstPitch
        endcase
      end
      PktClassFillRect: begin
        unique case (idx3)
          3'(PldFillRectDstLo - 1):    slot = SlotDstLo;
          3'(PldFillRectDstHi - 1):    slot = SlotDstHi;
          3'(PldFillRectWidth - 1):    slot = SlotWidth;
          3'(PldFillRectHeight - 1):   slot = SlotHeight;
          3'(PldFillRectDstPitch - 1): slot = SlotDstPitch;
          default:                     slot = SlotPattern;  // PldFillRectPattern
        endcase
      end

      /////////////////////////////////////////////////////
      // WAIT_MEM (wait view): addr, ref, mask, interval //
      /////////////////////////////////////////////////////
      PktClassWaitMem: begin
        unique case (idx3)
          3'(PldWaitMemAddrLo - 1): slot = SlotDstLo;
          3'(PldWaitMemAddrHi - 1): slot = SlotDstHi;
          3'(PldWaitMemRef - 1):    slot = SlotSrcLo;
          3'(PldWaitMemMask - 1):   slot = SlotSrcHi;
          default:                  slot = SlotWidth;  // PldWaitMemInterval
        endcase
      end

      ///////////////////////////////////////////////
      // TIMESTAMP: addr; INDIRECT: addr, bytes    //
      ///////////////////////////////////////////////
      PktClassTimestamp: begin
        slot = idx_i[0] ? SlotDstHi : SlotDstLo;  // PldTimestampAddrLo, PldTimestampAddrHi
      end
      PktClassIndirect: begin
        if (idx_i == 16'(PldIndirectAddrLo - 1))      slot = SlotDstLo;
        else if (idx_i == 16'(PldIndirectAddrHi - 1)) slot = SlotDstHi;
        else                                          slot = SlotWidth;  // PldIndirectBytes
      end

      /////////////////////////////////////////////////////////////////
      // Page ranges (range view): TLB_INVALIDATE, MAP, UNMAP        //
      /////////////////////////////////////////////////////////////////
      PktClassInvalidate: begin
        // PldTlbInvalidateFirstPage, PldTlbInvalidateCount
        slot = idx_i[0] ? SlotSrcHi : SlotSrcLo;
      end
      PktClassMap: begin
        if (idx_i == 16'(PldMapFirstPage - 1))     slot = SlotSrcLo;
        else if (idx_i == 16'(PldMapCount - 1))    slot = SlotSrcHi;
        else if (idx_i == 16'(PldMapPteFlags - 1)) slot = SlotPattern;
        else                                       slot = SlotData;  // PldMapBusAddr..
      end
      PktClassUnmap: begin
        unique case (idx2)
          2'(PldUnmapFirstPage - 1): slot = SlotSrcLo;
          2'(PldUnmapCount - 1):     slot = SlotSrcHi;
          2'(PldUnmapDummyLo - 1):   slot = SlotSrcPitch;
          default:                   slot = SlotDstPitch;  // PldUnmapDummyHi
        endcase
      end

      default: slot = SlotNone;
    endcase
  end

  // The class is the controller's business once the header passed; flags are checked above.
  logic unused;
  assign unused = ^{hdr_info, hdr_chk.pkt_class, pkt_i.flags, pkt_i.opcode};

  ////////////////////////////
  // Elaboration-time checks //
  ////////////////////////////

  // The rows above compare only as many index bits as these layouts need, and take the field a
  // `default` names to be the packet's last fixed dword.
  `SGPU_ASSERT_STATIC(g_bad_payload_order,
      PldFenceValueHi == PldFenceDwords && PldCopyBytes == PldCopyDwords
      && PldFillPattern == PldFillDwords && PldBlitRectDstPitch == PldBlitRectDwords
      && PldFillRectPattern == PldFillRectDwords && PldWaitMemInterval == PldWaitMemDwords
      && PldUnmapDummyHi == PldUnmapDwords && PldTimestampAddrHi == PldTimestampDwords
      && PldTlbInvalidateCount == PldTlbInvalidateDwords && PldIndirectBytes == PldIndirectDwords
      && PldBlitRectDwords <= 8 && PldFillRectDwords <= 8 && PldCopyDwords <= 8
      && PldWaitMemDwords <= 8 && PldFenceDwords <= 4 && PldFillDwords <= 4 && PldUnmapDwords <= 4
      && PldTimestampAddrLo == 1 && PldTlbInvalidateFirstPage == 1,
      "a routing row's last field or index width does not match sgpu_abi_pkg")

endmodule

`default_nettype wire
