#include "model/bus.hpp"

#include <algorithm>
#include <stdexcept>

namespace sgpu::model {

// The model's own port: a tb::HostMemory and error ranges, as tb::AxiMemoryModel answers.
class Bus::MemoryPort final : public Port {
 public:
  explicit MemoryPort(tb::HostMemory& memory) : memory_(memory) {}
  std::uint8_t probe(std::uint64_t lo, std::uint64_t hi, bool /*write*/) override {
    for (const auto& range : errors_) {
      if (lo < range.hi && range.lo < hi) return range.resp;
    }
    return kRespOkay;
  }
  void read(std::uint64_t addr, void* dst, std::size_t n) override { memory_.read(addr, dst, n); }
  void write(std::uint64_t addr, const void* src, std::size_t n) override { memory_.write(addr, src, n); }

  struct ErrorRange {
    std::uint64_t lo;
    std::uint64_t hi;
    std::uint8_t resp;
  };
  tb::HostMemory& memory_;
  std::vector<ErrorRange> errors_;
};

namespace {
void check_width(unsigned bus_bytes) {
  if (bus_bytes < 8 || bus_bytes > 64 || (bus_bytes & (bus_bytes - 1)) != 0) {
    throw std::invalid_argument("model::Bus: bus width must be a power of two of 8..64 bytes");
  }
}
}  // namespace

Bus::Bus(tb::HostMemory& memory, unsigned bus_bytes, const Gart* gart)
    : own_(std::make_unique<MemoryPort>(memory)), port_(own_.get()), bus_bytes_(bus_bytes), gart_(gart) {
  check_width(bus_bytes);
}

Bus::Bus(Port& port, unsigned bus_bytes, const Gart* gart) : port_(&port), bus_bytes_(bus_bytes), gart_(gart) {
  check_width(bus_bytes);
}

Bus::~Bus() = default;

void Bus::inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp) {
  if (!own_) throw std::logic_error("model::Bus: errors come from the port, not from injection");
  own_->errors_.push_back({lo, hi, resp});
}

void Bus::clear_errors() {
  if (own_) own_->errors_.clear();
}

tb::HostMemory& Bus::memory() {
  if (!own_) throw std::logic_error("model::Bus: the memory belongs to the port");
  return own_->memory_;
}

std::uint64_t Bus::read_physical64(std::uint64_t addr) const {
  std::uint8_t b[8];
  port_->read(addr, b, sizeof b);
  std::uint64_t v = 0;
  for (unsigned i = 0; i < 8; ++i) v |= std::uint64_t{b[i]} << (8 * i);
  return v;
}

Gart::Lookup Bus::translate(std::uint64_t gpu_addr, const Access& access) const {
  if (gart_ == nullptr) return {regs::GartFault::None, gpu_addr & ~(Gart::kPageBytes - 1)};
  return gart_->lookup(gpu_addr, access, *this);
}

std::uint64_t Bus::bus_addr(std::uint64_t gpu_addr, const Access& access) const {
  const Gart::Lookup l = translate(gpu_addr, access);
  if (!l.ok()) throw std::logic_error("model::Bus: a refused page was read or written");
  return l.bus_page | (gpu_addr & (Gart::kPageBytes - 1));
}

std::uint32_t Bus::read32(std::uint64_t gpu_addr, const Access& access) const {
  // A dword never crosses a page (callers read aligned dwords).
  std::uint8_t b[4];
  port_->read(bus_addr(gpu_addr, access), b, sizeof b);
  return std::uint32_t{b[0]} | std::uint32_t{b[1]} << 8 | std::uint32_t{b[2]} << 16 | std::uint32_t{b[3]} << 24;
}

std::uint32_t Bus::uncertain32(std::uint64_t gpu_addr, const Access& access) const {
  if (uncertain_.empty()) return 0;
  const std::uint64_t bus = bus_addr(gpu_addr, access);
  std::uint32_t bits = 0;
  for (unsigned i = 0; i < 4; ++i) {
    if (uncertain_.count(bus + i) != 0) bits |= 0xffu << (8 * i);
  }
  return bits;
}

// The fetch engine reads whole bus beats, so a beat errs when any of its bytes (requested or
// not) lies in an error range. Its realigner emits an output beat only once both raw beats it
// draws from arrived: for a request starting at lane s, output beat k needs raw beats k and
// k + 1 (s > 0) or only raw beat k (s = 0). Either way the bytes delivered before the first
// failed raw beat are the whole output beats that fit into the bytes before it.
Bus::Fetch Bus::fetch_physical(std::uint64_t addr, std::uint64_t len) const {
  Fetch f{len, FetchError::Ok};
  if (len == 0 || (own_ && own_->errors_.empty())) return f;
  const std::uint64_t b = bus_bytes_;
  const std::uint64_t first_beat = addr & ~(b - 1);
  for (std::uint64_t beat = first_beat; beat < addr + len; beat += b) {
    const std::uint8_t resp = error_for(beat, beat + b, false);
    if (resp == kRespOkay) continue;
    const std::uint64_t ok_bytes = beat > addr ? beat - addr : 0;
    f.delivered = ok_bytes / b * b;
    f.error = (resp == kRespDecErr) ? FetchError::BusDecErr : FetchError::BusSlvErr;
    return f;
  }
  return f;
}

// Translated: the engine cuts the request into pages and asks the GART for each; a refused page
// is never read and ends the request like a failed beat at its first requested byte (the bytes
// before it that fill whole output beats are delivered). Beats never cross a page, so each is
// checked at its translated bus address.
Bus::Fetch Bus::fetch(std::uint64_t addr, std::uint64_t len, const Access& access) const {
  if (gart_ == nullptr || !gart_->enabled()) return fetch_physical(addr, len);
  Fetch f{len, FetchError::Ok};
  if (len == 0) return f;
  const std::uint64_t b = bus_bytes_;
  const std::uint64_t end = addr + len;
  auto stop = [&](std::uint64_t at, FetchError e) {
    const std::uint64_t ok_bytes = at > addr ? at - addr : 0;
    f.delivered = ok_bytes / b * b;
    f.error = e;
  };
  for (std::uint64_t page = addr & ~(Gart::kPageBytes - 1); page < end; page += Gart::kPageBytes) {
    const std::uint64_t lo = std::max(addr, page);
    const std::uint64_t hi = std::min(end, page + Gart::kPageBytes);
    const Gart::Lookup l = translate(page, access);
    if (f.error != FetchError::Ok) {
      // Past the stop point: the RTL's look-ahead may still have asked for this page.
      if (!l.ok()) f.refused_later = true;
      continue;
    }
    if (!l.ok()) {
      stop(lo, FetchError::XlateFault);
      f.refused_page = page;
      f.refusal = l.fault;
      return f;  // nothing after a refusal is asked for
    }
    if (own_ && own_->errors_.empty()) continue;
    for (std::uint64_t beat = lo & ~(b - 1); beat < hi; beat += b) {
      const std::uint64_t bus = l.bus_page | (beat & (Gart::kPageBytes - 1));
      const std::uint8_t resp = error_for(bus, bus + b, false);
      if (resp == kRespOkay) continue;
      stop(beat, resp == kRespDecErr ? FetchError::BusDecErr : FetchError::BusSlvErr);
      break;
    }
  }
  return f;
}

// The write master issues one full-width beat at addr & ~7 (AWSIZE = bus width), so the beat
// covers [addr & ~7, next bus boundary); the memory model checks that span for errors. The page
// is translated first (the write path holds a write until its page is translated): a refused
// write is never issued.
Bus::Write Bus::write64(std::uint64_t addr, std::uint64_t data, std::uint8_t strb, bool uncertain,
                        const Access& access) {
  const std::uint64_t gpu_word = addr & ~std::uint64_t{7};
  const Gart::Lookup l = translate(gpu_word, access);
  if (!l.ok()) return {kRespOkay, l.fault};
  const std::uint64_t word = l.bus_page | (gpu_word & (Gart::kPageBytes - 1));
  const std::uint64_t beat_end = (word & ~std::uint64_t{bus_bytes_ - 1}) + bus_bytes_;
  const std::uint8_t resp = error_for(word, beat_end, true);
  if (resp != kRespOkay) return {resp, regs::GartFault::None};
  // Byte lanes as the strobes say: one write per run of enabled lanes.
  std::uint8_t bytes[8];
  for (unsigned i = 0; i < 8; ++i) bytes[i] = static_cast<std::uint8_t>(data >> (8 * i));
  for (unsigned i = 0; i < 8;) {
    if (!((strb >> i) & 1u)) {
      ++i;
      continue;
    }
    unsigned j = i;
    while (j < 8 && ((strb >> j) & 1u)) ++j;
    port_->write(word + i, bytes + i, j - i);
    for (unsigned k = i; k < j; ++k) {
      if (uncertain) {
        uncertain_.insert(word + k);
      } else {
        uncertain_.erase(word + k);
      }
    }
    i = j;
  }
  return {resp, regs::GartFault::None};
}

void Bus::write_byte(std::uint64_t addr, std::uint8_t value, bool uncertain) {
  port_->write(addr, &value, 1);
  if (uncertain) {
    uncertain_.insert(addr);
  } else {
    uncertain_.erase(addr);
  }
}

// One request of the copy engine: `height` rows of `width` bytes, row r from src + r * src_pitch
// to dst + r * dst_pitch (linear COPY/FILL: one row). The source rows are read as the fetch
// engine reads them (Bus::fetch; the first failing row in order is reported, at its first byte
// not delivered). Each destination row is written in whole bus beats, in bursts planned from
// its address rounded down to the bus width: at most max_burst_beats beats, never across 4 KiB
// (so a burst lies in one page). A beat whose span touches an error range fails its burst (the
// memory writes the others); the first failing burst in issue order is reported (responses
// come back in order). A burst whose page the GART refuses is never issued, nor is any after it;
// the bursts before it may or may not have been (the engine stops issuing once it sees the
// refusal). After an error the engine drains, so which later bytes got their new value depends
// on timing: the model writes every byte that may have been written and marks uncertain every
// byte not certainly written. A copied byte is uncertain when its source byte is.
Bus::CopyOutcome Bus::copy(bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width,
                           std::uint32_t height, std::uint32_t src_pitch, std::uint32_t dst_pitch,
                           std::uint32_t pattern, unsigned max_burst_beats, const Access& read,
                           const Access& write) {
  CopyOutcome out;
  if (width == 0 || height == 0) return out;
  const std::uint64_t b = bus_bytes_;
  std::uint32_t read_row = height;  // first row whose read failed
  std::uint64_t delivered = 0;
  bool read_refused_later = false;  // a later source page the look-ahead may have asked for
  if (!fill) {
    for (std::uint32_t r = 0; r < height; ++r) {
      const std::uint64_t s = src + std::uint64_t{r} * src_pitch;
      const Fetch f = fetch(s, width, read);
      if (out.error == CopyOutcome::Error::Read) {
        if (f.error == FetchError::XlateFault || f.refused_later) read_refused_later = true;
        continue;
      }
      if (f.error == FetchError::Ok) continue;
      out.error = CopyOutcome::Error::Read;
      out.addr = s + f.delivered;
      out.read_error = f.error;
      if (f.error == FetchError::XlateFault) {
        out.translation = true;
        out.refused_page = f.refused_page;
        out.refusal = f.refusal;
        out.refused_access = read;
      }
      if (f.refused_later) read_refused_later = true;
      read_row = r;
      delivered = f.delivered;
    }
  }
  // A bus error stops the source with a refusal of a later page possibly recorded by the GART.
  if (out.error == CopyOutcome::Error::Read && !out.translation && read_refused_later) out.ambiguous = true;

  // The burst plan of every row: per beat, its burst's index, its bus address (or refusal) and
  // whether it fails.
  const std::uint64_t page = Gart::kPageBytes;
  const std::uint64_t burst_max = std::min<std::uint64_t>(max_burst_beats, page / b);
  std::vector<std::vector<std::uint64_t>> beat_burst(height);
  std::vector<std::vector<bool>> beat_bad(height);
  std::vector<std::vector<std::uint64_t>> beat_bus(height);
  const std::uint64_t kNone = ~std::uint64_t{0};
  std::uint64_t bursts = 0, failed_burst = kNone, refused_burst = kNone;
  std::uint64_t failed_addr = 0, refused_addr = 0, refused_page = 0;
  regs::GartFault refusal = regs::GartFault::None;
  for (std::uint32_t r = 0; r < height; ++r) {
    const std::uint64_t d = dst + std::uint64_t{r} * dst_pitch;
    const std::uint64_t end = d + width;
    for (std::uint64_t a = d & ~(b - 1); a < end; ++bursts) {
      const std::uint64_t room = (page - (a & (page - 1))) / b;
      const std::uint64_t left = (end - a + b - 1) / b;
      const std::uint64_t n = std::min({burst_max, room, left});
      const Gart::Lookup l = translate(a, write);
      if (!l.ok() && refused_burst == kNone) {
        refused_burst = bursts;
        refused_addr = std::max(d, a & ~(page - 1));
        refused_page = a & ~(page - 1);
        refusal = l.fault;
      }
      for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t bus = l.ok() ? l.bus_page | ((a + k * b) & (page - 1)) : 0;
        const bool bad = l.ok() && error_for(bus, bus + b, true) != kRespOkay;
        beat_burst[r].push_back(bursts);
        beat_bad[r].push_back(bad);
        beat_bus[r].push_back(bus);
        if (bad && failed_burst == kNone) {
          failed_burst = bursts;
          failed_addr = a;
        }
      }
      a += n * b;
    }
  }
  // Bursts from a refused one on are never issued: their bus errors cannot happen.
  if (refused_burst != kNone && failed_burst != kNone && failed_burst > refused_burst) failed_burst = kNone;
  const bool dest_fails = failed_burst != kNone || refused_burst != kNone;
  if (out.error == CopyOutcome::Error::Read && dest_fails) out.ambiguous = true;
  if (out.error != CopyOutcome::Error::Read) {
    if (failed_burst != kNone && refused_burst != kNone) {
      // An issued burst's error response races with the refusal of a later page.
      out.ambiguous = true;
    }
    if (failed_burst != kNone) {
      out.error = CopyOutcome::Error::Write;
      out.addr = failed_addr;
    } else if (refused_burst != kNone) {
      out.error = CopyOutcome::Error::Write;
      out.addr = refused_addr;
      out.translation = true;
      out.refused_page = refused_page;
      out.refusal = refusal;
      out.refused_access = write;
    }
  }

  // The source bytes, all read before anything is written (source and destination never
  // overlap: the command processor refuses that). A byte of a refused source page has no value
  // (it is never copied for certain).
  std::vector<std::uint8_t> data;
  std::vector<bool> src_uncertain;
  if (!fill) {
    data.resize(std::uint64_t{width} * height);
    src_uncertain.resize(data.size());
    std::uint64_t cached_page = kNone;
    Gart::Lookup cached{};
    for (std::uint32_t r = 0; r < height; ++r) {
      const std::uint64_t s = src + std::uint64_t{r} * src_pitch;
      for (std::uint32_t i = 0; i < width; ++i) {
        const std::uint64_t a = s + i;
        if ((a & ~(page - 1)) != cached_page) {
          cached_page = a & ~(page - 1);
          cached = translate(a, read);
        }
        const std::uint64_t at = std::uint64_t{r} * width + i;
        if (!cached.ok()) {
          src_uncertain[at] = true;
          continue;
        }
        const std::uint64_t bus = cached.bus_page | (a & (page - 1));
        port_->read(bus, &data[at], 1);
        src_uncertain[at] = uncertain_.count(bus) != 0;
      }
    }
  }
  const std::uint64_t in_beats = (std::uint64_t{width} + b - 1) / b;
  for (std::uint32_t r = 0; r < height; ++r) {
    const std::uint64_t d = dst + std::uint64_t{r} * dst_pitch;
    const std::uint64_t a0 = d & ~(b - 1);
    for (std::uint32_t i = 0; i < width; ++i) {
      const std::uint64_t a = d + i;
      const std::uint64_t k = (a - a0) / b;  // output beat of the row
      if (beat_bad[r][k]) continue;
      if (refused_burst != kNone && beat_burst[r][k] >= refused_burst) continue;  // never issued
      // Certainly written: on a write error, the bursts before the failing one (their
      // responses came first, so every beat carried data); on a read error, the output beats
      // built from input the writer took (the fetch engine reports an error only after the
      // writer took every delivered byte, and a taken beat is always written): beats below
      // the row's input beats in earlier rows, below the delivered bytes in the failing row.
      // Before a refused page nothing is certain: the engine may stop before issuing them.
      bool certain = refused_burst == kNone;
      if (failed_burst != kNone) certain = certain && beat_burst[r][k] < failed_burst;
      if (out.error == CopyOutcome::Error::Read) {
        certain = r < read_row ? k < in_beats : r == read_row && a < a0 + delivered;
      }
      const std::uint8_t v = fill ? static_cast<std::uint8_t>(pattern >> (8 * (i % 4)))
                                  : data[std::uint64_t{r} * width + i];
      write_byte(beat_bus[r][k] | (a & (b - 1)), v,
                 !certain || (!fill && src_uncertain[std::uint64_t{r} * width + i]));
    }
  }
  return out;
}

}  // namespace sgpu::model
