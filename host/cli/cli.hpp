// Shared pieces of the `sgpu` command-line tool.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>

#include "sgpu/device.hpp"
#include "sgpu/transport/registry.hpp"
#include "workload.hpp"

namespace sgpu::cli {

/// Options every subcommand understands (they may appear before or after the subcommand).
struct CommonOptions {
  /// The transport: a registered backend, "name" or "name:argument" (e.g. "pcie:0000:01:00.0").
  std::string backend = "sim";
  /// The backends main() registered, with their options as the flags set them.
  TransportRegistry* registry = nullptr;
};

struct DemoOptions {
  std::string png_path = "sgpu-demo.png";  ///< the last frame; the report (.txt), the strip (.frames.png) beside it
  unsigned frames = 3;                     ///< frames presented through the flip queue
  unsigned vsync_us = 500;                 ///< the display's refresh period, device time
  bool no_hang = false;                    ///< skip the injected hang and its recovery
  bool no_reference = false;               ///< skip the comparison with the C++ reference model
  /// TdrDelay for the demo, microseconds of device time (the engine gets a quarter of it to
  /// answer a preemption request)
  unsigned tdr_us = static_cast<unsigned>(std::chrono::duration_cast<std::chrono::microseconds>(demo::kTdrDelay).count());
  /// preempt_quantum: how long lower-priority work may hold the engine while higher waits
  unsigned quantum_us =
      static_cast<unsigned>(std::chrono::duration_cast<std::chrono::microseconds>(demo::kPreemptQuantum).count());
  unsigned timeout_ms = 50;                ///< longest wait for one fence, device time
  std::string postmortem_dir;              ///< write a post-mortem per fault/TDR here ("" = none)
  /// --trace [FILE]: the timeline trace (Chrome/Perfetto JSON) to FILE, or beside the PNG
  /// (<png stem>.trace.json) when FILE is empty; its picture goes beside it (.timeline.svg).
  std::optional<std::string> trace_path;
};

struct DisasmOptions {
  std::string path;                  ///< raw little-endian dwords (docs/debugging.md)
  std::size_t offset = 0;            ///< first byte to decode (4-aligned)
  std::optional<std::size_t> end;    ///< byte after the last (default: the file's end)
  bool command_buffer = false;       ///< a UMD command buffer: addresses are unpatched
  bool raw = false;                  ///< also print every packet's dwords, all of them
};

/// Opens the transport and the device, or prints the error and returns nullopt.
std::optional<Device> open_device(const CommonOptions& options);

int run_info(const CommonOptions& options);
int run_demo(const CommonOptions& options, const DemoOptions& demo);
/// `sgpu disasm FILE`: no device needed.
int run_disasm(const DisasmOptions& options);
/// `sgpu list`: the PCI functions that may be a softgpu card (the "pcie" backend's options say
/// which IDs count and where sysfs is); `all` lists every other function too.
int run_list(const CommonOptions& options, bool all);
/// `sgpu bind-vfio` (bind) / `sgpu unbind-vfio`.
int run_bind(const CommonOptions& options, const std::string& address, bool bind);

}  // namespace sgpu::cli
