#include <catch2/catch.hpp>

#include <map>

#include "sgpu/regs.hpp"

using namespace sgpu;

TEST_CASE("field helpers follow the generated macros", "[regs]") {
  constexpr auto major = SGPU_FIELD(ID_VERSION, MAJOR);
  STATIC_REQUIRE(major.mask == SGPU_REGS__ID_VERSION__MAJOR_bm);
  STATIC_REQUIRE(major.get(major.put(0x1234)) == 0x1234);
  STATIC_REQUIRE(major.set(0xffffffff, 0) == static_cast<std::uint32_t>(~SGPU_REGS__ID_VERSION__MAJOR_bm));
  STATIC_REQUIRE(SGPU_REG(ID_MAGIC) == 0);
  CHECK(major.fits(0xffff));
  CHECK_FALSE(major.fits(0x10000));
}

TEST_CASE("the field table lists every field of the register map", "[regs]") {
  const auto& fields = regs::all_fields();
  REQUIRE(fields.size() > 20);
  CHECK(regs::register_name(SGPU_REG(RING_TAIL)) == "RING_TAIL");
  CHECK(regs::register_name(0xffc).empty());

  bool magic_seen = false;
  std::map<std::uint32_t, std::uint32_t> used;  // offset -> bits covered so far
  std::uint32_t last_offset = 0;
  for (const auto& f : fields) {
    INFO(f.reg << "." << f.field);
    CHECK(f.offset % 4 == 0);
    CHECK(f.offset >= last_offset);  // address order
    last_offset = f.offset;
    CHECK(f.bits.width >= 1);
    CHECK(f.bits.mask == static_cast<std::uint32_t>(((std::uint64_t{1} << f.bits.width) - 1) << f.bits.lsb));
    CHECK((used[f.offset] & f.bits.mask) == 0);  // no two fields overlap
    used[f.offset] |= f.bits.mask;
    if (f.reset) CHECK(f.bits.fits(*f.reset));
    if (f.reg == "ID_MAGIC") {
      magic_seen = true;
      REQUIRE(f.reset);
      CHECK(*f.reset == SGPU_REGS__ID_MAGIC__VALUE_reset);
    }
  }
  CHECK(magic_seen);
}
