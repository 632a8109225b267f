// The pcie transport above the seam over the simulated PCI function (tb/pcie): what open does to
// configuration space, DMA addresses against reach and IOMMU ranges, MSI, the no-IOMMU path with
// fence polling, a broken Bus Master, a degraded link and a surprise removal, each through the
// same driver code that runs on a card. (The whole e2e suite also runs over "pcie-sim".)
#include <catch2/catch.hpp>

#include "pcie/pcie_sim_transport.hpp"
#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::pcie;
using namespace std::chrono_literals;

namespace {

PcieSimOptions fast() {
  PcieSimOptions o;
  test::fast_board(o.card.sim);
  return o;
}

struct Opened {
  std::unique_ptr<Transport> transport;
  SimPciFunction* function = nullptr;
  std::vector<std::string> warnings;
};

Opened open(PcieSimOptions o) {
  Opened out;
  auto* w = &out.warnings;
  o.transport.warn = [w](std::string_view s) { w->emplace_back(s); };
  auto t = open_pcie_sim(o, &out.function);
  if (!t) FAIL(to_string(t.error()));
  out.transport = std::move(*t);
  return out;
}

// Counts register reads and writes on their way to the transport below.
class Counting final : public Transport {
 public:
  explicit Counting(std::unique_ptr<Transport> t) : t_(std::move(t)) {}
  std::uint32_t read32(std::uint32_t o) override {
    ++reads;
    return t_->read32(o);
  }
  void write32(std::uint32_t o, std::uint32_t v) override {
    ++writes;
    t_->write32(o, v);
  }
  Result<DmaMemory> alloc_dma(std::size_t b, std::size_t a) override { return t_->alloc_dma(b, a); }
  bool wait_irq(std::chrono::nanoseconds d) override { return t_->wait_irq(d); }
  std::chrono::nanoseconds now() override { return t_->now(); }
  std::string_view name() const override { return t_->name(); }
  std::uint64_t reads = 0, writes = 0;

 private:
  std::unique_ptr<Transport> t_;
};

// Submits `n` buffers of one FENCE packet each and waits for each; returns the device.
void submit_and_wait(Device& dev, int n) {
  Transport& t = dev.transport();
  auto slot = t.alloc_dma(4096);
  REQUIRE(slot);
  for (int i = 0; i < n; ++i) {
    auto buf = t.alloc_dma(4096);
    REQUIRE(buf);
    PacketWriter w(*buf);
    REQUIRE(w.fence(slot->bus_addr(), 100u + static_cast<unsigned>(i), abi::fence_flags::kValue64));
    auto f = dev.submit_next({&*buf, 0, w.offset(), 0, 0});
    REQUIRE(f);
    auto s = dev.wait_fence(*f, 2ms);
    if (!s) FAIL(to_string(s.error()));
    CHECK(slot->as<std::uint64_t>()[0] == 100u + static_cast<unsigned>(i));
  }
}

Device open_device(std::unique_ptr<Transport> t) {
  DeviceOptions o;
  o.gart = false;  // buffers at bus addresses, as in bring-up
  auto d = Device::open(std::move(t), o);
  if (!d) FAIL(to_string(d.error()));
  return std::move(*d);
}

}  // namespace

TEST_CASE("pcie-sim: open enables memory and Bus Master, routes MSI and checks the identity", "[pcie]") {
  auto o = open(fast());
  SimPciFunction& f = *o.function;
  const auto cmd = f.config_read(cfg::kCommand, 2);
  CHECK((cmd & cfg::kCommandMemory) != 0);
  CHECK((cmd & cfg::kCommandBusMaster) != 0);
  CHECK((cmd & cfg::kCommandIntxDisable) != 0);
  CHECK(o.warnings.empty());
  CHECK(o.transport->name() == "pcie-sim");
  CHECK(f.config_read(cfg::kVendorId, 2) == abi::pci::kVendorId);
  CHECK(f.config_read(cfg::kDeviceId, 2) == abi::pci::kDeviceId);
  CHECK((f.config_read(cfg::kRevision, 4) >> 8) == abi::pci::kClassCode);
  CHECK(o.transport->read32(SGPU_REG(ID_MAGIC)) == SGPU_REGS__ID_MAGIC__VALUE_reset);

  Device dev = open_device(std::move(o.transport));
  submit_and_wait(dev, 5);
  CHECK(f.messages() >= 1);  // completions came as MSIs
}

TEST_CASE("pcie-sim: DMA addresses stay below the reach and out of the IOMMU's holes", "[pcie]") {
  PcieSimOptions c = fast();
  c.card.iova_ranges = {{0, 0x7fffff}, {0x00c00000, 0xffffffffffffull}};  // a hole at [8 MiB, 12 MiB)
  c.transport.dma_address_bits = 32;
  c.transport.dma_chunk_bytes = std::size_t{1} << 20;
  auto o = open(c);
  std::vector<DmaMemory> bufs;
  for (int i = 0; i < 40; ++i) {
    auto m = o.transport->alloc_dma(256 * 1024);
    REQUIRE(m);
    CHECK(m->bus_addr() >= (1u << 20));
    CHECK(m->bus_addr() + m->size() <= (std::uint64_t{1} << 32));
    CHECK_FALSE((m->bus_addr() < 0x00c00000 && m->bus_addr() + m->size() > 0x800000));
    bufs.push_back(std::move(*m));
  }
  CHECK(o.function->live_mappings() == 10);  // 1 MiB chunks of four 256 KiB buffers
  // And the device really reaches them there.
  Device dev = open_device(std::move(o.transport));
  submit_and_wait(dev, 3);
}

TEST_CASE("pcie-sim: every DMA mapping is on the IOMMU's smallest page", "[pcie]") {
  // An IOMMU that maps 64 KiB, 2 MiB and 512 MiB pages (an Arm SMMU with a 64 KiB granule).
  PcieSimOptions c = fast();
  c.card.iova_page_sizes = (std::uint64_t{1} << 16) | (std::uint64_t{1} << 21) | (std::uint64_t{1} << 29);
  c.transport.dma_chunk_bytes = 100 * 1024;  // rounded up to 128 KiB
  auto o = open(c);
  std::vector<DmaMemory> bufs;
  for (std::size_t bytes : {std::size_t{4096}, std::size_t{4096}, std::size_t{100 * 1024}, std::size_t{40 * 1024}}) {
    auto m = o.transport->alloc_dma(bytes);
    REQUIRE(m);
    bufs.push_back(std::move(*m));
  }
  // Two 4 KiB buffers and the 40 KiB one share a 128 KiB chunk; the 100 KiB one (more than half
  // a chunk) has its own, rounded up to 128 KiB too.
  REQUIRE(o.function->live_mappings() == 2);
  for (const auto& [bus, bytes] : o.function->mappings()) {
    CHECK(bus % (64 * 1024) == 0);
    CHECK(bytes == 128 * 1024);
  }
  Device dev = open_device(std::move(o.transport));
  submit_and_wait(dev, 3);
}

TEST_CASE("pcie-sim: the simulated IOMMU refuses a mapping that is not on its page, as VFIO does", "[pcie]") {
  SimPciConfig c;
  test::fast_board(c.sim);
  c.iova_page_sizes = std::uint64_t{1} << 16;
  SimPciFunction f(c);
  auto block = f.alloc_host(64 * 1024);
  REQUIRE(block);
  auto unaligned = f.map_dma(block->cpu, 0x101000, 64 * 1024);
  REQUIRE_FALSE(unaligned);
  CHECK(unaligned.error().code == Errc::InvalidArgument);
  CHECK_THAT(unaligned.error().message, Catch::Contains("not on its 0x10000-byte page"));
  CHECK_FALSE(f.map_dma(block->cpu, 0x100000, 4096));  // a partial page
  CHECK(f.live_mappings() == 0);
  REQUIRE(f.map_dma(block->cpu, 0x100000, 64 * 1024));
  f.unmap_dma(0x100000, 64 * 1024);
  f.free_host(*block);
}

// (One simulated device at a time in each test: two Verilated models alive at once deadlock when
// one is destroyed, in Verilator 5.006's scope registry.)
TEST_CASE("pcie-sim: the simulated function refuses what a card would, by name", "[pcie]") {
  SimPciConfig c;
  test::fast_board(c.sim);
  c.iova_ranges = {{0, 0xfffff}, {0x200000, 0x2fffff}};
  SimPciFunction f(c);
  auto bar1 = f.map_bar(1);
  REQUIRE_FALSE(bar1);
  CHECK(bar1.error().message == "sim: the simulated card has no BAR1");
  for (std::size_t bytes : {std::size_t{0}, std::size_t{4097}}) {
    auto odd = f.alloc_host(bytes);
    REQUIRE_FALSE(odd);
    CHECK(odd.error().code == Errc::InvalidArgument);
    CHECK_THAT(odd.error().message, Catch::EndsWith("bytes is not a multiple of the 0x1000-byte IOMMU page"));
  }
  auto block = f.alloc_host(8192);
  REQUIRE(block);
  auto hole = f.map_dma(block->cpu, 0x1ff000, 8192);  // starts in the hole between the ranges
  REQUIRE_FALSE(hole);
  CHECK(hole.error().code == Errc::TransportError);
  CHECK(hole.error().message == "sim IOMMU: IOVA [0x1ff000, +0x2000) is outside its ranges");
  CHECK(f.live_mappings() == 0);
  f.free_host(*block);
}

TEST_CASE("pcie-sim: the simulated card has MSI, not MSI-X: open says so", "[pcie]") {
  PcieSimOptions o = fast();
  o.card.delivery = InterruptDelivery::Msix;
  auto t = open_pcie_sim(o);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::Unsupported);
  CHECK(t.error().message == "sim: the simulated card has MSI, not MSI-X");
}

TEST_CASE("pcie-sim: without an IOMMU the simulated function has nothing to map", "[pcie]") {
  SimPciConfig p;
  test::fast_board(p.sim);
  p.addressing = DmaAddressing::Physical;
  SimPciFunction physical(p);
  auto b = physical.alloc_host(4096);
  REQUIRE(b);
  REQUIRE(b->bus_addr);
  auto m = physical.map_dma(b->cpu, 0x100000, 4096);
  REQUIRE_FALSE(m);
  CHECK(m.error().code == Errc::Unsupported);
  physical.free_host(*b);
}

TEST_CASE("pcie-sim: without an IOMMU (physical addresses, fence polling) the driver still works, and is warned",
          "[pcie]") {
  PcieSimOptions c = fast();
  c.card.addressing = DmaAddressing::Physical;
  c.card.delivery = InterruptDelivery::Polling;
  c.transport.poll_interval = 2us;  // simulated time: keep the test short
  c.transport.status_check_interval = 50us;
  auto o = open(c);
  REQUIRE(o.warnings.size() == 1);
  CHECK_THAT(o.warnings[0], Catch::StartsWith("UNSAFE: driving sim:00:00.0 without an IOMMU"));
  SimPciFunction& f = *o.function;
  auto counting = std::make_unique<Counting>(std::move(o.transport));
  Counting& cnt = *counting;
  Device dev = open_device(std::move(counting));
  const auto reads0 = cnt.reads;
  submit_and_wait(dev, 4);
  CHECK(f.messages() == 0);  // no MSI at all
  // Fences come from host memory; the interrupt status is read only on the periodic check.
  INFO("register reads for 4 fences: " << cnt.reads - reads0);
  CHECK(cnt.reads - reads0 <= 4);
}

TEST_CASE("pcie-sim: nothing on the submit path reads a register", "[pcie]") {
  auto o = open(fast());
  auto counting = std::make_unique<Counting>(std::move(o.transport));
  Counting& cnt = *counting;
  Device dev = open_device(std::move(counting));
  auto slot = dev.transport().alloc_dma(4096);
  REQUIRE(slot);
  auto buf = dev.transport().alloc_dma(4096);
  REQUIRE(buf);
  PacketWriter w(*buf);
  REQUIRE(w.fence(slot->bus_addr(), 7, abi::fence_flags::kValue64));
  const auto r0 = cnt.reads, w0 = cnt.writes;
  auto f = dev.submit_next({&*buf, 0, w.offset(), 0, 0});
  REQUIRE(f);
  CHECK(cnt.reads == r0);       // no register read to submit
  CHECK(cnt.writes == w0 + 1);  // one doorbell
  REQUIRE(dev.wait_fence(*f, 2ms));
  CHECK(cnt.reads - r0 <= 1);  // at most the interrupt status, once per MSI
}

TEST_CASE("pcie-sim: a Bus Master that does not stick is refused with the reason", "[pcie]") {
  PcieSimOptions c = fast();
  c.card.bus_master_stuck_off = true;
  auto t = open_pcie_sim(c);
  REQUIRE_FALSE(t);
  CHECK(t.error().code == Errc::TransportError);
  CHECK_THAT(t.error().message, Catch::StartsWith("Bus Master is off on sim:00:00.0 after enabling it (COMMAND reads "
                                                  "0x0402)"));
}

TEST_CASE("pcie-sim: a link trained below its capability is warned about", "[pcie]") {
  PcieSimOptions c = fast();
  c.card.link = {1, 1, 2, 4};
  auto o = open(c);
  REQUIRE(o.warnings.size() == 1);
  CHECK_THAT(o.warnings[0], Catch::StartsWith("the PCIe link of sim:00:00.0 trained at 2.5 GT/s x1 although the card "
                                              "can do 5.0 GT/s x4"));
}

TEST_CASE("pcie-sim: a card pulled out is reported, never waited for", "[pcie]") {
  PcieSimOptions c = fast();
  c.transport.liveness_interval = 1ms;  // simulated time
  auto o = open(c);
  SimPciFunction& f = *o.function;
  Transport* t = o.transport.get();
  Device dev = open_device(std::move(o.transport));
  submit_and_wait(dev, 1);

  f.remove();
  // A fence that will never come: the wait ends with the reason, not after the timeout.
  auto slot = t->alloc_dma(4096);
  REQUIRE(slot);
  auto buf = t->alloc_dma(4096);
  REQUIRE(buf);
  PacketWriter w(*buf);
  REQUIRE(w.fence(slot->bus_addr(), 1, abi::fence_flags::kValue64));
  auto fence = dev.submit_next({&*buf, 0, w.offset(), 0, 0});
  REQUIRE(fence);
  const auto t0 = t->now();
  auto s = dev.wait_fence(*fence, 10ms);
  REQUIRE_FALSE(s);
  CHECK(s.error().code == Errc::TransportError);
  CHECK_THAT(s.error().message, Catch::Contains("the device at sim:00:00.0 is gone"));
  CHECK(t->now() - t0 <= 2ms);  // noticed at the first liveness check, not at the timeout
  // Register reads say so too (all-ones, then configuration space confirms).
  CHECK_THROWS_WITH(t->read32(SGPU_REG(STATUS)), Catch::Contains("is gone (reading BAR0 + 0x"));
  auto info = dev.fault();
  REQUIRE_FALSE(info);
  CHECK(info.error().code == Errc::TransportError);
}
