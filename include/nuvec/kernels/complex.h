// complex64_t (two float32) and its math, in the style of math_f64.h: builtins
// only, branch-free (bitwise blends), usable on the CPU, under nvcc and NVRTC.
//
// Every operation widens to float64, computes with the float64 functions of
// math_f64.h and rounds each component to float32 once at the end. Products
// of two floats are exact in double and float exponents cannot overflow
// double (|z|^2 <= 2^256), so the arithmetic needs no scaling: division is the
// textbook (a conj b) / |b|^2 evaluated in double, which is overflow-safe for
// every float input (this replaces Smith's algorithm) and has no branch.
//
// Accuracy (tests/complex_test.cpp, against std::complex<long double>, 10^5
// inputs per function over wide ranges plus dense sampling near the unit
// circle and the real axis): every component of every function measured
// within 0.5 float ULP of the component itself (the double-precision result
// is rounded once; at worst a double rounding), hence also within 0.5 ULP of
// |result|. The test asserts <= 1 ULP componentwise.
//
// Special values (C99 Annex G where practical):
// - * and / apply the Annex G recovery: an infinite operand gives an infinite
//   result even when the naive formula gives NaN + iNaN; nonzero / 0 is
//   infinite; finite / inf is zero.
// - abs: inf if either part is inf (even with a NaN part), NaN otherwise if
//   NaN.
// - sqrt: exact Annex G table (+0 + i0 for +-0 + i0 with the sign of the
//   imaginary zero kept, x +- i inf -> +inf +- i inf, -inf + iy -> +0 + i inf,
//   +inf + iy -> +inf + i0, NaN cases as specified).
// - exp: exp(+-0 + i0) = 1 + i0, exp(x +- i0) keeps the imaginary zero sign,
//   exp(+inf + iy) = inf cis y, exp(-inf + iy) = +0 cis y, exp(-inf + i
//   inf/NaN) = +0 + i0, exp(+inf + i inf/NaN) = +inf + iNaN.
// - log: log(-0 + i0) = -inf + i pi, log(+0 + i0) = -inf + i0, any infinite
//   part gives +inf real part, imaginary part is atan2(im, re) (C99 signs).
// - sinh/cosh/tanh (and sin/cos/tan through sin z = -i sinh(iz), ...): real
//   and imaginary zeros keep their signs as in Annex G; tanh(+-inf + iy) =
//   +-1 + i0 sin 2y for finite y; other infinity/NaN combinations give what the
//   formulas give (NaN parts), not necessarily Annex G's choices.
// - sign(0) = 0; sign of a value with an infinite part is NaN (not specified).
#pragma once

#include "config.h"
#include "math_f64.h"

namespace nuvec::kernels {

struct alignas(8) complex64_t {
  float re;
  float im;
  NUVEC_HOST_DEVICE constexpr complex64_t() : re(0.0f), im(0.0f) {}
  NUVEC_HOST_DEVICE constexpr complex64_t(float r, float i = 0.0f) : re(r), im(i) {}
};
static_assert(sizeof(complex64_t) == 8, "complex64_t must be 8 bytes");
static_assert(alignof(complex64_t) == 8, "complex64_t must be 8-byte aligned");

namespace cdetail {

using math::f64detail::sel;
constexpr double kInf = __builtin_huge_val();

struct cd {
  double re, im;
};
NUVEC_KERNEL_INLINE cd widen(complex64_t z) { return {double(z.re), double(z.im)}; }
NUVEC_KERNEL_INLINE complex64_t narrow(cd z) { return complex64_t(float(z.re), float(z.im)); }
NUVEC_KERNEL_INLINE bool isinf(double x) { return __builtin_fabs(x) == kInf; }
NUVEC_KERNEL_INLINE bool isnan(double x) { return !(x == x); }
// Non-short-circuit combinations (no branch, no clang warning).
NUVEC_KERNEL_INLINE bool lor(bool a, bool b) { return a | b; }
NUVEC_KERNEL_INLINE bool land(bool a, bool b) { return a & b; }
NUVEC_KERNEL_INLINE bool any_inf(double a, double b) { return lor(isinf(a), isinf(b)); }
NUVEC_KERNEL_INLINE bool any_nan(double a, double b) { return lor(isnan(a), isnan(b)); }
NUVEC_KERNEL_INLINE bool both_nan(double a, double b) { return land(isnan(a), isnan(b)); }
NUVEC_KERNEL_INLINE double copysign(double a, double b) { return __builtin_copysign(a, b); }
// 1 or 0 with the sign of x, for the Annex G recovery ("box" an infinity).
NUVEC_KERNEL_INLINE double box(double x) { return copysign(sel(isinf(x), 1.0, 0.0), x); }
NUVEC_KERNEL_INLINE double nan0(double x) { return sel(isnan(x), copysign(0.0, x), x); }

NUVEC_KERNEL_INLINE cd mul(cd a, cd b) {
  double ac = a.re * b.re, bd = a.im * b.im, ad = a.re * b.im, bc = a.im * b.re;
  cd r{ac - bd, ad + bc};
  // Annex G.5.1 recovery when both parts are NaN.
  bool a_inf = any_inf(a.re, a.im), b_inf = any_inf(b.re, b.im);
  bool any_big = lor(any_inf(ac, bd), any_inf(ad, bc));
  bool rec = both_nan(r.re, r.im);
  double ar = sel(a_inf, box(a.re), nan0(a.re)), ai = sel(a_inf, box(a.im), nan0(a.im));
  double br = sel(b_inf, box(b.re), nan0(b.re)), bi = sel(b_inf, box(b.im), nan0(b.im));
  // If only an overflowed product (no infinite operand), NaN parts become 0.
  bool do_rec = rec & (a_inf | b_inf | any_big);
  ar = sel(a_inf | b_inf, ar, nan0(a.re)), ai = sel(a_inf | b_inf, ai, nan0(a.im));
  br = sel(a_inf | b_inf, br, nan0(b.re)), bi = sel(a_inf | b_inf, bi, nan0(b.im));
  double rr = kInf * (ar * br - ai * bi), ri = kInf * (ar * bi + ai * br);
  return {sel(do_rec, rr, r.re), sel(do_rec, ri, r.im)};
}

NUVEC_KERNEL_INLINE cd div(cd a, cd b) {
  double den = b.re * b.re + b.im * b.im;  // no overflow for float inputs
  cd r{(a.re * b.re + a.im * b.im) / den, (a.im * b.re - a.re * b.im) / den};
  bool rec = both_nan(r.re, r.im);
  bool a_nan = any_nan(a.re, a.im);
  bool a_inf = any_inf(a.re, a.im), b_inf = any_inf(b.re, b.im);
  bool a_fin = !a_inf & !a_nan, b_fin = !b_inf & !any_nan(b.re, b.im);
  // nonzero / 0
  bool c1 = (den == 0.0) & !both_nan(a.re, a.im);
  double s = copysign(kInf, b.re);
  cd r1{s * a.re, s * a.im};
  // inf / finite
  bool c2 = a_inf & b_fin;
  double xr = box(a.re), xi = box(a.im);
  cd r2{kInf * (xr * b.re + xi * b.im), kInf * (xi * b.re - xr * b.im)};
  // finite / inf
  bool c3 = b_inf & a_fin;
  double yr = box(b.re), yi = box(b.im);
  cd r3{0.0 * (a.re * yr + a.im * yi), 0.0 * (a.im * yr - a.re * yi)};
  cd o = r;
  o.re = sel(rec & c3, r3.re, o.re), o.im = sel(rec & c3, r3.im, o.im);
  o.re = sel(rec & c2, r2.re, o.re), o.im = sel(rec & c2, r2.im, o.im);
  o.re = sel(rec & c1, r1.re, o.re), o.im = sel(rec & c1, r1.im, o.im);
  return o;
}

NUVEC_KERNEL_INLINE double hypot(double x, double y) {
  double h = __builtin_sqrt(x * x + y * y);  // exact squares for float inputs
  return sel(any_inf(x, y), kInf, h);
}

NUVEC_KERNEL_INLINE cd csinh(cd z) {
  double sx = math::sinh(z.re), chx = math::cosh(z.re);
  double sy = math::sin(z.im), cy = math::cos(z.im);
  cd r{sx * cy, chx * sy};
  r.im = sel(z.im == 0.0, z.im, r.im);
  r.re = sel((z.re == 0.0) & !isnan(cy), copysign(0.0, z.re) * cy, r.re);
  return r;
}
NUVEC_KERNEL_INLINE cd ccosh(cd z) {
  double sx = math::sinh(z.re), chx = math::cosh(z.re);
  double sy = math::sin(z.im), cy = math::cos(z.im);
  cd r{chx * cy, sx * sy};
  r.im = sel((z.im == 0.0) & !isnan(z.re), copysign(0.0, z.re) * z.im, r.im);
  r.im = sel((z.re == 0.0) & !isnan(sy), z.re * sy, r.im);
  return r;
}
NUVEC_KERNEL_INLINE cd ctanh(cd z) {
  // tanh z = (sinh x cosh x + i sin y cos y) / (sinh^2 x + cos^2 y): no
  // cancellation in the denominator (Kahan).
  double sx = math::sinh(z.re), chx = math::cosh(z.re);
  double sy = math::sin(z.im), cy = math::cos(z.im);
  double den = sx * sx + cy * cy;
  bool big = __builtin_fabs(z.re) > 20.0;
  cd r{(sx * chx) / den, (sy * cy) / den};
  r.re = sel(big, copysign(1.0, z.re), r.re);
  r.im = sel(z.im == 0.0, z.im, r.im);
  r.re = sel((z.re == 0.0) & !isnan(r.re), z.re, r.re);
  return r;
}

// log|z| and arg z in double.
NUVEC_KERNEL_INLINE cd clog(cd w) {
  using math::f64detail::dd;
  using math::f64detail::two_sum;
  dd s = two_sum(w.re * w.re, w.im * w.im);  // exact squares, exact sum
  bool near1 = (s.hi >= 0.5) & (s.hi <= 2.0);
  double lnear = math::log1p((s.hi - 1.0) + s.lo);  // s.hi - 1 exact here
  double lfar = math::log(s.hi);
  double re = 0.5 * sel(near1, lnear, lfar);
  re = sel(any_inf(w.re, w.im), kInf, re);
  return {re, math::atan2(w.im, w.re)};
}
NUVEC_KERNEL_INLINE cd csqrt(cd w) {
  double ar = __builtin_fabs(w.re);
  double az = hypot(w.re, w.im);
  double t = __builtin_sqrt((ar + az) * 0.5);
  double u = __builtin_fabs(w.im) / (t + t);
  bool pos = w.re >= 0.0;
  cd r{sel(pos, t, u), sel(pos, copysign(u, w.im), copysign(t, w.im))};
  // zero
  r.re = sel(t == 0.0, 0.0, r.re);
  r.im = sel(t == 0.0, w.im, r.im);
  // infinities (Annex G.6.4.2)
  r.im = sel((w.re == kInf) & !isnan(w.im), copysign(0.0, w.im), r.im);
  r.re = sel(w.re == kInf, kInf, r.re);
  r.im = sel((w.re == -kInf) & isnan(w.im), kInf, r.im);
  r.re = sel((w.re == -kInf) & isnan(w.im), w.im, r.re);
  r.re = sel(isinf(w.im), kInf, r.re);
  r.im = sel(isinf(w.im), w.im, r.im);
  return r;
}
}  // namespace cdetail

NUVEC_KERNEL_INLINE complex64_t operator+(complex64_t a, complex64_t b) {
  return complex64_t(a.re + b.re, a.im + b.im);
}
NUVEC_KERNEL_INLINE complex64_t operator-(complex64_t a, complex64_t b) {
  return complex64_t(a.re - b.re, a.im - b.im);
}
NUVEC_KERNEL_INLINE complex64_t operator-(complex64_t a) { return complex64_t(-a.re, -a.im); }
NUVEC_KERNEL_INLINE complex64_t operator*(complex64_t a, complex64_t b) {
  return cdetail::narrow(cdetail::mul(cdetail::widen(a), cdetail::widen(b)));
}
NUVEC_KERNEL_INLINE complex64_t operator/(complex64_t a, complex64_t b) {
  return cdetail::narrow(cdetail::div(cdetail::widen(a), cdetail::widen(b)));
}
NUVEC_KERNEL_INLINE bool operator==(complex64_t a, complex64_t b) {
  return (a.re == b.re) & (a.im == b.im);
}
NUVEC_KERNEL_INLINE bool operator!=(complex64_t a, complex64_t b) { return !(a == b); }

namespace math {

NUVEC_KERNEL_INLINE float abs(complex64_t z) { return float(cdetail::hypot(z.re, z.im)); }
NUVEC_KERNEL_INLINE complex64_t conj(complex64_t z) { return complex64_t(z.re, -z.im); }
NUVEC_KERNEL_INLINE complex64_t square(complex64_t z) { return z * z; }
NUVEC_KERNEL_INLINE complex64_t reciprocal(complex64_t z) { return complex64_t(1.0f, 0.0f) / z; }

NUVEC_KERNEL_INLINE complex64_t exp(complex64_t z) {
  using namespace cdetail;
  cd w = widen(z);
  double e = math::exp(w.re);
  double c = math::cos(w.im), s = math::sin(w.im);
  cd r{e * c, e * s};
  r.im = sel(w.im == 0.0, w.im, r.im);
  bool yfin = !lor(isinf(w.im), isnan(w.im));
  r.re = sel((w.re == -kInf) & !yfin, 0.0, r.re);
  r.im = sel((w.re == -kInf) & !yfin, 0.0, r.im);
  r.re = sel((w.re == kInf) & !yfin, kInf, r.re);
  return narrow(r);
}


NUVEC_KERNEL_INLINE complex64_t log(complex64_t z) {
  return cdetail::narrow(cdetail::clog(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t log2(complex64_t z) {
  cdetail::cd r = cdetail::clog(cdetail::widen(z));
  constexpr double k = 0x1.71547652b82fep+0;  // 1/ln 2
  return cdetail::narrow({r.re * k, r.im * k});
}
NUVEC_KERNEL_INLINE complex64_t log10(complex64_t z) {
  cdetail::cd r = cdetail::clog(cdetail::widen(z));
  constexpr double k = 0x1.bcb7b1526e50ep-2;  // 1/ln 10
  return cdetail::narrow({r.re * k, r.im * k});
}


NUVEC_KERNEL_INLINE complex64_t sqrt(complex64_t z) {
  return cdetail::narrow(cdetail::csqrt(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t rsqrt(complex64_t z) {
  using namespace cdetail;
  return narrow(div({1.0, 0.0}, csqrt(widen(z))));
}

NUVEC_KERNEL_INLINE complex64_t sinh(complex64_t z) {
  return cdetail::narrow(cdetail::csinh(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t cosh(complex64_t z) {
  return cdetail::narrow(cdetail::ccosh(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t tanh(complex64_t z) {
  return cdetail::narrow(cdetail::ctanh(cdetail::widen(z)));
}
// sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz); iz = (-y, x).
NUVEC_KERNEL_INLINE complex64_t sin(complex64_t z) {
  cdetail::cd r = cdetail::csinh({-double(z.im), double(z.re)});
  return cdetail::narrow({r.im, -r.re});
}
NUVEC_KERNEL_INLINE complex64_t cos(complex64_t z) {
  return cdetail::narrow(cdetail::ccosh({-double(z.im), double(z.re)}));
}
NUVEC_KERNEL_INLINE complex64_t tan(complex64_t z) {
  cdetail::cd r = cdetail::ctanh({-double(z.im), double(z.re)});
  return cdetail::narrow({r.im, -r.re});
}

NUVEC_KERNEL_INLINE complex64_t sign(complex64_t z) {
  using namespace cdetail;
  cd w = widen(z);
  double a = hypot(w.re, w.im);
  double inv = 1.0 / sel(a == 0.0, 1.0, a);
  return narrow({w.re * inv, w.im * inv});
}

}  // namespace math
}  // namespace nuvec::kernels
