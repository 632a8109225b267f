// Simulation top for the command processor's decoder test (tb/cp; Verilator). Combinational:
// it has no clock.
//
// - The header check of sgpu_cp_decode on hdr_i, for the C++ sweep against the generated packet
//   table (abi::kPackets, through the reference model's check_header).
// - The payload routing of one packet: eight decoder instances give the slot of payload dwords
//   1..8 of pkt_i; the dwords of payload_i are captured through them as the controller does
//   (sgpu_cp_pkg::capture), and route_ok_o says whether every field of the packet's generated
//   payload struct (sgpu_abi_pkg::pld_<packet>_t) landed in the field of the same meaning in
//   its class's view of the argument register.
`default_nettype none

module sgpu_cp_decode_tb_top
  import sgpu_abi_pkg::*;
  import sgpu_cp_pkg::*;
(
  // Header check.
  input  wire logic [31:0]  hdr_i,
  input  wire logic         privileged_i,
  input  wire logic [29:0]  buf_left_i,
  output      logic [7:0]   hdr_fault_o,
  /// The header's class and privilege as the controller sees them at the header (hdr_class,
  /// hdr_privileged: WRITE_DATA's two-dword fast path keys on them).
  output      logic [3:0]   hdr_class_o,
  output      logic         hdr_privileged_o,

  // Payload routing of the packet with header pkt_i; payload dword k+1 is payload_i[32k +: 32].
  input  wire logic [31:0]  pkt_i,
  input  wire logic [255:0] payload_i,
  output      logic         known_o,
  output      logic         privileged_o,
  output      logic [3:0]   pkt_class_o,
  /// Per payload dword k+1, bit k: it is written to memory (a data dword); it is dropped (not
  /// kept in the argument register); it is the packet's last.
  output      logic [7:0]   data_o,
  output      logic [7:0]   dropped_o,
  output      logic [7:0]   last_o,
  output      logic         route_ok_o
);

  cp_dec_t hdr_dec;

  sgpu_cp_decode u_hdr (
    .hdr_i       (pkt_header_t'(hdr_i)),
    .privileged_i(privileged_i),
    .buf_left_i  (buf_left_i),
    .pkt_i       ('0),
    .pkt_info_i  ('0),
    .idx_i       ('0),
    .dec_o       (hdr_dec)
  );
  assign hdr_fault_o      = hdr_dec.hdr_fault;
  assign hdr_class_o      = hdr_dec.hdr_class;
  assign hdr_privileged_o = hdr_dec.hdr_privileged;

  pkt_header_t pkt_hdr;
  assign pkt_hdr = pkt_header_t'(pkt_i);

  cp_dec_t [7:0] dec;
  for (genvar k = 0; k < 8; k++) begin : g_dword
    sgpu_cp_decode u_decode (
      .hdr_i       ('0),
      .privileged_i(1'b0),
      .buf_left_i  ('0),
      .pkt_i       (pkt_hdr),
      .pkt_info_i  (pkt_info(pkt_hdr.opcode)),
      .idx_i       (16'(k)),
      .dec_o       (dec[k])
    );
    assign data_o[k]    = (dec[k].slot == SlotData);
    assign dropped_o[k] = (dec[k].slot == SlotNone);
    assign last_o[k]    = dec[k].last;
  end

  pkt_info_t info;
  assign info         = dec[0].info;
  assign known_o      = info.known;
  assign privileged_o = info.privileged;
  assign pkt_class_o  = info.pkt_class;

  // The packet's payload dwords (at most eight) captured one by one, as the controller does
  // (after a header: one row without pitches).
  cp_args_u args;
  always_comb begin
    args             = '0;
    args.copy.height = 32'd1;
    for (int k = 0; k < 8; k++) begin
      if (32'(k) + 2 <= 32'(pkt_i[31:16])) begin  // header bits 31:16: dwords
        args.copy = capture(args.copy, dec[k].slot, payload_i[32*k +: 32]);
      end
    end
  end

  // The payload as each packet's generated struct.
  pld_blit_rect_t p_blit_rect;
  pld_copy_t p_copy;
  pld_fence_t p_fence;
  pld_fill_rect_t p_fill_rect;
  pld_fill_t p_fill;
  pld_indirect_t p_indirect;
  pld_map_t p_map;
  pld_timestamp_t p_timestamp;
  pld_tlb_invalidate_t p_tlb_invalidate;
  pld_unmap_t p_unmap;
  pld_wait_mem_t p_wait_mem;
  pld_write_data_t p_write_data;
  assign p_blit_rect = pld_blit_rect_t'(payload_i[$bits(pld_blit_rect_t)-1:0]);
  assign p_copy = pld_copy_t'(payload_i[$bits(pld_copy_t)-1:0]);
  assign p_fence = pld_fence_t'(payload_i[$bits(pld_fence_t)-1:0]);
  assign p_fill_rect = pld_fill_rect_t'(payload_i[$bits(pld_fill_rect_t)-1:0]);
  assign p_fill = pld_fill_t'(payload_i[$bits(pld_fill_t)-1:0]);
  assign p_indirect = pld_indirect_t'(payload_i[$bits(pld_indirect_t)-1:0]);
  assign p_map = pld_map_t'(payload_i[$bits(pld_map_t)-1:0]);
  assign p_timestamp = pld_timestamp_t'(payload_i[$bits(pld_timestamp_t)-1:0]);
  assign p_tlb_invalidate = pld_tlb_invalidate_t'(payload_i[$bits(pld_tlb_invalidate_t)-1:0]);
  assign p_unmap = pld_unmap_t'(payload_i[$bits(pld_unmap_t)-1:0]);
  assign p_wait_mem = pld_wait_mem_t'(payload_i[$bits(pld_wait_mem_t)-1:0]);
  assign p_write_data = pld_write_data_t'(payload_i[$bits(pld_write_data_t)-1:0]);

  // Every field of the generated payload struct, by name, against its class's view.
  always_comb begin
    route_ok_o = 1'b1;
    unique case (info.pkt_class)
      PktClassWrite: begin
        route_ok_o = args.target.addr == p_write_data.addr;
      end
      PktClassFence: begin
        route_ok_o = args.target.addr == p_fence.addr
                     && args.target.value == p_fence.value;
      end
      PktClassCopy: begin
        route_ok_o = args.copy.src == p_copy.src
                     && args.copy.dst == p_copy.dst
                     && args.copy.width == p_copy.bytes
                     && args.copy.height == 32'd1;
      end
      PktClassFill: begin
        route_ok_o = args.copy.dst == p_fill.dst
                     && args.copy.width == p_fill.bytes
                     && args.copy.pattern == p_fill.pattern
                     && args.copy.height == 32'd1;
      end
      PktClassBlitRect: begin
        route_ok_o = args.copy.src == p_blit_rect.src
                     && args.copy.dst == p_blit_rect.dst
                     && args.copy.width == p_blit_rect.width
                     && args.copy.height == p_blit_rect.height
                     && args.copy.src_pitch == p_blit_rect.src_pitch
                     && args.copy.dst_pitch == p_blit_rect.dst_pitch;
      end
      PktClassFillRect: begin
        route_ok_o = args.copy.dst == p_fill_rect.dst
                     && args.copy.width == p_fill_rect.width
                     && args.copy.height == p_fill_rect.height
                     && args.copy.dst_pitch == p_fill_rect.dst_pitch
                     && args.copy.pattern == p_fill_rect.pattern;
      end
      PktClassInvalidate: begin
        route_ok_o = args.range.first_page == p_tlb_invalidate.first_page
                     && args.range.count == p_tlb_invalidate.count;
      end
      PktClassMap: begin
        route_ok_o = args.range.first_page == p_map.first_page
                     && args.range.count == p_map.count
                     && args.range.pte_flags == p_map.pte_flags;
      end
      PktClassUnmap: begin
        route_ok_o = args.range.first_page == p_unmap.first_page
                     && args.range.count == p_unmap.count
                     && {args.range.dummy_hi, args.range.dummy_lo} == p_unmap.dummy;
      end
      PktClassWaitMem: begin
        route_ok_o = args.wait_mem.addr == p_wait_mem.addr
                     && args.wait_mem.ref_value == p_wait_mem.ref_value
                     && args.wait_mem.mask == p_wait_mem.mask
                     && args.wait_mem.interval == p_wait_mem.interval;
      end
      PktClassTimestamp: route_ok_o = args.target.addr == p_timestamp.addr;
      PktClassIndirect: begin
        route_ok_o = args.target.addr == p_indirect.addr && args.target.bytes == p_indirect.bytes;
      end
      default:           route_ok_o = 1'b1;  // NOP: nothing is kept
    endcase
  end

  // The rest of the decoders' answers is checked through the outputs above.
  logic unused;
  assign unused = ^{hdr_dec, info};

endmodule

`default_nettype wire
