// TimedTransport: a decorator that adds up the wall time spent inside another transport.
//
// With the sim backend nearly all of that is the Verilated model stepping, so
// 1 - inside / total is the host library's share of a run's wall time (the `host_wall_share`
// the demo reports and the benchmarks print).
#pragma once

#include <chrono>
#include <memory>

#include "sgpu/transport.hpp"

namespace sgpu {

class TimedTransport final : public Transport {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TimedTransport(std::unique_ptr<Transport> inner) : inner_(std::move(inner)) {}

  std::uint32_t read32(std::uint32_t off) override {
    Timer t(*this);
    return inner_->read32(off);
  }
  void write32(std::uint32_t off, std::uint32_t v) override {
    Timer t(*this);
    inner_->write32(off, v);
  }
  Result<DmaMemory> alloc_dma(std::size_t bytes, std::size_t align) override {
    Timer t(*this);
    return inner_->alloc_dma(bytes, align);
  }
  bool wait_irq(std::chrono::nanoseconds timeout) override {
    Timer t(*this);
    return inner_->wait_irq(timeout);
  }
  std::chrono::nanoseconds now() override { return inner_->now(); }
  std::string_view name() const override { return inner_->name(); }

  /// Wall time spent inside the wrapped transport so far.
  Clock::duration inside() const { return inside_; }

 private:
  struct Timer {
    explicit Timer(TimedTransport& o) : owner(o), start(Clock::now()) {}
    ~Timer() { owner.inside_ += Clock::now() - start; }
    TimedTransport& owner;
    Clock::time_point start;
  };
  std::unique_ptr<Transport> inner_;
  Clock::duration inside_{};
};

}  // namespace sgpu
