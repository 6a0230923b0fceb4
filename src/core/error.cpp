#include "nuvec/core/error.h"

namespace nuvec {

const char* error_kind_name(ErrorKind k) {
  static constexpr const char* names[] = {
      "shape mismatch", "invalid shape", "invalid axis", "unsupported dtype",
      "invalid argument", "out of range", "out of memory", "backend",
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

}  // namespace nuvec
