#include "systemc/device.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

namespace sgpu::systemc {
namespace {

constexpr std::uint64_t kPage = 4096;

std::uint8_t axi_response(tlm::tlm_response_status s) {
  if (s == tlm::TLM_OK_RESPONSE) return 0;               // OKAY
  if (s == tlm::TLM_ADDRESS_ERROR_RESPONSE) return 3;    // DECERR: nothing there
  return 2;                                              // SLVERR: the target refused
}

}  // namespace

Device::Device(const sc_core::sc_module_name& name, const DeviceConfig& config)
    : sc_core::sc_module(name), bar0("bar0"), dma("dma"), irq("irq"), reset_n("reset_n"), config_(config) {
  if (!(config_.clock_hz > 0)) throw std::invalid_argument("sgpu::systemc::Device: clock_hz must be positive");
  const unsigned t = config_.max_transaction_bytes;
  if (t < 8 || (t & (t - 1)) != 0)
    throw std::invalid_argument("sgpu::systemc::Device: max_transaction_bytes must be a power of two >= 8");
  period_ = sc_core::sc_time(1.0 / config_.clock_hz, sc_core::SC_SEC);
  if (period_ == sc_core::SC_ZERO_TIME)
    throw std::invalid_argument("sgpu::systemc::Device: the clock period is below the time resolution");
  bar0.register_b_transport(this, &Device::bar0_b_transport);
  dma.register_invalidate_direct_mem_ptr(this, &Device::invalidate_dmi);
  // One process drives the line, whichever thread changed the level (a signal has one writer).
  sc_core::sc_spawn_options o;
  o.spawn_method();
  o.set_sensitivity(&irq_changed_);
  o.dont_initialize();
  sc_core::sc_spawn([this] { irq.write(irq_level_); }, "irq_driver", &o);
}

Device::~Device() = default;

void Device::end_of_elaboration() {
  // The reset pin is optional: watch it only when the platform bound it.
  if (reset_n.size() == 0) return;
  sc_core::sc_spawn_options o;
  o.spawn_method();
  o.set_sensitivity(&reset_n->value_changed_event());
  o.dont_initialize();
  sc_core::sc_spawn([this] { watch_reset(); }, sc_core::sc_gen_unique_name("reset_watch"), &o);
}

void Device::watch_reset() { reset_changed(!reset_n->read()); }

void Device::fail(std::string what) {
  if (failure_.empty()) failure_ = std::move(what);
}

void Device::bar0_b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
  const bool write = gp.is_write();
  if (!write && !gp.is_read()) {
    gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return;
  }
  if (gp.get_data_length() != 4 || gp.get_streaming_width() < 4) {
    gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
    return;
  }
  if (const unsigned char* be = gp.get_byte_enable_ptr(); be != nullptr) {
    const unsigned n = gp.get_byte_enable_length();
    for (unsigned i = 0; i < 4; ++i) {
      if (be[i % n] != TLM_BYTE_ENABLED) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return;
      }
    }
  }
  const std::uint64_t addr = gp.get_address();
  if (addr % 4 != 0 || addr >= kBar0Bytes) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!failure_.empty()) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  std::uint32_t data = 0;
  if (write) std::memcpy(&data, gp.get_data_ptr(), 4);
  const bool ok = register_access(write, static_cast<std::uint32_t>(addr), data, delay);
  if (!failure_.empty()) {
    gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
    return;
  }
  if (!ok) {
    gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    return;
  }
  if (!write) std::memcpy(gp.get_data_ptr(), &data, 4);
  gp.set_dmi_allowed(false);  // registers: never DMI
  gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Device::invalidate_dmi(sc_dt::uint64 start, sc_dt::uint64 end) {
  dmi_.erase(std::remove_if(dmi_.begin(), dmi_.end(),
                            [&](const tlm::tlm_dmi& d) { return d.get_start_address() <= end && start <= d.get_end_address(); }),
             dmi_.end());
  dmi_hit_ = 0;
}

const tlm::tlm_dmi* Device::find_dmi(std::uint64_t addr, std::size_t n, bool write) {
  if (!config_.dmi || dmi_.empty()) return nullptr;
  const std::uint64_t last = addr + n - 1;
  auto fits = [&](const tlm::tlm_dmi& d) {
    return d.get_start_address() <= addr && last <= d.get_end_address() &&
           (write ? d.is_write_allowed() : d.is_read_allowed());
  };
  if (dmi_hit_ < dmi_.size() && fits(dmi_[dmi_hit_])) return &dmi_[dmi_hit_];
  for (std::size_t i = 0; i < dmi_.size(); ++i) {
    if (fits(dmi_[i])) {
      dmi_hit_ = i;
      return &dmi_[i];
    }
  }
  return nullptr;
}

// One transaction of at most a page; asks for DMI when the target hints it may grant it.
std::uint8_t Device::transact(tlm::tlm_command cmd, std::uint64_t addr, std::uint8_t* data,
                              const std::uint8_t* byte_enable, std::size_t n, sc_core::sc_time& delay) {
  gp_.set_command(cmd);
  gp_.set_address(addr);
  gp_.set_data_ptr(data);
  gp_.set_data_length(static_cast<unsigned>(n));
  gp_.set_streaming_width(static_cast<unsigned>(n));
  gp_.set_byte_enable_ptr(const_cast<std::uint8_t*>(byte_enable));
  gp_.set_byte_enable_length(byte_enable ? static_cast<unsigned>(n) : 0);
  gp_.set_dmi_allowed(false);
  gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  dma->b_transport(gp_, delay);
  ++stats_.transactions;
  const tlm::tlm_response_status status = gp_.get_response_status();
  if (status != tlm::TLM_OK_RESPONSE) ++stats_.errors;
  if (config_.dmi && status == tlm::TLM_OK_RESPONSE && gp_.is_dmi_allowed()) {
    tlm::tlm_dmi d;
    gp_.set_address(addr);
    if (dma->get_direct_mem_ptr(gp_, d)) dmi_.push_back(d);
  }
  gp_.set_byte_enable_ptr(nullptr);
  gp_.set_byte_enable_length(0);
  return axi_response(status);
}

std::uint8_t Device::dma_read(std::uint64_t addr, std::uint8_t* dst, std::size_t n, sc_core::sc_time& delay) {
  std::uint8_t resp = 0;
  bool first = true;
  while (n > 0) {
    const std::size_t chunk = static_cast<std::size_t>(
        std::min<std::uint64_t>({n, config_.max_transaction_bytes - addr % config_.max_transaction_bytes,
                                 kPage - addr % kPage}));
    if (!first) ++stats_.split;
    first = false;
    if (const tlm::tlm_dmi* d = find_dmi(addr, chunk, false)) {
      std::memcpy(dst, d->get_dmi_ptr() + (addr - d->get_start_address()), chunk);
      delay += d->get_read_latency();
      ++stats_.dmi_accesses;
    } else {
      resp = std::max(resp, transact(tlm::TLM_READ_COMMAND, addr, dst, nullptr, chunk, delay));
    }
    addr += chunk;
    dst += chunk;
    n -= chunk;
  }
  return resp;
}

std::uint8_t Device::dma_write(std::uint64_t addr, const std::uint8_t* src, const std::uint8_t* byte_enable,
                               std::size_t n, sc_core::sc_time& delay) {
  std::uint8_t resp = 0;
  bool first = true;
  while (n > 0) {
    const std::size_t chunk = static_cast<std::size_t>(
        std::min<std::uint64_t>({n, config_.max_transaction_bytes - addr % config_.max_transaction_bytes,
                                 kPage - addr % kPage}));
    if (!first) ++stats_.split;
    first = false;
    if (const tlm::tlm_dmi* d = find_dmi(addr, chunk, true)) {
      std::uint8_t* p = d->get_dmi_ptr() + (addr - d->get_start_address());
      if (byte_enable == nullptr) {
        std::memcpy(p, src, chunk);
      } else {
        for (std::size_t i = 0; i < chunk; ++i)
          if (byte_enable[i] == TLM_BYTE_ENABLED) p[i] = src[i];
      }
      delay += d->get_write_latency();
      ++stats_.dmi_accesses;
    } else {
      resp = std::max(resp, transact(tlm::TLM_WRITE_COMMAND, addr, const_cast<std::uint8_t*>(src), byte_enable,
                                     chunk, delay));
    }
    addr += chunk;
    src += chunk;
    if (byte_enable) byte_enable += chunk;
    n -= chunk;
  }
  return resp;
}

std::uint8_t Device::dma_probe(std::uint64_t addr, std::size_t n, bool write, sc_core::sc_time& delay) {
  if (find_dmi(addr, n, write)) return 0;
  std::vector<std::uint8_t> scratch(n);
  if (!write) return transact(tlm::TLM_READ_COMMAND, addr, scratch.data(), nullptr, n, delay);
  // A write with no byte enabled moves nothing; a target that cannot take byte enables says so
  // (its real write will tell).
  std::vector<std::uint8_t> none(n, TLM_BYTE_DISABLED);
  const std::uint8_t r = transact(tlm::TLM_WRITE_COMMAND, addr, scratch.data(), none.data(), n, delay);
  return gp_.get_response_status() == tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE ? 0 : r;
}

void Device::set_irq(bool level, sc_core::sc_time& delay) {
  const bool rising = level && !irq_level_;
  if (level != irq_level_) irq_changed_.notify(delay);
  irq_level_ = level;
  if (rising && config_.msi_address != 0) {
    std::uint8_t msg[4];
    for (unsigned i = 0; i < 4; ++i) msg[i] = static_cast<std::uint8_t>(config_.msi_data >> (8 * i));
    ++stats_.msi_writes;
    // An MSI is a posted write: nothing to report back to the device if it fails.
    (void)transact(tlm::TLM_WRITE_COMMAND, config_.msi_address, msg, nullptr, sizeof msg, delay);
  }
}

}  // namespace sgpu::systemc
