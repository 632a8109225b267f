// End to end: libsgpu on the sim transport against the Verilated RTL (sgpu_top), and again on
// every backend of the parity runs (tb_transports.hpp).
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace std::chrono_literals;

namespace {

std::unique_ptr<Transport> e2e_transport() { return test::open_e2e_transport(); }

Device open_sim(unsigned ring_log2 = 6) {
  DeviceOptions opt;
  opt.ring_log2_entries = ring_log2;
  // These tests exercise the ring protocol with buffers and targets at system-physical (bus)
  // addresses, as in bring-up: the GART stays off. test_aperture_sim.cpp runs with it on.
  opt.gart = false;
  auto d = Device::open(e2e_transport(), opt);
  if (!d) FAIL(to_string(d.error()));
  return std::move(*d);
}

DmaMemory alloc(Transport& t, std::size_t bytes) {
  auto m = t.alloc_dma(bytes);
  REQUIRE(m);
  return std::move(*m);
}

// A buffer holding just a FENCE of `value` to `slot`.
DmaMemory fence_buffer(Transport& t, const DmaMemory& slot, std::uint64_t value, std::uint32_t& end) {
  auto buf = alloc(t, 4096);
  PacketWriter w(buf);
  REQUIRE(w.fence(slot.bus_addr(), value, abi::fence_flags::kValue64));
  end = w.offset();
  return buf;
}

}  // namespace

TEST_CASE("every register field with a reset value reads it through the host", "[e2e][parity][regs]") {
  auto t = e2e_transport();
  std::size_t checked = 0;
  for (const auto& f : regs::all_fields()) {
    if (!f.reset) continue;
    INFO(f.reg << "." << f.field << " at " << f.offset);
    CHECK(f.bits.get(t->read32(f.offset)) == *f.reset);
    ++checked;
  }
  CHECK(checked >= 10);
}

TEST_CASE("open reports the device's identity and capabilities", "[e2e][parity][device]") {
  Device dev = open_sim();
  const DeviceInfo& i = dev.info();
  CHECK(i.magic == SGPU_REGS__ID_MAGIC__VALUE_reset);
  CHECK(i.version_major == SGPU_REGS__ID_VERSION__MAJOR_reset);
  CHECK(i.bus_data_bytes >= 4);
  CHECK((i.bus_data_bytes & (i.bus_data_bytes - 1)) == 0);
  CHECK(i.page_size() == 4096);
  CHECK(i.max_ring_log2 >= 1);
  CHECK(dev.transport().name() == test::e2e_backend_name());
}

TEST_CASE("a submitted buffer's fence arrives with an interrupt, head write-back equals tail", "[e2e][parity][fence]") {
  Device dev = open_sim();
  Transport& t = dev.transport();
  auto slot = alloc(t, 4096);
  std::uint32_t end = 0;
  auto buf = fence_buffer(t, slot, 0x1234'5678'9abc'def0ull, end);
  auto fence = dev.submit_next({&buf, 0, end, 0, 0});
  REQUIRE(fence);
  CHECK(*fence == 1);

  REQUIRE(t.wait_irq(1ms));  // the interrupt line rises...
  const std::uint32_t status = t.read32(SGPU_REG(INT_STATUS));
  CHECK(SGPU_FIELD(INT_STATUS, DMA_COMPLETED).get(status) == 1);
  CHECK(SGPU_FIELD(INT_STATUS, FAULT).get(status) == 0);
  REQUIRE(dev.wait_fence(*fence, 1ms));  // ...and the fence is there

  CHECK(dev.completed_fence() == *fence);
  CHECK(dev.ring_head() == dev.ring_tail());
  CHECK(dev.ring_tail() == 1);
  CHECK(t.read32(SGPU_REG(RING_HEAD)) == dev.ring_tail());
  CHECK(t.read32(SGPU_REG(FENCE_DONE_LO)) == *fence);
  CHECK(t.read32(SGPU_REG(FENCE_DONE_HI)) == 0);
  CHECK(slot.as<std::uint64_t>()[0] == 0x1234'5678'9abc'def0ull);
  // The fence was already in memory, so wait_fence had no interrupt to acknowledge: the status
  // is still pending (and a level-triggered line still high; a message was taken by the wait
  // above); writing the status back (W1C) drops it.
  CHECK(t.read32(SGPU_REG(INT_STATUS)) == status);
  if (test::e2e_interrupt_is_level()) CHECK(t.wait_irq(0ns));
  t.write32(SGPU_REG(INT_STATUS), status);
  CHECK(t.read32(SGPU_REG(INT_STATUS)) == 0);
  CHECK_FALSE(t.wait_irq(10us));
}

TEST_CASE("WRITE_DATA bytes land in host memory and nothing else changes", "[e2e][parity][write_data]") {
  Device dev = open_sim();
  Transport& t = dev.transport();
  auto target = alloc(t, 8192);
  std::memset(target.cpu(), 0xee, target.size());
  std::vector<std::uint32_t> data(300);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = 0xc0de0000u + static_cast<std::uint32_t>(i);
  auto buf = alloc(t, 4096);
  PacketWriter w(buf);
  REQUIRE(w.nop(3));
  const std::uint32_t offset = 4092;  // crosses a page boundary
  REQUIRE(w.write_data(target.bus_addr() + offset, data.data(), data.size()));
  REQUIRE(w.write_data(target.bus_addr() + 16, {0xabad1dea}));
  auto fence = dev.submit_next({&buf, 0, w.offset(), 0, 0});
  REQUIRE(fence);
  REQUIRE(dev.wait_fence(*fence, 1ms));

  const auto* bytes = target.as<const std::uint8_t>();
  for (std::size_t i = 0; i < target.size(); ++i) {
    std::uint8_t expected = 0xee;
    if (i >= offset && i < offset + data.size() * 4)
      expected = static_cast<std::uint8_t>(data[(i - offset) / 4] >> (8 * ((i - offset) % 4)));
    if (i >= 16 && i < 20) expected = static_cast<std::uint8_t>(0xabad1deau >> (8 * (i - 16)));
    if (bytes[i] != expected) FAIL("byte " << i << " is " << int(bytes[i]) << ", expected " << int(expected));
  }
}

TEST_CASE("a zero-length submission only retires its fence", "[e2e][parity][fence]") {
  Device dev = open_sim();
  auto buf = alloc(dev.transport(), 4096);
  auto fence = dev.submit_next({&buf, 0, 0, 0, 0});
  REQUIRE(fence);
  REQUIRE(dev.wait_fence(*fence, 1ms));
  CHECK(dev.completed_fence() == *fence);
}

TEST_CASE("submissions wrap around a small ring in order", "[e2e][parity][ring]") {
  Device dev = open_sim(2);  // 4 entries, 3 in flight at most
  Transport& t = dev.transport();
  auto slots = alloc(t, 4096);
  std::vector<DmaMemory> bufs;
  std::vector<std::uint32_t> ends;
  for (unsigned i = 0; i < 11; ++i) {
    auto buf = alloc(t, 4096);
    PacketWriter w(buf);
    REQUIRE(w.fence(slots.bus_addr() + 8 * i, 100 + i, abi::fence_flags::kValue64));
    ends.push_back(w.offset());
    bufs.push_back(std::move(buf));
  }
  RingFence last;
  for (unsigned i = 0; i < bufs.size(); ++i) {
    auto fence = dev.submit_next({&bufs[i], 0, ends[i], 0, 0});
    if (!fence) {
      REQUIRE(fence.error().code == Errc::Busy);
      REQUIRE(dev.wait_fence(dev.completed_fence() + 1, 1ms));
      fence = dev.submit_next({&bufs[i], 0, ends[i], 0, 0});
    }
    REQUIRE(fence);
    CHECK(*fence == last + 1);
    last = *fence;
  }
  REQUIRE(dev.wait_fence(last, 1ms));
  CHECK(dev.ring_head() == dev.ring_tail());
  for (unsigned i = 0; i < bufs.size(); ++i) CHECK(slots.as<std::uint64_t>()[i] == 100 + i);
}

TEST_CASE("an unknown opcode faults with the header in detail, reset_engine recovers", "[e2e][parity][fault]") {
  Device dev = open_sim();
  Transport& t = dev.transport();
  auto slots = alloc(t, 4096);
  std::uint32_t good_end = 0;
  auto good = fence_buffer(t, slots, 1, good_end);

  const std::uint32_t header = (2u << abi::header::kDwordsLsb) | (0xeeu << abi::header::kOpcodeLsb);
  REQUIRE(abi::find_packet(abi::header_opcode(header)) == nullptr);
  auto bad = alloc(t, 4096);
  PacketWriter w(bad);
  REQUIRE(w.nop());
  const std::uint32_t bad_offset = w.offset();
  REQUIRE(w.raw({header, 0}));
  REQUIRE(w.fence(slots.bus_addr() + 8, 2, abi::fence_flags::kValue64));

  const RingFence f1 = dev.submit_next({&good, 0, good_end, 0, 0}).value();
  const RingFence f2 = dev.submit_next({&bad, 0, w.offset(), 7, 0}).value();
  const RingFence f3 = dev.submit_next({&good, 0, good_end, 0, 0}).value();  // queued behind the fault

  auto waited = dev.wait_fence(f2, 1ms);
  REQUIRE_FALSE(waited);
  INFO(waited.error().message);
  CHECK(waited.error().code == Errc::DeviceFault);
  CHECK_THAT(waited.error().message, Catch::Contains("ILLEGAL_OPCODE"));
  CHECK(dev.completed_fence() == f1);
  CHECK(SGPU_FIELD(STATUS, FAULTED).get(t.read32(SGPU_REG(STATUS))) == 1);

  auto rec = dev.fault();
  REQUIRE(rec);
  REQUIRE(rec->has_value());
  const FaultRecord& f = **rec;
  INFO(to_string(f));
  CHECK(f.reason == abi::Fault::IllegalOpcode);
  CHECK(f.detail == header);
  CHECK(f.fence == f2);
  CHECK(f.ring_index == 1);
  CHECK(f.address == bad.bus_addr() + bad_offset);
  CHECK(slots.as<std::uint64_t>()[1] == 0);  // nothing after the bad packet ran

  REQUIRE(dev.reset_engine());
  auto none = dev.fault();
  REQUIRE(none);
  CHECK_FALSE(none->has_value());
  auto aborted = dev.wait_fence(f3, 1ms);
  REQUIRE_FALSE(aborted);
  CHECK(aborted.error().code == Errc::Aborted);

  const RingFence f4 = dev.submit_next({&good, 0, good_end, 0, 0}).value();
  CHECK(f4 == f3 + 1);
  REQUIRE(dev.wait_fence(f4, 1ms));
  CHECK(dev.completed_fence() == f4);
  CHECK(dev.ring_head() == dev.ring_tail());
}

TEST_CASE("waiting for a fence never submitted times out naming the last fence seen", "[e2e][parity][fence]") {
  Device dev = open_sim();
  auto buf = alloc(dev.transport(), 4096);
  const RingFence f = dev.submit_next({&buf, 0, 0, 0, 0}).value();
  REQUIRE(dev.wait_fence(f, 1ms));
  const auto t0 = dev.transport().now();
  auto r = dev.wait_fence(f + 5, 20us);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::Timeout);
  CHECK_THAT(r.error().message,
             Catch::Contains("fence " + std::to_string((f + 5).value())) && Catch::Contains("last fence seen 1"));
  CHECK(dev.transport().now() - t0 >= 20us);  // it waited in simulated time
}

namespace {
// A buffer holding one WAIT_MEM that can never be satisfied (a hang only a preemption, the
// watchdog or an engine reset ends).
DmaMemory hang_buffer(Transport& t, const DmaMemory& word, std::uint32_t& end) {
  auto buf = alloc(t, 4096);
  PacketWriter w(buf);
  REQUIRE(w.wait_mem(word.bus_addr(), abi::WaitMemFunc::Never, 0, 0xffffffffu, 16));
  end = w.offset();
  return buf;
}
}  // namespace

TEST_CASE("explicit fences: taken as given, refused when not newer, resubmittable after a reset",
          "[e2e][parity][fence][reset]") {
  Device dev = open_sim();
  Transport& t = dev.transport();
  auto slot = alloc(t, 4096);
  std::uint32_t end = 0;
  auto buf = fence_buffer(t, slot, 1, end);
  Submission s{&buf, 0, end, 0, abi::ring_flags::kPrivileged};

  auto f10 = dev.submit(s, RingFence{10});
  REQUIRE(f10);
  CHECK(*f10 == 10);
  REQUIRE(dev.wait_fence(RingFence{10}, 1ms));
  CHECK(dev.completed_fence() == 10);

  auto again = dev.submit(s, RingFence{10});  // not newer than the ring's last fence
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::InvalidArgument);
  CHECK_FALSE(again.error().hardware_touched);
  CHECK(again.error().message.find("explicit fence 10") != std::string::npos);

  // Hang the engine, queue two more, reset: the real completed fence stays, 11..13 are aborted.
  auto word = alloc(t, 4096);
  std::uint32_t hang_end = 0;
  auto hang = hang_buffer(t, word, hang_end);
  REQUIRE(dev.submit_next({&hang, 0, hang_end, 0, abi::ring_flags::kPrivileged}));
  REQUIRE(dev.submit_next(s));
  REQUIRE(dev.submit_next(s));
  CHECK(dev.last_submitted_fence() == 13);
  CHECK(dev.wait_fence(RingFence{11}, 20us).error().code == Errc::Timeout);
  REQUIRE(dev.reset_engine());
  CHECK(dev.completed_fence() == 10);
  CHECK(dev.last_aborted_fence() == 13);
  CHECK(dev.wait_fence(RingFence{12}, 1us).error().code == Errc::Aborted);

  // Resubmitting 12 with its original ID makes it live again; 11 and 13 stay aborted.
  REQUIRE(dev.submit(s, RingFence{12}));
  REQUIRE(dev.wait_fence(RingFence{12}, 1ms));
  CHECK(dev.completed_fence() == 12);
  CHECK(dev.wait_fence(RingFence{11}, 1us).error().code == Errc::Aborted);
  CHECK(dev.wait_fence(RingFence{13}, 1us).error().code == Errc::Aborted);
  // numbering continues after the highest fence ever submitted
  auto next = dev.submit_next(s);
  REQUIRE(next);
  CHECK(*next == 14);
}

TEST_CASE("preemption of a hung wait: interrupt, record and state, reset discards the entry",
          "[e2e][parity][preempt]") {
  Device dev = open_sim();
  REQUIRE(dev.info().has_preemption);
  Transport& t = dev.transport();
  auto word = alloc(t, 4096);
  auto slot = alloc(t, 4096);
  std::uint32_t end = 0, hang_end = 0;
  auto done = fence_buffer(t, slot, 1, end);
  auto hang = hang_buffer(t, word, hang_end);
  const Submission first{&done, 0, end, 7, abi::ring_flags::kPrivileged};
  REQUIRE(dev.submit_next(first));
  auto hung = dev.submit_next({&hang, 0, hang_end, 7, abi::ring_flags::kPrivileged});
  REQUIRE(hung);
  REQUIRE(dev.wait_fence(*hung - 1, 1ms));
  REQUIRE(dev.wait_fence(*hung, 20us).error().code == Errc::Timeout);

  auto before = dev.preemption_state();
  REQUIRE(before);
  CHECK_FALSE(before->preempted);
  REQUIRE(dev.request_preemption(RingFence{0x1234}));
  if (!test::e2e_preempts_inside_entries()) {
    // The reference model: the request stays pending while the engine hangs in the wait; no
    // preemption interrupt; the engine reset drops the request and discards the entry.
    CHECK_FALSE(dev.wait_interrupt(100us).value());
    auto st = dev.preemption_state();
    REQUIRE(st);
    CHECK(st->pending);
    CHECK_FALSE(st->preempted);
    REQUIRE(dev.reset_engine());
    CHECK(dev.last_aborted_fence() == *hung);
    CHECK_FALSE(dev.preemption_state().value().pending);
    auto after = dev.submit_next(first);
    REQUIRE(after);
    REQUIRE(dev.wait_fence(*after, 1ms));
    return;
  }
  bool preempted = false;
  for (int i = 0; i < 100 && !preempted; ++i) {
    auto irq = dev.wait_interrupt(10us);
    REQUIRE(irq);
    if (!*irq) continue;
    auto ev = dev.acknowledge_interrupts();
    REQUIRE(ev);
    CHECK_FALSE(ev->fault);
    preempted = ev->preempted;
  }
  REQUIRE(preempted);
  auto st = dev.preemption_state();
  REQUIRE(st);
  CHECK(st->preempted);
  CHECK_FALSE(st->pending);
  CHECK(st->in_entry);
  CHECK(st->offset == 0);  // the wait is the first packet: it restarts from there
  CHECK(st->preemption_fence == 0x1234);
  CHECK(st->last_completed == *hung - 1);
  CHECK_FALSE(dev.latched_fault().has_value());

  REQUIRE(dev.reset_engine());
  CHECK(dev.last_aborted_fence() == *hung);
  CHECK(dev.completed_fence() == *hung - 1);
  auto after = dev.submit_next(first);
  REQUIRE(after);
  REQUIRE(dev.wait_fence(*after, 1ms));
}
