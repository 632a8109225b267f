// The post-mortem end to end on the Verilated RTL: every fault code of abi::Fault is provoked
// through libsgpu, and the post-mortem taken before the reset names the fault, finds the
// offending packet in the disassembled buffer, and shows the GART entry of a translation fault;
// through the scheduler, a patched address names its allocation and a hang (TDR) is captured
// with the packet the engine stopped at. The board is the test's own (sim transport over a
// SimDevice it keeps) so that it can inject bus errors and tamper with a ring entry.
#include <catch2/catch.hpp>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <nlohmann/json.hpp>

#include "sgpu/device.hpp"
#include "sgpu/diag/postmortem.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/sched/runtime.hpp"
#include "sgpu/umd/command_list.hpp"
#include "sim/sim_device.hpp"
#include "sim/sim_transport.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

namespace {

constexpr std::uint8_t kSlvErr = 2;
constexpr unsigned kRingLog2 = 4;

/// Forwards to the sim transport; when armed, sets an undefined flag bit in the ring entry the
/// doorbell is about to publish (the ring is the first DMA allocation Device::open makes), so
/// the device reads a malformed entry that Device::submit would never write.
class RingTamper final : public Transport {
 public:
  explicit RingTamper(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}
  bool armed = false;

  std::uint32_t read32(std::uint32_t offset) override { return inner_->read32(offset); }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    if (armed && offset == SGPU_REG(RING_TAIL) && ring_) {
      armed = false;
      auto* e = reinterpret_cast<abi::RingEntry*>(ring_) + ((value - 1) & ((1u << kRingLog2) - 1));
      e->flags |= 0x8000'0000u;
    }
    inner_->write32(offset, value);
  }
  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override {
    auto m = inner_->alloc_dma(bytes, align);
    if (m && !ring_) ring_ = m->bytes();
    return m;
  }
  bool wait_irq(std::chrono::nanoseconds timeout) override { return inner_->wait_irq(timeout); }
  std::chrono::nanoseconds now() override { return inner_->now(); }
  std::string_view name() const override { return inner_->name(); }

 private:
  std::unique_ptr<Transport> inner_;
  std::byte* ring_ = nullptr;
};

struct Rig {
  std::shared_ptr<sim::SimDevice> board;
  RingTamper* tamper = nullptr;
  std::optional<Device> dev;
  DmaMemory buffer;  ///< the DMA buffer, mapped at aperture page 1
  DmaMemory target;  ///< a writable page, mapped at aperture page 2
  static constexpr std::uint32_t kBufferPage = 1, kTargetPage = 2, kUnmappedPage = 5;

  Rig() {
    sim::SimConfig cfg;
    test::fast_board(cfg);
    board = std::make_shared<sim::SimDevice>(cfg);
    auto t = std::make_unique<RingTamper>(sim::open_sim_transport_over(board));
    tamper = t.get();
    DeviceOptions opt;
    opt.ring_log2_entries = kRingLog2;
    opt.aperture.table_pages = 64;
    auto d = Device::open(std::move(t), opt);
    if (!d) FAIL(to_string(d.error()));
    dev.emplace(std::move(*d));
    auto b = dev->transport().alloc_dma(4096);
    auto g = dev->transport().alloc_dma(4096);
    REQUIRE(b);
    REQUIRE(g);
    buffer = std::move(*b);
    target = std::move(*g);
    REQUIRE(ap().map(kBufferPage, buffer));
    REQUIRE(ap().map(kTargetPage, target));
  }
  Aperture& ap() { return *dev->aperture(); }
  std::uint64_t buf_gpu() { return ap().gpu_addr(kBufferPage); }
  std::uint64_t dst() { return ap().gpu_addr(kTargetPage); }
  void put(const std::vector<std::uint32_t>& dwords) { std::memcpy(buffer.cpu(), dwords.data(), 4 * dwords.size()); }
};

std::uint32_t hdr(abi::Opcode op, std::uint32_t dwords, std::uint8_t flags = 0) { return abi::make_header(op, dwords, flags); }
std::uint32_t lo(std::uint64_t a) { return static_cast<std::uint32_t>(a); }
std::uint32_t hi(std::uint64_t a) { return static_cast<std::uint32_t>(a >> 32); }
const std::uint32_t kNop = hdr(abi::Opcode::Nop, 1);

/// How to provoke one fault: the buffer (a NOP, then the offending packet at byte 4, then more),
/// its submitted length and flags, what to arrange first, and the packet the post-mortem must
/// point at (none: the fault is not in a packet of the buffer).
struct FaultCase {
  std::function<std::vector<std::uint32_t>(Rig&)> build;
  std::uint32_t end_offset = 0;  ///< 0 = the whole buffer built
  std::uint32_t flags = 0;
  std::function<void(Rig&)> arrange;
  std::optional<std::string_view> offending = std::nullopt;
};

std::map<abi::Fault, FaultCase> fault_cases() {
  using abi::Opcode;
  std::map<abi::Fault, FaultCase> c;
  c[abi::Fault::IllegalOpcode] = {[](Rig&) { return std::vector<std::uint32_t>{kNop, 0x0001007f, kNop}; }, 0, 0, {}, "UNKNOWN"};
  c[abi::Fault::BadLength] = {[](Rig& r) {
                                return std::vector<std::uint32_t>{kNop, hdr(Opcode::WriteData, 3), lo(r.dst()), hi(r.dst()), kNop};
                              }, 0, 0, {}, "WRITE_DATA"};
  c[abi::Fault::BufferOverrun] = {[](Rig&) { return std::vector<std::uint32_t>{kNop, hdr(Opcode::Nop, 8), 0, kNop}; }, 12, 0, {},
                                  "NOP"};
  c[abi::Fault::PrivilegedPacket] = {[](Rig&) {
                                       return std::vector<std::uint32_t>{kNop, hdr(Opcode::TlbInvalidate, 3, 1), 0, 0, kNop};
                                     }, 0, 0, {}, "TLB_INVALIDATE"};
  c[abi::Fault::BadRingEntry] = {[](Rig&) { return std::vector<std::uint32_t>{kNop, kNop}; }, 0, 0,
                                 [](Rig& r) { r.tamper->armed = true; }, std::nullopt};
  c[abi::Fault::BadAlignment] = {[](Rig& r) {
                                   return std::vector<std::uint32_t>{kNop, hdr(Opcode::WriteData, 4), lo(r.dst() + 2), hi(r.dst()), 1, kNop};
                                 }, 0, 0, {}, "WRITE_DATA"};
  c[abi::Fault::BusError] = {[](Rig& r) {
                               return std::vector<std::uint32_t>{kNop, hdr(Opcode::WriteData, 4), lo(r.dst() + 16), hi(r.dst()), 1, kNop};
                             }, 0, 0,
                             [](Rig& r) {
                               const std::uint64_t bus = r.target.bus_addr();
                               r.board->memory_port().inject_error(bus, bus + 4096, kSlvErr);
                             },
                             "WRITE_DATA"};
  c[abi::Fault::Translation] = {[](Rig& r) {
                                  const std::uint64_t a = r.ap().gpu_addr(Rig::kUnmappedPage, 0x40);
                                  return std::vector<std::uint32_t>{kNop, hdr(Opcode::WriteData, 4), lo(a), hi(a), 1, kNop};
                                }, 0, 0, {}, "WRITE_DATA"};
  c[abi::Fault::ReservedBits] = {[](Rig&) { return std::vector<std::uint32_t>{kNop, hdr(Opcode::Nop, 1, 0x80), kNop}; }, 0, 0, {},
                                 "NOP"};
  c[abi::Fault::CopyOverlap] = {[](Rig& r) {
                                  const std::uint64_t d = r.dst();
                                  return std::vector<std::uint32_t>{kNop, hdr(Opcode::Copy, 6), lo(d), hi(d), lo(d + 8), hi(d + 8), 16, kNop};
                                }, 0, 0, {}, "COPY"};
  c[abi::Fault::Watchdog] = {[](Rig& r) {
                               const std::uint64_t d = r.dst();
                               return std::vector<std::uint32_t>{kNop, hdr(Opcode::WaitMem, 6, static_cast<std::uint8_t>(abi::WaitMemFunc::Never)),
                                                                 lo(d), hi(d), 0, 0, 8, kNop};
                             }, 0, 0, [](Rig& r) { r.dev->transport().write32(SGPU_REG(CP_WATCHDOG), 500); }, "WAIT_MEM"};
  c[abi::Fault::IndirectDepth] = {[](Rig& r) {
                                    // The buffer calls its own first 20 bytes (NOP + this INDIRECT).
                                    return std::vector<std::uint32_t>{kNop, hdr(Opcode::Indirect, 4), lo(r.buf_gpu()), hi(r.buf_gpu()), 20, kNop};
                                  }, 0, 0, {}, "INDIRECT"};
  c[abi::Fault::MapRange] = {[](Rig& r) {
                               const std::uint64_t bus = r.target.bus_addr();
                               return std::vector<std::uint32_t>{kNop, hdr(Opcode::Map, 6), 0x7fffff, 1, 3, lo(bus), hi(bus), kNop};
                             }, 0, abi::ring_flags::kPrivileged, {}, "MAP"};
  c[abi::Fault::PhysicalRange] = {[](Rig&) {
                                    const std::uint64_t a = 0xffff'ffff'ffff'f000ull;
                                    return std::vector<std::uint32_t>{kNop, hdr(Opcode::WritePhysical, 4), lo(a), hi(a), 1, kNop};
                                  }, 0, abi::ring_flags::kPrivileged, {}, "WRITE_PHYSICAL"};
  return c;
}

}  // namespace

TEST_CASE("postmortem sim: every fault code has a case here", "[e2e][postmortem]") {
  const auto cases = fault_cases();
  for (unsigned code = 1; code < 256; ++code) {
    const auto f = static_cast<abi::Fault>(code);
    if (abi::to_string(f) == "UNKNOWN_FAULT") continue;
    INFO(abi::to_string(f));
    CHECK(cases.count(f) == 1);
  }
}

TEST_CASE("postmortem sim: each fault code is captured before the reset, decoded and located", "[e2e][postmortem]") {
  const auto cases = fault_cases();
  for (const auto& [fault, fc] : cases) {
    INFO("fault " << abi::to_string(fault));
    Rig r;
    const auto words = fc.build(r);
    r.put(words);
    if (fc.arrange) fc.arrange(r);
    Submission s;
    s.gpu_address = r.buf_gpu();
    s.end_offset = fc.end_offset ? fc.end_offset : static_cast<std::uint32_t>(4 * words.size());
    s.context_id = 7;
    s.flags = fc.flags;
    auto fence = r.dev->submit_next(s);
    REQUIRE(fence);
    const Status st = r.dev->wait_fence(*fence, 2ms);
    REQUIRE_FALSE(st);
    REQUIRE(st.error().code == Errc::DeviceFault);

    diag::CaptureInput in;
    in.summary = "test";
    in.buffer = r.buffer.cpu();
    in.buffer_bytes = r.buffer.size();
    const diag::PostMortem pm = diag::capture(*r.dev, in);
    REQUIRE(pm.fault);
    CHECK(pm.fault->reason == fault);
    CHECK(pm.fault->fence == *fence);
    REQUIRE(pm.buffer);
    const auto& b = *pm.buffer;
    CHECK(b.entry.fence == fence->value());
    CHECK(b.entry.context_id == 7);
    INFO(b.located_by);
    if (fc.offending) {
      REQUIRE(b.offending_offset);
      CHECK(*b.offending_offset == 4);
      bool found = false;
      for (const auto& p : b.packets)
        if (p.offset == 4) found = p.name() == *fc.offending;
      CHECK(found);
    } else {
      CHECK_FALSE(b.offending_offset);
    }
    const std::string text = diag::to_text(pm);
    CHECK_THAT(text, Catch::Contains(fmt::format("reason      {} (code {})", abi::to_string(fault), static_cast<int>(fault))));
    if (fc.offending) CHECK_THAT(text, Catch::Contains(fmt::format("=> 0x00000004  {}", *fc.offending)));
    const auto j = nlohmann::json::parse(diag::to_json(pm));
    CHECK(j["fault"]["reason"] == std::string(abi::to_string(fault)));
    // The ring around head and tail, the faulting slot marked.
    bool faulting_slot = false;
    for (const auto& slot : j["ring"]["slots"]) faulting_slot = faulting_slot || slot["faulting"].get<bool>();
    CHECK(faulting_slot);
    // The GART entry the DMA buffer is fetched through is shown.
    bool buffer_page = false;
    for (const auto& g : pm.gart) buffer_page = buffer_page || g.page == Rig::kBufferPage;
    CHECK(buffer_page);

    if (fault == abi::Fault::Translation) {
      bool dummy = false;
      for (const auto& g : pm.gart)
        if (g.page == Rig::kUnmappedPage) dummy = g.dummy && !g.writable;
      CHECK(dummy);
      REQUIRE(pm.fault->gart);
      CHECK_THAT(text, Catch::Contains("WRITE_PROTECT"));
    }
    if (fault == abi::Fault::BadRingEntry) CHECK_THAT(text, Catch::Contains("ring entry flags undefined 0x80000000"));
    if (fault == abi::Fault::Watchdog) r.dev->transport().write32(SGPU_REG(CP_WATCHDOG), 0);
    if (fault == abi::Fault::BusError) r.board->memory_port().clear_errors();
    // The capture changed nothing: the engine recovers as always.
    REQUIRE(r.dev->reset_engine());
    r.put({kNop});
    s.end_offset = 4;
    s.flags = 0;
    auto again = r.dev->submit_next(s);
    REQUIRE(again);
    REQUIRE(r.dev->wait_fence(*again, 2ms));
  }
}

// ---- through the scheduler

namespace {

sched::RuntimeOptions small_options() {
  sched::RuntimeOptions o;
  o.device.aperture.table_pages = 2048;
  o.kernel_window_pages = sched::kernel_window_pages_for(16);
  o.scheduler.tdr_delay = 300us;
  o.scheduler.preempt_timeout = 50us;
  return o;
}

kmd::Allocation make_alloc(kmd::Device& dev, std::uint64_t bytes) {
  auto a = dev.create_allocation(kmd::AllocationInfo::placed(bytes, kmd::SegmentSet::of(1), 1, kmd::AllocationInfoFlags::kCpuVisible));
  if (!a) FAIL(to_string(a.error()));
  return std::move(*a);
}

struct SchedRig {
  std::vector<diag::PostMortem> taken;
  std::unique_ptr<sched::Runtime> rt;
  std::unique_ptr<kmd::Device> dev;
  std::unique_ptr<sched::ScheduledContext> ctx;

  explicit SchedRig(sched::RuntimeOptions o, bool capture = true) {
    if (capture) o.scheduler.postmortem = [this](const diag::PostMortem& pm) { taken.push_back(pm); };
    auto r = sched::Runtime::open(test::open_tb_transport("sim"), std::move(o));
    if (!r) FAIL(to_string(r.error()));
    rt = std::move(*r);
    auto d = rt->adapter().create_device({});
    REQUIRE(d);
    dev = std::make_unique<kmd::Device>(std::move(*d));
    auto c = rt->create_context(*dev);
    REQUIRE(c);
    ctx = std::move(*c);
  }
  ~SchedRig() {
    ctx.reset();
    dev.reset();
  }
  sched::Scheduler& s() { return rt->scheduler(); }
  void run(const umd::CommandList& cl, bool expect_ok) {
    auto id = s().submit(ctx->get(), cl);
    REQUIRE(id);
    auto st = s().wait(*id, 5ms);
    CHECK(static_cast<bool>(st) == expect_ok);
  }
};

}  // namespace

TEST_CASE("postmortem sched: a patched address that was corrupted names its allocation and the GART entry",
          "[e2e][postmortem][sched]") {
  sched::RuntimeOptions o = small_options();
  bool corrupt = false;
  std::uint64_t stray = 0;
  o.scheduler.after_patch = [&](void* dma, std::uint32_t start, std::uint32_t) {
    if (!corrupt) return;
    corrupt = false;
    auto* w = static_cast<std::uint32_t*>(dma) + start / 4;
    w[abi::payload::write_data::kAddrLo] = lo(stray);
    w[abi::payload::write_data::kAddrHi] = hi(stray);
  };
  SchedRig r(o);
  stray = r.rt->device().aperture()->gpu_addr(r.rt->window().first_page() - 1);
  auto a = make_alloc(*r.dev, 4096);
  umd::CommandList warm;
  REQUIRE(warm.fill(a.handle(), 0, 4096, 0));
  r.run(warm, true);
  CHECK(r.taken.empty());

  umd::CommandList bad;
  const std::uint32_t v = 0x1234;
  REQUIRE(bad.write_data(a.handle(), 0x40, &v, 1));
  corrupt = true;
  r.run(bad, false);
  REQUIRE(r.taken.size() == 1);
  REQUIRE(r.s().last_postmortem());
  const diag::PostMortem& pm = r.taken[0];
  CHECK(pm.cause == diag::PostMortemCause::Fault);
  REQUIRE(pm.fault);
  CHECK(pm.fault->reason == abi::Fault::Translation);
  CHECK_THAT(pm.summary, Catch::Contains("device fault"));
  REQUIRE(pm.buffer);
  REQUIRE(pm.buffer->offending_offset);
  const std::string text = diag::to_text(pm);
  // The allocation list names the allocation; the patch list says the field was patched with it.
  bool listed = false;
  for (const auto& al : pm.buffer->allocations) listed = listed || al.handle == a.handle();
  CHECK(listed);
  CHECK_THAT(text, Catch::Contains(fmt::format("patched: allocation #")));
  CHECK_THAT(text, Catch::Contains(fmt::format("handle {:#x}", a.handle().value)));
  CHECK_THAT(text, Catch::Contains(fmt::format("BUT the field holds {:#x}", stray)));
  bool stray_page = false;
  for (const auto& g : pm.gart) stray_page = stray_page || (g.gpu_address == stray && g.dummy);
  CHECK(stray_page);
  bool fault_irq = false;
  for (const auto& i : pm.interrupts) fault_irq = fault_irq || i.events.fault;
  CHECK(fault_irq);
  CHECK(r.s().counters().recoveries == 1);
}

TEST_CASE("postmortem sched: a fault inside an allocation names the allocation at FAULT_ADDR", "[e2e][postmortem][sched]") {
  sched::RuntimeOptions o = small_options();
  bool corrupt = false;
  o.scheduler.after_patch = [&](void* dma, std::uint32_t start, std::uint32_t) {
    if (!corrupt) return;
    corrupt = false;
    static_cast<std::uint32_t*>(dma)[start / 4 + abi::payload::write_data::kAddrLo] += 2;  // misaligned
  };
  SchedRig r(o);
  auto a = make_alloc(*r.dev, 4096);
  umd::CommandList warm;
  REQUIRE(warm.fill(a.handle(), 0, 4096, 0));
  r.run(warm, true);
  umd::CommandList bad;
  const std::uint32_t v = 1;
  REQUIRE(bad.write_data(a.handle(), 0x80, &v, 1));
  corrupt = true;
  r.run(bad, false);
  REQUIRE(r.taken.size() == 1);
  const auto& pm = r.taken[0];
  REQUIRE(pm.fault);
  CHECK(pm.fault->reason == abi::Fault::BadAlignment);
  REQUIRE(pm.fault_allocation);
  CHECK(pm.fault_allocation->handle == a.handle());
  CHECK(pm.fault->address == pm.fault_allocation->gpu_address + 0x82);
  CHECK_THAT(diag::to_text(pm), Catch::Contains("(allocation #"));
}

TEST_CASE("postmortem sched: a hang (TDR) is captured with the packet the engine stopped at", "[e2e][postmortem][sched]") {
  SchedRig r(small_options());
  auto sem = make_alloc(*r.dev, 4096);
  umd::CommandList warm;
  REQUIRE(warm.fill(sem.handle(), 0, 4096, 0));
  r.run(warm, true);
  umd::CommandList hang;
  REQUIRE(hang.nop(2));
  REQUIRE(hang.wait(sem.handle(), 0, abi::WaitMemFunc::Eq, 1));
  r.run(hang, false);
  REQUIRE(r.taken.size() == 1);
  const auto& pm = r.taken[0];
  CHECK(pm.cause == diag::PostMortemCause::Timeout);
  CHECK_FALSE(pm.fault);
  CHECK_THAT(pm.summary, Catch::Contains("ran longer than TdrDelay"));
  REQUIRE(pm.buffer);
  REQUIRE(pm.buffer->offending_offset);  // the RTL answers the preemption request
  bool wait = false;
  for (const auto& p : pm.buffer->packets)
    if (p.offset == *pm.buffer->offending_offset) wait = p.name() == "WAIT_MEM";
  CHECK(wait);
  const std::string text = diag::to_text(pm);
  CHECK_THAT(text, Catch::Contains("=== sgpu post-mortem: timeout"));
  CHECK_THAT(text, Catch::Contains("<- hung"));
  CHECK_THAT(text, Catch::Contains("func=EQ"));
  CHECK_THAT(text, Catch::Contains("PREEMPT_OFFSET"));
}

TEST_CASE("postmortem sched: without the option nothing is captured", "[e2e][postmortem][sched]") {
  SchedRig r(small_options(), false);
  auto sem = make_alloc(*r.dev, 4096);
  umd::CommandList hang;
  REQUIRE(hang.wait(sem.handle(), 0, abi::WaitMemFunc::Never, 0));
  r.run(hang, false);
  CHECK(r.s().counters().recoveries == 1);
  CHECK_FALSE(r.s().last_postmortem());
}
