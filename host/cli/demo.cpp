// `sgpu demo`: the main job of the walking skeleton. Builds DMA buffers of WRITE_DATA, FENCE
// and NOP packets, submits them one by one (measuring doorbell-to-fence cycles on the device's
// own cycle counter), then all at once, and checks every byte the device wrote.
#include <chrono>
#include <cstring>
#include <vector>

#include <fmt/format.h>

#include "cli.hpp"
#include "sgpu/packet_writer.hpp"

namespace sgpu::cli {
namespace {

using namespace std::chrono_literals;

std::string duration_str(std::chrono::nanoseconds d) {
  const double ns = static_cast<double>(d.count());
  if (ns < 1e3) return fmt::format("{} ns", d.count());
  if (ns < 1e6) return fmt::format("{:.2f} us", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.2f} ms", ns / 1e6);
  return fmt::format("{:.2f} s", ns / 1e9);
}

// One DMA buffer of the demo and what it should leave in memory.
struct Job {
  std::string what;
  DmaMemory buffer;
  std::uint32_t end = 0;
  std::size_t packets = 0;
  std::uint32_t data_offset = 0;        // where its WRITE_DATA lands in the target buffer
  std::vector<std::uint32_t> data;      // what lands there
  std::uint64_t fence_value = 0;        // value its FENCE packet writes to its slot
};

std::uint32_t pattern(unsigned job, std::size_t i) {
  return 0x5a000000u ^ (job << 16) ^ static_cast<std::uint32_t>(i * 0x9e37u);
}

// Buffer `k` of the demo: the kinds cycle so every packet type and a zero-length (fence-only)
// submission are exercised.
Result<Job> build_job(Transport& t, unsigned k, const DmaMemory& target, const DmaMemory& slots) {
  Job job;
  auto buffer = t.alloc_dma(16 * 1024);
  if (!buffer) return std::move(buffer).error();
  job.buffer = std::move(*buffer);
  PacketWriter w(job.buffer);
  const std::uint64_t slot = slots.bus_addr() + 8ull * k;
  job.fence_value = 0xf00d'0000'0000'0000ull | (std::uint64_t{k} << 32) | (k + 1);
  job.data_offset = 1024u * (k % 8);  // 8 slots of 1 KiB in the 8 KiB target
  std::size_t words = 0;
  switch (k % 4) {
    case 0: job.what = "WRITE_DATA 16 dw + FENCE"; words = 16; break;
    case 1: job.what = "NOP pad + WRITE_DATA 256 dw + FENCE"; words = 256; break;
    case 2: job.what = "20 NOPs + FENCE"; break;
    case 3: job.what = "empty (fence only)"; break;
  }
  if (k % 4 == 3) return job;  // start == end: the entry only retires its fence
  if (k % 4 == 1) SGPU_RETURN_IF_ERROR(w.nop(8));
  if (k % 4 == 2)
    for (int i = 0; i < 20; ++i) SGPU_RETURN_IF_ERROR(w.nop());
  for (std::size_t i = 0; i < words; ++i) job.data.push_back(pattern(k, i));
  if (!job.data.empty())
    SGPU_RETURN_IF_ERROR(w.write_data(target.bus_addr() + job.data_offset, job.data.data(), job.data.size()));
  SGPU_RETURN_IF_ERROR(w.fence(slot, job.fence_value, abi::fence_flags::kValue64));
  job.end = w.offset();
  job.packets = w.packets();
  return job;
}

// Checks what job `k` left in memory; returns "" or what is wrong.
std::string verify(const Job& job, unsigned k, const DmaMemory& target, const DmaMemory& slots) {
  const auto* words = target.as<const std::uint32_t>() + job.data_offset / 4;
  for (std::size_t i = 0; i < job.data.size(); ++i)
    if (words[i] != job.data[i])
      return fmt::format("data dword {} at {:#x} is {:#010x}, expected {:#010x}", i,
                         target.bus_addr() + job.data_offset + 4 * i, words[i], job.data[i]);
  if (job.end == 0) return "";
  const std::uint64_t fence_word = slots.as<const std::uint64_t>()[k];
  if (fence_word != job.fence_value)
    return fmt::format("fence slot {} holds {:#x}, expected {:#x}", k, fence_word, job.fence_value);
  return "";
}

}  // namespace

// The demo's buffers are built by the driver itself in system memory and write to system
// memory: kernel-built (privileged) submissions, which may use system-physical addresses while
// the GART is on. User work goes through the aperture (see docs/host-library.md).
constexpr std::uint32_t kDriverBuilt = abi::ring_flags::kPrivileged;

int run_demo(const CommonOptions& options, const DemoOptions& demo) {
  const auto wall0 = std::chrono::steady_clock::now();
  auto opened = open_device(options);
  if (!opened) return 1;
  Device& dev = *opened;
  Transport& t = dev.transport();
  const DeviceInfo& info = dev.info();
  auto fail = [](std::string_view step, const Error& e) {
    fmt::print(stderr, "sgpu demo: {} failed: {}\n", step, to_string(e));
    return 1;
  };

  fmt::print("softgpu demo on transport '{}'", t.name());
  if (t.name() == "sim")
    fmt::print(" (read latency {} cycles, write latency {} cycles, {:.0f} MHz)",
               options.transport.read_latency, options.transport.write_latency,
               options.transport.clock_hz / 1e6);
  fmt::print("\ndevice: interface {}.{}, build {:#010x}, {}-bit bus, {} reads in flight, ring of {} entries\n\n",
             info.version_major, info.version_minor, info.build_id, info.bus_data_bytes * 8,
             info.outstanding_reads, dev.ring_entries());

  auto target = t.alloc_dma(8 * 1024);
  if (!target) return fail("allocating the target buffer", target.error());
  auto slots = t.alloc_dma(8ull * demo.submissions);
  if (!slots) return fail("allocating the fence slots", slots.error());

  // The cycle counter costs two register reads; measure that once and take it off.
  auto c0 = dev.cycle_counter();
  auto c1 = dev.cycle_counter();
  if (!c0 || !c1) return fail("reading the cycle counter", (!c0 ? c0 : c1).error());
  const std::uint64_t counter_cost = *c1 - *c0;
  const std::uint64_t start_cycles = *c1;
  const auto sim0 = t.now();
  const auto timeout = std::chrono::microseconds(demo.timeout_us);

  // ---- one at a time: doorbell-to-fence latency
  fmt::print("one at a time (cycles = doorbell to fence seen by the host):\n");
  fmt::print("  {:>3}  {:>5}  {:<36} {:>7}  {:>7}  {:>7}  {}\n", "#", "fence", "buffer", "packets",
             "bytes", "cycles", "check");
  int failures = 0;
  std::vector<Job> jobs;
  for (unsigned k = 0; k < demo.submissions; ++k) {
    auto job = build_job(t, k, *target, *slots);
    if (!job) return fail(fmt::format("building buffer {}", k), job.error());
    auto before = dev.cycle_counter();
    if (!before) return fail("reading the cycle counter", before.error());
    auto fence = dev.submit({&job->buffer, 0, job->end, 0, kDriverBuilt});
    if (!fence) return fail(fmt::format("submitting buffer {}", k), fence.error());
    auto waited = dev.wait_fence(*fence, timeout);
    if (!waited) return fail(fmt::format("waiting for fence {}", *fence), waited.error());
    auto after = dev.cycle_counter();
    if (!after) return fail("reading the cycle counter", after.error());
    const std::string bad = verify(*job, k, *target, *slots);
    failures += bad.empty() ? 0 : 1;
    fmt::print("  {:>3}  {:>5}  {:<36} {:>7}  {:>7}  {:>7}  {}\n", k, *fence, job->what, job->packets,
               job->end, *after - *before - counter_cost, bad.empty() ? "ok" : "FAILED: " + bad);
    jobs.push_back(std::move(*job));
  }

  // ---- all at once: the ring keeps the engine busy
  std::memset(target->cpu(), 0, target->size());
  std::memset(slots->cpu(), 0, slots->size());
  auto batch0 = dev.cycle_counter();
  if (!batch0) return fail("reading the cycle counter", batch0.error());
  FenceId first = 0, last = 0;
  for (unsigned k = 0; k < jobs.size(); ++k) {
    auto fence = dev.submit({&jobs[k].buffer, 0, jobs[k].end, 0, kDriverBuilt});
    if (!fence && fence.error().code == Errc::Busy) {  // ring full: let it drain a little
      auto w = dev.wait_fence(dev.completed_fence() + 1, timeout);
      if (!w) return fail("waiting for ring space", w.error());
      fence = dev.submit({&jobs[k].buffer, 0, jobs[k].end, 0, kDriverBuilt});
    }
    if (!fence) return fail(fmt::format("submitting buffer {}", k), fence.error());
    if (first == 0) first = *fence;
    last = *fence;
  }
  auto waited = dev.wait_fence(last, timeout * jobs.size());
  if (!waited) return fail(fmt::format("waiting for fence {}", last), waited.error());
  auto batch1 = dev.cycle_counter();
  if (!batch1) return fail("reading the cycle counter", batch1.error());
  int batch_failures = 0;
  for (unsigned k = 0; k < jobs.size(); ++k) batch_failures += verify(jobs[k], k, *target, *slots).empty() ? 0 : 1;
  failures += batch_failures;
  fmt::print("\nall at once: fences {}..{} in {} cycles, {} ({} buffers ok)\n", first, last,
             *batch1 - *batch0 - counter_cost, batch_failures == 0 ? "all data correct" : "DATA WRONG",
             jobs.size() - static_cast<std::size_t>(batch_failures));

  // ---- summary
  const std::uint64_t total_cycles = *batch1 - start_cycles;
  const auto sim_time = t.now() - sim0;
  const auto wall = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - wall0);
  fmt::print("\ncompleted fence {} (write-back head {} = tail {})\n", dev.completed_fence(),
             dev.ring_head(), dev.ring_tail());
  fmt::print("total: {} device cycles, {} simulated, {} wall", total_cycles, duration_str(sim_time),
             duration_str(wall));
  if (t.name() == "sim" && wall.count() > 0)
    fmt::print(" ({:.0f} simulated cycles per second)",
               static_cast<double>(total_cycles) / (static_cast<double>(wall.count()) / 1e9));
  fmt::print("\n");
  if (failures != 0 || dev.ring_head() != dev.ring_tail()) {
    fmt::print(stderr, "sgpu demo: FAILED ({} checks failed)\n", failures);
    return 1;
  }
  fmt::print("demo passed\n");
  return 0;
}

}  // namespace sgpu::cli
