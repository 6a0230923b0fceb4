#include "nuvec/core/dtype_info.h"

#include <limits>
#include <string>

#include "nuvec/core/error.h"

namespace nuvec {

namespace {

DtypeCategory category_of(DType d) {
  switch (category(d)) {
    case Category::complex: return DtypeCategory::complexfloating;
    case Category::floating: return DtypeCategory::floating;
    case Category::signed_integer: return DtypeCategory::signedinteger;
    case Category::unsigned_integer: return DtypeCategory::unsignedinteger;
    default: return DtypeCategory::generic;  // bool
  }
}

// The category directly above `c` (generic is its own parent).
DtypeCategory parent(DtypeCategory c) {
  switch (c) {
    case DtypeCategory::complexfloating:
    case DtypeCategory::floating: return DtypeCategory::inexact;
    case DtypeCategory::signedinteger:
    case DtypeCategory::unsignedinteger: return DtypeCategory::integer;
    case DtypeCategory::inexact:
    case DtypeCategory::integer: return DtypeCategory::number;
    default: return DtypeCategory::generic;
  }
}

[[noreturn]] void refuse(const char* what, DType d) {
  Error(ErrorKind::invalid_argument,
        std::string(what) + " is not defined for " + std::string(dtype_name(d)),
        std::string(what))
      .raise();
}

}  // namespace

bool issubdtype(DType a, DType b) { return a == b; }
bool issubdtype(DType a, DtypeCategory b) { return issubdtype(category_of(a), b); }
bool issubdtype(DtypeCategory, DType) { return false; }
bool issubdtype(DtypeCategory a, DtypeCategory b) {
  for (DtypeCategory c = a;; c = parent(c)) {
    if (c == b) return true;
    if (c == DtypeCategory::generic) return false;
  }
}

finfo::finfo(DType d) : dtype(d == complex64 ? float32 : d) {
  auto set = [&](auto v) {
    using T = decltype(v);
    bits = 8 * static_cast<int>(sizeof(T));
    max = static_cast<double>(std::numeric_limits<T>::max());
    min = -max;
    eps = static_cast<double>(std::numeric_limits<T>::epsilon());
    smallest_normal = static_cast<double>(std::numeric_limits<T>::min());
  };
  if (dtype == float32) {
    set(0.0f);
  } else if (dtype == float64) {
    set(0.0);
  } else if (dtype == float16) {
    bits = 16, max = 65504.0, min = -max, eps = 0x1p-10, smallest_normal = 0x1p-14;
  } else if (dtype == bfloat16) {
    bits = 16, max = 0x1.fep127, min = -max, eps = 0x1p-7, smallest_normal = 0x1p-126;
  } else {
    refuse("finfo", d);
  }
}

iinfo::iinfo(DType d) : dtype(d) {
  if (!is_integer(d)) refuse("iinfo", d);
  dispatch_dtype(d, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      min = static_cast<int64_t>(std::numeric_limits<T>::min());
      max = static_cast<uint64_t>(std::numeric_limits<T>::max());
    }
  });
}

}  // namespace nuvec
