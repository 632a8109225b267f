// Writing a whole file (trace, picture, post-mortem, buffer dump) with a typed error that names
// the file: the one place libsgpu's outputs go to disk.
#pragma once

#include <string>
#include <string_view>

#include "sgpu/result.hpp"

namespace sgpu {

/// Writes `bytes` to `path` (created or truncated). InvalidArgument "<what>: cannot open <path>
/// for writing" or "<what>: writing <path> failed".
Status write_file(const std::string& path, std::string_view bytes, std::string_view what);

}  // namespace sgpu
