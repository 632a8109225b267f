#include "model/bus.hpp"

#include <algorithm>
#include <stdexcept>

namespace sgpu::model {

Bus::Bus(tb::HostMemory& memory, unsigned bus_bytes) : memory_(memory), bus_bytes_(bus_bytes) {
  if (bus_bytes < 8 || bus_bytes > 64 || (bus_bytes & (bus_bytes - 1)) != 0) {
    throw std::invalid_argument("model::Bus: bus width must be a power of two of 8..64 bytes");
  }
}

void Bus::inject_error(std::uint64_t lo, std::uint64_t hi, std::uint8_t resp) {
  errors_.push_back(ErrorRange{lo, hi, resp});
}

std::uint8_t Bus::error_for(std::uint64_t lo, std::uint64_t hi) const {
  for (const auto& range : errors_) {
    if (lo < range.hi && range.lo < hi) return range.resp;
  }
  return kRespOkay;
}

// The fetch engine reads whole bus beats, so a beat errs when any of its bytes (requested or
// not) lies in an error range. Its realigner emits an output beat only once both raw beats it
// draws from arrived: for a request starting at lane s, output beat k needs raw beats k and
// k + 1 (s > 0) or only raw beat k (s = 0). Either way the bytes delivered before the first
// failed raw beat are the whole output beats that fit into the bytes before it.
Bus::Fetch Bus::fetch(std::uint64_t addr, std::uint64_t len) const {
  Fetch f{len, FetchError::Ok};
  if (len == 0 || errors_.empty()) return f;
  const std::uint64_t b = bus_bytes_;
  const std::uint64_t first_beat = addr & ~(b - 1);
  for (std::uint64_t beat = first_beat; beat < addr + len; beat += b) {
    const std::uint8_t resp = error_for(beat, beat + b);
    if (resp == kRespOkay) continue;
    const std::uint64_t ok_bytes = beat > addr ? beat - addr : 0;
    f.delivered = ok_bytes / b * b;
    f.error = (resp == kRespDecErr) ? FetchError::BusDecErr : FetchError::BusSlvErr;
    return f;
  }
  return f;
}

// The write master issues one full-width beat at addr & ~7 (AWSIZE = bus width), so the beat
// covers [addr & ~7, next bus boundary); the memory model checks that span for errors.
std::uint8_t Bus::write64(std::uint64_t addr, std::uint64_t data, std::uint8_t strb, bool uncertain) {
  const std::uint64_t word = addr & ~std::uint64_t{7};
  const std::uint64_t beat_end = (word & ~std::uint64_t{bus_bytes_ - 1}) + bus_bytes_;
  const std::uint8_t resp = error_for(word, beat_end);
  if (resp != kRespOkay) return resp;
  for (unsigned i = 0; i < 8; ++i) {
    if (!((strb >> i) & 1u)) continue;
    memory_.write8(word + i, static_cast<std::uint8_t>(data >> (8 * i)));
    if (uncertain) {
      uncertain_.insert(word + i);
    } else {
      uncertain_.erase(word + i);
    }
  }
  return resp;
}

void Bus::write_byte(std::uint64_t addr, std::uint8_t value, bool uncertain) {
  memory_.write8(addr, value);
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
// its address rounded down to the bus width: at most max_burst_beats beats, never across 4 KiB.
// A beat whose span touches an error range fails its burst (the memory writes the others); the
// first failing burst in issue order is reported (responses come back in order). After an
// error the engine drains, so which later bytes got their new value depends on timing: the
// model writes every byte outside a failing beat and marks uncertain every byte not certainly
// written. A copied byte is uncertain when its source byte is.
Bus::CopyOutcome Bus::copy(bool fill, std::uint64_t src, std::uint64_t dst, std::uint32_t width,
                           std::uint32_t height, std::uint32_t src_pitch, std::uint32_t dst_pitch,
                           std::uint32_t pattern, unsigned max_burst_beats) {
  CopyOutcome out;
  if (width == 0 || height == 0) return out;
  const std::uint64_t b = bus_bytes_;
  std::uint32_t read_row = height;  // first row whose read failed
  std::uint64_t delivered = 0;
  if (!fill) {
    for (std::uint32_t r = 0; r < height; ++r) {
      const std::uint64_t s = src + std::uint64_t{r} * src_pitch;
      const Fetch f = fetch(s, width);
      if (f.error == FetchError::Ok) continue;
      out.error = CopyOutcome::Error::Read;
      out.addr = s + f.delivered;
      out.read_error = f.error;
      read_row = r;
      delivered = f.delivered;
      break;
    }
  }
  // The burst plan of every row: per beat, its burst's index and whether it fails.
  const std::uint64_t page = 4096;
  const std::uint64_t burst_max = std::min<std::uint64_t>(max_burst_beats, page / b);
  std::vector<std::vector<std::uint64_t>> beat_burst(height);
  std::vector<std::vector<bool>> beat_bad(height);
  std::uint64_t bursts = 0, failed_burst = ~std::uint64_t{0};
  for (std::uint32_t r = 0; r < height; ++r) {
    const std::uint64_t d = dst + std::uint64_t{r} * dst_pitch;
    const std::uint64_t end = d + width;
    for (std::uint64_t a = d & ~(b - 1); a < end; ++bursts) {
      const std::uint64_t room = (page - (a & (page - 1))) / b;
      const std::uint64_t left = (end - a + b - 1) / b;
      const std::uint64_t n = std::min({burst_max, room, left});
      for (std::uint64_t k = 0; k < n; ++k) {
        const bool bad = error_for(a + k * b, a + (k + 1) * b) != kRespOkay;
        beat_burst[r].push_back(bursts);
        beat_bad[r].push_back(bad);
        if (bad && failed_burst == ~std::uint64_t{0}) {
          failed_burst = bursts;
          if (out.error != CopyOutcome::Error::Read) {
            out.error = CopyOutcome::Error::Write;
            out.addr = a;
          }
        }
      }
      a += n * b;
    }
  }
  if (out.error == CopyOutcome::Error::Read && failed_burst != ~std::uint64_t{0}) out.ambiguous = true;

  // The source bytes, all read before anything is written (source and destination never
  // overlap: the command processor refuses that).
  std::vector<std::uint8_t> data;
  std::vector<bool> src_uncertain;
  if (!fill) {
    data.resize(std::uint64_t{width} * height);
    src_uncertain.resize(data.size());
    for (std::uint32_t r = 0; r < height; ++r) {
      const std::uint64_t s = src + std::uint64_t{r} * src_pitch;
      for (std::uint32_t i = 0; i < width; ++i) {
        data[std::uint64_t{r} * width + i] = memory_.read8(s + i);
        src_uncertain[std::uint64_t{r} * width + i] = uncertain_.count(s + i) != 0;
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
      // Certainly written: on a write error, the bursts before the failing one (their
      // responses came first, so every beat carried data); on a read error, the output beats
      // built from input the writer took (the fetch engine reports an error only after the
      // writer took every delivered byte, and a taken beat is always written): beats below
      // the row's input beats in earlier rows, below the delivered bytes in the failing row.
      bool certain = true;
      if (out.error == CopyOutcome::Error::Write) certain = beat_burst[r][k] < failed_burst;
      if (out.error == CopyOutcome::Error::Read) {
        certain = r < read_row ? k < in_beats : r == read_row && a < a0 + delivered;
      }
      const std::uint8_t v = fill ? static_cast<std::uint8_t>(pattern >> (8 * (i % 4)))
                                  : data[std::uint64_t{r} * width + i];
      write_byte(a, v, !certain || (!fill && src_uncertain[std::uint64_t{r} * width + i]));
    }
  }
  return out;
}

}  // namespace sgpu::model
