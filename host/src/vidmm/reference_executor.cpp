#include "sgpu/vidmm/reference_executor.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

namespace sgpu::vidmm {

namespace {
Error bad_op(const PagingOperation& op, std::string why) {
  return Error::make(Errc::InvalidArgument, Touched::Hardware, "reference executor: {}: {}", to_string(op), why);
}
}  // namespace

ReferenceExecutor::ReferenceExecutor(std::vector<kmd::SegmentDescriptor> segments, std::uint64_t page_size)
    : page_(page_size), dummy_(page_size, kDummyPoison) {
  for (auto& d : segments) {
    Segment s;
    s.desc = std::move(d);
    if (s.desc.is_aperture())
      s.page_table.assign(s.desc.size / page_, nullptr);
    else
      s.memory.assign(s.desc.size, std::byte{0});
    segments_.push_back(std::move(s));
  }
}

void* ReferenceExecutor::cpu_address(SegmentId segment, std::uint64_t offset, std::uint64_t bytes) {
  if (segment == 0 || segment > segments_.size()) return nullptr;
  Segment& s = segments_[segment - 1];
  if (s.desc.is_aperture() || !s.desc.flags.cpu_visible() || offset + bytes > s.memory.size()) return nullptr;
  return s.memory.data() + offset;
}

std::uint64_t ReferenceExecutor::mapped_pages(SegmentId segment) const {
  if (segment == 0 || segment > segments_.size()) return 0;
  const auto& pt = segments_[segment - 1].page_table;
  return static_cast<std::uint64_t>(std::count_if(pt.begin(), pt.end(), [](auto* p) { return p != nullptr; }));
}

Result<SegmentId> ReferenceExecutor::segment_of(std::uint64_t gpu_address, std::uint64_t bytes) const {
  for (std::size_t i = 0; i < segments_.size(); ++i) {
    const auto& d = segments_[i].desc;
    if (gpu_address >= d.base_address && gpu_address + bytes <= d.end_address() && bytes <= d.size)
      return static_cast<SegmentId>(i + 1);
  }
  return Error::invalid("GPU range [{:#x}, +{}) lies in no segment", gpu_address, bytes);
}

Status ReferenceExecutor::access_gpu(SegmentId segment, std::uint64_t offset, std::uint64_t bytes,
                                     bool write, std::byte* data) {
  Segment& s = segments_[segment - 1];
  if (!s.desc.is_aperture()) {
    std::byte* p = s.memory.data() + offset;
    write ? std::memcpy(p, data, bytes) : std::memcpy(data, p, bytes);
    return ok_status();
  }
  // Through the aperture page table, page by page; unmapped pages hit the dummy page.
  while (bytes != 0) {
    const std::uint64_t page = offset / page_, in_page = offset % page_;
    const std::uint64_t n = std::min(bytes, page_ - in_page);
    std::byte* target = s.page_table[page];
    if (target == nullptr) {
      (write ? counters_.dummy_page_writes : counters_.dummy_page_reads) += 1;
      target = dummy_.data();
    }
    write ? std::memcpy(target + in_page, data, n) : std::memcpy(data, target + in_page, n);
    offset += n, data += n, bytes -= n;
  }
  return ok_status();
}

Status ReferenceExecutor::access(const PagingLocation& loc, std::uint64_t bytes, bool write, std::byte* data) {
  if (loc.segment == kSystemMemory) {
    if (loc.system == nullptr || loc.system_offset + bytes > loc.system->size())
      return Error::make(Errc::InvalidArgument, Touched::Hardware, "system side outside its backing store");
    std::byte* p = loc.system->bytes() + loc.system_offset;
    write ? std::memcpy(p, data, bytes) : std::memcpy(data, p, bytes);
    return ok_status();
  }
  if (loc.segment > segments_.size())
    return Error::make(Errc::InvalidArgument, Touched::Hardware, "segment {} does not exist", loc.segment);
  const auto& d = segments_[loc.segment - 1].desc;
  if (loc.segment_address < d.base_address || loc.segment_address + bytes > d.end_address())
    return Error::make(Errc::InvalidArgument, Touched::Hardware, "range outside segment {}", loc.segment);
  return access_gpu(loc.segment, loc.segment_address - d.base_address, bytes, write, data);
}

Status ReferenceExecutor::gpu_write(std::uint64_t gpu_address, const void* data, std::size_t bytes) {
  SGPU_ASSIGN_OR_RETURN(auto seg, segment_of(gpu_address, bytes));
  std::vector<std::byte> copy(static_cast<const std::byte*>(data), static_cast<const std::byte*>(data) + bytes);
  return access_gpu(seg, gpu_address - segments_[seg - 1].desc.base_address, bytes, true, copy.data());
}

Status ReferenceExecutor::gpu_read(std::uint64_t gpu_address, void* data, std::size_t bytes) {
  SGPU_ASSIGN_OR_RETURN(auto seg, segment_of(gpu_address, bytes));
  return access_gpu(seg, gpu_address - segments_[seg - 1].desc.base_address, bytes, false,
                    static_cast<std::byte*>(data));
}

Status ReferenceExecutor::execute(const PagingBuffer& buffer) {
  if (fail_next_) {
    fail_next_ = false;
    return Error::make(Errc::DeviceFault, Touched::Hardware, "reference executor: injected paging failure");
  }
  ++counters_.buffers;
  for (const auto& op : buffer.operations) {
    SGPU_RETURN_IF_ERROR(run(op));
    ++counters_.operations[static_cast<std::size_t>(type_of(op))];
    log_.push_back(op);
  }
  return ok_status();
}

Status ReferenceExecutor::run(const PagingOperation& op) {
  auto aperture_range = [&](SegmentId seg, std::uint64_t first, std::uint64_t n) -> Status {
    if (seg == 0 || seg > segments_.size() || !segments_[seg - 1].desc.is_aperture())
      return bad_op(op, fmt::format("segment {} is not an aperture segment", seg));
    if (n == 0 || first + n > segments_[seg - 1].page_table.size())
      return bad_op(op, "page range outside the aperture");
    return ok_status();
  };

  if (auto* t = std::get_if<TransferOp>(&op)) {
    if (t->transfer_size == 0) return ok_status();  // TDR-style "content lost" eviction
    std::vector<std::byte> tmp(t->transfer_size);
    if (auto s = access(t->source, t->transfer_size, false, tmp.data()); !s) return bad_op(op, s.error().message);
    if (auto s = access(t->destination, t->transfer_size, true, tmp.data()); !s) return bad_op(op, s.error().message);
    counters_.bytes_transferred += t->transfer_size;
    return ok_status();
  }
  if (auto* f = std::get_if<FillOp>(&op)) {
    const SegmentId seg = f->destination.segment;
    if (seg == 0 || seg > segments_.size() || segments_[seg - 1].desc.is_aperture())
      return bad_op(op, "FILL is only for memory segments");
    if (f->fill_size % 4 != 0) return bad_op(op, "fill size not a multiple of 4");
    std::vector<std::byte> tmp(f->fill_size);
    for (std::size_t i = 0; i < tmp.size(); i += 4) std::memcpy(&tmp[i], &f->fill_pattern, 4);
    if (auto s = access(f->destination, f->fill_size, true, tmp.data()); !s) return bad_op(op, s.error().message);
    return ok_status();
  }
  if (auto* d = std::get_if<DiscardContentOp>(&op)) {
    std::vector<std::byte> poison(d->size, kDiscardPoison);
    PagingLocation loc{d->segment, d->segment_address, nullptr, 0};
    if (auto s = access(loc, d->size, true, poison.data()); !s) return bad_op(op, s.error().message);
    return ok_status();
  }
  if (auto* m = std::get_if<MapApertureSegmentOp>(&op)) {
    SGPU_RETURN_IF_ERROR(aperture_range(m->segment, m->offset_in_pages, m->number_of_pages));
    if (m->pages == nullptr || (m->mdl_offset + m->number_of_pages) * page_ > m->pages->size())
      return bad_op(op, "MDL pages missing or too few");
    auto& pt = segments_[m->segment - 1].page_table;
    for (std::uint64_t i = 0; i < m->number_of_pages; ++i)
      pt[m->offset_in_pages + i] = m->pages->bytes() + (m->mdl_offset + i) * page_;
    return ok_status();
  }
  if (auto* u = std::get_if<UnmapApertureSegmentOp>(&op)) {
    SGPU_RETURN_IF_ERROR(aperture_range(u->segment, u->offset_in_pages, u->number_of_pages));
    if (u->dummy_page != kDummyPageBus) return bad_op(op, "unmapped pages must point at the dummy page");
    auto& pt = segments_[u->segment - 1].page_table;
    std::fill_n(pt.begin() + static_cast<std::ptrdiff_t>(u->offset_in_pages), u->number_of_pages, nullptr);
    return ok_status();
  }
  const auto& i = std::get<InitContextResourceOp>(op);
  if (i.size % 4 != 0) return bad_op(op, "size not a multiple of 4");
  std::vector<std::byte> tmp(i.size);
  for (std::size_t k = 0; k < tmp.size(); k += 4) std::memcpy(&tmp[k], &i.initial_pattern, 4);
  if (auto s = access(i.destination, i.size, true, tmp.data()); !s) return bad_op(op, s.error().message);
  if (i.cpu_address != nullptr && std::memcmp(i.cpu_address, tmp.data(), tmp.size()) != 0)
    return bad_op(op, "cpu_address does not show the resource's bytes");
  return ok_status();
}

}  // namespace sgpu::vidmm
