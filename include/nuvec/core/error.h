// Errors: what a failed array remembers and what boundaries throw.
#pragma once

#include <exception>
#include <stdexcept>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace nuvec {

/// Why an operation failed.
enum class ErrorKind {
  shape_mismatch,    // operands whose shapes do not fit together
  invalid_shape,     // a negative, overflowing or inconsistent shape
  invalid_axis,      // an axis out of range or repeated
  unsupported_dtype, // a dtype the operation does not accept
  invalid_argument,  // any other bad parameter
  out_of_range,      // an index or value outside its valid range
  overflow,          // a size or value past the supported range (int dims)
  out_of_memory,     // the allocator refused (memory limit or the system)
  backend,           // a backend library or device failed
  io,                // a file could not be read or written
  transform,         // misuse of a transform (tracing rules)
  internal,          // a bug in nuvec
};
/// The spec's name for the reason an operation rejected its arguments.
using OpErrorKind = ErrorKind;

const char* error_kind_name(ErrorKind k);

/// A caller's source location, captured by a defaulted parameter
/// (`Location loc = NUVEC_LOC`) so that it names the user's line.
struct Location {
  struct Here {};
  const char* file = "";
  int line = 0;
  Location(Here, const char* f, int l) : file(f), line(l) {}
  static Location none() { return Location(Here{}, "", 0); }
};
#define NUVEC_LOC ::nuvec::Location(::nuvec::Location::Here{}, __builtin_FILE(), __builtin_LINE())

/// What a failed array remembers, and what boundaries (reading values,
/// check(), transformed functions, loaders) throw. The object thrown is
/// always also of the standard class MLX throws for the kind, so that both
/// `catch (const nuvec::Error&)` and MLX-style `catch (const
/// std::invalid_argument&)` work (and `catch (const std::exception&)`):
/// - std::invalid_argument: shape_mismatch, invalid_shape, unsupported_dtype,
///   invalid_argument, out_of_range (a k or an index: MLX's class for them),
///   transform;
/// - std::out_of_range: invalid_axis (and Array::shape(int) out of range);
/// - std::overflow_error: overflow;
/// - std::runtime_error: out_of_memory, backend, io, internal.
/// An Error value itself is not a std::exception (a class cannot derive
/// from two standard classes without making std::exception ambiguous); throw
/// it with raise(), never with `throw`.
class Error {
 public:
  Error(ErrorKind kind, std::string message, std::optional<std::string> op = {},
        Location loc = Location::none());
  virtual ~Error() = default;
  Error(const Error&) = default;
  Error& operator=(const Error&) = default;
  /// The operation that failed ("matmul"), empty when not an op error.
  const std::optional<std::string>& op_name() const { return op_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  ErrorKind kind() const { return kind_; }
  /// The reason alone, without op name or location.
  const std::string& message() const { return message_; }
  /// "[op] message (at file:line)".
  const char* what() const noexcept { return what_.c_str(); }
  /// Throws this error as an object of nuvec::Error and of the standard
  /// class of its kind.
  [[noreturn]] void raise() const;

 private:
  ErrorKind kind_;
  std::string message_;
  std::optional<std::string> op_;
  std::string file_;
  int line_;
  std::string what_;
};

namespace detail {
/// The thrown form of an Error: both the Error and the standard exception.
template <class Std>
class ThrownError final : public Error, public Std {
 public:
  explicit ThrownError(const Error& e) : Error(e), Std(e.what()) {}
  const char* what() const noexcept override { return Error::what(); }
};
}  // namespace detail

/// A value or the error that prevented it (std::expected is C++23).
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Error error) : v_(std::move(error)) {}
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Error& error() const { return std::get<1>(v_); }

 private:
  std::variant<T, Error> v_;
};

/// An error without op name or location, to be completed by the op builder.
inline Error op_error(ErrorKind kind, std::string message) {
  return Error(kind, std::move(message));
}

}  // namespace nuvec
