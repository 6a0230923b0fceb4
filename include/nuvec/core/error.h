// Errors: what a failed array remembers and what boundaries throw.
#pragma once

#include <exception>
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

/// Thrown at boundaries (reading values, check(), transformed functions).
class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message, std::optional<std::string> op = {},
        Location loc = Location::none());
  /// The operation that failed ("matmul"), empty when not an op error.
  const std::optional<std::string>& op_name() const { return op_; }
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  ErrorKind kind() const { return kind_; }
  /// The reason alone, without op name or location.
  const std::string& message() const { return message_; }
  /// "[op] message (at file:line)".
  const char* what() const noexcept override { return what_.c_str(); }

 private:
  ErrorKind kind_;
  std::string message_;
  std::optional<std::string> op_;
  std::string file_;
  int line_;
  std::string what_;
};

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
