// An array's bytes for bit-for-bit comparisons, NaNs made canonical (x86
// vector and scalar code may propagate different NaN payloads; DESIGN.md
// section 10 compares floats modulo the payload).
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include <nuvec/nuvec.h>

namespace nuvec::testing {

template <class T>
void canonical_nan(T& x) {
  if constexpr (std::is_same_v<T, complex64_t>) {
    canonical_nan(x.re);
    canonical_nan(x.im);
  } else if constexpr (std::is_floating_point_v<T>) {
    if (x != x) x = std::numeric_limits<T>::quiet_NaN();
  } else if constexpr (std::is_same_v<T, float16_t> || std::is_same_v<T, bfloat16_t>) {
    if (float(x) != float(x)) x = T(std::numeric_limits<float>::quiet_NaN());
  }
}

/// The values' bytes in row-major order.
inline std::vector<uint8_t> bits_of(const Array& a) {
  return dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto v = a.to_vector<T>();
    std::vector<uint8_t> out(v.size() * sizeof(T));
    for (size_t i = 0; i < v.size(); ++i) {
      T x = v[i];
      canonical_nan(x);
      std::memcpy(out.data() + i * sizeof(T), &x, sizeof(T));
    }
    return out;
  });
}

}  // namespace nuvec::testing
