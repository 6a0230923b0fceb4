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
// circle and the real axis, and for the inverse functions and log1p near the
// branch points, on the cuts and near |1 + z| = 1): every component of every
// function measured within 0.5 float ULP of the component itself (the
// double-precision result is rounded once; at worst a double rounding), hence
// also within 0.5 ULP of |result|. The test asserts <= 1 ULP componentwise.
// logaddexp (MLX's formula, below) is within 0.5 ULP of |result|.
//
// Special values: MLX computes complex functions with std::complex, that is
// glibc on Linux, so nuvec follows glibc's tables (C99 Annex G, with glibc's
// choices where Annex G leaves a sign unspecified); each was compared with
// MLX 0.32.4 over a grid of zeros, infinities, NaNs and finite values.
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
//   inf/NaN) = +0 +- i0 (sign of the imaginary part), exp(+inf + i inf/NaN) =
//   +inf + iNaN.
// - log: log(-0 + i0) = -inf + i pi, log(+0 + i0) = -inf + i0, any infinite
//   part gives +inf real part, imaginary part is atan2(im, re) (C99 signs).
// - sinh, cosh, tanh, cos (= cosh(iz)) and tan (= -i tanh(iz)): glibc's
//   tables; sin = -i sinh(iz) except that sin((inf or NaN) +- i inf) is
//   NaN + i inf (glibc's csin), not the rotation's NaN - i inf.
// - log1p, asin, acos, atan, asinh, acosh, atanh: glibc's tables (log1p as
//   log(1 + z), log1p(+-0 +- i0) = z, as MLX).
// - sign z = z / (|z|, 0) through the complex division, as MLX: z for z == 0,
//   NaN + iNaN if a part is infinite or NaN.
#pragma once

#include "config.h"
#include "math_f64.h"

namespace nuvec::kernels {

struct alignas(8) complex64_t {
  float re;
  float im;
  NUVEC_HOST_DEVICE constexpr complex64_t() : re(0.0f), im(0.0f) {}
  NUVEC_HOST_DEVICE constexpr complex64_t(float r, float i = 0.0f) : re(r), im(i) {}
  NUVEC_HOST_DEVICE constexpr float real() const { return re; }
  NUVEC_HOST_DEVICE constexpr float imag() const { return im; }
#ifndef __CUDACC_RTC__
  // To and from std::complex<float> (or any type with real() and imag()),
  // as MLX's complex64_t, without including <complex> here (host code).
  template <class C, class = decltype(static_cast<const C*>(nullptr)->imag()),
            class = decltype(C(0.0f, 0.0f))>
  constexpr complex64_t(const C& c)  // NOLINT: implicit, as std::complex
      : re(static_cast<float>(c.real())), im(static_cast<float>(c.imag())) {}
  template <class C, class = decltype(static_cast<const C*>(nullptr)->imag()),
            class = decltype(C(0.0f, 0.0f))>
  constexpr operator C() const {  // NOLINT
    return C(re, im);
  }
#endif
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
NUVEC_KERNEL_INLINE bool isfin(double x) { return x - x == 0.0; }  // not inf, not NaN
NUVEC_KERNEL_INLINE double kNaN() { return math::f64detail::qnan(); }
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

// The special values of sinh, cosh and tanh (and of sin, cos and tan through
// the rotations below) are glibc's (MLX calls std::complex, hence glibc):
// C99 Annex G with glibc's choices where Annex G leaves a sign unspecified.
NUVEC_KERNEL_INLINE cd csinh(cd z) {
  double sx = math::sinh(z.re), chx = math::cosh(z.re);
  double sy = math::sin(z.im), cy = math::cos(z.im);
  cd r{sx * cy, chx * sy};
  bool yfin = isfin(z.im);
  r.im = sel(z.im == 0.0, z.im, r.im);
  // sinh(+-0 + iy) = +-0 cos y + i sin y; +-0 + i NaN for y inf or NaN
  r.re = sel(z.re == 0.0, sel(yfin, copysign(0.0, z.re) * cy, z.re), r.re);
  r.re = sel(isinf(z.re) & !yfin, kInf, r.re);  // +inf + i NaN
  return r;
}
NUVEC_KERNEL_INLINE cd ccosh(cd z) {
  double sx = math::sinh(z.re), chx = math::cosh(z.re);
  double sy = math::sin(z.im), cy = math::cos(z.im);
  cd r{chx * cy, sx * sy};
  bool yfin = isfin(z.im);
  r.im = sel((z.im == 0.0) & !isnan(z.re), copysign(0.0, z.re) * z.im, r.im);
  r.im = sel((z.re == 0.0) & yfin, z.re * sy, r.im);
  r.im = sel((z.im == 0.0) & isnan(z.re), z.im, r.im);  // NaN +- i0
  r.im = sel((z.re == 0.0) & !yfin, 0.0, r.im);         // NaN + i0
  r.re = sel(isinf(z.re) & !yfin, kInf, r.re);          // +inf + i NaN
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
  r.re = sel(z.re == 0.0, z.re, r.re);
  // x infinite: +-1 + i0 (sign of sin y cos y, or of y when y is not finite);
  // otherwise non-finite: NaN + i0 for y = 0, else (x if x == 0, else NaN) +
  // i NaN.
  bool xinf = isinf(z.re);
  double sre = sel(xinf, copysign(1.0, z.re), sel((z.re == 0.0) | (z.im == 0.0), z.re, kNaN()));
  double sim = sel(xinf, copysign(0.0, sel(isfin(z.im), sy * cy, z.im)),
                   sel(z.im == 0.0, z.im, kNaN()));
  bool fin = land(isfin(z.re), isfin(z.im));
  return {sel(fin, r.re, sre), sel(fin, r.im, sim)};
}
NUVEC_KERNEL_INLINE cd cexp(cd w) {
  double e = math::exp(w.re);
  double c = math::cos(w.im), s = math::sin(w.im);
  cd r{e * c, e * s};
  r.im = sel(w.im == 0.0, w.im, r.im);
  bool yfin = isfin(w.im);
  r.re = sel((w.re == -kInf) & !yfin, 0.0, r.re);
  r.im = sel((w.re == -kInf) & !yfin, copysign(0.0, w.im), r.im);
  r.re = sel((w.re == kInf) & !yfin, kInf, r.re);
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

constexpr double kPi = 0x1.921fb54442d18p+1;
constexpr double kPi2 = 0x1.921fb54442d18p+0;
constexpr double kPi4 = 0x1.921fb54442d18p-1;
constexpr double k3Pi4 = 0x1.2d97c7f3321d2p+1;

// log(1 + z). Re = log|1+z| = log1p(2x + x^2 + y^2) / 2 with the sum kept as
// a double-double (x^2, y^2 and 2x are exact for float inputs), or, when
// |1+z|^2 is outside [0.5, 2] (where 1 + x is exact if it is small), log|1+z|
// directly; Im = atan2(y, 1 + x). log1p(+-0 +- i0) = z, as MLX.
NUVEC_KERNEL_INLINE cd clog1p(cd w) {
  using math::f64detail::dd;
  using math::f64detail::two_sum;
  double x = w.re, y = w.im;
  dd q = two_sum(x * x, y * y);
  dd t = two_sum(q.hi, 2.0 * x);
  double s = t.hi + (t.lo + q.lo);
  bool near = (s >= -0.5) & (s <= 1.0);
  double re = sel(near, 0.5 * math::log1p(s), clog({1.0 + x, y}).re);
  re = sel((x == 0.0) & (y == 0.0), x, re);
  return {re, math::atan2(y, 1.0 + x)};
}

// Inverse functions: Kahan's formulas ("Branch cuts for complex elementary
// functions", 1987) evaluated in double, which get the branch cuts and the
// signs of zeros right with no cancellation:
//   asin z  = atan2(x, Re(s1 s2)) + i asinh(Im(conj(s1) s2)),
//   acos z  = 2 atan2(Re s1, Re s2) + i asinh(Im(conj(s2) s1)),
//             s1 = sqrt(1 - z), s2 = sqrt(1 + z);
//   acosh z = asinh(Re(conj(t1) t2)) + 2i atan2(Im t1, Re t2),
//             t1 = sqrt(z - 1), t2 = sqrt(z + 1);
//   atanh z = log1p(4x / ((1-x)^2 + y^2)) / 4
//             + i atan2(2y, (1-x)(1+x) - y^2) / 2, for x >= 0 (odd);
//   asinh z = -i asin(iz), atan z = -i atanh(iz).
// For float inputs nothing overflows or underflows in double. Special values
// (an infinite or NaN part) follow glibc's tables (C99 Annex G).
NUVEC_KERNEL_INLINE cd casin_fin(cd z) {
  cd s1 = csqrt({1.0 - z.re, -z.im});
  cd s2 = csqrt({1.0 + z.re, z.im});
  return {math::atan2(z.re, s1.re * s2.re - s1.im * s2.im),
          math::asinh(s1.re * s2.im - s1.im * s2.re)};
}
// asinh of a value with an infinite or NaN part.
NUVEC_KERNEL_INLINE cd casinh_special(cd z) {
  double x = z.re, y = z.im;
  bool yinf = isinf(y), xfin = isfin(x);
  double re = sel(yinf, copysign(kInf, x), sel(xfin, kNaN(), x));
  bool zero_im = lor(land(isinf(x), !isnan(y)), land(isnan(x), y == 0.0));
  double im = sel(yinf, sel(isnan(x), kNaN(), copysign(sel(xfin, kPi2, kPi4), y)),
                  sel(!xfin & zero_im, copysign(0.0, y), kNaN()));
  return {re, im};
}
NUVEC_KERNEL_INLINE bool finite2(cd z) { return land(isfin(z.re), isfin(z.im)); }
NUVEC_KERNEL_INLINE cd pick(bool c, cd a, cd b) { return {sel(c, a.re, b.re), sel(c, a.im, b.im)}; }

NUVEC_KERNEL_INLINE cd casin(cd z) {
  cd h = casinh_special({-z.im, z.re});  // asin z = -i asinh(iz)
  return pick(finite2(z), casin_fin(z), {h.im, -h.re});
}
NUVEC_KERNEL_INLINE cd casinh(cd z) {
  cd a = casin_fin({-z.im, z.re});  // asinh z = -i asin(iz)
  return pick(finite2(z), {a.im, -a.re}, casinh_special(z));
}
NUVEC_KERNEL_INLINE cd cacos(cd z) {
  cd s1 = csqrt({1.0 - z.re, -z.im});
  cd s2 = csqrt({1.0 + z.re, z.im});
  cd r{2.0 * math::atan2(s1.re, s2.re), math::asinh(s2.re * s1.im - s2.im * s1.re)};
  // special values: acos z = pi/2 - asin z
  cd a = casin(z);
  cd sp{kPi2 - a.re, -a.im};
  return pick(finite2(z), r, sp);
}
NUVEC_KERNEL_INLINE cd cacosh(cd z) {
  double x = z.re, y = z.im;
  cd t1 = csqrt({x - 1.0, y});
  cd t2 = csqrt({x + 1.0, y});
  cd r{math::asinh(t1.re * t2.re + t1.im * t2.im), 2.0 * math::atan2(t1.im, t2.re)};
  // special values: +inf + i(angle), or NaN
  bool yinf = isinf(y), xinf = isinf(x);
  double ang = sel(xinf, sel(x < 0.0, k3Pi4, kPi4), kPi2);
  double im = sel(yinf, sel(isnan(x), kNaN(), copysign(ang, y)),
                  sel(xinf & !isnan(y), copysign(sel(x < 0.0, kPi, 0.0), y), kNaN()));
  im = sel((x == 0.0) & isnan(y), kPi2, im);  // NaN + i pi/2
  double re = sel(yinf | xinf, kInf, kNaN());
  return pick(finite2(z), r, {re, im});
}
NUVEC_KERNEL_INLINE cd catanh(cd z) {
  double sg = copysign(1.0, z.re);
  double x = __builtin_fabs(z.re), y = sg * z.im;  // atanh is odd: x >= 0
  double omx = 1.0 - x;
  double re = 0.25 * math::log1p((4.0 * x) / (omx * omx + y * y));
  double im = 0.5 * math::atan2(2.0 * y, omx * (1.0 + x) - y * y);
  cd r{sg * re, sg * im};
  // special values: +-0 + i pi/2 (sign of y) for an infinite part or for
  // x = 0 with y NaN (then NaN imaginary part), NaN otherwise.
  bool yinf = isinf(z.im), xinf = isinf(z.re);
  bool zero_re = yinf | xinf | (z.re == 0.0);
  double sre = sel(zero_re, copysign(0.0, z.re), kNaN());
  double sim = sel(zero_re & !isnan(z.im), copysign(kPi2, z.im), kNaN());
  return pick(finite2(z), r, {sre, sim});
}
NUVEC_KERNEL_INLINE cd catan(cd z) {
  cd h = catanh({-z.im, z.re});  // atan z = -i atanh(iz)
  return {h.im, -h.re};
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
  return cdetail::narrow(cdetail::cexp(cdetail::widen(z)));
}

NUVEC_KERNEL_INLINE complex64_t log(complex64_t z) {
  return cdetail::narrow(cdetail::clog(cdetail::widen(z)));
}
/// x^y as MLX's exp(y * log(x)), evaluated in double and rounded once.
NUVEC_KERNEL_INLINE complex64_t pow(complex64_t x, complex64_t y) {
  return cdetail::narrow(
      cdetail::cexp(cdetail::mul(cdetail::widen(y), cdetail::clog(cdetail::widen(x)))));
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
  using namespace cdetail;
  cd r = csinh({-double(z.im), double(z.re)});
  // glibc's csin gives +inf (not the rotation's -inf) for (inf or NaN) +- i inf
  double im = sel(land(isinf(z.im), !isfin(z.re)), kInf, -r.re);
  return narrow({r.im, im});
}
NUVEC_KERNEL_INLINE complex64_t cos(complex64_t z) {
  return cdetail::narrow(cdetail::ccosh({-double(z.im), double(z.re)}));
}
NUVEC_KERNEL_INLINE complex64_t tan(complex64_t z) {
  cdetail::cd r = cdetail::ctanh({-double(z.im), double(z.re)});
  return cdetail::narrow({r.im, -r.re});
}

// sign z = z / |z| through the complex division by (|z|, 0), as MLX, which
// fixes the special values and signs of zeros: a part that is infinite or NaN
// gives NaN + i NaN, sign(-1 - i0) = -1 + i0, and sign(z) = z for z == 0.
// |z| is kept in double (MLX rounds it to float first, which costs up to
// 1.4 ULP componentwise; nuvec stays within 0.5).
NUVEC_KERNEL_INLINE complex64_t sign(complex64_t z) {
  using namespace cdetail;
  cd w = widen(z);
  cd q = div(w, {hypot(w.re, w.im), 0.0});
  bool zero = (w.re == 0.0) & (w.im == 0.0);
  return narrow(pick(zero, w, q));
}

NUVEC_KERNEL_INLINE complex64_t log1p(complex64_t z) {
  return cdetail::narrow(cdetail::clog1p(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t asin(complex64_t z) {
  return cdetail::narrow(cdetail::casin(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t acos(complex64_t z) {
  return cdetail::narrow(cdetail::cacos(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t atan(complex64_t z) {
  return cdetail::narrow(cdetail::catan(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t asinh(complex64_t z) {
  return cdetail::narrow(cdetail::casinh(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t acosh(complex64_t z) {
  return cdetail::narrow(cdetail::cacosh(cdetail::widen(z)));
}
NUVEC_KERNEL_INLINE complex64_t atanh(complex64_t z) {
  return cdetail::narrow(cdetail::catanh(cdetail::widen(z)));
}

// logaddexp as MLX: hi = maximum(a, b), lo = minimum(a, b) (a NaN part of a
// propagates a, otherwise lexicographic order), hi when lo == -inf + i0 or
// hi == inf + i0, else hi + log1p(exp(lo - hi)), in double.
NUVEC_KERNEL_INLINE complex64_t logaddexp(complex64_t a, complex64_t b) {
  using namespace cdetail;
  cd x = widen(a), y = widen(b);
  bool a_nan = any_nan(x.re, x.im);
  bool x_lt_y = (x.re < y.re) | ((x.re == y.re) & (x.im < y.im));
  bool y_lt_x = (y.re < x.re) | ((y.re == x.re) & (y.im < x.im));
  cd hi = pick(a_nan | y_lt_x, x, y), lo = pick(a_nan | x_lt_y, x, y);
  bool keep = ((lo.re == -kInf) & (lo.im == 0.0)) | ((hi.re == kInf) & (hi.im == 0.0));
  cd l = clog1p(cexp({lo.re - hi.re, lo.im - hi.im}));
  return narrow(pick(keep, hi, {hi.re + l.re, hi.im + l.im}));
}

}  // namespace math
}  // namespace nuvec::kernels
