#include "nuvec/core/error.h"

namespace nuvec {

const char* error_kind_name(ErrorKind k) {
  static constexpr const char* names[] = {
      "shape mismatch", "invalid shape", "invalid axis", "unsupported dtype",
      "invalid argument", "out of range", "overflow", "out of memory", "backend",
      "io", "transform", "internal"};
  return names[static_cast<int>(k)];
}

Error::Error(ErrorKind kind, std::string message, std::optional<std::string> op,
             Location loc)
    : kind_(kind), message_(std::move(message)), op_(std::move(op)),
      file_(loc.file ? loc.file : ""), line_(loc.line) {
  if (op_) what_ = "[" + *op_ + "] ";
  what_ += message_;
  if (!file_.empty()) what_ += " (at " + file_ + ":" + std::to_string(line_) + ")";
}

void Error::raise() const {
  switch (kind_) {
    case ErrorKind::shape_mismatch:
    case ErrorKind::invalid_shape:
    case ErrorKind::unsupported_dtype:
    case ErrorKind::invalid_argument:
    case ErrorKind::out_of_range:
    case ErrorKind::transform:
      throw detail::ThrownError<std::invalid_argument>(*this);
    case ErrorKind::invalid_axis:
      throw detail::ThrownError<std::out_of_range>(*this);
    case ErrorKind::overflow:
      throw detail::ThrownError<std::overflow_error>(*this);
    default:
      throw detail::ThrownError<std::runtime_error>(*this);
  }
}

}  // namespace nuvec
