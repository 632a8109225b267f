// Types and constants of the GART (aperture translation): PTE format, fault reasons, the
// invalidation request and the fault record. docs/gart.md describes the unit.
`default_nettype none

package sgpu_gart_pkg;

  ////////////////
  // Page table //
  ////////////////

  /// A PTE is 64 bits, little-endian, in host memory at GART_TABLE_BASE + 8 x page index:
  ///   [0] valid, [1] writable, [2] snoop (cache-coherent hint), [11:3] reserved (write 0,
  ///   ignored), [63:12] bus address of the page (its low 12 bits are the flags above).
  localparam int unsigned PteBytes       = 8;
  localparam int unsigned PteValidBit    = 0;
  localparam int unsigned PteWritableBit = 1;
  localparam int unsigned PteSnoopBit    = 2;

  /// A walk reads one aligned line of PTEs (64 bytes, one burst) and caches every valid one.
  localparam int unsigned LinePtes     = 8;
  localparam int unsigned LineShift    = 3;  // log2(LinePtes)
  localparam int unsigned LineBytes    = LinePtes * PteBytes;

  typedef struct packed {
    sgpu_pkg::pfn_t ppn;       ///< bus page number
    logic [8:0]     reserved;
    logic           snoop;
    logic           writable;
    logic           valid;
  } pte_t;

  /////////////
  // Clients //
  /////////////

  /// Clients of the GART's translation port, in front of it through sgpu_gart_arb. The number
  /// is the arbiter port and appears in GART_FAULT_STATUS.client.
  localparam int unsigned ClientWidth  = 4;
  localparam int unsigned ClientFetch  = 0;  ///< DMA fetch engine (ring entries, DMA buffers)
  localparam int unsigned ClientCpWr   = 1;  ///< CP write path (WRITE_DATA, FENCE, write-back)
  localparam int unsigned ClientCopyRd = 2;  ///< copy engine source reads
  localparam int unsigned ClientCopyWr = 3;  ///< copy engine destination writes

  /// Who asks, passed with each translation request.
  typedef struct packed {
    logic                   priv;    ///< system-physical addresses are allowed
    /// A read ahead for work that may never start: a fault is answered but not recorded (no
    /// GART_FAULT_* change, no gart_fault event); the client asks again if the work starts.
    logic                   quiet;
    logic [ClientWidth-1:0] client;  ///< recorded in the fault record
  } xlate_src_t;

  ////////////
  // Faults //
  ////////////

  /// Fault reasons: the GART_FAULT_STATUS.reason encoding generated from spec/registers.rdl.
  typedef sgpu_regs_pkg::sgpu_regs__gart_fault_e_e gart_fault_e;
  localparam gart_fault_e GartFaultNone         =
      sgpu_regs_pkg::sgpu_regs__gart_fault_e__NONE;
  localparam gart_fault_e GartFaultInvalidPte   =
      sgpu_regs_pkg::sgpu_regs__gart_fault_e__INVALID_PTE;
  localparam gart_fault_e GartFaultWriteProtect =
      sgpu_regs_pkg::sgpu_regs__gart_fault_e__WRITE_PROTECT;
  localparam gart_fault_e GartFaultOutOfRange   =
      sgpu_regs_pkg::sgpu_regs__gart_fault_e__OUT_OF_RANGE;
  localparam gart_fault_e GartFaultPrivilege    =
      sgpu_regs_pkg::sgpu_regs__gart_fault_e__PRIVILEGE;
  localparam gart_fault_e GartFaultWalkError    =
      sgpu_regs_pkg::sgpu_regs__gart_fault_e__WALK_ERROR;

  /// The fault record (GART_FAULT_*): the first refused translation since the last clear.
  typedef struct packed {
    logic                   valid;
    logic                   more;        ///< later faults happened (sticky)
    logic                   write;
    logic                   privileged;
    gart_fault_e            reason;
    logic [ClientWidth-1:0] client;      ///< Client* above
    sgpu_pkg::addr_t        addr;        ///< GPU address of the page
    logic [63:0]            fence;       ///< of the submission being executed
    logic [31:0]            context_id;
  } fault_rec_t;

  //////////////////
  // Invalidation //
  //////////////////

  /// Invalidation request: every TLB entry (all), or the pages [first, first + count) of the
  /// aperture (page index = (GPU address - aperture base) / 4 KiB).
  typedef struct packed {
    logic        all;
    logic [31:0] first;
    logic [31:0] count;
  } inv_req_t;

  /// The GART's configuration registers (GART_CTRL, GART_TABLE_BASE, GART_TABLE_SIZE).
  typedef struct packed {
    logic            enable;
    sgpu_pkg::addr_t table_base;  ///< bus address; bits 11:0 are ignored
    logic [31:0]     table_size;  ///< entries
  } gart_cfg_t;

  /// The GART's state registers (GART_STATUS, GART_FAULT_*, GART_PERF_*).
  typedef struct packed {
    logic        inv_busy;   ///< an invalidation is pending (either path) or sweeping
    logic        walk_busy;
    fault_rec_t  fault;
    logic [31:0] lookups;
    logic [31:0] misses;
    logic [31:0] walks;
  } gart_state_t;

  /// The submission being executed, for the fault record.
  typedef struct packed {
    logic [63:0] fence;
    logic [31:0] context_id;
  } exec_info_t;

endpackage

`default_nettype wire
