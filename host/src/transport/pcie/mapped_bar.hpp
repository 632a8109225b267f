// A BAR mapped into this process (VFIO region or sysfs resource file): volatile 32-bit accesses.
#pragma once

#include <sys/mman.h>

#include <cstdint>

#include "sgpu/transport/pci_function.hpp"

namespace sgpu::pcie::detail {

class MappedBar final : public BarWindow {
 public:
  MappedBar(void* base, std::uint64_t size, bool owned)
      : base_(static_cast<volatile std::uint8_t*>(base)), size_(size), owned_(owned) {}
  ~MappedBar() override {
    if (owned_) ::munmap(const_cast<std::uint8_t*>(base_), size_);
  }
  MappedBar(const MappedBar&) = delete;
  MappedBar& operator=(const MappedBar&) = delete;
  std::uint32_t read32(std::uint32_t offset) override {
    return *reinterpret_cast<volatile std::uint32_t*>(base_ + offset);
  }
  void write32(std::uint32_t offset, std::uint32_t value) override {
    *reinterpret_cast<volatile std::uint32_t*>(base_ + offset) = value;
  }
  std::uint64_t size() const override { return size_; }

 private:
  volatile std::uint8_t* base_;
  std::uint64_t size_;
  bool owned_;
};

}  // namespace sgpu::pcie::detail
