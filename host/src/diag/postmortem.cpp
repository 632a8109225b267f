// Capture and renderings of a post-mortem (see sgpu/diag/postmortem.hpp).
#include "sgpu/diag/postmortem.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "sgpu/aperture.hpp"
#include "sgpu/gen/sgpu_reg_enums.hpp"
#include "sgpu/file_output.hpp"

namespace sgpu::diag {

void InterruptHistory::record(const InterruptRecord& r) {
  if (capacity_ == 0) return;
  if (items_.size() == capacity_) items_.pop_front();
  items_.push_back(r);
}

std::string_view to_string(PostMortemCause c) {
  switch (c) {
    case PostMortemCause::Fault: return "fault";
    case PostMortemCause::Timeout: return "timeout";
  }
  return "unknown";
}

std::string FaultingBuffer::describe_address(std::uint32_t field_offset, std::uint64_t address) const {
  const auto named = [&](const AllocationRef& a) {
    return fmt::format("allocation #{} (handle {:#x}, {:#x}+{:#x})", a.index, a.handle.value, a.gpu_address, a.size);
  };
  for (const auto& p : patches) {
    if (p.patch_offset != field_offset) continue;
    for (const auto& a : allocations)
      if (a.index == p.allocation_index) {
        std::string s = "patched: " + named(a) + fmt::format(" +{:#x}", p.allocation_offset);
        if (a.segment != kSystemMemory && address != a.gpu_address + p.allocation_offset)
          s += fmt::format(" BUT the field holds {:#x}, not {:#x}", address, a.gpu_address + p.allocation_offset);
        return s;
      }
    return fmt::format("patched: allocation #{} (not in the list)", p.allocation_index);
  }
  for (const auto& a : allocations)
    if (a.contains(address)) return "unpatched, inside " + named(a) + fmt::format(" +{:#x}", address - a.gpu_address);
  return allocations.empty() ? std::string{} : "in no listed allocation";
}

namespace {

using nlohmann::json;

std::string hex(std::uint64_t v) { return fmt::format("{:#x}", v); }

bool detail_is_header(abi::Fault f) {
  switch (f) {
    case abi::Fault::IllegalOpcode:
    case abi::Fault::BadLength:
    case abi::Fault::BufferOverrun:
    case abi::Fault::PrivilegedPacket:
    case abi::Fault::BadAlignment:
    case abi::Fault::ReservedBits:
    case abi::Fault::CopyOverlap:
    case abi::Fault::Watchdog:
    case abi::Fault::IndirectDepth:
    case abi::Fault::MapRange:
    case abi::Fault::PhysicalRange: return true;
    default: return false;
  }
}

std::string ring_flag_names(std::uint32_t flags) {
  std::string s;
  for (const auto& n : abi::ring_flags::kNames)
    if (flags & n.bit) s += (s.empty() ? "" : "|") + std::string(n.name);
  if (const std::uint32_t undefined = flags & ~abi::ring_flags::kDefined)
    s += (s.empty() ? "" : "|") + fmt::format("undefined {:#x}", undefined);
  return s.empty() ? "none" : s;
}

std::string header_text(std::uint32_t h) {
  const auto p = disassemble(&h, 1);
  std::string s = fmt::format("header {}", p[0].name());
  if (!p[0].info) s += fmt::format(" (opcode {:#04x})", p[0].opcode);
  s += fmt::format(" dwords={} flags={:#04x}", p[0].dwords, p[0].flags);
  if (p[0].problem == PacketProblem::UnknownOpcode || p[0].problem == PacketProblem::BadLength ||
      p[0].problem == PacketProblem::ReservedFlags)
    s += fmt::format(" ({})", to_string(p[0].problem));
  return s;
}

// Which packet the fault names, and how we know.
void locate(FaultingBuffer& b, const std::optional<FaultRecord>& fault, std::optional<std::uint32_t> stopped_at) {
  const std::uint64_t base = b.entry.buf_addr;
  if (fault) {
    const std::uint64_t a = fault->address;
    if (a >= base + b.entry.start_offset && a < base + b.entry.end_offset) {
      const auto off = static_cast<std::uint32_t>(a - base);
      for (const auto& p : b.packets)
        if (p.contains(off)) {
          b.offending_offset = p.offset;
          b.located_by = p.offset == off ? "FAULT_ADDR is its header's address" : "FAULT_ADDR lies inside it";
          return;
        }
    }
    for (const auto& p : b.packets)
      for (const auto& f : p.fields) {
        if (!f.address) continue;
        const std::uint64_t len = f.extent_known ? std::max<std::uint64_t>(f.extent, 1) : 1;
        const bool page_hit = fault->gart && (f.value & ~std::uint64_t{0xfff}) == fault->gart->page_address;
        if ((a >= f.value && a - f.value < len) || page_hit) {
          b.offending_offset = p.offset;
          b.located_by = fmt::format("FAULT_ADDR is in its {} range", f.name);
          return;
        }
      }
    if (detail_is_header(fault->reason))
      for (const auto& p : b.packets)
        if (p.header == fault->detail) {
          b.offending_offset = p.offset;
          b.located_by = "FAULT_DETAIL equals its header (first such packet)";
          return;
        }
    b.located_by = "no packet of this buffer matches FAULT_ADDR or FAULT_DETAIL (e.g. a fault in a called buffer, "
                   "the ring entry or the write-back record)";
    return;
  }
  if (stopped_at) {
    for (const auto& p : b.packets)
      if (p.contains(*stopped_at)) {
        b.offending_offset = p.offset;
        b.located_by = "the engine stopped here when it was preempted (PREEMPT_OFFSET)";
        return;
      }
  }
  b.located_by = "a hang: the engine did not say where it stopped";
}

void add_gart(PostMortem& pm, Device& device, std::uint64_t address, std::string why) {
  Aperture* ap = device.aperture();
  if (!ap || !ap->contains(address)) return;
  const auto page = static_cast<std::uint32_t>((address - ap->base()) / Aperture::kPageSize);
  for (const auto& g : pm.gart)
    if (g.page == page) return;
  GartEntry g;
  g.page = page;
  g.gpu_address = ap->gpu_addr(page);
  g.pte = ap->pte(page);
  g.valid = (g.pte & Aperture::kPteValid) != 0;
  g.writable = (g.pte & Aperture::kPteWritable) != 0;
  g.snoop = (g.pte & Aperture::kPteSnoop) != 0;
  g.bus_page = g.pte & ~std::uint64_t{0xfff};
  g.dummy = g.bus_page == ap->dummy_page().bus_addr();
  g.why = std::move(why);
  pm.gart.push_back(std::move(g));
}

}  // namespace

std::string describe_detail(const FaultRecord& f) {
  if (f.reason == abi::Fault::BadRingEntry) return "ring entry flags " + ring_flag_names(f.detail);
  if ((f.reason == abi::Fault::BusError || f.reason == abi::Fault::Translation) && f.detail <= 0xff) {
    const std::string_view e = abi::to_string(static_cast<abi::FetchError>(f.detail));
    if (e != "UNKNOWN_FETCH_ERROR" && f.detail != 0) return fmt::format("fetch error {}", e);
  }
  if (f.detail == 0) return "none";
  if (detail_is_header(f.reason) || abi::find_packet(abi::header_opcode(f.detail))) return header_text(f.detail);
  return hex(f.detail);
}

PostMortem capture(Device& device, const CaptureInput& in) {
  PostMortem pm;
  pm.cause = in.cause;
  pm.summary = in.summary;
  pm.time = device.transport().now();
  pm.fault = device.latched_fault();
  if (!pm.fault) {
    // The ISR did not latch it (a program driving the Device without interrupts): read FAULT_*.
    if (auto f = device.fault(); f && *f) pm.fault = **f;
  }
  pm.completed_fence = device.completed_fence();
  pm.last_submitted_fence = device.last_submitted_fence();
  pm.ring_entries = device.ring_entries();
  pm.ring_head = device.ring_head();
  pm.ring_tail = device.ring_tail();
  pm.interrupts = in.interrupts;

  const std::uint32_t mask = pm.ring_entries - 1;
  const std::uint32_t target = in.ring_index ? *in.ring_index : pm.fault ? pm.fault->ring_index : pm.ring_head;
  // The slots around head, the target and tail, in ring order starting two before the head.
  std::set<std::uint32_t> want;
  for (std::uint32_t d = 0; d < 6; ++d) want.insert((pm.ring_head - 2 + d) & mask);
  for (std::uint32_t d = 0; d < 3; ++d) want.insert((pm.ring_tail - 2 + d) & mask);
  want.insert(target & mask);
  const std::uint32_t first = (pm.ring_head - 2) & mask;
  std::vector<std::uint32_t> order(want.begin(), want.end());
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) { return ((a - first) & mask) < ((b - first) & mask); });
  for (const std::uint32_t i : order) pm.ring.push_back({i, device.ring_entry(i)});

  FaultingBuffer b;
  b.ring_index = target & mask;
  b.entry = device.ring_entry(b.ring_index);
  b.allocations = in.allocations;
  b.patches = in.patches;
  if (in.buffer && b.entry.end_offset >= b.entry.start_offset) {
    const std::size_t end = std::min<std::size_t>(b.entry.end_offset, in.buffer_bytes) / 4;
    const auto* w = static_cast<const std::uint32_t*>(in.buffer);
    b.dwords.assign(w, w + end);
    const std::size_t start = std::min<std::size_t>(b.entry.start_offset / 4, end);
    b.packets = disassemble(b.dwords.data() + start, end - start, static_cast<std::uint32_t>(start * 4));
    locate(b, pm.fault, in.stopped_at);
  } else {
    b.located_by = "the buffer's bytes were not given";
  }

  if (pm.fault) {
    if (pm.fault->gart) add_gart(pm, device, pm.fault->gart->page_address, "GART fault page");
    add_gart(pm, device, pm.fault->address, "FAULT_ADDR");
    for (const auto& a : b.allocations)
      if (a.contains(pm.fault->address)) pm.fault_allocation = a;
  }
  add_gart(pm, device, b.entry.buf_addr + b.entry.start_offset, "the DMA buffer");
  if (b.offending_offset)
    for (const auto& p : b.packets)
      if (p.offset == *b.offending_offset)
        for (const auto& f : p.fields)
          if (f.address) add_gart(pm, device, f.value, fmt::format("{}.{}", p.name(), f.name));
  pm.buffer = std::move(b);
  return pm;
}

// ---- JSON

namespace {

json packet_json(const DecodedPacket& p, const FaultingBuffer* b) {
  json j;
  j["offset"] = p.offset;
  j["name"] = std::string(p.name());
  j["opcode"] = p.opcode;
  j["dwords"] = p.dwords;
  j["flags"] = p.flags;
  json flags = json::object();
  for (const auto& f : p.flag_fields)
    flags[std::string(f.name)] = f.value_name.empty() ? json(f.value) : json(std::string(f.value_name));
  j["flag_fields"] = flags;
  json fields = json::array();
  for (const auto& f : p.fields) {
    json x{{"name", f.name}, {"dword", f.dword}, {"value", hex(f.value)}};
    if (f.address) {
      x["access"] = f.address->access == abi::AddressAccess::Read    ? "read"
                    : f.address->access == abi::AddressAccess::Write ? "write"
                                                                      : "execute";
      if (f.extent_known) x["extent"] = f.extent;
      if (b) {
        const std::string note = b->describe_address(p.offset + 4 * f.dword, f.value);
        if (!note.empty()) x["allocation"] = note;
      }
    }
    fields.push_back(std::move(x));
  }
  j["fields"] = fields;
  j["problem"] = p.problem == PacketProblem::None ? json(nullptr) : json(std::string(to_string(p.problem)));
  json raw = json::array();
  for (const auto w : p.raw) raw.push_back(hex(w));
  j["raw"] = raw;
  return j;
}

json alloc_json(const AllocationRef& a) {
  return {{"index", a.index}, {"handle", hex(a.handle.value)}, {"write", a.write}, {"segment", a.segment},
          {"gpu_address", hex(a.gpu_address)}, {"size", a.size}};
}

// The packets shown around the offending one (all of a short buffer).
std::pair<std::size_t, std::size_t> window(const FaultingBuffer& b, std::size_t around = 8) {
  std::size_t at = 0;
  if (b.offending_offset)
    for (std::size_t i = 0; i < b.packets.size(); ++i)
      if (b.packets[i].offset == *b.offending_offset) at = i;
  const std::size_t lo = at > around ? at - around : 0;
  return {lo, std::min(b.packets.size(), at + around + 1)};
}

}  // namespace

std::string to_json(const PostMortem& pm) {
  json j;
  j["format"] = "sgpu-postmortem";
  j["version"] = 1;
  j["cause"] = std::string(to_string(pm.cause));
  j["summary"] = pm.summary;
  j["time_ns"] = pm.time.count();
  if (pm.fault) {
    const auto& f = *pm.fault;
    json fj{{"reason", std::string(abi::to_string(f.reason))}, {"code", f.raw_reason}, {"ring_index", f.ring_index},
            {"address", hex(f.address)}, {"fence", f.fence.value()}, {"detail", hex(f.detail)},
            {"detail_decoded", describe_detail(f)}, {"text", to_string(f)}};
    if (f.gart) {
      const auto& g = *f.gart;
      fj["gart"] = {{"reason", std::string(regs::to_string(static_cast<regs::GartFault>(g.reason)))},
                    {"client", std::string(regs::to_string(static_cast<regs::GartClient>(g.client)))},
                    {"write", g.write}, {"privileged", g.privileged}, {"more_faults", g.more_faults},
                    {"page_address", hex(g.page_address)}, {"fence", g.fence.value()}, {"context_id", g.context_id}};
    }
    j["fault"] = fj;
  } else {
    j["fault"] = nullptr;
  }
  if (pm.fault_allocation) j["fault_allocation"] = alloc_json(*pm.fault_allocation);
  json slots = json::array();
  for (const auto& s : pm.ring)
    slots.push_back({{"index", s.index}, {"buf_addr", hex(s.entry.buf_addr)}, {"start_offset", s.entry.start_offset},
                     {"end_offset", s.entry.end_offset}, {"fence", s.entry.fence}, {"context_id", s.entry.context_id},
                     {"flags", ring_flag_names(s.entry.flags)}, {"head", s.index == pm.ring_head},
                     {"tail", s.index == pm.ring_tail}, {"faulting", pm.buffer && s.index == pm.buffer->ring_index}});
  j["ring"] = {{"entries", pm.ring_entries}, {"head", pm.ring_head}, {"tail", pm.ring_tail},
               {"completed_fence", pm.completed_fence.value()}, {"last_submitted_fence", pm.last_submitted_fence.value()},
               {"slots", slots}};
  if (pm.buffer) {
    const auto& b = *pm.buffer;
    json bj{{"ring_index", b.ring_index}, {"buf_addr", hex(b.entry.buf_addr)}, {"start_offset", b.entry.start_offset},
            {"end_offset", b.entry.end_offset}, {"fence", b.entry.fence}, {"context_id", b.entry.context_id},
            {"flags", ring_flag_names(b.entry.flags)}, {"dwords_captured", b.dwords.size()},
            {"located_by", b.located_by}};
    bj["offending_offset"] = b.offending_offset ? json(*b.offending_offset) : json(nullptr);
    const auto [lo, hi] = window(b);
    json packets = json::array();
    for (std::size_t i = lo; i < hi; ++i) packets.push_back(packet_json(b.packets[i], &b));
    bj["packets"] = packets;
    bj["packets_total"] = b.packets.size();
    json allocs = json::array();
    for (const auto& a : b.allocations) allocs.push_back(alloc_json(a));
    bj["allocations"] = allocs;
    json patches = json::array();
    for (const auto& p : b.patches)
      patches.push_back({{"patch_offset", p.patch_offset}, {"allocation_index", p.allocation_index},
                         {"allocation_offset", p.allocation_offset}});
    bj["patches"] = patches;
    j["buffer"] = bj;
  } else {
    j["buffer"] = nullptr;
  }
  json gart = json::array();
  for (const auto& g : pm.gart)
    gart.push_back({{"page", g.page}, {"gpu_address", hex(g.gpu_address)}, {"pte", hex(g.pte)}, {"valid", g.valid},
                    {"writable", g.writable}, {"snoop", g.snoop}, {"dummy", g.dummy}, {"bus_page", hex(g.bus_page)},
                    {"why", g.why}});
  j["gart"] = gart;
  json irq = json::array();
  for (const auto& r : pm.interrupts)
    irq.push_back({{"time_ns", r.time.count()}, {"dma_completed", r.events.dma_completed}, {"fault", r.events.fault},
                   {"preempted", r.events.preempted}, {"completed_fence", r.completed.value()}});
  j["interrupts"] = irq;
  return j.dump(2) + "\n";
}

// ---- text

std::string to_text(const PostMortem& pm) {
  std::string s = fmt::format("=== sgpu post-mortem: {} at {:.3f} us ===\n", to_string(pm.cause),
                              static_cast<double>(pm.time.count()) / 1000.0);
  if (!pm.summary.empty()) s += pm.summary + "\n";
  s += "\n-- fault record\n";
  if (pm.fault) {
    const auto& f = *pm.fault;
    s += fmt::format("  reason      {} (code {})\n", abi::to_string(f.reason), f.raw_reason);
    s += fmt::format("  ring index  {}   fence {}\n", f.ring_index, f.fence);
    s += fmt::format("  address     {:#018x}", f.address);
    if (pm.fault_allocation)
      s += fmt::format("  (allocation #{}, handle {:#x}, +{:#x})", pm.fault_allocation->index,
                       pm.fault_allocation->handle.value, f.address - pm.fault_allocation->gpu_address);
    s += "\n";
    s += fmt::format("  detail      {:#010x}  {}\n", f.detail, describe_detail(f));
    if (f.gart) s += "  GART        " + to_string(*f.gart) + "\n";
  } else {
    s += "  none (the engine was not stopped on a fault)\n";
  }
  s += fmt::format("\n-- ring ({} entries): head {}, tail {}, completed fence {}, last submitted {}\n", pm.ring_entries,
                   pm.ring_head, pm.ring_tail, pm.completed_fence, pm.last_submitted_fence);
  for (const auto& r : pm.ring) {
    const bool faulting = pm.buffer && r.index == pm.buffer->ring_index;
    std::string tags;
    if (r.index == pm.ring_head) tags += " <- head";
    if (r.index == pm.ring_tail) tags += " <- tail";
    if (faulting) tags += pm.cause == PostMortemCause::Fault ? " <- faulting" : " <- hung";
    s += fmt::format("  [{:3}] buf {:#018x} [{:#x}, {:#x}) fence {} ctx {} flags {}{}\n", r.index, r.entry.buf_addr,
                     r.entry.start_offset, r.entry.end_offset, r.entry.fence, r.entry.context_id,
                     ring_flag_names(r.entry.flags), tags);
  }
  if (pm.buffer) {
    const auto& b = *pm.buffer;
    s += fmt::format("\n-- DMA buffer of ring entry {} at {:#x}, bytes [{:#x}, {:#x}), {} packets\n", b.ring_index,
                     b.entry.buf_addr, b.entry.start_offset, b.entry.end_offset, b.packets.size());
    if (b.offending_offset)
      s += fmt::format("  offending packet at {:#x}: {}\n", *b.offending_offset, b.located_by);
    else
      s += "  offending packet: " + b.located_by + "\n";
    const auto [lo, hi] = window(b);
    if (lo > 0) s += fmt::format("  ... {} packets before\n", lo);
    TextOptions o;
    o.mark = b.offending_offset;
    o.note = [&b](std::uint32_t off, std::uint64_t a) { return b.describe_address(off, a); };
    for (std::size_t i = lo; i < hi; ++i) s += to_text(b.packets[i], o);
    if (hi < b.packets.size()) s += fmt::format("  ... {} packets after\n", b.packets.size() - hi);
    if (!b.allocations.empty()) {
      s += "  allocation list:\n";
      for (const auto& a : b.allocations)
        s += fmt::format("    #{} handle {:#x} {} segment {} at {:#x}, {} bytes\n", a.index, a.handle.value,
                         a.write ? "write" : "read", a.segment, a.gpu_address, a.size);
    }
  }
  s += "\n-- GART entries\n";
  if (pm.gart.empty()) s += "  none involved (no GART, or no aperture address)\n";
  for (const auto& g : pm.gart)
    s += fmt::format("  page {:5} {:#018x}: pte {:#018x} {}{}{} -> {} ({})\n", g.page, g.gpu_address, g.pte,
                     g.valid ? "valid" : "INVALID", g.writable ? " writable" : " read-only", g.snoop ? " snoop" : "",
                     g.dummy ? "dummy page" : fmt::format("bus {:#x}", g.bus_page), g.why);
  s += fmt::format("\n-- last {} interrupts (oldest first)\n", pm.interrupts.size());
  for (const auto& r : pm.interrupts) {
    std::string what;
    if (r.events.dma_completed) what += " dma_completed";
    if (r.events.fault) what += " fault";
    if (r.events.preempted) what += " preempted";
    s += fmt::format("  {:12.3f} us {} (completed fence {})\n", static_cast<double>(r.time.count()) / 1000.0,
                     what.empty() ? " none" : what, r.completed);
  }
  return s;
}

Result<std::vector<std::string>> write_files(const PostMortem& pm, const std::string& dir, const std::string& stem) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error::invalid("cannot create post-mortem directory '{}': {}", dir, ec.message());
  const std::filesystem::path base = std::filesystem::path(dir) / stem;
  std::vector<std::string> written;
  std::string json_text = to_json(pm);
  if (pm.buffer && !pm.buffer->dwords.empty()) {
    const std::string bin = base.string() + ".dma.bin";
    SGPU_RETURN_IF_ERROR(write_dword_file(bin, pm.buffer->dwords));
    written.push_back(bin);
    auto j = nlohmann::json::parse(json_text);
    j["buffer"]["dump_file"] = std::filesystem::path(bin).filename().string();
    json_text = j.dump(2) + "\n";
  }
  for (const auto& [ext, text] : {std::pair<std::string, std::string>{".json", json_text}, {".txt", to_text(pm)}}) {
    const std::string path = base.string() + ext;
    SGPU_RETURN_IF_ERROR(write_file(path, text, "post-mortem"));
    written.push_back(path);
  }
  return written;
}

}  // namespace sgpu::diag
