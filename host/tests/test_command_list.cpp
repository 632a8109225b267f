// umd::CommandList: the packets it records, the allocation list (null element 0, one entry per
// allocation, WriteOperation merged), patch entries on the address dwords, and a round trip
// through Render and Patch.
#include <catch2/catch.hpp>

#include <vector>

#include "render_rig.hpp"

using namespace sgpu;
using namespace sgpu::test;
using sgpu::AllocationHandle;

namespace {
const AllocationHandle kA{1}, kB{2}, kC{3};
}

TEST_CASE("command list: the allocation list has a null element 0, each allocation once, writes merged",
          "[command_list]") {
  umd::CommandList cl;
  REQUIRE(cl.allocations().size() == 1);
  CHECK_FALSE(cl.allocations()[0].allocation);
  REQUIRE(cl.wait(kA, 0, abi::WaitMemFunc::Eq, 1));  // kA read
  REQUIRE(cl.copy(kA, 0, kB, 0x100, 16));            // kA read, kB written
  REQUIRE(cl.copy(kB, 0x100, kC, 0, 16));            // kB read again, kC written
  REQUIRE(cl.fill(kA, 0x200, 4, 0));                 // kA now written
  const auto& al = cl.allocations();
  REQUIRE(al.size() == 4);
  CHECK(al[1].allocation == kA);
  CHECK(al[1].write);  // merged over the wait (read) and the fill (write)
  CHECK(al[2].allocation == kB);
  CHECK(al[2].write);
  CHECK(al[3].allocation == kC);
  CHECK(al[3].write);
  CHECK(cl.operations() == 4);

  umd::CommandList ro;
  REQUIRE(ro.wait(kA, 0, abi::WaitMemFunc::Eq, 1));
  REQUIRE(ro.copy(kA, 0, kB, 0x100, 16));
  CHECK_FALSE(ro.allocations()[1].write);  // only read
  CHECK(ro.allocations()[2].write);
  CHECK(ro.reference(kA, false) == 1);
  CHECK(ro.reference(AllocationHandle{}, true) == 0);  // the null element, never a new entry
  CHECK(ro.allocations().size() == 3);
}

TEST_CASE("command list: a null handle is refused and nothing is recorded", "[command_list]") {
  umd::CommandList cl;
  const std::uint32_t d = 1;
  const AllocationHandle null{};
  CHECK(cl.copy(null, 0, kB, 0, 4).error().code == Errc::InvalidArgument);
  CHECK(cl.copy(kA, 0, null, 0, 4).error().code == Errc::InvalidArgument);
  CHECK(cl.fill(null, 0, 4, 0).error().code == Errc::InvalidArgument);
  CHECK(cl.blit(null, 0, 16, kB, 0, 16, 16, 1).error().code == Errc::InvalidArgument);
  CHECK(cl.fill_rect(null, 0, 16, 16, 1, 0).error().code == Errc::InvalidArgument);
  CHECK(cl.write_data(null, 0, &d, 1).error().code == Errc::InvalidArgument);
  CHECK(cl.fence(null, 0, 1).error().code == Errc::InvalidArgument);
  CHECK(cl.wait(null, 0, abi::WaitMemFunc::Eq, 1).error().code == Errc::InvalidArgument);
  CHECK(cl.timestamp(null, 0).error().code == Errc::InvalidArgument);
  CHECK(contains(cl.copy(kA, 0, null, 0, 4).error().message, "COPY: the dst allocation is the null handle"));
  CHECK(cl.empty());
  CHECK(cl.patch_locations().empty());
  CHECK(cl.allocations().size() == 1);
  CHECK(cl.operations() == 0);
}

TEST_CASE("command list: operations the device would refuse are refused", "[command_list]") {
  umd::CommandList cl;
  const std::uint32_t d = 1;
  CHECK(contains(cl.copy(kA, 0, kA, 8, 16).error().message, "overlap"));
  CHECK(cl.copy(kA, 0, kA, 16, 16));  // adjacent is fine
  CHECK(contains(cl.blit(kA, 0, 64, kA, 32, 64, 40, 2).error().message, "overlap"));
  CHECK(contains(cl.write_data(kA, 2, &d, 1).error().message, "offset 2"));
  CHECK(cl.write_data(kA, 0, &d, 0).error().code == Errc::InvalidArgument);
  CHECK(contains(cl.fence(kA, 4, 1).error().message, "8-byte"));
  CHECK(contains(cl.timestamp(kA, 4).error().message, "8-byte"));
  CHECK(cl.wait(kA, 0, static_cast<abi::WaitMemFunc>(9), 1).error().code == Errc::InvalidArgument);
  CHECK(cl.nop(0).error().code == Errc::InvalidArgument);
  CHECK(cl.operations() == 1);
}

TEST_CASE("command list: packets follow the table and patch entries land on the address low dwords",
          "[command_list]") {
  umd::CommandList cl;
  const std::uint32_t data[] = {5, 6};
  REQUIRE(cl.nop(3));
  REQUIRE(cl.write_data(kA, 0x40, data, 2));
  REQUIRE(cl.copy(kA, 0x100, kB, 0x200, 64));
  REQUIRE(cl.fill(kB, 0x300, 32, 0xdeadbeef));
  REQUIRE(cl.blit(kA, 0x1000, 256, kC, 0x2000, 512, 64, 8));
  REQUIRE(cl.fill_rect(kC, 0x8000, 512, 128, 4, 0xff00ff00));
  REQUIRE(cl.fence(kB, 0x800, 0x1'0000'0002ull, true));
  REQUIRE(cl.wait(kA, 0x44, abi::WaitMemFunc::Ge, 7, 0xff, 3));
  REQUIRE(cl.timestamp(kC, 0x10));

  const auto pk = decode(cl.commands().data(), cl.command_bytes());
  REQUIRE(pk.size() == 9);
  const abi::Opcode ops[] = {abi::Opcode::Nop,      abi::Opcode::WriteData, abi::Opcode::Copy,
                             abi::Opcode::Fill,     abi::Opcode::BlitRect,  abi::Opcode::FillRect,
                             abi::Opcode::Fence,    abi::Opcode::WaitMem,   abi::Opcode::Timestamp};
  std::size_t k = 0;
  for (std::size_t i = 0; i < pk.size(); ++i) {
    REQUIRE(pk[i].info != nullptr);
    CHECK(pk[i].info->opcode == ops[i]);
    CHECK(pk[i].dwords >= pk[i].info->min_dwords);
    CHECK(pk[i].dwords <= pk[i].info->max_dwords);
    CHECK((pk[i].flags & ~pk[i].info->flags_mask) == 0);
    for (unsigned f = 0; f < pk[i].info->address_count; ++f, ++k) {
      INFO(pk[i].info->name << " field " << f);
      CHECK(pk[i].address(f) == 0);  // left for the driver
      REQUIRE(k < cl.patch_locations().size());
      const auto& e = cl.patch_locations()[k];
      CHECK(e.patch_offset == pk[i].offset + 4 * pk[i].info->addresses[f].dword);
      CHECK(e.slot_id_and_reserved == 0);
      CHECK(e.split_offset == 0);
      CHECK(e.driver_id == 0);
    }
  }
  CHECK(k == cl.patch_locations().size());
  // Payload fields by the generated indices.
  using namespace abi::payload;
  CHECK(pk[1].words[write_data::kData] == 5);
  CHECK(pk[2].words[copy::kBytes] == 64);
  CHECK(pk[4].words[blit_rect::kSrcPitch] == 256);
  CHECK(pk[4].words[blit_rect::kDstPitch] == 512);
  CHECK(pk[5].words[fill_rect::kPattern] == 0xff00ff00);
  CHECK(pk[6].flags == (abi::fence_flags::kValue64 | abi::fence_flags::kIrq));
  CHECK(pk[6].words[fence::kValueHi] == 1);
  CHECK(pk[7].flags == static_cast<std::uint8_t>(abi::WaitMemFunc::Ge));
  // AllocationIndex / AllocationOffset of a few entries: COPY src, COPY dst, BLIT dst.
  CHECK(cl.patch_locations()[1].allocation_index == 1);
  CHECK(cl.patch_locations()[1].allocation_offset == 0x100);
  CHECK(cl.patch_locations()[2].allocation_index == 2);
  CHECK(cl.patch_locations()[2].allocation_offset == 0x200);
  CHECK(cl.patch_locations()[5].allocation_index == 3);
  CHECK(cl.patch_locations()[5].allocation_offset == 0x2000);

  cl.reset();
  CHECK(cl.empty());
  CHECK(cl.allocations().size() == 1);
  CHECK(cl.patch_locations().empty());
  CHECK(cl.operations() == 0);
}

TEST_CASE("command list: round trip through render() and patch()", "[command_list]") {
  umd::CommandList cl;
  const std::uint32_t data[] = {1, 2, 3, 4};
  REQUIRE(cl.write_data(kA, 0x40, data, 4));
  REQUIRE(cl.copy(kA, 0x40, kB, 0x80, 16));
  REQUIRE(cl.fence(kB, 0x100, 9));
  // Rendered with nothing resident, then patched with the placements VidMm chose.
  RenderRig rig(cl, [](AllocationHandle h) {
    FakeAllocation f = default_placement(h);
    f.segment = kSystemMemory;
    return f;
  });
  auto r = rig.render();
  REQUIRE(r);
  CHECK(r->complete);
  CHECK(r->packets == 3);
  CHECK(r->patch_count == cl.patch_locations().size());

  auto list = rig.list;
  for (std::size_t i = 1; i < list.size(); ++i) {
    list[i].segment = 1;
    list[i].gpu_address = default_placement(list[i].allocation).gpu_address;
  }
  kmd::PatchArgs p;
  p.dma_buffer = rig.dma.data();
  p.dma_size = r->dma_bytes;
  p.dma_end = r->dma_bytes;
  p.private_data = rig.private_data.data();
  p.private_data_size = static_cast<std::uint32_t>(rig.private_data.size());
  p.allocation_list = list.data();
  p.allocation_list_size = static_cast<std::uint32_t>(list.size());
  p.patch_list = rig.patch_out.data();
  p.patch_list_size = r->patch_count;
  p.patch_length = r->patch_count;
  p.submission_fence = RingFence{77};
  p.fence_address = 0x9'0000'0000ull;
  auto pr = kmd::patch(p);
  REQUIRE(pr);
  CHECK(pr->fence_written);

  const auto pk = decode(rig.dma.dwords(), r->dma_bytes);
  REQUIRE(pk.size() == 4);
  CHECK(pk[0].address(0) == default_placement(kA).gpu_address + 0x40);
  CHECK(pk[1].address(0) == default_placement(kA).gpu_address + 0x40);
  CHECK(pk[1].address(1) == default_placement(kB).gpu_address + 0x80);
  CHECK(pk[2].address(0) == default_placement(kB).gpu_address + 0x100);
  CHECK(pk[3].info->opcode == abi::Opcode::Fence);
  CHECK(pk[3].address(0) == 0x9'0000'0000ull);
  CHECK(pk[3].words[abi::payload::fence::kValueLo] == 77);
  // Everything else is the command buffer as recorded.
  const auto mask = address_dwords(cl.commands().data(), cl.command_bytes());
  for (std::uint32_t i = 0; i < cl.command_bytes() / 4; ++i)
    if (!mask[i]) CHECK(rig.dma.dword(i) == cl.commands()[i]);
}
