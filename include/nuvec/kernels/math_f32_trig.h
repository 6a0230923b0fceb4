// float32 sin, cos, sincos and tan: the rules, helpers and measured bounds of
// math_f32.h (see its header comment), split out by family. The reductions
// they use (reduce_trig_small, reduce_trig) and the polynomials stay there.
#pragma once

#include "math_f32.h"

namespace nuvec::kernels::math {

/// The bound of sin_small and cos_small: they apply where |x| < 2^18.
constexpr float kTrigSmall = 0x1.0p18f;

/// Whether sin_small and cos_small apply to x (false for NaN and inf).
NUVEC_KERNEL_INLINE bool trig_small(float x) {
  return __builtin_fabsf(x) < kTrigSmall;
}

namespace detail {

struct SinCosF {
  float sin, cos;
};

// sin(x) and cos(x) where trig_small(x), through the float reduction (one
// reduction and polynomial pair serve both; unspecified values elsewhere).
NUVEC_KERNEL_INLINE SinCosF sincos_small(float x) {
  float h, l;
  u32 q;
  reduce_trig_small(__builtin_fabsf(x), &h, &l, &q);
  float hh = h * h;
  float s = sin_f(h, l, hh), c = cos_f(h, l, hh);
  float vs = self((q & 1u) != 0, c, s);
  vs = xorsign(bit_cast<float>(bit_cast<u32>(vs) ^ ((q & 2u) << 30)), x);
  float vc = self((q & 1u) != 0, s, c);
  vc = bit_cast<float>(bit_cast<u32>(vc) ^ (((q + 1u) & 2u) << 30));
  return {vs, vc};
}

// sin and cos through the double reduction: exact for every finite x.
NUVEC_KERNEL_INLINE SinCosF sincos_wide(float x) {
  u32 q;
  double r = reduce_trig(__builtin_fabsf(x), &q);
  double r2 = r * r;
  double sp = sin_poly(r, r2), cp = cos_poly(r2);
  double vs = neg_bit((q >> 1) & 1u, sel_bit(q & 1u, cp, sp));
  double vc = neg_bit(((q + 1u) >> 1) & 1u, sel_bit(q & 1u, sp, cp));
  return {xorsign(float(vs), x), float(vc)};
}

NUVEC_KERNEL_INLINE float sin_wide(float x) { return sincos_wide(x).sin; }
NUVEC_KERNEL_INLINE float cos_wide(float x) { return sincos_wide(x).cos; }

}  // namespace detail

/// Sine where trig_small(x), through the float reduction: the bits of
/// sin(x) there (unspecified values elsewhere).
NUVEC_KERNEL_INLINE float sin_small(float x) { return detail::sincos_small(x).sin; }

/// Cosine where trig_small(x): the bits of cos(x) there.
NUVEC_KERNEL_INLINE float cos_small(float x) { return detail::sincos_small(x).cos; }

// sin and cos: the float path where trig_small(x), else (NaN and inf too)
// the double one. On the GPU a real branch (warps mostly agree); on the CPU
// both are computed and selected, so loops of sin/cos stay vectorizable
// (loops over blocks of small arguments call sin_small/cos_small alone:
// kernels::Small).

/// Sine; exact argument reduction for every finite x.
NUVEC_KERNEL_INLINE float sin(float x) {
#ifdef __CUDA_ARCH__
  if (trig_small(x)) return sin_small(x);
  return detail::sin_wide(x);
#else
  return detail::self(trig_small(x), sin_small(x), detail::sin_wide(x));
#endif
}

/// Cosine; exact argument reduction for every finite x.
NUVEC_KERNEL_INLINE float cos(float x) {
#ifdef __CUDA_ARCH__
  if (trig_small(x)) return cos_small(x);
  return detail::cos_wide(x);
#else
  return detail::self(trig_small(x), cos_small(x), detail::cos_wide(x));
#endif
}

/// sin(x) and cos(x) from one argument reduction: the bits of sin and cos.
/// Generated kernels call it where a region takes both of one value.
NUVEC_KERNEL_INLINE void sincos(float x, float* s, float* c) {
#ifdef __CUDA_ARCH__
  detail::SinCosF v = trig_small(x) ? detail::sincos_small(x) : detail::sincos_wide(x);
  *s = v.sin;
  *c = v.cos;
#else
  detail::SinCosF a = detail::sincos_small(x), b = detail::sincos_wide(x);
  bool small = trig_small(x);
  *s = detail::self(small, a.sin, b.sin);
  *c = detail::self(small, a.cos, b.cos);
#endif
}

/// Tangent; exact argument reduction for every finite x.
NUVEC_KERNEL_INLINE float tan(float x) {
  u32 q;
  double r = detail::reduce_trig(__builtin_fabsf(x), &q);
  double r2 = r * r;
  double s = detail::sin_poly(r, r2), c = detail::cos_poly(r2);
  u32 odd = q & 1u;
  double v = detail::sel_bit(odd, -c, s) / detail::sel_bit(odd, s, c);
  return detail::xorsign(float(v), x);
}

}  // namespace nuvec::kernels::math
