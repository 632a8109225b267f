// libFuzzer target for kmd::render (clang, -fsanitize=fuzzer,address,undefined; `make fuzz`).
#include <cstdio>
#include <cstdlib>
#include <string>

#include "render_oracle.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string broken = sgpu::fuzz::check_render(data, size);
  if (!broken.empty()) {
    std::fprintf(stderr, "render property broken: %s\n", broken.c_str());
    std::abort();
  }
  return 0;
}
