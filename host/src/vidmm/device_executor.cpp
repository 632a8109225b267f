#include "sgpu/vidmm/device_executor.hpp"

#include <algorithm>
#include <cstring>
#include <functional>

#include <fmt/format.h>

#include "sgpu/kmd/command_pools.hpp"
#include "sgpu/overlap.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/umd/command_list.hpp"

namespace sgpu::vidmm {

namespace {

constexpr std::uint64_t kPage = Aperture::kPageSize;
// COPY / FILL byte count per packet: as the UMD records them, so that a long paging operation
// makes progress across preemptions (the engine restarts a cut COPY/FILL from its header).
constexpr std::uint32_t kMaxChunk = umd::CommandList::kMaxPacketBytes;
constexpr std::uint32_t kMaxMapPages = 32765;       // pages per MAP packet
constexpr std::size_t kPacketBytes = 32;            // upper bound of a COPY / FILL / UNMAP / FENCE
const std::uint32_t kFenceBytes = abi::find_packet(static_cast<std::uint8_t>(abi::Opcode::Fence))->min_dwords * 4;

/// The queue of an executor without a scheduler: the device alone, which numbers the fences.
class DevicePagingQueue final : public PagingQueue {
 public:
  explicit DevicePagingQueue(Device& device) : device_(device) {}
  Result<RingFence> submit_paging(const PagingSubmission& s, const PagingStamp& stamp) override {
    const RingFence fence = device_.next_fence();
    SGPU_RETURN_IF_ERROR(stamp(fence));
    Submission entry;
    entry.buffer = s.buffer;
    entry.end_offset = s.end_offset;
    entry.context_id = s.context_id;
    entry.flags = abi::ring_flags::kPaging | abi::ring_flags::kPrivileged;
    return device_.submit(entry, fence);
  }
  Status wait_paging(RingFence fence, std::chrono::nanoseconds timeout) override {
    return device_.wait_fence(fence, timeout);
  }

 private:
  Device& device_;
};

template <class... A>
Error op_error(const PagingOperation& op, fmt::format_string<A...> f, A&&... a) {
  return Error::invalid("device executor: {}: {}", to_string(op), fmt::format(f, std::forward<A>(a)...));
}

std::uint64_t chunks(std::uint64_t bytes) { return (bytes + kMaxChunk - 1) / kMaxChunk; }

/// GPU address of a location, after checking it covers `bytes`.
Result<std::uint64_t> address(const PagingTarget& t, const PagingOperation& op, const char* side,
                              const PagingLocation& loc, std::uint64_t bytes) {
  if (loc.segment == kSystemMemory) {
    if (loc.system == nullptr || !*loc.system) return op_error(op, "{}: system side without a backing store", side);
    if (loc.system_offset > loc.system->size() || bytes > loc.system->size() - loc.system_offset)
      return op_error(op, "{}: system offset {:#x} + {} bytes passes the backing store's {} bytes", side,
                      loc.system_offset, bytes, loc.system->size());
    const std::uint64_t bus = loc.system->bus_addr() + loc.system_offset;
    if (bus + bytes > t.system_limit || bus + bytes < bus)
      return op_error(op, "{}: bus range [{:#x}, +{}) is not system physical (limit {:#x})", side, bus, bytes,
                      t.system_limit);
    return bus;
  }
  if (loc.segment > t.segments.size()) return op_error(op, "{}: segment {} does not exist", side, loc.segment);
  const auto& d = t.segments[loc.segment - 1];
  if (loc.segment_address < d.base_address || loc.segment_address > d.end_address() ||
      bytes > d.end_address() - loc.segment_address)
    return op_error(op, "{}: GPU range [{:#x}, +{}) is outside segment {} [{:#x}, {:#x})", side, loc.segment_address,
                    bytes, loc.segment, d.base_address, d.end_address());
  return loc.segment_address;
}

/// First aperture page (table index) of segment `seg`'s page `offset_in_pages`, checked.
Result<std::uint32_t> aperture_page(const PagingTarget& t, const PagingOperation& op, SegmentId seg,
                                    std::uint64_t offset_in_pages, std::uint64_t count) {
  if (seg == 0 || seg > t.segments.size()) return op_error(op, "segment {} does not exist", seg);
  const auto& d = t.segments[seg - 1];
  if (!d.is_aperture()) return op_error(op, "segment {} is not an aperture segment", seg);
  if (count == 0) return op_error(op, "NumberOfPages is 0");
  if (offset_in_pages > d.size / kPage || count > d.size / kPage - offset_in_pages)
    return op_error(op, "pages [{}, +{}) pass segment {}'s {} pages", offset_in_pages, count, seg, d.size / kPage);
  if (d.base_address < t.aperture_base || (d.base_address - t.aperture_base) % kPage != 0)
    return op_error(op, "segment {} at {:#x} is not page-aligned inside the aperture at {:#x}", seg, d.base_address,
                    t.aperture_base);
  const std::uint64_t first = (d.base_address - t.aperture_base) / kPage + offset_in_pages;
  if (first + count > t.aperture_pages)
    return op_error(op, "aperture pages [{}, +{}) pass the GART table's {} pages", first, count, t.aperture_pages);
  return static_cast<std::uint32_t>(first);
}

Status check_op(const PagingTarget& t, const PagingOperation& op) {
  if (auto* x = std::get_if<TransferOp>(&op)) {
    if (x->transfer_size == 0) return op_error(op, "TransferSize is 0");
    SGPU_ASSIGN_OR_RETURN(const std::uint64_t s, address(t, op, "source", x->source, x->transfer_size));
    SGPU_ASSIGN_OR_RETURN(const std::uint64_t d, address(t, op, "destination", x->destination, x->transfer_size));
    const bool same_space = (x->source.segment == kSystemMemory) == (x->destination.segment == kSystemMemory);
    if (same_space && ranges_overlap(s, x->transfer_size, d, x->transfer_size))
      return op_error(op, "source and destination overlap");
    return ok_status();
  }
  if (auto* x = std::get_if<FillOp>(&op)) {
    if (x->fill_size == 0) return op_error(op, "FillSize is 0");
    if (x->destination.segment == kSystemMemory || x->destination.segment > t.segments.size() ||
        t.segments[x->destination.segment - 1].is_aperture())
      return op_error(op, "FILL destination segment {} is not a memory segment", x->destination.segment);
    return address(t, op, "destination", x->destination, x->fill_size).status();
  }
  if (auto* x = std::get_if<InitContextResourceOp>(&op)) {
    if (x->size == 0) return op_error(op, "size is 0");
    return address(t, op, "destination", x->destination, x->size).status();
  }
  if (auto* x = std::get_if<DiscardContentOp>(&op)) {
    PagingLocation loc;
    loc.segment = x->segment;
    loc.segment_address = x->segment_address;
    if (x->segment == kSystemMemory) return op_error(op, "DISCARD_CONTENT names system memory");
    return address(t, op, "range", loc, x->size).status();
  }
  if (auto* x = std::get_if<MapApertureSegmentOp>(&op)) {
    SGPU_RETURN_IF_ERROR(aperture_page(t, op, x->segment, x->offset_in_pages, x->number_of_pages));
    if (x->pages == nullptr || !*x->pages) return op_error(op, "no MDL (pages)");
    const std::uint64_t mdl_pages = x->pages->size() / kPage;
    if (x->pages->bus_addr() % kPage != 0)
      return op_error(op, "MDL bus address {:#x} is not page aligned", x->pages->bus_addr());
    if (x->mdl_offset > mdl_pages || x->number_of_pages > mdl_pages - x->mdl_offset)
      return op_error(op, "MDL pages [{}, +{}) pass its {} pages", x->mdl_offset, x->number_of_pages, mdl_pages);
    if (x->pages->bus_addr() + (x->mdl_offset + x->number_of_pages) * kPage > t.system_limit)
      return op_error(op, "MDL bus range passes the system-physical limit {:#x}", t.system_limit);
    return ok_status();
  }
  if (auto* x = std::get_if<UnmapApertureSegmentOp>(&op)) {
    SGPU_RETURN_IF_ERROR(aperture_page(t, op, x->segment, x->offset_in_pages, x->number_of_pages));
    if (x->dummy_page != t.dummy_page)
      return op_error(op, "dummy page {:#x} is not the aperture's dummy page {:#x}", x->dummy_page, t.dummy_page);
    return ok_status();
  }
  return op_error(op, "unknown operation");
}

Status chunked(std::uint64_t bytes, const std::function<Status(std::uint64_t, std::uint32_t)>& f) {
  for (std::uint64_t done = 0; done < bytes;) {
    const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(kMaxChunk, bytes - done));
    SGPU_RETURN_IF_ERROR(f(done, n));
    done += n;
  }
  return ok_status();
}

}  // namespace

PagingTarget paging_target(Device& device, std::vector<kmd::SegmentDescriptor> segments) {
  PagingTarget t;
  t.segments = std::move(segments);
  const DeviceInfo& info = device.info();
  if (info.gart_sys_addr_bits != 0 && info.gart_sys_addr_bits < 64)
    t.system_limit = std::uint64_t{1} << info.gart_sys_addr_bits;
  if (Aperture* ap = device.aperture()) {
    t.aperture_base = ap->base();
    t.aperture_pages = ap->pages();
    t.dummy_page = ap->dummy_page().bus_addr();
    t.dummy_pte = ap->dummy_pte();
  }
  return t;
}

std::size_t paging_buffer_bytes(const PagingBuffer& buffer, bool timestamps) {
  std::size_t bytes = kPacketBytes;  // FENCE
  if (timestamps) bytes += 2 * kPacketBytes + 16 + 8;  // TIMESTAMPs, the landing area and its alignment
  for (const auto& op : buffer.operations) {
    if (auto* x = std::get_if<TransferOp>(&op)) bytes += kPacketBytes * chunks(x->transfer_size);
    else if (auto* f = std::get_if<FillOp>(&op)) bytes += kPacketBytes * chunks(f->fill_size);
    else if (auto* i = std::get_if<InitContextResourceOp>(&op)) bytes += kPacketBytes * chunks(i->size);
    else if (auto* m = std::get_if<MapApertureSegmentOp>(&op))
      bytes += 8 * m->number_of_pages + kPacketBytes * (m->number_of_pages / kMaxMapPages + 1);
    else if (std::holds_alternative<UnmapApertureSegmentOp>(op)) bytes += kPacketBytes;
  }
  return bytes;
}

Status validate_paging_buffer(const PagingTarget& target, const PagingBuffer& buffer) {
  for (const auto& op : buffer.operations) SGPU_RETURN_IF_ERROR(check_op(target, op));
  return ok_status();
}

Result<std::uint32_t> encode_paging_buffer(const PagingTarget& t, const PagingBuffer& buffer, void* cpu,
                                           std::size_t bytes, std::uint64_t fence_addr, std::uint64_t fence_value,
                                           std::uint64_t timestamp_addr) {
  SGPU_RETURN_IF_ERROR(validate_paging_buffer(t, buffer));
  const bool timestamps = timestamp_addr != 0;
  if (timestamps && timestamp_addr % 8 != 0)
    return Error::invalid("device executor: timestamp address {:#x} is not 8-byte aligned", timestamp_addr);
  if (bytes < paging_buffer_bytes(buffer, timestamps))
    return Error::invalid(
        "device executor: DMA buffer of {} bytes is smaller than the {} bytes the paging buffer needs", bytes,
        paging_buffer_bytes(buffer, timestamps));
  PacketWriter w(cpu, bytes);
  if (timestamps) SGPU_RETURN_IF_ERROR(w.timestamp(timestamp_addr));
  for (const auto& op : buffer.operations) {
    if (auto* x = std::get_if<TransferOp>(&op)) {
      const std::uint64_t src = *address(t, op, "source", x->source, x->transfer_size);
      const std::uint64_t dst = *address(t, op, "destination", x->destination, x->transfer_size);
      SGPU_RETURN_IF_ERROR(chunked(x->transfer_size, [&](std::uint64_t o, std::uint32_t n) { return w.copy(src + o, dst + o, n); }));
    } else if (auto* f = std::get_if<FillOp>(&op)) {
      const std::uint64_t dst = *address(t, op, "destination", f->destination, f->fill_size);
      SGPU_RETURN_IF_ERROR(chunked(f->fill_size, [&](std::uint64_t o, std::uint32_t n) { return w.fill(dst + o, n, f->fill_pattern); }));
    } else if (auto* i = std::get_if<InitContextResourceOp>(&op)) {
      const std::uint64_t dst = *address(t, op, "destination", i->destination, i->size);
      SGPU_RETURN_IF_ERROR(chunked(i->size, [&](std::uint64_t o, std::uint32_t n) { return w.fill(dst + o, n, i->initial_pattern); }));
    } else if (auto* m = std::get_if<MapApertureSegmentOp>(&op)) {
      const std::uint32_t first = *aperture_page(t, op, m->segment, m->offset_in_pages, m->number_of_pages);
      const std::uint32_t flags = static_cast<std::uint32_t>(Aperture::kPteValid | Aperture::kPteWritable |
                                                             (m->cache_coherent ? Aperture::kPteSnoop : 0));
      std::vector<std::uint64_t> bus(m->number_of_pages);
      for (std::uint64_t p = 0; p < m->number_of_pages; ++p) bus[p] = m->pages->bus_addr() + (m->mdl_offset + p) * kPage;
      for (std::uint64_t done = 0; done < bus.size();) {
        const std::size_t n = std::min<std::size_t>(kMaxMapPages, bus.size() - done);
        SGPU_RETURN_IF_ERROR(w.map_pages(first + static_cast<std::uint32_t>(done), flags, bus.data() + done, n));
        done += n;
      }
    } else if (auto* u = std::get_if<UnmapApertureSegmentOp>(&op)) {
      const std::uint32_t first = *aperture_page(t, op, u->segment, u->offset_in_pages, u->number_of_pages);
      SGPU_RETURN_IF_ERROR(w.unmap_pages(first, static_cast<std::uint32_t>(u->number_of_pages), t.dummy_pte));
    }
    // DISCARD_CONTENT: nothing to do on the device.
  }
  if (timestamps) SGPU_RETURN_IF_ERROR(w.timestamp(timestamp_addr + 8));
  SGPU_RETURN_IF_ERROR(w.fence(fence_addr, fence_value, abi::fence_flags::kValue64));
  return w.offset();
}

Result<std::unique_ptr<DeviceExecutor>> DeviceExecutor::create(Device& device,
                                                               std::vector<kmd::SegmentDescriptor> segments,
                                                               DeviceExecutorOptions options) {
  PagingTarget t = paging_target(device, std::move(segments));
  for (std::size_t i = 0; i < t.segments.size(); ++i) {
    const auto& d = t.segments[i];
    if (!d.is_aperture()) continue;
    const std::uint64_t end = t.aperture_base + std::uint64_t{t.aperture_pages} * kPage;
    if (t.aperture_pages == 0 || d.base_address < t.aperture_base || d.end_address() > end)
      return Error::invalid(
          "device executor: aperture segment {} [{:#x}, {:#x}) is outside the device's GART "
          "table [{:#x}, {:#x})",
          i + 1, d.base_address, d.end_address(), t.aperture_base, end);
  }
  SGPU_ASSIGN_OR_RETURN(auto record, device.transport().alloc_dma(64, 64));
  return std::unique_ptr<DeviceExecutor>(new DeviceExecutor(device, std::move(t), options, std::move(record)));
}

DeviceExecutor::DeviceExecutor(Device& device, PagingTarget target, DeviceExecutorOptions options,
                               DmaMemory fence_record)
    : device_(device), target_(std::move(target)), options_(options), fence_record_(std::move(fence_record)) {}

Status DeviceExecutor::set_buffer_pool(kmd::DmaBufferPool* pool) {
  if (pool && pool->mapper())
    return Error::unsupported(
        "device executor: paging buffers are fetched at their bus address; a DMA-buffer pool that maps its "
        "buffers into an aperture cannot carry them");
  if (pool == pool_) return ok_status();
  (void)reclaim();
  // Buffers of the old pool still in flight cannot go back to it later: kept until destruction.
  for (auto& f : in_flight_)
    if (f->pooled) {
      f->own = std::move(f->pooled->memory);
      f->pooled.reset();
    }
  pool_ = pool;
  return ok_status();
}

void DeviceExecutor::set_queue(PagingQueue* queue) {
  if (queue == queue_) return;
  if (queue_) (void)reclaim();
  // Only the old queue could say when these retire: kept until destruction.
  for (auto& f : in_flight_) stranded_.push_back(f->pooled ? std::move(f->pooled->memory) : std::move(*f->own));
  in_flight_.clear();
  queue_ = queue;
}

void DeviceExecutor::count(const PagingBuffer& buffer, RingFence fence) {
  counters_.buffers += 1;
  counters_.last_fence = fence;
  for (const auto& op : buffer.operations) {
    if (auto* x = std::get_if<TransferOp>(&op)) counters_.copy_bytes += x->transfer_size;
    else if (auto* f = std::get_if<FillOp>(&op)) counters_.fill_bytes += f->fill_size;
    else if (auto* i = std::get_if<InitContextResourceOp>(&op)) counters_.fill_bytes += i->size;
    else if (auto* m = std::get_if<MapApertureSegmentOp>(&op)) counters_.mapped_pages += m->number_of_pages;
    else if (auto* u = std::get_if<UnmapApertureSegmentOp>(&op)) counters_.unmapped_pages += u->number_of_pages;
  }
}

Status DeviceExecutor::reclaim() {
  if (!queue_ || in_flight_.empty()) return ok_status();
  const auto retired = queue_->retired_fence();
  if (!retired) return ok_status();
  // The FENCE closing each buffer writes the record in ring order: a retired buffer's fence (or
  // a later paging buffer's) must be there.
  const std::uint64_t written = fence_record_.as<std::uint64_t>()[0];
  std::size_t n = 0;
  Status result = ok_status();
  for (; n < in_flight_.size() && in_flight_[n]->fence <= *retired; ++n) {
    InFlight& f = *in_flight_[n];
    if (written < f.fence.value() && result)
      result = Error::make(Errc::DeviceFault, Touched::Hardware,
                           "device executor: paging fence {} retired but the paging FENCE record holds {}", f.fence,
                           written);
    if (f.pooled) {
      if (Status s = pool_ ? pool_->release(std::move(*f.pooled)) : Status(Error::invalid("no pool")); !s) {
        stranded_.push_back(std::move(f.pooled->memory));
        if (result) result = std::move(s);
      }
    } else {
      spare_.push_back(std::move(*f.own));
    }
    ++counters_.reclaimed;
  }
  in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(n));
  if (!result && !broken_) broken_ = result.error();
  return result;
}

Status DeviceExecutor::wait_paging(RingFence fence, std::chrono::nanoseconds timeout) {
  if (!fence) return ok_status();
  DevicePagingQueue direct(device_);
  PagingQueue& queue = queue_ ? *queue_ : direct;
  Status waited = queue.wait_paging(fence, timeout);
  if (!waited) return waited;
  return reclaim();
}

Status DeviceExecutor::execute(const PagingBuffer& buffer) {
  if (buffer.empty()) return ok_status();
  SGPU_RETURN_IF_ERROR(validate_paging_buffer(target_, buffer));
  SGPU_RETURN_IF_ERROR(reclaim());
  if (broken_) return *broken_;  // a retired paging buffer did not write its fence
  const bool ahead = options_.run_ahead && queue_ && queue_->retired_fence().has_value();
  const std::size_t need = (paging_buffer_bytes(buffer, timestamps_) + 4095) & ~std::size_t{4095};
  // Running ahead, the buffer lives in its InFlight record (a stable address: the ring entry
  // points at it until it retired, and at the resubmission after a reset).
  auto flight = std::make_unique<InFlight>();
  std::optional<kmd::DmaBuffer>& pooled = flight->pooled;
  std::optional<DmaMemory>& own = flight->own;
  if (pool_) {
    SGPU_ASSIGN_OR_RETURN(pooled, pool_->acquire(need));
  } else if (ahead) {
    auto spare = std::find_if(spare_.begin(), spare_.end(), [&](const DmaMemory& m) { return m.size() >= need; });
    if (spare != spare_.end()) {
      own = std::move(*spare);
      spare_.erase(spare);
    } else {
      SGPU_ASSIGN_OR_RETURN(own, device_.transport().alloc_dma(std::max<std::size_t>(need, 64 * 1024), 4096));
    }
  } else if (!buffer_ || buffer_->size() < need) {
    buffer_.reset();
    SGPU_ASSIGN_OR_RETURN(buffer_, device_.transport().alloc_dma(std::max<std::size_t>(need, 64 * 1024), 4096));
  }
  DmaMemory& memory = pooled ? pooled->memory : own ? *own : *buffer_;
  // The closing FENCE is encoded with value 0; the queue's stamp writes the ring fence into it.
  // Tracing: the timestamp bracket lands in the buffer's last 16 bytes (system memory, reached
  // at its bus address like the rest of this privileged buffer), cleared first.
  const std::size_t landing = timestamps_ ? ((memory.size() & ~std::size_t{7}) - 16) : 0;
  if (timestamps_) std::memset(static_cast<std::byte*>(memory.cpu()) + landing, 0, 16);
  auto encoded = encode_paging_buffer(target_, buffer, memory.cpu(), timestamps_ ? landing : memory.size(),
                                      fence_record_.bus_addr(), 0, timestamps_ ? memory.bus_addr() + landing : 0);
  if (!encoded) {
    if (pooled) (void)pool_->release(std::move(*pooled));  // untouched by the device
    if (own) spare_.push_back(std::move(*own));
    return std::move(encoded).error();
  }
  const std::uint32_t end = *encoded;
  const std::uint32_t fence_packet = end - kFenceBytes;
  const PagingStamp stamp = [this, &memory, fence_packet](RingFence fence) {
    return PacketWriter(memory.cpu(), memory.size(), fence_packet)
        .fence(fence_record_.bus_addr(), fence.value(), abi::fence_flags::kValue64);
  };
  const PagingSubmission submission{&memory, end, options_.context_id, static_cast<std::uint32_t>(landing)};
  DevicePagingQueue direct(device_);
  PagingQueue& queue = queue_ ? *queue_ : direct;
  auto submitted = queue.submit_paging(submission, stamp);
  if (!submitted) {
    // The queue may have kept it.
    if (pooled) stranded_.push_back(std::move(pooled->memory));
    if (own) stranded_.push_back(std::move(*own));
    return std::move(submitted).error();
  }
  const RingFence fence = *submitted;
  if (ahead) {
    // Runs ahead: retired by its fence like render work; the memory manager treats what it
    // moves as busy until then (last_paging_fence()).
    flight->fence = fence;
    in_flight_.push_back(std::move(flight));
    last_in_flight_ = fence;
    ++counters_.ran_ahead;
    count(buffer, fence);
    return reclaim();  // a queue that retires at once (no interrupt needed) gives it back now
  }
  Status waited = queue.wait_paging(fence, options_.timeout);
  if (pooled) {
    if (waited) {
      SGPU_RETURN_IF_ERROR(pool_->release(std::move(*pooled)));
    } else {
      stranded_.push_back(std::move(pooled->memory));  // the engine may still fetch it
    }
  }
  if (!waited) {
    Error e = std::move(waited).error();
    std::string record;
    if (auto f = device_.fault(); f && *f) record = "; " + to_string(**f);
    e.message = fmt::format("device executor: paging buffer (fence {}, {} operations) failed: {}{}", fence,
                            buffer.operations.size(), e.message, record);
    e.hardware_touched = true;
    return e;
  }
  const std::uint64_t written = fence_record_.as<std::uint64_t>()[0];
  if (written != fence.value())
    return Error::make(Errc::DeviceFault, Touched::Hardware,
                       "device executor: paging fence {} retired but its FENCE packet wrote {}", fence, written);
  last_in_flight_ = RingFence{};
  count(buffer, fence);
  return ok_status();
}

}  // namespace sgpu::vidmm
