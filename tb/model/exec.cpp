#include "model/exec.hpp"

#include <cstring>

#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::model {
namespace {

abi::Fault fetch_fault(FetchError e) {
  return e == FetchError::XlateFault ? abi::Fault::Translation : abi::Fault::BusError;
}

}  // namespace

Exec::Exec(Model& model, const abi::RingEntry& entry) : m_(model), entry_(entry) {}

bool Exec::privileged() const {
  return (entry_.flags & (abi::ring_flags::kPrivileged | abi::ring_flags::kPaging)) != 0;
}

std::uint64_t Exec::next_addr() const { return base_ + 4 * pos_; }

bool Exec::take(std::uint32_t& dword) {
  if (stopped_) return false;
  if (pos_ >= delivered_dwords_) {
    // The decoder waits for a dword that will never come and takes the error status instead.
    if (fetch_error_ == FetchError::XlateFault) {
      refused(refused_page_, fetch_access(), refusal_, next_addr(), static_cast<std::uint32_t>(fetch_error_));
    } else {
      if (refused_later_) m_.ambiguous_ = true;  // the look-ahead may have asked the GART already
      fault(fetch_fault(fetch_error_), next_addr(), static_cast<std::uint32_t>(fetch_error_));
    }
    return false;
  }
  dword = m_.bus_.read32(next_addr(), fetch_access());
  ++pos_;
  return true;
}

void Exec::write(std::uint64_t addr, std::uint64_t value, std::uint8_t strb, const Access& access, bool uncertain) {
  if (stopped_) return;
  const Bus::Write w = m_.bus_.write64(addr, value, strb, uncertain || write_failed_, access);
  if (w.refusal != regs::GartFault::None) {
    // The write path holds a write until its page is translated: the refused one faults here,
    // at the GPU address of its first byte (a dword in the upper half: addr + 4), and is never
    // issued.
    const std::uint64_t first = addr + (strb == 0 ? 0 : static_cast<unsigned>(__builtin_ctz(strb)));
    refused(addr, access, w.refusal, first, header_);
    return;
  }
  if (w.resp != kRespOkay && !write_failed_) {
    write_failed_ = true;
    failed_addr_ = addr;  // the write master reports the address it was given
  }
}

void Exec::write64(std::uint64_t addr, std::uint64_t value, std::uint8_t strb) {
  write(addr, value, strb, write_access(), false);
}

void Exec::write32(std::uint64_t addr, std::uint32_t value) {
  // The RTL writes a dword as the 64-bit word at addr & ~7 with the strobes of its half.
  const bool upper = (addr & 4) != 0;
  write64(addr & ~std::uint64_t{7}, upper ? std::uint64_t{value} << 32 : value,
          upper ? std::uint8_t{0xf0} : std::uint8_t{0x0f});
}

bool Exec::drain() {
  if (stopped_) return false;
  if (!write_failed_) return true;
  write_failed_ = false;
  fault(abi::Fault::BusError, failed_addr_, 0);
  return false;
}

void Exec::refused(std::uint64_t page, const Access& access, regs::GartFault reason, std::uint64_t addr,
                   std::uint32_t detail) {
  if (stopped_) return;
  m_.gart_.record(page, access, reason, entry_.fence, entry_.context_id);
  m_.int_status_ |= SGPU_REGS__INT_STATUS__GART_FAULT_bm;
  fault(abi::Fault::Translation, addr, detail);
}

void Exec::fault(abi::Fault reason, std::uint64_t addr, std::uint32_t detail) {
  if (stopped_) return;
  // A failed write still in flight races with this fault in the RTL: either may be reported.
  if (write_failed_) m_.ambiguous_ = true;
  // A refusal ahead of the decoder (or of a stopped stream) may or may not be in the GART's
  // record by now: the fetch engine translates ahead.
  const bool own_refusal = reason == abi::Fault::Translation && fetch_error_ == FetchError::XlateFault &&
                           pos_ >= delivered_dwords_ && addr == next_addr();
  if ((fetch_error_ == FetchError::XlateFault && !own_refusal) || stale_refusal_) m_.ambiguous_ = true;
  stopped_ = true;
  FaultRecord r;
  r.reason = reason;
  r.ring_index = m_.head_ & 0xffffffu;
  r.addr = addr;
  r.fence = entry_.fence;
  r.detail = detail;
  m_.raise_fault(r);
}

bool Exec::copy_engine(bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width, std::uint32_t height,
                       std::uint32_t src_pitch, std::uint32_t dst_pitch, std::uint32_t pattern,
                       std::uint32_t header) {
  if (stopped_) return false;
  const Bus::CopyOutcome o = m_.bus_.copy(fill, src, dst, width, height, src_pitch, dst_pitch, pattern,
                                          m_.config_.max_burst_beats, copy_read_access(), copy_write_access());
  if (o.ambiguous) m_.ambiguous_ = true;
  if (o.error == Bus::CopyOutcome::Error::None) return true;
  if (o.translation) {
    refused(o.refused_page, o.refused_access, o.refusal, o.addr, header);
  } else {
    fault(abi::Fault::BusError, o.addr, header);
  }
  return false;
}

void Exec::signal_completed() { m_.int_status_ |= SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm; }

void Exec::write_timestamp(std::uint64_t addr) {
  if (stopped_) return;
  // The value is the RTL's cycle counter: any value will do here, the bytes are uncertain.
  write(addr, m_.stats_.packets, 0xff, write_access(), true);
}

void Exec::ambiguous() { m_.ambiguous_ = true; }

bool Exec::poll32(std::uint64_t addr, std::uint32_t header, std::uint32_t& value, std::uint32_t& uncertain) {
  if (stopped_) return false;
  stop_stream();
  const Bus::Fetch f = m_.bus_.fetch(addr, 4, fetch_access());
  if (f.error == FetchError::XlateFault) {
    refused(f.refused_page, fetch_access(), f.refusal, addr, header);
    return false;
  }
  if (f.error != FetchError::Ok) {
    fault(fetch_fault(f.error), addr, header);
    return false;
  }
  value = m_.bus_.read32(addr, fetch_access());
  uncertain = m_.bus_.uncertain32(addr, fetch_access());
  return true;
}

void Exec::start_stream(std::uint64_t addr, std::uint64_t bytes) {
  const Bus::Fetch f = m_.bus_.fetch(addr, bytes, fetch_access());
  delivered_dwords_ = pos_ + f.delivered / 4;
  fetch_error_ = f.error;
  refused_page_ = f.refused_page;
  refusal_ = f.refusal;
  refused_later_ = f.refused_later;
}

void Exec::stop_stream() {
  if (fetch_error_ == FetchError::XlateFault || refused_later_) stale_refusal_ = true;
  fetch_error_ = FetchError::Ok;
  refused_later_ = false;
}

void Exec::restart_stream() {
  if (stopped_ || pos_ >= total_dwords_) return;
  start_stream(next_addr(), 4 * (total_dwords_ - pos_));
}

void Exec::call(std::uint64_t addr, std::uint32_t bytes, std::uint32_t header) {
  if (stopped_) return;
  if (depth_ >= m_.config_.max_indirect_depth) {
    fault(abi::Fault::IndirectDepth, header_addr_, header);
    return;
  }
  if (bytes == 0) return;
  // The caller's stream stops here; its state is the RTL's stack frame.
  stop_stream();
  const std::uint64_t base = base_, total = total_dwords_, pos = pos_;
  ++depth_;
  base_ = addr;
  total_dwords_ = bytes / 4;
  pos_ = 0;
  start_stream(addr, bytes);
  run_packets();
  stop_stream();
  --depth_;
  base_ = base;
  total_dwords_ = total;
  pos_ = pos;
  restart_stream();
}

void Exec::wait_forever(std::uint32_t header) {
  if (stopped_) return;
  if (m_.watchdog_ != 0) {
    fault(abi::Fault::Watchdog, header_addr_, header);
    return;
  }
  if (fetch_error_ == FetchError::XlateFault || refused_later_ || stale_refusal_) m_.ambiguous_ = true;
  stopped_ = true;
  m_.hung_ = true;
}

void Exec::run() {
  const bool empty = entry_.start_offset == entry_.end_offset;
  if (!empty && !(entry_.flags & abi::ring_flags::kNullRender)) run_buffer();
  if (!stopped_) retire();
}

void Exec::run_buffer() {
  const std::uint64_t bytes = entry_.end_offset - entry_.start_offset;
  base_ = entry_.buf_addr + entry_.start_offset;
  depth_ = 0;
  total_dwords_ = bytes / 4;
  pos_ = 0;
  start_stream(base_, bytes);
  run_packets();
}

void Exec::run_packets() {
  while (!stopped_ && pos_ < total_dwords_) {
    const std::uint64_t header_addr = next_addr();
    header_addr_ = header_addr;
    const std::uint64_t buf_left = total_dwords_ - pos_;
    std::uint32_t header = 0;
    if (!take(header)) return;
    ++m_.stats_.packets;
    header_ = header;
    const abi::Fault f_hdr = check_header(header, buf_left, privileged());
    if (f_hdr != abi::Fault::None) {
      fault(f_hdr, header_addr, header);
      return;
    }
    ++m_.stats_.packets_by_opcode[abi::header_opcode(header)];
    find_handler(abi::header_opcode(header))(*this, header);
  }
}

// Retirement, with the RTL's one commit point: the write-back record's fence word, written last,
// acknowledged OKAY. First every write of the submission is drained (a failed one faults here),
// then {0, head} at WB_ADDR + 8 is written and drained, then the fence at WB_ADDR; a failure of
// either record word faults the entry with the fence unwritten (BUS_ERROR at that word). Only
// after the fence word do the registers and the interrupt change.
void Exec::retire() {
  if (!drain()) return;
  const std::uint32_t head_next = (m_.head_ + 1) & m_.ring_mask();
  // The record is the kernel's: written with privilege; a refusal's FAULT_DETAIL is 0.
  header_ = 0;
  const Access kernel{Client::CpWrite, true, true};
  abi::Writeback record{};
  record.fence = entry_.fence;
  record.head = head_next;
  std::uint64_t words[2];
  static_assert(sizeof record == sizeof words, "the write-back record is two 64-bit words");
  std::memcpy(words, &record, sizeof words);
  if (m_.retire_watchdog_ == entry_.fence) {
    // The watchdog expired before the fence word was issued (the RTL's timing, taken from
    // outside): the head word may or may not have been written, the fence word was not.
    (void)m_.bus_.write64(m_.wb_addr_ + 8, words[1], 0xff, true, kernel);
    fault(abi::Fault::Watchdog, m_.wb_addr_, 0);
    return;
  }
  write(m_.wb_addr_ + 8, words[1], 0xff, kernel, false);
  if (!drain()) return;
  write(m_.wb_addr_, words[0], 0xff, kernel, false);
  if (!drain()) return;
  m_.head_ = head_next;
  m_.fence_done_ = entry_.fence;
  m_.int_status_ |= SGPU_REGS__INT_STATUS__DMA_COMPLETED_bm;
  m_.retired_.push_back(entry_.fence);
  ++m_.stats_.retired;
}

}  // namespace sgpu::model
