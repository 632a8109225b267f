// Types of the command processor (rtl/cp): its configuration, commands, state, events and fault
// record as sgpu_top wires them to the registers; the argument register with one named view per
// packet class; and the slots the decoder routes payload dwords into. docs/architecture.md
// ("Command processor") describes the unit, rtl/README.md the conventions.
`default_nettype none

package sgpu_cp_pkg;

  ///////////////////
  // Register side //
  ///////////////////

  /// Configuration registers.
  typedef struct packed {
    /// CTRL.enable: fetch new ring entries while high; an entry already started always finishes.
    logic            enable;
    sgpu_pkg::addr_t ring_base;
    /// RING_SIZE, already clamped to the largest ring the hardware supports.
    logic [4:0]      ring_log2;
    logic [31:0]     ring_tail;
    sgpu_pkg::addr_t wb_addr;
    /// CP_WATCHDOG: cycles without progress before a packet faults with WATCHDOG; 0 = off.
    logic [31:0]     watchdog;
    /// PREEMPT_FENCE and PREEMPT_ADDR: the preemption record.
    logic [63:0]     preempt_fence;
    sgpu_pkg::addr_t preempt_addr;
    /// GART_TABLE_BASE (bus address, bits 11:0 ignored) and GART_TABLE_SIZE (entries): where
    /// MAP and UNMAP write their PTEs, and their bounds.
    sgpu_pkg::addr_t gart_table_base;
    logic [31:0]     gart_table_size;
  } cp_cfg_t;

  /// One-cycle commands (register pulses).
  typedef struct packed {
    logic engine_reset;    ///< RESET.engine
    logic preempt_req;     ///< PREEMPT.request
    logic preempt_resume;  ///< PREEMPT.resume
  } cp_cmd_t;

  /// State registers (STATUS, RING_HEAD, FENCE_DONE, PREEMPT_STATUS, PREEMPT_OFFSET).
  typedef struct packed {
    logic [31:0] ring_head;
    logic [63:0] fence_done;
    logic        idle;
    logic        faulted;
    logic        resetting;
    logic        preempt_pending;
    logic        preempted;
    logic        preempt_in_entry;
    logic [31:0] preempt_offset;
  } cp_state_t;

  /// One-cycle event pulses for INT_STATUS.
  typedef struct packed {
    logic dma_completed;
    logic fault;
    logic preempted;
  } cp_evt_t;

  /// The fault record (FAULT_*), as sgpu_gart_pkg::fault_rec_t is the GART's: the fault that
  /// stopped the engine, kept until an engine reset.
  typedef struct packed {
    sgpu_abi_pkg::fault_e reason;
    logic [23:0]          ring_index;  ///< ring index of the entry being executed
    sgpu_pkg::addr_t      addr;        ///< GPU address the fault names (per reason: docs)
    logic [63:0]          fence;       ///< fence of the entry (0 while the entry is read)
    logic [31:0]          detail;      ///< the packet header, the entry flags or a fetch error
  } cp_fault_rec_t;

  ///////////////////////
  // Argument register //
  ///////////////////////

  // A packet's payload is captured, dword by dword as it arrives, into one 288-bit argument
  // register. Its base layout is the copy engine request (the widest consumer, which then reads
  // it without a multiplexer); the other classes see the same bits through their own view.
  // Views must stay exactly as wide as copy_args_t (the union requires it).

  /// COPY, READ_PHYSICAL, FILL, BLIT_RECT, FILL_RECT: the copy engine request.
  typedef struct packed {
    sgpu_pkg::addr_t dst;        ///< destination of row 0
    sgpu_pkg::addr_t src;        ///< source of row 0 (COPY, BLIT_RECT)
    logic [31:0]     width;      ///< bytes per row (COPY/FILL: bytes)
    logic [31:0]     height;     ///< rows (1 unless a 2-D packet says otherwise)
    logic [31:0]     src_pitch;  ///< 0 unless BLIT_RECT says otherwise
    logic [31:0]     dst_pitch;  ///< 0 unless a 2-D packet says otherwise
    logic [31:0]     pattern;    ///< FILL, FILL_RECT
  } copy_args_t;

  /// WRITE_DATA, WRITE_PHYSICAL, FENCE, TIMESTAMP, INDIRECT: one address and one 64-bit value.
  typedef struct packed {
    sgpu_pkg::addr_t addr;    ///< WRITE: of the next data dword (counts up); INDIRECT: callee
    logic [63:0]     value;   ///< FENCE: the fence value; TIMESTAMP: the counter sampled
    logic [31:0]     bytes;   ///< INDIRECT: the called buffer's bytes (the copy view's width)
    logic [127:0]    unused;
  } target_args_t;

  /// WAIT_MEM.
  typedef struct packed {
    sgpu_pkg::addr_t addr;      ///< the polled dword
    logic [31:0]     mask;
    logic [31:0]     ref_value;
    logic [31:0]     interval;  ///< cycles between an unsatisfied read and the next
    logic [127:0]    unused;
  } wait_args_t;

  /// TLB_INVALIDATE, MAP, UNMAP: a range of aperture pages.
  typedef struct packed {
    sgpu_pkg::addr_t pte_addr;    ///< MAP/UNMAP: address of the next PTE written (counts up)
    logic [31:0]     count;
    logic [31:0]     first_page;
    logic [31:0]     pages_left;  ///< UNMAP: PTEs still to write
    logic [31:0]     unused;
    logic [31:0]     dummy_lo;    ///< UNMAP: the PTE written to every page of the range
    logic [31:0]     dummy_hi;
    logic [31:0]     pte_flags;   ///< MAP: flag bits 2:0 of every PTE
  } range_args_t;

  typedef union packed {
    copy_args_t   copy;
    target_args_t target;
    wait_args_t   wait_mem;
    range_args_t  range;
  } cp_args_u;

  /// Where the payload dword at the head of the stream goes (sgpu_cp_decode's table). Slots are
  /// named after the copy view; each class's view says what a slot holds for it.
  typedef enum logic [3:0] {
    SlotNone,      ///< consumed and not kept (NOP payload)
    SlotData,      ///< written to memory at `dst`, which counts up (WRITE_*, MAP bus addresses)
    SlotDstLo,
    SlotDstHi,
    SlotSrcLo,
    SlotSrcHi,
    SlotWidth,
    SlotHeight,
    SlotSrcPitch,
    SlotDstPitch,
    SlotPattern
  } cp_slot_e;

  /// The argument register with one payload dword captured into its slot.
  function automatic copy_args_t capture(copy_args_t args, cp_slot_e slot, logic [31:0] dword);
    unique case (slot)
      SlotDstLo:    args.dst[31:0]  = dword;
      SlotDstHi:    args.dst[63:32] = dword;
      SlotSrcLo:    args.src[31:0]  = dword;
      SlotSrcHi:    args.src[63:32] = dword;
      SlotWidth:    args.width      = dword;
      SlotHeight:   args.height     = dword;
      SlotSrcPitch: args.src_pitch  = dword;
      SlotDstPitch: args.dst_pitch  = dword;
      SlotPattern:  args.pattern    = dword;
      default: ;  // SlotNone, SlotData
    endcase
    return args;
  endfunction

  ////////////
  // Faults //
  ////////////

  /// A fault a part of the CP raises in a cycle (valid = 0: none); sgpu_cp_ctrl resolves the
  /// requests of a cycle by priority and records the winner (cp_fault_rec_t).
  typedef struct packed {
    logic                 valid;
    sgpu_abi_pkg::fault_e reason;
    sgpu_pkg::addr_t      addr;
    logic [31:0]          detail;
  } cp_fault_req_t;

  function automatic cp_fault_req_t fault(sgpu_abi_pkg::fault_e reason, sgpu_pkg::addr_t addr,
                                          logic [31:0] detail);
    return '{valid: 1'b1, reason: reason, addr: addr, detail: detail};
  endfunction

  /// The fault of a failed fetch (ring entry, buffer, WAIT_MEM read).
  function automatic sgpu_abi_pkg::fault_e fetch_reason(sgpu_dma_pkg::dma_err_e err);
    return (err == sgpu_dma_pkg::DmaXlateFault) ? sgpu_abi_pkg::FaultTranslation
                                                : sgpu_abi_pkg::FaultBusError;
  endfunction

  /// What the CP asks the fetch engine for; the low bits of a request's tag (cp_tag_t).
  typedef enum logic [1:0] {
    FetchRing   = 2'd0,  ///< a ring entry (32 bytes, the kernel's: privileged)
    FetchBuffer = 2'd1,  ///< (part of) a DMA buffer, with its entry's privilege
    FetchWait   = 2'd2   ///< the dword a WAIT_MEM polls
  } cp_fetch_e;

  /// The tag of each fetch request: the fetch engine hands it to the translation port with the
  /// request's pages, so each request carries its own privilege, and a read ahead for an entry
  /// that has not started is quiet (the GART answers its fault without recording it).
  typedef struct packed {
    logic      quiet;  ///< read ahead: a translation fault is answered, not recorded
    logic      priv;   ///< system-physical addresses allowed (the ring; privileged entries)
    cp_fetch_e kind;
  } cp_tag_t;

  /// A ring entry with the privileged or paging flag runs with privilege.
  function automatic logic entry_privileged(sgpu_abi_pkg::ring_entry_t e);
    return e.flags[sgpu_abi_pkg::RingFlagPrivilegedBit] || e.flags[sgpu_abi_pkg::RingFlagPagingBit];
  endfunction

  /// A malformed ring entry (BAD_RING_ENTRY).
  function automatic logic entry_bad(sgpu_abi_pkg::ring_entry_t e);
    return e.buf_addr_lo[1:0] != 2'b00 || e.start_offset[1:0] != 2'b00
           || e.end_offset[1:0] != 2'b00 || e.start_offset > e.end_offset
           || (e.flags & ~sgpu_abi_pkg::RingFlagsMask) != '0;
  endfunction

  /// A ring entry without a buffer to execute: it only retires.
  function automatic logic entry_empty(sgpu_abi_pkg::ring_entry_t e);
    return e.start_offset == e.end_offset || e.flags[sgpu_abi_pkg::RingFlagNullRenderBit];
  endfunction

  /// A failed fetch of the ring or a buffer: its error code is the detail.
  function automatic cp_fault_req_t fetch_fault(sgpu_dma_pkg::dma_err_e err,
                                                sgpu_pkg::addr_t addr);
    return fault(fetch_reason(err), addr, 32'(err));
  endfunction

  //////////////
  // Dispatch //
  //////////////

  /// What follows a packet's last payload dword (sgpu_cp_check decides from its class).
  typedef enum logic [2:0] {
    NextHeader,      ///< nothing more: the next packet (NOP, WRITE_*, INDIRECT of 0 bytes)
    NextFence,       ///< FENCE: drain, write the value
    NextInvalidate,  ///< TLB_INVALIDATE, MAP: drain, invalidate the range, wait
    NextUnmap,       ///< UNMAP: write the dummy PTEs, then as NextInvalidate
    NextCopy,        ///< COPY, READ_PHYSICAL, FILL, BLIT_RECT, FILL_RECT: the copy engine
    NextWait,        ///< WAIT_MEM: drain, stop the stream, poll
    NextTimestamp,   ///< TIMESTAMP: drain, sample the counter, write it
    NextCall         ///< INDIRECT: push the caller, stream the called buffer
  } cp_next_e;

  /// The packet being executed, as the controller registers it.
  typedef struct packed {
    sgpu_abi_pkg::pkt_header_t hdr;
    /// Its row of the packet table, registered with the header: the payload routing reads it
    /// from here instead of looking the opcode up again behind the packet register.
    sgpu_abi_pkg::pkt_info_t   info;
    sgpu_pkg::addr_t           hdr_addr;  ///< GPU address of its header
    logic [31:0]               hdr_off;   ///< stream offset of its header
    cp_args_u                  args;
    logic [64:0]               src_ext;   ///< copy engine: (rows - 1) * pitch + width of the
    logic [64:0]               dst_ext;   ///< source and destination (checked for overlap)
    logic [31:0]               wait_val;  ///< WAIT_MEM: the dword read
  } cp_pkt_t;

  /// The part of a header's check that needs the dword alone (its row of the packet table):
  /// the CP's decode stage registers it for the dword that will be at the head
  /// (sgpu_cp).
  typedef struct packed {
    logic                     known;      ///< the opcode is in the table
    logic                     length_ok;  ///< dwords within [min, max]
    logic                     flags_ok;   ///< no undefined flag bit set
    logic                     privileged; ///< a privileged packet
    sgpu_abi_pkg::pkt_class_e pkt_class;
  } cp_hdr_chk_t;

  function automatic cp_hdr_chk_t hdr_table_check(sgpu_abi_pkg::pkt_header_t h);
    sgpu_abi_pkg::pkt_info_t info;
    info = sgpu_abi_pkg::pkt_info(h.opcode);
    return '{known:      info.known,
             length_ok:  h.dwords >= info.min_dwords && h.dwords <= info.max_dwords,
             flags_ok:   (h.flags & ~info.flags_mask) == '0,
             privileged: info.privileged,
             pkt_class:  info.pkt_class};
  endfunction

  /// The header's fault, in the order of the host's and the reference model's checks: unknown
  /// opcode, length outside [min, max], undefined flag bits, a privileged packet in an
  /// unprivileged entry, a packet longer than the rest of its buffer (overrun).
  function automatic sgpu_abi_pkg::fault_e hdr_fault_of(logic known, logic length_ok,
                                                        logic flags_ok, logic pkt_privileged,
                                                        logic in_privileged, logic overrun);
    if (!known)                          return sgpu_abi_pkg::FaultIllegalOpcode;
    if (!length_ok)                      return sgpu_abi_pkg::FaultBadLength;
    if (!flags_ok)                       return sgpu_abi_pkg::FaultReservedBits;
    if (pkt_privileged && !in_privileged) return sgpu_abi_pkg::FaultPrivilegedPacket;
    if (overrun)                         return sgpu_abi_pkg::FaultBufferOverrun;
    return sgpu_abi_pkg::FaultNone;
  endfunction

  /// The payload routing of the packet's next dword (sgpu_cp_decode's slot and last), as the
  /// CP's decode stage registers it a dword ahead (sgpu_cp).
  typedef struct packed {
    cp_slot_e slot;
    logic     last;
    logic     last2;  ///< the dword behind it is the packet's last (a pair ends the packet)
  } cp_route_t;

  /// How the packet register moves this cycle (sgpu_cp_ctrl), for the decode stage: a header is
  /// loaded (its payload index becomes `step`), or the index advances by `step` (0, 1 or 2).
  typedef struct packed {
    logic       load;
    logic [1:0] step;
  } cp_pkt_step_t;

  /// The decoder's answers (sgpu_cp_decode).
  typedef struct packed {
    sgpu_abi_pkg::fault_e    hdr_fault;  ///< of the dword at the stream head, as a header
    sgpu_abi_pkg::pkt_class_e hdr_class; ///< its class, as a header (if it is a known opcode)
    logic                    hdr_privileged; ///< it is a privileged packet (WRITE_PHYSICAL, ...)
    sgpu_abi_pkg::pkt_info_t info;       ///< the current packet's row of the packet table
    cp_slot_e                slot;       ///< where its next payload dword goes
    logic                    last;       ///< that dword is its last
  } cp_dec_t;

  /// The operand checks' answers (sgpu_cp_check).
  typedef struct packed {
    cp_fault_req_t   dword_fault;   ///< the fault the payload dword at the head causes
    cp_fault_req_t   last_fault;    ///< the fault the packet causes if that dword is its last
    cp_next_e        next;          ///< what follows then, if it does not fault
    logic            copy_overlap;  ///< COPY/BLIT_RECT source and destination overlap
    logic            wait_hit;      ///< WAIT_MEM: the condition holds for the dword read
    sgpu_pkg::addr_t table_pte;     ///< MAP/UNMAP: address of the PTE of first_page
  } cp_chk_t;

  //////////////////////////
  // Controller (the FSM) //
  //////////////////////////

  typedef enum logic [5:0] {
    StIdle,         // waiting for head != tail
    StRingReq,      // requesting the ring entry
    StRingData,     // collecting its eight dwords
    StRingStatus,   // waiting for the fetch status, then checking the entry
    StRingCheck,    // the entry read ahead (its status taken) has started: checking it
    StBufReq,       // requesting the DMA buffer
    StPktHeader,    // next dword is a packet header (or the buffer is done)
    StPktBody,      // consuming the payload of the current packet
    StFenceDrain,   // FENCE: waiting for every earlier write to be acknowledged
    StFenceWrite,   // FENCE: issuing the fence write
    StFenceAck,     // FENCE: waiting for its acknowledgement
    StInvDrain,     // TLB_INVALIDATE: waiting for every earlier write to be acknowledged
    StInvReq,       // TLB_INVALIDATE: offering the invalidation to the GART
    StInvWait,      // TLB_INVALIDATE: waiting until the GART's sweep is done
    StUnmapWrite,   // UNMAP: writing the dummy PTE to each page of the range
    StCopyCheck,    // copy engine packets: registering the source and destination extents
    StCopyDrain,    // copy engine packets: overlap check; waiting for every earlier write
    StCopyReq,      // copy engine packets: offering the request to the copy engine
    StCopyWait,     // copy engine packets: waiting for the engine's status
    StWaitDrain,    // WAIT_MEM: waiting for every earlier write to be acknowledged
    StStreamStop,   // WAIT_MEM, INDIRECT: buffer stream aborted; draining the fetch engine (also
                    // a prefetched ring entry that is not started: then back to idle)
    StWaitReq,      // WAIT_MEM: requesting the polled dword
    StWaitData,     // WAIT_MEM: collecting it
    StWaitStatus,   // WAIT_MEM: its fetch status; comparing
    StWaitPause,    // WAIT_MEM: condition false, waiting `interval` cycles before the next read
    StBufResume,    // re-requesting the rest of the buffer after the stream was stopped
    StBufEnd,       // a buffer is done: return to the caller (INDIRECT) or retire the entry
    StTsDrain,      // TIMESTAMP: waiting for every earlier write, then sampling the counter
    StTsWrite,      // TIMESTAMP: issuing the write
    StBufStatus,    // all packets consumed; waiting for the fetch status
    StRetireDrain,  // write-back record: each word once every earlier write is acknowledged
    StRetireAck,    // the fence word issued: its response retires the entry (the commit point)
    StPreemptDrain, // preemption: aborting the fetch and the copy engine, draining writes
    StPreemptWrite, // preemption: writing the preemption record
    StPreemptAck,   // preemption: waiting for it to be acknowledged
    StPreempted,    // stopped by preemption until resume or engine reset
    StFaultDrain,   // fault recorded; aborting the fetch and draining writes
    StFaulted,      // stopped until an engine reset
    StReset         // engine reset: draining, then clearing
  } cp_fsm_e;

  /// A ring entry is being fetched (the entry register is not complete yet).
  function automatic logic reading_ring(cp_fsm_e s);
    return s inside {StIdle, StRingReq, StRingData, StRingStatus, StRingCheck};
  endfunction
  /// The next dword the decoder needs is a packet header (a fault there names that dword; in
  /// StBufReq the stream was just started at the entry's first header).
  function automatic logic between_packets(cp_fsm_e s);
    return s inside {StBufReq, StPktHeader, StBufStatus, StBufResume, StBufEnd};
  endfunction
  /// Every packet of the entry executed: the write-back record is being written (a fault there
  /// names WB_ADDR or the record word that failed).
  function automatic logic retiring(cp_fsm_e s);
    return s inside {StRetireDrain, StRetireAck};
  endfunction
  /// The watchdog counts: a submission is being executed. Not in StRetireAck: once the fence
  /// word of the write-back record is issued, its response alone decides the entry (a fault
  /// would have to wait for that response anyway, and the fence may already be in memory).
  function automatic logic watched(cp_fsm_e s);
    return !(s inside {StIdle, StRetireAck, StFaultDrain, StFaulted, StReset, StPreemptDrain,
                       StPreemptWrite, StPreemptAck, StPreempted});
  endfunction
  /// Everything in flight is taken and dropped until the fetch engine, the write path and the
  /// copy engine are idle (the copy engine is told to abort).
  function automatic logic draining(cp_fsm_e s);
    return s inside {StFaultDrain, StReset, StPreemptDrain};
  endfunction
  /// Entering one of these aborts the fetch engine (one pulse; it drains what it issued).
  function automatic logic stops_fetch(cp_fsm_e s);
    return draining(s) || s == StStreamStop;
  endfunction
  /// Stopped, or on the way there: no new fault is raised.
  function automatic logic halted(cp_fsm_e s);
    return s inside {StFaultDrain, StFaulted, StReset};
  endfunction
  /// At rest: nothing is executed (STATUS.idle once the bus is quiet too).
  function automatic logic at_rest(cp_fsm_e s);
    return s inside {StIdle, StFaulted, StPreempted};
  endfunction
  /// Writing a kernel record (write-back, preemption): system-physical, not a packet's write.
  function automatic logic writing_record(cp_fsm_e s);
    return s inside {StRetireDrain, StPreemptWrite};
  endfunction

  /// A write in the CP's write buffer (sgpu_cp_wr_buf): the word, whether it may use
  /// system-physical addresses, and the FAULT_DETAIL of its refusal (the packet's header; 0 for
  /// the kernel's records), which the controller records when the translator refuses it (by then
  /// the CP may be executing a later packet).
  typedef struct packed {
    sgpu_pkg::word_wr_t wr;
    logic               priv;
    logic [31:0]        detail;
  } cp_wr_entry_t;

  /// How the controller moves the stream position (sgpu_cp_stream) in a cycle, besides the
  /// dwords it takes from the stream (which advance it while the operation is StreamHold).
  typedef enum logic [2:0] {
    StreamHold,    ///< no operation (the dwords taken, if any, advance the position)
    StreamStart,   ///< start the entry's buffer
    StreamCall,    ///< INDIRECT: push the caller (past the packet), start the called buffer
    StreamReturn,  ///< the called buffer is done: pop the caller
    StreamRewind   ///< back to the header of the packet being executed
  } cp_stream_op_e;

endpackage

`default_nettype wire
