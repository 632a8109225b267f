#include "sgpu/file_output.hpp"

#include <cstdio>

namespace sgpu {

Status write_file(const std::string& path, std::string_view bytes, std::string_view what) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return Error::invalid("{}: cannot open {} for writing", what, path);
  const bool written = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed) return Error::invalid("{}: writing {} failed", what, path);
  return ok_status();
}

}  // namespace sgpu
