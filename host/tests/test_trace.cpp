// The timeline trace's pieces without a device: trace::Timeline and its JSON, and the timestamp
// bracket traced DMA buffers carry (Render, Present, Patch, the paging encoder).
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "render_rig.hpp"
#include "sgpu/trace/timeline.hpp"
#include "sgpu/vidmm/device_executor.hpp"

using namespace sgpu;
using namespace sgpu::test;
using nlohmann::json;
using trace::TracePoint;
using trace::Track;
using trace::TrackKind;

namespace {

std::map<std::pair<int, int>, std::string> thread_names(const json& doc) {
  std::map<std::pair<int, int>, std::string> names;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") == "M" && e.at("name") == "thread_name")
      names[{e.at("pid").get<int>(), e.at("tid").get<int>()}] = e.at("args").at("name").get<std::string>();
  return names;
}

std::vector<json> events_named(const json& doc, const std::string& name) {
  std::vector<json> v;
  for (const auto& e : doc.at("traceEvents"))
    if (e.at("ph") != "M" && e.at("name") == name) v.push_back(e);
  return v;
}

using std::chrono::nanoseconds;

}  // namespace

TEST_CASE("trace timeline: slices, instants and counters become named Chrome trace events", "[trace]") {
  trace::Timeline tl;
  tl.name_context(7, "context 1 (render) queue");
  tl.slice(Track::context_queue(7), "Render", TracePoint::host(nanoseconds{1000}), TracePoint::host(nanoseconds{3000}),
           {{"submission", std::int64_t{1}}, {"kind", std::string("render")}});
  tl.instant(Track::of(TrackKind::Interrupts), "DMA_COMPLETED", TracePoint::host(nanoseconds{5000}),
             {{"fence", std::int64_t{4}}});
  tl.counter("ring occupancy (entries)", TracePoint::host(nanoseconds{2000}), {{"entries", 3.0}});

  const json doc = json::parse(tl.to_json());
  CHECK(doc.at("displayTimeUnit") == "ns");
  const auto names = thread_names(doc);
  bool render_named = false, interrupts_named = false;
  for (const auto& [key, n] : names) {
    render_named |= n == "context 1 (render) queue";
    interrupts_named |= n == "interrupts, reports and TDR";
  }
  CHECK(render_named);
  CHECK(interrupts_named);

  const auto render = events_named(doc, "Render");
  REQUIRE(render.size() == 1);
  CHECK(render[0].at("ph") == "X");
  CHECK(render[0].at("ts").get<double>() == Approx(1.0));  // microseconds
  CHECK(render[0].at("dur").get<double>() == Approx(2.0));
  CHECK(render[0].at("args").at("submission") == 1);
  CHECK(render[0].at("args").at("kind") == "render");
  CHECK(names.at({render[0].at("pid").get<int>(), render[0].at("tid").get<int>()}) == "context 1 (render) queue");

  const auto done = events_named(doc, "DMA_COMPLETED");
  REQUIRE(done.size() == 1);
  CHECK(done[0].at("ph") == "i");
  CHECK(done[0].at("args").at("fence") == 4);

  const auto ring = events_named(doc, "ring occupancy (entries)");
  REQUIRE(ring.size() == 1);
  CHECK(ring[0].at("ph") == "C");
  CHECK(ring[0].at("args").at("entries").get<double>() == 3.0);
}

TEST_CASE("trace timeline: overlapping slices of one track go to lanes, nested rows never overlap", "[trace]") {
  trace::Timeline tl;
  const Track q = Track::of(TrackKind::HardwareQueue);
  tl.slice(q, "a", TracePoint::host(nanoseconds{0}), TracePoint::host(nanoseconds{100}));
  tl.slice(q, "b", TracePoint::host(nanoseconds{50}), TracePoint::host(nanoseconds{150}));  // overlaps a
  tl.slice(q, "c", TracePoint::host(nanoseconds{100}), TracePoint::host(nanoseconds{200}));  // after a: a's lane
  const json doc = json::parse(tl.to_json());
  const int tid_a = events_named(doc, "a")[0].at("tid"), tid_b = events_named(doc, "b")[0].at("tid"),
            tid_c = events_named(doc, "c")[0].at("tid");
  CHECK(tid_a != tid_b);
  CHECK(tid_c == tid_a);
  const auto names = thread_names(doc);
  CHECK(names.at({1, tid_b}) == "hardware queue (ring entries, write to retirement) #2");
}

TEST_CASE("trace timeline: device cycles are placed on the time axis by the calibration", "[trace]") {
  trace::Timeline tl;
  // 250 cycles per microsecond (250 MHz); cycle 1000 at 10 us.
  tl.calibrate(1000, nanoseconds{10'000});
  tl.calibrate(1000 + 250 * 100, nanoseconds{110'000});
  CHECK(tl.cycles_per_us() == Approx(250.0));
  CHECK(tl.to_time(TracePoint::device(1000 + 250 * 4)) == nanoseconds{14'000});
  CHECK(tl.to_time(TracePoint::host(nanoseconds{5})) == nanoseconds{5});
  tl.slice(Track::of(TrackKind::Engine), "exec", TracePoint::device(1000 + 250 * 2), TracePoint::device(1000 + 250 * 6));
  const json doc = json::parse(tl.to_json());
  const auto exec = events_named(doc, "exec");
  REQUIRE(exec.size() == 1);
  CHECK(exec[0].at("ts").get<double>() == Approx(12.0));
  CHECK(exec[0].at("dur").get<double>() == Approx(4.0));
  CHECK(exec[0].at("cat") == "device");
  CHECK(doc.at("otherData").at("device_cycles_per_us").get<double>() == Approx(250.0));
}

TEST_CASE("trace timeline: writing to a path that cannot be opened names the path", "[trace]") {
  trace::Timeline tl;
  auto s = tl.write("/nonexistent-dir/t.json");
  REQUIRE_FALSE(s);
  CHECK(s.error().code == Errc::InvalidArgument);
  CHECK(s.error().message.find("/nonexistent-dir/t.json") != std::string::npos);
}

namespace {

umd::CommandList two_fills() {
  umd::CommandList cl;
  REQUIRE(cl.fill(AllocationHandle{1}, 0, 64, 0x11));
  REQUIRE(cl.fill(AllocationHandle{1}, 64, 64, 0x22));
  return cl;
}

std::vector<std::uint8_t> opcodes(const std::vector<Decoded>& packets) {
  std::vector<std::uint8_t> v;
  for (const auto& p : packets) v.push_back(p.info ? static_cast<std::uint8_t>(p.info->opcode) : std::uint8_t{0xff});
  return v;
}

constexpr auto kTs = static_cast<std::uint8_t>(abi::Opcode::Timestamp);
constexpr auto kFill = static_cast<std::uint8_t>(abi::Opcode::Fill);
constexpr auto kFence = static_cast<std::uint8_t>(abi::Opcode::Fence);

}  // namespace

TEST_CASE("timestamp bracket: Render brackets the pass with TIMESTAMPs only when asked", "[trace][render]") {
  const auto cl = two_fills();
  RenderRig plain(cl);
  auto a = plain.render();
  REQUIRE(a);
  CHECK(opcodes(decode(plain.dma.dwords(), a->dma_bytes)) == std::vector<std::uint8_t>{kFill, kFill, kFence});
  CHECK((plain.priv().flags & kmd::RenderPrivateData::kHasTimestamps) == 0);

  RenderRig traced(cl);
  auto args = traced.args();
  args.reserve_timestamps = true;
  auto b = kmd::render(args);
  REQUIRE(b);
  const auto packets = decode(traced.dma.dwords(), b->dma_bytes);
  REQUIRE(opcodes(packets) == std::vector<std::uint8_t>{kTs, kFill, kFill, kTs, kFence});
  CHECK(packets[0].address(0) == 0);  // Patch fills the landing area in
  const auto priv = traced.priv();
  CHECK((priv.flags & kmd::RenderPrivateData::kHasTimestamps) != 0);
  CHECK(priv.timestamp_end_offset == packets[3].offset);
  CHECK(priv.fence_offset == packets[4].offset);
  // The same work between the brackets: the FILL packets are those of the untraced pass, and
  // their patch entries moved by the opening TIMESTAMP.
  const auto plain_packets = decode(plain.dma.dwords(), a->dma_bytes);
  CHECK(packets[1].words.size() == plain_packets[0].words.size());
  CHECK(traced.patch_out[0].patch_offset == plain.patch_out[0].patch_offset + packets[1].offset);
  // Nothing is written at or past the landing area.
  CHECK(b->dma_bytes <= kmd::timestamp_landing_offset(args.dma_size));
}

TEST_CASE("timestamp bracket: every multipass pass has its own bracket, the fence only the last", "[trace][render]") {
  umd::CommandList cl;
  for (int i = 0; i < 6; ++i) REQUIRE(cl.fill(AllocationHandle{1}, 64 * i, 64, 0x11));
  RenderRig rig(cl);
  // Room for the bracket, the fence, the landing area and two FILLs.
  const std::uint32_t fill_bytes = abi::find_packet(kFill)->min_dwords * 4;
  const std::uint32_t size = kmd::timestamp_reserve_bytes() + kmd::submission_fence_bytes() + 2 * fill_bytes + 8;
  auto args = rig.args(size);
  args.reserve_timestamps = true;
  auto first = kmd::render(args);
  REQUIRE(first);
  REQUIRE_FALSE(first->complete);
  CHECK(opcodes(decode(rig.dma.dwords(), first->dma_bytes)) == std::vector<std::uint8_t>{kTs, kFill, kFill, kTs});
  CHECK((rig.priv().flags & kmd::RenderPrivateData::kHasFence) == 0);
  CHECK((rig.priv().flags & kmd::RenderPrivateData::kHasTimestamps) != 0);
}

TEST_CASE("timestamp bracket: a DMA buffer too small for it is refused by Render and Present", "[trace][render]") {
  const auto cl = two_fills();
  RenderRig rig(cl);
  auto args = rig.args(kmd::timestamp_reserve_bytes() + kmd::submission_fence_bytes() - 4);
  args.reserve_timestamps = true;
  auto r = kmd::render(args);
  REQUIRE_FALSE(r);
  CHECK(r.error().code == Errc::InvalidArgument);
  CHECK(r.error().message.find("timestamp bracket") != std::string::npos);

  DmaBlock dma;
  std::vector<std::byte> priv(sizeof(kmd::RenderPrivateData));
  std::vector<PatchLocation> patches(8);
  std::vector<kmd::DxgkAllocationListEntry> list(3);
  list[2].allocation = AllocationHandle{2};
  list[2].write = true;
  list[2].size = 0x10000;
  kmd::PresentArgs p;
  p.kind = kmd::PresentKind::ColorFill;
  p.dma_buffer = dma.data();
  p.dma_size = 40;
  p.private_data = priv.data();
  p.private_data_size = static_cast<std::uint32_t>(priv.size());
  p.allocation_list = list.data();
  p.allocation_list_size = 3;
  p.patch_out = patches.data();
  p.patch_out_size = 8;
  p.dst = kmd::SurfaceDesc{16, 16, 64, 4};
  p.dst_rect = kmd::Rect{0, 0, 16, 16};
  p.reserve_timestamps = true;
  auto pr = kmd::present(p);
  REQUIRE_FALSE(pr);
  CHECK(pr.error().message.find("timestamp bracket") != std::string::npos);
  p.dma_size = 4096;
  auto ok = kmd::present(p);
  REQUIRE(ok);
  const auto packets = decode(dma.dwords(), ok->dma_bytes);
  REQUIRE(packets.size() == 4);
  CHECK(static_cast<std::uint8_t>(packets.front().info->opcode) == kTs);
  CHECK(static_cast<std::uint8_t>(packets[2].info->opcode) == kTs);
  CHECK(static_cast<std::uint8_t>(packets.back().info->opcode) == kFence);
}

namespace {

kmd::PatchArgs patch_args(RenderRig& rig, const kmd::RenderOutput& out, std::uint32_t dma_size) {
  kmd::PatchArgs pa = rig.patch_args(out, rig.patch_out.data(), out.patch_count, rig.list);
  pa.dma_size = dma_size;
  pa.submission_fence = RingFence{9};
  pa.fence_address = 0x2000;
  return pa;
}

}  // namespace

TEST_CASE("timestamp bracket: Patch points the TIMESTAMPs in range at the landing area", "[trace][patch]") {
  const auto cl = two_fills();
  RenderRig rig(cl);
  auto args = rig.args();
  args.reserve_timestamps = true;
  auto out = kmd::render(args);
  REQUIRE(out);
  const std::uint64_t landing = 0x7000'0000 + kmd::timestamp_landing_offset(args.dma_size);

  SECTION("both in range") {
    auto pa = patch_args(rig, *out, args.dma_size);
    pa.timestamp_address = landing;
    auto r = kmd::patch(pa);
    REQUIRE(r);
    CHECK(r->timestamps_written == 2);
    const auto packets = decode(rig.dma.dwords(), out->dma_bytes);
    CHECK(packets[0].address(0) == landing);
    CHECK(packets[3].address(0) == landing + 8);
  }
  SECTION("a portion without the opening TIMESTAMP patches only the closing one") {
    auto pa = patch_args(rig, *out, args.dma_size);
    pa.timestamp_address = landing;
    const auto packets = decode(rig.dma.dwords(), out->dma_bytes);
    pa.dma_start = packets[2].offset;  // the second FILL onwards
    pa.patch_start = 1;
    pa.patch_length = out->patch_count - 1;
    auto r = kmd::patch(pa);
    REQUIRE(r);
    CHECK(r->timestamps_written == 1);
    const auto after = decode(rig.dma.dwords(), out->dma_bytes);
    CHECK(after[0].address(0) == 0);
    CHECK(after[3].address(0) == landing + 8);
  }
  SECTION("without a timestamp address it is refused and nothing is written") {
    auto pa = patch_args(rig, *out, args.dma_size);
    const auto before = rig.dma.first(out->dma_bytes);
    auto r = kmd::patch(pa);
    REQUIRE_FALSE(r);
    CHECK(r.error().code == Errc::InvalidArgument);
    CHECK(r.error().message.find("timestamp bracket") != std::string::npos);
    CHECK(rig.dma.first(out->dma_bytes) == before);
    pa.timestamp_address = landing + 4;
    auto misaligned = kmd::patch(pa);
    REQUIRE_FALSE(misaligned);
    CHECK(misaligned.error().message.find("not 8-byte aligned") != std::string::npos);
  }
  SECTION("a bracket offset that does not hold a TIMESTAMP is refused and nothing is written") {
    auto pa = patch_args(rig, *out, args.dma_size);
    pa.timestamp_address = landing;
    rig.dma.dwords()[0] = abi::make_header(abi::Opcode::Nop, 3, 0);
    const auto before = rig.dma.first(out->dma_bytes);
    auto r = kmd::patch(pa);
    REQUIRE_FALSE(r);
    CHECK(r.error().message.find("not the timestamp bracket's TIMESTAMP") != std::string::npos);
    CHECK(rig.dma.first(out->dma_bytes) == before);
  }
}

TEST_CASE("timestamp bracket: the paging encoder brackets the operations before the closing FENCE", "[trace][paging]") {
  vidmm::PagingTarget target;
  kmd::SegmentDescriptor mem;
  mem.base_address = 0x1000'0000;
  mem.size = 0x10'0000;
  target.segments.push_back(mem);
  vidmm::PagingBuffer pb;
  vidmm::FillOp f;
  f.fill_size = 4096;
  f.fill_pattern = 0x5a5a5a5a;
  f.destination.segment = 1;
  f.destination.segment_address = mem.base_address;
  pb.operations.emplace_back(f);
  DmaBlock dma;
  CHECK(vidmm::paging_buffer_bytes(pb, true) > vidmm::paging_buffer_bytes(pb, false));

  auto plain = vidmm::encode_paging_buffer(target, pb, dma.data(), 4096, 0x3000, 5);
  REQUIRE(plain);
  CHECK(opcodes(decode(dma.dwords(), *plain)) == std::vector<std::uint8_t>{kFill, kFence});

  auto traced = vidmm::encode_paging_buffer(target, pb, dma.data(), 4096, 0x3000, 5, 0x9000);
  REQUIRE(traced);
  const auto packets = decode(dma.dwords(), *traced);
  REQUIRE(opcodes(packets) == std::vector<std::uint8_t>{kTs, kFill, kTs, kFence});
  CHECK(packets[0].address(0) == 0x9000);
  CHECK(packets[2].address(0) == 0x9008);

  auto bad = vidmm::encode_paging_buffer(target, pb, dma.data(), 4096, 0x3000, 5, 0x9004);
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message.find("not 8-byte aligned") != std::string::npos);
}
