#include "sgpu/transport/registry.hpp"

#include <algorithm>
#include <exception>

#include <fmt/format.h>

#include "transport/builtin_backends.hpp"

namespace sgpu {

namespace {

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

}  // namespace

TransportRegistry::TransportRegistry() { detail::register_builtin_backends(*this); }
TransportRegistry::~TransportRegistry() = default;
TransportRegistry::TransportRegistry(TransportRegistry&&) noexcept = default;
TransportRegistry& TransportRegistry::operator=(TransportRegistry&&) noexcept = default;

Status TransportRegistry::insert(std::unique_ptr<Backend> backend) {
  if (!valid_name(backend->name()))
    return Error::invalid("transport registry: backend name '{}' is not made of letters, digits, '-' and '_'",
                          backend->name());
  if (find(backend->name()))
    return Error::invalid("transport registry: a backend '{}' is already registered", backend->name());
  backends_.push_back(std::move(backend));
  return ok_status();
}

TransportRegistry::Backend* TransportRegistry::find(std::string_view name) const {
  for (const auto& b : backends_)
    if (b->name() == name) return b.get();
  return nullptr;
}

bool TransportRegistry::contains(std::string_view name) const { return find(name) != nullptr; }

std::vector<TransportRegistry::Listing> TransportRegistry::backends() const {
  std::vector<Listing> out;
  for (const auto& b : backends_) out.push_back({b->name(), b->summary()});
  return out;
}

std::string TransportRegistry::names() const {
  std::string s;
  for (const auto& b : backends_) {
    if (!s.empty()) s += ", ";
    s += b->name();
  }
  return s;
}

Result<std::unique_ptr<Transport>> TransportRegistry::open(std::string_view spec) const {
  const auto colon = spec.find(':');
  const std::string_view name = spec.substr(0, colon);
  const std::string_view argument = colon == std::string_view::npos ? std::string_view{} : spec.substr(colon + 1);
  const Backend* backend = find(name);
  if (backend == nullptr)
    return Error::invalid("unknown transport backend '{}' (registered: {})", name, names());
  if (colon != std::string_view::npos && !backend->takes_argument())
    return Error::invalid("transport backend '{}' takes no argument, but the spec '{}' gives '{}'", name, spec,
                          argument);
  try {
    return backend->open(argument);
  } catch (const std::exception& e) {
    return Error::make(Errc::TransportError, Touched::Nothing, "cannot open the '{}' transport: {}", name, e.what());
  }
}

}  // namespace sgpu
