#include "nuvec/core/shape.h"

#include <cstdint>

namespace nuvec {

// shape_size saturates at INT64_MAX for shapes past int64, which no array
// has (core/checked.h refuses them).
int64_t shape_size(const Shape& shape) {
  for (int d : shape)
    if (d == 0) return 0;
  int64_t n = 1;
  for (int d : shape)  // saturated past int64 (such shapes never pass checked_size)
    if (__builtin_mul_overflow(n, int64_t(d), &n)) return INT64_MAX;
  return n;
}

Strides row_major_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    // Saturated, never wrapped: a shape whose products pass int64 is
    // refused by checked_size (core/checked.h), but a rule may ask for its
    // strides before the check.
    if (__builtin_mul_overflow(acc, int64_t(shape[i]), &acc)) acc = INT64_MAX;
  }
  return s;
}

std::ostream& operator<<(std::ostream& os, const Shape& shape) {
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i];
  if (shape.size() == 1) os << ",";
  return os << ")";
}

}  // namespace nuvec
