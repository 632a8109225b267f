#include "diff/runner.hpp"
#include "sgpu/gen/sgpu_reg_enums.hpp"

#include <cstddef>
#include <sstream>

#include "diff/device.hpp"
#include "sgpu/gen/sgpu_regs.h"

namespace sgpu::diff {
namespace {

#define DIFF_REG(name) static_cast<std::uint32_t>(offsetof(sgpu_regs_t, name))

struct NamedReg {
  const char* name;
  std::uint32_t offset;
};

/// Every register whose value the command processor (and the GART's fault record) determines.
/// GART_STATUS is not one: walk_busy shows prefetch walks still queued when the engine stopped.
constexpr NamedReg kCompared[] = {
    {"STATUS", DIFF_REG(STATUS)},           {"RING_HEAD", DIFF_REG(RING_HEAD)},
    {"FENCE_DONE_LO", DIFF_REG(FENCE_DONE_LO)}, {"FENCE_DONE_HI", DIFF_REG(FENCE_DONE_HI)},
    {"INT_STATUS", DIFF_REG(INT_STATUS)},   {"INT_ENABLE", DIFF_REG(INT_ENABLE)},
    {"FAULT_STATUS", DIFF_REG(FAULT_STATUS)}, {"FAULT_ADDR_LO", DIFF_REG(FAULT_ADDR_LO)},
    {"FAULT_ADDR_HI", DIFF_REG(FAULT_ADDR_HI)}, {"FAULT_FENCE_LO", DIFF_REG(FAULT_FENCE_LO)},
    {"FAULT_FENCE_HI", DIFF_REG(FAULT_FENCE_HI)}, {"FAULT_DETAIL", DIFF_REG(FAULT_DETAIL)},
    {"PREEMPT_STATUS", DIFF_REG(PREEMPT_STATUS)},
    {"GART_FAULT_STATUS", DIFF_REG(GART_FAULT_STATUS)}, {"GART_FAULT_ADDR_LO", DIFF_REG(GART_FAULT_ADDR_LO)},
    {"GART_FAULT_ADDR_HI", DIFF_REG(GART_FAULT_ADDR_HI)}, {"GART_FAULT_FENCE_LO", DIFF_REG(GART_FAULT_FENCE_LO)},
    {"GART_FAULT_FENCE_HI", DIFF_REG(GART_FAULT_FENCE_HI)}, {"GART_FAULT_CONTEXT", DIFF_REG(GART_FAULT_CONTEXT)},
};

std::string hex(std::uint64_t v) {
  std::ostringstream s;
  s << "0x" << std::hex << v;
  return s.str();
}

class Runner {
 public:
  explicit Runner(const RunConfig& config)
      : config_(config),
        rtl_(config.sim, config.gen.layout.writeback, 4'000'000),
        model_(model_config()),
        gen_(config.seed, generator_config()) {}

  RunResult run();

 private:
  model::Config model_config() {
    model::Config c;
    c.bus_bytes = rtl_.mmio_read32(DIFF_REG(CAP_BUS)) & SGPU_REGS__CAP_BUS__DATA_BYTES_bm;
    c.max_burst_beats = ((rtl_.mmio_read32(DIFF_REG(CAP_BUS)) & SGPU_REGS__CAP_BUS__MAX_BURST_M1_bm) >>
                         SGPU_REGS__CAP_BUS__MAX_BURST_M1_bp) + 1;
    c.max_ring_log2 = (rtl_.mmio_read32(DIFF_REG(CAP_MEM)) & SGPU_REGS__CAP_MEM__MAX_RING_LOG2_bm) >>
                      SGPU_REGS__CAP_MEM__MAX_RING_LOG2_bp;
    c.max_indirect_depth = (rtl_.mmio_read32(DIFF_REG(CAP_MEM)) & SGPU_REGS__CAP_MEM__MAX_INDIRECT_DEPTH_bm) >>
                           SGPU_REGS__CAP_MEM__MAX_INDIRECT_DEPTH_bp;
    return c;
  }
  GeneratorConfig generator_config() {
    GeneratorConfig g = config_.gen;
    g.aperture_base = (std::uint64_t{rtl_.mmio_read32(DIFF_REG(CAP_APSEG_BASE_HI))} << 32) |
                      rtl_.mmio_read32(DIFF_REG(CAP_APSEG_BASE_LO));
    return g;
  }
  void gart_on(bool on);
  Device* both(unsigned i) { return i == 0 ? static_cast<Device*>(&model_) : static_cast<Device*>(&rtl_); }
  void write_both(std::uint32_t offset, std::uint32_t value) {
    model_.mmio_write32(offset, value);
    rtl_.mmio_write32(offset, value);
  }
  void setup();
  void apply(const StepPlan& step);
  void engine_reset();
  void preempt_idle();
  bool compare_state(const char* when);
  bool compare_memory();
  void fail(const std::string& what) {
    if (result_.ok) {
      result_.ok = false;
      result_.failure = what;
    }
  }

  RunConfig config_;
  RtlDevice rtl_;
  ModelDevice model_;
  Generator gen_;
  RunResult result_;
  std::uint32_t tail_ = 0;
  std::uint32_t mask_ = 0;
};

void Runner::setup() {
  const Layout& l = config_.gen.layout;
  mask_ = (1u << config_.gen.ring_log2) - 1;
  // Pre-touch the data region in both images: every page a packet may write exists from the
  // start, so "same number of pages" proves no write went anywhere else.
  std::vector<std::uint8_t> pattern(l.data_bytes);
  for (std::size_t i = 0; i < pattern.size(); ++i) pattern[i] = static_cast<std::uint8_t>(gen_.rng()());
  for (unsigned i = 0; i < 2; ++i) {
    Device& d = *both(i);
    d.memory().write(l.data, pattern.data(), pattern.size());
    d.memory().fill(l.ring, 0, 32u << config_.gen.ring_log2);
    d.memory().fill(l.writeback, 0, 16);
    d.inject_error(l.poison_slverr, l.poison_slverr + 0x1000, model::kRespSlvErr);
    d.inject_error(l.poison_decerr, l.poison_decerr + 0x1000, model::kRespDecErr);
    // GART steps: the aperture's page table and the dummy page (poison), for the whole run.
    const ApertureMap& ap = gen_.aperture();
    d.memory().write(l.aperture_table, ap.pte.data(), 8 * ap.pte.size());
    d.memory().write(l.dummy_page, pattern.data(), 4096);
  }
  write_both(DIFF_REG(RING_BASE_LO), static_cast<std::uint32_t>(l.ring));
  write_both(DIFF_REG(RING_BASE_HI), static_cast<std::uint32_t>(l.ring >> 32));
  write_both(DIFF_REG(RING_SIZE), config_.gen.ring_log2);
  write_both(DIFF_REG(WB_ADDR_LO), static_cast<std::uint32_t>(l.writeback));
  write_both(DIFF_REG(WB_ADDR_HI), static_cast<std::uint32_t>(l.writeback >> 32));
  write_both(DIFF_REG(RING_TAIL), 0);
  write_both(DIFF_REG(CP_WATCHDOG), config_.gen.watchdog_cycles);
  write_both(DIFF_REG(GART_TABLE_BASE_LO), static_cast<std::uint32_t>(l.gart_table));
  write_both(DIFF_REG(GART_TABLE_BASE_HI), static_cast<std::uint32_t>(l.gart_table >> 32));
  write_both(DIFF_REG(GART_TABLE_SIZE), l.gart_table_entries);
  write_both(DIFF_REG(PREEMPT_ADDR_LO), static_cast<std::uint32_t>(l.writeback + 0x40));
  write_both(DIFF_REG(PREEMPT_ADDR_HI), static_cast<std::uint32_t>((l.writeback + 0x40) >> 32));
  write_both(DIFF_REG(INT_ENABLE), SGPU_REGS__INT_ENABLE__DMA_COMPLETED_bm | SGPU_REGS__INT_ENABLE__FAULT_bm);
  write_both(DIFF_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
}

// Between steps (the engine settled): the GART on with the aperture's table, or off with the
// table MAP / UNMAP packets write. The TLB is invalidated on the way in (the table changed).
void Runner::gart_on(bool on) {
  const Layout& l = config_.gen.layout;
  const std::uint64_t table = on ? l.aperture_table : l.gart_table;
  write_both(DIFF_REG(GART_CTRL), 0);
  write_both(DIFF_REG(GART_TABLE_BASE_LO), static_cast<std::uint32_t>(table));
  write_both(DIFF_REG(GART_TABLE_BASE_HI), static_cast<std::uint32_t>(table >> 32));
  write_both(DIFF_REG(GART_TABLE_SIZE), on ? gen_.aperture().pages : l.gart_table_entries);
  if (!on) return;
  write_both(DIFF_REG(GART_CMD), SGPU_REGS__GART_CMD__INV_ALL_bm);
  model_.settle();
  rtl_.settle();
  write_both(DIFF_REG(GART_CTRL), SGPU_REGS__GART_CTRL__ENABLE_bm);
}

void Runner::apply(const StepPlan& step) {
  const Layout& l = config_.gen.layout;
  // A GART step's buffers are written where their aperture pages point.
  auto bus = [&](std::uint64_t a) { return step.gart ? gen_.aperture().to_bus(a) : a; };
  if (step.gart) {
    gart_on(true);
    ++result_.gart_steps;
  }
  if (step.retire_watchdog) {
    write_both(DIFF_REG(CP_WATCHDOG), *step.retire_watchdog);
    ++result_.retire_watchdog_steps;
  }
  const std::size_t retired_before = rtl_.retired_fences().size();
  for (unsigned i = 0; i < 2; ++i) {
    Device& d = *both(i);
    std::uint32_t idx = tail_;
    for (const auto& e : step.entries) {
      if (!e.buffer.empty()) d.memory().write(bus(e.entry.buf_addr), e.buffer.data(), 4 * e.buffer.size());
      for (const auto& c : e.children) {
        if (!c.words.empty()) d.memory().write(bus(c.addr), c.words.data(), 4 * c.words.size());
      }
      d.memory().write(l.ring + 32ull * idx, &e.entry, sizeof e.entry);
      idx = (idx + 1) & mask_;
    }
    for (const auto& r : step.errors) d.inject_error(r.lo, r.hi, r.resp);
  }
  for (const auto& e : step.entries) ++result_.injected[static_cast<std::size_t>(e.inject)];
  tail_ = (tail_ + static_cast<std::uint32_t>(step.entries.size())) & mask_;
  if (step.disabled_doorbell) {
    write_both(DIFF_REG(CTRL), 0);
    write_both(DIFF_REG(RING_TAIL), tail_);
    rtl_.settle();
    model_.settle();
    compare_state("doorbell with CTRL.enable = 0");
    write_both(DIFF_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  } else {
    write_both(DIFF_REG(RING_TAIL), tail_);
  }
  // The RTL first: with CP_WATCHDOG near the write latency, whether the watchdog expires while
  // an entry retires is timing, which the untimed model takes from the RTL (only there, and
  // only the fence: every other effect of that fault is still the model's own prediction).
  rtl_.settle();
  const std::uint32_t fault_status = rtl_.mmio_read32(DIFF_REG(FAULT_STATUS));
  const auto reason = static_cast<abi::Fault>((fault_status & SGPU_REGS__FAULT_STATUS__REASON_bm) >>
                                              SGPU_REGS__FAULT_STATUS__REASON_bp);
  const std::uint64_t fault_addr = rtl_.mmio_read32(DIFF_REG(FAULT_ADDR_LO)) |
                                   (std::uint64_t{rtl_.mmio_read32(DIFF_REG(FAULT_ADDR_HI))} << 32);
  if (step.retire_watchdog) {
    if (reason == abi::Fault::Watchdog && fault_addr == l.writeback) {
      model_.model().set_retire_watchdog(rtl_.mmio_read32(DIFF_REG(FAULT_FENCE_LO)) |
                                         (std::uint64_t{rtl_.mmio_read32(DIFF_REG(FAULT_FENCE_HI))} << 32));
      ++result_.retire_watchdog_faults;
    }
    result_.retire_watchdog_retired += rtl_.retired_fences().size() - retired_before;
  }
  if (reason == abi::Fault::BusError && fault_addr >= l.writeback && fault_addr < l.writeback + 16) {
    ++result_.writeback_errors;
  }
  model_.settle();
  model_.model().set_retire_watchdog(std::nullopt);
  if (step.retire_watchdog) write_both(DIFF_REG(CP_WATCHDOG), config_.gen.watchdog_cycles);
  if (step.gart) {
    const model::GartRecord& r = model_.model().gart_record();
    if (r.valid) ++result_.gart_faults_by_reason[static_cast<std::size_t>(r.reason)];
    gart_on(false);
  }
}

// The engine-reset protocol of the programming guide, on both.
void Runner::engine_reset() {
  write_both(DIFF_REG(CTRL), 0);
  write_both(DIFF_REG(RESET), SGPU_REGS__RESET__ENGINE_bm);
  model_.settle();
  rtl_.settle();
  tail_ = 0;
  write_both(DIFF_REG(RING_TAIL), 0);
  write_both(DIFF_REG(CTRL), SGPU_REGS__CTRL__ENABLE_bm);
  ++result_.resets;
}

// A preemption request while the engine is settled (between entries, or faulted: then it stays
// pending until the engine reset drops it), then resume or the engine-reset protocol.
void Runner::preempt_idle() {
  auto& rng = gen_.rng();
  const std::uint64_t pfence = rng();
  write_both(DIFF_REG(PREEMPT_FENCE_LO), static_cast<std::uint32_t>(pfence));
  write_both(DIFF_REG(PREEMPT_FENCE_HI), static_cast<std::uint32_t>(pfence >> 32));
  write_both(DIFF_REG(PREEMPT), SGPU_REGS__PREEMPT__REQUEST_bm);
  model_.settle();
  rtl_.settle();
  ++result_.preemptions;
  if (!compare_state("preemption")) return;
  // A request while preempted waits (PREEMPT_STATUS.pending) and stops the engine again right
  // after the resume. (Two requests before a preemption completes merge into one: timing.)
  if (rng() % 4 == 0) write_both(DIFF_REG(PREEMPT), SGPU_REGS__PREEMPT__REQUEST_bm);
  if (model_.model().faulted() || rng() % 4 == 0) {
    engine_reset();
  } else {
    write_both(DIFF_REG(PREEMPT), SGPU_REGS__PREEMPT__RESUME_bm);
    model_.settle();
    rtl_.settle();
    if (model_.model().preempted()) {  // the waiting request stopped it again
      compare_state("preemption after resume");
      write_both(DIFF_REG(PREEMPT), SGPU_REGS__PREEMPT__RESUME_bm);
      model_.settle();
      rtl_.settle();
    }
  }
  compare_state("resume");
}

bool Runner::compare_state(const char* when) {
  std::ostringstream diffs;
  for (const auto& r : kCompared) {
    const std::uint32_t m = model_.mmio_read32(r.offset);
    const std::uint32_t h = rtl_.mmio_read32(r.offset);
    if (m == h) continue;
    diffs << "  " << r.name << ": model " << hex(m) << ", rtl " << hex(h) << "\n";
  }
  if (model_.irq() != rtl_.irq()) diffs << "  irq: model " << model_.irq() << ", rtl " << rtl_.irq() << "\n";
  // The record's bytes, but those the model knows to be timing dependent (the head word of a
  // retirement the watchdog stopped).
  const std::uint64_t wb = config_.gen.layout.writeback;
  const auto& uncertain = model_.model().uncertain_bytes();
  for (std::uint64_t a = wb; a < wb + 16; ++a) {
    const std::uint8_t m = model_.memory().read8(a);
    const std::uint8_t h = rtl_.memory().read8(a);
    if (m != h && uncertain.count(a) == 0) {
      diffs << "  write-back +" << (a - wb) << ": model " << hex(m) << ", rtl " << hex(h) << "\n";
    }
  }
  for (std::uint64_t a = wb + 0x40; a < wb + 0x50; a += 4) {
    const std::uint32_t m = model_.memory().read32(a);
    const std::uint32_t h = rtl_.memory().read32(a);
    if (m != h) diffs << "  preemption record +" << (a - wb - 0x40) << ": model " << hex(m) << ", rtl " << hex(h) << "\n";
  }
  if (model_.retired_fences() != rtl_.retired_fences()) {
    diffs << "  retired fences differ: model has " << model_.retired_fences().size() << " (last "
          << hex(model_.retired_fences().empty() ? 0 : model_.retired_fences().back()) << "), rtl "
          << rtl_.retired_fences().size() << " (last "
          << hex(rtl_.retired_fences().empty() ? 0 : rtl_.retired_fences().back()) << ")\n";
  }
  if (model_.model().ambiguous()) diffs << "  the generator produced a timing-dependent fault (model flags it ambiguous)\n";
  if (diffs.str().empty()) return true;
  fail(std::string("mismatch after ") + when + " (model fault: " + model_.model().fault().to_string() + ")\n" + diffs.str());
  return false;
}

bool Runner::compare_memory() {
  const Layout& l = config_.gen.layout;
  const auto& uncertain = model_.model().uncertain_bytes();
  std::ostringstream diffs;
  unsigned shown = 0;
  std::vector<std::uint8_t> m(l.data_bytes), h(l.data_bytes);
  model_.memory().read(l.data, m.data(), m.size());
  rtl_.memory().read(l.data, h.data(), h.size());
  for (std::size_t i = 0; i < m.size(); ++i) {
    if (m[i] == h[i] || uncertain.count(l.data + i)) continue;
    if (shown++ < 16) diffs << "  byte " << hex(l.data + i) << ": model " << hex(m[i]) << ", rtl " << hex(h[i]) << "\n";
  }
  if (model_.memory().page_count() != rtl_.memory().page_count()) {
    diffs << "  pages: model " << model_.memory().page_count() << ", rtl " << rtl_.memory().page_count()
          << " (a write landed outside the data region)\n";
  }
  if (diffs.str().empty()) return true;
  fail("memory differs:\n" + diffs.str());
  return false;
}

RunResult Runner::run() {
  setup();
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto& rng = gen_.rng();
  while (result_.ok && model_.model().stats().packets < config_.packets) {
    if (config_.on_progress) config_.on_progress(model_.model().stats().packets);
    const StepPlan step = gen_.next_step(tail_);
    ++result_.steps;
    const std::string where = "step " + std::to_string(result_.steps);
    try {
      apply(step);
    } catch (const std::exception& e) {
      fail(where + ": " + e.what() + "\n" + step.describe());
      break;
    }
    if (!compare_state(where.c_str())) {
      result_.failure += step.describe();
      break;
    }
    for (unsigned i = 0; i < 2; ++i) both(i)->clear_errors();
    // Restore the run-long poison pages (clear_errors removed them).
    const Layout& l = config_.gen.layout;
    for (unsigned i = 0; i < 2; ++i) {
      both(i)->inject_error(l.poison_slverr, l.poison_slverr + 0x1000, model::kRespSlvErr);
      both(i)->inject_error(l.poison_decerr, l.poison_decerr + 0x1000, model::kRespDecErr);
    }
    // Interrupt handling as a driver would do it, with random masks.
    if (unit(rng) < 0.7) write_both(DIFF_REG(INT_STATUS), static_cast<std::uint32_t>(rng() & 0xf));
    if (unit(rng) < 0.1) write_both(DIFF_REG(INT_ENABLE), static_cast<std::uint32_t>(rng() & 0xf));
    if (unit(rng) < 0.05) {
      preempt_idle();
      if (!result_.ok) break;
    }
    const bool faulted = model_.model().faulted();
    if (faulted || unit(rng) < 0.02) {
      engine_reset();
      if (!compare_state("engine reset")) break;
    }
    if (result_.steps % config_.memory_compare_interval == 0 && !compare_memory()) break;
  }
  if (result_.ok) compare_memory();
  const auto& st = model_.model().stats();
  result_.packets = st.packets;
  result_.entries = st.entries;
  result_.retired = st.retired;
  result_.rtl_cycles = rtl_.sim().cycle();
  result_.uncertain_bytes = model_.model().uncertain_bytes().size();
  result_.dummy_reads = gen_.dummy_reads();
  for (std::size_t i = 0; i < 256; ++i) {
    result_.faults_by_reason[i] = st.faults_by_reason[i];
    result_.packets_by_opcode[i] = st.packets_by_opcode[i];
  }
  return result_;
}

}  // namespace

std::string RunResult::summary() const {
  std::ostringstream s;
  s << steps << " steps, " << entries << " entries (" << retired << " retired), " << packets << " packets, "
    << resets << " engine resets, " << preemptions << " preemptions, " << rtl_cycles << " RTL cycles\n  packets:";
  for (const auto& p : abi::kPackets) s << " " << p.name << "=" << packets_by_opcode[static_cast<std::uint8_t>(p.opcode)];
  s << "\n  faults:";
  for (unsigned f = 1; f < 16; ++f) {
    if (faults_by_reason[f]) s << " " << abi::to_string(static_cast<abi::Fault>(f)) << "=" << faults_by_reason[f];
  }
  s << "\n  injected:";
  for (std::size_t i = 1; i < injected.size(); ++i) s << " " << to_string(static_cast<Inject>(i)) << "=" << injected[i];
  s << "\n  GART steps: " << gart_steps << ", copies from the dummy page " << dummy_reads << ", refusals:";
  for (unsigned f = 1; f < gart_faults_by_reason.size(); ++f) {
    if (gart_faults_by_reason[f])
      s << " " << regs::to_string(static_cast<regs::GartFault>(f)) << "=" << gart_faults_by_reason[f];
  }
  return s.str();
}

RunResult run_differential(const RunConfig& config) {
  Runner runner(config);
  return runner.run();
}

}  // namespace sgpu::diff
