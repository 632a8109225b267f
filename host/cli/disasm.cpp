// `sgpu disasm FILE`: a DMA buffer or command buffer dump (raw little-endian dwords, e.g. the
// post-mortem's <stem>.dma.bin) as named packets, decoded from the generated packet table.
#include <fmt/format.h>

#include "cli.hpp"
#include "sgpu/diag/disasm.hpp"

namespace sgpu::cli {

int run_disasm(const DisasmOptions& o) {
  auto dwords = diag::read_dword_file(o.path);
  if (!dwords) {
    fmt::print(stderr, "sgpu disasm: {}\n", dwords.error().message);
    return 1;
  }
  const std::size_t bytes = dwords->size() * 4;
  if (o.offset % 4 != 0 || o.offset > bytes) {
    fmt::print(stderr, "sgpu disasm: --offset {} must be a multiple of 4 within the file's {} bytes\n", o.offset, bytes);
    return 1;
  }
  const std::size_t end = o.end ? *o.end : bytes;
  if (end % 4 != 0 || end < o.offset || end > bytes) {
    fmt::print(stderr, "sgpu disasm: --end {} must be a multiple of 4 in [{}, {}]\n", end, o.offset, bytes);
    return 1;
  }
  const auto packets = diag::disassemble(dwords->data() + o.offset / 4, (end - o.offset) / 4,
                                         static_cast<std::uint32_t>(o.offset));
  diag::TextOptions text;
  text.raw = o.raw;
  text.max_variable_dwords = o.raw ? ~std::size_t{0} : 8;
  if (o.command_buffer)
    // A user-mode command buffer: Render fills every GPU address from the patch list.
    text.note = [](std::uint32_t, std::uint64_t address) {
      return address == 0 ? std::string("unpatched") : std::string("unpatched, but not 0 as CommandList leaves it");
    };
  std::size_t problems = 0;
  for (const auto& p : packets) problems += p.problem != diag::PacketProblem::None;
  fmt::print("{}: {} {} bytes, [{:#x}, {:#x}): {} packets, {} malformed\n", o.path,
             o.command_buffer ? "command buffer" : "DMA buffer", bytes, o.offset, end, packets.size(), problems);
  fmt::print("{}", diag::to_text(packets, text));
  return 0;
}

}  // namespace sgpu::cli
