// Flat translation port of a Verilated testbench top (xlate_req_t / xlate_rsp_t of
// sgpu_dma_pkg), named as tb/common/translator.hpp's TranslatorAgent binds them: the DUT's
// requests go to the C++ translator and its answers come back.
`ifndef SGPU_TB_XLATE_PORTS_SVH
`define SGPU_TB_XLATE_PORTS_SVH

`define SGPU_TB_XLATE_PORTS                                                                 \
  output      logic        xlate_req_valid_o,                                               \
  input  wire logic        xlate_req_ready_i,                                               \
  output      logic [51:0] xlate_req_vpn_o,                                                 \
  input  wire logic        xlate_rsp_valid_i,                                               \
  output      logic        xlate_rsp_ready_o,                                               \
  input  wire logic [51:0] xlate_rsp_ppn_i,                                                 \
  input  wire logic        xlate_rsp_fault_i

`endif  // SGPU_TB_XLATE_PORTS_SVH
