#include "sgpu/device.hpp"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "duration.hpp"
#include "sgpu/regs.hpp"

namespace sgpu {

static_assert(sizeof(abi::RingEntry) == 32 && sizeof(abi::Writeback) == 16 && sizeof(abi::PreemptRecord) == 16);

namespace {

constexpr std::uint32_t kMagic = SGPU_REGS__ID_MAGIC__VALUE_reset;
constexpr std::uint32_t kMajor = SGPU_REGS__ID_VERSION__MAJOR_reset;

// Every event bit of INT_STATUS (write 1 to clear) and the ones the driver enables.
constexpr std::uint32_t kIntAll = SGPU_FIELD(INT_STATUS, DMA_COMPLETED).mask |
                                  SGPU_FIELD(INT_STATUS, FAULT).mask |
                                  SGPU_FIELD(INT_STATUS, PREEMPTED).mask;
constexpr std::uint32_t kIntEnabled = SGPU_FIELD(INT_ENABLE, DMA_COMPLETED).mask |
                                      SGPU_FIELD(INT_ENABLE, FAULT).mask;

// Runs `f`, turning a broken link into a typed error at the API boundary.
template <class F>
auto guarded(F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const TransportFailure& e) {
    return Error{Errc::TransportError, e.what(), Touched::Hardware};
  } catch (const std::bad_alloc&) {
    return Error::make(Errc::OutOfMemory, Touched::Hardware, "host memory allocation failed");
  }
}

// What a PCIe read returns once the card is gone (surprise removal, link down).
constexpr std::uint32_t kAllOnes = 0xFFFF'FFFFu;

Error device_gone(const char* reg) {
  return Error::make(Errc::DeviceLost, Touched::Hardware,
                     "device lost: {} reads 0xffffffff (all ones): the device is gone (surprise removal or a dead "
                     "link); every wait ends here",
                     reg);
}

}  // namespace

std::string to_string(const GartFaultRecord& g) {
  // The names come from spec/registers.rdl (gart_fault_e, gart_client_e), as the RTL's do.
  const std::string_view reason_name = regs::to_string(static_cast<regs::GartFault>(g.reason));
  const std::string_view client_name = regs::display_name(static_cast<regs::GartClient>(g.client));
  const std::string reason = reason_name.empty() ? fmt::format("reason {}", g.reason) : std::string(reason_name);
  const std::string client = client_name.empty() ? fmt::format("client {}", g.client) : std::string(client_name);
  return fmt::format("{} on a {} by {}{}, page {:#x}{}", reason, g.write ? "write" : "read", client,
                     g.privileged ? " (privileged)" : "", g.page_address, g.more_faults ? ", more faults" : "");
}

std::string to_string(const FaultRecord& f) {
  std::string reason(abi::to_string(f.reason));
  if (reason == "UNKNOWN_FAULT") reason = fmt::format("unknown fault code {}", f.raw_reason);
  std::string s = fmt::format("{} at ring index {} (fence {}), address {:#x}, detail {:#010x}", reason,
                              f.ring_index, f.fence, f.address, f.detail);
  if (f.gart) s += "; GART: " + to_string(*f.gart);
  return s;
}

struct Device::State {
  std::unique_ptr<Transport> t;
  DeviceOptions options;
  DeviceInfo info;
  DmaMemory control;             // ring entries, then the write-back record
  std::unique_ptr<Aperture> aperture;  // when the GART is on; destroyed before `t`
  std::uint32_t log2_entries = 0;
  std::uint32_t tail = 0;        // next entry to write, as last written to RING_TAIL
  RingFence last_submitted;      // highest fence ever written to the ring
  bool all_ones = false;         // a read returned 0xFFFFFFFF where no live device can
  RingFence ring_last_fence;     // highest fence written to the ring since the last reset
  RingFence last_aborted;        // LastAbortedFenceId of the latest reset
  RingFence done_at_reset;       // the completed fence the ring was (re)started with
  std::vector<std::pair<RingFence, RingFence>> aborted;  // inclusive ranges discarded by resets
  std::optional<FaultRecord> fault;                   // seen in INT_STATUS, until reset

  std::uint32_t entries() const { return std::uint32_t{1} << log2_entries; }
  std::uint32_t mask() const { return entries() - 1; }
  std::size_t ring_bytes() const { return std::size_t{entries()} * sizeof(abi::RingEntry); }
  std::uint64_t wb_bus_addr() const { return control.bus_addr() + ring_bytes(); }
  // The preemption record follows the write-back record (16-byte aligned: ring_bytes() is).
  std::uint64_t preempt_bus_addr() const { return wb_bus_addr() + sizeof(abi::Writeback); }
  std::size_t control_bytes() const { return ring_bytes() + sizeof(abi::Writeback) + sizeof(abi::PreemptRecord); }
  const volatile std::uint32_t* preempt_record() const {
    return reinterpret_cast<const volatile std::uint32_t*>(control.bytes() + ring_bytes() + sizeof(abi::Writeback));
  }
  // The device writes the record behind the compiler's back: access it as volatile dwords.
  volatile std::uint32_t* wb() const {
    return reinterpret_cast<volatile std::uint32_t*>(control.bytes() + ring_bytes());
  }

  std::uint32_t rd(std::uint32_t off) { return t->read32(off); }
  void wr(std::uint32_t off, std::uint32_t v) { t->write32(off, v); }

  RingFence wb_fence() const {
    constexpr std::size_t lo = offsetof(abi::Writeback, fence) / 4;
    // A 64-bit value written by another agent may tear between its halves: read hi, lo, hi.
    for (;;) {
      const std::uint32_t hi = wb()[lo + 1];
      const std::uint32_t l = wb()[lo];
      if (wb()[lo + 1] == hi) return RingFence{(std::uint64_t{hi} << 32) | l};
    }
  }
  std::uint32_t wb_head() const { return wb()[offsetof(abi::Writeback, head) / 4]; }

  // Retirement's commit point is the device's acknowledged write of the record's fence word:
  // a fault never leaves a fence there that did not retire, except when that very write
  // reported an error and the memory took it anyway. The faulting entry's fence is then not
  // complete whatever the record says: every entry before it retired, the last of them is the
  // completed fence.
  RingFence completed() const {
    const RingFence f = wb_fence();
    if (!fault || !fault->fence || f < fault->fence) return f;
    return fence_before(fault->ring_index, fault->fence);
  }
  // The fence of the entry before the one at ring slot `index` (fence `of`), or the fence the
  // ring was started with: the ring is cleared at every reset and its fences grow, so the slot
  // before holds the previous entry when it holds a smaller, non-zero fence.
  RingFence fence_before(std::uint32_t index, RingFence of) const {
    abi::RingEntry e{};
    std::memcpy(&e, control.bytes() + std::size_t{(index - 1) & mask()} * sizeof e, sizeof e);
    const RingFence prev{e.fence};
    return prev && prev < of ? prev : done_at_reset;
  }

  Status read_identity();
  Status reset_and_wait();
  void init_ring(RingFence done);
  InterruptEvents acknowledge();
  void forget_aborted(RingFence fence);
  FaultRecord read_fault();
};

Status Device::State::read_identity() {
  const std::uint32_t magic = rd(SGPU_REG(ID_MAGIC));
  if (SGPU_FIELD(ID_MAGIC, VALUE).get(magic) != kMagic)
    return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                       "not a softgpu on transport '{}': ID_MAGIC is {:#010x}, expected {:#010x}", t->name(), magic,
                       kMagic);
  const std::uint32_t version = rd(SGPU_REG(ID_VERSION));
  const std::uint32_t major = SGPU_FIELD(ID_VERSION, MAJOR).get(version);
  if (major != kMajor)
    return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                       "unsupported softgpu interface: ID_VERSION is {:#010x} (major {:#x}), "
                       "this library needs major version {:#x}",
                       version, major, kMajor);
  info.magic = magic;
  info.version_major = major;
  info.version_minor = SGPU_FIELD(ID_VERSION, MINOR).get(version);
  info.build_id = rd(SGPU_REG(ID_BUILD));

  const std::uint32_t bus = rd(SGPU_REG(CAP_BUS));
  info.bus_data_bytes = SGPU_FIELD(CAP_BUS, DATA_BYTES).get(bus);
  info.bus_addr_bits = SGPU_FIELD(CAP_BUS, ADDR_BITS).get(bus);
  info.max_burst = SGPU_FIELD(CAP_BUS, MAX_BURST_M1).get(bus) + 1;
  info.outstanding_reads = SGPU_FIELD(CAP_BUS, OUTSTANDING_READS).get(bus);
  const std::uint32_t mem = rd(SGPU_REG(CAP_MEM));
  info.page_shift = SGPU_FIELD(CAP_MEM, PAGE_SHIFT).get(mem);
  info.max_ring_log2 = SGPU_FIELD(CAP_MEM, MAX_RING_LOG2).get(mem);
  info.max_indirect_depth = SGPU_FIELD(CAP_MEM, MAX_INDIRECT_DEPTH).get(mem);
  const std::uint32_t feat = rd(SGPU_REG(CAP_FEATURES));
  info.feature_bits = feat;
  info.has_gart = SGPU_FIELD(CAP_FEATURES, GART).get(feat) != 0;
  info.has_copy_engine = SGPU_FIELD(CAP_FEATURES, COPY_ENGINE).get(feat) != 0;
  info.has_preemption = SGPU_FIELD(CAP_FEATURES, PREEMPTION).get(feat) != 0;
  info.has_memory_segment = SGPU_FIELD(CAP_FEATURES, MEMORY_SEGMENT).get(feat) != 0;
  auto rd64 = [&](std::uint32_t lo, std::uint32_t hi) {
    const std::uint64_t l = rd(lo);
    return l | (std::uint64_t{rd(hi)} << 32);
  };
  info.memory_segment = {rd64(SGPU_REG(CAP_MEMSEG_BASE_LO), SGPU_REG(CAP_MEMSEG_BASE_HI)),
                         rd64(SGPU_REG(CAP_MEMSEG_SIZE_LO), SGPU_REG(CAP_MEMSEG_SIZE_HI))};
  info.aperture_segment = {rd64(SGPU_REG(CAP_APSEG_BASE_LO), SGPU_REG(CAP_APSEG_BASE_HI)),
                           rd64(SGPU_REG(CAP_APSEG_SIZE_LO), SGPU_REG(CAP_APSEG_SIZE_HI))};
  if (info.has_gart) {
    const std::uint32_t gcap = rd(SGPU_REG(GART_CAP));
    info.gart_tlb_entries = SGPU_FIELD(GART_CAP, TLB_ENTRIES).get(gcap);
    info.gart_sys_addr_bits = SGPU_FIELD(GART_CAP, SYS_ADDR_BITS).get(gcap);
  }

  if (info.max_ring_log2 < 1)
    return Error::make(Errc::DeviceMismatch, Touched::Hardware,
                       "device reports CAP_MEM.max_ring_log2 = {}: no usable ring", info.max_ring_log2);
  return ok_status();
}

Status Device::State::reset_and_wait() {
  wr(SGPU_REG(CTRL), SGPU_FIELD(CTRL, ENABLE).put(0));
  wr(SGPU_REG(RESET), SGPU_FIELD(RESET, ENGINE).put(1));
  const auto start = t->now();
  for (;;) {
    const std::uint32_t status = rd(SGPU_REG(STATUS));
    if (SGPU_FIELD(STATUS, RESETTING).get(status) == 0 && SGPU_FIELD(STATUS, IDLE).get(status) != 0)
      return ok_status();
    // A card that went away reads "resetting" forever; on a simulated transport whose reads no
    // longer reach the simulator, time would not even pass towards reset_timeout.
    if (status == kAllOnes) {
      all_ones = true;
      return Error::make(Errc::DeviceLost, Touched::Hardware,
                         "device lost: STATUS reads {:#010x} during the engine reset (surprise removal or a dead link)",
                         status);
    }
    const auto elapsed = t->now() - start;
    if (elapsed >= options.reset_timeout)
      return Error::make(Errc::Timeout, Touched::Hardware,
                         "engine reset did not finish within {}: STATUS is {:#010x} "
                         "(idle {}, faulted {}, resetting {})",
                         detail::format_duration(options.reset_timeout), status, SGPU_FIELD(STATUS, IDLE).get(status),
                         SGPU_FIELD(STATUS, FAULTED).get(status), SGPU_FIELD(STATUS, RESETTING).get(status));
  }
}

void Device::State::init_ring(RingFence done) {
  // Host side first: an empty ring whose write-back record holds the last retired fence.
  std::memset(control.cpu(), 0, control.size());
  ring_last_fence = done;
  done_at_reset = done;
  wb()[offsetof(abi::Writeback, fence) / 4] = static_cast<std::uint32_t>(done.value());
  wb()[offsetof(abi::Writeback, fence) / 4 + 1] = static_cast<std::uint32_t>(done.value() >> 32);
  wb()[offsetof(abi::Writeback, head) / 4] = 0;
  tail = 0;
  std::atomic_thread_fence(std::memory_order_release);

  const std::uint64_t ring = control.bus_addr();
  const std::uint64_t wb_addr = wb_bus_addr();
  wr(SGPU_REG(INT_ENABLE), 0);
  wr(SGPU_REG(INT_STATUS), kIntAll);
  wr(SGPU_REG(RING_BASE_LO), static_cast<std::uint32_t>(ring));
  wr(SGPU_REG(RING_BASE_HI), static_cast<std::uint32_t>(ring >> 32));
  wr(SGPU_REG(RING_SIZE), SGPU_FIELD(RING_SIZE, LOG2_ENTRIES).put(log2_entries));
  wr(SGPU_REG(WB_ADDR_LO), static_cast<std::uint32_t>(wb_addr));
  wr(SGPU_REG(WB_ADDR_HI), static_cast<std::uint32_t>(wb_addr >> 32));
  wr(SGPU_REG(RING_TAIL), SGPU_FIELD(RING_TAIL, INDEX).put(0));
  std::uint32_t enabled = kIntEnabled;
  if (info.has_preemption) {
    const std::uint64_t rec = preempt_bus_addr();
    wr(SGPU_REG(PREEMPT_ADDR_LO), static_cast<std::uint32_t>(rec));
    wr(SGPU_REG(PREEMPT_ADDR_HI), static_cast<std::uint32_t>(rec >> 32));
    enabled |= SGPU_FIELD(INT_ENABLE, PREEMPTED).mask;
  }
  wr(SGPU_REG(INT_ENABLE), enabled);
  wr(SGPU_REG(CTRL), SGPU_FIELD(CTRL, ENABLE).put(1));
}

InterruptEvents Device::State::acknowledge() {
  const std::uint32_t raw = rd(SGPU_REG(INT_STATUS));
  // All ones (undefined bits included): a surprise-removed card or a dead link answers every
  // read so. No event is taken from it; the caller reports the device lost.
  if (raw == kAllOnes) {
    all_ones = true;
    return InterruptEvents{};
  }
  const std::uint32_t status = raw & kIntAll;
  if (status != 0) wr(SGPU_REG(INT_STATUS), status);
  InterruptEvents ev;
  ev.dma_completed = SGPU_FIELD(INT_STATUS, DMA_COMPLETED).get(status) != 0;
  ev.fault = SGPU_FIELD(INT_STATUS, FAULT).get(status) != 0;
  ev.preempted = SGPU_FIELD(INT_STATUS, PREEMPTED).get(status) != 0;
  if (ev.fault) fault = read_fault();
  return ev;
}

// A resubmitted fence (explicit ID) is live again: take it out of the aborted ranges.
void Device::State::forget_aborted(RingFence f) {
  for (std::size_t i = 0; i < aborted.size(); ++i) {
    auto [first, last] = aborted[i];
    if (f < first || f > last) continue;
    aborted.erase(aborted.begin() + static_cast<std::ptrdiff_t>(i));
    if (f > first) aborted.emplace_back(first, RingFence{f.value() - 1});
    if (f < last) aborted.emplace_back(f.next(), last);
    return;
  }
}

FaultRecord Device::State::read_fault() {
  FaultRecord f;
  const std::uint32_t st = rd(SGPU_REG(FAULT_STATUS));
  f.raw_reason = SGPU_FIELD(FAULT_STATUS, REASON).get(st);
  f.reason = static_cast<abi::Fault>(f.raw_reason);
  f.ring_index = SGPU_FIELD(FAULT_STATUS, RING_INDEX).get(st);
  const std::uint64_t addr_lo = rd(SGPU_REG(FAULT_ADDR_LO));
  f.address = addr_lo | (std::uint64_t{rd(SGPU_REG(FAULT_ADDR_HI))} << 32);
  const std::uint64_t fence_lo = rd(SGPU_REG(FAULT_FENCE_LO));
  f.fence = RingFence{fence_lo | (std::uint64_t{rd(SGPU_REG(FAULT_FENCE_HI))} << 32)};
  f.detail = rd(SGPU_REG(FAULT_DETAIL));
  if (info.has_gart) {
    const std::uint32_t gs = rd(SGPU_REG(GART_FAULT_STATUS));
    if (SGPU_FIELD(GART_FAULT_STATUS, VALID).get(gs) != 0) {
      GartFaultRecord g;
      g.reason = SGPU_FIELD(GART_FAULT_STATUS, REASON).get(gs);
      g.client = SGPU_FIELD(GART_FAULT_STATUS, CLIENT).get(gs);
      g.write = SGPU_FIELD(GART_FAULT_STATUS, WRITE).get(gs) != 0;
      g.privileged = SGPU_FIELD(GART_FAULT_STATUS, PRIVILEGED).get(gs) != 0;
      g.more_faults = SGPU_FIELD(GART_FAULT_STATUS, MORE_FAULTS).get(gs) != 0;
      const std::uint64_t a = rd(SGPU_REG(GART_FAULT_ADDR_LO));
      g.page_address = a | (std::uint64_t{rd(SGPU_REG(GART_FAULT_ADDR_HI))} << 32);
      const std::uint64_t fl = rd(SGPU_REG(GART_FAULT_FENCE_LO));
      g.fence = RingFence{fl | (std::uint64_t{rd(SGPU_REG(GART_FAULT_FENCE_HI))} << 32)};
      g.context_id = rd(SGPU_REG(GART_FAULT_CONTEXT));
      f.gart = g;
    }
  }
  return f;
}

Device::Device(std::unique_ptr<State> state) : s_(std::move(state)) {}
Device::Device(Device&&) noexcept = default;
Device& Device::operator=(Device&&) noexcept = default;
Device::~Device() {
  // Stop and drain the engine before the ring memory goes away, so it never touches freed
  // memory. Best effort: a destructor has nobody to report to.
  if (s_ && s_->t && !s_->all_ones) {
    try {
      (void)s_->reset_and_wait();
    } catch (const TransportFailure&) {
    }
  }
}

Result<Device> Device::open(std::unique_ptr<Transport> transport, const DeviceOptions& options) {
  if (!transport) return Error::invalid("Device::open: no transport");
  if (options.ring_log2_entries < 1 || options.ring_log2_entries > SGPU_REGS__RING_SIZE__LOG2_ENTRIES_bm)
    return Error::invalid("ring_log2_entries {} is outside [1, {}]", options.ring_log2_entries,
                          SGPU_REGS__RING_SIZE__LOG2_ENTRIES_bm);
  auto s = std::make_unique<State>();
  s->t = std::move(transport);
  s->options = options;
  return guarded([&]() -> Result<Device> {
    SGPU_RETURN_IF_ERROR(s->read_identity());
    s->log2_entries = std::min(options.ring_log2_entries, s->info.max_ring_log2);
    SGPU_ASSIGN_OR_RETURN(s->control, s->t->alloc_dma(s->control_bytes(), 4096));
    SGPU_RETURN_IF_ERROR(s->reset_and_wait());
    if (s->info.has_gart && options.gart) {
      SGPU_ASSIGN_OR_RETURN(s->aperture, Aperture::create(*s->t, s->info, options.aperture));
    }
    s->init_ring(RingFence{});
    return Device(std::move(s));
  });
}

const DeviceInfo& Device::info() const { return s_->info; }
Transport& Device::transport() { return *s_->t; }
Aperture* Device::aperture() { return s_->aperture.get(); }
std::uint32_t Device::ring_entries() const { return s_->entries(); }
RingFence Device::completed_fence() const { return s_->completed(); }
RingFence Device::last_submitted_fence() const { return s_->last_submitted; }
std::uint32_t Device::ring_head() const { return s_->wb_head(); }
std::uint32_t Device::ring_tail() const { return s_->tail; }

RingFence Device::next_fence() const { return s_->last_submitted.next(); }

Result<RingFence> Device::submit_next(const Submission& submission) { return submit(submission, next_fence()); }

Result<RingFence> Device::submit(const Submission& sub, RingFence fence) {
  // ---- validate: nothing below touches hardware until every check has passed
  const bool by_gpu_address = sub.buffer == nullptr;
  if (by_gpu_address && sub.gpu_address == 0) return Error::invalid("submission has no DMA buffer and no GPU address");
  if (!by_gpu_address && !*sub.buffer) return Error::invalid("submission has no DMA buffer");
  if (!by_gpu_address && sub.gpu_address != 0)
    return Error::invalid("submission names both a DMA buffer and GPU address {:#x}", sub.gpu_address);
  if (sub.start_offset % 4 != 0) return Error::invalid("start_offset {:#x} is not 4-byte aligned", sub.start_offset);
  if (sub.end_offset % 4 != 0) return Error::invalid("end_offset {:#x} is not 4-byte aligned", sub.end_offset);
  if (sub.start_offset > sub.end_offset)
    return Error::invalid("start_offset {:#x} is after end_offset {:#x}", sub.start_offset, sub.end_offset);
  if ((sub.flags & ~abi::ring_flags::kDefined) != 0)
    return Error::invalid("flags {:#x} set undefined bits (defined: {:#x})", sub.flags, abi::ring_flags::kDefined);
  const bool privileged = (sub.flags & (abi::ring_flags::kPrivileged | abi::ring_flags::kPaging)) != 0;
  std::uint64_t buf_addr = 0;
  if (!by_gpu_address) {
    if (sub.end_offset > sub.buffer->size())
      return Error::invalid("end_offset {:#x} is past the end of the {:#x}-byte buffer", sub.end_offset,
                            sub.buffer->size());
    if (sub.buffer->bus_addr() % 4 != 0)
      return Error::invalid("buffer bus address {:#x} is not 4-byte aligned", sub.buffer->bus_addr());
    if (s_->aperture && !privileged)
      return Error::invalid(
          "DMA buffer at bus address {:#x} is system memory: with the GART on only "
          "privileged or paging submissions may use system-physical addresses; map "
          "it into the aperture and submit its GPU address",
          sub.buffer->bus_addr());
    buf_addr = sub.buffer->bus_addr();
  } else {
    buf_addr = sub.gpu_address;
    if (buf_addr % 4 != 0) return Error::invalid("buffer GPU address {:#x} is not 4-byte aligned", buf_addr);
    if (buf_addr > ~std::uint64_t{0} - sub.end_offset)
      return Error::invalid("buffer GPU address {:#x} + end_offset {:#x} overflows", buf_addr, sub.end_offset);
    if (s_->aperture && sub.end_offset > sub.start_offset) {
      // The executed bytes must lie in one segment the submission may use.
      const std::uint64_t lo = buf_addr + sub.start_offset, hi = buf_addr + sub.end_offset;  // [lo, hi)
      const Aperture& ap = *s_->aperture;
      const SegmentInfo& ms = s_->info.memory_segment;
      const bool in_ap = lo >= ap.base() && hi - ap.base() <= ap.size();
      const bool in_ms = s_->info.has_memory_segment && lo >= ms.base && hi - ms.base <= ms.size;
      const unsigned sys_bits = s_->info.gart_sys_addr_bits;
      const bool in_sys = privileged && sys_bits > 0 && sys_bits < 64 && hi <= (std::uint64_t{1} << sys_bits);
      if (!in_ap && !in_ms && !in_sys)
        return Error::invalid(
            "bytes [{:#x}, {:#x}) of the buffer are not inside the aperture's usable "
            "range [{:#x}, {:#x}){}{}",
            lo, hi, ap.base(), ap.base() + ap.size(),
            s_->info.has_memory_segment
                ? fmt::format(" or the memory segment [{:#x}, {:#x})", ms.base, ms.base + ms.size)
                : std::string(),
            privileged ? " or system-physical memory" : "");
    }
  }
  if (s_->fault)
    return Error::make(Errc::DeviceFault, Touched::Nothing, "engine is stopped on a fault ({}); reset_engine() first",
                       to_string(*s_->fault));
  const std::uint32_t in_flight = (s_->tail - s_->wb_head()) & s_->mask();
  if (in_flight >= s_->mask())
    return Error::busy(
        "ring full: {} submissions in flight in a ring of {} entries; "
        "last fence seen {}",
        in_flight, s_->entries(), completed_fence());

  if (!fence) return Error::invalid("ring fence 0 means 'no fence': ring fences start at 1");
  if (fence <= s_->ring_last_fence || fence <= completed_fence())
    return Error::invalid(
        "explicit fence {} is not newer than the ring's last fence {} and the completed fence {}: "
        "completion would go backwards",
        fence, s_->ring_last_fence, completed_fence());

  // ---- write the entry, then publish it
  abi::RingEntry e{};
  e.buf_addr = buf_addr;
  e.start_offset = sub.start_offset;
  e.end_offset = sub.end_offset;
  e.fence = fence.value();
  e.context_id = sub.context_id;
  e.flags = sub.flags;
  std::memcpy(s_->control.bytes() + std::size_t{s_->tail} * sizeof e, &e, sizeof e);
  std::atomic_thread_fence(std::memory_order_release);
  const std::uint32_t new_tail = (s_->tail + 1) & s_->mask();
  return guarded([&]() -> Result<RingFence> {
    s_->wr(SGPU_REG(RING_TAIL), SGPU_FIELD(RING_TAIL, INDEX).put(new_tail));
    s_->tail = new_tail;
    s_->ring_last_fence = fence;
    if (fence <= s_->last_submitted)
      s_->forget_aborted(fence);
    else
      s_->last_submitted = fence;
    return fence;
  });
}

Status Device::wait_fence(RingFence fence, std::chrono::nanoseconds timeout) {
  for (const auto& [first, last] : s_->aborted)
    if (fence >= first && fence <= last)
      return Error::make(Errc::Aborted, Touched::Nothing,
                         "fence {} was discarded by an engine reset (aborted fences {}..{})", fence, first, last);
  return guarded([&]() -> Status {
    Transport& t = *s_->t;
    const auto start = t.now();
    for (;;) {
      if (completed_fence() >= fence) return ok_status();
      if (s_->fault)
        return Error::make(Errc::DeviceFault, Touched::Hardware,
                           "fence {} will not complete: the engine stopped on {}; "
                           "last fence seen {}",
                           fence, to_string(*s_->fault), completed_fence());
      const auto elapsed = t.now() - start;
      if (elapsed >= timeout && s_->rd(SGPU_REG(ID_MAGIC)) == kAllOnes) return device_gone("ID_MAGIC");
      if (elapsed >= timeout)
        return Error::make(Errc::Timeout, Touched::Hardware,
                           "fence {} not reached within {}; last fence seen {} "
                           "(last submitted {}, ring head {}, tail {})",
                           fence, detail::format_duration(timeout), completed_fence(), s_->last_submitted,
                           s_->wb_head(), s_->tail);
      // Acknowledge first, then look at memory: an event after the acknowledge raises the
      // line again, so none is lost.
      if (t.wait_irq(timeout - elapsed)) (void)s_->acknowledge();
      if (s_->all_ones) return device_gone("INT_STATUS");
    }
  });
}

Result<std::optional<FaultRecord>> Device::fault() {
  return guarded([&]() -> Result<std::optional<FaultRecord>> {
    const std::uint32_t status = s_->rd(SGPU_REG(STATUS));
    if (SGPU_FIELD(STATUS, FAULTED).get(status) == 0) return std::optional<FaultRecord>{};
    return std::optional<FaultRecord>{s_->read_fault()};
  });
}

Status Device::reset_engine() {
  return guarded([&]() -> Status {
    // The fault record, if the ISR has not latched it: it says which entry did not retire.
    if (!s_->fault && SGPU_FIELD(STATUS, FAULTED).get(s_->rd(SGPU_REG(STATUS))) != 0) s_->fault = s_->read_fault();
    SGPU_RETURN_IF_ERROR(s_->reset_and_wait());
    // The engine is stopped and drained: whatever it retired is in the write-back record (and
    // a faulting entry did not retire, whatever its record write left there).
    const RingFence done = completed_fence();
    if (s_->ring_last_fence > done) {
      s_->aborted.emplace_back(done.next(), s_->ring_last_fence);
      s_->last_aborted = s_->ring_last_fence;
    } else {
      s_->last_aborted = done;
    }
    s_->fault.reset();
    s_->init_ring(done);
    return ok_status();
  });
}

RingFence Device::last_aborted_fence() const { return s_->last_aborted; }

Result<bool> Device::wait_interrupt(std::chrono::nanoseconds timeout) {
  return guarded([&]() -> Result<bool> { return s_->t->wait_irq(timeout); });
}

Result<InterruptEvents> Device::acknowledge_interrupts() {
  return guarded([&]() -> Result<InterruptEvents> {
    InterruptEvents ev = s_->acknowledge();
    if (s_->all_ones) return device_gone("INT_STATUS");
    return ev;
  });
}

Status Device::check_present() {
  return guarded([&]() -> Status {
    const std::uint32_t magic = s_->rd(SGPU_REG(ID_MAGIC));
    if (magic == kAllOnes) {
      s_->all_ones = true;
      return device_gone("ID_MAGIC");
    }
    if (SGPU_FIELD(ID_MAGIC, VALUE).get(magic) != kMagic)
      return Error::make(Errc::DeviceLost, Touched::Hardware,
                         "device lost: ID_MAGIC reads {:#010x} instead of {:#010x} (the device behind the transport "
                         "is no longer this softgpu)",
                         magic, kMagic);
    return ok_status();
  });
}

bool Device::lost() const { return s_->all_ones; }

const std::optional<FaultRecord>& Device::latched_fault() const { return s_->fault; }

abi::RingEntry Device::ring_entry(std::uint32_t index) const {
  abi::RingEntry e{};
  std::memcpy(&e, s_->control.bytes() + std::size_t{index & s_->mask()} * sizeof e, sizeof e);
  return e;
}

namespace {
Error no_preemption() { return Error::unsupported("device has no preemption (CAP_FEATURES.preemption = 0)"); }
}  // namespace

Status Device::request_preemption(RingFence preemption_fence) {
  if (!s_->info.has_preemption) return no_preemption();
  return guarded([&]() -> Status {
    s_->wr(SGPU_REG(PREEMPT_FENCE_LO), static_cast<std::uint32_t>(preemption_fence.value()));
    s_->wr(SGPU_REG(PREEMPT_FENCE_HI), static_cast<std::uint32_t>(preemption_fence.value() >> 32));
    s_->wr(SGPU_REG(PREEMPT), SGPU_FIELD(PREEMPT, REQUEST).put(1));
    return ok_status();
  });
}

Result<PreemptionState> Device::preemption_state() {
  if (!s_->info.has_preemption) return no_preemption();
  return guarded([&]() -> Result<PreemptionState> {
    PreemptionState p;
    const std::uint32_t st = s_->rd(SGPU_REG(PREEMPT_STATUS));
    p.pending = SGPU_FIELD(PREEMPT_STATUS, PENDING).get(st) != 0;
    p.preempted = SGPU_FIELD(PREEMPT_STATUS, PREEMPTED).get(st) != 0;
    p.in_entry = SGPU_FIELD(PREEMPT_STATUS, IN_ENTRY).get(st) != 0;
    p.ring_index = SGPU_FIELD(RING_HEAD, INDEX).get(s_->rd(SGPU_REG(RING_HEAD)));
    p.offset = s_->rd(SGPU_REG(PREEMPT_OFFSET));
    if (p.preempted) {
      const volatile std::uint32_t* r = s_->preempt_record();
      constexpr std::size_t pf = offsetof(abi::PreemptRecord, preempt_fence) / 4;
      constexpr std::size_t lf = offsetof(abi::PreemptRecord, last_fence) / 4;
      p.preemption_fence = RingFence{r[pf] | (std::uint64_t{r[pf + 1]} << 32)};
      p.last_completed = RingFence{r[lf] | (std::uint64_t{r[lf + 1]} << 32)};
    }
    return p;
  });
}

Status Device::resume_from_preemption() {
  if (!s_->info.has_preemption) return no_preemption();
  return guarded([&]() -> Status {
    s_->wr(SGPU_REG(PREEMPT), SGPU_FIELD(PREEMPT, RESUME).put(1));
    return ok_status();
  });
}

Result<std::uint64_t> Device::cycle_counter() {
  return guarded([&]() -> Result<std::uint64_t> {
    const std::uint64_t lo = s_->rd(SGPU_REG(CYCLE_LO));  // latches CYCLE_HI
    return lo | (std::uint64_t{s_->rd(SGPU_REG(CYCLE_HI))} << 32);
  });
}

}  // namespace sgpu
