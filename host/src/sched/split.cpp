#include "sgpu/sched/split.hpp"

#include <algorithm>
#include <cstddef>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace sgpu::sched {

namespace {

constexpr std::uint32_t kSlotMask = 0x00ffffffu;
constexpr std::uint32_t kUnbound = ~std::uint32_t{0};

void add_unique(std::vector<std::uint32_t>& set, std::uint32_t v) {
  auto it = std::lower_bound(set.begin(), set.end(), v);
  if (it == set.end() || *it != v) set.insert(it, v);
}

std::vector<std::uint32_t> bound_set(const std::vector<std::uint32_t>& slots) {
  std::vector<std::uint32_t> s;
  for (std::uint32_t a : slots)
    if (a != kUnbound) add_unique(s, a);
  return s;
}

}  // namespace

Result<std::uint32_t> walk_split(const PatchLocation* patches, std::uint32_t count, std::uint32_t max_slot_id,
                                 std::uint32_t dma_start, std::uint32_t dma_end, const FitsFn& fits,
                                 const EmitFn& emit) {
  // Every rule is checked before the first callback: a bad list emits nothing.
  if (dma_start > dma_end) return Error::invalid("split: range [{}, {}) is empty or reversed", dma_start, dma_end);
  for (std::uint32_t i = 0; i < count; ++i) {
    const auto& p = patches[i];
    if (p.slot_id_and_reserved & ~kSlotMask)
      return Error::invalid("split: patch entry {} sets Reserved bits ({:#x})", i, p.slot_id_and_reserved);
    if ((p.slot_id_and_reserved & kSlotMask) >= max_slot_id)
      return Error::invalid("split: patch entry {} SlotId {} >= MaxAllocationListSlotId {}", i,
                            p.slot_id_and_reserved & kSlotMask, max_slot_id);
    if (p.split_offset < dma_start || p.split_offset > dma_end)
      return Error::invalid("split: patch entry {} SplitOffset {} outside [{}, {}]", i, p.split_offset, dma_start,
                            dma_end);
    if (i > 0 && p.split_offset < patches[i - 1].split_offset)
      return Error::invalid("split: patch entry {} SplitOffset {} is before entry {}'s {}", i, p.split_offset, i - 1,
                            patches[i - 1].split_offset);
  }

  std::vector<std::uint32_t> slots(std::min<std::uint32_t>(max_slot_id, 1u << 24), kUnbound);
  SplitPortion cur;
  cur.dma_start = dma_start;
  std::uint32_t emitted = 0;
  std::uint32_t i = 0;
  // fits() with OutOfMemory folded into "no".
  const auto try_fit = [&](const std::vector<std::uint32_t>& set) -> Result<bool> {
    auto r = fits(set);
    if (!r && r.error().code == Errc::OutOfMemory) return false;
    return r;
  };
  while (i < count) {
    // The group: every entry at this SplitOffset (one packet's address fields).
    std::uint32_t end = i;
    while (end < count && patches[end].split_offset == patches[i].split_offset) ++end;
    std::vector<std::uint32_t> alone;
    for (std::uint32_t k = i; k < end; ++k) add_unique(alone, patches[k].allocation_index);
    std::vector<std::uint32_t> candidate = cur.allocations;
    for (std::uint32_t a : alone) add_unique(candidate, a);
    auto fit = try_fit(candidate);
    if (!fit) return std::move(fit).error();
    if (!*fit) {
      const bool portion_empty = cur.patch_length == 0 && patches[i].split_offset == cur.dma_start;
      if (!portion_empty) {
        // Close the portion before this packet; the next one starts with this packet alone.
        cur.dma_end = patches[i].split_offset;
        cur.still_bound = bound_set(slots);
        SGPU_RETURN_IF_ERROR(emit(cur));
        ++emitted;
        cur = SplitPortion{};
        cur.dma_start = patches[i].split_offset;
        cur.patch_start = i;
        candidate = alone;
        fit = try_fit(candidate);
        if (!fit) return std::move(fit).error();
      }
      if (!*fit)
        return Error{Errc::OutOfMemory,
                     fmt::format("split: the packet at DMA offset {} (patch entries [{}, {})) cannot run: allocations "
                                 "[{}] of its list do not fit in video memory together",
                                 patches[i].split_offset, i, end, fmt::join(alone, ", ")),
                     Touched{emitted > 0}};
    }
    cur.allocations = std::move(candidate);
    for (std::uint32_t k = i; k < end; ++k) {
      slots[patches[k].slot_id_and_reserved & kSlotMask] = patches[k].allocation_index;
    }
    cur.patch_length = end - cur.patch_start;
    i = end;
  }
  cur.dma_end = dma_end;
  cur.still_bound = bound_set(slots);
  if (cur.dma_end > cur.dma_start || cur.patch_length > 0 || emitted == 0) {
    SGPU_RETURN_IF_ERROR(emit(cur));
    ++emitted;
  }
  return emitted;
}

}  // namespace sgpu::sched
