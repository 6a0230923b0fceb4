// Conversions between element types (the AsType primitive), defined for
// every input. Float to integer truncates toward zero into the int64 range
// (saturating; NaN gives 0) and then wraps to the target width, which is
// what x86 gives for every value that fits in int64. Doubles round to the
// 16-bit floats once (round to odd into float32, then to nearest-even).
#pragma once

#include "complex.h"
#include "half.h"
#include "types.h"

namespace nuvec::kernels {

/// Rounds a double to float32 toward zero and sets the last bit when
/// inexact, so that a later rounding to fewer bits rounds as if once.
NUVEC_KERNEL_INLINE float round_to_odd_float(double d) {
  float f = float(d);
  u32 b = bit_cast<u32>(f);
  double ad = __builtin_fabs(d), af = __builtin_fabs(double(f));
  if (af > ad && (b & 0x7fffffffu) != 0 && af - af == 0.0) b -= 1;
  float t = bit_cast<float>(b);
  if (double(t) != d && d == d && (b & 0x7f800000u) != 0x7f800000u) b |= 1u;
  return bit_cast<float>(b);
}

template <class T>
NUVEC_KERNEL_INLINE long long float_to_int64_sat(T x) {
  double v = double(x);
  if (v != v) return 0;
  if (v >= 9223372036854775808.0) return 0x7fffffffffffffffll;
  if (v <= -9223372036854775808.0) return -0x7fffffffffffffffll - 1;
  return (long long)v;
}

template <class To>
struct Cast {
  template <class From>
  NUVEC_KERNEL_INLINE To operator()(From x) const {
    if constexpr (same_v<To, From>) {
      return x;
    } else if constexpr (is_bool_v<To>) {
      return truth(x);
    } else if constexpr (is_complex_v<From>) {
      return Cast<To>{}(x.re);
    } else if constexpr (is_complex_v<To>) {
      return complex64_t(Cast<float>{}(x), 0.0f);
    } else if constexpr (is_int_v<To> && is_float_v<From>) {
      if constexpr (same_v<To, unsigned long> || same_v<To, unsigned long long>) {
        double v = double(compute_t<From>(x));
        if (v >= 9223372036854775808.0) {
          return v >= 18446744073709551616.0 ? To(~0ull)
                                             : To(u64(v - 9223372036854775808.0) +
                                                  (1ull << 63));
        }
      }
      return To(unsigned_t<To>(u64(float_to_int64_sat(compute_t<From>(x)))));
    } else if constexpr (is_half_v<To> && (same_v<From, double> || is_int_v<From>)) {
      return To(round_to_odd_float(double(x)));
    } else if constexpr (is_half_v<To> || is_half_v<From>) {
      return To(float(compute_t<From>(x)));
    } else if constexpr (is_int_v<To> && (is_int_v<From> || is_bool_v<From>)) {
      return To(unsigned_t<To>(x));  // wraps
    } else {
      return To(x);
    }
  }
};

}  // namespace nuvec::kernels
