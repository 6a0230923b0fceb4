// Printing as MLX: values with six significant digits (as ostream's default),
// axes longer than six summarised as three leading entries, "...", three
// trailing entries.
#include "nuvec/core/print.h"

#include <cmath>
#include <cstring>
#include <sstream>

#include "backend/backend.h"
#include "nuvec/core/graph.h"
#include "nuvec/kernels/types.h"

namespace nuvec {

namespace {

constexpr int kEdge = 3;

void print_value(std::ostream& os, DType d, const char* p) {
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    std::memcpy(&v, p, sizeof(T));
    if constexpr (std::is_same_v<T, bool>) {
      os << (v ? "True" : "False");
    } else if constexpr (std::is_same_v<T, complex64_t>) {
      os << v.re << (v.im < 0 || (v.im == 0 && std::signbit(v.im)) ? "-" : "+")
         << std::fabs(v.im) << "j";
    } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
      os << static_cast<int>(v);
    } else if constexpr (kernels::is_float_v<T>) {
      auto f = static_cast<kernels::compute_t<T>>(v);
      if (f != f) os << "nan";  // whatever the sign and payload
      else os << f;
    } else {
      os << v;
    }
  });
}

void print_axis(std::ostream& os, const Array& a, const char* base, int axis,
                int64_t offset, int indent) {
  int n = a.shape()[axis];
  int64_t stride = a.strides()[axis] * a.itemsize();
  bool last = axis == a.ndim() - 1;
  os << "[";
  for (int i = 0; i < n; ++i) {
    if (n > 2 * kEdge && i == kEdge) {
      os << "...";
      i = n - kEdge - 1;
      os << (last ? ", " : ",\n" + std::string(indent + 1, ' '));
      continue;
    }
    int64_t off = offset + i * stride;
    if (last) print_value(os, a.dtype(), base + off);
    else print_axis(os, a, base, axis + 1, off, indent + 1);
    if (i + 1 < n) os << (last ? ", " : ",\n" + std::string(indent + 1, ' '));
  }
  os << "]";
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const Array& a) {
  if (a.is_failed()) return os << "array(<failed: " << a.error()->what() << ">)";
  try {
    a.eval();
  } catch (const Error& e) {
    return os << "array(<failed: " << e.what() << ">)";
  }
  const char* base = static_cast<const char*>(backend::host_pointer(a));
  std::ostringstream body;
  if (a.ndim() == 0) print_value(body, a.dtype(), base);
  else print_axis(body, a, base, 0, 0, 6);
  return os << "array(" << body.str() << ", dtype=" << a.dtype() << ")";
}

std::string to_string(const Array& a) {
  std::ostringstream os;
  os << a;
  return os.str();
}

}  // namespace nuvec
