// `sgpu list`, `sgpu bind-vfio`, `sgpu unbind-vfio`: the card-side helpers of the "pcie"
// backend, with that backend's options as the flags set them.
#include <cstdio>

#include <fmt/format.h>

#include "cli.hpp"
#include "sgpu/transport/pcie.hpp"

namespace sgpu::cli {
namespace {

std::string softgpu_column(const pcie::FunctionInfo& f) {
  if (f.answers_softgpu()) return fmt::format("yes (ID_MAGIC {:#010x})", *f.magic);
  if (f.magic) return fmt::format("no (ID_MAGIC reads {:#010x})", *f.magic);
  return fmt::format("unknown: {}", f.magic_note);
}

void print_table(const std::vector<const pcie::FunctionInfo*>& rows, bool probe) {
  fmt::print("  {:<13} {:<10} {:<6} {:<14} {:<6} {:<32}{}\n", "ADDRESS", "IDS", "CLASS", "DRIVER", "GROUP", "LINK",
             probe ? " SOFTGPU" : "");
  for (const auto* f : rows) {
    const std::string link = f->link ? pcie::to_string(*f->link) : "- (" + f->link_note + ")";
    fmt::print("  {:<13} {:04x}:{:04x}  {:06x} {:<14} {:<6} {:<32}{}\n", f->address, f->id.vendor, f->id.device,
               f->class_code, f->driver.empty() ? "-" : f->driver,
               f->iommu_group ? std::to_string(*f->iommu_group) : "-", link,
               probe ? " " + softgpu_column(*f) : std::string());
  }
}

// The "pcie" backend's options: libsgpu registers it in every registry.
const pcie::PcieOptions& card_options(const CommonOptions& options) {
  return *options.registry->options<pcie::PcieOptions>("pcie");
}

}  // namespace

int run_list(const CommonOptions& options, bool all) {
  auto seen = pcie::list_functions(card_options(options));
  if (!seen) {
    fmt::print(stderr, "sgpu list: {}\n", to_string(seen.error()));
    return 1;
  }
  std::vector<const pcie::FunctionInfo*> candidates, others;
  for (const auto& f : *seen) (f.candidate ? candidates : others).push_back(&f);
  if (candidates.empty()) {
    fmt::print(
        "no softgpu candidates (vendor {:04x}, or an ID given with --pci-id) among the {} PCI functions "
        "libpciaccess sees{}\n",
        pcie::kSoftgpuId.vendor, seen->size(), others.empty() ? "." : ":");
    if (!others.empty()) print_table(others, false);
    fmt::print(
        "A card that is plugged in but missing here: check `lspci -nn`, that the bitstream is loaded and "
        "the bus was rescanned (docs/pcie.md).\n");
    return 0;
  }
  fmt::print("softgpu candidates:\n");
  print_table(candidates, true);
  for (const auto* f : candidates) {
    if (f->link && f->link->degraded()) fmt::print("note: {} link trained below its capability\n", f->address);
    if (f->answers_softgpu() && f->driver != "vfio-pci")
      fmt::print("note: {} is not bound to vfio-pci: `sgpu bind-vfio {}`\n", f->address, f->address);
  }
  if (all && !others.empty()) {
    fmt::print("other PCI functions:\n");
    print_table(others, false);
  }
  return 0;
}

int run_bind(const CommonOptions& options, const std::string& address, bool bind) {
  const std::string& sysfs = card_options(options).sysfs_root;
  auto r = bind ? pcie::bind_vfio(address, sysfs) : pcie::unbind_vfio(address, sysfs);
  if (!r) {
    fmt::print(stderr, "sgpu {}: {}\n", bind ? "bind-vfio" : "unbind-vfio", to_string(r.error()));
    return 1;
  }
  for (const auto& line : *r) fmt::print("{}\n", line);
  return 0;
}

}  // namespace sgpu::cli
