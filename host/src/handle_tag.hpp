// Handle tags: the high bits that make the handles of one adapter (or memory manager) differ
// from every other's in the process.
//
// hDevice, hContext and hAllocation are numbers a caller can hand to the wrong adapter. Each
// issuer takes a tag once, from the process's one counter (the only process-wide state libsgpu
// keeps: an ID allocator, no behaviour hangs on it), and puts it above its own sequence, so a
// handle of adapter B never names an object of adapter A, even when both sequences are at 1.
#pragma once

#include <cstdint>

namespace sgpu::detail {

/// A tag no earlier call in this process returned (never 0; wraps only after 2^32 calls).
std::uint32_t next_handle_tag() noexcept;

}  // namespace sgpu::detail
