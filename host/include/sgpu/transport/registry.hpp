// TransportRegistry: backend name → factory, owned by the program that opens transports.
//
// libsgpu knows the Transport interface, not who implements it (Mesa's winsys split: the driver
// defines the interface, each backend lives beside what it wraps, the program that links them
// picks one). A registry starts with the backends libsgpu carries itself ("mock", and "pcie"
// for a real card); a program adds the ones it links, explicitly, e.g. the testbench's
//
//   sgpu::TransportRegistry registry;            // mock, pcie
//   sgpu::tb::register_backends(registry);       // sim, model, pcie-sim (tb/backends)
//   registry.options<sgpu::sim::SimConfig>("sim")->read_latency = 16;
//   auto transport = registry.open("sim");       // or "pcie:0000:01:00.0", "mock", ...
//
// Each backend keeps its own options type (the simulator's latencies, a model's bus width...):
// the registry stores one value per backend, handed to its factory on open(), reachable and
// changeable through options<Options>(name). A spec "name:argument" passes the argument to the
// factory (a PCI address, say); a backend registered with a factory that takes no argument
// refuses one. No global state: two registries are independent.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"

namespace sgpu {

/// The options of a backend that has none.
struct NoOptions {};

class TransportRegistry {
 public:
  /// A registry holding libsgpu's own backends: "mock" (MockTransport) and "pcie".
  TransportRegistry();
  ~TransportRegistry();
  TransportRegistry(TransportRegistry&&) noexcept;
  TransportRegistry& operator=(TransportRegistry&&) noexcept;
  TransportRegistry(const TransportRegistry&) = delete;
  TransportRegistry& operator=(const TransportRegistry&) = delete;

  /// Adds backend `name` (letters, digits, '-' and '_'; not yet registered: InvalidArgument
  /// otherwise) with a one-line `summary` for listings, its `options` and a `factory` called as
  ///   factory(const Options&)                       — the backend takes no argument, or
  ///   factory(const Options&, std::string_view arg) — "name:arg" passes arg ("" without one);
  /// returning Result<std::unique_ptr<Transport>>.
  template <class Options, class Factory>
  Status add(std::string name, std::string summary, Options options, Factory factory);
  /// The same for a backend without options: factory() or factory(std::string_view arg).
  template <class Factory>
  Status add(std::string name, std::string summary, Factory factory) {
    if constexpr (std::is_invocable_v<Factory&, std::string_view>)
      return add(std::move(name), std::move(summary), NoOptions{},
                 [f = std::move(factory)](const NoOptions&, std::string_view arg) { return f(arg); });
    else
      return add(std::move(name), std::move(summary), NoOptions{},
                 [f = std::move(factory)](const NoOptions&) { return f(); });
  }

  /// The options `name` opens with, to read or change before open(); nullptr when there is no
  /// such backend or its options are not an `Options`. Stable for the registry's lifetime (a move
  /// keeps it).
  template <class Options>
  Options* options(std::string_view name);

  /// Opens the backend a spec names: "name" or "name:argument". Unknown names are
  /// InvalidArgument listing the registered ones; an argument for a backend that takes none is
  /// InvalidArgument; a factory that throws is a TransportError naming the backend.
  Result<std::unique_ptr<Transport>> open(std::string_view spec) const;

  /// Registered backends in registration order.
  struct Listing {
    std::string_view name;
    std::string_view summary;
  };
  std::vector<Listing> backends() const;
  bool contains(std::string_view name) const;
  /// "mock, pcie, sim, model, pcie-sim": the names in registration order, for messages.
  std::string names() const;

 private:
  /// One backend with its options, type-erased.
  class Backend {
   public:
    Backend(std::string name, std::string summary) : name_(std::move(name)), summary_(std::move(summary)) {}
    virtual ~Backend() = default;
    virtual bool takes_argument() const = 0;
    virtual Result<std::unique_ptr<Transport>> open(std::string_view argument) const = 0;
    const std::string& name() const { return name_; }
    const std::string& summary() const { return summary_; }

   private:
    std::string name_;
    std::string summary_;
  };
  /// A backend whose options are an `Options` (what options<Options>() looks for).
  template <class Options>
  class BackendWith;
  template <class Options, class Factory>
  class TypedBackend;

  Status insert(std::unique_ptr<Backend> backend);
  Backend* find(std::string_view name) const;

  std::vector<std::unique_ptr<Backend>> backends_;
};

template <class Options>
class TransportRegistry::BackendWith : public Backend {
 public:
  BackendWith(std::string name, std::string summary, Options options)
      : Backend(std::move(name), std::move(summary)), options_(std::move(options)) {}
  Options& options() { return options_; }
  const Options& options() const { return options_; }

 private:
  Options options_;
};

template <class Options, class Factory>
class TransportRegistry::TypedBackend final : public BackendWith<Options> {
 public:
  static constexpr bool kTakesArgument = std::is_invocable_v<const Factory&, const Options&, std::string_view>;
  static_assert(kTakesArgument || std::is_invocable_v<const Factory&, const Options&>,
                "a transport factory is called as factory(const Options&) or factory(const Options&, "
                "std::string_view argument)");

  TypedBackend(std::string name, std::string summary, Options options, Factory factory)
      : BackendWith<Options>(std::move(name), std::move(summary), std::move(options)), factory_(std::move(factory)) {}

  bool takes_argument() const override { return kTakesArgument; }
  Result<std::unique_ptr<Transport>> open(std::string_view argument) const override {
    if constexpr (kTakesArgument)
      return factory_(this->options(), argument);
    else
      return factory_(this->options());
  }

 private:
  Factory factory_;
};

template <class Options, class Factory>
Status TransportRegistry::add(std::string name, std::string summary, Options options, Factory factory) {
  return insert(std::make_unique<TypedBackend<Options, Factory>>(std::move(name), std::move(summary),
                                                                 std::move(options), std::move(factory)));
}

template <class Options>
Options* TransportRegistry::options(std::string_view name) {
  auto* backend = dynamic_cast<BackendWith<Options>*>(find(name));
  return backend ? &backend->options() : nullptr;
}

}  // namespace sgpu
