#include "model/bus.hpp"

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
    f.error = (resp == kRespDecErr) ? FetchError::DecErr : FetchError::SlvErr;
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

}  // namespace sgpu::model
