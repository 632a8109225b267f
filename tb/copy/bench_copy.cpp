// Copy engine benchmark: prints one JSON object (see cmake/SgpuBench.cmake).
//
// Efficiency = bytes written per cycle / bus bytes per cycle, from the request handshake to the
// status (so the first read's latency and the last write's response are included). Memory
// model: 256-cycle read latency, 64-cycle write response latency, always ready.
#include <cstdio>

#include <nlohmann/json.hpp>

#include "copy_harness.hpp"

using namespace sgpu::tb;

namespace {

double efficiency(const CopyRequest& r, unsigned rd_latency) {
  AxiMemoryModel::Config c;
  c.read_latency = rd_latency;
  c.write_latency = 64;
  CopyHarness h(c);
  const CopyStatus s = h.run(r);
  if (s.err != CopyErr::Ok) throw std::runtime_error("bench request failed");
  const double bytes = double(r.width) * r.height;
  return bytes / double(s.cycles) / double(h.bus().config().data_bytes);
}

}  // namespace

int main() {
  nlohmann::json j;
  // 64 KiB, source and destination in different places and differently aligned (realigned).
  j["copy_efficiency_64k"] = efficiency({false, 0x1'0000'0000, 0x2'0000'0000, 64 * 1024, 1, 0, 0, 0}, 256);
  j["copy_efficiency_64k_unaligned"] = efficiency({false, 0x1'0000'0003, 0x2'0000'0105, 64 * 1024, 1, 0, 0, 0}, 256);
  j["copy_efficiency_1m"] = efficiency({false, 0x1'0000'0000, 0x2'0000'0000, 1 << 20, 1, 0, 0, 0}, 256);
  j["fill_efficiency_64k"] = efficiency({true, 0, 0x2'0000'0000, 64 * 1024, 1, 0, 0, 0xdeadbeef}, 256);
  // 256 x 256 pixels of 32 bits: 1 KiB rows out of a 2048-pixel-wide surface into a 1280-wide one.
  j["blit_efficiency_256x256"] = efficiency({false, 0x1'0000'0000, 0x2'0000'0000, 1024, 256, 8192, 5120, 0}, 256);
  j["fill_rect_efficiency_256x256"] = efficiency({true, 0, 0x2'0000'0000, 1024, 256, 0, 5120, 0x00ff00ff}, 256);
  std::printf("%s\n", j.dump(2).c_str());
  return 0;
}
