// The memory manager on the Verilated RTL: the DeviceExecutor runs paging buffers as privileged
// COPY / FILL / MAP / UNMAP packets, and a working set larger than the memory segment cycles
// through eviction (to the aperture and to system memory) and back with every byte checked.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "sgpu/device.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/vidmm/device_executor.hpp"
#include "sgpu/vidmm/memory_manager.hpp"
#include "tb_transports.hpp"

using namespace sgpu;
using namespace sgpu::vidmm;
using namespace std::chrono_literals;

namespace {

constexpr std::uint64_t kPage = 4096;

Device open_device() {
  auto t = test::tb_registry().open(test::e2e_backend());
  REQUIRE(t);
  DeviceOptions opt;
  opt.aperture.table_pages = 1024;  // 4 MiB of aperture: a small table keeps set-up quick
  auto d = Device::open(std::move(*t), opt);
  if (!d) FAIL(to_string(d.error()));
  REQUIRE(d->aperture() != nullptr);
  REQUIRE(d->info().has_memory_segment);
  return std::move(*d);
}

/// The device's segments, the memory segment cut to `mem_bytes` and the aperture to its table.
kmd::AdapterDescription small_description(Device& dev, std::uint64_t mem_bytes) {
  kmd::AdapterDescription d = kmd::describe(dev.info());
  REQUIRE(d.segments.size() == 2);
  REQUIRE_FALSE(d.segments[0].is_aperture());
  REQUIRE(d.segments[1].is_aperture());
  d.segments[0].size = d.segments[0].commit_limit = mem_bytes;
  d.segments[1].size = d.segments[1].commit_limit = dev.aperture()->size();
  d.caps.aperture_segment_commit_limit = dev.aperture()->size();
  return d;
}

std::uint32_t word(std::uint32_t seed, std::size_t i) {
  return seed * 2654435761u + static_cast<std::uint32_t>(i) * 40503u + 1;
}
void pattern(const DmaMemory& m, std::size_t bytes, std::uint32_t seed) {
  auto* w = m.as<std::uint32_t>();
  for (std::size_t i = 0; i < bytes / 4; ++i) w[i] = word(seed, i);
}
/// Index of the first dword that differs from the pattern, or -1.
long mismatch(const DmaMemory& m, std::size_t bytes, std::uint32_t seed) {
  const auto* w = m.as<std::uint32_t>();
  for (std::size_t i = 0; i < bytes / 4; ++i)
    if (w[i] != word(seed, i)) return static_cast<long>(i);
  return -1;
}

/// One privileged COPY submission (the test playing the GPU), waited for.
RingFence gpu_copy(Device& dev, std::uint64_t src, std::uint64_t dst, std::uint32_t bytes) {
  auto buf = dev.transport().alloc_dma(4096);
  REQUIRE(buf);
  PacketWriter w(*buf);
  REQUIRE(w.copy(src, dst, bytes));
  Submission s;
  s.buffer = &*buf;
  s.end_offset = w.offset();
  s.flags = abi::ring_flags::kPrivileged;
  auto f = dev.submit_next(s);
  REQUIRE(f);
  const Status st = dev.wait_fence(*f, 100ms);
  if (!st) FAIL(to_string(st.error()));
  return *f;
}

PagingLocation seg(SegmentId s, std::uint64_t addr) {
  PagingLocation l;
  l.segment = s;
  l.segment_address = addr;
  return l;
}
PagingLocation sys(const DmaMemory& m, std::uint64_t off = 0) {
  PagingLocation l;
  l.system = &m;
  l.system_offset = off;
  return l;
}

}  // namespace

TEST_CASE("device executor on the RTL: FILL, TRANSFER both ways, MAP / UNMAP, INIT_CONTEXT_RESOURCE",
          "[e2e][parity][vidmm][device_executor]") {
  Device dev = open_device();
  Transport& t = dev.transport();
  Aperture& ap = *dev.aperture();
  auto desc = small_description(dev, 1 << 20);
  auto ex = DeviceExecutor::create(dev, desc.segments);
  if (!ex) FAIL(to_string(ex.error()));
  const std::uint64_t mem = desc.segments[0].base_address;
  const std::uint64_t aps = desc.segments[1].base_address;
  constexpr std::uint32_t n = 16 * 1024;

  auto a = t.alloc_dma(n), b = t.alloc_dma(n), c = t.alloc_dma(n), d = t.alloc_dma(n);
  REQUIRE((a && b && c && d));
  pattern(*a, n, 1);

  // Buffer 1: FILL mem[0, n); TRANSFER A -> mem[n, 2n); MAP aperture pages 8.. -> B;
  // TRANSFER mem[n, 2n) -> aperture (lands in B); TRANSFER mem[0, n) -> C; INIT mem[2n, 3n).
  PagingBuffer pb;
  FillOp fill;
  fill.fill_size = n;
  fill.fill_pattern = 0x11223344;
  fill.destination = seg(1, mem);
  pb.operations.push_back(fill);
  TransferOp in;
  in.transfer_size = n;
  in.source = sys(*a);
  in.destination = seg(1, mem + n);
  pb.operations.push_back(in);
  MapApertureSegmentOp map;
  map.segment = 2;
  map.offset_in_pages = 8;
  map.number_of_pages = n / kPage;
  map.pages = &*b;
  pb.operations.push_back(map);
  TransferOp through;
  through.transfer_size = n;
  through.source = seg(1, mem + n);
  through.destination = seg(2, aps + 8 * kPage);
  pb.operations.push_back(through);
  TransferOp out;
  out.transfer_size = n;
  out.source = seg(1, mem);
  out.destination = sys(*c);
  pb.operations.push_back(out);
  InitContextResourceOp init;
  init.size = n;
  init.initial_pattern = 0xc0de0000;
  init.destination = seg(1, mem + 2 * n);
  pb.operations.push_back(init);
  DiscardContentOp discard;
  discard.segment = 1;
  discard.segment_address = mem + n;
  discard.size = n;
  pb.operations.push_back(discard);
  const Status st = (*ex)->execute(pb);
  if (!st) FAIL(to_string(st.error()));

  CHECK(mismatch(*b, n, 1) == -1);  // A -> memory segment -> aperture -> B, byte exact
  const auto* cw = c->as<std::uint32_t>();
  CHECK(std::all_of(cw, cw + n / 4, [](std::uint32_t w) { return w == 0x11223344; }));
  for (std::uint32_t p = 0; p < n / kPage; ++p)
    CHECK(ap.pte(8 + p) == (b->bus_addr() + p * kPage | Aperture::kPteValid | Aperture::kPteWritable));
  gpu_copy(dev, mem + 2 * n, d->bus_addr(), n);
  const auto* dw = d->as<std::uint32_t>();
  CHECK(std::all_of(dw, dw + n / 4, [](std::uint32_t w) { return w == 0xc0de0000; }));

  // Buffer 2: TRANSFER aperture -> memory segment (reads B through the GART), UNMAP, and the
  // aperture pages are back on the dummy page.
  PagingBuffer pb2;
  TransferOp back;
  back.transfer_size = n;
  back.source = seg(2, aps + 8 * kPage);
  back.destination = seg(1, mem + 3 * n);
  pb2.operations.push_back(back);
  UnmapApertureSegmentOp unmap;
  unmap.segment = 2;
  unmap.offset_in_pages = 8;
  unmap.number_of_pages = n / kPage;
  unmap.dummy_page = (*ex)->dummy_page();
  pb2.operations.push_back(unmap);
  const Status st2 = (*ex)->execute(pb2);
  if (!st2) FAIL(to_string(st2.error()));
  for (std::uint32_t p = 0; p < n / kPage; ++p) CHECK(ap.pte(8 + p) == ap.dummy_pte());
  std::memset(d->cpu(), 0, n);
  gpu_copy(dev, mem + 3 * n, d->bus_addr(), n);
  CHECK(mismatch(*d, n, 1) == -1);
  CHECK((*ex)->counters().buffers == 2);
  CHECK((*ex)->counters().copy_bytes == 4u * n);
  CHECK(ap.dummy_intact());
}

TEST_CASE("device executor on the RTL: a faulting paging buffer is a DeviceFault with hardware touched",
          "[e2e][parity][vidmm][device_executor]") {
  Device dev = open_device();
  auto desc = small_description(dev, 1 << 20);
  auto ex = DeviceExecutor::create(dev, desc.segments);
  REQUIRE(ex);
  // A transfer out of an unmapped aperture page into the memory segment reads the dummy page
  // (fine); a transfer *into* an unmapped aperture page hits the read-only dummy PTE and faults.
  auto a = dev.transport().alloc_dma(kPage);
  REQUIRE(a);
  PagingBuffer pb;
  TransferOp tr;
  tr.transfer_size = kPage;
  tr.source = sys(*a);
  tr.destination = seg(2, desc.segments[1].base_address + 5 * kPage);
  pb.operations.push_back(tr);
  const Status st = (*ex)->execute(pb);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::DeviceFault);
  CHECK(st.error().hardware_touched);
  CHECK_THAT(st.error().message, Catch::Contains("paging buffer"));
  CHECK((*ex)->counters().buffers == 0);
}

TEST_CASE("device executor: records are validated before the device is touched", "[e2e][parity][vidmm][device_executor]") {
  Device dev = open_device();
  auto desc = small_description(dev, 1 << 20);
  auto ex = DeviceExecutor::create(dev, desc.segments);
  REQUIRE(ex);
  const RingFence before = dev.last_submitted_fence();
  PagingBuffer pb;
  FillOp fill;
  fill.fill_size = kPage;
  fill.destination = seg(1, desc.segments[0].base_address + (1 << 20));  // just past the segment
  pb.operations.push_back(fill);
  const Status st = (*ex)->execute(pb);
  REQUIRE_FALSE(st);
  CHECK(st.error().code == Errc::InvalidArgument);
  CHECK_FALSE(st.error().hardware_touched);
  CHECK(dev.last_submitted_fence() == before);
  // An aperture segment larger than the GART table is refused at creation.
  auto big = desc.segments;
  big[1].size = big[1].commit_limit = dev.aperture()->size() * 2;
  auto bad = DeviceExecutor::create(dev, big);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::InvalidArgument);
}

TEST_CASE("pressure on the RTL: a working set 4x the memory segment cycles through eviction, every byte checked",
          "[e2e][parity][vidmm][pressure]") {
  Device dev = open_device();
  Transport& t = dev.transport();
  constexpr std::uint64_t kMemBytes = 256 * 1024;
  constexpr std::uint32_t kAllocBytes = 64 * 1024;
  constexpr unsigned kAllocs = 16;  // 1 MiB: four times the memory segment
  constexpr unsigned kRounds = 6;
  auto desc = small_description(dev, kMemBytes);
  desc.segments[1].commit_limit = 512 * 1024;  // the aperture takes some victims, not all
  desc.caps.aperture_segment_commit_limit = 512 * 1024;
  auto ex = DeviceExecutor::create(dev, desc.segments);
  if (!ex) FAIL(to_string(ex.error()));
  TransportSystemMemory system(t);
  auto adapter = kmd::Adapter::create(desc, **ex, system);
  if (!adapter) FAIL(to_string(adapter.error()));
  MemoryManager& mm = (*adapter)->memory_manager();

  // Even allocations evict to the aperture (MAP + TRANSFER), odd ones straight to system memory.
  std::vector<AllocationHandle> allocs;
  for (unsigned i = 0; i < kAllocs; ++i) {
    auto info = kmd::AllocationInfo::placed(kAllocBytes, kmd::SegmentSet::of(1), 1);
    if (i % 2 == 0) info.eviction_segments = kmd::SegmentSet::of(2);
    info.driver_handle = 0x1000 + i;
    auto h = mm.create_allocation(info);
    if (!h) FAIL(to_string(h.error()));
    allocs.push_back(*h);
  }
  auto src = t.alloc_dma(kAllocBytes), dst = t.alloc_dma(kAllocBytes);
  REQUIRE((src && dst));
  std::vector<std::uint32_t> seed(kAllocs, 0);  // 0 = never written (FILL pattern 0 expected)
  std::mt19937 rng(20261122);
  unsigned checked = 0;
  for (unsigned round = 0; round < kRounds; ++round) {
    std::vector<unsigned> order(kAllocs);
    for (unsigned i = 0; i < kAllocs; ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng);
    for (unsigned i : order) {
      const std::vector<AllocationListEntry> list{{allocs[i], true}};
      auto placed = mm.make_resident(list);
      if (!placed) FAIL("round " << round << " alloc " << i << ": " << to_string(placed.error()));
      const std::uint64_t gpu = (*placed)[0].gpu_address;
      REQUIRE((*placed)[0].segment == 1);
      // Read the contents back through the device and check them.
      std::memset(dst->cpu(), 0xee, kAllocBytes);
      RingFence f = gpu_copy(dev, gpu, dst->bus_addr(), kAllocBytes);
      if (seed[i] == 0) {
        const auto* w = dst->as<std::uint32_t>();
        if (!std::all_of(w, w + kAllocBytes / 4, [](std::uint32_t x) { return x == 0; }))
          FAIL("round " << round << " alloc " << i << ": first touch is not the FILL pattern");
      } else if (long bad = mismatch(*dst, kAllocBytes, seed[i]); bad >= 0) {
        FAIL("round " << round << " alloc " << i << ": dword " << bad << " differs after eviction");
      }
      ++checked;
      // New contents, written by the GPU.
      seed[i] = round * 1000 + i + 1;
      pattern(*src, kAllocBytes, seed[i]);
      f = gpu_copy(dev, src->bus_addr(), gpu, kAllocBytes);
      mm.note_submitted(list, {}, f);
      mm.set_completed_fence(dev.completed_fence());
    }
  }
  // Every allocation once more, and the device faulted nowhere on the way.
  for (unsigned i = 0; i < kAllocs; ++i) {
    auto placed = mm.make_resident({{allocs[i], false}});
    REQUIRE(placed);
    gpu_copy(dev, (*placed)[0].gpu_address, dst->bus_addr(), kAllocBytes);
    CHECK(mismatch(*dst, kAllocBytes, seed[i]) == -1);
  }
  const auto& c = (*ex)->counters();
  INFO("paging buffers " << c.buffers << ", copied " << c.copy_bytes << " B, mapped " << c.mapped_pages << " pages");
  CHECK(checked == kAllocs * kRounds);
  CHECK(c.copy_bytes >= 2ull * kRounds * (kAllocs * kAllocBytes - kMemBytes));  // out and back, every round
  CHECK(c.mapped_pages > 0);
  CHECK(c.unmapped_pages > 0);
  CHECK(dev.aperture()->dummy_intact());
  for (auto h : allocs) REQUIRE(mm.destroy_allocation(h));
  CHECK(mm.live_allocations() == 0);
}
