// AXI4 request/response structs, in the shape of PULP's axi/typedef.svh: per direction one
// request struct (everything the manager drives, valids and readies included) and one response
// struct (everything the subordinate drives). Read and write are separate because every master
// in this design only reads or only writes, so a port is exactly the channels it uses.
//
//   `SGPU_AXI_TYPEDEF_RD(axi_rd, logic [IdWidth-1:0], logic [DataWidth-1:0])
//       axi_rd_ar_t, axi_rd_r_t, axi_rd_req_t {ar_valid, ar, r_ready},
//       axi_rd_rsp_t {ar_ready, r_valid, r}
//   `SGPU_AXI_TYPEDEF_WR(axi_wr, logic [IdWidth-1:0], logic [DataWidth-1:0],
//                        logic [DataWidth/8-1:0])
//       axi_wr_aw_t, axi_wr_w_t, axi_wr_b_t, axi_wr_req_t {aw_valid, aw, w_valid, w, b_ready},
//       axi_wr_rsp_t {aw_ready, w_ready, b_valid, b}
//
// Modules take the request and response types as type parameters (with sgpu_axi_pkg's
// default-width types as defaults) next to DataWidth and IdWidth, and check that they match.
// Addresses are always sgpu_pkg::addr_t (64 bits). Only sgpu_top has flat AXI ports.
`ifndef SGPU_AXI_TYPEDEF_SVH
`define SGPU_AXI_TYPEDEF_SVH

`define SGPU_AXI_TYPEDEF_RD(name, id_t, data_t)                                             \
  typedef struct packed {                                                                   \
    id_t             id;                                                                    \
    sgpu_pkg::addr_t addr;                                                                  \
    logic [7:0]      len;                                                                   \
    logic [2:0]      size;                                                                  \
    logic [1:0]      burst;                                                                 \
  } name``_ar_t;                                                                            \
  typedef struct packed {                                                                   \
    id_t        id;                                                                         \
    data_t      data;                                                                       \
    logic [1:0] resp;                                                                       \
    logic       last;                                                                       \
  } name``_r_t;                                                                             \
  typedef struct packed {                                                                   \
    logic       ar_valid;                                                                   \
    name``_ar_t ar;                                                                         \
    logic       r_ready;                                                                    \
  } name``_req_t;                                                                           \
  typedef struct packed {                                                                   \
    logic      ar_ready;                                                                    \
    logic      r_valid;                                                                     \
    name``_r_t r;                                                                           \
  } name``_rsp_t;

`define SGPU_AXI_TYPEDEF_WR(name, id_t, data_t, strb_t)                                     \
  typedef struct packed {                                                                   \
    id_t             id;                                                                    \
    sgpu_pkg::addr_t addr;                                                                  \
    logic [7:0]      len;                                                                   \
    logic [2:0]      size;                                                                  \
    logic [1:0]      burst;                                                                 \
  } name``_aw_t;                                                                            \
  typedef struct packed {                                                                   \
    data_t data;                                                                            \
    strb_t strb;                                                                            \
    logic  last;                                                                            \
  } name``_w_t;                                                                             \
  typedef struct packed {                                                                   \
    id_t        id;                                                                         \
    logic [1:0] resp;                                                                       \
  } name``_b_t;                                                                             \
  typedef struct packed {                                                                   \
    logic       aw_valid;                                                                   \
    name``_aw_t aw;                                                                         \
    logic       w_valid;                                                                    \
    name``_w_t  w;                                                                          \
    logic       b_ready;                                                                    \
  } name``_req_t;                                                                           \
  typedef struct packed {                                                                   \
    logic      aw_ready;                                                                    \
    logic      w_ready;                                                                     \
    logic      b_valid;                                                                     \
    name``_b_t b;                                                                           \
  } name``_rsp_t;

`endif  // SGPU_AXI_TYPEDEF_SVH
