// Unit tests of the pcie transport's pieces that need no device: the IOVA allocator, the DMA pool
// over a scripted function, pagemap parsing, configuration-space parsing, sysfs reading (a
// directory tree made here) and every message a person acts on.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <set>

#include <fmt/format.h>

#include "sgpu/regs.hpp"
#include "sgpu/transport/pcie.hpp"
#include "transport/pcie/config_space.hpp"
#include "transport/pcie/discovery.hpp"
#include "transport/pcie/dma_pool.hpp"
#include "transport/pcie/host_limits.hpp"
#include "transport/pcie/iova_allocator.hpp"
#include "transport/pcie/messages.hpp"
#include "transport/pcie/pagemap.hpp"
#include "transport/pcie/sysfs.hpp"

using namespace sgpu;
using namespace sgpu::pcie;
using namespace sgpu::pcie::detail;

namespace {

// A BAR in an array of registers.
class ArrayBar final : public BarWindow {
 public:
  explicit ArrayBar(std::size_t bytes) : regs(bytes / 4) {}
  std::uint32_t read32(std::uint32_t offset) override { return regs.at(offset / 4); }
  void write32(std::uint32_t offset, std::uint32_t value) override { regs.at(offset / 4) = value; }
  std::uint64_t size() const override { return regs.size() * 4; }
  std::vector<std::uint32_t> regs;
};

// A function whose configuration space, BAR0 and DMA side are scripted: records configuration
// writes and mappings, refuses on request.
class ScriptedFunction final : public PciFunction {
 public:
  std::array<std::uint8_t, 256> config{};
  std::uint16_t command_sticks = 0xffff;  // COMMAND bits that keep what is written
  std::shared_ptr<int> config_writes = std::make_shared<int>(0);  // outlives a function a failed open destroyed
  bool omit_physical = false;                                     // Physical: hand out memory without its address
  std::optional<ArrayBar> bar0;
  DmaAddressing addressing = DmaAddressing::Translated;
  std::vector<IovaRange> ranges{{0, ~std::uint64_t{0}}};
  std::uint64_t page_sizes = 4096;
  std::uint64_t next_physical = std::uint64_t{1} << 30;
  std::optional<Error> refuse_map;
  std::map<std::uint64_t, std::size_t> mapped;
  int host_blocks = 0;

  std::string address() const override { return "0000:00:00.0"; }
  std::string_view kind() const override { return "scripted"; }
  std::uint32_t config_read(std::uint16_t offset, unsigned width) override {
    std::uint32_t v = 0;
    std::memcpy(&v, &config[offset], width);
    return v;
  }
  void config_write(std::uint16_t offset, unsigned width, std::uint32_t value) override {
    ++*config_writes;
    if (offset == cfg::kCommand) value &= command_sticks;
    std::memcpy(&config[offset], &value, width);
  }
  std::size_t config_size() const override { return config.size(); }
  Result<BarWindow*> map_bar(unsigned index) override {
    if (index != 0 || !bar0) return Error::unsupported("0000:00:00.0 has no BAR{} (scripted)", index);
    return &*bar0;
  }
  DmaAddressing dma_addressing() const override { return addressing; }
  std::vector<IovaRange> iova_ranges() const override { return ranges; }
  std::uint64_t iova_page_sizes() const override { return page_sizes; }
  Result<HostBlock> alloc_host(std::size_t bytes) override {
    void* p = std::aligned_alloc(smallest_page(page_sizes), bytes);
    std::memset(p, 0, bytes);
    ++host_blocks;
    HostBlock b{p, bytes, std::nullopt};
    if (addressing == DmaAddressing::Physical && !omit_physical) {
      b.bus_addr = next_physical;
      next_physical += bytes;
    }
    return b;
  }
  void free_host(const HostBlock& b) noexcept override {
    std::free(b.cpu);
    --host_blocks;
  }
  Status map_dma(void*, std::uint64_t iova, std::size_t bytes) override {
    if (refuse_map) return *refuse_map;
    const std::uint64_t page = smallest_page(page_sizes);
    if (iova % page != 0 || bytes % page != 0) return Error::invalid("not on the IOMMU page");
    mapped[iova] = bytes;
    return ok_status();
  }
  void unmap_dma(std::uint64_t iova, std::size_t) noexcept override { mapped.erase(iova); }
  InterruptDelivery interrupt_delivery() const override { return InterruptDelivery::Polling; }
  Status enable_interrupts() override { return ok_status(); }
  Result<bool> wait_interrupt(std::chrono::nanoseconds) override { return false; }
  std::chrono::nanoseconds now() override { return {}; }
};

// A configuration space in a byte array.
struct ConfigBytes {
  std::array<std::uint8_t, 4096> b{};
  void put(std::uint16_t off, unsigned w, std::uint32_t v) { std::memcpy(&b[off], &v, w); }
  ConfigReader reader() const {
    return [this](std::uint16_t off, unsigned w) {
      std::uint32_t v = 0;
      std::memcpy(&v, &b[off], w);
      return v;
    };
  }
};

// A sysfs-like tree under a temporary directory.
struct FakeSysfs {
  std::string root;
  FakeSysfs() {
    char tmpl[] = "/tmp/sgpu-sysfs-XXXXXX";
    root = ::mkdtemp(tmpl);
  }
  ~FakeSysfs() { (void)std::system(("rm -rf " + root).c_str()); }
  void mkdirs(const std::string& path) { (void)std::system(("mkdir -p " + root + "/" + path).c_str()); }
  void device(const std::string& address, const std::string& driver, unsigned group) {
    mkdirs("bus/pci/devices/" + address);
    mkdirs("bus/pci/drivers/" + (driver.empty() ? std::string("none") : driver));
    mkdirs("kernel/iommu_groups/" + std::to_string(group) + "/devices");
    const std::string dev = root + "/bus/pci/devices/" + address;
    if (!driver.empty()) REQUIRE(::symlink(("../../drivers/" + driver).c_str(), (dev + "/driver").c_str()) == 0);
    REQUIRE(::symlink(("../../../kernel/iommu_groups/" + std::to_string(group)).c_str(),
                      (dev + "/iommu_group").c_str()) == 0);
    REQUIRE(::symlink(dev.c_str(),
                      (root + "/kernel/iommu_groups/" + std::to_string(group) + "/devices/" + address).c_str()) == 0);
    std::ofstream(dev + "/vendor") << "0x10ee\n";
    std::ofstream(dev + "/device") << "0x7024\n";
  }
};

}  // namespace

TEST_CASE("pcie: the IOVA allocator stays inside the IOMMU's ranges and below the device's reach", "[pcie][iova]") {
  // A typical x86 answer: everything but the MSI window at 0xfee00000.
  const std::vector<IovaRange> ranges{{0, 0xfedfffff}, {0xfef00000, (std::uint64_t{1} << 48) - 1}};
  IovaAllocator a(ranges, 32);
  REQUIRE(a.usable().size() == 2);
  CHECK(a.usable()[0] == IovaRange{kIovaFloor, 0xfedfffff});
  CHECK(a.usable()[1] == IovaRange{0xfef00000, 0xffffffff});

  const auto first = a.allocate(4096, 4096);
  REQUIRE(first);
  CHECK(*first == kIovaFloor);  // never 0, never the first megabyte
  std::set<std::uint64_t> seen;
  std::uint64_t total = 4096;
  for (;;) {
    const auto r = a.allocate(std::uint64_t{64} << 20, std::uint64_t{2} << 20);
    if (!r) break;
    CHECK(*r % (std::uint64_t{2} << 20) == 0);
    CHECK(*r + (std::uint64_t{64} << 20) - 1 <= 0xffffffffull);                            // the reach
    CHECK_FALSE((*r <= 0xfeefffffull && *r + (std::uint64_t{64} << 20) > 0xfee00000ull));  // the hole
    CHECK(seen.insert(*r).second);
    total += std::uint64_t{64} << 20;
  }
  CHECK(total > (std::uint64_t{3} << 30));  // nearly 4 GiB handed out before it ran dry
  a.free(*first, 4096);
  CHECK(a.allocate(4096, 4096) == first);

  SECTION("a reach that leaves nothing") {
    IovaAllocator none({{0, 0xfffff}}, 64);
    CHECK(none.usable().empty());
    CHECK_FALSE(none.allocate(4096, 4096));
  }
  SECTION("a 64-bit reach and the whole space") {
    IovaAllocator all({{0, ~std::uint64_t{0}}}, 64);
    REQUIRE(all.usable().size() == 1);
    CHECK(all.usable()[0].last == ~std::uint64_t{0});
    CHECK(all.allocate(std::uint64_t{1} << 40, 4096));
  }
}

TEST_CASE("pcie: the DMA pool maps whole chunks, sub-allocates them and gives zeroed memory", "[pcie][pool]") {
  auto fn = std::make_shared<ScriptedFunction>();
  fn->ranges = {{0, 0xfedfffff}, {0xfef00000, ~std::uint64_t{0}}};
  auto pool = std::make_shared<DmaPool>(fn, 32, std::size_t{2} << 20);
  std::vector<DmaMemory> bufs;
  for (int i = 0; i < 8; ++i) {
    auto m = pool->allocate(pool, 64 * 1024, 4096);
    REQUIRE(m);
    CHECK(m->bus_addr() >= kIovaFloor);
    CHECK(m->bus_addr() + m->size() <= (std::uint64_t{1} << 32));
    std::memset(m->cpu(), 0xee, m->size());
    bufs.push_back(std::move(*m));
  }
  CHECK(fn->mapped.size() == 1);  // eight buffers, one IOMMU mapping
  CHECK(pool->mappings() == 1);
  const std::uint64_t reused = bufs[3].bus_addr();
  bufs[3].reset();
  auto again = pool->allocate(pool, 64 * 1024, 4096);
  REQUIRE(again);
  CHECK(again->bus_addr() == reused);
  const auto* b = again->as<std::uint8_t>();
  CHECK(std::all_of(b, b + again->size(), [](std::uint8_t v) { return v == 0; }));  // zeroed on reuse

  // Larger than half a chunk: a mapping of its own, unmapped when freed.
  auto big = pool->allocate(pool, 3 << 20, 4096);
  REQUIRE(big);
  CHECK(fn->mapped.size() == 2);
  big->reset();
  CHECK(fn->mapped.size() == 1);

  SECTION("bad alignment changes nothing") {
    auto bad = pool->allocate(pool, 4096, 3000);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Errc::InvalidArgument);
    CHECK(fn->mapped.size() == 1);
  }
  SECTION("a refused mapping gives the host memory and the address back") {
    fn->refuse_map = Error::make(Errc::PermissionDenied, Touched::Nothing, "RLIMIT_MEMLOCK is too low: ...");
    const int blocks = fn->host_blocks;
    auto r = pool->allocate(pool, 3 << 20, 4096);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::PermissionDenied);
    CHECK(fn->host_blocks == blocks);
  }
  SECTION("buffers outlive the pool's owner; everything is unmapped at the end") {
    std::weak_ptr<ScriptedFunction> weak = fn;
    pool.reset();
    fn.reset();
    CHECK_FALSE(weak.expired());  // the buffers keep pool and function alive
    bufs.clear();
    again->reset();
    CHECK(weak.expired());
  }
}

TEST_CASE("pcie: the DMA pool maps in multiples of the IOMMU's smallest page", "[pcie][pool]") {
  auto fn = std::make_shared<ScriptedFunction>();
  fn->page_sizes = (std::uint64_t{1} << 16) | (std::uint64_t{1} << 21);  // 64 KiB and 2 MiB pages
  auto pool = std::make_shared<DmaPool>(fn, 48, 100 * 1024);
  CHECK(pool->granule() == 64 * 1024);
  CHECK(pool->chunk_bytes() == 128 * 1024);  // the chunk rounded up to whole pages
  auto small = pool->allocate(pool, 4096, 4096);
  REQUIRE(small);
  auto big = pool->allocate(pool, 70 * 1024, 4096);  // more than half a chunk: its own mapping
  REQUIRE(big);
  CHECK(big->size() == 72 * 1024);
  REQUIRE(fn->mapped.size() == 2);
  for (const auto& [iova, bytes] : fn->mapped) {
    CHECK(iova % (64 * 1024) == 0);
    CHECK(bytes == 128 * 1024);
  }
  SECTION("no page sizes reported, or pages smaller than the host's: 4 KiB") {
    for (std::uint64_t sizes : {std::uint64_t{0}, std::uint64_t{0x800}}) {
      auto f = std::make_shared<ScriptedFunction>();
      f->page_sizes = sizes;
      CHECK(DmaPool(f, 48, std::size_t{2} << 20).granule() == 4096);
    }
  }
  SECTION("without an IOMMU the page sizes do not apply") {
    auto f = std::make_shared<ScriptedFunction>();
    f->addressing = DmaAddressing::Physical;
    f->page_sizes = std::uint64_t{1} << 16;
    CHECK(DmaPool(f, 48, std::size_t{2} << 20).granule() == 4096);
  }
}

TEST_CASE("pcie: the DMA pool runs out of address space with a message naming the reach and ranges", "[pcie][pool]") {
  auto fn = std::make_shared<ScriptedFunction>();
  fn->ranges = {{0, 0x3fffff}};  // 4 MiB, of which 3 above the floor
  auto pool = std::make_shared<DmaPool>(fn, 32, std::size_t{2} << 20);
  auto a = pool->allocate(pool, 2 << 20, 4096);
  REQUIRE(a);
  auto b = pool->allocate(pool, 2 << 20, 4096);
  REQUIRE_FALSE(b);
  CHECK(b.error().code == Errc::OutOfMemory);
  CHECK_THAT(b.error().message, Catch::Contains("below the device's 32-bit reach"));
  CHECK_THAT(b.error().message, Catch::Contains("[0x100000, 0x3fffff]"));
  CHECK(fn->host_blocks == 1);
}

TEST_CASE("pcie: without an IOMMU the pool takes the physical address and checks the reach", "[pcie][pool]") {
  auto fn = std::make_shared<ScriptedFunction>();
  fn->addressing = DmaAddressing::Physical;
  fn->next_physical = std::uint64_t{3} << 30;
  {
    auto pool = std::make_shared<DmaPool>(fn, 40, std::size_t{2} << 20);
    auto m = pool->allocate(pool, 4096, 4096);
    REQUIRE(m);
    CHECK(m->bus_addr() == std::uint64_t{3} << 30);
    CHECK(fn->mapped.empty());  // nothing to map without an IOMMU
  }
  fn->next_physical = std::uint64_t{5} << 30;
  auto pool = std::make_shared<DmaPool>(fn, 32, std::size_t{2} << 20);
  auto far = pool->allocate(pool, 4096, 4096);
  REQUIRE_FALSE(far);
  CHECK_THAT(far.error().message, Catch::Contains("beyond the device's 32-bit reach"));
  CHECK(fn->host_blocks == 0);
}

TEST_CASE("pcie: pagemap entries", "[pcie][pagemap]") {
  const std::uint64_t va = 0x7f0012345678;
  auto pa = physical_from_entry(kPagemapPresent | 0x1a2b3, va, 4096);
  REQUIRE(pa);
  CHECK(*pa == 0x1a2b3000ull + 0x678);
  // Bits 55..61 are flags (soft-dirty, exclusive, ...), not part of the frame number.
  pa = physical_from_entry(kPagemapPresent | (std::uint64_t{1} << 55) | 0x42, va, 4096);
  REQUIRE(pa);
  CHECK(*pa == 0x42000ull + 0x678);

  auto hidden = physical_from_entry(kPagemapPresent, va, 4096);
  REQUIRE_FALSE(hidden);
  CHECK(hidden.error().code == Errc::PermissionDenied);
  CHECK_THAT(hidden.error().message, Catch::Contains("needs CAP_SYS_ADMIN"));

  auto absent = physical_from_entry(kPagemapSwapped | 0x42, va, 4096);
  REQUIRE_FALSE(absent);
  CHECK_THAT(absent.error().message, Catch::Contains("not in memory (swapped out)"));
  CHECK_THAT(physical_from_entry(0, va, 4096).error().message, Catch::Contains("must be locked"));

  SECTION("this process's own pagemap: contiguity is checked page by page") {
    const int fd = ::open("/proc/self/pagemap", O_RDONLY);
    REQUIRE(fd >= 0);
    void* p = std::aligned_alloc(4096, 2 * 4096);
    std::memset(p, 1, 2 * 4096);
    auto r = contiguous_physical(fd, p, 2 * 4096);
    ::close(fd);
    std::free(p);
    // As root the frames are real (and 4 KiB pages are rarely neighbours); otherwise hidden.
    if (!r) {
      CHECK((r.error().code == Errc::PermissionDenied || r.error().code == Errc::OutOfMemory));
    }
  }
}

TEST_CASE("pcie: configuration space: capability list and PCI Express link", "[pcie][config]") {
  ConfigBytes c;
  c.put(cfg::kStatus, 2, cfg::kStatusCapabilities);
  c.put(cfg::kCapabilityPointer, 1, 0x40);
  c.put(0x40, 2, 0x6000 | cfg::kCapMsi);                     // MSI, next 0x60
  c.put(0x60, 2, 0x0000 | cfg::kCapExpress);                 // PCIe, last
  c.put(0x60 + cfg::kExpLinkCapabilities, 4, 3 | (8 << 4));  // 8 GT/s x8
  c.put(0x60 + cfg::kExpLinkStatus, 2, 2 | (4 << 4));        // trained 5 GT/s x4
  CHECK(find_capability(c.reader(), cfg::kCapMsi) == std::optional<std::uint16_t>{0x40});
  CHECK(find_capability(c.reader(), cfg::kCapExpress) == std::optional<std::uint16_t>{0x60});
  CHECK_FALSE(find_capability(c.reader(), cfg::kCapMsix));
  const auto link = read_link(c.reader());
  REQUIRE(link);
  CHECK(link->degraded());
  CHECK(to_string(*link) == "5.0 GT/s x4 (capable of 8.0 GT/s x8)");
  CHECK(link_degraded("0000:01:00.0", *link) ==
        "the PCIe link of 0000:01:00.0 trained at 5.0 GT/s x4 although the card can do 8.0 GT/s x8: bandwidth is "
        "lower than it should be. Reseat the card, try another slot (a x16 slot may be wired x4), check the slot's "
        "speed setting in the firmware (docs/pcie.md \"link trained below its capability\")");

  SECTION("a loop in the list ends") {
    c.put(0x60, 2, 0x4000 | cfg::kCapExpress);  // points back to 0x40
    CHECK_FALSE(find_capability(c.reader(), cfg::kCapMsix));
  }
  SECTION("no capability list, no link") {
    c.put(cfg::kStatus, 2, 0);
    CHECK_FALSE(read_link(c.reader()));
  }
  SECTION("a full-speed link is not degraded") {
    c.put(0x60 + cfg::kExpLinkStatus, 2, 3 | (8 << 4));
    CHECK(to_string(*read_link(c.reader())) == "8.0 GT/s x8");
  }
  CHECK(absent(0xffffffff));
  CHECK_FALSE(absent(0x702410ee));
}

TEST_CASE("pcie: PCI addresses are normalised or refused by name", "[pcie]") {
  CHECK(*normalize_address("01:00.0") == "0000:01:00.0");
  CHECK(*normalize_address("0000:3B:1f.7") == "0000:3b:1f.7");
  for (const char* bad : {"", "01:00", "0000:01:00.0x", "01:20.0", "01:00.8", "pcie"}) {
    auto r = normalize_address(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK_THAT(r.error().message, Catch::Contains(std::string("'") + bad + "'"));
  }
}

TEST_CASE("pcie: PCI IDs are parsed or refused by name", "[pcie]") {
  CHECK(*parse_pci_id("10ee:7024") == PciId{0x10ee, 0x7024});
  CHECK(*parse_pci_id("1234:11E8") == PciId{0x1234, 0x11e8});
  for (const char* bad : {"", "10ee", "10ee:", "10ee:7024:1", "10ee-7024", "12345:1", "xyz:1"}) {
    auto r = parse_pci_id(bad);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK_THAT(r.error().message, Catch::Contains(std::string("'") + bad + "' is not a PCI ID"));
  }
  // The softgpu's own identity comes from spec/abi.toml, and its vendor makes a candidate.
  CHECK(kSoftgpuId == PciId{abi::pci::kVendorId, abi::pci::kDeviceId});
  CHECK(is_candidate(kSoftgpuId, PcieOptions{}));
  CHECK_FALSE(is_candidate({0x1234, 0x11e8}, PcieOptions{}));
  PcieOptions extra;
  extra.extra_ids = {{0x1234, 0x11e8}};
  CHECK(is_candidate({0x1234, 0x11e8}, extra));
}

TEST_CASE("pcie: sysfs: driver, IOMMU group, group members", "[pcie][sysfs]") {
  FakeSysfs s;
  s.device("0000:01:00.0", "vfio-pci", 7);
  s.device("0000:01:00.1", "snd_hda_intel", 7);
  s.device("0000:02:00.0", "", 8);
  CHECK(bound_driver(s.root, "0000:01:00.0") == "vfio-pci");
  CHECK(bound_driver(s.root, "0000:02:00.0").empty());
  CHECK(iommu_group(s.root, "0000:01:00.0") == std::optional<unsigned>{7});
  const auto members = group_members(s.root, 7);
  REQUIRE(members.size() == 2);
  CHECK(members[1].address == "0000:01:00.1");
  CHECK(members[1].driver == "snd_hda_intel");
  CHECK(sysfs_id(s.root, "0000:01:00.0") == PciId{0x10ee, 0x7024});

  // What open_vfio_function says about each, before touching /dev/vfio.
  auto wrong = open_vfio_function("0000:01:00.1", s.root);
  REQUIRE_FALSE(wrong);
  CHECK_THAT(wrong.error().message, Catch::StartsWith("0000:01:00.1 (10ee:7024) is not bound to vfio-pci: it is bound "
                                                      "to the kernel driver 'snd_hda_intel'"));
  CHECK_FALSE(wrong.error().hardware_touched);
}

TEST_CASE("pcie: without an IOMMU, the sysfs `enable` the function wrote is given back on close", "[pcie][sysfs]") {
  FakeSysfs s;
  s.device("0000:03:00.0", "", 9);
  const std::string dir = s.root + "/bus/pci/devices/0000:03:00.0";
  std::ofstream(dir + "/config") << std::string(256, '\0');
  std::ofstream(dir + "/enable") << "0\n";
  auto read_enable = [&] {
    std::ifstream in(dir + "/enable");
    std::string v;
    in >> v;
    return v;
  };
  {
    auto f = open_sysfs_function("03:00.0", s.root);
    if (!f) FAIL(to_string(f.error()));
    CHECK((*f)->address() == "0000:03:00.0");
    CHECK(read_enable() == "1");  // enabled for us by the PCI core
  }
  CHECK(read_enable() == "0");  // and disabled again

  SECTION("a function bound to a kernel driver is refused before anything is written") {
    s.device("0000:04:00.0", "e1000e", 10);
    std::ofstream(s.root + "/bus/pci/devices/0000:04:00.0/enable") << "1\n";
    auto bound = open_sysfs_function("0000:04:00.0", s.root);
    REQUIRE_FALSE(bound);
    CHECK_THAT(bound.error().message, Catch::StartsWith("0000:04:00.0 is bound to the kernel driver 'e1000e'"));
    std::ifstream in(s.root + "/bus/pci/devices/0000:04:00.0/enable");
    std::string v;
    in >> v;
    CHECK(v == "1");
  }
}

TEST_CASE("pcie: the messages a person acts on", "[pcie][messages]") {
  SECTION("no card lists what was seen") {
    FunctionInfo a;
    a.address = "0000:00:00.0";
    a.id = {0x8086, 0x0d57};
    a.class_code = 0x060000;
    a.vendor_name = "Intel Corporation";
    FunctionInfo b;
    b.address = "0000:00:03.0";
    b.id = {0x1af4, 0x1041};
    b.class_code = 0x020000;
    b.driver = "virtio-pci";
    const Error e = no_card("", {a, b});
    CHECK(e.code == Errc::TransportError);
    CHECK(e.message ==
          "no softgpu card found; libpciaccess sees 2 functions:\n"
          "  0000:00:00.0 8086:0d57 class 060000 (Intel Corporation), no driver\n"
          "  0000:00:03.0 1af4:1041 class 020000, driver virtio-pci\n"
          "A softgpu card is a function with vendor 10ee (or an ID given with --pci-id) whose BAR0 answers ID_MAGIC. "
          "Check `lspci -nn`, that the bitstream is loaded and the card was rescanned (docs/pcie.md, \"no softgpu "
          "card found\").");
    CHECK_THAT(no_card("0000:05:00.0", {}).message,
               Catch::StartsWith("no PCI function at 0000:05:00.0; libpciaccess sees no PCI functions at all"));
  }
  SECTION("wrong driver gives the exact commands") {
    const Error e = wrong_driver("0000:01:00.0", {0x10ee, 0x7024}, "xdma");
    CHECK(e.message ==
          "0000:01:00.0 (10ee:7024) is not bound to vfio-pci: it is bound to the kernel driver 'xdma'. Hand it to "
          "vfio-pci:\n"
          "  sgpu bind-vfio 0000:01:00.0\n"
          "or by hand, as root:\n"
          "  modprobe vfio-pci\n"
          "  echo vfio-pci > /sys/bus/pci/devices/0000:01:00.0/driver_override\n"
          "  echo 0000:01:00.0 > /sys/bus/pci/devices/0000:01:00.0/driver/unbind\n"
          "  echo 0000:01:00.0 > /sys/bus/pci/drivers_probe");
    CHECK_THAT(wrong_driver("0000:01:00.0", {0x10ee, 0x7024}, "").message,
               Catch::Contains("no driver is bound to it") && !Catch::Contains("driver/unbind"));
  }
  SECTION("a group that is not viable names the other devices") {
    const Error e = group_not_viable("0000:01:00.0", 7,
                                     {{"0000:01:00.0", "vfio-pci"},
                                      {"0000:01:00.1", "snd_hda_intel"},
                                      {"0000:00:01.0", "pcieport"},
                                      {"0000:01:00.2", ""}});
    CHECK_THAT(e.message, Catch::StartsWith("IOMMU group 7 of 0000:01:00.0 is not viable"));
    CHECK_THAT(e.message, Catch::Contains("2 other devices in it are bound to a kernel driver:\n"
                                          "  0000:01:00.1 (driver snd_hda_intel)\n  0000:00:01.0 (driver pcieport)"));
    CHECK_THAT(e.message, Catch::Contains("echo 0000:01:00.1 > /sys/bus/pci/devices/0000:01:00.1/driver/unbind"));
    CHECK_THAT(e.message, !Catch::Contains("0000:01:00.2 (driver"));
  }
  SECTION("RLIMIT_MEMLOCK says how much") {
    const Error e = memlock_too_low(std::uint64_t{2} << 20, 64 * 1024);
    CHECK(e.code == Errc::PermissionDenied);
    CHECK_THAT(e.message, Catch::StartsWith("RLIMIT_MEMLOCK is too low: DMA memory is pinned, this needs 2048 KiB "
                                            "locked in total but the limit is 64 KiB. Raise it (`ulimit -l 2048`"));
    LockLimits l;
    l.limit = 64 * 1024;
    l.locked = 32 * 1024;
    CHECK(would_exceed(l, 64 * 1024));
    CHECK_FALSE(would_exceed(l, 32 * 1024));
    l.cap_ipc_lock = true;
    CHECK_FALSE(would_exceed(l, std::uint64_t{1} << 40));
  }
  SECTION("Bus Master, identity, version, loss, no IOMMU, unsafe, hugepages") {
    CHECK_THAT(bus_master_off("0000:01:00.0", 0x0002).message,
               Catch::StartsWith("Bus Master is off on 0000:01:00.0 after enabling it (COMMAND reads 0x0002)"));
    const Error id = id_mismatch("0000:01:00.0", 0xffff0000, 0x53475055);
    CHECK(id.code == Errc::DeviceMismatch);
    CHECK_THAT(id.message, Catch::StartsWith("0000:01:00.0 is not a softgpu: ID_MAGIC (BAR0 + 0x0) reads 0xffff0000, "
                                             "expected 0x53475055"));
    CHECK_THAT(version_mismatch("0000:01:00.0", 0x00020001, 2, 1).message,
               Catch::Contains("speaks interface version 2 (ID_VERSION 0x00020001) but this library speaks 1"));
    CHECK_THAT(device_lost("0000:01:00.0", "reading BAR0 + 0x10"),
               Catch::StartsWith("the device at 0000:01:00.0 is gone (reading BAR0 + 0x10): its configuration space "
                                 "reads all-ones"));
    CHECK_THAT(no_iommu_group("0000:01:00.0").message, Catch::Contains("intel_iommu=on"));
    CHECK_THAT(unsafe_no_iommu_warning("0000:01:00.0"),
               Catch::StartsWith("UNSAFE: driving 0000:01:00.0 without an IOMMU. The card reaches host memory by "
                                 "physical address with nothing to stop it"));
    CHECK_THAT(no_hugepages(2 << 20, "Cannot allocate memory").message,
               Catch::Contains("echo 64 > /proc/sys/vm/nr_hugepages"));
  }
}

namespace {

// A scripted softgpu: its IDs in configuration space, its identity registers in BAR0.
std::unique_ptr<ScriptedFunction> scripted_softgpu() {
  auto f = std::make_unique<ScriptedFunction>();
  f->config_write(cfg::kVendorId, 2, abi::pci::kVendorId);
  f->config_write(cfg::kDeviceId, 2, abi::pci::kDeviceId);
  *f->config_writes = 0;
  f->bar0.emplace(4096);
  f->bar0->write32(SGPU_REG(ID_MAGIC), SGPU_REGS__ID_MAGIC__VALUE_reset);
  f->bar0->write32(SGPU_REG(ID_VERSION), SGPU_FIELD(ID_VERSION, MAJOR).set(0, SGPU_REGS__ID_VERSION__MAJOR_reset));
  f->bar0->write32(SGPU_REG(CAP_BUS), SGPU_FIELD(CAP_BUS, ADDR_BITS).set(0, 40));
  return f;
}

Result<std::unique_ptr<Transport>> open_scripted(std::unique_ptr<ScriptedFunction> f,
                                                 const PcieTransportOptions& options = {}) {
  return open_pcie_transport(std::move(f), options);
}

}  // namespace

TEST_CASE("pcie: open_pcie_transport drives a function that is a softgpu, registers outside BAR0 are refused",
          "[pcie][open]") {
  auto f = scripted_softgpu();
  ScriptedFunction* fn = f.get();
  auto t = open_scripted(std::move(f));
  if (!t) FAIL(to_string(t.error()));
  const auto command = fn->config_read(cfg::kCommand, 2);
  CHECK((command & cfg::kCommandMemory) != 0);
  CHECK((command & cfg::kCommandBusMaster) != 0);
  CHECK((*t)->name() == "pcie");
  CHECK((*t)->read32(SGPU_REG(ID_MAGIC)) == SGPU_REGS__ID_MAGIC__VALUE_reset);
  CHECK_THROWS_WITH((*t)->read32(4096), "0000:00:00.0: register read at BAR0 + 0x1000 is outside the 0x1000-byte "
                                        "BAR or unaligned");
  CHECK_THROWS_WITH((*t)->write32(0x11, 0), Catch::Contains("register write at BAR0 + 0x11"));
  // The reach CAP_BUS.ADDR_BITS reports bounds every DMA address.
  auto m = (*t)->alloc_dma(4096);
  REQUIRE(m);
  CHECK(m->bus_addr() + m->size() <= std::uint64_t{1} << 40);
}

TEST_CASE("pcie: open_pcie_transport refuses what it cannot drive, naming the field", "[pcie][open]") {
  SECTION("no function") {
    auto t = open_pcie_transport(nullptr, {});
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::InvalidArgument);
  }
  SECTION("a DMA width outside [21, 64] bits is refused before the function is touched") {
    for (unsigned bits : {1u, 20u, 65u}) {
      auto f = scripted_softgpu();
      const std::shared_ptr<int> writes = f->config_writes;
      PcieTransportOptions o;
      o.dma_address_bits = bits;
      auto t = open_scripted(std::move(f), o);
      REQUIRE_FALSE(t);
      CHECK(t.error().code == Errc::InvalidArgument);
      CHECK_FALSE(t.error().hardware_touched);
      CHECK_THAT(t.error().message, Catch::StartsWith(fmt::format("dma_address_bits {} is outside [21, 64]", bits)));
      CHECK(*writes == 0);
    }
  }
  SECTION("a function that is gone (all-ones vendor ID)") {
    auto f = scripted_softgpu();
    f->config[0] = f->config[1] = 0xff;
    auto t = open_scripted(std::move(f));
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::TransportError);
    CHECK_FALSE(t.error().hardware_touched);
    CHECK_THAT(t.error().message, Catch::StartsWith("the device at 0000:00:00.0 is gone (opening it)"));
  }
  SECTION("memory decoding that does not stick") {
    auto f = scripted_softgpu();
    f->command_sticks = static_cast<std::uint16_t>(~cfg::kCommandMemory);
    auto t = open_scripted(std::move(f));
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::TransportError);
    CHECK(t.error().hardware_touched);
    CHECK_THAT(t.error().message,
               Catch::StartsWith("0000:00:00.0 does not decode memory after enabling it (COMMAND reads 0x0004)"));
  }
  SECTION("no BAR0") {
    auto f = scripted_softgpu();
    f->bar0.reset();
    auto t = open_scripted(std::move(f));
    REQUIRE_FALSE(t);
    CHECK_THAT(t.error().message, Catch::Contains("has no BAR0"));
  }
  SECTION("a BAR0 too small for the registers") {
    auto f = scripted_softgpu();
    f->bar0.emplace(8);
    f->bar0->write32(SGPU_REG(ID_MAGIC), SGPU_REGS__ID_MAGIC__VALUE_reset);
    auto t = open_scripted(std::move(f));
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::DeviceMismatch);
    CHECK_THAT(t.error().message, Catch::StartsWith("0000:00:00.0: BAR0 is 0x8 bytes, too small"));
  }
  SECTION("ID_MAGIC and ID_VERSION") {
    auto f = scripted_softgpu();
    f->bar0->write32(SGPU_REG(ID_MAGIC), 0x12345678);
    auto t = open_scripted(std::move(f));
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::DeviceMismatch);
    CHECK_THAT(t.error().message, Catch::StartsWith("0000:00:00.0 is not a softgpu: ID_MAGIC (BAR0 + 0x0) reads "
                                                    "0x12345678"));
    auto g = scripted_softgpu();
    g->bar0->write32(SGPU_REG(ID_VERSION), SGPU_FIELD(ID_VERSION, MAJOR).set(0, 9));
    auto v = open_scripted(std::move(g));
    REQUIRE_FALSE(v);
    CHECK(v.error().code == Errc::DeviceMismatch);
    CHECK_THAT(v.error().message, Catch::Contains("speaks interface version 9"));
  }
  SECTION("a DMA reach the ring cannot live in (CAP_BUS.ADDR_BITS)") {
    auto f = scripted_softgpu();
    f->bar0->write32(SGPU_REG(CAP_BUS), SGPU_FIELD(CAP_BUS, ADDR_BITS).set(0, 16));
    auto t = open_scripted(std::move(f));
    REQUIRE_FALSE(t);
    CHECK(t.error().code == Errc::DeviceMismatch);
    CHECK_THAT(t.error().message, Catch::StartsWith("0000:00:00.0: CAP_BUS.ADDR_BITS reads 16: a DMA reach below 21 "
                                                    "bits"));
  }
}

TEST_CASE("pcie: without an IOMMU, memory without a physical address or off the alignment is given back",
          "[pcie][pool]") {
  auto fn = std::make_shared<ScriptedFunction>();
  fn->addressing = DmaAddressing::Physical;
  fn->omit_physical = true;
  auto pool = std::make_shared<DmaPool>(fn, 64, std::size_t{2} << 20);
  auto none = pool->allocate(pool, 4096, 4096);
  REQUIRE_FALSE(none);
  CHECK(none.error().code == Errc::TransportError);
  CHECK_THAT(none.error().message, Catch::Contains("without a bus address"));
  CHECK(fn->host_blocks == 0);

  fn->omit_physical = false;
  fn->next_physical = (std::uint64_t{1} << 30) + 4096;  // page-aligned only
  auto off = pool->allocate(pool, 4096, std::size_t{64} << 10);
  REQUIRE_FALSE(off);
  CHECK(off.error().code == Errc::OutOfMemory);
  CHECK_THAT(off.error().message,
             Catch::Contains("physical DMA memory at 0x40001000 is not aligned to the 0x10000 bytes asked for"));
  CHECK(fn->host_blocks == 0);
}

namespace {

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

TEST_CASE("pcie: without an IOMMU, BARs come from sysfs resource files or are refused by number", "[pcie][sysfs]") {
  FakeSysfs s;
  s.device("0000:05:00.0", "", 11);
  const std::string dir = s.root + "/bus/pci/devices/0000:05:00.0";
  std::ofstream(dir + "/config") << std::string(256, '\0');
  std::ofstream(dir + "/enable") << "0\n";
  std::ofstream(dir + "/resource1").flush();                   // a BAR the card does not have: empty
  std::ofstream(dir + "/resource2") << std::string(4096, '\0');  // a 4 KiB BAR
  auto f = open_sysfs_function("05:00.0", s.root);
  if (!f) FAIL(to_string(f.error()));
  PciFunction& fn = **f;

  auto six = fn.map_bar(6);
  REQUIRE_FALSE(six);
  CHECK(six.error().code == Errc::InvalidArgument);
  CHECK(six.error().message == "BAR 6 does not exist (0..5)");
  auto missing = fn.map_bar(0);
  REQUIRE_FALSE(missing);
  CHECK_THAT(missing.error().message, Catch::StartsWith("cannot open " + dir + "/resource0: No such file"));
  CHECK_THAT(missing.error().message, Catch::EndsWith("(BAR0 through sysfs needs root)"));
  auto empty = fn.map_bar(1);
  REQUIRE_FALSE(empty);
  CHECK(empty.error().message == "0000:05:00.0 has no BAR1");

  auto bar = fn.map_bar(2);
  REQUIRE(bar);
  CHECK((*bar)->size() == 4096);
  (*bar)->write32(0x10, 0xcafef00d);
  CHECK((*bar)->read32(0x10) == 0xcafef00d);
  CHECK(fn.map_bar(2).value() == *bar);  // mapped once
}

TEST_CASE("pcie: bind-vfio and unbind-vfio check each step and say which failed", "[pcie][sysfs][bind]") {
  FakeSysfs s;
  s.device("0000:06:00.0", "e1000e", 12);
  const std::string dev = s.root + "/bus/pci/devices/0000:06:00.0";

  SECTION("an address that is no function") {
    auto r = bind_vfio("06:1f.0", s.root);
    REQUIRE_FALSE(r);
    CHECK_THAT(r.error().message, Catch::StartsWith("no PCI function at 0000:06:1f.0"));
    auto bad = unbind_vfio("06:1f", s.root);
    REQUIRE_FALSE(bad);
    CHECK(bad.error().code == Errc::InvalidArgument);
    CHECK_THAT(bad.error().message, Catch::StartsWith("'06:1f' is not a PCI address"));
  }
  SECTION("vfio-pci not loaded: nothing is written") {
    std::ofstream(dev + "/driver_override").flush();
    auto r = bind_vfio("0000:06:00.0", s.root);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::Unsupported);
    CHECK_THAT(r.error().message, Catch::StartsWith("vfio-pci is not loaded: run `modprobe vfio-pci`"));
    CHECK(slurp(dev + "/driver_override").empty());
  }
  SECTION("an attribute that cannot be written is named") {
    s.mkdirs("bus/pci/drivers/vfio-pci");
    auto r = bind_vfio("0000:06:00.0", s.root);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::TransportError);
    CHECK_THAT(r.error().message, Catch::StartsWith("cannot open " + dev + "/driver_override: No such file"));
    auto u = unbind_vfio("0000:06:00.0", s.root);
    REQUIRE_FALSE(u);
    CHECK_THAT(u.error().message, Catch::StartsWith("cannot open " + dev + "/driver_override"));
  }
  SECTION("a driver that keeps the function after drivers_probe") {
    s.mkdirs("bus/pci/drivers/vfio-pci");
    std::ofstream(dev + "/driver_override").flush();
    std::ofstream(s.root + "/bus/pci/drivers/e1000e/unbind").flush();
    std::ofstream(s.root + "/bus/pci/drivers_probe").flush();
    auto r = bind_vfio("0000:06:00.0", s.root);  // the fake kernel moves nothing
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::TransportError);
    CHECK(r.error().hardware_touched);
    CHECK_THAT(r.error().message,
               Catch::StartsWith("0000:06:00.0 is bound to e1000e after drivers_probe, not vfio-pci"));
    CHECK(slurp(dev + "/driver_override") == "vfio-pci");
    CHECK(slurp(s.root + "/bus/pci/drivers/e1000e/unbind") == "0000:06:00.0");
    CHECK(slurp(s.root + "/bus/pci/drivers_probe") == "0000:06:00.0");

    std::ofstream(dev + "/driver_override").flush();  // a regular file keeps old bytes; sysfs would not
    auto u = unbind_vfio("0000:06:00.0", s.root);
    REQUIRE(u);
    REQUIRE(u->size() == 2);
    CHECK((*u)[0] == "0000:06:00.0 was not bound to vfio-pci (e1000e)");
    CHECK((*u)[1] == "0000:06:00.0 is bound to e1000e");
    CHECK(slurp(dev + "/driver_override") == "\n");
  }
}
