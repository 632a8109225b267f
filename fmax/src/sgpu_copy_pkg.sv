// Types of the copy/fill/blit engine's request and status channels (docs/copy-engine.md).
`default_nettype none

package sgpu_copy_pkg;

  /// What a request does with each destination row.
  typedef enum logic [0:0] {
    CopyOpCopy = 1'b0,  ///< copy `width` bytes from the source row
    CopyOpFill = 1'b1   ///< write the 32-bit pattern; byte i of a row gets pattern byte i mod 4
  } copy_op_e;

  /// One request: `height` rows of `width` bytes. Row r reads src + r * src_pitch and writes
  /// dst + r * dst_pitch. A linear copy or fill is height = 1 (pitches unused). Any alignment;
  /// width = 0 or height = 0 completes with CopyOk and touches nothing.
  typedef struct packed {
    copy_op_e        op;
    sgpu_pkg::addr_t src;
    sgpu_pkg::addr_t dst;
    logic [31:0]     width;      ///< bytes per row
    logic [31:0]     height;     ///< rows
    logic [31:0]     src_pitch;  ///< bytes from one source row to the next
    logic [31:0]     dst_pitch;  ///< bytes from one destination row to the next
    logic [31:0]     pattern;    ///< fill value, little-endian
  } copy_req_t;

  /// How a request ended. Values are stable (they will appear in fault records).
  typedef enum logic [2:0] {
    CopyOk         = 3'd0,
    CopyReadError  = 3'd1,  ///< a source read returned SLVERR/DECERR; addr: first byte not copied
    CopyWriteError = 3'd2,  ///< a destination write returned SLVERR/DECERR; addr: the burst's
                            ///< GPU address
    CopyXlateFault = 3'd3,  ///< translation refused a source page; addr: first byte not copied
    CopyAborted    = 3'd4,  ///< abort_i before the request completed
    CopyWrXlateFault = 3'd5 ///< translation refused a destination page; addr: GPU address of
                            ///< the row's first byte in that page (nothing was written to it)
  } copy_err_e;

  typedef struct packed {
    copy_err_e       err;
    sgpu_pkg::addr_t addr;
  } copy_status_t;

endpackage

`default_nettype wire
