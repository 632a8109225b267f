// Scheduler: the GPU scheduler of one adapter (dxgkrnl's VidSch) for the device's single node.
//
// Per submission (wddm-semantics §2.2): submit() runs Render (multipass when the DMA buffer or
// the patch list is full: one packet per pass) into DMA buffers from the context's pool, with
// lists from its pools, and queues the packets in the context's software queue. Getting a packet
// onto the hardware (the ring) is the pump: make its allocation list resident (the memory
// manager pages through the DeviceExecutor, whose paging buffers come back here as paging
// packets), fill the DXGK_ALLOCATIONLIST placements, Patch (addresses + the submission fence,
// written by the packet into the context's slot of the kernel fence page), note the use in the
// memory manager, SubmitCommand. If the list cannot be resident at once, the packet is split
// (sched/split.hpp), each portion with its own fence and paging in between. A packet that cannot
// run at all fails its submission (OutOfMemory), nothing else.
//
// Fences. Two number spaces, two types (sgpu/types.hpp):
//  - RingFence ("SubmissionFenceId"): one per ring entry, render and paging alike, strictly
//    increasing and never reused, so DMA_COMPLETED is cumulative. The scheduler owns the ring:
//    every entry is made at one emission point (the amdgpu_fence_emit analogue, sched/emit.cpp)
//    that takes the next ring fence (or, for a paging buffer resubmitted after a reset, the one
//    it already carries), has it written into the DMA buffer (Patch for render packets, the
//    closing FENCE for paging buffers), calls SubmitCommand, tells the fence reporter and the
//    memory manager, and starts the TDR clock. The memory manager's DeviceExecutor hands its
//    paging buffers to the same point (vidmm::PagingQueue), so paging packets are ordered in the
//    ring with render packets, take part in interrupt handling, and are resubmitted with their
//    original fence after a reset. Paging runs ahead (retired_fence()): the executor does not
//    wait for a paging buffer, the render packet follows it at once and the DPC retires it (its
//    buffer goes back then); the memory manager holds what it moved busy for the CPU until its
//    fence (MemoryManager::lock waits for that fence alone), ring order keeps the GPU side right;
//  - SubmissionId (what submit()/present() return, query()/wait() take): one per call,
//    increasing per scheduler. A submission may become several ring entries (passes, split
//    portions) and, after a recovery, get new ring fences: its SubmissionId stays the same.
//
// Interrupts: the ISR acknowledges INT_STATUS; DMA_COMPLETED is reported (FenceReporter) only
// with a write-back fence newer than the last reported; the DPC retires packets up to it (DMA
// buffers and lists back to their pools, MemoryManager::set_completed_fence). With no
// interrupt, query_current_fence() (DxgkDdiQueryCurrentFence) catches a missed one.
//
// Priorities and preemption (§1.13, sched/preempt.cpp): each context has a priority; the pump
// serves the highest priority with work (round robin within one). When higher-priority work
// waits while the packet at the head of the ring belongs to a lower-priority context, and that
// packet has run for preempt_quantum or the work has waited that long, the scheduler asks the
// engine to preempt (it stops at the next packet boundary; a cut COPY/FILL/BLIT_RECT/FILL_RECT
// or WAIT_MEM restarts from its header) and, on DMA_PREEMPTED, takes the ring back: an engine
// reset that discards it — a scheduling step, not a recovery: no guilty context, not counted by
// the TDR limiter — then paging packets back first with their original fences and every render
// packet back at the head of its context's queue, the stopped one from PREEMPT_OFFSET, so the
// pump reorders them by priority and they get new fences.
//
// Hangs (TDR, §2.4): when the packet at the head of the ring has run longer than tdr_delay, the
// scheduler asks the engine to preempt (use_preemption). Answered: the packet is put back the
// same way (not guilty, Counters::overruns) and resumes where it stopped; a paging packet
// continues in place. It is hung when the engine does not answer within preempt_timeout, or
// when it overruns again stopped at the same offset (no packet completed in between). Then the
// engine is reset, LastAbortedFenceId checked, the context of the running packet put in error
// (Errc::DeviceLost from then on; its queued work is cancelled and its submissions reported
// aborted) and the rest resubmitted: paging packets first with their original fences, render
// packets back at the head of their contexts' software queues, so they are made resident,
// patched and submitted again with new fences. A fault interrupt is recovered the same way, the
// faulting packet's context being guilty. More than tdr_limit_count recoveries within
// tdr_limit_time, a hung or faulting paging packet, a bad LastAbortedFenceId, a preemption answer
// that does not fit the ring or a failed SubmitCommand put the whole scheduler in its fatal
// state: every call fails with Errc::DeviceLost naming the cause. With
// SchedulerOptions::postmortem set, each recovery (and a fatal fault or hang) first captures a
// post-mortem (sgpu/diag/postmortem.hpp: the fault record, the ring, the entry's DMA buffer
// disassembled, its allocations, the GART entries involved, the last interrupts) while the
// engine still holds the evidence.
//
// Deadlines: nothing waits forever. submit()/present() wait for a DMA buffer at most
// SchedulerOptions::submit_timeout (then Errc::Timeout naming the context, nothing queued) and
// for ring room for their render packets as long (then the packet stays queued and the call
// returns its id); wait()/idle()/wait_paging() take the caller's timeout (Timeout naming the
// submission or paging fence); a paging buffer waits for ring room as long as TDR needs to clear
// the ring, then the adapter is lost. Device loss — a read of all ones (ID_MAGIC whenever a wait
// step sees no interrupt with work outstanding, INT_STATUS in the ISR) or a transport error —
// is the fatal state: every wait, and every later call, ends with DeviceLost saying so.
//
// Time is the transport's (simulated time on "sim"). Single-threaded: every call runs the ISR,
// DPC and TDR work it needs while it waits.
//
// Tracing (set_trace, sgpu/trace/timeline.hpp): with a recorder, every pass rendered from then
// on carries the timestamp bracket (kmd/render.hpp: the engine writes the cycle counter when it
// starts and when it finishes the DMA buffer), paging buffers too (DeviceExecutor::set_timestamps),
// and the trace points below report each step of a submission, interrupts, reports and TDR steps.
// Without one (the default) each trace point is a null test: DMA buffers and register traffic
// are those of an untraced scheduler.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "sgpu/device.hpp"
#include "sgpu/diag/postmortem.hpp"
#include "sgpu/kmd/adapter.hpp"
#include "sgpu/kmd/device.hpp"
#include "sgpu/kmd/present.hpp"
#include "sgpu/kmd/render.hpp"
#include "sgpu/result.hpp"
#include "sgpu/sched/fences.hpp"
#include "sgpu/sched/kernel_window.hpp"
#include "sgpu/sched/submit_command.hpp"
#include "sgpu/types.hpp"
#include "sgpu/umd/command_list.hpp"
#include "sgpu/vidmm/device_executor.hpp"

namespace sgpu::trace {
class Recorder;
}

namespace sgpu::sched {

using namespace std::chrono_literals;

struct SchedulerOptions {
  /// TdrDelay: how long the running packet may take before recovery starts.
  std::chrono::nanoseconds tdr_delay = 2s;
  /// How long the engine gets to answer a preemption request before it is reset anyway.
  std::chrono::nanoseconds preempt_timeout = 100ms;
  /// TdrLimitCount / TdrLimitTime: more recoveries than this within the window is fatal.
  unsigned tdr_limit_count = 5;
  std::chrono::nanoseconds tdr_limit_time = 60s;
  /// Ask the engine to preempt before resetting it (needs CAP_FEATURES.preemption); also
  /// enables preemption for priority (preempt_quantum). Off: a TdrDelay overrun resets at once.
  bool use_preemption = true;
  /// Scheduling quantum: when work of a higher-priority context waits, the lower-priority packet
  /// at the head of the ring is preempted once it has run this long or the waiting work has
  /// waited this long, whichever comes first (it resumes after the higher-priority work).
  std::chrono::nanoseconds preempt_quantum = 2ms;
  /// Fault injection for tests: runs after Patch, before SubmitCommand, on every render packet
  /// (DMA buffer bytes, submission range); models a packet that slipped past validation.
  std::function<void(void* dma, std::uint32_t start, std::uint32_t end)> after_patch;
  /// Post-mortem capture (sgpu/diag/postmortem.hpp): called at every recovery (fault or TDR)
  /// and at a fatal fault or hang of a paging buffer, before the engine reset, with the fault
  /// record, the ring, the entry's DMA buffer disassembled with its allocation and patch lists,
  /// the GART entries involved and the last interrupts. Unset (the default): nothing is
  /// captured and no interrupt history is kept.
  std::function<void(const diag::PostMortem&)> postmortem;
  /// Interrupts the post-mortem's history keeps.
  std::size_t postmortem_interrupts = 16;
  /// Longest submit()/present() (and flush()) waits, in the transport's time, for a DMA buffer
  /// of the context's pool (Errc::Timeout naming the context; nothing queued) and for ring room
  /// for its render packets (the submission stays queued and submit() returns its id; wait()
  /// moves it on). Paging never waits on it: a paging buffer waits for ring room at most as
  /// long as TDR needs to clear every entry ahead (then Timeout: the adapter is lost).
  std::chrono::nanoseconds submit_timeout = 10s;
};

enum class FenceStatus { Pending, Completed, Aborted };

/// One rectangle operation of DxgkDdiPresent (see kmd::PresentArgs): list[1] = src, list[2] = dst.
struct PresentRequest {
  kmd::PresentKind kind = kmd::PresentKind::Blt;
  AllocationHandle src;  ///< null for ColorFill
  AllocationHandle dst;
  std::uint32_t color = 0;
  kmd::SurfaceDesc src_desc, dst_desc;
  kmd::Rect src_rect, dst_rect;
  std::vector<kmd::Rect> sub_rects;  ///< empty = the whole dst_rect
};

class Scheduler final : public vidmm::PagingQueue {
 public:
  /// `executor` (may be null: no paging through the device) gets this scheduler as its queue.
  /// Everything passed must outlive the scheduler. From now on the scheduler owns the device's
  /// ring: it numbers the fences (continuing after the device's last one). Unsupported for an
  /// adapter with more than one node or without an aperture segment (the contexts' DMA buffers
  /// live in the kernel window of the aperture, which DmaBufferSegmentId names).
  static Result<std::unique_ptr<Scheduler>> create(Device& device, kmd::Adapter& adapter, KernelWindow& window,
                                                   vidmm::DeviceExecutor* executor, SchedulerOptions options = {});
  ~Scheduler() override;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  /// Context scheduling priorities: higher runs first (the pump serves the highest priority with
  /// work, round robin within one priority), and may preempt lower (preempt_quantum).
  static constexpr int kMinPriority = -7;
  static constexpr int kMaxPriority = 7;

  /// Registers a context: its DMA-buffer pool maps through the kernel window, it gets a fence
  /// slot and `priority` (InvalidArgument outside [kMinPriority, kMaxPriority]). The context must
  /// stay alive until remove_context().
  Status add_context(kmd::Context& context, int priority = 0);
  /// Changes a registered context's priority (D3DKMTSetContextSchedulingPriority's role); it
  /// applies from the next scheduling decision. InvalidArgument for an unregistered context or a
  /// priority outside [kMinPriority, kMaxPriority] (nothing changed).
  Status set_priority(const kmd::Context& context, int priority);
  Result<int> priority(const kmd::Context& context) const;
  /// Unregisters an idle context (Busy while it has work queued or running). The work of a
  /// context in error, or of any context once the scheduler is fatal, is dropped instead.
  Status remove_context(kmd::Context& context);

  /// Render + queue + pump. Returns the submission's id. Render's errors come back as they
  /// are (nothing queued); DeviceLost once the context is in error.
  Result<SubmissionId> submit(kmd::Context& context, const umd::CommandList& list);
  /// Present + queue + pump (ring flag present).
  Result<SubmissionId> present(kmd::Context& context, const PresentRequest& request);

  /// Where the submission is, without waiting. InvalidArgument for an id never handed out.
  Result<FenceStatus> query(SubmissionId submission) const;
  /// Waits (running ISR, DPC, pump and TDR) until the submission completed. Its error if it was
  /// aborted (DeviceLost for a context put in error, OutOfMemory for a packet that cannot fit).
  Status wait(SubmissionId submission, std::chrono::nanoseconds timeout);
  /// Moves queued packets onto the ring as far as it has room; services pending interrupts.
  Status flush();
  /// Waits until every queue is empty and everything retired.
  Status idle(std::chrono::nanoseconds timeout);
  /// Runs ISR, DPC, pump and TDR until transport time reaches `until` (the flip queue's wait for
  /// a vsync, sched/flip_queue.hpp): the device's time passes with or without work.
  Status run_until(std::chrono::nanoseconds until);
  /// DxgkDdiQueryCurrentFence: reports the write-back fence if it is newer than the last
  /// reported one (a missed interrupt) and retires up to it. Returns the reported fence.
  Result<std::optional<RingFence>> query_current_fence();

  // ---- paging (vidmm::PagingQueue, used by the DeviceExecutor)
  /// Waits for ring room (as long as TDR needs to clear the ring; then the adapter is lost),
  /// then puts the paging buffer on the ring at the emission point.
  Result<RingFence> submit_paging(const vidmm::PagingSubmission& submission, const vidmm::PagingStamp& stamp) override;
  /// Runs ISR, DPC and TDR until `fence` retired: Errc::Timeout naming it after `timeout`,
  /// DeviceLost once the adapter is lost.
  Status wait_paging(RingFence fence, std::chrono::nanoseconds timeout) override;
  /// Paging runs ahead: the executor does not wait for its buffers; they retire with the ring
  /// fences the DPC reports (the last one reported).
  std::optional<RingFence> retired_fence() const override { return reporter_.last_reported(); }

  // ---- tracing
  /// Starts (recorder) or stops (nullptr) the timeline trace. The recorder must outlive the
  /// scheduler or be removed first. Reads the device's cycle counter to place device
  /// timestamps on the transport's time axis (and again at every interrupt while tracing).
  Status set_trace(trace::Recorder* recorder);
  trace::Recorder* trace() const { return trace_; }

  // ---- observation
  /// The last ring fence emitted (0 before the first).
  RingFence last_ring_fence() const { return last_ring_fence_; }
  /// The ring fence the context's last completed packet wrote into its fence slot (host
  /// memory, no MMIO; 0 before the first).
  RingFence context_completed_fence(const kmd::Context& context) const;
  bool context_lost(const kmd::Context& context) const;
  /// Set once the scheduler is in its fatal state.
  const std::optional<Error>& fatal_error() const { return fatal_; }
  const FenceReporter& reporter() const { return reporter_; }
  struct Counters {
    std::uint64_t submissions = 0;      ///< submit()/present() calls that queued work
    std::uint64_t render_packets = 0;   ///< ring entries of render/present packets (portions included)
    std::uint64_t paging_packets = 0;   ///< ring entries of paging buffers
    std::uint64_t passes = 0;           ///< Render/Present passes (DMA buffers filled)
    std::uint64_t splits = 0;           ///< packets that had to be split
    std::uint64_t portions = 0;         ///< portions submitted by split packets
    std::uint64_t patches = 0;          ///< Patch calls
    std::uint64_t interrupts = 0;       ///< ISR runs with an event
    std::uint64_t recoveries = 0;       ///< engine resets by TDR or fault
    std::uint64_t preemptions = 0;      ///< DMA_PREEMPTED answers
    std::uint64_t preempt_timeouts = 0; ///< preemption requests the engine did not answer
    std::uint64_t resubmitted_paging = 0;
    std::uint64_t requeued_packets = 0; ///< render packets sent back to their software queue
    std::uint64_t cancelled_packets = 0;///< packets of guilty contexts dropped
    std::uint64_t priority_preemptions = 0;  ///< preemption requests for waiting higher-priority work
    std::uint64_t overruns = 0;         ///< TdrDelay overruns the engine answered: requeued, not guilty
    std::uint64_t preempt_requeues = 0; ///< ring take-backs after an answered preemption (no recovery)
    std::uint64_t resumed_packets = 0;  ///< preempted packets put back to resume where they stopped
  };
  const Counters& counters() const { return counters_; }
  /// Preemption timing, in the transport's time: request -> DMA_PREEMPTED, and request -> the
  /// preempted packet at the head of the ring again (running, after the work put ahead of it).
  struct PreemptionTimes {
    std::uint64_t answered = 0;  ///< requests answered
    std::uint64_t resumed = 0;   ///< preempted packets that ran again
    std::chrono::nanoseconds last_request_to_answer{}, max_request_to_answer{};
    std::chrono::nanoseconds last_request_to_resume{}, max_request_to_resume{}, total_request_to_resume{};
  };
  const PreemptionTimes& preemption_times() const { return preemption_times_; }
  /// One packet a preemption put back to resume where it stopped (Counters::resumed_packets), for
  /// reports: which submission, where it resumes and when it ran again.
  struct PreemptionRecord {
    SubmissionId submission;
    std::uint64_t context = 0;
    RingFence fence;                  ///< its ring fence when it was stopped
    std::uint32_t resume_offset = 0;  ///< PREEMPT_OFFSET: the DMA buffer offset it resumes from
    bool overrun = false;             ///< put back at a TdrDelay overrun (else for higher-priority work)
    std::chrono::nanoseconds requested_at{};  ///< the preemption request (transport time)
    std::chrono::nanoseconds taken_back_at{}; ///< DMA_PREEMPTED handled, the ring taken back
    std::optional<std::chrono::nanoseconds> resumed_at;  ///< at the head of the ring again
    RingFence resumed_fence;          ///< its new ring fence (0 until resumed)
  };
  /// The last kPreemptionLogSize records, oldest first.
  static constexpr std::size_t kPreemptionLogSize = 32;
  const std::deque<PreemptionRecord>& preemption_log() const { return preemption_log_; }
  /// The last post-mortem taken (only with SchedulerOptions::postmortem set).
  const std::optional<diag::PostMortem>& last_postmortem() const { return last_postmortem_; }
  /// Packets on the ring / in software queues.
  std::size_t hardware_queue_depth() const;
  std::size_t software_queue_depth() const;

 private:
  struct Pass;
  struct Work;
  struct HwPacket;
  struct ContextState;
  struct SubmissionState;

  Scheduler(Device& device, kmd::Adapter& adapter, KernelWindow& window, vidmm::DeviceExecutor* executor,
            SchedulerOptions options);

  // submission path (scheduler.cpp)
  Result<ContextState*> usable(const kmd::Context& context);
  Result<kmd::DmaBuffer> acquire_buffer(ContextState& cs, std::chrono::nanoseconds deadline);
  using PassFn = std::function<Result<kmd::RenderOutput>(Pass& pass, std::uint32_t multipass_offset)>;
  Result<SubmissionId> run_passes(ContextState& cs, const std::vector<AllocationListEntry>& user_list,
                                  std::uint32_t ring_flags, const char* ddi, const PassFn& one_pass);
  Result<SubmissionId> queue_passes(ContextState& cs, std::vector<std::shared_ptr<Pass>> passes);
  void release_pass(Pass& pass);
  void give_back(kmd::Context& context, Pass& pass);
  // pump (dispatch.cpp)
  Status pump();
  /// pump() whose render packets wait for ring room until `deadline` at most: the rest stays
  /// queued (not an error).
  Status pump_until(std::chrono::nanoseconds deadline);
  Status dispatch(ContextState& cs, const std::shared_ptr<Work>& work);
  Status submit_portion(ContextState& cs, Work& work, std::uint32_t dma_end, std::uint32_t patch_end,
                        const std::vector<std::uint32_t>& allocations);
  Result<std::vector<vidmm::Placement>> make_resident(ContextState& cs, const Pass& pass,
                                                      const std::vector<std::uint32_t>& allocations);
  /// Errc::Timeout (Touched::Nothing: nothing emitted) naming the ring when `deadline` passes.
  Status wait_ring_room(std::chrono::nanoseconds deadline, const char* what);
  /// Ends every wait once the device is gone (an all-ones read): the fatal state, DeviceLost.
  Status check_device();
  void fail_submission(SubmissionId submission, const Error& error);
  // the emission point (emit.cpp)
  /// Writes a ring fence into a DMA buffer before its entry goes on the ring (Patch, or the
  /// closing FENCE of a paging buffer).
  using Stamp = std::function<Status(RingFence fence)>;
  Result<RingFence> emit(HwPacket packet, const Stamp& stamp, const std::vector<AllocationListEntry>* used);
  SubmitCommandArgs submit_args(const HwPacket& packet) const;
  // interrupts, retirement, recovery (interrupts.cpp)
  Status step(std::chrono::nanoseconds deadline);
  Status isr_and_dpc(const InterruptEvents& events);
  Status report_and_retire(RingFence hw, bool from_query);
  void retire(RingFence hw);
  void apply_mm_completed();
  Status recover(std::size_t guilty_index, const std::string& why, std::optional<std::uint32_t> stopped_at = {});
  // engine reset and taking the ring back, shared by recovery and preemption (interrupts.cpp)
  struct Resume;
  Result<RingFence> reset_engine_checked(const char* tdr_step, const HwPacket& at_head);
  std::size_t take_back_ring(std::uint64_t cancelled_context, const Resume* resume, std::vector<HwPacket>& paging);
  Status resubmit_paging(std::vector<HwPacket> paging, RingFence last_aborted);
  // preemption: priorities, the quantum, TdrDelay overruns (preempt.cpp)
  struct PreemptRequest {
    bool overrun = false;  // for a TdrDelay overrun (else for priority)
    RingFence fence;       // the entry at the head of the ring when it was made
    std::chrono::nanoseconds requested_at{};
  };
  Status check_timeout();
  std::chrono::nanoseconds next_check_at() const;
  std::optional<std::chrono::nanoseconds> inversion_since() const;
  Status request_preemption(bool overrun, const HwPacket& head);
  Status on_preemption_answer();
  Status take_back(std::uint32_t stop, bool overran, std::chrono::nanoseconds requested_at);
  Status hang(std::size_t index, const std::string& why, std::optional<std::uint32_t> stopped_at);
  std::string overrun_message(const HwPacket& packet) const;
  void head_started();
  void note_resumed_head();
  void trace_preemption(const char* step, std::vector<std::pair<std::string, std::int64_t>> args);
  // post-mortem (postmortem.cpp): both do nothing without SchedulerOptions::postmortem
  void note_interrupt(const InterruptEvents& events);
  void take_postmortem(const std::string& why, const HwPacket* packet, std::optional<std::uint32_t> stopped_at);
  Status fatal(Error error);
  Error lost(const ContextState& cs) const;
  ContextState* find(std::uint64_t context_id);
  const ContextState* find(std::uint64_t context_id) const;
  // trace points (trace_points.cpp); called only when trace_ is set
  std::chrono::nanoseconds now() const { return device_.transport().now(); }
  std::uint64_t timestamp_address(const Pass& pass) const;
  void trace_calibrate();
  void trace_ring_occupancy();
  void trace_memory();
  void trace_retired(HwPacket& packet);
  void trace_aborted(const HwPacket& packet, const char* why);
  void trace_tdr(const char* step, std::vector<std::pair<std::string, std::int64_t>> args);

  Device& device_;
  kmd::Adapter& adapter_;
  KernelWindow& window_;
  vidmm::DeviceExecutor* executor_;
  SchedulerOptions options_;
  FenceReporter reporter_;
  TdrLimiter limiter_;
  std::map<std::uint64_t, std::unique_ptr<ContextState>> contexts_;  // by hContext
  std::deque<HwPacket> hw_;                                          // ring order
  std::map<SubmissionId, std::unique_ptr<SubmissionState>> pending_;
  std::map<SubmissionId, Error> failed_;  // aborted submissions
  SubmissionId next_submission_{1};
  RingFence last_ring_fence_;     // the last fence emit() gave out
  SegmentId dma_buffer_segment_;  // DmaBufferSegmentId of the kernel window's DMA buffers
  std::chrono::nanoseconds head_since_{0};
  std::uint64_t epoch_ = 0;            // recoveries so far: a dispatch that saw it change restarts
  bool pumping_ = false;
  std::chrono::nanoseconds pump_deadline_ = std::chrono::nanoseconds::max();  // ring room, render packets
  int in_mm_ = 0;                      // inside MemoryManager calls: no retirement into it
  RingFence mm_completed_pending_;     // set_completed_fence deferred while in_mm_
  std::map<int, std::uint64_t> next_rr_;  // round-robin position (context id) per priority
  std::optional<PreemptRequest> preempt_;  // a preemption request not answered yet
  PreemptionTimes preemption_times_;
  std::deque<PreemptionRecord> preemption_log_;
  std::optional<Error> fatal_;
  Counters counters_;
  diag::InterruptHistory interrupts_;
  std::optional<diag::PostMortem> last_postmortem_;
  trace::Recorder* trace_ = nullptr;  // null: tracing off
};

}  // namespace sgpu::sched
