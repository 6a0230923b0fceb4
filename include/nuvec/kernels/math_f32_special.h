// float32 erf, erfinv, sigmoid and pow: the rules, helpers and measured
// bounds of math_f32.h (see its header comment), split out by family.
#pragma once

#include "math_f32.h"
#include "math_f32_trig.h"

namespace nuvec::kernels::math {

/// Error function.
NUVEC_KERNEL_INLINE float erf(float x) {
  float a = __builtin_fabsf(x);
  a = detail::self(a > 4.0f, 4.0f, a);  // NaN passes; erf(4) rounds to 1
  float a2 = a * a;
  // a < 1: erf(a) = a + a Q(a^2).
  float q = detail::hornerf(a2, 0x1.4c2f4cp-14f, -0x1.a5099ep-11f,
                            0x1.542deep-8f, -0x1.b7fe8ep-6f, 0x1.ce2d50p-4f,
                            -0x1.812740p-2f, 0x1.06eba8p-3f);
  float small = __builtin_fmaf(a, q, a);
  // a >= 1: erf(a) = 1 - E(a - 2.25), E fitted to erfc on [1, 4] with an
  // absolute error of 2^-30.5 (the result's ULP there is 2^-24): no exp.
  float big = 1.0f - detail::hornerf(
      a - 2.25f, 0x1.7933aep-22f, -0x1.284aeep-19f, 0x1.06dc7cp-19f,
      0x1.45affep-16f, -0x1.100a66p-14f, 0x1.0d0af6p-16f, 0x1.81d9b8p-12f,
      -0x1.06f37cp-10f, 0x1.6038ecp-11f, 0x1.7ce2b4p-9f, -0x1.5d3fcap-7f,
      0x1.38a80cp-6f, -0x1.63eefcp-6f, 0x1.074b82p-6f, -0x1.d4144ep-8f,
      0x1.7f7138p-10f);
  return detail::xorsign(detail::self(a < 1.0f, small, big), x);
}

/// Inverse error function; +-inf at +-1, NaN outside [-1, 1].
NUVEC_KERNEL_INLINE float erfinv(float y) {
  float ay = __builtin_fabsf(y);
  bool ok = ay < 1.0f;
  double a = detail::sel(ok, double(ay), 0.0);
  double w = -detail::log_d((1.0 - a) * (1.0 + a));  // exact factors
  // Starting guess erfinv(a)/a ~ P(w) (rel. error ~2^-26), then one Newton
  // step.
  double p1 = detail::horner(w, -0x1.32e60d3c53520p-27, 0x1.e1b098062b061p-23,
                             -0x1.0d8bad835bc04p-19, 0x1.168bd9f76a2bdp-18,
                             0x1.71821645ef351p-15, -0x1.095f5cec24910p-13,
                             -0x1.3216adaa204fep-9, 0x1.7a716b3c956dfp-7,
                             0x1.db2a01644bc5ap-3, 0x1.c5bf89108eb04p-1);
  double p2 = detail::horner(
      __builtin_sqrt(w), 0x1.c2d4df8cf28ecp-14, -0x1.a3db2fab22387p-9,
      0x1.581fa02dd7065p-5, -0x1.44da6e29b777bp-2, 0x1.837dbad579ff5p+0,
      -0x1.2c9bcbf42fdf0p+2, 0x1.2b61161ab1e83p+3, -0x1.67588974ad78cp+3,
      0x1.f9a762710fb13p+2, -0x1.765aece43c718p+0);
  double x0 = a * detail::sel(w < 5.0, p1, p2);
  double x2 = x0 * x0;
  double ex2 = detail::exp_d(x2);
  // erf(x0) - a, written through erfc for x0 >= 1 to keep it accurate.
  double xc = detail::sel(x0 < 1.0, 1.0, x0);
  double res_small = x0 * detail::erf_small(x2) - a;
  double res_big = (1.0 - a) - detail::erfc_scaled(xc) / ex2;
  double res = detail::sel(x0 < 1.0, res_small, res_big);
  double x1 = x0 - res * (0x1.c5bf891b4ef6bp-1 * ex2);  // sqrt(pi)/2
  float spec = detail::self(ay == 1.0f, detail::kInfF, detail::kNanF);
  return detail::xorsign(detail::self(ok, float(x1), spec), y);
}

/// Logistic sigmoid 1 / (1 + e^-x).
NUVEC_KERNEL_INLINE float sigmoid(float x) {
  float a = __builtin_fabsf(x);
  a = detail::self(a > 104.0f, 104.0f, a);  // NaN passes
  // e = e^-|x| as a pair; x >= 0: 1 / (1 + e), x < 0: e / (1 + e).
  i32 n;
  float r, lo;
  detail::exp_core(-a, &n, &r, &lo);
  float s1 = detail::pow2f(n >> 1), s2 = detail::pow2f(n - (n >> 1));
  float s = s1 * s2;  // exact unless the result is subnormal (tail below)
  float eh, el;
  detail::exp_join(s, r, lo, &eh, &el);
  float dh = 1.0f + eh;
  float dl = ((1.0f - dh) + eh) + el;  // Fast2Sum: 1 >= eh
  bool neg = x < 0.0f;
  float v = detail::div_pair(detail::self(neg, eh, 1.0f),
                             detail::self(neg, el, 0.0f), dh, dl);
  // x < -80: sigmoid(x) = e^x (1 - e^x) rounds like e^x, maybe subnormal.
  float tail = __builtin_fmaf(s1, r + lo, s1) * s2;  // as in exp
  return detail::self(x < -80.0f, tail, v);
}

/// x^y with the C99 (Annex F) special cases: pow(x, +-0) = 1, pow(1, y) = 1,
/// pow(-1, +-inf) = 1, negative x only with integer y (else NaN), signed
/// zeros and infinities from odd integer y.
NUVEC_KERNEL_INLINE float pow(float x, float y) {
  double z = double(y) * detail::log2_abs(x);
  z = detail::sel(z > 250.0, 250.0, z);
  z = detail::sel(z < -250.0, -250.0, z);
  float mag = float(detail::exp2_d(z));
  bool y_int = __builtin_rintf(y) == y;  // inf counts as an even integer
  float h = 0.5f * y;
  bool y_odd = y_int & (__builtin_rintf(h) != h);
  bool neg = (bit_cast<u32>(x) >> 31) != 0;
  float r = detail::self(neg & y_odd, -mag, mag);
  r = detail::self((x < 0.0f) & (x > -detail::kInfF) & !y_int, detail::kNanF,
                   r);
  bool one = (y == 0.0f) | (x == 1.0f) |
             ((x == -1.0f) & (__builtin_fabsf(y) == detail::kInfF));
  return detail::self(one, 1.0f, r);
}

}  // namespace nuvec::kernels::math
