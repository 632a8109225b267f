// The scheduler's private records, shared by scheduler.cpp, dispatch.cpp and interrupts.cpp.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <vector>

#include "sgpu/sched/scheduler.hpp"

namespace sgpu::sched {

/// One Render/Present pass: a DMA buffer with its lists. Lives until every part of it retired.
struct Scheduler::Pass {
  std::uint64_t context = 0;  // hContext
  kmd::DmaBuffer buffer;
  std::uint32_t dma_bytes = 0;
  std::vector<kmd::DxgkAllocationListEntry> dxgk_list;  // placements filled per portion
  std::vector<AllocationListEntry> list;                // from the context's pool (element 0 null)
  std::vector<PatchLocation> patches;                   // from the context's pool
  std::uint32_t patch_count = 0;
  std::uint32_t ring_flags = 0;                          // SubmitCommandFlags
  SubmissionId submission;
  std::uint32_t queued = 0;       // Work items in a software queue
  std::uint32_t on_ring = 0;      // HwPackets on the ring
  bool released = false;
  bool split_counted = false;     // Counters::splits counted it (once, whatever is requeued)
  // tracing: the pass carries the timestamp bracket (kmd/render.hpp)
  bool timestamps = false;
  std::uint32_t timestamp_end_offset = 0;  // the closing TIMESTAMP
  std::uint64_t device_begin = 0;          // cycles the opening one wrote (0: not yet)
  // Preempted and put back: the cycle counter when its rest reached the head of the ring again
  // (its opening TIMESTAMP does not run again; 0: not resumed)
  std::uint64_t resumed_cycles = 0;
  std::chrono::nanoseconds render_begin{}, render_end{};
};

/// A range of a pass still to be put on the ring (a whole pass, the rest of a split one, or a
/// packet sent back by a recovery).
struct Scheduler::Work {
  std::shared_ptr<Pass> pass;
  std::uint32_t dma_start = 0, dma_end = 0;
  std::uint32_t patch_start = 0, patch_end = 0;
  std::chrono::nanoseconds queued_at{};  // tracing: when it entered the software queue
  bool queue_traced = false;             // tracing: its wait in the queue was reported
  std::chrono::nanoseconds ready_at{};   // when its submission was queued (priority inversion age)
  // Preempted and put back: where it stopped after a TdrDelay overrun (a second overrun stopped
  // at the same offset is a hang), and when the preemption was requested (resume latency).
  std::optional<std::uint32_t> overran_at;
  std::optional<std::chrono::nanoseconds> preempted_at;
};

/// One ring entry the scheduler made: what emit() put on the ring and recovery may put back.
struct Scheduler::HwPacket {
  RingFence fence;  // 0 until emit() gives it one (a resubmission keeps its own)
  std::uint32_t ring_index = 0;
  std::uint64_t context = 0;        // hContext; 0 = paging
  // render/present: the pass, the range of its DMA buffer and of its patch list on the ring
  std::shared_ptr<Pass> pass;
  std::uint32_t dma_start = 0, dma_end = 0, patch_start = 0, patch_end = 0;
  // paging: the buffer as the DeviceExecutor handed it over (resubmitted as is: it carries its fence)
  vidmm::PagingSubmission paging;
  std::chrono::nanoseconds written_at{};  // tracing: when its ring entry was written
  std::chrono::nanoseconds ready_at{};    // Work::ready_at of what it carries
  std::optional<std::uint32_t> overran_at;             // Work::overran_at (its first portion)
  std::optional<std::chrono::nanoseconds> preempted_at; // Work::preempted_at (its first portion)

  bool is_paging() const { return pass == nullptr; }
};

struct Scheduler::ContextState {
  kmd::Context* context = nullptr;
  std::uint32_t slot = 0;                        // kernel fence page slot
  std::deque<std::shared_ptr<Work>> queue;       // software queue
  std::optional<Error> error;                    // set when put in error
  std::uint64_t pending = 0;                     // submissions not finished
  int priority = 0;                              // Scheduler::set_priority
};

/// The entry a preemption stopped, to be put back where it stopped (take_back_ring).
struct Scheduler::Resume {
  RingFence fence;        // the stopped entry
  std::uint32_t offset = 0;  // PREEMPT_OFFSET: its first packet that did not complete
  bool overran = false;   // stopped for a TdrDelay overrun
  std::chrono::nanoseconds requested_at{};
};

struct Scheduler::SubmissionState {
  std::uint64_t context = 0;
  std::uint32_t passes_left = 0;
};

}  // namespace sgpu::sched
