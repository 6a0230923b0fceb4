#include "nuvec/core/shape.h"

namespace nuvec {

int64_t shape_size(const Shape& shape) {
  int64_t n = 1;
  for (int d : shape) n *= d;
  return n;
}

Strides row_major_strides(const Shape& shape) {
  Strides s(shape.size());
  int64_t acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = acc;
    acc *= shape[i];
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
