// The scheduler's trace points (sgpu/trace/timeline.hpp): what it reports to the recorder about
// each ring entry when it retires or is aborted, the device's own timestamps, counters and TDR
// steps. Called only while tracing (trace_ set); nothing here runs otherwise.
#include <cstring>
#include <utility>

#include <fmt/format.h>

#include "scheduler_state.hpp"
#include "sgpu/kmd/render.hpp"
#include "sgpu/trace/timeline.hpp"

namespace sgpu::sched {

namespace {

using trace::Track;
using trace::TrackKind;
using trace::TracePoint;

std::int64_t num(std::uint64_t v) { return static_cast<std::int64_t>(v); }

/// The two 64-bit slots of a landing area (opening, closing timestamp), as the device wrote them.
struct Landing {
  std::uint64_t begin = 0, end = 0;
};
Landing read_landing(const void* base, std::size_t offset) {
  Landing l;
  const auto* p = static_cast<const std::byte*>(base) + offset;
  std::memcpy(&l.begin, p, 8);
  std::memcpy(&l.end, p + 8, 8);
  return l;
}

// Templates: the scheduler's packet record is private to it; these only read its fields.
template <class Packet>
std::string packet_label(const Packet& p) {
  if (p.pass == nullptr) return fmt::format("paging fence {}", p.fence);
  return fmt::format("submission {} (fence {})", p.pass->submission, p.fence);
}

template <class Packet>
trace::Args packet_args(const Packet& p) {
  trace::Args a{{"fence", num(p.fence.value())}, {"context", num(p.context)}, {"ring_index", num(p.ring_index)}};
  if (p.pass) {
    a.push_back({"submission", num(p.pass->submission.value())});
    a.push_back({"dma_start", num(p.dma_start)});
    a.push_back({"dma_end", num(p.dma_end)});
  } else {
    a.push_back({"dma_end", num(p.paging.end_offset)});
  }
  return a;
}

}  // namespace

Status Scheduler::set_trace(trace::Recorder* recorder) {
  trace_ = recorder;
  if (executor_) executor_->set_timestamps(recorder != nullptr);
  if (!trace_) return ok_status();
  auto cycles = device_.cycle_counter();
  if (!cycles) {
    trace_ = nullptr;
    if (executor_) executor_->set_timestamps(false);
    return std::move(cycles).error();
  }
  trace_->calibrate(*cycles, now());
  trace_ring_occupancy();
  trace_memory();
  return ok_status();
}

std::uint64_t Scheduler::timestamp_address(const Pass& pass) const {
  const std::uint64_t landing = kmd::timestamp_landing_offset(static_cast<std::uint32_t>(pass.buffer.memory.size()));
  // In the kernel window through the GART, or (DmaBufferSegmentSet 0) at its bus address.
  return (pass.buffer.gpu_address != 0 ? pass.buffer.gpu_address : pass.buffer.memory.bus_addr()) + landing;
}

void Scheduler::trace_calibrate() {
  // A failed read is the transport failing: the caller's next device access reports it.
  if (auto cycles = device_.cycle_counter()) trace_->calibrate(*cycles, now());
}

void Scheduler::trace_ring_occupancy() {
  const auto t = TracePoint::host(now());
  trace_->counter("ring occupancy (entries)", t, {{"entries", static_cast<double>(hw_.size())}});
  trace_->counter("software queues (packets)", t, {{"packets", static_cast<double>(software_queue_depth())}});
}

void Scheduler::trace_memory() {
  const auto& mm = adapter_.memory_manager();
  std::vector<std::pair<std::string, double>> used;
  for (SegmentId id = 1; id <= mm.segment_count(); ++id)
    used.emplace_back(fmt::format("segment {}", id), static_cast<double>(mm.allocator(id).used_bytes()));
  const auto t = TracePoint::host(now());
  trace_->counter("memory segments (bytes used)", t, std::move(used));
  trace_->counter("evictions", t, {{"evictions", static_cast<double>(mm.evictions())}});
}

// DPC: the packet retired. Its time on the ring, its DMA_COMPLETED report, and what the engine
// wrote into the timestamp bracket: the device's own start and end of the DMA buffer.
void Scheduler::trace_retired(HwPacket& p) {
  const auto t = TracePoint::host(now());
  const std::string label = packet_label(p);
  trace_->slice(Track::of(TrackKind::HardwareQueue), label, TracePoint::host(p.written_at), t, packet_args(p));
  trace_->instant(Track::of(TrackKind::Interrupts), "DMA_COMPLETED", t,
                  {{"fence", num(p.fence.value())}, {"context", num(p.context)}});
  if (p.is_paging()) {
    trace_->slice(Track::of(TrackKind::Paging), label, TracePoint::host(p.written_at), t, packet_args(p));
    if (p.paging.timestamp_landing != 0 && p.paging.buffer != nullptr) {
      const Landing l = read_landing(p.paging.buffer->cpu(), p.paging.timestamp_landing);
      if (l.begin != 0 && l.end != 0)
        trace_->slice(Track::of(TrackKind::Engine), label, TracePoint::device(l.begin), TracePoint::device(l.end),
                      packet_args(p));
    }
    return;
  }
  Pass& pass = *p.pass;
  trace_->instant(Track::context_queue(p.context), "retired", t,
                  {{"fence", num(p.fence.value())}, {"submission", num(pass.submission.value())}});
  if (!pass.timestamps) return;
  const Landing l =
      read_landing(pass.buffer.memory.cpu(), kmd::timestamp_landing_offset(static_cast<std::uint32_t>(pass.buffer.memory.size())));
  if (p.dma_start == 0) pass.device_begin = l.begin;
  const bool has_end = pass.timestamp_end_offset >= p.dma_start && pass.timestamp_end_offset < p.dma_end;
  // A pass preempted before its first portion retired runs, on the engine row, from where its
  // rest resumed (the cycle counter then) to its closing timestamp.
  const bool resumed = pass.device_begin == 0 && pass.resumed_cycles != 0;
  const std::uint64_t begin = resumed ? pass.resumed_cycles : pass.device_begin;
  if (has_end && begin != 0 && l.end != 0) {
    trace::Args a = packet_args(p);
    a.push_back({"kind", std::string((pass.ring_flags & SubmitCommandFlags::kPresent) ? "present" : "render")});
    if (resumed) a.push_back({"resumed_from", num(p.dma_start)});
    trace_->slice(Track::of(TrackKind::Engine), resumed ? label + " (resumed)" : label, TracePoint::device(begin),
                  TracePoint::device(l.end), std::move(a));
  }
  if (has_end) pass.resumed_cycles = 0;
}

// Recovery: the packet will not complete with this fence (the guilty one, or one the reset
// aborted and the scheduler puts back). A started DMA buffer shows on the engine until the reset.
void Scheduler::trace_aborted(const HwPacket& p, const char* why) {
  const auto t = TracePoint::host(now());
  // A packet put back by a preemption is not lost work's victim: named apart from the aborted.
  const std::string suffix = std::strncmp(why, "preempted", 9) == 0 ? " preempted" : " aborted";
  trace::Args a = packet_args(p);
  a.push_back({"aborted", std::string(why)});
  trace_->slice(Track::of(TrackKind::HardwareQueue), packet_label(p) + suffix, TracePoint::host(p.written_at), t, a);
  Landing l;
  if (p.is_paging()) {
    if (p.paging.timestamp_landing == 0 || p.paging.buffer == nullptr) return;
    l = read_landing(p.paging.buffer->cpu(), p.paging.timestamp_landing);
  } else {
    if (!p.pass->timestamps) return;
    if (p.dma_start != 0) {
      // A resumed rest stopped again: it ran from its resumption to now.
      if (p.pass->resumed_cycles != 0)
        trace_->slice(Track::of(TrackKind::Engine), packet_label(p) + suffix,
                      TracePoint::device(std::exchange(p.pass->resumed_cycles, 0)), t, std::move(a));
      return;
    }
    l = read_landing(p.pass->buffer.memory.cpu(),
                     kmd::timestamp_landing_offset(static_cast<std::uint32_t>(p.pass->buffer.memory.size())));
  }
  if (l.begin != 0 && l.end == 0)
    trace_->slice(Track::of(TrackKind::Engine), packet_label(p) + suffix, TracePoint::device(l.begin), t,
                  std::move(a));
}

void Scheduler::trace_tdr(const char* step, std::vector<std::pair<std::string, std::int64_t>> args) {
  trace::Args a;
  for (auto& [k, v] : args) a.push_back({std::move(k), v});
  trace_->instant(Track::of(TrackKind::Interrupts), fmt::format("TDR: {}", step), TracePoint::host(now()),
                  std::move(a));
}

}  // namespace sgpu::sched
