// A file descriptor that closes itself, and configuration space read and written through one
// (sysfs `config`, or VFIO's configuration region at its offset).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <utility>

namespace sgpu::pcie::detail {

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

/// `width` bytes of configuration space at file offset `at`; all-ones when the read fails, as a
/// bus answers for a function that is gone.
inline std::uint32_t read_config(int fd, off_t at, unsigned width) {
  std::uint32_t v = 0;
  if (::pread(fd, &v, width, at) != static_cast<ssize_t>(width)) return 0xffffffffu;
  return v;
}
/// Writes `width` bytes at `at`; a write the kernel refuses is lost, as on the bus.
inline void write_config(int fd, off_t at, unsigned width, std::uint32_t value) {
  (void)!::pwrite(fd, &value, width, at);
}

}  // namespace sgpu::pcie::detail
