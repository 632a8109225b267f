// The post-mortem's pieces that need no device: the bounded interrupt history, FAULT_DETAIL in
// words, allocation naming, and the JSON and text renderings (capture() itself runs on the
// simulated device in test_postmortem_sim.cpp).
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "sgpu/diag/postmortem.hpp"

using namespace sgpu;
using namespace sgpu::diag;

namespace {

PostMortem sample() {
  PostMortem pm;
  pm.cause = PostMortemCause::Fault;
  pm.summary = "device fault: test";
  pm.time = std::chrono::microseconds(12);
  FaultRecord f;
  f.reason = abi::Fault::Translation;
  f.raw_reason = 8;
  f.ring_index = 3;
  f.address = 0x18000002000;
  f.fence = RingFence{9};
  f.detail = 0;
  GartFaultRecord g;
  g.reason = 1;
  g.client = 1;
  g.write = true;
  g.page_address = 0x18000002000;
  f.gart = g;
  pm.fault = f;
  pm.ring_entries = 16;
  pm.ring_head = 3;
  pm.ring_tail = 4;
  abi::RingEntry e{};
  e.buf_addr = 0x18000000000;
  e.start_offset = 0;
  e.end_offset = 20;
  e.fence = 9;
  e.context_id = 7;
  pm.ring.push_back({3, e});
  FaultingBuffer b;
  b.ring_index = 3;
  b.entry = e;
  b.dwords = {abi::make_header(abi::Opcode::WriteData, 4), 0x2000, 0x180, 0x1234, abi::make_header(abi::Opcode::Nop, 1)};
  b.packets = disassemble(b.dwords.data(), b.dwords.size());
  b.offending_offset = 0;
  b.located_by = "FAULT_ADDR is in its addr range";
  b.allocations.push_back({1, AllocationHandle{0xabc}, true, 1, 0x100000, 0x1000});
  b.patches.push_back({4, 1, 0x10});
  pm.buffer = b;
  GartEntry ge;
  ge.page = 2;
  ge.gpu_address = 0x18000002000;
  ge.pte = 0x5001;
  ge.valid = true;
  ge.dummy = true;
  ge.bus_page = 0x5000;
  ge.why = "GART fault page";
  pm.gart.push_back(ge);
  pm.interrupts.push_back({std::chrono::microseconds(10), InterruptEvents{true, false, false}, RingFence{8}});
  pm.interrupts.push_back({std::chrono::microseconds(11), InterruptEvents{false, true, false}, RingFence{8}});
  return pm;
}

}  // namespace

TEST_CASE("postmortem: the interrupt history keeps the last N, oldest first", "[postmortem]") {
  InterruptHistory h(3);
  for (int i = 0; i < 5; ++i) h.record({std::chrono::nanoseconds(i), {}, RingFence{static_cast<std::uint64_t>(i)}});
  const auto s = h.snapshot();
  REQUIRE(s.size() == 3);
  CHECK(s.front().time.count() == 2);
  CHECK(s.back().time.count() == 4);
  InterruptHistory none(0);
  none.record({});
  CHECK(none.snapshot().empty());
}

TEST_CASE("postmortem: FAULT_DETAIL in words for each kind of fault", "[postmortem]") {
  FaultRecord f;
  f.reason = abi::Fault::BadLength;
  f.detail = abi::make_header(abi::Opcode::WriteData, 3);
  CHECK(describe_detail(f) == "header WRITE_DATA dwords=3 flags=0x00 (bad length)");
  f.reason = abi::Fault::IllegalOpcode;
  f.detail = 0x0001007f;
  CHECK(describe_detail(f) == "header UNKNOWN (opcode 0x7f) dwords=1 flags=0x00 (unknown opcode)");
  f.reason = abi::Fault::Translation;
  f.detail = static_cast<std::uint32_t>(abi::FetchError::XlateFault);
  CHECK(describe_detail(f) == "fetch error XLATE_FAULT");
  f.reason = abi::Fault::BadRingEntry;
  f.detail = abi::ring_flags::kPrivileged | 0x100;
  CHECK(describe_detail(f) == "ring entry flags privileged|undefined 0x100");
  f.reason = abi::Fault::BusError;
  f.detail = 0;
  CHECK(describe_detail(f) == "none");
}

TEST_CASE("postmortem: a patched field names its allocation, an unpatched one the allocation holding it",
          "[postmortem]") {
  const auto pm = sample();
  const auto& b = *pm.buffer;
  CHECK(b.describe_address(4, 0x100010) == "patched: allocation #1 (handle 0xabc, 0x100000+0x1000) +0x10");
  CHECK_THAT(b.describe_address(4, 0x18000002000), Catch::Contains("BUT the field holds 0x18000002000, not 0x100010"));
  CHECK(b.describe_address(40, 0x100800) == "unpatched, inside allocation #1 (handle 0xabc, 0x100000+0x1000) +0x800");
  CHECK(b.describe_address(40, 0x900000) == "in no listed allocation");
  FaultingBuffer empty;
  CHECK(empty.describe_address(0, 0x1000).empty());
}

TEST_CASE("postmortem: the JSON carries every section with names from the spec", "[postmortem]") {
  const auto j = nlohmann::json::parse(to_json(sample()));
  CHECK(j["format"] == "sgpu-postmortem");
  CHECK(j["version"] == 1);
  CHECK(j["cause"] == "fault");
  CHECK(j["fault"]["reason"] == "TRANSLATION");
  CHECK(j["fault"]["code"] == 8);
  CHECK(j["fault"]["address"] == "0x18000002000");
  CHECK(j["fault"]["gart"]["client"] == "CP_WRITE");
  CHECK(j["ring"]["slots"][0]["faulting"] == true);
  CHECK(j["ring"]["slots"][0]["head"] == true);
  CHECK(j["buffer"]["offending_offset"] == 0);
  CHECK(j["buffer"]["packets"][0]["name"] == "WRITE_DATA");
  CHECK(j["buffer"]["packets"][0]["fields"][0]["name"] == "addr");
  CHECK(j["buffer"]["packets"][0]["fields"][0]["access"] == "write");
  CHECK_THAT(j["buffer"]["packets"][0]["fields"][0]["allocation"].get<std::string>(), Catch::Contains("allocation #1"));
  CHECK(j["buffer"]["packets"][1]["name"] == "NOP");
  CHECK(j["buffer"]["allocations"][0]["handle"] == "0xabc");
  CHECK(j["gart"][0]["dummy"] == true);
  CHECK(j["interrupts"].size() == 2);
  CHECK(j["interrupts"][1]["fault"] == true);
  PostMortem hang;
  hang.cause = PostMortemCause::Timeout;
  const auto h = nlohmann::json::parse(to_json(hang));
  CHECK(h["cause"] == "timeout");
  CHECK(h["fault"].is_null());
  CHECK(h["buffer"].is_null());
}

TEST_CASE("postmortem: the text view marks the offending packet and names everything", "[postmortem]") {
  const std::string t = to_text(sample());
  CHECK_THAT(t, Catch::Contains("=== sgpu post-mortem: fault at 12.000 us ==="));
  CHECK_THAT(t, Catch::Contains("reason      TRANSLATION (code 8)"));
  CHECK_THAT(t, Catch::Contains("GART        INVALID_PTE on a write by"));
  CHECK_THAT(t, Catch::Contains("<- head <- faulting"));
  CHECK_THAT(t, Catch::Contains("offending packet at 0x0: FAULT_ADDR is in its addr range"));
  CHECK_THAT(t, Catch::Contains("=> 0x00000000  WRITE_DATA"));
  CHECK_THAT(t, Catch::Contains("patched: allocation #1"));
  CHECK_THAT(t, Catch::Contains("-> dummy page (GART fault page)"));
  CHECK_THAT(t, Catch::Contains("-- last 2 interrupts"));
  CHECK_THAT(t, Catch::Contains(" fault (completed fence 8)"));
}

TEST_CASE("postmortem: write_files puts JSON, text and the buffer dump in the directory", "[postmortem]") {
  const auto dir = std::filesystem::temp_directory_path() / "sgpu_test_postmortem";
  std::filesystem::remove_all(dir);
  auto files = write_files(sample(), (dir / "sub").string(), "pm-1");
  REQUIRE(files);
  REQUIRE(files->size() == 3);
  std::ifstream in(dir / "sub" / "pm-1.json");
  std::stringstream ss;
  ss << in.rdbuf();
  const auto j = nlohmann::json::parse(ss.str());
  CHECK(j["buffer"]["dump_file"] == "pm-1.dma.bin");
  auto dump = read_dword_file((dir / "sub" / "pm-1.dma.bin").string());
  REQUIRE(dump);
  CHECK(dump->size() == 5);
  CHECK(std::filesystem::exists(dir / "sub" / "pm-1.txt"));
  // A directory that cannot be made (a file is in the way).
  std::ofstream(dir / "file") << "x";
  auto bad = write_files(sample(), (dir / "file" / "x").string(), "pm");
  REQUIRE_FALSE(bad);
  CHECK(bad.error().code == Errc::InvalidArgument);
  std::filesystem::remove_all(dir);
}
