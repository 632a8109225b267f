// `sgpu info`: what the device says about itself.
#include <fmt/format.h>

#include "cli.hpp"

namespace sgpu::cli {

std::optional<Device> open_device(const CommonOptions& options) {
  auto transport = options.registry->open(options.backend);
  if (!transport) {
    fmt::print(stderr, "sgpu: cannot open the '{}' transport: {}\n", options.backend,
               to_string(transport.error()));
    return std::nullopt;
  }
  auto device = Device::open(std::move(*transport));
  if (!device) {
    fmt::print(stderr, "sgpu: cannot open the device: {}\n", to_string(device.error()));
    return std::nullopt;
  }
  return std::optional<Device>(std::move(*device));
}

namespace {

std::string size_str(std::uint64_t bytes) {
  if (bytes >= (1ull << 30) && bytes % (1ull << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (1ull << 20) && bytes % (1ull << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  if (bytes >= (1ull << 10) && bytes % (1ull << 10) == 0) return fmt::format("{} KiB", bytes >> 10);
  return fmt::format("{} bytes", bytes);
}

std::string segment_str(const SegmentInfo& s) {
  if (s.size == 0) return "absent";
  return fmt::format("{} at {:#x}", size_str(s.size), s.base);
}

}  // namespace

int run_info(const CommonOptions& options) {
  auto device = open_device(options);
  if (!device) return 1;
  const DeviceInfo& i = device->info();
  auto yes = [](bool b) { return b ? "yes" : "no"; };
  fmt::print("softgpu on transport '{}'\n", device->transport().name());
  fmt::print("  magic              {:#010x}\n", i.magic);
  fmt::print("  interface version  {}.{}\n", i.version_major, i.version_minor);
  fmt::print("  build id           {:#010x}\n", i.build_id);
  fmt::print("  host bus           {} bits data, {} bits address, bursts up to {} beats, "
             "{} reads in flight\n",
             i.bus_data_bytes * 8, i.bus_addr_bits, i.max_burst, i.outstanding_reads);
  fmt::print("  pages              {}\n", size_str(i.page_size()));
  fmt::print("  ring               up to {} entries (using {})\n", 1ull << i.max_ring_log2,
             device->ring_entries());
  fmt::print("  indirect depth     {}\n", i.max_indirect_depth);
  fmt::print("  features           {:#x}: gart {}, copy engine {}, preemption {}, memory segment {}\n",
             i.feature_bits, yes(i.has_gart), yes(i.has_copy_engine), yes(i.has_preemption),
             yes(i.has_memory_segment));
  fmt::print("  memory segment     {}\n", segment_str(i.memory_segment));
  fmt::print("  aperture segment   {}\n", segment_str(i.aperture_segment));
  return 0;
}

}  // namespace sgpu::cli
