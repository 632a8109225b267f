// The pcie layer against the real kernel interfaces, inside a QEMU guest (tools/vm/run_vm_test.py):
// libpciaccess enumeration, sysfs, vfio-pci and the type 1 IOMMU, MSI to an eventfd, hugepages
// and pagemap. The device is QEMU's `edu` (registers: 0x00 ident, 0x04 liveness, 0x24/0x60/0x64
// interrupt status/raise/ack, 0x80/0x88/0x90/0x98 DMA source/destination/count/command; a
// 4 KiB buffer at device address 0x40000; 28-bit DMA reach). It is not a softgpu, so this tests
// the layer below and the pool above the seam, the real error messages, and the transport's
// identity check refusing it; the softgpu semantics are tested over the simulation.
//
// Runs as root in the guest; the test cases run in order and leave the binding they found.
#include <catch2/catch.hpp>

#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/config_space.hpp"
#include "transport/pcie/dma_pool.hpp"
#include "transport/pcie/sysfs.hpp"

using namespace sgpu;
using namespace sgpu::pcie;
using namespace std::chrono_literals;

namespace {

constexpr const char* kVfio = "0000:00:04.0";   // driven through VFIO
constexpr const char* kSysfs = "0000:00:05.0";  // driven without the IOMMU
constexpr PciId kEdu{0x1234, 0x11e8};
constexpr std::uint32_t kEduIdent = 0x010000ed;
constexpr std::uint32_t kEduBuffer = 0x40000;
constexpr std::uint32_t kDmaRun = 1, kDmaToRam = 2, kDmaIrq = 4;
constexpr std::uint32_t kDmaBytes = 2048;  // QEMU 7.2's edu refuses a transfer ending at its buffer's end

template <class T>
T must(Result<T> r) {
  if (!r) FAIL(to_string(r.error()));
  return std::move(*r);
}

std::string driver_of(const char* address) { return pcie::detail::bound_driver("/sys", address); }

// The first word of a sysfs attribute of `address`.
std::string read_attribute(const char* address, const char* name) {
  std::ifstream in(fmt::format("/sys/bus/pci/devices/{}/{}", address, name));
  std::string v;
  in >> v;
  return v;
}

void bind_to(const char* address, const char* driver) {
  REQUIRE(pcie::detail::write_attribute(fmt::format("/sys/bus/pci/devices/{}/driver_override", address), driver));
  if (!driver_of(address).empty())
    REQUIRE(pcie::detail::write_attribute(fmt::format("/sys/bus/pci/devices/{}/driver/unbind", address), address));
  REQUIRE(pcie::detail::write_attribute("/sys/bus/pci/drivers_probe", address));
  REQUIRE(driver_of(address) == driver);
}

// Starts an edu DMA and, with `irq`, asks for an interrupt at the end.
void edu_dma(BarWindow& bar, std::uint64_t src, std::uint64_t dst, bool to_ram, bool irq) {
  bar.write32(0x80, static_cast<std::uint32_t>(src));
  bar.write32(0x84, static_cast<std::uint32_t>(src >> 32));
  bar.write32(0x88, static_cast<std::uint32_t>(dst));
  bar.write32(0x8c, static_cast<std::uint32_t>(dst >> 32));
  bar.write32(0x90, kDmaBytes);
  bar.write32(0x98, kDmaRun | (to_ram ? kDmaToRam : 0) | (irq ? kDmaIrq : 0));
}

// edu finishes a DMA on a 100 ms timer: poll its command register (the no-interrupt way).
bool edu_dma_done(BarWindow& bar) {
  const auto end = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < end) {
    if ((bar.read32(0x98) & kDmaRun) == 0) return true;
    std::this_thread::sleep_for(5ms);
  }
  return false;
}

void edu_ack(BarWindow& bar) { bar.write32(0x64, bar.read32(0x24)); }

// The transport's BarWindow-less view for edu: registers through Transport.
void edu_dma(Transport& t, std::uint64_t src, std::uint64_t dst, bool to_ram) {
  t.write32(0x80, static_cast<std::uint32_t>(src));
  t.write32(0x84, static_cast<std::uint32_t>(src >> 32));
  t.write32(0x88, static_cast<std::uint32_t>(dst));
  t.write32(0x8c, static_cast<std::uint32_t>(dst >> 32));
  t.write32(0x90, kDmaBytes);
  t.write32(0x98, kDmaRun | (to_ram ? kDmaToRam : 0) | kDmaIrq);
}

// The transport's options for edu: not a softgpu (no identity check), a 28-bit DMA reach.
PcieTransportOptions edu_options(std::vector<std::string>* warnings = nullptr) {
  PcieTransportOptions o;
  o.check_identity = false;
  o.dma_address_bits = 28;
  if (warnings) o.warn = [warnings](std::string_view w) { warnings->emplace_back(w); };
  return o;
}

void fill(void* p, std::size_t n, std::uint8_t seed) {
  auto* b = static_cast<std::uint8_t*>(p);
  for (std::size_t i = 0; i < n; ++i) b[i] = static_cast<std::uint8_t>(seed + i * 7);
}

std::string group_edu() {
  auto all = must(list_functions());
  for (const auto& f : all)
    if (f.id == kEdu && f.address != kVfio && f.address != kSysfs) return f.address;
  FAIL("the edu behind the PCI bridge is missing");
  return {};
}

}  // namespace

TEST_CASE("vm: libpciaccess enumerates the functions, their drivers and IOMMU groups", "[vm]") {
  PcieOptions o;
  o.extra_ids = {kEdu};
  auto all = must(list_functions(o));
  INFO(all.size() << " functions");
  const FunctionInfo* edu = nullptr;
  bool e1000 = false;
  for (const auto& f : all) {
    if (f.address == kVfio) edu = &f;
    if (f.id == PciId{0x8086, 0x100e}) e1000 = f.driver == "e1000";
  }
  REQUIRE(edu != nullptr);
  CHECK(edu->id == kEdu);
  CHECK(edu->class_code == 0x00ff00);
  CHECK(edu->candidate);
  CHECK(edu->iommu_group.has_value());
  CHECK_FALSE(edu->link.has_value());  // edu is conventional PCI
  CHECK_THAT(edu->link_note, Catch::Contains("no PCI Express link"));
  REQUIRE(edu->magic.has_value());  // BAR0 read through libpciaccess (sysfs resource0)
  CHECK(*edu->magic == kEduIdent);
  CHECK_FALSE(edu->answers_softgpu());
  CHECK(e1000);
}

TEST_CASE("vm: no card: the error lists every function seen", "[vm]") {
  auto fn = open_vfio_function("0000:00:1f.6");
  REQUIRE_FALSE(fn);
  CHECK(fn.error().code == Errc::TransportError);
  CHECK_THAT(fn.error().message, Catch::Contains("no PCI function at 0000:00:1f.6"));
  CHECK_THAT(fn.error().message, Catch::Contains("0000:00:04.0 1234:11e8"));

  auto t = open_pcie(PcieOptions{});  // `sgpu --backend pcie` in a machine with no softgpu
  REQUIRE_FALSE(t);
  CHECK_THAT(t.error().message, Catch::StartsWith("no softgpu card found"));
  CHECK_THAT(t.error().message, Catch::Contains("8086:100e"));
}

TEST_CASE("vm: wrong driver: the exact commands, then the bind helper hands it to vfio-pci", "[vm]") {
  bind_to(kVfio, "pci-stub");
  auto fn = open_vfio_function(kVfio);
  REQUIRE_FALSE(fn);
  const std::string& m = fn.error().message;
  CHECK_THAT(m, Catch::Contains("bound to the kernel driver 'pci-stub'"));
  CHECK_THAT(m, Catch::Contains("sgpu bind-vfio 0000:00:04.0"));
  CHECK_THAT(m, Catch::Contains("echo vfio-pci > /sys/bus/pci/devices/0000:00:04.0/driver_override"));
  CHECK_THAT(m, Catch::Contains("echo 0000:00:04.0 > /sys/bus/pci/devices/0000:00:04.0/driver/unbind"));
  CHECK_THAT(m, Catch::Contains("echo 0000:00:04.0 > /sys/bus/pci/drivers_probe"));

  auto done = must(bind_vfio(kVfio));
  CHECK(driver_of(kVfio) == "vfio-pci");
  CHECK_THAT(done.back(), Catch::Contains("/dev/vfio/") || Catch::Contains("also in the group"));

  auto back = must(unbind_vfio(kVfio));
  CHECK(driver_of(kVfio).empty());  // edu has no kernel driver of its own
  auto unbound = open_vfio_function(kVfio);
  REQUIRE_FALSE(unbound);
  CHECK_THAT(unbound.error().message, Catch::Contains("no driver is bound to it"));
  CHECK_THAT(unbound.error().message, Catch::Contains("sgpu bind-vfio"));

  must(bind_vfio(kVfio));
  CHECK(driver_of(kVfio) == "vfio-pci");
}

TEST_CASE("vm: VFIO: configuration space, BAR0, Bus Master, DMA both ways, MSI to the eventfd", "[vm]") {
  REQUIRE(driver_of(kVfio) == "vfio-pci");
  std::shared_ptr<PciFunction> fn = must(open_vfio_function(kVfio));
  CHECK(fn->kind() == "vfio");
  CHECK(fn->config_read(cfg::kVendorId, 2) == kEdu.vendor);
  CHECK(fn->config_read(cfg::kDeviceId, 2) == kEdu.device);
  const pcie::detail::ConfigReader rd = [&](std::uint16_t o, unsigned w) { return fn->config_read(o, w); };
  const auto msi = pcie::detail::find_capability(rd, cfg::kCapMsi);
  REQUIRE(msi.has_value());
  CHECK(fn->interrupt_delivery() == InterruptDelivery::Msi);

  BarWindow& bar = *must(fn->map_bar(0));
  CHECK(bar.size() == (1u << 20));
  CHECK(bar.read32(0x00) == kEduIdent);
  bar.write32(0x04, 0x12345678);
  CHECK(bar.read32(0x04) == ~0x12345678u);  // edu's liveness register inverts

  // Bus Master: ours to set, through VFIO's config region.
  const auto cmd = static_cast<std::uint16_t>(fn->config_read(cfg::kCommand, 2));
  fn->config_write(cfg::kCommand, 2, cmd | cfg::kCommandMemory | cfg::kCommandBusMaster);
  CHECK((fn->config_read(cfg::kCommand, 2) & cfg::kCommandBusMaster) != 0);

  // The pool above the seam: I/O virtual addresses inside the IOMMU's ranges, below edu's reach,
  // on the IOMMU's smallest page (the emulated VT-d maps 4 KiB pages and up).
  const std::uint64_t page_sizes = fn->iova_page_sizes();
  INFO("iova_pgsizes " << std::hex << page_sizes);
  CHECK((page_sizes & (~page_sizes + 1)) == 4096);
  auto pool = std::make_shared<pcie::detail::DmaPool>(fn, 28, std::size_t{2} << 20);
  CHECK(pool->granule() == 4096);
  const auto ranges = fn->iova_ranges();
  REQUIRE_FALSE(ranges.empty());
  DmaMemory src = must(pool->allocate(pool, 4096, 4096));
  DmaMemory dst = must(pool->allocate(pool, 4096, 4096));
  for (const DmaMemory* m : {&src, &dst}) {
    CHECK(m->bus_addr() >= pcie::detail::kIovaFloor);
    CHECK(m->bus_addr() + m->size() <= (1u << 28));
    bool inside = false;
    for (const auto& r : ranges) inside |= m->bus_addr() >= r.first && m->bus_addr() + m->size() - 1 <= r.last;
    CHECK(inside);
  }
  CHECK(pool->mappings() == 1);  // both in one chunk: one IOMMU mapping

  // (VFIO virtualises the MSI capability: the enable bit user space reads is not the device's.
  // That MSI works shows below, by messages arriving.)
  REQUIRE(fn->enable_interrupts());
  CHECK_FALSE(must(fn->wait_interrupt(10ms)));

  // An interrupt raised by a register write arrives on the eventfd.
  bar.write32(0x60, 0x1);
  CHECK(must(fn->wait_interrupt(2s)));
  edu_ack(bar);

  // Host memory -> device, then device -> host memory; each ends with an MSI.
  fill(src.cpu(), kDmaBytes, 0x5a);
  edu_dma(bar, src.bus_addr(), kEduBuffer, false, true);
  CHECK(must(fn->wait_interrupt(5s)));
  edu_ack(bar);
  edu_dma(bar, kEduBuffer, dst.bus_addr(), true, true);
  CHECK(must(fn->wait_interrupt(5s)));
  edu_ack(bar);
  CHECK(std::memcmp(src.cpu(), dst.cpu(), kDmaBytes) == 0);

  // With Bus Master off the device can neither write memory nor send its MSI (an MSI is a write).
  DmaMemory blocked = must(pool->allocate(pool, 4096, 4096));
  fn->config_write(cfg::kCommand, 2, fn->config_read(cfg::kCommand, 2) & ~std::uint32_t{cfg::kCommandBusMaster});
  edu_dma(bar, kEduBuffer, blocked.bus_addr(), true, true);
  REQUIRE(edu_dma_done(bar));
  CHECK_FALSE(must(fn->wait_interrupt(300ms)));
  const auto* b = blocked.as<std::uint8_t>();
  CHECK(std::all_of(b, b + kDmaBytes, [](std::uint8_t v) { return v == 0; }));
  edu_ack(bar);
}

TEST_CASE("vm: VFIO refuses by name: a group already open, BARs the function does not have", "[vm]") {
  REQUIRE(driver_of(kVfio) == "vfio-pci");
  std::shared_ptr<PciFunction> fn = must(open_vfio_function(kVfio));
  // The kernel lets one opener have a group: a second one (another sgpu, a VM) gets EBUSY.
  auto again = open_vfio_function(kVfio);
  REQUIRE_FALSE(again);
  CHECK(again.error().code == Errc::Busy);
  CHECK_THAT(again.error().message, Catch::Matches("/dev/vfio/[0-9]+ is busy: another process .*"));

  auto six = fn->map_bar(6);
  REQUIRE_FALSE(six);
  CHECK(six.error().code == Errc::InvalidArgument);
  CHECK(six.error().message == "BAR 6 does not exist (0..5)");
  auto one = fn->map_bar(1);  // edu has BAR0 only
  REQUIRE_FALSE(one);
  CHECK(one.error().message == fmt::format("{} has no BAR1 (size 0): is this the right function?", kVfio));
}

TEST_CASE("vm: the pcie transport refuses a device that is not a softgpu, and drives edu without the check", "[vm]") {
  {
    auto t = open_pcie_transport(must(open_vfio_function(kVfio)), PcieTransportOptions{});
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::DeviceMismatch);
    CHECK_THAT(t.error().message, Catch::Contains("0000:00:04.0 is not a softgpu: ID_MAGIC (BAR0 + 0x0) reads "
                                                  "0x010000ed, expected 0x53475055"));
  }
  std::vector<std::string> warnings;
  const PcieTransportOptions o = edu_options(&warnings);
  auto t = must(open_pcie_transport(must(open_vfio_function(kVfio)), o));
  CHECK(warnings.empty());  // an IOMMU, and no PCIe link to be degraded
  CHECK(t->name() == "pcie");
  CHECK(t->read32(0x00) == kEduIdent);
  DmaMemory a = must(t->alloc_dma(8192));
  DmaMemory c = must(t->alloc_dma(4096));
  CHECK(a.bus_addr() + a.size() <= (1u << 28));
  fill(a.cpu(), kDmaBytes, 0x11);
  edu_dma(*t, a.bus_addr(), kEduBuffer, false);
  CHECK(t->wait_irq(5s));
  t->write32(0x64, t->read32(0x24));
  edu_dma(*t, kEduBuffer, c.bus_addr(), true);
  CHECK(t->wait_irq(5s));
  t->write32(0x64, t->read32(0x24));
  CHECK(std::memcmp(a.cpu(), c.cpu(), kDmaBytes) == 0);
  const auto t0 = t->now();
  CHECK_FALSE(t->wait_irq(20ms));
  CHECK(t->now() - t0 >= 20ms);
}

TEST_CASE("vm: RLIMIT_MEMLOCK too low: the error says how much is needed", "[vm]") {
  const pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    // Without CAP_IPC_LOCK, as an unprivileged user would run, and a 64 KiB limit.
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2]{};
    ::syscall(SYS_capget, &h, d);
    d[0].effective &= ~(1u << CAP_IPC_LOCK);
    d[0].permitted &= ~(1u << CAP_IPC_LOCK);
    ::syscall(SYS_capset, &h, d);
    rlimit r{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_MEMLOCK, &r);
    auto fn = open_vfio_function(kVfio);
    if (!fn) {
      std::printf("SGPU-VM: memlock child: %s\n", to_string(fn.error()).c_str());
      ::_exit(2);
    }
    std::shared_ptr<PciFunction> f = std::move(*fn);
    auto pool = std::make_shared<pcie::detail::DmaPool>(f, 28, std::size_t{2} << 20);
    auto m = pool->allocate(pool, 4096, 4096);
    if (m) ::_exit(3);
    std::printf("SGPU-VM: memlock child got: %s\n", to_string(m.error()).c_str());
    const bool good = m.error().code == Errc::PermissionDenied &&
                      m.error().message.find("RLIMIT_MEMLOCK is too low") != std::string::npos &&
                      m.error().message.find("needs 2048 KiB locked") != std::string::npos &&
                      m.error().message.find("the limit is 64 KiB") != std::string::npos;
    ::_exit(good ? 0 : 4);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}

TEST_CASE("vm: IOMMU group not viable: the other devices are named", "[vm]") {
  const std::string address = group_edu();
  auto done = must(bind_vfio(address));
  std::string all;
  for (const auto& l : done) all += l + "\n";
  CHECK_THAT(all, Catch::Contains("(e1000) - unbind it, or the group is not viable"));
  auto fn = open_vfio_function(address);
  REQUIRE_FALSE(fn);
  const std::string& m = fn.error().message;
  CHECK_THAT(m, Catch::Contains(fmt::format("of {} is not viable", address)));
  CHECK_THAT(m, Catch::Contains("(driver e1000)"));
  CHECK_THAT(m, Catch::Contains("/driver/unbind"));
}

TEST_CASE("vm: no IOMMU: sysfs BAR, hugepages with pagemap addresses, DMA both ways by polling", "[vm]") {
  REQUIRE(driver_of(kSysfs).empty());
  // The PCI core counts users of the function in `enable`: one more while we hold it, given back after.
  const int enabled_before = std::stoi(read_attribute(kSysfs, "enable"));
  {
    std::shared_ptr<PciFunction> fn = must(open_sysfs_function(kSysfs));
    CHECK(std::stoi(read_attribute(kSysfs, "enable")) == enabled_before + 1);
    CHECK(fn->dma_addressing() == DmaAddressing::Physical);
    CHECK(fn->interrupt_delivery() == InterruptDelivery::Polling);
    CHECK(fn->config_read(cfg::kVendorId, 2) == kEdu.vendor);
    BarWindow& bar = *must(fn->map_bar(0));
    CHECK(bar.read32(0x00) == kEduIdent);
    fn->config_write(cfg::kCommand, 2,
                     fn->config_read(cfg::kCommand, 2) | cfg::kCommandMemory | cfg::kCommandBusMaster);

    auto pool = std::make_shared<pcie::detail::DmaPool>(fn, 28, std::size_t{2} << 20);
    DmaMemory src = must(pool->allocate(pool, 4096, 4096));
    DmaMemory dst = must(pool->allocate(pool, 4096, 4096));
    CHECK(src.bus_addr() % 4096 == 0);
    CHECK(dst.bus_addr() == src.bus_addr() + 4096);  // one hugepage, physically contiguous
    CHECK(src.bus_addr() + src.size() <= (1u << 28));
    fill(src.cpu(), kDmaBytes, 0xc3);
    edu_dma(bar, src.bus_addr(), kEduBuffer, false, false);
    REQUIRE(edu_dma_done(bar));
    edu_dma(bar, kEduBuffer, dst.bus_addr(), true, false);
    REQUIRE(edu_dma_done(bar));
    CHECK(std::memcmp(src.cpu(), dst.cpu(), kDmaBytes) == 0);
  }
  CHECK(std::stoi(read_attribute(kSysfs, "enable")) == enabled_before);
}

TEST_CASE("vm: the transport without an IOMMU warns, and polls", "[vm]") {
  std::vector<std::string> warnings;
  const PcieTransportOptions o = edu_options(&warnings);
  auto t = must(open_pcie_transport(must(open_sysfs_function(kSysfs)), o));
  REQUIRE(warnings.size() == 1);
  CHECK_THAT(warnings[0], Catch::StartsWith("UNSAFE: driving 0000:00:05.0 without an IOMMU"));
  const auto t0 = t->now();
  bool status_tick = false;
  while (t->now() - t0 < 5ms) status_tick |= t->wait_irq(1s);  // each wait lasts one poll interval
  CHECK(status_tick);  // now and then the driver is told to read the interrupt status
}

TEST_CASE("vm: surprise removal is reported, never waited for", "[vm]") {
  auto t = must(open_pcie_transport(must(open_vfio_function(kVfio)), edu_options()));
  // The kernel cannot finish removing a device user space holds: it asks for it back (VFIO's
  // request interrupt) and waits. The transport must end its wait and say the device is going.
  std::thread remover([] { (void)pcie::detail::write_attribute("/sys/bus/pci/devices/0000:00:04.0/remove", "1"); });
  const auto t0 = std::chrono::steady_clock::now();
  std::string failure;
  try {
    (void)t->wait_irq(20s);
  } catch (const TransportFailure& e) {
    failure = e.what();
  }
  const auto waited = std::chrono::steady_clock::now() - t0;
  CHECK_THAT(failure, Catch::Contains("the device at 0000:00:04.0 is gone (the kernel asks for the device back)"));
  CHECK(waited < 10s);
  t.reset();  // releases the device: the removal completes
  remover.join();
  CHECK_FALSE(pcie::detail::device_exists("/sys", kVfio));
  auto again = open_vfio_function(kVfio);
  REQUIRE_FALSE(again);
  CHECK_THAT(again.error().message, Catch::Contains("no PCI function at 0000:00:04.0"));
}
