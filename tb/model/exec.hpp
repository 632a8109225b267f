// Execution of one ring entry in the reference model, and the per-opcode packet handlers.
//
// Adding a packet to spec/abi.toml means adding one handler to the table in packets.cpp: the
// header checks (opcode, length, flags, privilege, overrun) are driven by the generated
// abi::kPackets table, and test_model fails while a packet of that table has no handler.
#pragma once

#include <cstdint>

#include "model/model.hpp"

namespace sgpu::model {

/// The services a packet handler uses; one Exec lives for one ring entry.
///
/// The write master is modelled as the RTL's: writes are posted, and a failed write is only
/// noticed at the next drain point (a FENCE, retirement). Until then later writes of the
/// submission may or may not reach memory in the RTL, so the model marks them uncertain.
class Exec {
 public:
  Exec(Model& model, const abi::RingEntry& entry);

  /// Next dword of the buffer. False when the fetch ended here (bus error): the fault is
  /// recorded with the address of this dword, and the handler must return.
  bool take(std::uint32_t& dword);
  /// A dword write (addr 4-byte aligned) through the write master.
  void write32(std::uint64_t addr, std::uint32_t value);
  /// A write of the 64-bit word at addr & ~7 with byte strobes.
  void write64(std::uint64_t addr, std::uint64_t value, std::uint8_t strb = 0xff);
  /// Waits until every write was acknowledged. False if one failed (the fault is recorded).
  bool drain();
  /// Stops the entry with a fault (packet decode or execution).
  void fault(abi::Fault reason, std::uint64_t addr, std::uint32_t detail);
  /// A refused translation: the GART records it (with this submission) and raises
  /// INT_STATUS.gart_fault; the CP faults TRANSLATION at `addr` with `detail`.
  void refused(std::uint64_t page, const Access& access, regs::GartFault reason, std::uint64_t addr,
               std::uint32_t detail);
  /// One request of the copy engine (COPY, FILL, BLIT_RECT, FILL_RECT, after the packet's checks and drain). False
  /// if it failed (the fault is recorded: BUS_ERROR at the engine's address, detail = header).
  bool copy_engine(bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                   std::uint32_t src_pitch, std::uint32_t dst_pitch, std::uint32_t pattern, std::uint32_t header);
  /// INT_STATUS.dma_completed (a FENCE with irq).
  void signal_completed();
  /// TIMESTAMP's write: the 64-bit word at addr (8-aligned) whose value depends on timing; its
  /// bytes become uncertain. Posted like write64.
  void write_timestamp(std::uint64_t addr);
  /// One WAIT_MEM read of the dword at addr through the fetch engine (the stream is stopped).
  /// False if it failed (fault recorded: BUS_ERROR/TRANSLATION at addr, detail = header).
  /// `uncertain`: the bits of the value that come from uncertain bytes.
  bool poll32(std::uint64_t addr, std::uint32_t header, std::uint32_t& value, std::uint32_t& uncertain);
  /// A result that depends on timing in the RTL (the model sets ambiguous()).
  void ambiguous();
  /// After a stopped stream (WAIT_MEM): the rest of the buffer is requested again from the
  /// next dword, with its own fetch outcome.
  void restart_stream();
  /// INDIRECT {addr, bytes} (both checked aligned by the handler): INDIRECT_DEPTH at the
  /// deepest level; bytes = 0 does nothing; else the called buffer is fetched and executed, then
  /// the caller's stream is fetched again from the next dword.
  void call(std::uint64_t addr, std::uint32_t bytes, std::uint32_t header);
  /// A WAIT_MEM that is never satisfied: WATCHDOG fault if CP_WATCHDOG is set, else the engine
  /// hangs until an engine reset.
  void wait_forever(std::uint32_t header);

  bool stopped() const { return stopped_; }
  const abi::RingEntry& entry() const { return entry_; }
  bool privileged() const;
  /// How this submission's stream reads, its packets write, and its copies read and write.
  Access fetch_access() const { return {Client::Fetch, false, privileged()}; }
  Access write_access() const { return {Client::CpWrite, true, privileged()}; }
  Access copy_read_access() const { return {Client::CopyRead, false, privileged()}; }
  Access copy_write_access() const { return {Client::CopyWrite, true, privileged()}; }
  /// GPU address of the header of the packet being executed.
  std::uint64_t header_addr() const { return header_addr_; }
  /// GART_TABLE_BASE with bits 11:0 cleared, and GART_TABLE_SIZE (MAP/UNMAP).
  std::uint64_t gart_table_base() const { return m_.gart_.table_base(); }
  std::uint32_t gart_table_size() const { return m_.gart_.table_size(); }
  /// True if [addr, addr + bytes) lies below 2^sys_addr_bits (READ/WRITE_PHYSICAL).
  bool physical_range_ok(std::uint64_t addr, std::uint64_t bytes) const {
    const unsigned bits = m_.config_.sys_addr_bits;
    if (bits >= 64) return addr == 0 || bytes <= 0 - addr;
    const std::uint64_t limit = std::uint64_t{1} << bits;
    return addr <= limit && bytes <= limit - addr;
  }

  /// Decodes and executes the submitted bytes, then retires the entry unless it faulted.
  void run();

 private:
  void run_buffer();
  void run_packets();
  void retire();
  /// The stream is (re)requested from `addr`: what the fetch engine will deliver.
  void start_stream(std::uint64_t addr, std::uint64_t bytes);
  /// The stream stops before its end (WAIT_MEM, INDIRECT): a refusal it had not reached may
  /// already be in the GART's record (the fetch engine translates ahead).
  void stop_stream();
  /// One write through the write master with `access`; a refusal faults (detail = the packet
  /// header being executed, 0 for the kernel's records).
  void write(std::uint64_t addr, std::uint64_t value, std::uint8_t strb, const Access& access, bool uncertain);
  std::uint64_t next_addr() const;
  std::uint64_t header_addr_ = 0;     ///< GPU address of the packet being executed

  Model& m_;
  abi::RingEntry entry_;
  std::uint64_t base_ = 0;           ///< GPU address of dword 0 of the buffer being executed
  unsigned depth_ = 0;               ///< INDIRECT nesting level of that buffer
  std::uint64_t total_dwords_ = 0;
  std::uint64_t pos_ = 0;            ///< dwords consumed
  std::uint64_t delivered_dwords_ = 0;
  FetchError fetch_error_ = FetchError::Ok;
  std::uint64_t refused_page_ = 0;   ///< with fetch_error_ Translation: the page and why
  regs::GartFault refusal_ = regs::GartFault::None;
  bool refused_later_ = false;       ///< the stream's bus error hides a refused page after it
  bool stale_refusal_ = false;       ///< a refusal of a stopped stream may be in the record
  std::uint32_t header_ = 0;         ///< header of the packet being executed (0 while retiring)
  bool stopped_ = false;
  bool write_failed_ = false;        ///< a write failed and the engine has not noticed yet
  std::uint64_t failed_addr_ = 0;
};

/// Executes one packet whose header passed the checks; payload comes from Exec::take.
using PacketHandler = void (*)(Exec& exec, std::uint32_t header);

/// The handler of a known opcode, or nullptr.
PacketHandler find_handler(std::uint8_t opcode);

/// The first failing header check, in the documented order, or Fault::None.
/// `buf_left_dwords`: dwords of the buffer from this header to end_offset.
abi::Fault check_header(std::uint32_t header, std::uint64_t buf_left_dwords, bool privileged);

}  // namespace sgpu::model
