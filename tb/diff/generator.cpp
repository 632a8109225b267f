#include "diff/generator.hpp"

#include <algorithm>
#include <sstream>

#include "model/bus.hpp"

namespace sgpu::diff {
namespace {

bool gart_inject(Inject i) {
  return i == Inject::GartWriteProtect || i == Inject::GartInvalidPte || i == Inject::GartOutOfRange ||
         i == Inject::GartPrivilege;
}

}  // namespace

const char* to_string(Inject inject) {
  switch (inject) {
    case Inject::None: return "none";
    case Inject::IllegalOpcode: return "illegal-opcode";
    case Inject::BadLength: return "bad-length";
    case Inject::ReservedBits: return "reserved-bits";
    case Inject::PrivilegedPacket: return "privileged-packet";
    case Inject::Overrun: return "overrun";
    case Inject::BadAlignment: return "bad-alignment";
    case Inject::BadRingEntry: return "bad-ring-entry";
    case Inject::BufferReadError: return "buffer-read-error";
    case Inject::RingReadError: return "ring-read-error";
    case Inject::WriteError: return "write-error";
    case Inject::CopyOverlap: return "copy-overlap";
    case Inject::CopyReadError: return "copy-read-error";
    case Inject::CopyWriteError: return "copy-write-error";
    case Inject::WaitTimeout: return "wait-timeout";
    case Inject::WaitReadError: return "wait-read-error";
    case Inject::IndirectLoop: return "indirect-loop";
    case Inject::IndirectReadError: return "indirect-read-error";
    case Inject::WritebackError: return "writeback-error";
    case Inject::GartWriteProtect: return "gart-write-protect";
    case Inject::GartInvalidPte: return "gart-invalid-pte";
    case Inject::GartOutOfRange: return "gart-out-of-range";
    case Inject::GartPrivilege: return "gart-privilege";
    case Inject::Count: break;
  }
  return "?";
}

std::string StepPlan::describe() const {
  std::ostringstream s;
  s << std::hex;
  if (disabled_doorbell) s << "  (doorbell rung with CTRL.enable = 0 first)\n";
  if (gart) s << "  (GART on: addresses are aperture addresses)\n";
  if (retire_watchdog) s << "  (CP_WATCHDOG = " << std::dec << *retire_watchdog << std::hex << " for this step)\n";
  for (const auto& e : entries) {
    s << "  entry buf=0x" << e.entry.buf_addr << " [0x" << e.entry.start_offset << ", 0x" << e.entry.end_offset
      << ") fence=0x" << e.entry.fence << " flags=0x" << e.entry.flags << " inject=" << to_string(e.inject)
      << std::dec << " packets=" << e.packets << " called buffers=" << e.children.size() << std::hex << "\n   ";
    const std::size_t first = e.entry.start_offset / 4;
    const std::size_t last = std::min<std::size_t>(e.buffer.size(), e.entry.end_offset / 4);
    for (std::size_t i = first; i < last && i < first + 48; ++i) s << " " << e.buffer[i];
    if (last > first + 48) s << " ...";
    s << "\n";
  }
  for (const auto& r : errors) s << "  error [0x" << r.lo << ", 0x" << r.hi << ") resp " << unsigned{r.resp} << "\n";
  return s.str();
}

std::uint64_t ApertureMap::to_bus(std::uint64_t gpu) const {
  if (gpu < base || gpu - base >= std::uint64_t{pages} << 12) return gpu;
  const std::uint64_t pte_value = pte[(gpu - base) >> 12];
  return (pte_value & ~std::uint64_t{0xfff}) | (gpu & 0xfff);
}

ApertureMap make_aperture_map(const Layout& l, std::uint64_t aperture_base, std::mt19937_64& rng) {
  constexpr std::uint64_t kPage = 4096, kValid = 1, kWritable = 2;
  ApertureMap m;
  m.base = aperture_base;
  m.view = l;
  auto window = [&](std::uint64_t bus, std::uint64_t bytes, std::uint64_t flags) {
    const std::uint64_t gpu = aperture_base + kPage * m.pte.size();
    for (std::uint64_t off = 0; off < bytes; off += kPage) m.pte.push_back((bus + off) | flags);
    return gpu;
  };
  // The data region, its pages shuffled (a COPY or rectangle crossing pages is scattered).
  std::vector<std::uint64_t> data_pages;
  for (std::uint64_t off = 0; off < l.data_bytes; off += kPage) data_pages.push_back(l.data + off);
  std::shuffle(data_pages.begin(), data_pages.end(), rng);
  m.view.data = aperture_base;
  for (const std::uint64_t p : data_pages) window(p, kPage, kValid | kWritable);
  m.view.poison_slverr = window(l.poison_slverr, kPage, kValid | kWritable);
  m.view.poison_decerr = window(l.poison_decerr, kPage, kValid | kWritable);
  m.dummy = aperture_base + kPage * m.pte.size();
  for (unsigned i = 0; i < m.dummy_pages; ++i) window(l.dummy_page, kPage, kValid);
  // Invalid: valid = 0 whatever the other bits say.
  m.invalid = aperture_base + kPage * m.pte.size();
  m.pte.push_back((l.data | kWritable | 4) & ~kValid);
  window(l.dummy_page, kPage, kValid);
  m.view.buffers = window(l.buffers, l.buffer_slot_bytes * l.buffer_slots, kValid | kWritable);
  m.view.children = window(l.children, l.child_slot_bytes * l.child_slots, kValid | kWritable);
  for (unsigned i = 0; i < 8; ++i) window(l.dummy_page, kPage, kValid);
  m.pages = static_cast<std::uint32_t>(m.pte.size());
  return m;
}

Generator::Generator(std::uint64_t seed, GeneratorConfig config) : config_(config), rng_(seed) {
  aperture_ = make_aperture_map(config_.layout, config_.aperture_base, rng_);
  // Fences sometimes start above 4 Gi so the high halves are exercised too.
  fence_ = chance(0.5) ? uniform(1, 1000) : (uniform(1, 0xffff) << 32);
}

std::uint64_t Generator::uniform(std::uint64_t lo, std::uint64_t hi) {
  return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng_);
}

bool Generator::chance(double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p; }

std::uint64_t Generator::data_addr(std::uint64_t bytes, std::uint64_t align) {
  const std::uint64_t slots = (view().data_bytes - bytes) / align;
  return view().data + align * uniform(0, slots);
}

// COPY/FILL lengths: mostly small, sometimes a few pages (any length, any alignment).
std::uint32_t Generator::copy_bytes() {
  const std::uint64_t r = uniform(0, 19);
  return static_cast<std::uint32_t>(r < 1 ? 0 : r < 12 ? uniform(1, 64) : r < 18 ? uniform(65, 1500) : uniform(1501, 9000));
}

// Rectangles: up to 300 bytes by 12 rows, pitches usually wider than a row, sometimes narrower
// (rows that overlap each other: legal, later rows win).
Generator::Rect Generator::rect(bool nonempty, std::uint64_t max_extent) {
  Rect r{};
  do {
    r.width = static_cast<std::uint32_t>(uniform(nonempty ? 1 : 0, chance(0.8) ? 64 : 300));
    r.height = static_cast<std::uint32_t>(uniform(nonempty ? 1 : 0, 12));
    r.pitch = chance(0.9) ? r.width + static_cast<std::uint32_t>(uniform(0, 200))
                          : static_cast<std::uint32_t>(uniform(0, r.width));
  } while (r.extent() > max_extent);
  return r;
}

std::uint64_t Generator::child_buffer(const model::PacketStream& s) {
  const Layout& l = view();
  const std::uint64_t addr = l.children + l.child_slot_bytes * next_child_ + 4 * uniform(0, 63);
  next_child_ = (next_child_ + 1) % l.child_slots;
  if (children_left_ > 0) --children_left_;
  EntryPlan::Child c{addr, s.words()};
  const auto garbage = static_cast<unsigned>(uniform(0, 4));
  for (unsigned i = 0; i < garbage; ++i) c.words.push_back(static_cast<std::uint32_t>(rng_()));
  plan_->children.push_back(std::move(c));
  return addr;
}

void Generator::indirect_packet(model::PacketStream& s) {
  if (chance(0.05)) {
    // bytes = 0: nothing is called (any aligned address).
    s.indirect(rng_() & 0x0000'ffff'ffff'fffcull, 0);
    return;
  }
  model::PacketStream c;
  ++nest_;
  const auto n = static_cast<unsigned>(uniform(0, 5));
  for (unsigned i = 0; i < n; ++i) valid_packet(c);
  --nest_;
  s.indirect(child_buffer(c), c.bytes());
}

void Generator::valid_packet(model::PacketStream& s) {
  if (!quiet_ && plan_ != nullptr && nest_ < config_.max_indirect_depth && children_left_ > 0 && chance(0.05)) {
    indirect_packet(s);
    return;
  }
  if (quiet_) {
    // Nothing that drains the writes (FENCE, WAIT_MEM, TIMESTAMP, copies, GART updates) or the
    // fetch engine's reads in flight (INDIRECT), and never so many writes in flight that the
    // write master stops taking them.
    if (quiet_writes_left_ > 0 && chance(0.4)) {
      const std::uint64_t n = uniform(1, quiet_writes_left_);
      quiet_writes_left_ -= static_cast<unsigned>(n);
      std::vector<std::uint32_t> data(n);
      for (auto& d : data) d = static_cast<std::uint32_t>(rng_());
      s.write_data(data_addr(4 * n, 4), data);
    } else {
      s.nop(static_cast<std::uint32_t>(chance(0.8) ? uniform(1, 8) : uniform(9, 300)), static_cast<std::uint32_t>(rng_()));
    }
    return;
  }
  if (chance(0.03)) {
    s.timestamp(data_addr(8, 8));
    return;
  }
  if (chance(0.04)) {
    // A wait satisfied by the WRITE_DATA right before it (nothing in between can change the
    // dword, and nothing outside the submission writes memory while it runs).
    const std::uint64_t addr = data_addr(4, 4);
    const auto v = static_cast<std::uint32_t>(rng_());
    const std::uint32_t mask = chance(0.5) ? 0xffffffffu : static_cast<std::uint32_t>(rng_());
    const std::uint32_t m = v & mask;
    auto func = static_cast<abi::WaitMemFunc>(uniform(0, 6));
    if (func == abi::WaitMemFunc::Lt && m == 0xffffffffu) func = abi::WaitMemFunc::Le;
    if (func == abi::WaitMemFunc::Gt && m == 0) func = abi::WaitMemFunc::Ge;
    std::uint32_t ref = 0;
    switch (func) {
      case abi::WaitMemFunc::Eq: ref = m; break;
      case abi::WaitMemFunc::Ne: ref = m + static_cast<std::uint32_t>(uniform(1, 0xffffffffu)); break;
      case abi::WaitMemFunc::Lt: ref = static_cast<std::uint32_t>(uniform(std::uint64_t{m} + 1, 0xffffffffu)); break;
      case abi::WaitMemFunc::Le: ref = static_cast<std::uint32_t>(uniform(m, 0xffffffffu)); break;
      case abi::WaitMemFunc::Gt: ref = static_cast<std::uint32_t>(uniform(0, m - 1)); break;
      case abi::WaitMemFunc::Ge: ref = static_cast<std::uint32_t>(uniform(0, m)); break;
      default: ref = static_cast<std::uint32_t>(rng_()); break;
    }
    s.write_data(addr, {v});
    s.wait_mem(addr, func, ref, mask, static_cast<std::uint32_t>(uniform(0, 20)));
    return;
  }
  const std::uint64_t kind = uniform(0, 99);
  if (priv_ && kind >= 92) {
    // Privileged packets, valid only in privileged entries.
    const Layout& l = config_.layout;
    const std::uint64_t p = uniform(0, 4);
    if (p == 3) {
      // WRITE_PHYSICAL / READ_PHYSICAL within the data region (system physical: the GART is off
      // here, so only the packet's own checks and effects are compared).
      const std::uint64_t n = uniform(1, 12);
      std::vector<std::uint32_t> data(n);
      for (auto& d : data) d = static_cast<std::uint32_t>(rng_());
      s.write_physical(data_addr(4 * n, 4), data);
    } else if (p == 4) {
      const std::uint32_t n = copy_bytes();
      std::uint64_t src = 0, dst = 0;
      do {
        src = data_addr(n, 1);
        dst = data_addr(n, 1);
      } while (n != 0 && src < dst + n && dst < src + n);
      s.read_physical(src, dst, n);
    } else if (p == 0) {
      s.tlb_invalidate(static_cast<std::uint32_t>(uniform(0, 0xffff)), static_cast<std::uint32_t>(uniform(0, 64)),
                       chance(0.3));
    } else {
      // MAP / UNMAP of a range inside GART_TABLE_SIZE; flags and bus addresses random (the
      // ignored bits included).
      const auto count = static_cast<std::uint32_t>(uniform(0, 8));
      const auto first = static_cast<std::uint32_t>(uniform(0, l.gart_table_entries - count));
      if (p == 1) {
        std::vector<std::uint64_t> bus(count);
        for (auto& b : bus) b = rng_();
        s.map(first, chance(0.8) ? static_cast<std::uint32_t>(uniform(0, 7)) : static_cast<std::uint32_t>(rng_()), bus);
      } else {
        s.unmap(first, count, rng_());
      }
    }
  } else if (kind >= 91) {
    // BLIT_RECT / FILL_RECT between disjoint extents of the data region.
    const Rect d = rect(false, 0x2000);
    if (kind >= 96) {
      s.fill_rect(data_addr(d.extent(), 1), d.width, d.height, d.pitch, static_cast<std::uint32_t>(rng_()));
    } else {
      Rect r = rect(false, 0x2000);
      r.width = d.width;
      r.height = d.height;
      if (r.pitch < r.width && chance(0.5)) r.pitch = r.width;
      std::uint64_t src = 0, dst = 0;
      do {
        src = data_addr(r.extent(), 1);
        dst = data_addr(d.extent(), 1);
      } while (d.width != 0 && d.height != 0 && src < dst + d.extent() && dst < src + r.extent());
      s.blit_rect(src, dst, d.width, d.height, r.pitch, d.pitch);
    }
  } else if (kind >= 82) {
    const std::uint32_t n = copy_bytes();
    if (kind >= 87) {
      s.fill(data_addr(n, 1), n, static_cast<std::uint32_t>(rng_()));
    } else {
      // Two non-overlapping ranges of the data region.
      std::uint64_t src = 0, dst = 0;
      do {
        src = data_addr(n, 1);
        dst = data_addr(n, 1);
      } while (n != 0 && src < dst + n && dst < src + n);
      s.copy(src, dst, n);
    }
  } else if (gart_ && kind >= 80) {
    // GART steps: a copy out of the dummy pages (their poison lands in the data region).
    const std::uint64_t n = uniform(1, 0x1800);
    const std::uint64_t src = aperture_.dummy + uniform(0, aperture_.dummy_pages * 4096ull - n);
    s.copy(src, data_addr(n, 1), static_cast<std::uint32_t>(n));
    ++dummy_reads_;
  } else if (kind < 26) {
    const std::uint64_t r = uniform(0, 9);
    const auto n = static_cast<std::uint32_t>(r < 5 ? 1 : r < 9 ? uniform(2, 8) : uniform(9, 300));
    s.nop(n, static_cast<std::uint32_t>(rng_()));
  } else if (kind < 60) {
    const std::uint64_t r = uniform(0, 19);
    const std::uint64_t n = r < 6 ? 1 : r < 18 ? uniform(2, 16) : uniform(17, 200);
    std::vector<std::uint32_t> data(n);
    for (auto& d : data) d = static_cast<std::uint32_t>(rng_());
    s.write_data(data_addr(4 * n, 4), data);
  } else {
    std::uint8_t flags = chance(0.3) ? abi::fence_flags::kIrq : 0;
    const bool v64 = chance(0.5);
    if (v64) flags |= abi::fence_flags::kValue64;
    s.fence(data_addr(8, v64 ? 8 : 4), rng_(), flags);
  }
}

// Appends the invalid packet of `inject` (stream-level kinds only). `last`: the packet must end
// the buffer (an overrun is only one at the end).
void Generator::invalid_packet(model::PacketStream& s, Inject inject, bool& last) {
  const auto flags_random = static_cast<std::uint8_t>(uniform(0, 255));
  switch (inject) {
    case Inject::IllegalOpcode: {
      std::uint8_t op = 0;
      do op = static_cast<std::uint8_t>(uniform(0, 255));
      while (abi::find_packet(op) != nullptr);
      s.raw((std::uint32_t{static_cast<std::uint16_t>(uniform(0, 0xffff))} << 16) |
            (std::uint32_t{flags_random} << 8) | op);
      break;
    }
    case Inject::BadLength: {
      // A packet whose length range is not everything, with a length outside it (and maybe
      // also reserved flags: the length check comes first).
      const abi::PacketInfo* info = nullptr;
      do info = &abi::kPackets[uniform(0, abi::kPackets.size() - 1)];
      while (info->min_dwords == 0 && info->max_dwords == 0xffff);
      std::uint32_t dw = 0;
      if (info->min_dwords > 0 && (info->max_dwords == 0xffff || chance(0.5))) {
        dw = static_cast<std::uint32_t>(uniform(0, info->min_dwords - 1));
      } else {
        dw = static_cast<std::uint32_t>(uniform(info->max_dwords + 1, std::min<std::uint32_t>(0xffff, info->max_dwords + 40)));
      }
      const std::uint8_t fl = chance(0.5) ? flags_random : 0;
      s.raw(abi::make_header(info->opcode, dw, fl));
      for (std::uint32_t i = 1; i < std::min<std::uint32_t>(dw, 8); ++i) s.raw(static_cast<std::uint32_t>(rng_()));
      break;
    }
    case Inject::ReservedBits: {
      // A valid packet with an undefined flag bit set.
      model::PacketStream p;
      valid_packet(p);
      const abi::PacketInfo* info = abi::find_packet(abi::header_opcode(p.words()[0]));
      std::uint8_t bad = 0;
      do bad = static_cast<std::uint8_t>(uniform(1, 255));
      while ((bad & ~info->flags_mask) == 0);
      p.words()[0] |= std::uint32_t{bad} << abi::header::kFlagsLsb;
      s.append(p);
      break;
    }
    case Inject::PrivilegedPacket: {
      // A privileged packet with random contents: a fault in an ordinary entry, executed in a
      // privileged one.
      std::vector<const abi::PacketInfo*> privileged;
      for (const auto& info : abi::kPackets) {
        if (info.privileged) privileged.push_back(&info);
      }
      if (privileged.empty()) {
        valid_packet(s);
        break;
      }
      const abi::PacketInfo& info = *privileged[uniform(0, privileged.size() - 1)];
      s.raw(abi::make_header(info.opcode, info.min_dwords, static_cast<std::uint8_t>(uniform(0, 255) & info.flags_mask)));
      for (std::uint32_t i = 1; i < info.min_dwords; ++i) s.raw(static_cast<std::uint32_t>(uniform(0, 0xffff)));
      break;
    }
    case Inject::Overrun: {
      model::PacketStream p;
      if (chance(0.3)) {
        p.nop(static_cast<std::uint32_t>(uniform(2, 64)));
      } else {
        while (p.words().size() < 2) {
          p = model::PacketStream();
          valid_packet(p);
        }
      }
      const std::uint64_t cut = uniform(1, p.words().size() - 1);
      p.words().resize(p.words().size() - cut);
      s.append(p);
      last = true;
      break;
    }
    case Inject::BadAlignment: {
      const std::uint64_t r = uniform(0, 5);
      if (r == 5) {
        const bool bad_addr = chance(0.5);
        s.indirect(view().children + (bad_addr ? uniform(1, 3) : 0),
                   static_cast<std::uint32_t>(4 * uniform(0, 64) + (bad_addr ? 0 : uniform(1, 3))));
      } else if (r == 3) {
        s.wait_mem(data_addr(16, 4) + uniform(1, 3), static_cast<abi::WaitMemFunc>(uniform(0, 7)),
                   static_cast<std::uint32_t>(rng_()), static_cast<std::uint32_t>(rng_()));
      } else if (r == 4) {
        s.timestamp(data_addr(16, 8) + uniform(1, 7));
      } else if (r == 0) {
        s.write_data(data_addr(64, 4) + uniform(1, 3), {1, 2, 3});
      } else if (r == 1) {
        s.fence(data_addr(16, 8) + (chance(0.5) ? 4 : uniform(1, 7)), rng_(), abi::fence_flags::kValue64);
      } else {
        s.fence(data_addr(16, 4) + uniform(1, 3), rng_(), chance(0.5) ? abi::fence_flags::kIrq : 0);
      }
      break;
    }
    case Inject::WriteError: {
      const auto& l = view();
      const std::uint64_t poison = chance(0.5) ? l.poison_slverr : l.poison_decerr;
      if (chance(0.1)) {
        s.timestamp(poison + 8 * uniform(0, 16));
      } else if (chance(0.3)) {
        s.fence(poison + 8 * uniform(0, 16), rng_(), static_cast<std::uint8_t>(uniform(0, 3)));
      } else {
        // Possibly starting in good memory and running into the poison (SLVERR page follows the
        // data region directly).
        const std::uint64_t n = uniform(1, 12);
        const std::uint64_t start = (poison == l.poison_slverr && chance(0.5))
                                        ? l.poison_slverr - 4 * uniform(1, n)
                                        : poison + 4 * uniform(0, 64);
        std::vector<std::uint32_t> data(n);
        for (auto& d : data) d = static_cast<std::uint32_t>(rng_());
        s.write_data(start, data);
      }
      break;
    }
    case Inject::CopyOverlap: {
      if (chance(0.4)) {
        // Overlapping extents (the rows themselves may or may not share bytes).
        const Rect r = rect(true, 0x2000);
        const std::uint64_t src = data_addr(2 * r.extent(), 1) + (chance(0.5) ? r.extent() : 0);
        const std::uint64_t dst = chance(0.5) ? src + uniform(0, r.extent() - 1) : src - uniform(0, r.extent() - 1);
        const auto dp = static_cast<std::uint32_t>(chance(0.5) ? r.pitch : r.width + uniform(0, 64));
        s.blit_rect(src, dst, r.width, r.height, r.pitch, dp);
        break;
      }
      const auto n = static_cast<std::uint32_t>(uniform(1, 3000));
      const std::uint64_t src = data_addr(2 * n, 1) + (chance(0.5) ? n : 0);
      const std::int64_t delta = static_cast<std::int64_t>(uniform(0, 2ull * n - 2)) - static_cast<std::int64_t>(n - 1);
      s.copy(src, static_cast<std::uint64_t>(static_cast<std::int64_t>(src) + delta), n);
      break;
    }
    case Inject::CopyReadError: {
      const auto& l = view();
      if (chance(0.4)) {
        const Rect r = rect(true, 0x1000), d = rect(true, 0x2000);
        const std::uint64_t src = chance(0.6) ? l.poison_slverr - uniform(0, r.extent() - 1)
                                              : l.poison_decerr + uniform(0, 0x1000 - 1);
        s.blit_rect(src, data_addr(d.extent() + 0x1000, 1), r.width, std::min(r.height, d.height), r.pitch,
                    d.pitch);
        break;
      }
      const auto n = static_cast<std::uint32_t>(uniform(1, 3000));
      // Starting in good memory and running into the SLVERR page, or inside the DECERR page.
      const std::uint64_t src = chance(0.6) ? l.poison_slverr - uniform(0, n - 1)
                                            : l.poison_decerr + uniform(0, 0x1000 - 1);
      s.copy(src, data_addr(n, 1), n);
      break;
    }
    case Inject::CopyWriteError: {
      const auto& l = view();
      const auto n = static_cast<std::uint32_t>(uniform(1, 3000));
      // Never past the poison pages: after the error the engine drains, and bytes beyond the
      // failing burst may or may not be written, so no page may exist only in one image.
      if (chance(0.4)) {
        // A rectangle running into the poison pages, never past them.
        const Rect d = rect(true, 0x1000);
        const std::uint64_t dst = chance(0.6) ? l.poison_slverr - uniform(0, d.extent() - 1)
                                              : l.poison_decerr + uniform(0, 0x1000 - d.extent());
        if (chance(0.5)) {
          s.fill_rect(dst, d.width, d.height, d.pitch, static_cast<std::uint32_t>(rng_()));
        } else {
          s.blit_rect(l.data + uniform(0, 0x4000), dst, d.width, d.height, d.width, d.pitch);
        }
        break;
      }
      const std::uint64_t dst = chance(0.6) ? l.poison_slverr - uniform(0, n - 1)
                                            : l.poison_decerr + uniform(0, 0x1000 - n);
      if (chance(0.5)) {
        s.fill(dst, n, static_cast<std::uint32_t>(rng_()));
      } else {
        // The source lies in the data region below the destination's start.
        const std::uint64_t lo = l.data, hi = std::min<std::uint64_t>(dst, l.data + l.data_bytes) - n;
        s.copy(lo + uniform(0, hi - lo), dst, n);
      }
      break;
    }
    case Inject::WaitTimeout: {
      if (config_.watchdog_cycles == 0) {
        valid_packet(s);
        break;
      }
      // Never satisfied whatever the memory holds (so uncertain bytes cannot matter).
      const std::uint64_t addr = data_addr(4, 4);
      const auto any = static_cast<std::uint32_t>(rng_());
      switch (uniform(0, 4)) {
        case 0: s.wait_mem(addr, abi::WaitMemFunc::Never, any, any, static_cast<std::uint32_t>(uniform(0, 50))); break;
        case 1: s.wait_mem(addr, abi::WaitMemFunc::Eq, any | 1, 0, static_cast<std::uint32_t>(uniform(0, 50))); break;
        case 2: s.wait_mem(addr, abi::WaitMemFunc::Ne, 0, 0, static_cast<std::uint32_t>(uniform(0, 50))); break;
        case 3: s.wait_mem(addr, abi::WaitMemFunc::Lt, 0, any, static_cast<std::uint32_t>(uniform(0, 50))); break;
        default: s.wait_mem(addr, abi::WaitMemFunc::Gt, any | 0x80000000u, any & 0x7fffffffu,
                            static_cast<std::uint32_t>(uniform(0, 50))); break;
      }
      break;
    }
    case Inject::WaitReadError: {
      const auto& l = view();
      const std::uint64_t addr = (chance(0.5) ? l.poison_slverr : l.poison_decerr) + 4 * uniform(0, 1023);
      s.wait_mem(addr, static_cast<abi::WaitMemFunc>(uniform(0, 7)), static_cast<std::uint32_t>(rng_()),
                 static_cast<std::uint32_t>(rng_()));
      break;
    }
    case Inject::IndirectLoop: {
      if (plan_ == nullptr || children_left_ == 0) {
        valid_packet(s);
        break;
      }
      // A buffer that calls itself after 0-2 valid packets: the nesting runs into the limit.
      const Layout& l = view();
      const std::uint64_t addr = l.children + l.child_slot_bytes * next_child_ + 4 * uniform(0, 63);
      next_child_ = (next_child_ + 1) % l.child_slots;
      --children_left_;
      model::PacketStream c;
      ++nest_;
      const auto n = static_cast<unsigned>(uniform(0, 2));
      for (unsigned i = 0; i < n; ++i) valid_packet(c);
      --nest_;
      c.indirect(addr, c.bytes() + 16);
      plan_->children.push_back({addr, c.words()});
      s.indirect(addr, c.bytes());
      break;
    }
    case Inject::IndirectReadError: {
      if (plan_ == nullptr || step_ == nullptr || children_left_ == 0) {
        valid_packet(s);
        break;
      }
      model::PacketStream c;
      ++nest_;
      const auto n = static_cast<unsigned>(uniform(1, 4));
      for (unsigned i = 0; i < n; ++i) valid_packet(c);
      --nest_;
      const std::uint64_t addr = child_buffer(c);
      const std::uint64_t lo = to_bus(addr + uniform(0, c.bytes() - 1));
      step_->errors.push_back({lo, lo + uniform(1, 64), chance(0.5) ? model::kRespSlvErr : model::kRespDecErr});
      s.indirect(addr, c.bytes());
      break;
    }
    case Inject::GartWriteProtect: {
      if (!gart_) {
        valid_packet(s);
        break;
      }
      // Into the dummy pages, or from good memory (the last data page: the poison pages follow
      // it, so only the dummy pages themselves) — a write of one dword to a few pages.
      const std::uint64_t at = aperture_.dummy + 4 * uniform(0, aperture_.dummy_pages * 1024ull - 64);
      switch (uniform(0, 3)) {
        case 0: s.write_data(at, {1, 2, 3}); break;
        case 1: s.fence(at & ~std::uint64_t{7}, rng_(), abi::fence_flags::kValue64); break;
        case 2: s.fill(at, static_cast<std::uint32_t>(uniform(1, 200)), static_cast<std::uint32_t>(rng_())); break;
        default: {
          const auto n = static_cast<std::uint32_t>(uniform(1, 200));
          s.copy(data_addr(n, 1), at, n);
          break;
        }
      }
      break;
    }
    case Inject::GartInvalidPte:
    case Inject::GartOutOfRange:
    case Inject::GartPrivilege: {
      if (!gart_) {
        valid_packet(s);
        break;
      }
      std::uint64_t page = aperture_.invalid;
      if (inject == Inject::GartOutOfRange) {
        page = chance(0.7) ? aperture_.base + 4096ull * (aperture_.pages + uniform(0, 64))
                           : 0x0020'0000'0000'0000ull + 4096 * uniform(0, 1 << 20);  // in no segment
      } else if (inject == Inject::GartPrivilege) {
        page = config_.layout.data + 4096 * uniform(0, config_.layout.data_bytes / 4096 - 1);
      }
      const std::uint64_t at = page + 4 * uniform(0, 1000);
      switch (uniform(0, 3)) {
        case 0: s.write_data(at, {static_cast<std::uint32_t>(rng_())}); break;
        case 1: {
          const auto n = static_cast<std::uint32_t>(uniform(1, 96));
          s.copy(at, data_addr(n, 1), n);
          break;
        }
        case 2:
          s.wait_mem(at, static_cast<abi::WaitMemFunc>(uniform(0, 6)), static_cast<std::uint32_t>(rng_()),
                     static_cast<std::uint32_t>(rng_()));
          break;
        default: s.fence(at & ~std::uint64_t{7}, rng_(), 0); break;
      }
      break;
    }
    default: valid_packet(s); break;
  }
}

EntryPlan Generator::make_entry(std::uint64_t slot_addr, Inject inject, std::uint64_t entry_addr, StepPlan& step) {
  EntryPlan plan;
  plan.inject = inject;
  plan_ = &plan;
  step_ = &step;
  nest_ = 0;
  auto& e = plan.entry;
  e.fence = ++fence_;
  e.context_id = static_cast<std::uint32_t>(uniform(0, 15));
  const std::uint64_t fr = uniform(0, 99);
  e.flags = fr < 10 ? abi::ring_flags::kPresent : fr < 18 ? abi::ring_flags::kPrivileged
          : fr < 22 ? abi::ring_flags::kPaging : fr < 26 ? abi::ring_flags::kNullRender : 0;
  // GART steps: ordinary entries only (privileged packets would write the live page table or
  // system-physical memory; privilege is what GartPrivilege tests).
  if (gart_) e.flags &= ~(abi::ring_flags::kPrivileged | abi::ring_flags::kPaging);
  e.buf_addr = slot_addr;
  priv_ = (e.flags & (abi::ring_flags::kPrivileged | abi::ring_flags::kPaging)) != 0;

  // Garbage before start_offset and after end_offset must never be decoded.
  const std::uint32_t prefix = chance(0.25) ? static_cast<std::uint32_t>(uniform(1, 16)) : 0;
  for (std::uint32_t i = 0; i < prefix; ++i) plan.buffer.push_back(static_cast<std::uint32_t>(rng_()));
  e.start_offset = 4 * prefix;

  quiet_writes_left_ = 6;
  const bool zero_length = inject != Inject::BufferReadError && inject != Inject::WriteError &&
                           inject != Inject::Overrun && inject != Inject::CopyOverlap &&
                           inject != Inject::CopyReadError && inject != Inject::CopyWriteError &&
                           inject != Inject::WaitTimeout && inject != Inject::WaitReadError &&
                           inject != Inject::IndirectLoop && inject != Inject::IndirectReadError &&
                           !gart_inject(inject) && chance(0.06);
  model::PacketStream s;
  if (!zero_length) {
    const bool stream_inject = inject != Inject::None && inject != Inject::BadRingEntry &&
                               inject != Inject::RingReadError && inject != Inject::BufferReadError &&
                               inject != Inject::WritebackError;
    const auto n = static_cast<unsigned>(uniform(1, config_.max_packets_per_entry));
    const auto at = static_cast<unsigned>(uniform(0, n - 1));
    bool last = false;
    for (unsigned i = 0; i < n && !last; ++i) {
      if (stream_inject && i == at) {
        if (children_left_ > 0 && inject != Inject::IndirectLoop && inject != Inject::IndirectReadError &&
            chance(0.2)) {
          // The invalid packet inside a called buffer (its fault names the address there).
          model::PacketStream c;
          ++nest_;
          const auto k = static_cast<unsigned>(uniform(0, 2));
          for (unsigned j = 0; j < k; ++j) valid_packet(c);
          invalid_packet(c, inject, last);
          --nest_;
          s.indirect(child_buffer(c), c.bytes());
        } else {
          invalid_packet(s, inject, last);
        }
      } else {
        valid_packet(s);
      }
      ++plan.packets;
    }
    // An overrun needs a null-render-free entry to be seen; other kinds may meet null_render.
    if (inject == Inject::WriteError || inject == Inject::Overrun || inject == Inject::BufferReadError ||
        inject == Inject::CopyOverlap || inject == Inject::CopyReadError || inject == Inject::CopyWriteError ||
        inject == Inject::WaitTimeout || inject == Inject::WaitReadError || inject == Inject::IndirectLoop ||
        inject == Inject::IndirectReadError || gart_inject(inject)) {
      e.flags &= ~abi::ring_flags::kNullRender;
    }
  }
  plan.buffer.insert(plan.buffer.end(), s.words().begin(), s.words().end());
  e.end_offset = e.start_offset + s.bytes();
  const std::uint32_t suffix = chance(0.25) ? static_cast<std::uint32_t>(uniform(1, 8)) : 0;
  for (std::uint32_t i = 0; i < suffix; ++i) plan.buffer.push_back(static_cast<std::uint32_t>(rng_()));
  if (zero_length && chance(0.5)) {
    // Nothing is read: any (aligned) address and equal offsets will do.
    e.buf_addr = (rng_() & ~std::uint64_t{3}) & 0x0000'ffff'ffff'fffcull;
    e.start_offset = e.end_offset = static_cast<std::uint32_t>(4 * uniform(0, 1000));
    plan.buffer.clear();
  }

  if (inject == Inject::BadRingEntry) {
    switch (uniform(0, 4)) {
      case 0: e.buf_addr |= uniform(1, 3); break;
      case 1: e.start_offset |= static_cast<std::uint32_t>(uniform(1, 3)); break;
      case 2: e.end_offset |= static_cast<std::uint32_t>(uniform(1, 3)); break;
      case 3: e.start_offset = e.end_offset + 4 * static_cast<std::uint32_t>(uniform(1, 8)); break;
      default: e.flags |= 1u << uniform(4, 31); break;
    }
  } else if (inject == Inject::RingReadError) {
    const std::uint64_t lo = entry_addr + uniform(0, 31);
    step.errors.push_back({lo, lo + uniform(1, 32), chance(0.5) ? model::kRespSlvErr : model::kRespDecErr});
  } else if (inject == Inject::WritebackError) {
    // Part of one word of the record: {reserved, head}, written first, or the fence, written
    // last. The first entry of the step to retire meets it.
    const std::uint64_t word = config_.layout.writeback + (chance(0.5) ? 8 : 0);
    const std::uint64_t lo = word + uniform(0, 7);
    step.errors.push_back({lo, lo + uniform(1, word + 8 - lo), chance(0.5) ? model::kRespSlvErr : model::kRespDecErr});
  } else if (inject == Inject::BufferReadError && e.end_offset > e.start_offset) {
    const std::uint64_t first = e.buf_addr + e.start_offset;
    const std::uint64_t lo = to_bus(first + uniform(0, e.end_offset - e.start_offset - 1));
    step.errors.push_back({lo, lo + uniform(1, 64), chance(0.5) ? model::kRespSlvErr : model::kRespDecErr});
  }
  plan_ = nullptr;
  step_ = nullptr;
  return plan;
}

StepPlan Generator::next_step(std::uint32_t first_index) {
  StepPlan step;
  children_left_ = std::min(config_.children_per_step, config_.layout.child_slots - 1);
  const std::uint32_t entries = 1u << config_.ring_log2;
  const auto n = static_cast<unsigned>(uniform(1, std::min<std::uint32_t>(config_.max_entries_per_step, entries - 1)));
  // A step with CP_WATCHDOG near the write latency has only quiet, valid entries and no GART:
  // the watchdog can expire only while an entry retires.
  quiet_ = config_.retire_watchdog_latency != 0 && chance(config_.retire_watchdog_rate);
  if (quiet_) {
    const std::uint64_t w = config_.retire_watchdog_latency;
    step.retire_watchdog = static_cast<std::uint32_t>(uniform(w > 8 ? w - 8 : 1, w + 16));
  }
  const bool invalid = !quiet_ && chance(config_.invalid_rate);
  gart_ = step.gart = !quiet_ && chance(config_.gart_step_rate);
  const auto last_kind = static_cast<std::uint64_t>(gart_ ? Inject::Count : Inject::GartWriteProtect) - 1;
  const auto bad_at = static_cast<unsigned>(uniform(0, n - 1));
  for (unsigned i = 0; i < n; ++i) {
    Inject inject = Inject::None;
    if (invalid && i == bad_at) {
      inject = static_cast<Inject>(uniform(1, last_kind));
      // GART steps aim at a refusal half the time (four kinds among twenty-three otherwise).
      if (gart_ && chance(0.5)) {
        inject = static_cast<Inject>(uniform(static_cast<std::uint64_t>(Inject::GartWriteProtect), last_kind));
      }
    }
    const std::uint64_t slot = view().buffers + view().buffer_slot_bytes * next_slot_;
    next_slot_ = (next_slot_ + 1) % config_.layout.buffer_slots;
    const std::uint64_t entry_addr = config_.layout.ring + 32ull * ((first_index + i) & (entries - 1));
    step.entries.push_back(make_entry(slot, inject, entry_addr, step));
  }
  step.disabled_doorbell = chance(0.03);
  gart_ = false;
  quiet_ = false;
  return step;
}

}  // namespace sgpu::diff
