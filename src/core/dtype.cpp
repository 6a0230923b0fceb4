#include "nuvec/core/dtype.h"

#include <algorithm>

namespace nuvec {

std::string_view dtype_name(DType d) {
  static constexpr std::string_view names[DType::count] = {
      "bool",  "uint8",   "uint16",   "uint32",  "uint64",
      "int8",  "int16",   "int32",    "int64",   "float16",
      "bfloat16", "float32", "float64", "complex64"};
  return names[d.index()];
}

std::ostream& operator<<(std::ostream& os, DType d) { return os << dtype_name(d); }

namespace {

// Signed integer of at least `bytes` bytes.
DType signed_of_size(int bytes) {
  switch (bytes) {
    case 1: return int8;
    case 2: return int16;
    case 4: return int32;
    default: return int64;
  }
}

}  // namespace

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  Category ca = category(a), cb = category(b);
  if (ca == Category::bool_) return b;
  if (cb == Category::bool_) return a;
  if (ca == Category::complex || cb == Category::complex) return complex64;
  if (ca == Category::floating && cb == Category::floating) {
    if (a == float64 || b == float64) return float64;
    if (a == float32 || b == float32) return float32;
    return float32;  // float16 with bfloat16
  }
  if (ca == Category::floating) return a;  // integer with a float: the float
  if (cb == Category::floating) return b;
  if (ca == cb) return a.size() >= b.size() ? a : b;  // same signedness
  // One unsigned, one signed.
  DType u = ca == Category::unsigned_integer ? a : b;
  DType s = ca == Category::unsigned_integer ? b : a;
  if (u == uint64) return float32;  // MLX's quirk: no integer holds both
  return signed_of_size(std::max(s.size(), 2 * u.size()));
}

DType at_least_float(DType d) {
  return is_inexact(d) ? d : promote_types(d, float32);
}

}  // namespace nuvec
