// Types of the DMA fetch engine's request, status and translation channels.
//
// Contract of the fetch engine (sgpu_dma_rd; docs/dma.md describes the design):
// - Requests are accepted in order on a valid/ready channel.
// - Data for accepted requests is delivered in request order, packed: byte i of a request is
//   lane (i mod bus bytes) of its (i / bus bytes)-th beat, every beat but the last has all
//   byte enables set, the last beat has the low (len mod bus bytes, or all) enables set and
//   `last` high. No byte outside [addr, addr + len) ever reaches the consumer.
// - Exactly one status per request, in request order, produced after the consumer has taken
//   the request's last data beat. On an error the data stream of that request stops early
//   (without `last`) and the status carries the error; the consumer discards the partial data.
`default_nettype none

package sgpu_dma_pkg;

  /// Default data buffer of a fetch engine, in beats (sgpu_dma_rd's BufferBeats, the top's
  /// ReadBufferBeats). A read is issued only when its beats fit, so the buffer bounds the beats in
  /// flight and must cover read latency + two bursts: 4096 keeps a 64-bit engine at >= 0.98 of
  /// the bus up to a 2048-cycle read latency (docs/dma.md), 8 BRAM36 per engine.
  localparam int unsigned DefaultBufferBeats = 4096;

  localparam int unsigned LenWidth = 32;
  localparam int unsigned TagWidth = 4;

  typedef logic [LenWidth-1:0] len_t;
  typedef logic [TagWidth-1:0] tag_t;

  /// Why a request ended: the fetch error codes of spec/abi.toml (a failed ring or buffer fetch
  /// puts its code in FAULT_DETAIL).
  typedef sgpu_abi_pkg::fetch_err_e dma_err_e;
  localparam dma_err_e DmaOk         = sgpu_abi_pkg::FetchOk;
  localparam dma_err_e DmaBusSlvErr  = sgpu_abi_pkg::FetchBusSlvErr;   ///< a read returned SLVERR
  localparam dma_err_e DmaBusDecErr  = sgpu_abi_pkg::FetchBusDecErr;   ///< a read returned DECERR
  /// The translation port refused a page; no read was issued for it.
  localparam dma_err_e DmaXlateFault = sgpu_abi_pkg::FetchXlateFault;
  /// Abort or engine reset before the request completed.
  localparam dma_err_e DmaAborted    = sgpu_abi_pkg::FetchAborted;

  typedef struct packed {
    sgpu_pkg::addr_t addr;  ///< GPU address of the first byte (any alignment)
    len_t            len;   ///< length in bytes, >= 1
    tag_t            tag;   ///< returned with the status
  } dma_req_t;

  typedef struct packed {
    tag_t     tag;
    dma_err_e err;
  } dma_status_t;

  /// Translation request: the page a read is about to touch.
  typedef struct packed {
    sgpu_pkg::pfn_t vpn;    ///< GPU page number
    logic           write;  ///< the access is a write (the fetch engine only reads)
  } xlate_req_t;

  /// Translation response for the oldest outstanding request.
  typedef struct packed {
    sgpu_pkg::pfn_t ppn;    ///< bus page number to use
    logic           fault;  ///< no access to this page may be issued
  } xlate_rsp_t;

  /// Inside the fetch engine: what a burst descriptor from the issuer to the realigner says.
  typedef enum logic {
    DescRead = 1'b0,  ///< a burst was issued; its beats follow in the data buffer
    DescEnd  = 1'b1   ///< the request ends here without (more) reads
  } desc_kind_e;

  /// One row for the burst write master (sgpu_dma_wr): its first byte and its length.
  typedef struct packed {
    sgpu_pkg::addr_t addr;
    logic [31:0]     len;  ///< >= 1
  } wr_row_t;

endpackage

`default_nettype wire
