// Typed results for libsgpu: every fallible call returns a Result<T> (or a Status), never a bare
// bool or an exception across the API.
//
// The error model follows OpenTitan's DIF results: besides its code and a readable message, every
// Error says whether hardware was touched before the call failed. Validation errors
// (InvalidArgument, Busy, Unsupported...) are always reported before the first register access,
// so `hardware_touched == false` promises the device and the driver state are exactly as before.
// Where an Error is made, that promise is spelled out (Touched::Nothing / Touched::Hardware), and
// the validation errors have formatting helpers that always promise it:
//
//   if (offset % 4 != 0) return Error::invalid("offset {:#x} is not 4-byte aligned", offset);
//   SGPU_ASSIGN_OR_RETURN(auto buffer, transport.alloc_dma(bytes));
//   SGPU_RETURN_IF_ERROR(device.reset_engine());
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

#include <fmt/core.h>

namespace sgpu {

/// What went wrong, coarsely; the message says exactly what.
enum class Errc {
  InvalidArgument = 1,  ///< A caller's argument broke a rule; nothing happened.
  Busy,                 ///< The resource is full (e.g. the ring); retry later; nothing happened.
  DeviceMismatch,       ///< The device is not one this library drives (ID or version).
  Timeout,              ///< The device did not answer in time.
  OutOfMemory,          ///< A host or DMA allocation failed.
  DeviceFault,          ///< The engine stopped on a fault (see Device::fault()).
  Aborted,              ///< The work was discarded by an engine reset and will never complete.
  Unsupported,          ///< The feature or backend is not available in this build or device.
  TransportError,       ///< The link to the device failed (MMIO timeout, protocol violation).
  PermissionDenied,     ///< A user buffer asked for something only the kernel may do (privileged packet).
  DeviceLost,           ///< The context was put in error by hang recovery; its calls fail from now on.
};

/// Stable lower-case name of an error code, e.g. "invalid_argument".
constexpr std::string_view to_string(Errc code) {
  switch (code) {
    case Errc::InvalidArgument: return "invalid_argument";
    case Errc::Busy: return "busy";
    case Errc::DeviceMismatch: return "device_mismatch";
    case Errc::Timeout: return "timeout";
    case Errc::OutOfMemory: return "out_of_memory";
    case Errc::DeviceFault: return "device_fault";
    case Errc::Aborted: return "aborted";
    case Errc::Unsupported: return "unsupported";
    case Errc::TransportError: return "transport_error";
    case Errc::PermissionDenied: return "permission_denied";
    case Errc::DeviceLost: return "device_lost";
  }
  return "unknown_error";
}

/// Whether a failing call touched hardware before it failed (Error::hardware_touched).
enum class Touched : bool {
  Nothing = false,  ///< no register access, no state changed: safe to retry or just report
  Hardware = true,  ///< the device (or the driver state) may have changed: recovery decides
};

struct Error {
  Errc code{};
  std::string message;
  /// False when the failing call made no register access and changed no state: safe to retry
  /// or to report without recovery.
  bool hardware_touched = false;

  Error() = default;
  /// `touched` says whether the call touched hardware before it failed; a computed answer is
  /// Touched{flag}.
  Error(Errc c, std::string m, Touched touched)
      : code(c), message(std::move(m)), hardware_touched(touched == Touched::Hardware) {}

  /// An Error with a formatted message (fmt syntax), e.g.
  /// Error::make(Errc::Timeout, Touched::Hardware, "fence {} not reached", f).
  template <class... A>
  static Error make(Errc code, Touched touched, fmt::format_string<A...> f, A&&... a) {
    return Error(code, fmt::format(f, std::forward<A>(a)...), touched);
  }

  // The validation errors, made before any register access: nothing was touched.
  /// InvalidArgument.
  template <class... A>
  static Error invalid(fmt::format_string<A...> f, A&&... a) {
    return make(Errc::InvalidArgument, Touched::Nothing, f, std::forward<A>(a)...);
  }
  /// Busy: the resource is full; retry later.
  template <class... A>
  static Error busy(fmt::format_string<A...> f, A&&... a) {
    return make(Errc::Busy, Touched::Nothing, f, std::forward<A>(a)...);
  }
  /// Unsupported by this build or device.
  template <class... A>
  static Error unsupported(fmt::format_string<A...> f, A&&... a) {
    return make(Errc::Unsupported, Touched::Nothing, f, std::forward<A>(a)...);
  }
  /// PermissionDenied: only the kernel may do this.
  template <class... A>
  static Error denied(fmt::format_string<A...> f, A&&... a) {
    return make(Errc::PermissionDenied, Touched::Nothing, f, std::forward<A>(a)...);
  }
};

/// "<code>: <message>", e.g. "timeout: fence 7 not reached after 1 ms; last fence seen 5".
inline std::string to_string(const Error& e) {
  std::string s(to_string(e.code));
  s += ": ";
  s += e.message;
  return s;
}

/// Thrown by Result::value() on a Result that holds an error (a programming mistake).
class BadResultAccess : public std::logic_error {
 public:
  explicit BadResultAccess(const Error& e) : std::logic_error(to_string(e)), error_(e) {}
  const Error& error() const noexcept { return error_; }

 private:
  Error error_;
};

/// Either a T or an Error. Minimal by design: check it, then take the value or the error.
template <class T>
class [[nodiscard]] Result {
  static_assert(!std::is_same_v<std::decay_t<T>, Error>, "Result<Error> is ambiguous");

 public:
  using value_type = T;

  Result(T value) : v_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit by design
  Result(Error error) : v_(std::in_place_index<1>, std::move(error)) {}  // NOLINT

  bool has_value() const noexcept { return v_.index() == 0; }
  explicit operator bool() const noexcept { return has_value(); }

  T& value() & { check(); return std::get<0>(v_); }
  const T& value() const& { check(); return std::get<0>(v_); }
  T&& value() && { check(); return std::get<0>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  /// The error; only valid when !has_value().
  const Error& error() const& { return std::get<1>(v_); }
  Error&& error() && { return std::get<1>(std::move(v_)); }
  /// Success or the error, without the value (for a caller that only checks).
  Result<void> status() const&;

 private:
  void check() const {
    if (!has_value()) throw BadResultAccess(std::get<1>(v_));
  }
  std::variant<T, Error> v_;
};

/// Success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  using value_type = void;

  Result() = default;
  Result(Error error) : e_(std::move(error)) {}  // NOLINT: implicit by design

  bool has_value() const noexcept { return !e_.has_value(); }
  explicit operator bool() const noexcept { return has_value(); }
  void value() const {
    if (e_) throw BadResultAccess(*e_);
  }
  const Error& error() const& { return *e_; }
  Error&& error() && { return std::move(*e_); }

 private:
  std::optional<Error> e_;
};

using Status = Result<void>;

template <class T>
Status Result<T>::status() const& {
  if (has_value()) return {};
  return error();
}

/// A successful Status.
inline Status ok_status() { return {}; }

}  // namespace sgpu

/// Returns the error of a Status- or Result-valued expression from the enclosing function.
#define SGPU_RETURN_IF_ERROR(expr)                    \
  do {                                                \
    if (auto sgpu_status_ = (expr); !sgpu_status_)    \
      return std::move(sgpu_status_).error();         \
  } while (0)

/// Evaluates a Result-valued expression; on error returns the error from the enclosing function,
/// else moves the value into `lhs` (a declaration such as `auto x` or an existing lvalue).
/// Expands to more than one statement: not for the body of an unbraced if/for.
#define SGPU_ASSIGN_OR_RETURN(lhs, expr) \
  SGPU_ASSIGN_OR_RETURN_IMPL_(SGPU_RESULT_CONCAT_(sgpu_result_, __LINE__), lhs, expr)
#define SGPU_ASSIGN_OR_RETURN_IMPL_(result, lhs, expr) \
  auto result = (expr);                                \
  if (!result) return std::move(result).error();       \
  lhs = std::move(result).value()
#define SGPU_RESULT_CONCAT_(a, b) SGPU_RESULT_CONCAT_IMPL_(a, b)
#define SGPU_RESULT_CONCAT_IMPL_(a, b) a##b
