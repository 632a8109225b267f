// Unit tests of the copy/fill/blit engine (sgpu_copy): random lengths 1 B .. 1 MiB at every
// alignment, fills, pitched blits and fills, back-pressure on every channel, read and write
// bus errors, translation faults and abort. Every run compares the destination window byte for
// byte with a reference image (including margins that must stay untouched) and runs the AXI
// protocol checker on both the read and the write channels. SGPU_SEED reproduces a run.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>
#include <vector>

#include "common/test_seed.hpp"
#include "copy_harness.hpp"

using namespace sgpu::tb;

namespace {

constexpr std::uint64_t kSrc = 0x1'1000'0000;
constexpr std::uint64_t kDst = 0x1'2000'0000;
constexpr std::uint64_t kRegion = 0x30'0000;  // 3 MiB each
constexpr std::uint64_t kMargin = 4096;

struct Env {
  std::mt19937_64 rng;
  CopyHarness h;
  unsigned bus_bytes;

  Env(std::uint64_t seed, AxiMemoryModel::Config cfg, bool identity = true)
      : rng(seed), h((cfg.seed = seed, cfg), identity), bus_bytes(h.bus().config().data_bytes) {
    std::vector<std::uint8_t> bytes(kRegion);
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    h.memory().write(kSrc, bytes.data(), bytes.size());
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng());
    h.memory().write(kDst, bytes.data(), bytes.size());
  }
  std::uint64_t uniform(std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  }
};

/// The destination window [lo, hi) of a request, before and as it must be after.
struct Expect {
  std::uint64_t lo = 0;
  std::vector<std::uint8_t> before, after;
  std::vector<bool> in_rows;
};

Expect expect(HostMemory& mem, const CopyRequest& r) {
  Expect e;
  const std::uint64_t span = r.height == 0 ? 0 : std::uint64_t{r.height - 1} * r.dst_pitch + r.width;
  e.lo = r.dst - kMargin;
  const std::uint64_t size = span + 2 * kMargin;
  e.before.resize(size);
  mem.read(e.lo, e.before.data(), size);
  e.after = e.before;
  e.in_rows.assign(size, false);
  for (std::uint32_t row = 0; row < r.height; ++row) {
    for (std::uint32_t i = 0; i < r.width; ++i) {
      const std::uint64_t d = r.dst + std::uint64_t{row} * r.dst_pitch + i - e.lo;
      e.after[d] = r.fill ? static_cast<std::uint8_t>(r.pattern >> (8 * (i % 4)))
                          : mem.read8(r.src + std::uint64_t{row} * r.src_pitch + i);
      e.in_rows[d] = true;
    }
  }
  return e;
}

/// Exact: every byte as expected. Partial (after an error): bytes of the rows old or new, the
/// rest untouched. Returns the number of wrong bytes (and reports the first).
std::size_t check(HostMemory& mem, const Expect& e, bool partial) {
  std::vector<std::uint8_t> now(e.before.size());
  mem.read(e.lo, now.data(), now.size());
  std::size_t bad = 0;
  for (std::size_t i = 0; i < now.size(); ++i) {
    const bool ok = partial ? (now[i] == e.before[i] || (e.in_rows[i] && now[i] == e.after[i])) : now[i] == e.after[i];
    if (!ok && bad++ == 0) {
      UNSCOPED_INFO("first wrong byte at 0x" << std::hex << (e.lo + i) << ": got 0x" << unsigned{now[i]}
                    << " expected 0x" << unsigned{e.after[i]} << " (before 0x" << unsigned{e.before[i]} << ")");
    }
  }
  return bad;
}

/// Restores the destination window so the next request starts from known bytes.
void restore(HostMemory& mem, const Expect& e) { mem.write(e.lo, e.before.data(), e.before.size()); }

std::uint32_t random_length(Env& env, std::uint32_t max) {
  // Log-uniform: as many short copies as long ones.
  const double l = std::uniform_real_distribution<double>(0.0, std::log2(double(max)))(env.rng);
  return std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::exp2(l)));
}

AxiMemoryModel::Config bus(unsigned rd_latency, unsigned wr_latency, double ready = 1.0) {
  AxiMemoryModel::Config c;
  c.read_latency = rd_latency;
  c.write_latency = wr_latency;
  c.ar_ready_prob = c.r_valid_prob = c.aw_ready_prob = c.w_ready_prob = ready;
  return c;
}

}  // namespace

TEST_CASE("linear copies of 1 B .. 1 MiB at every alignment are byte-exact", "[copy]") {
  const std::uint64_t seed = sgpu::tb::test_seed(11);
  CAPTURE(seed);
  Env env(seed, bus(40, 20));
  for (int i = 0; i < 60; ++i) {
    CopyRequest r;
    r.width = i < 4 ? (1u << 20) - static_cast<std::uint32_t>(env.uniform(0, 7)) : random_length(env, 1u << 18);
    r.src = kSrc + env.uniform(0, 4 * 64 - 1) + (i % 3) * 4096 - (i % 3 == 2 ? 1 : 0);
    r.dst = kDst + kMargin + env.uniform(0, 4 * 64 - 1);
    CAPTURE(i, r.width, r.src, r.dst);
    const Expect e = expect(env.h.memory(), r);
    const CopyStatus s = env.h.run(r);
    REQUIRE(s.err == CopyErr::Ok);
    REQUIRE(check(env.h.memory(), e, false) == 0);
    restore(env.h.memory(), e);
  }
}

TEST_CASE("fills write the pattern from each row's first byte", "[copy][fill]") {
  const std::uint64_t seed = sgpu::tb::test_seed(12);
  CAPTURE(seed);
  Env env(seed, bus(16, 16));
  for (int i = 0; i < 40; ++i) {
    CopyRequest r;
    r.fill = true;
    r.width = random_length(env, 1u << 17);
    r.dst = kDst + kMargin + env.uniform(0, 255);
    r.pattern = static_cast<std::uint32_t>(env.rng());
    CAPTURE(i, r.width, r.dst);
    const Expect e = expect(env.h.memory(), r);
    REQUIRE(env.h.run(r).err == CopyErr::Ok);
    REQUIRE(check(env.h.memory(), e, false) == 0);
    restore(env.h.memory(), e);
  }
}

TEST_CASE("pitched blits and rectangle fills touch only their rows", "[copy][blit]") {
  const std::uint64_t seed = sgpu::tb::test_seed(13);
  CAPTURE(seed);
  Env env(seed, bus(30, 12));
  for (int i = 0; i < 60; ++i) {
    CopyRequest r;
    r.fill = env.uniform(0, 3) == 0;
    r.width = static_cast<std::uint32_t>(env.uniform(1, i < 10 ? 3000 : 600));
    r.height = static_cast<std::uint32_t>(env.uniform(1, 24));
    r.src_pitch = r.width + static_cast<std::uint32_t>(env.uniform(0, 300));
    r.dst_pitch = r.width + static_cast<std::uint32_t>(env.uniform(0, 300));
    r.src = kSrc + env.uniform(0, 8191);
    r.dst = kDst + kMargin + env.uniform(0, 8191);
    r.pattern = static_cast<std::uint32_t>(env.rng());
    CAPTURE(i, r.fill, r.width, r.height, r.src_pitch, r.dst_pitch, r.src, r.dst);
    const Expect e = expect(env.h.memory(), r);
    REQUIRE(env.h.run(r).err == CopyErr::Ok);
    REQUIRE(check(env.h.memory(), e, false) == 0);
    restore(env.h.memory(), e);
  }
}

TEST_CASE("back-pressure on every channel changes timing, not bytes", "[copy]") {
  const std::uint64_t seed = sgpu::tb::test_seed(14);
  CAPTURE(seed);
  AxiMemoryModel::Config c = bus(25, 40, 0.55);
  c.read_latency_jitter = 30;
  c.max_reads_in_flight = 3;
  Env env(seed, c);
  env.h.status_ready_prob = 0.3;
  for (int i = 0; i < 40; ++i) {
    CopyRequest r;
    r.fill = env.uniform(0, 4) == 0;
    r.width = random_length(env, 1u << 15);
    r.height = static_cast<std::uint32_t>(env.uniform(0, 3) == 0 ? env.uniform(1, 6) : 1);
    r.src_pitch = r.width + static_cast<std::uint32_t>(env.uniform(0, 64));
    r.dst_pitch = r.width + static_cast<std::uint32_t>(env.uniform(0, 64));
    r.src = kSrc + env.uniform(0, 4095);
    r.dst = kDst + kMargin + env.uniform(0, 4095);
    r.pattern = static_cast<std::uint32_t>(env.rng());
    CAPTURE(i, r.fill, r.width, r.height, r.src, r.dst);
    const Expect e = expect(env.h.memory(), r);
    REQUIRE(env.h.run(r).err == CopyErr::Ok);
    REQUIRE(check(env.h.memory(), e, false) == 0);
    restore(env.h.memory(), e);
  }
}

TEST_CASE("an empty request completes without touching memory", "[copy]") {
  Env env(1, bus(16, 16));
  CopyRequest r;
  r.src = kSrc;
  r.dst = kDst + kMargin;
  r.width = 0;
  r.height = 5;
  const Expect e = expect(env.h.memory(), r);
  CHECK(env.h.run(r).err == CopyErr::Ok);
  r.width = 100;
  r.height = 0;
  CHECK(env.h.run(r).err == CopyErr::Ok);
  CHECK(check(env.h.memory(), e, false) == 0);
  CHECK(env.h.bus().stats().write_beats == 0);
}

TEST_CASE("a source bus error stops the copy and names the first byte not copied", "[copy][error]") {
  const std::uint64_t seed = sgpu::tb::test_seed(15);
  CAPTURE(seed);
  Env env(seed, bus(30, 20, 0.8));
  const std::uint64_t b = env.bus_bytes;
  for (int i = 0; i < 30; ++i) {
    CopyRequest r;
    r.width = static_cast<std::uint32_t>(env.uniform(2, 40000));
    r.src = kSrc + env.uniform(0, 255);
    r.dst = kDst + kMargin + env.uniform(0, 255);
    const std::uint64_t err_lo = r.src + env.uniform(0, r.width - 1);
    const std::uint8_t resp = env.uniform(0, 1) ? kAxiRespSlvErr : kAxiRespDecErr;
    env.h.bus().inject_error(err_lo, err_lo + env.uniform(1, 100), resp);
    CAPTURE(i, r.width, r.src, r.dst, err_lo);
    const Expect e = expect(env.h.memory(), r);
    const CopyStatus s = env.h.run(r);
    env.h.bus().clear_errors();
    REQUIRE(s.err == CopyErr::ReadError);
    // The fetch engine delivers the whole output beats before the failing beat.
    const std::uint64_t beat = err_lo & ~(b - 1);
    const std::uint64_t ok = beat > r.src ? beat - r.src : 0;
    CHECK(s.addr == r.src + ok / b * b);
    REQUIRE(check(env.h.memory(), e, true) == 0);
    restore(env.h.memory(), e);
    // The engine is usable again.
    CopyRequest good{false, kSrc, kDst + kMargin, 1000, 1, 0, 0, 0};
    const Expect g = expect(env.h.memory(), good);
    REQUIRE(env.h.run(good).err == CopyErr::Ok);
    REQUIRE(check(env.h.memory(), g, false) == 0);
    restore(env.h.memory(), g);
  }
}

TEST_CASE("a destination bus error reports the failing burst and never writes outside", "[copy][error]") {
  const std::uint64_t seed = sgpu::tb::test_seed(16);
  CAPTURE(seed);
  Env env(seed, bus(20, 30));
  const std::uint64_t b = env.bus_bytes;
  for (int i = 0; i < 30; ++i) {
    CopyRequest r;
    r.fill = env.uniform(0, 2) == 0;
    r.width = static_cast<std::uint32_t>(env.uniform(2, 40000));
    r.src = kSrc + env.uniform(0, 255);
    r.dst = kDst + kMargin + env.uniform(0, 255);
    const std::uint64_t err_lo = r.dst + env.uniform(0, r.width - 1);
    const std::uint64_t err_hi = err_lo + env.uniform(1, 100);
    env.h.bus().inject_error(err_lo, err_hi, kAxiRespSlvErr);
    CAPTURE(i, r.fill, r.width, r.src, r.dst, err_lo);
    const Expect e = expect(env.h.memory(), r);
    const CopyStatus s = env.h.run(r);
    env.h.bus().clear_errors();
    REQUIRE(s.err == CopyErr::WriteError);
    // The first burst (in issue order) that overlaps the error range.
    std::uint64_t cur = r.dst & ~(b - 1), left = ((r.dst & (b - 1)) + r.width + b - 1) / b, first_bad = 0;
    while (left > 0) {
      const std::uint64_t beats = std::min<std::uint64_t>({left, 256, (4096 - (cur & 4095)) / b});
      if (cur < err_hi && err_lo < cur + beats * b) {
        first_bad = cur;
        break;
      }
      cur += beats * b;
      left -= beats;
    }
    CHECK(s.addr == first_bad);
    REQUIRE(check(env.h.memory(), e, true) == 0);
    restore(env.h.memory(), e);
  }
}

TEST_CASE("a refused source page is a translation fault at the page's first byte", "[copy][error]") {
  const std::uint64_t seed = sgpu::tb::test_seed(17);
  CAPTURE(seed);
  Env env(seed, bus(20, 20), false);
  const std::uint64_t b = env.bus_bytes;
  for (int i = 0; i < 20; ++i) {
    CopyRequest r;
    r.width = static_cast<std::uint32_t>(env.uniform(4097, 30000));
    r.src = kSrc + env.uniform(0, 4095);
    r.dst = kDst + kMargin + env.uniform(0, 255);
    const std::uint64_t page = (r.src >> 12) + env.uniform(1, (r.src + r.width - 1) / 4096 - r.src / 4096);
    env.h.faulting_pages() = {page};
    CAPTURE(i, r.width, r.src, page);
    const Expect e = expect(env.h.memory(), r);
    const CopyStatus s = env.h.run(r);
    env.h.faulting_pages().clear();
    REQUIRE(s.err == CopyErr::XlateFault);
    CHECK(s.addr == r.src + ((page << 12) - r.src) / b * b);
    REQUIRE(check(env.h.memory(), e, true) == 0);
    restore(env.h.memory(), e);
  }
}

TEST_CASE("abort drains in-flight reads and writes, then the engine runs again", "[copy][abort]") {
  const std::uint64_t seed = sgpu::tb::test_seed(18);
  CAPTURE(seed);
  Env env(seed, bus(60, 40, 0.7));
  for (int i = 0; i < 25; ++i) {
    CopyRequest r;
    r.fill = env.uniform(0, 3) == 0;
    r.width = static_cast<std::uint32_t>(env.uniform(1000, 200000));
    r.height = static_cast<std::uint32_t>(env.uniform(1, 2));
    r.src_pitch = r.dst_pitch = r.width + 64;
    r.src = kSrc + env.uniform(0, 255);
    r.dst = kDst + kMargin + env.uniform(0, 255);
    r.pattern = 0xa5a5a5a5u;
    const std::uint64_t when = env.uniform(1, 3000);
    CAPTURE(i, r.fill, r.width, r.height, when);
    const Expect e = expect(env.h.memory(), r);
    const CopyStatus s = env.h.run(r, when);
    REQUIRE((s.err == CopyErr::Aborted || s.err == CopyErr::Ok));
    REQUIRE(check(env.h.memory(), e, s.err == CopyErr::Aborted) == 0);
    CHECK(env.h.bus().idle());
    CHECK(env.h.checker().reads_outstanding() == 0);
    restore(env.h.memory(), e);
    CopyRequest good{false, kSrc + 3, kDst + kMargin + 5, 5000, 1, 0, 0, 0};
    const Expect g = expect(env.h.memory(), good);
    REQUIRE(env.h.run(good).err == CopyErr::Ok);
    REQUIRE(check(env.h.memory(), g, false) == 0);
    restore(env.h.memory(), g);
  }
}
