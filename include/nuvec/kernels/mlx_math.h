// MLX 0.32's CPU formulas for exp, erf and erfinv (the fixed float32
// sequences of its x86 Linux build: one element at a time, explicit fma,
// a branch chosen per element), so that the random distributions that go
// through them (random::normal, truncated_normal, categorical) give MLX's
// draws bit for bit. They are not nuvec's exp/erf/erfinv (those are
// accurate to about an ULP; these are MLX's approximations, erf's absolute
// error being ~1e-7) and serve random numbers only.
//
// MLX's erfinv calls the C library's logf; here that log is nuvec's float64
// log of the widened argument, rounded once to float (correctly rounded but
// for near-ties), which differs from glibc 2.36's logf in the last bit for
// a few arguments: docs/random.md gives the measured count and the ULP
// distance of the draws (tools/measure_mlx_math.cpp).
//
// Builtins only (no libm): the header is compiled by the CPU loops, nvcc,
// NVRTC and the CPU JIT, with contraction off, so every backend gives the
// same bits. Selects are computed on both values, as MLX's vector form does.
#pragma once

#include "math_f64.h"
#include "types.h"

namespace nuvec::kernels {

namespace mlx_math {

NUVEC_KERNEL_INLINE float select(bool c, float a, float b) {
  u32 m = 0u - u32(c);
  return bit_cast<float>((bit_cast<u32>(a) & m) | (bit_cast<u32>(b) & ~m));
}
NUVEC_KERNEL_INLINE float fabs(float x) {
  return bit_cast<float>(bit_cast<u32>(x) & 0x7fffffffu);
}

/// The float32 log the formulas use in place of the C library's logf:
/// log(x) in double, rounded once.
NUVEC_KERNEL_INLINE float log(float x) { return float(math::log(double(x))); }

/// MLX's exp: 2^(x log2 e) as 2^n times a degree-6 polynomial of the
/// fraction (n = floor(y + 1/2) taken in double), inf above 88, 0 below -88.
NUVEC_KERNEL_INLINE float exp(float x) {
  float y = x * 1.442695f;
  float n = float(math::f64detail::floor(double(y) + 0.5));
  float f = y - n;
  float p = 1.535336188319500e-4f;
  p = __builtin_fmaf(p, f, 1.339887440266574e-3f);
  p = __builtin_fmaf(p, f, 9.618437357674640e-3f);
  p = __builtin_fmaf(p, f, 5.550332471162809e-2f);
  p = __builtin_fmaf(p, f, 2.402264791363012e-1f);
  p = __builtin_fmaf(p, f, 6.931472028550421e-1f);
  p = __builtin_fmaf(p, f, 1.000000000000000f);
  // 2^n from the exponent field; n is in [-127, 127] wherever the result
  // is kept (elsewhere the selects below replace it).
  i32 e = i32(select(fabs(n) <= 127.0f, n, 0.0f));
  float r = bit_cast<float>(u32(e + 127) << 23) * p;
  r = select(x != x, x, r);
  r = select(x > 88.0f, bit_cast<float>(0x7f800000u), r);
  return select(x < -88.0f, 0.0f, r);
}

/// MLX's erf(|x|) (Abramowitz and Stegun 7.1.26 with MLX's exp); MlxErf
/// rounds it to the output type and negates it unless x > 0, as MLX.
NUVEC_KERNEL_INLINE float erf(float x) {
  float t = 1.0f / __builtin_fmaf(0.3275911f, fabs(x), 1.0f);
  float r = __builtin_fmaf(1.061405429f, t, -1.453152027f);
  r = __builtin_fmaf(r, t, 1.421413741f);
  r = __builtin_fmaf(r, t, -0.284496736f);
  r = __builtin_fmaf(r, t, 0.254829592f);
  float e = -exp(-x * x);
  return __builtin_fmaf(e * t, r, 1.0f);
}

/// MLX's erfinv: w = log(1 - a^2) (fma), then a times one of two
/// polynomials in w, the first where |w| > 6.125.
NUVEC_KERNEL_INLINE float erfinv(float a) {
  float w = log(__builtin_fmaf(a, 0.0f - a, 1.0f));
  float p = 3.03697567e-10f;
  p = __builtin_fmaf(p, w, 2.93243101e-8f);
  p = __builtin_fmaf(p, w, 1.22150334e-6f);
  p = __builtin_fmaf(p, w, 2.84108955e-5f);
  p = __builtin_fmaf(p, w, 3.93552968e-4f);
  p = __builtin_fmaf(p, w, 3.02698812e-3f);
  p = __builtin_fmaf(p, w, 4.83185798e-3f);
  p = __builtin_fmaf(p, w, -2.64646143e-1f);
  p = __builtin_fmaf(p, w, 8.40016484e-1f);
  float q = 5.43877832e-9f;
  q = __builtin_fmaf(q, w, 1.43285448e-7f);
  q = __builtin_fmaf(q, w, 1.22774793e-6f);
  q = __builtin_fmaf(q, w, 1.12963626e-7f);
  q = __builtin_fmaf(q, w, -5.61530760e-5f);
  q = __builtin_fmaf(q, w, -1.47697632e-4f);
  q = __builtin_fmaf(q, w, 2.31468678e-3f);
  q = __builtin_fmaf(q, w, 1.15392581e-2f);
  q = __builtin_fmaf(q, w, -2.32015476e-1f);
  q = __builtin_fmaf(q, w, 8.86226892e-1f);
  return a * select(fabs(w) > 6.125f, p, q);
}

}  // namespace mlx_math

// The functors of the primitives MlxExp, MlxErf and MlxErfInv (registry.h):
// every floating dtype computes in float32, as MLX's CPU code does (float64
// included), and rounds the result to its own type.
struct MlxExp {
  template <class T>
  requires is_float_v<T> NUVEC_KERNEL_INLINE T operator()(T x) const {
    return T(mlx_math::exp(float(x)));
  }
};
struct MlxErf {
  template <class T>
  requires is_float_v<T> NUVEC_KERNEL_INLINE T operator()(T x) const {
    // MLX rounds to T, then negates unless x > 0 (negation is exact).
    float m = float(T(mlx_math::erf(float(x))));
    return T(mlx_math::select(float(x) > 0.0f, m, -m));
  }
};
struct MlxErfInv {
  template <class T>
  requires is_float_v<T> NUVEC_KERNEL_INLINE T operator()(T x) const {
    return T(mlx_math::erfinv(float(x)));
  }
};

}  // namespace nuvec::kernels
