// DxgkDdiRender (kmd::render): every rejection rule of render.hpp, translation, pre-patch, the
// output patch list, multipass and the submission fence.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "render_rig.hpp"

using namespace sgpu;
using namespace sgpu::test;
using sgpu::AllocationHandle;
using sgpu::PatchLocation;

namespace {

const AllocationHandle kA{1}, kB{2}, kC{3};

/// Every operation kind once, on three allocations.
umd::CommandList every_op() {
  umd::CommandList cl;
  REQUIRE(cl.nop(2));
  REQUIRE(record_every_address_kind(cl, kA, kB, kC));
  return cl;
}

/// The error's code and that its message names `needle` (an offset or an index).
void check_error(const Result<kmd::RenderOutput>& r, Errc code, const std::string& needle) {
  REQUIRE_FALSE(r);
  INFO(to_string(r.error()));
  CHECK(r.error().code == code);
  CHECK(contains(r.error().message, needle));
  CHECK_FALSE(r.error().hardware_touched);
}

std::uint32_t hdr(abi::Opcode op, std::uint32_t dwords, std::uint8_t flags = 0) {
  return abi::make_header(op, dwords, flags);
}

const abi::PacketInfo& info(abi::Opcode op) { return *abi::find_packet(static_cast<std::uint8_t>(op)); }

/// A list whose only packet is `words` at command offset 8 (after a 2-dword NOP), with one patch
/// entry per address field naming allocation-list element 1 (kA) at `offset`.
umd::CommandList one_packet(const std::vector<std::uint32_t>& words, std::uint32_t offset = 0, bool write = true) {
  umd::CommandList like;
  like.reference(kA, write);
  std::vector<std::uint32_t> dw = {hdr(abi::Opcode::Nop, 2), 0};
  dw.insert(dw.end(), words.begin(), words.end());
  std::vector<PatchLocation> patches;
  const auto* p = abi::find_packet(abi::header_opcode(words[0]));
  if (p != nullptr) {
    for (unsigned f = 0; f < p->address_count; ++f) {
      PatchLocation l;
      l.allocation_index = 1;
      l.allocation_offset = offset;
      l.patch_offset = 8 + 4 * p->addresses[f].dword;
      patches.push_back(l);
    }
  }
  return raw_list(like, dw, patches);
}

}  // namespace

// ---------------------------------------------------------------- translation

TEST_CASE("render: translation is byte-identical to the command buffer except address fields", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  auto r = rig.render();
  REQUIRE(r);
  CHECK(r->complete);
  CHECK(r->packets == 9);
  const std::uint32_t len = cl.command_bytes();
  CHECK(r->dma_bytes == len + kmd::submission_fence_bytes());
  const auto mask = address_dwords(cl.commands().data(), len);
  for (std::uint32_t i = 0; i < len / 4; ++i) {
    INFO("dword " << i);
    if (!mask[i]) CHECK(rig.dma.dword(i) == cl.commands()[i]);
  }
  // Decoded back with the table: the same packets in the same order.
  const auto in = decode(cl.commands().data(), len);
  const auto out = decode(rig.dma.dwords(), len);
  REQUIRE(in.size() == out.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    REQUIRE(out[i].info != nullptr);
    CHECK(out[i].info->opcode == in[i].info->opcode);
    CHECK(out[i].dwords == in[i].dwords);
    CHECK(out[i].flags == in[i].flags);
  }
}

TEST_CASE("render: pre-patch writes base + AllocationOffset for resident allocations, 0 otherwise", "[render]") {
  const auto cl = every_op();
  // kB is not resident (segment 0): its fields stay 0; kA and kC are pre-patched.
  RenderRig rig(cl, [](AllocationHandle h) {
    FakeAllocation f = default_placement(h);
    if (h == kB) f.segment = kSystemMemory;
    return f;
  });
  auto r = rig.render();
  REQUIRE(r);
  REQUIRE(r->patch_count == cl.patch_locations().size());
  for (std::uint32_t i = 0; i < r->patch_count; ++i) {
    const PatchLocation& o = rig.patch_out[i];
    const auto& al = rig.list[o.allocation_index];
    const std::uint64_t got = rig.dma.dword(o.patch_offset / 4) | (std::uint64_t{rig.dma.dword(o.patch_offset / 4 + 1)} << 32);
    INFO("entry " << i);
    CHECK(got == (al.segment != 0 ? al.gpu_address + o.allocation_offset : 0));
  }
  // Spot check one field by name: COPY's dst (kB, not resident) is 0, its src (kA) is patched.
  const auto pk = decode(rig.dma.dwords(), r->dma_bytes);
  REQUIRE(pk[2].info->opcode == abi::Opcode::Copy);
  CHECK(pk[2].address(0) == default_placement(kA).gpu_address + 0x100);
  CHECK(pk[2].address(1) == 0);
}

TEST_CASE("render: the output list names every reference with PatchOffset, SplitOffset, SlotId, DriverId", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  auto r = rig.render();
  REQUIRE(r);
  // The packets before the submission fence (which Patch fills in from the private data, not
  // through the patch list).
  const auto pk = decode(rig.dma.dwords(), r->dma_bytes - kmd::submission_fence_bytes());
  std::uint32_t k = 0;
  std::uint32_t last_split = 0;
  for (const auto& d : pk) {
    REQUIRE(d.info != nullptr);
    for (unsigned f = 0; f < d.info->address_count; ++f, ++k) {
      REQUIRE(k < r->patch_count);
      const PatchLocation& o = rig.patch_out[k];
      const PatchLocation& in = cl.patch_locations()[k];
      INFO("entry " << k << " in " << d.info->name);
      CHECK(o.patch_offset == d.offset + 4 * d.info->addresses[f].dword);
      CHECK(o.split_offset == d.offset);
      CHECK(o.split_offset >= last_split);
      CHECK(o.slot_id_and_reserved == f);
      CHECK(o.driver_id == (d.info->addresses[f].access == abi::AddressAccess::Write ? kmd::driver_id::kWrite
                                                                                      : kmd::driver_id::kRead));
      CHECK(o.allocation_index == in.allocation_index);
      CHECK(o.allocation_offset == in.allocation_offset);
      last_split = o.split_offset;
    }
  }
  CHECK(k == r->patch_count);
}

TEST_CASE("render: the submission fence is appended and recorded in the private data", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  auto r = rig.render();
  REQUIRE(r);
  const auto priv = rig.priv();
  CHECK(priv.magic == kmd::RenderPrivateData::kMagic);
  CHECK(priv.flags == kmd::RenderPrivateData::kHasFence);
  CHECK(priv.fence_offset == cl.command_bytes());
  const auto pk = decode(rig.dma.dwords() + priv.fence_offset / 4, kmd::submission_fence_bytes());
  REQUIRE(pk.size() == 1);
  REQUIRE(pk[0].info != nullptr);
  CHECK(pk[0].info->opcode == abi::Opcode::Fence);
  CHECK(pk[0].flags == abi::fence_flags::kValue64);
  CHECK(pk[0].address(0) == 0);
  CHECK(kmd::submission_fence_bytes() == 4 * info(abi::Opcode::Fence).min_dwords);
}

TEST_CASE("render: an empty command buffer yields only the submission fence", "[render]") {
  umd::CommandList cl;
  RenderRig rig(cl);
  auto r = rig.render();
  REQUIRE(r);
  CHECK(r->complete);
  CHECK(r->packets == 0);
  CHECK(r->dma_bytes == kmd::submission_fence_bytes());
  CHECK(rig.priv().fence_offset == 0);
}

// ---------------------------------------------------------------- multipass

namespace {

struct Passes {
  std::vector<std::uint32_t> bytes;        ///< concatenated DMA bytes (fence included)
  std::vector<PatchLocation> patches;      ///< offsets made absolute over the concatenation
  std::vector<kmd::RenderPrivateData> privs;
  std::size_t count = 0;
};

/// `with_cursor`: each pass gets the previous one's resume cursor (else only MultipassOffset).
Passes run_passes(RenderRig& rig, std::uint32_t dma_size, std::uint32_t patch_out_size, bool with_cursor = true) {
  Passes p;
  std::uint32_t offset = 0;
  kmd::RenderCursor resume;
  for (;;) {
    auto a = rig.args(dma_size);
    a.patch_out_size = patch_out_size;
    a.multipass_offset = offset;
    a.resume = resume;
    auto r = kmd::render(a);
    REQUIRE(r);
    ++p.count;
    REQUIRE(p.count < 100);
    CHECK(r->dma_bytes <= dma_size);
    CHECK(r->patch_count <= patch_out_size);
    const auto base = static_cast<std::uint32_t>(p.bytes.size() * 4);
    const auto chunk = rig.dma.first(r->dma_bytes);
    p.bytes.insert(p.bytes.end(), chunk.begin(), chunk.end());
    for (std::uint32_t i = 0; i < r->patch_count; ++i) {
      PatchLocation o = rig.patch_out[i];
      CHECK(o.patch_offset < r->dma_bytes);  // relative to this pass's buffer
      o.patch_offset += base;
      o.split_offset += base;
      p.patches.push_back(o);
    }
    p.privs.push_back(rig.priv());
    if (r->complete) break;
    CHECK(r->multipass_offset > offset);
    CHECK(r->resume.command_offset == r->multipass_offset);
    CHECK(r->resume.check != 0);
    offset = r->multipass_offset;
    if (with_cursor) resume = r->resume;
  }
  return p;
}

}  // namespace

TEST_CASE("render: a small DMA buffer forces passes whose concatenation equals one pass", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  const Passes one = run_passes(rig, 64 * 1024, 1024);
  REQUIRE(one.count == 1);
  // Room for the largest packet (BLIT_RECT) plus the fence, not for two packets.
  const std::uint32_t small = 4 * info(abi::Opcode::BlitRect).min_dwords + kmd::submission_fence_bytes() + 8;
  const Passes many = run_passes(rig, small, 1024);
  CHECK(many.count > 3);
  CHECK(many.bytes == one.bytes);
  REQUIRE(many.patches.size() == one.patches.size());
  for (std::size_t i = 0; i < one.patches.size(); ++i) {
    INFO("entry " << i);
    CHECK(many.patches[i].patch_offset == one.patches[i].patch_offset);
    CHECK(many.patches[i].split_offset == one.patches[i].split_offset);
    CHECK(many.patches[i].allocation_index == one.patches[i].allocation_index);
    CHECK(many.patches[i].allocation_offset == one.patches[i].allocation_offset);
    CHECK(many.patches[i].slot_id_and_reserved == one.patches[i].slot_id_and_reserved);
    CHECK(many.patches[i].driver_id == one.patches[i].driver_id);
  }
  // Only the final pass carries the fence.
  for (std::size_t i = 0; i + 1 < many.privs.size(); ++i) {
    CHECK(many.privs[i].magic == kmd::RenderPrivateData::kMagic);
    CHECK(many.privs[i].flags == 0);
  }
  CHECK(many.privs.back().flags == kmd::RenderPrivateData::kHasFence);
  const auto fences = [](const std::vector<std::uint32_t>& b) {
    int n = 0;
    for (const auto& d : decode(b.data(), static_cast<std::uint32_t>(b.size() * 4)))
      n += d.info != nullptr && d.info->opcode == abi::Opcode::Fence && d.address(0) == 0;
    return n;
  };
  CHECK(fences(many.bytes) == 1);
}

TEST_CASE("render: passes with and without the resume cursor produce the same bytes and entries", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  const std::uint32_t small = 4 * info(abi::Opcode::BlitRect).min_dwords + kmd::submission_fence_bytes() + 8;
  const Passes cursor = run_passes(rig, small, 1024, true);
  const Passes walk = run_passes(rig, small, 1024, false);
  CHECK(cursor.count == walk.count);
  CHECK(cursor.bytes == walk.bytes);
  REQUIRE(cursor.patches.size() == walk.patches.size());
  for (std::size_t i = 0; i < walk.patches.size(); ++i) {
    CHECK(cursor.patches[i].patch_offset == walk.patches[i].patch_offset);
    CHECK(cursor.patches[i].allocation_offset == walk.patches[i].allocation_offset);
  }
}

TEST_CASE("render: an input patch list out of PatchOffset order renders as the sorted list does", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  const Passes in_order = run_passes(rig, 64 * 1024, 1024);
  std::reverse(rig.patch_in.begin(), rig.patch_in.end());
  const std::uint32_t small = 4 * info(abi::Opcode::BlitRect).min_dwords + kmd::submission_fence_bytes() + 8;
  for (std::uint32_t dma_size : {64u * 1024, small}) {
    INFO("DMA buffer " << dma_size);
    const Passes reversed = run_passes(rig, dma_size, 1024);
    CHECK(reversed.bytes == in_order.bytes);
    REQUIRE(reversed.patches.size() == in_order.patches.size());
    for (std::size_t i = 0; i < in_order.patches.size(); ++i) {
      CHECK(reversed.patches[i].patch_offset == in_order.patches[i].patch_offset);
      CHECK(reversed.patches[i].allocation_offset == in_order.patches[i].allocation_offset);
    }
  }
}

TEST_CASE("render: packets straddling the in-order path's copy chunks render as the full path does", "[render]") {
  // The in-order path copies the command buffer 16 KiB ahead of the packet it checks: ~40 KiB of
  // packets of odd sizes put packet edges everywhere against the chunk edges. Reversing the input
  // list sends the same call down the full path (one memcpy, sorted list): the same output.
  umd::CommandList cl;
  std::vector<std::uint32_t> data(1531);
  for (std::uint32_t i = 0; i < data.size(); ++i) data[i] = i * 0x9e3779b9u;
  for (std::uint32_t i = 0; i < 8; ++i) {
    REQUIRE(cl.write_data(kA, 4 * i, data.data(), data.size() - 97 * i));
    REQUIRE(cl.copy(kA, 0x100 + i, kB, 0x200, 64 + i));
    REQUIRE(cl.nop(1 + 13 * i));
    REQUIRE(cl.blit(kA, 0x1000, 256, kC, 0x2000, 512, 64, 8));
  }
  REQUIRE(cl.command_bytes() > 2 * 16 * 1024);
  RenderRig rig(cl);
  const Passes in_order = run_passes(rig, 64 * 1024, 1024);
  CHECK(in_order.count == 1);
  const auto mask = address_dwords(cl.commands().data(), cl.command_bytes());
  for (std::uint32_t i = 0; i < cl.command_bytes() / 4; ++i) {
    INFO("dword " << i);
    if (!mask[i]) CHECK(in_order.bytes[i] == cl.commands()[i]);
  }
  const Passes in_order_passes = run_passes(rig, 12 * 1024, 1024);
  CHECK(in_order_passes.count > 3);
  std::reverse(rig.patch_in.begin(), rig.patch_in.end());
  for (const Passes* expected : {&in_order, &in_order_passes}) {
    const Passes full = run_passes(rig, expected == &in_order ? 64 * 1024 : 12 * 1024, 1024);
    CHECK(full.count == expected->count);
    CHECK(full.bytes == expected->bytes);
    REQUIRE(full.patches.size() == expected->patches.size());
    for (std::size_t i = 0; i < full.patches.size(); ++i) {
      INFO("entry " << i);
      CHECK(std::memcmp(&full.patches[i], &expected->patches[i], sizeof(PatchLocation)) == 0);
    }
  }
}

TEST_CASE("render: with the timestamp bracket, every pass of the in-order path equals the full path's", "[render]") {
  // A continuing pass starts its packets after the opening TIMESTAMP: the in-order path's copy
  // lands them at a different DMA offset than their command offset.
  const auto cl = every_op();
  RenderRig in_order(cl), full(cl);
  std::reverse(full.patch_in.begin(), full.patch_in.end());  // the full path only
  const std::uint32_t size = kmd::timestamp_reserve_bytes() + kmd::submission_fence_bytes() +
                             4 * info(abi::Opcode::BlitRect).min_dwords + 64;
  std::uint32_t offset = 0;
  kmd::RenderCursor resume_in_order, resume_full;
  int passes = 0;
  for (bool complete = false; !complete; ++passes) {
    REQUIRE(passes < 50);
    auto a = in_order.args(size), b = full.args(size);
    a.reserve_timestamps = b.reserve_timestamps = true;
    a.multipass_offset = b.multipass_offset = offset;
    a.resume = resume_in_order;
    b.resume = resume_full;
    auto r = kmd::render(a);
    auto q = kmd::render(b);
    REQUIRE(r);
    REQUIRE(q);
    INFO("pass " << passes);
    CHECK(r->dma_bytes == q->dma_bytes);
    CHECK(r->patch_count == q->patch_count);
    CHECK(r->multipass_offset == q->multipass_offset);
    CHECK(in_order.dma.first(r->dma_bytes) == full.dma.first(q->dma_bytes));
    for (std::uint32_t i = 0; i < r->patch_count; ++i)
      CHECK(std::memcmp(&in_order.patch_out[i], &full.patch_out[i], sizeof(PatchLocation)) == 0);
    const auto pa = in_order.priv(), pb = full.priv();
    CHECK(std::memcmp(&pa, &pb, sizeof pa) == 0);
    complete = r->complete;
    offset = r->multipass_offset;
    resume_in_order = r->resume;
    resume_full = q->resume;
  }
  CHECK(passes >= 3);
}

TEST_CASE("render: a resume cursor Render did not issue for this call is refused and writes nothing", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  const std::uint32_t small = 4 * info(abi::Opcode::BlitRect).min_dwords + kmd::submission_fence_bytes() + 8;
  auto a = rig.args(small);
  auto first = kmd::render(a);
  REQUIRE(first);
  REQUIRE_FALSE(first->complete);
  const kmd::RenderCursor good = first->resume;
  a.multipass_offset = first->multipass_offset;

  const auto refused = [&](kmd::RenderCursor c, const std::string& needle) {
    a.resume = c;
    std::memset(rig.dma.data(), 0x5a, 64 * 1024);
    std::fill(reinterpret_cast<std::byte*>(rig.patch_out.data()),
              reinterpret_cast<std::byte*>(rig.patch_out.data() + rig.patch_out.size()), std::byte{0x5a});
    check_error(kmd::render(a), Errc::InvalidArgument, needle);
    const auto dma = rig.dma.first(64 * 1024);
    CHECK(std::all_of(dma.begin(), dma.end(), [](std::uint32_t d) { return d == 0x5a5a5a5au; }));
    CHECK(std::all_of(rig.patch_out.begin(), rig.patch_out.end(),
                      [](const PatchLocation& e) { return e.patch_offset == 0x5a5a5a5au; }));
  };
  SECTION("another offset") {
    kmd::RenderCursor c = good;
    c.command_offset += 4;
    refused(c, "resume cursor is for command offset");
  }
  SECTION("another patch entry") {
    kmd::RenderCursor c = good;
    c.patch_index += 1;
    refused(c, "was not issued by Render");
  }
  SECTION("a patch entry past the list") {
    kmd::RenderCursor c = good;
    c.patch_index = static_cast<std::uint32_t>(rig.patch_in.size()) + 1;
    refused(c, "was not issued by Render");
  }
  SECTION("unknown flags") {
    kmd::RenderCursor c = good;
    c.flags |= 2;
    refused(c, "was not issued by Render");
  }
  SECTION("a forged check value") {
    kmd::RenderCursor c = good;
    c.check ^= 1;
    refused(c, "was not issued by Render");
  }
  SECTION("a cursor for another command buffer of the same bytes") {
    RenderRig other(cl);
    auto b = other.args(small);
    auto r = kmd::render(b);
    REQUIRE(r);
    refused(r->resume, "was not issued by Render");
  }
  SECTION("the issued cursor continues") {
    a.resume = good;
    auto r = kmd::render(a);
    REQUIRE(r);
    CHECK(r->packets > 0);
  }
}

TEST_CASE("render: a too-small output patch list also triggers multipass", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  const Passes one = run_passes(rig, 64 * 1024, 1024);
  const Passes many = run_passes(rig, 64 * 1024, 2);  // COPY and BLIT_RECT need 2 each
  CHECK(many.count >= 5);
  CHECK(many.bytes == one.bytes);
  CHECK(many.patches.size() == one.patches.size());
}

TEST_CASE("render: MultipassOffset must be an aligned packet boundary inside the buffer", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  auto a = rig.args();
  a.multipass_offset = 6;
  check_error(kmd::render(a), Errc::InvalidArgument, "MultipassOffset 6");
  a.multipass_offset = cl.command_bytes();
  check_error(kmd::render(a), Errc::InvalidArgument, fmt::format("MultipassOffset {}", cl.command_bytes()));
  a.multipass_offset = 12;  // inside WRITE_DATA (which starts at 8)
  check_error(kmd::render(a), Errc::InvalidArgument, "MultipassOffset 12 is not a packet boundary");
  a.multipass_offset = 8;
  CHECK(kmd::render(a));
}

// ---------------------------------------------------------------- rejections: the packet itself

TEST_CASE("render: a privileged packet is PermissionDenied naming its offset", "[render]") {
  const auto& p = info(abi::Opcode::TlbInvalidate);
  std::vector<std::uint32_t> w(p.min_dwords, 0);
  w[0] = hdr(abi::Opcode::TlbInvalidate, p.min_dwords);
  RenderRig rig(one_packet(w));
  check_error(rig.render(), Errc::PermissionDenied, "command offset 8");
  check_error(rig.render(), Errc::PermissionDenied, "TLB_INVALIDATE");
}

TEST_CASE("render: every privileged packet of the table is refused", "[render]") {
  for (const auto& p : abi::kPackets) {
    if (!p.privileged) continue;
    std::vector<std::uint32_t> w(p.min_dwords, 0);
    w[0] = hdr(p.opcode, p.min_dwords);
    RenderRig rig(one_packet(w));
    INFO(p.name);
    check_error(rig.render(), Errc::PermissionDenied, "command offset 8");
  }
}

TEST_CASE("render: INDIRECT is PermissionDenied (the called buffer cannot be validated)", "[render]") {
  const auto& p = info(abi::Opcode::Indirect);
  std::vector<std::uint32_t> w(p.min_dwords, 0);
  w[0] = hdr(abi::Opcode::Indirect, p.min_dwords);
  w[abi::payload::indirect::kBytes] = 16;
  RenderRig rig(one_packet(w));
  check_error(rig.render(), Errc::PermissionDenied, "command offset 8");
  check_error(rig.render(), Errc::PermissionDenied, "INDIRECT");
}

TEST_CASE("render: an unknown opcode is InvalidArgument naming the offset and opcode", "[render]") {
  RenderRig rig(one_packet({abi::make_header(static_cast<abi::Opcode>(0x7f), 2), 0}));
  check_error(rig.render(), Errc::InvalidArgument, "command offset 8: unknown opcode 0x7f");
}

TEST_CASE("render: a header with dwords = 0 is refused", "[render]") {
  RenderRig rig(one_packet({hdr(abi::Opcode::Nop, 0), 0}));
  check_error(rig.render(), Errc::InvalidArgument, "command offset 8: NOP header 0x00000000 has dwords = 0");
}

TEST_CASE("render: a packet running past the end of the command buffer is refused", "[render]") {
  RenderRig rig(one_packet({hdr(abi::Opcode::Nop, 4), 0, 0}));
  check_error(rig.render(), Errc::InvalidArgument, "command offset 8: NOP of 4 dwords ends at byte 24");
}

TEST_CASE("render: fewer or more dwords than the packet takes are refused", "[render]") {
  const auto& p = info(abi::Opcode::Fence);
  {
    std::vector<std::uint32_t> w(p.min_dwords - 1, 0);
    w[0] = hdr(abi::Opcode::Fence, p.min_dwords - 1);
    RenderRig rig(one_packet(w));
    check_error(rig.render(), Errc::InvalidArgument, fmt::format("command offset 8: FENCE with dwords = {}", p.min_dwords - 1));
  }
  {
    std::vector<std::uint32_t> w(p.max_dwords + 1, 0);
    w[0] = hdr(abi::Opcode::Fence, p.max_dwords + 1);
    RenderRig rig(one_packet(w));
    check_error(rig.render(), Errc::InvalidArgument, fmt::format("command offset 8: FENCE with dwords = {}", p.max_dwords + 1));
  }
  {
    const auto& wd = info(abi::Opcode::WriteData);  // the variable-length packet's minimum
    std::vector<std::uint32_t> w(wd.min_dwords - 1, 0);
    w[0] = hdr(abi::Opcode::WriteData, wd.min_dwords - 1);
    RenderRig rig(one_packet(w));
    check_error(rig.render(), Errc::InvalidArgument, "command offset 8: WRITE_DATA with dwords = 3");
  }
}

TEST_CASE("render: flag bits the packet does not define are refused", "[render]") {
  const auto& p = info(abi::Opcode::Copy);
  REQUIRE(p.flags_mask == 0);
  std::vector<std::uint32_t> w(p.min_dwords, 0);
  w[0] = hdr(abi::Opcode::Copy, p.min_dwords, 0x10);
  RenderRig rig(one_packet(w));
  check_error(rig.render(), Errc::InvalidArgument, "command offset 8: COPY sets undefined flag bits 0x10");
  // FENCE defines irq and value64 but not bit 2.
  const auto& fp = info(abi::Opcode::Fence);
  std::vector<std::uint32_t> f(fp.min_dwords, 0);
  f[0] = hdr(abi::Opcode::Fence, fp.min_dwords, static_cast<std::uint8_t>(fp.flags_mask + 1));
  RenderRig rig2(one_packet(f));
  check_error(rig2.render(), Errc::InvalidArgument, "command offset 8: FENCE sets undefined flag bits");
}

TEST_CASE("render: CommandLength not a multiple of 4 is refused", "[render]") {
  RenderRig rig(every_op());
  auto a = rig.args();
  a.command_length -= 2;
  check_error(kmd::render(a), Errc::InvalidArgument, "CommandLength");
}

// ---------------------------------------------------------------- rejections: the patch list

namespace {

/// every_op() with its patch list edited.
RenderRig edited(const std::function<void(std::vector<PatchLocation>&)>& edit) {
  const auto cl = every_op();
  auto patches = cl.patch_locations();
  edit(patches);
  return RenderRig(raw_list(cl, cl.commands(), patches));
}

/// Index in every_op()'s patch list of COPY's dst entry (the 3rd entry: WRITE_DATA, COPY src, COPY dst).
constexpr std::size_t kCopyDst = 2;

}  // namespace

TEST_CASE("render: an address field without a patch entry is refused", "[render]") {
  auto rig = edited([](auto& p) { p.erase(p.begin() + kCopyDst); });
  check_error(rig.render(), Errc::InvalidArgument, "COPY address field 'dst'");
  check_error(rig.render(), Errc::InvalidArgument, "has no patch-location entry");
}

TEST_CASE("render: a misaligned patch entry is refused naming its index", "[render]") {
  auto rig = edited([](auto& p) { p[kCopyDst].patch_offset += 2; });
  check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: PatchOffset");
  check_error(rig.render(), Errc::InvalidArgument, "not 4-byte aligned");
}

TEST_CASE("render: a patch entry on a dword that is not an address low dword is refused", "[render]") {
  SECTION("the high dword of the field") {
    auto rig = edited([](auto& p) { p[kCopyDst].patch_offset += 4; });
    check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: PatchOffset");
    check_error(rig.render(), Errc::InvalidArgument, "not the low dword of an address field");
  }
  SECTION("a non-address payload dword") {
    auto rig = edited([](auto& p) {
      p.push_back(p[kCopyDst]);
      p.back().patch_offset = p[kCopyDst].patch_offset - 4 * abi::payload::copy::kDstLo + 4 * abi::payload::copy::kBytes;
      p.erase(p.begin() + kCopyDst);
    });
    check_error(rig.render(), Errc::InvalidArgument, "not the low dword of an address field");
  }
  SECTION("inside a NOP") {
    auto rig = edited([](auto& p) {
      PatchLocation l = p[0];
      l.patch_offset = 4;
      p.push_back(l);
    });
    const auto n = rig.patch_in.size() - 1;
    check_error(rig.render(), Errc::InvalidArgument, fmt::format("patch entry {}: PatchOffset 4 is dword 1 of NOP", n));
  }
}

TEST_CASE("render: two patch entries on one field are refused naming both", "[render]") {
  auto rig = edited([](auto& p) { p.push_back(p[kCopyDst]); });
  const auto n = rig.patch_in.size() - 1;
  check_error(rig.render(), Errc::InvalidArgument, fmt::format("patch entries 2 and {} both patch COPY field 'dst'", n));
}

TEST_CASE("render: an unused patch entry is refused naming its index", "[render]") {
  auto rig = edited([](auto& p) {
    PatchLocation l = p[0];
    l.patch_offset = 0x10000;
    p.push_back(l);
  });
  const auto n = rig.patch_in.size() - 1;
  check_error(rig.render(), Errc::InvalidArgument, fmt::format("patch entry {} is unused", n));
}

TEST_CASE("render: AllocationIndex past the allocation list is refused", "[render]") {
  auto rig = edited([](auto& p) { p[kCopyDst].allocation_index = 9; });
  check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: AllocationIndex 9 is past the 4-element");
}

TEST_CASE("render: an entry naming a null allocation-list element is refused", "[render]") {
  auto rig = edited([](auto& p) { p[kCopyDst].allocation_index = 0; });
  check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: AllocationIndex 0 names a null");
}

TEST_CASE("render: SlotId >= MaxAllocationListSlotId and Reserved bits are refused", "[render]") {
  {
    auto rig = edited([](auto& p) { p[kCopyDst].slot_id_and_reserved = 300; });
    check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: SlotId 300 is not below MaxAllocationListSlotId 256");
    auto a = rig.args();
    a.max_slot_id = 301;
    CHECK(kmd::render(a));
  }
  {
    auto rig = edited([](auto& p) { p[kCopyDst].slot_id_and_reserved = 1u << 24; });
    check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: Reserved bits set (0x01000000)");
  }
}

// ---------------------------------------------------------------- rejections: accesses

namespace {

struct AccessCase {
  const char* name;
  std::vector<std::uint32_t> words;
  std::uint64_t extent;  ///< bytes touched from the address of field `field`
  unsigned field;
};

std::vector<AccessCase> access_cases() {
  using namespace abi::payload;
  std::vector<AccessCase> v;
  const auto packet = [](abi::Opcode op, std::uint8_t flags = 0) {
    const auto& p = info(op);
    std::vector<std::uint32_t> w(p.min_dwords, 0);
    w[0] = hdr(op, p.min_dwords, flags);
    return w;
  };
  {
    auto w = packet(abi::Opcode::WriteData);
    w.resize(write_data::kData + 5, 7);
    w[0] = hdr(abi::Opcode::WriteData, static_cast<std::uint32_t>(w.size()));
    v.push_back({"WRITE_DATA", w, 20, 0});
  }
  v.push_back({"FENCE value64", packet(abi::Opcode::Fence, abi::fence_flags::kValue64), 8, 0});
  v.push_back({"FENCE 32-bit", packet(abi::Opcode::Fence), 4, 0});
  for (unsigned f = 0; f < 2; ++f) {
    auto w = packet(abi::Opcode::Copy);
    w[copy::kBytes] = 100;
    v.push_back({f == 0 ? "COPY src" : "COPY dst", w, 100, f});
  }
  {
    auto w = packet(abi::Opcode::Fill);
    w[fill::kBytes] = 52;
    v.push_back({"FILL", w, 52, 0});
  }
  for (unsigned f = 0; f < 2; ++f) {
    auto w = packet(abi::Opcode::BlitRect);
    w[blit_rect::kWidth] = 40;
    w[blit_rect::kHeight] = 3;
    w[blit_rect::kSrcPitch] = 64;
    w[blit_rect::kDstPitch] = 128;
    v.push_back({f == 0 ? "BLIT_RECT src" : "BLIT_RECT dst", w, f == 0 ? 2u * 64 + 40 : 2u * 128 + 40, f});
  }
  {
    auto w = packet(abi::Opcode::FillRect);
    w[fill_rect::kWidth] = 24;
    w[fill_rect::kHeight] = 5;
    w[fill_rect::kDstPitch] = 32;
    v.push_back({"FILL_RECT", w, 4 * 32 + 24, 0});
  }
  v.push_back({"WAIT_MEM", packet(abi::Opcode::WaitMem), 4, 0});
  v.push_back({"TIMESTAMP", packet(abi::Opcode::Timestamp), 8, 0});
  return v;
}

}  // namespace

TEST_CASE("render: an access past the allocation's end is refused for every packet kind", "[render]") {
  for (const auto& c : access_cases()) {
    INFO(c.name);
    const std::uint32_t offset = 0x1000;
    // Allocation exactly big enough: accepted. One byte less: refused naming the patch entry.
    for (const std::uint64_t size : {offset + c.extent, offset + c.extent - 1}) {
      // Only the field under test is near the end; any other field reads from offset 0.
      const auto base = one_packet(c.words, 0);
      auto patches = base.patch_locations();
      patches[c.field].allocation_offset = offset;
      RenderRig rig(raw_list(base, base.commands(), patches), [&](AllocationHandle h) {
        FakeAllocation f = default_placement(h);
        f.size = size;
        return f;
      });
      auto r = rig.render();
      if (size == offset + c.extent) {
        CHECK(r);
      } else {
        check_error(r, Errc::InvalidArgument, fmt::format("patch entry {}", c.field));
        check_error(r, Errc::InvalidArgument, fmt::format("[{}, {})", offset, offset + c.extent));
      }
    }
  }
}

TEST_CASE("render: empty rectangles touch nothing, huge ones are checked without overflow", "[render]") {
  using namespace abi::payload;
  const auto& p = info(abi::Opcode::BlitRect);
  std::vector<std::uint32_t> w(p.min_dwords, 0);
  w[0] = hdr(abi::Opcode::BlitRect, p.min_dwords);
  w[blit_rect::kWidth] = 0xffffffffu;
  w[blit_rect::kHeight] = 0;  // empty: extent 0 even with the largest width
  RenderRig empty(one_packet(w, 0x10000), [](AllocationHandle h) {
    FakeAllocation f = default_placement(h);
    f.size = 0x10000;
    return f;
  });
  CHECK(empty.render());

  // The largest rectangle: (2^32 - 2) * (2^32 - 1) + 2^32 - 1 bytes, just below 2^64.
  w[blit_rect::kHeight] = 0xffffffffu;
  w[blit_rect::kSrcPitch] = 0xffffffffu;
  w[blit_rect::kDstPitch] = 0xffffffffu;
  const auto max = std::numeric_limits<std::uint64_t>::max();
  SECTION("inside a 2^64 - 1 byte allocation that is not resident: accepted") {
    RenderRig rig(one_packet(w, 0), [&](AllocationHandle h) {
      FakeAllocation f = default_placement(h);
      f.segment = 0;
      f.size = max;
      return f;
    });
    CHECK(rig.render());
  }
  SECTION("an offset pushes it past the allocation") {
    RenderRig rig(one_packet(w, 0xffffffffu), [&](AllocationHandle h) {
      FakeAllocation f = default_placement(h);
      f.segment = 0;
      f.size = 0xffffffffull * 0xffffffffull + 0xfffffffeull;  // one byte short
      return f;
    });
    check_error(rig.render(), Errc::InvalidArgument, "patch entry 0");
  }
  SECTION("resident: base + offset + extent wraps past 2^64") {
    RenderRig rig(one_packet(w, 0), [&](AllocationHandle h) {
      FakeAllocation f = default_placement(h);
      f.size = max;
      f.gpu_address = 1ull << 40;
      return f;
    });
    check_error(rig.render(), Errc::InvalidArgument, "wraps past 2^64");
    check_error(rig.render(), Errc::InvalidArgument, "patch entry 0");
  }
}

TEST_CASE("render: a write through an allocation without WriteOperation is refused", "[render]") {
  const auto cl = every_op();
  RenderRig rig(cl);
  // COPY dst is kB (element 2); clear its WriteOperation.
  REQUIRE(rig.list[2].allocation == kB);
  rig.list[2].write = false;
  check_error(rig.render(), Errc::InvalidArgument, "patch entry 2: COPY at command offset");
  check_error(rig.render(), Errc::InvalidArgument, "element 2, which lacks WriteOperation");
  // Reading through a read-only entry is fine: WAIT_MEM only on kA.
  umd::CommandList ro;
  REQUIRE(ro.wait(kA, 0, abi::WaitMemFunc::Eq, 1));
  CHECK_FALSE(ro.allocations()[1].write);
  RenderRig rig2(ro);
  CHECK(rig2.render());
}

TEST_CASE("render: the alignment the device requires is checked on the offset and the address", "[render]") {
  using namespace abi::payload;
  struct Case {
    std::vector<std::uint32_t> words;
    std::uint32_t bad_offset;
    std::uint32_t align;
  };
  const auto packet = [](abi::Opcode op, std::uint8_t flags = 0) {
    const auto& p = info(op);
    std::vector<std::uint32_t> w(p.min_dwords, 0);
    w[0] = hdr(op, p.min_dwords, flags);
    return w;
  };
  const std::vector<Case> cases = {
      {packet(abi::Opcode::WriteData), 2, 4},
      {packet(abi::Opcode::WaitMem), 1, 4},
      {packet(abi::Opcode::Timestamp), 4, 8},
      {packet(abi::Opcode::Fence, abi::fence_flags::kValue64), 4, 8},
      {packet(abi::Opcode::Fence), 2, 4},
  };
  for (const auto& c : cases) {
    INFO(abi::find_packet(abi::header_opcode(c.words[0]))->name);
    RenderRig rig(one_packet(c.words, c.bad_offset));
    check_error(rig.render(), Errc::InvalidArgument,
                fmt::format("patch entry 0: AllocationOffset {} is not {}-byte aligned", c.bad_offset, c.align));
    // An aligned offset on a misaligned base: refused when pre-patching, accepted when not resident.
    const auto misaligned_base = [&](bool resident) {
      return [=](AllocationHandle h) {
        FakeAllocation f = default_placement(h);
        f.gpu_address += c.align / 2;
        f.segment = resident ? 1 : 0;
        return f;
      };
    };
    RenderRig rig2(one_packet(c.words, 0), misaligned_base(true));
    check_error(rig2.render(), Errc::InvalidArgument, "patch entry 0: address 0x");
    RenderRig rig3(one_packet(c.words, 0), misaligned_base(false));
    CHECK(rig3.render());
  }
  // A 32-bit FENCE needs only 4: offset 4 is fine.
  RenderRig ok(one_packet(packet(abi::Opcode::Fence), 4));
  CHECK(ok.render());
}

// ---------------------------------------------------------------- rejections: the call

TEST_CASE("render: a DMA buffer that cannot hold one packet plus the fence is refused", "[render]") {
  umd::CommandList cl;
  REQUIRE(cl.copy(kA, 0, kB, 0x100, 16));
  RenderRig rig(cl);
  const std::uint32_t need = 4 * info(abi::Opcode::Copy).min_dwords + kmd::submission_fence_bytes();
  check_error(rig.render(need - 4), Errc::InvalidArgument, "command offset 0: COPY of 24 bytes");
  CHECK(rig.render(need));
  // Nor the fence alone.
  umd::CommandList empty;
  RenderRig rig2(empty);
  check_error(rig2.render(kmd::submission_fence_bytes() - 4), Errc::InvalidArgument, "submission fence");
  // An output list that cannot hold one packet's entries.
  auto a = rig.args();
  a.patch_out_size = 1;
  check_error(kmd::render(a), Errc::InvalidArgument, "patch list of 1 entries");
}

TEST_CASE("render: a misaligned DMA buffer or too little private data is refused", "[render]") {
  RenderRig rig(every_op());
  auto a = rig.args();
  a.dma_buffer = static_cast<std::byte*>(a.dma_buffer) + 64;
  check_error(kmd::render(a), Errc::InvalidArgument, "4096-byte aligned");
  a = rig.args();
  a.private_data_size = sizeof(kmd::RenderPrivateData) - 1;
  check_error(kmd::render(a), Errc::InvalidArgument, "private data");
}

TEST_CASE("render: a rejected call leaves the DMA bytes of earlier packets as written", "[render]") {
  auto cl = every_op();
  const std::uint32_t bad = cl.command_bytes();
  const std::uint32_t tlb[] = {hdr(abi::Opcode::TlbInvalidate, info(abi::Opcode::TlbInvalidate).min_dwords), 0, 0};
  cl.append_raw(tlb, 3);
  RenderRig rig(cl);
  check_error(rig.render(), Errc::PermissionDenied, fmt::format("command offset {}", bad));
  const auto mask = address_dwords(cl.commands().data(), bad);
  for (std::uint32_t i = 0; i < bad / 4; ++i)
    if (!mask[i]) CHECK(rig.dma.dword(i) == cl.commands()[i]);
}
