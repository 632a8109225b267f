// Paging benchmark on the Verilated design: the memory manager evicts a 1 MiB allocation from
// the memory segment to system memory (and brings it back) through the DeviceExecutor.
// Prints one JSON object (see cmake/SgpuBench.cmake):
//   paging_transfer_efficiency_1m  eviction of a written 1 MiB allocation (4 TRANSFER pieces of
//                                  256 KiB = 4 COPY packets in one privileged paging buffer):
//                                  1 MiB / device cycles from before the submission to the
//                                  retired paging fence (CYCLE_LO/HI), ÷ bus bytes per cycle;
//                                  256-cycle read latency, 64-cycle write response
//   paging_restore_efficiency_1m   the same for the page-in back to the memory segment
//   paging_transfer_cycles_1m      the eviction's device cycles
#include <cstdio>
#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench_must.hpp"
#include "backends/backends.hpp"
#include "sgpu/device.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/vidmm/device_executor.hpp"
#include "sgpu/vidmm/memory_manager.hpp"
#include "sim/sim_device.hpp"

namespace {

using namespace sgpu;
using namespace std::chrono_literals;

using bench::must;

constexpr std::uint32_t kBytes = 1 << 20;

RingFence gpu_copy(Device& dev, const DmaMemory& buf, std::uint64_t src, std::uint64_t dst) {
  PacketWriter w(buf);
  must(w.copy(src, dst, kBytes), "copy packet");
  Submission s;
  s.buffer = &buf;
  s.end_offset = w.offset();
  s.flags = abi::ring_flags::kPrivileged;
  const RingFence f = must(dev.submit_next(s), "submit");
  must(dev.wait_fence(f, 1s), "wait");
  return f;
}

}  // namespace

int main() {
  TransportRegistry registry;
  must(tb::register_backends(registry), "register the testbench's backends");
  sim::SimConfig& board = *registry.options<sim::SimConfig>("sim");
  board.read_latency = 256;
  board.write_latency = 64;
  DeviceOptions opt;
  opt.aperture.table_pages = 1024;
  Device dev = must(Device::open(must(registry.open("sim"), "open sim"), opt), "open device");
  const double bus_bytes = dev.info().bus_data_bytes;

  kmd::AdapterDescription desc = kmd::describe(dev.info());
  if (desc.segments.empty() || desc.segments[0].is_aperture()) {
    fmt::print(stderr, "bench_paging: the device reports no memory segment\n");
    return 1;
  }
  desc.segments[0].size = desc.segments[0].commit_limit = 4 * kBytes;
  desc.segments.resize(1);  // evict straight to system memory
  vidmm::DeviceExecutorOptions xo;
  xo.timeout = 1s;
  auto ex = must(vidmm::DeviceExecutor::create(dev, desc.segments, xo), "executor");
  TransportSystemMemory system(dev.transport());
  vidmm::MemoryManagerConfig cfg;
  cfg.segments = desc.segments;
  auto mm = must(vidmm::MemoryManager::create(cfg, *ex, system), "memory manager");

  kmd::AllocationInfo info;
  info.size = kBytes;
  info.supported_read_segments = info.supported_write_segments = kmd::SegmentSet::of(1);
  info.preferred_segment = kmd::SegmentPreference::of({1});
  const auto h = must(mm->create_allocation(info), "create");
  const std::vector<AllocationListEntry> list{{h, true}};
  const auto placed = must(mm->make_resident(list), "make resident");
  const std::uint64_t gpu = placed[0].gpu_address;

  auto data = must(dev.transport().alloc_dma(kBytes), "dma");
  auto back = must(dev.transport().alloc_dma(kBytes), "dma");
  auto cmd = must(dev.transport().alloc_dma(4096), "dma");
  auto* w = data.as<std::uint32_t>();
  for (std::uint32_t i = 0; i < kBytes / 4; ++i) w[i] = i * 2654435761u;
  const RingFence f = gpu_copy(dev, cmd, data.bus_addr(), gpu);
  mm->note_submitted(list, {}, f);
  mm->set_completed_fence(dev.completed_fence());

  const auto c0 = must(dev.cycle_counter(), "cycles");
  must(mm->evict(h), "evict");
  const auto c1 = must(dev.cycle_counter(), "cycles");
  if (ex->counters().copy_bytes != kBytes) {
    fmt::print(stderr, "bench_paging: eviction moved {} bytes, not {}\n", ex->counters().copy_bytes, kBytes);
    return 1;
  }
  const auto c2 = must(dev.cycle_counter(), "cycles");
  const auto again = must(mm->make_resident(list), "page in");
  const auto c3 = must(dev.cycle_counter(), "cycles");
  gpu_copy(dev, cmd, again[0].gpu_address, back.bus_addr());
  if (std::memcmp(back.cpu(), data.cpu(), kBytes) != 0) {
    fmt::print(stderr, "bench_paging: contents changed across eviction and page-in\n");
    return 1;
  }
  nlohmann::json j;
  j["paging_transfer_efficiency_1m"] = kBytes / double(c1 - c0) / bus_bytes;
  j["paging_restore_efficiency_1m"] = kBytes / double(c3 - c2) / bus_bytes;
  j["paging_transfer_cycles_1m"] = c1 - c0;
  std::printf("%s\n", j.dump().c_str());
  return 0;
}
