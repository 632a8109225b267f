#include "sgpu/vidmm/paging.hpp"

#include <fmt/format.h>

namespace sgpu::vidmm {

std::string_view to_string(PagingOperationType t) {
  switch (t) {
    case PagingOperationType::Transfer: return "TRANSFER";
    case PagingOperationType::Fill: return "FILL";
    case PagingOperationType::DiscardContent: return "DISCARD_CONTENT";
    case PagingOperationType::MapApertureSegment: return "MAP_APERTURE_SEGMENT";
    case PagingOperationType::UnmapApertureSegment: return "UNMAP_APERTURE_SEGMENT";
    case PagingOperationType::InitContextResource: return "INIT_CONTEXT_RESOURCE";
  }
  return "UNKNOWN";
}

PagingOperationType type_of(const PagingOperation& op) {
  static constexpr PagingOperationType kByIndex[] = {
      PagingOperationType::Transfer, PagingOperationType::Fill,
      PagingOperationType::DiscardContent, PagingOperationType::MapApertureSegment,
      PagingOperationType::UnmapApertureSegment, PagingOperationType::InitContextResource};
  return kByIndex[op.index()];
}

namespace {
std::string where(const PagingLocation& l) {
  if (l.segment == kSystemMemory) return fmt::format("sys+{:#x}", l.system_offset);
  return fmt::format("seg {} {:#x}", l.segment, l.segment_address);
}
}  // namespace

std::string to_string(const PagingOperation& op) {
  struct Visitor {
    std::string operator()(const TransferOp& t) const {
      return fmt::format("TRANSFER alloc {:#x} +{:#x} {} B {} -> {}{}{}{}", t.allocation,
                         t.transfer_offset, t.transfer_size, where(t.source), where(t.destination),
                         t.flags.transfer_start ? " start" : "", t.flags.transfer_end ? " end" : "",
                         t.flags.allocation_is_idle ? " idle" : "");
    }
    std::string operator()(const FillOp& f) const {
      return fmt::format("FILL alloc {:#x} {} B pattern {:#010x} at {}", f.allocation, f.fill_size,
                         f.fill_pattern, where(f.destination));
    }
    std::string operator()(const DiscardContentOp& d) const {
      return fmt::format("DISCARD_CONTENT alloc {:#x} {} B at seg {} {:#x}", d.allocation, d.size,
                         d.segment, d.segment_address);
    }
    std::string operator()(const MapApertureSegmentOp& m) const {
      return fmt::format("MAP_APERTURE_SEGMENT alloc {:#x} seg {} pages [{}, +{}) <- mdl page {}",
                         m.allocation, m.segment, m.offset_in_pages, m.number_of_pages, m.mdl_offset);
    }
    std::string operator()(const UnmapApertureSegmentOp& u) const {
      return fmt::format("UNMAP_APERTURE_SEGMENT alloc {:#x} seg {} pages [{}, +{}) -> dummy {:#x}",
                         u.allocation, u.segment, u.offset_in_pages, u.number_of_pages, u.dummy_page);
    }
    std::string operator()(const InitContextResourceOp& i) const {
      return fmt::format("INIT_CONTEXT_RESOURCE alloc {:#x} {} B at {}{}", i.allocation, i.size,
                         where(i.destination), i.cpu_address ? " (cpu address)" : "");
    }
  };
  return std::visit(Visitor{}, op);
}

}  // namespace sgpu::vidmm
