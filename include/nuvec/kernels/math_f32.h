// Vectorizable float32 math: exp, exp2, expm1, log, log2, log10, log1p, sin,
// cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, asinh, acosh, atanh,
// erf, erfinv, sigmoid, pow.
//
// Design, two kinds of kernel:
// - float32 kernels for the hot functions exp, exp2, expm1, log, log2, log10,
//   log1p, tanh, sigmoid, erf: float polynomials (fitted by
//   tools/fit_math_f32.py, float coefficients), Cody-Waite reduction with an
//   exact first step, explicit fma, and float pairs (hi + lo) where a final
//   rounding would otherwise be amplified: exp's reduced argument, the
//   e ln2 + ln(1 + f) sums, and e^-|x| in sigmoid, which ends in a
//   compensated division (detail::div_pair). tanh needs neither: an odd
//   polynomial below 0.8, above it 1 - 2s - s V with e^-2|x| = s (1 + t),
//   1 - 2s exact and V's rounding scaled by s <= 1/4 (no division).
//   Subnormal results are rounded once (exp's scale 2^n is applied as two
//   exact factors), never flushed.
//   Also sin and cos where |x| < 2^18 (sin_small, cos_small): a float
//   Cody-Waite reduction to a float pair (pi/2 in three parts, exact there).
// - every other function (and sin, cos from 2^18 on) widens to double,
//   evaluates a double kernel whose relative error is about 2^-40 or
//   better, and rounds once to float (correctly rounded except at rare
//   near-ties).
// Only + - * /, sqrt, fma, rint, comparisons, bitwise selects and bit casts
// are used: no libm, no tables in memory. Results are bit-identical across
// g++ 12 / clang 14, -O0..-O3, AVX2 and AVX-512 (-ffp-contract=off).
// Selects are bitwise blends of values both computed: g++ turns `?:` into
// branches, and does not vectorize floor/trunc here (rint is used instead).
// All 24 functions auto-vectorize in a plain loop with g++ -O3 and clang -O3,
// -march=native (AVX-512) and -mavx2 -mfma.
//
// Stated bounds (asserted by tests/math_f32_test.cpp, over all float inputs;
// pow, atan2: over sampled pairs): float32 kernels <= 1.5 ULP, sin and cos
// <= 0.75 ULP, double-based ones <= 1 ULP.
// Measured over all 2^32 inputs (odd functions: the 2^31 non-negative ones;
// their symmetry is exact and tested) by tools/exhaustive_math_f32.cpp against
// glibc's double result (erfinv: double Newton refinement on glibc erf/erfc):
//   float32 kernels, max ULP:
//     exp 0.801, exp2 0.820, expm1 1.047, log 0.887, log2 0.986,
//     log10 0.851, log1p 0.977, tanh 0.839, sigmoid 0.824, erf 0.991
//     (0.03-0.7% of results differ from the correctly rounded float);
//     sin 0.7185 (at 0x1.227034p+14), cos 0.7177 (at 0x1.826f2ap+15), both
//     below 2^18 (0.11% and 0.10% of all results not correctly rounded).
//   double-based, max ULP 0.5000 (all results within half an ULP of the
//   double reference): asin acos atan sinh cosh asinh acosh atanh erfinv;
//   tan 0.5047, and sin 0.5028, cos 0.5024 from 2^18 on (worst just below
//     2^52, where the double Cody-Waite reduction is least precise).
//   Results differing from the rounded double reference (near-ties): 0-2 for
//   sinh, cosh, asinh, acosh, atanh; 29-33 for asin, acos, atan; 352 for
//   tan; ~240 for erfinv.
//   pow, atan2 (sampled in the tests): max 0.5000 ULP.
//
// Special values follow C99 Annex F: NaN in -> NaN out, signed zeros kept
// (sin(-0) = -0, expm1(-0) = -0, ...), domain errors give NaN, overflow gives
// inf, underflow gives correctly rounded subnormals or 0. erfinv(+-1) = +-inf.
// sin/cos/tan reduce exactly for every finite input: sin and cos in float
// below 2^18, else a three-part Cody-Waite reduction in double below 2^52
// and a branch-free Payne-Hanek above.
#pragma once

// erf, erfinv, sigmoid and pow are in math_f32_special.h, sin, cos, sincos
// and tan in math_f32_trig.h (each includes this file; math_f32_special.h
// includes math_f32_trig.h).

#include "nuvec/kernels/config.h"

namespace nuvec::kernels::math {
namespace detail {

// Selects on values that are both computed, as bitwise blends: g++ turns
// `?:` into branches that stop vectorization (seen with AVX2 and AVX-512).
NUVEC_KERNEL_INLINE u32 selu(bool c, u32 a, u32 b) {
  u32 m = 0u - u32(c);
  return (a & m) | (b & ~m);
}
NUVEC_KERNEL_INLINE i32 seli(bool c, i32 a, i32 b) {
  return i32(selu(c, u32(a), u32(b)));
}
NUVEC_KERNEL_INLINE float self(bool c, float a, float b) {
  return bit_cast<float>(selu(c, bit_cast<u32>(a), bit_cast<u32>(b)));
}
NUVEC_KERNEL_INLINE double sel(bool c, double a, double b) {
  u64 m = 0ull - u64(c);
  return bit_cast<double>((bit_cast<u64>(a) & m) | (bit_cast<u64>(b) & ~m));
}
// Select on an integer bit (0 or 1), and a sign flip by an integer bit: g++
// does not vectorize a bool made from a 32-bit test used on 64-bit lanes.
NUVEC_KERNEL_INLINE double sel_bit(u32 bit, double a, double b) {
  u64 m = 0ull - u64(bit);
  return bit_cast<double>((bit_cast<u64>(a) & m) | (bit_cast<u64>(b) & ~m));
}
NUVEC_KERNEL_INLINE double neg_bit(u32 bit, double v) {
  return bit_cast<double>(bit_cast<u64>(v) ^ (u64(bit) << 63));
}

// Horner's rule, coefficients from the highest degree down.
NUVEC_KERNEL_INLINE double horner(double, double c) { return c; }
template <class... Cs>
NUVEC_KERNEL_INLINE double horner(double x, double a, double b, Cs... cs) {
  return horner(x, a * x + b, cs...);
}

// v with its sign bit flipped when s is negative (applies an odd symmetry).
NUVEC_KERNEL_INLINE float xorsign(float v, float s) {
  return bit_cast<float>(bit_cast<u32>(v) ^ (bit_cast<u32>(s) & 0x80000000u));
}

constexpr float kInfF = __builtin_inff();
constexpr float kNanF = __builtin_nanf("");
constexpr double kInf = __builtin_inf();
constexpr double kLn2 = 0x1.62e42fefa39efp-1;
constexpr double kLn2Hi = 0x1.62e42fefa3800p-1;  // 43 bits: n*kLn2Hi exact
constexpr double kLn2Lo = 0x1.ef35793c76730p-45;
constexpr double kLog2e = 0x1.71547652b82fep+0;
constexpr double kLog10e = 0x1.bcb7b1526e50ep-2;
constexpr double kLog10Of2 = 0x1.34413509f79ffp-2;
constexpr double kPi = 0x1.921fb54442d18p+1;
constexpr double kPio2 = 0x1.921fb54442d18p+0;
constexpr double kPio4 = 0x1.921fb54442d18p-1;

// 2^i as a double for |i| <= 250, from two float powers (exact products).
NUVEC_KERNEL_INLINE double pow2i(i32 i) {
  i32 i1 = i >> 1;
  i32 i2 = i - i1;
  float s1 = bit_cast<float>(u32(i1 + 127) << 23);
  float s2 = bit_cast<float>(u32(i2 + 127) << 23);
  return double(s1) * double(s2);
}

// Integer part of a double known to be integral and small, NaN mapped to 0
// (a NaN-to-int cast is undefined and differs between x86 and PTX).
NUVEC_KERNEL_INLINE i32 to_i32(double n) { return i32(sel(n == n, n, 0.0)); }

// e^x for |x| <= 170 (NaN propagates), relative error ~2^-50.
NUVEC_KERNEL_INLINE double exp_d(double x) {
  double n = __builtin_rint(x * kLog2e);
  double r =
      (x - n * kLn2Hi) - n * kLn2Lo;  // first product and difference exact
  double p =
      horner(r, 0x1.ae64567f544e4p-26, 0x1.27e4fb7789f5cp-22,
             0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16,
             0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10, 0x1.1111111111111p-7,
             0x1.5555555555555p-5, 0x1.5555555555555p-3, 0x1.0p-1, 1.0, 1.0);
  return p * pow2i(to_i32(n));
}

// e^x - 1 for |x| <= 170, relative error ~2^-50 (exact cancellation at n=0).
NUVEC_KERNEL_INLINE double expm1_d(double x) {
  double n = __builtin_rint(x * kLog2e);
  double r = (x - n * kLn2Hi) - n * kLn2Lo;
  double q =
      horner(r, 0x1.ae64567f544e4p-26, 0x1.27e4fb7789f5cp-22,
             0x1.71de3a556c734p-19, 0x1.a01a01a01a01ap-16,
             0x1.a01a01a01a01ap-13, 0x1.6c16c16c16c17p-10, 0x1.1111111111111p-7,
             0x1.5555555555555p-5, 0x1.5555555555555p-3, 0x1.0p-1, 1.0);
  double pm1 = r * q;  // e^r - 1
  double s = pow2i(to_i32(n));
  return s * pm1 + (s - 1.0);
}

// 2^x for |x| <= 250 (any double; x - n is exact), relative error ~2^-50.
NUVEC_KERNEL_INLINE double exp2_d(double x) {
  double n = __builtin_rint(x);
  double r = x - n;
  double p = horner(
      r, 0x1.e8cac7351bb25p-32, 0x1.e4cf5158b8ecap-28, 0x1.b5253d395e7c4p-24,
      0x1.62c0223a5c824p-20, 0x1.ffcbfc588b0c7p-17, 0x1.430912f86c787p-13,
      0x1.5d87fe78a6731p-10, 0x1.3b2ab6fba4e77p-7, 0x1.c6b08d704a0c0p-5,
      0x1.ebfbdff82c58fp-3, 0x1.62e42fefa39efp-1, 1.0);
  return p * pow2i(to_i32(n));
}

// Splits a positive normal finite double u = 2^e * m, m in [sqrt(1/2),
// sqrt(2)), and returns ln(m) (relative error ~2^-50); e goes to *e.
NUVEC_KERNEL_INLINE double log_parts(double u, double* e) {
  u64 b = bit_cast<u64>(u);
  // Exponent as a double without an int64 conversion: 2^52 + field - 2^52.
  double ef =
      bit_cast<double>((b >> 52) | 0x4330000000000000ull) - 0x1.0p52 - 1023.0;
  double m =
      bit_cast<double>((b & 0x000fffffffffffffull) | 0x3ff0000000000000ull);
  bool big = m > 0x1.6a09e667f3bcdp+0;
  m = sel(big, m * 0.5, m);
  *e = sel(big, ef + 1.0, ef);
  double f = m - 1.0;  // exact
  double s = f / (2.0 + f);
  double s2 = s * s;
  // ln(m) = 2 atanh(s) = 2s + 2s^3/3 + ...; |s| <= 0.1716.
  double p =
      horner(s2, 0x1.e1e1e1e1e1e1ep-4, 0x1.1111111111111p-3,
             0x1.3b13b13b13b14p-3, 0x1.745d1745d1746p-3, 0x1.c71c71c71c71cp-3,
             0x1.2492492492492p-2, 0x1.999999999999ap-2, 0x1.5555555555555p-1);
  return 2.0 * s + s * (s2 * p);
}

NUVEC_KERNEL_INLINE double log_d(double u) {
  double e;
  double lm = log_parts(u, &e);
  return e * kLn2 + lm;
}

// ln(1 + a) for a > -1, a finite: corrects the rounding of 1 + a.
NUVEC_KERNEL_INLINE double log1p_d(double a) {
  double u = 1.0 + a;
  double c = (a - (u - 1.0)) / u;
  return log_d(u) + c;
}

// atan(t) for t >= 0 (inf and NaN included), relative error ~2^-45.
NUVEC_KERNEL_INLINE double atan_d(double t) {
  bool inv = t > 1.0;
  double a = sel(inv, 1.0 / t, t);
  bool mid = a > 0x1.a827999fcef32p-2;  // tan(pi/8)
  double b = sel(mid, (a - 1.0) / (a + 1.0), a);
  double b2 = b * b;
  double p = horner(
      b2, 0x1.f61079a67a655p-6, -0x1.e123c910996e0p-5, 0x1.35cbd91f7449ap-4,
      -0x1.73d963bf0c396p-4, 0x1.c714cc286b268p-4, -0x1.249228f16315fp-3,
      0x1.99999910f9196p-3, -0x1.55555554e53e8p-2, 0x1.fffffffffff0dp-1);
  double v = sel(mid, kPio4, 0.0) + b * p;
  return sel(inv, kPio2 - v, v);
}

// erf(x)/x for 0 <= x <= 1, as a polynomial in x^2.
NUVEC_KERNEL_INLINE double erf_small(double x2) {
  return horner(x2, -0x1.c1a515de8637ap-24, 0x1.9ae0986f9de4fp-20,
                -0x1.f0705a1dde9aap-17, 0x1.f941bed7e7847p-14,
                -0x1.c0286cad68e02p-11, 0x1.565ba0406c001p-8,
                -0x1.b82ce15c3b7f8p-6, 0x1.ce2f2197bc2efp-4,
                -0x1.812746b0271ecp-2, 0x1.20dd750429b19p+0);
}

// erfc(x) e^(x^2) for 1 <= x <= 4.25, relative error ~2^-41.
NUVEC_KERNEL_INLINE double erfc_scaled(double x) {
  double t1 = x - 1.75;
  double h1 = horner(
      t1, 0x1.2f85612e94323p-24, -0x1.1c27c471d4c8cp-22, 0x1.b7ac2abff4275p-21,
      -0x1.84b13f8a8dc6ap-19, 0x1.52928223f3624p-17, -0x1.1b46f034e26b5p-15,
      0x1.cb4b85eb0c4b5p-14, -0x1.6837aacb7a0c8p-12, 0x1.106bd76e3c2d8p-10,
      -0x1.8bf719f1ba15fp-9, 0x1.13648a0f31a57p-7, -0x1.6cb52fdf0c981p-6,
      0x1.c8d0cef0fac61p-5, -0x1.0c3d538448ea6p-3, 0x1.23cfc2f1dc7e0p-2);
  double t2 = x - 3.375;
  double h2 = horner(
      t2, 0x1.928633c555a7dp-28, -0x1.dd67d951ec6bfp-26, 0x1.edde19d022804p-24,
      -0x1.195a3e2fc7b2bp-21, 0x1.3c44aa68a1695p-19, -0x1.5a6c87064061bp-17,
      0x1.7350c27b149dep-15, -0x1.85115bd19e7adp-13, 0x1.8de5f29d6251dp-11,
      -0x1.8c84c1795734cp-9, 0x1.804cc156fdce9p-7, -0x1.696d353ee53b6p-5,
      0x1.48f8f10299b71p-3);
  return sel(x < 2.5, h1, h2);
}

// Exact u32 -> double through the 2^52 bias (vectorizes without AVX-512).
NUVEC_KERNEL_INLINE double u32_to_double(u32 v) {
  return bit_cast<double>(0x4330000000000000ull | v) - 0x1.0p52;
}

// Word k of 2/pi's binary expansion (bits 32k+1 .. 32k+32), k in [0, 6],
// as a select chain: no table in memory, vectorizes without gathers.
NUVEC_KERNEL_INLINE u32 two_over_pi_word(u32 k) {
  u32 w = 0xa2f9836eu;
  w = selu(k == 1, 0x4e441529u, w);
  w = selu(k == 2, 0xfc2757d1u, w);
  w = selu(k == 3, 0xf534ddc0u, w);
  w = selu(k == 4, 0xdb629599u, w);
  w = selu(k == 5, 0x3c439041u, w);
  w = selu(k == 6, 0xfe5163abu, w);
  return w;
}

// Payne-Hanek: for finite |x| >= 2^52 (float bits xb, sign cleared), returns
// the reduced argument r = x - n pi/2 in double and n mod 4 in *q.
NUVEC_KERNEL_INLINE double reduce_big(u32 xb, u32* q) {
  u32 be = xb >> 23;
  // x = M 2^E; bits of 2/pi before position E-1 only add multiples of 4.
  u32 mant = (xb & 0x7fffffu) | 0x800000u;
  i32 ex = i32(be) - 150;
  i32 i0 = ex - 1;  // first bit used, >= 28 for |x| >= 2^52
  i0 = seli(i0 < 28, 28, i0);
  i0 = seli(i0 > 103, 103, i0);
  u32 k = u32(i0 - 1) >> 5;
  u32 s = u32(i0 - 1) & 31u;
  u32 a0 = two_over_pi_word(k), a1 = two_over_pi_word(k + 1);
  u32 a2 = two_over_pi_word(k + 2), a3 = two_over_pi_word(k + 3);
  // 96-bit window of 2/pi starting at bit i0 (shift by 32 avoided).
  u32 w2 = (a0 << s) | ((a1 >> 1) >> (31u - s));
  u32 w1 = (a1 << s) | ((a2 >> 1) >> (31u - s));
  u32 w0 = (a2 << s) | ((a3 >> 1) >> (31u - s));
  // (mant * w) mod 2^96 = x 2/pi mod 4, scaled by 2^94.
  u64 p0 = u64(mant) * w0;
  u64 p1 = u64(mant) * w1 + (p0 >> 32);
  u32 p2 = mant * w2 + u32(p1 >> 32);
  u64 hi = (u64(p2) << 32) | (p1 & 0xffffffffull);
  u32 lo = u32(p0);
  *q = u32((hi + (1ull << 61)) >> 62) & 3u;  // round to nearest quadrant
  // Fraction in [-1/2, 1/2) quadrants as a signed 2^64-scaled integer.
  u64 t = (hi << 2) | (lo >> 30);
  // Converted in 32-bit pieces (AVX2 has no int64 -> double conversion).
  double f = double(i32(u32(t >> 32))) * 0x1.0p-32 +
             u32_to_double(u32(t)) * 0x1.0p-64 +
             u32_to_double(lo << 2) * 0x1.0p-96;
  return f * kPio2;
}

// Reduces a float |x| (sign cleared, finite or not) to r in about
// [-pi/4, pi/4] and the quadrant n mod 4. Non-finite x gives NaN r.
NUVEC_KERNEL_INLINE double reduce_trig(float ax, u32* q) {
  u32 xb = bit_cast<u32>(ax);
  bool small = ax < 0x1.0p52f;
  double xs = sel(small, double(ax), 0.0);
  double n = __builtin_rint(xs * 0x1.45f306dc9c883p-1);
  double r = __builtin_fma(-n, 0x1.921fb54442d18p+0, xs);  // exact
  r = __builtin_fma(-n, 0x1.1a62633145c07p-54, r);
  r = __builtin_fma(-n, -0x1.f1976b7ed8fbcp-110, r);
  // n mod 4 via rint (g++ does not vectorize floor/trunc here).
  double nq = n - 4.0 * __builtin_rint(n * 0.25);  // in [-2, 2], exact
  u32 qs = u32(i32(nq)) & 3u;
#ifdef __CUDA_ARCH__
  // On the GPU a branch costs nothing where a warp agrees, and large
  // arguments are rare: the large-argument reduction runs only for them.
  // The same values as the branch-free selection below.
  if (small) {
    *q = qs;
    return r;
  }
#endif
  u32 qb;
  double rb = reduce_big(xb, &qb);
  *q = selu(small, qs, qb);
  double rr = sel(small, r, rb);
  return sel((ax == ax) & (ax != kInfF), rr, double(kNanF));
}

NUVEC_KERNEL_INLINE double sin_poly(double r, double r2) {
  double p = horner(r2, 0x1.6124613a86d09p-33, -0x1.ae64567f544e4p-26,
                    0x1.71de3a556c734p-19, -0x1.a01a01a01a01ap-13,
                    0x1.1111111111111p-7, -0x1.5555555555555p-3);
  return r + r * (r2 * p);
}

NUVEC_KERNEL_INLINE double cos_poly(double r2) {
  double p = horner(r2, -0x1.93974a8c07c9dp-37, 0x1.1eed8eff8d898p-29,
                    -0x1.27e4fb7789f5cp-22, 0x1.a01a01a01a01ap-16,
                    -0x1.6c16c16c16c17p-10, 0x1.5555555555555p-5);
  return (1.0 - 0.5 * r2) + r2 * (r2 * p);
}

// log2|x| as a double for a float x: -inf at 0, +inf at inf, NaN for NaN.
NUVEC_KERNEL_INLINE double log2_abs(float x) {
  float ax = __builtin_fabsf(x);
  bool ok = (ax > 0.0f) & (ax < kInfF);
  double e;
  double lm = log_parts(sel(ok, double(ax), 1.0), &e);
  double l = e + lm * kLog2e;
  double spec = sel(ax == 0.0f, -kInf, double(ax));
  return sel(ok, l, spec);
}


// ---- float32 kernels (the hot functions) ----------------------------------
// Horner's rule in float with explicit fma (one rounding per step).
NUVEC_KERNEL_INLINE float hornerf(float, float c) { return c; }
template <class... Cs>
NUVEC_KERNEL_INLINE float hornerf(float x, float a, float b, Cs... cs) {
  return hornerf(x, __builtin_fmaf(a, x, b), cs...);
}

// 2^i as a float for -126 <= i <= 127 (any i gives some finite or inf value).
NUVEC_KERNEL_INLINE float pow2f(i32 i) {
  return bit_cast<float>(u32(i + 127) << 23);
}

// The first step of e^x's Cody-Waite reduction for |x| <= 160:
// x = n ln2 + r1 - c, with n = nf an integer, r1 exact (|r1| <= 0.3467) and
// c = n (L1 - ln2) (|c| < 2^-21). *n and *nf are n.
NUVEC_KERNEL_INLINE void exp_split(float x, i32* n, float* nf, float* r1,
                                   float* c) {
  // Rounds x log2(e) to an integer in the low mantissa bits of 1.5 2^23.
  float k = __builtin_fmaf(x, 0x1.715476p+0f, 0x1.8p23f);
  *nf = k - 0x1.8p23f;
  *n = i32(bit_cast<u32>(k) - 0x4b400000u);
  *r1 = __builtin_fmaf(-*nf, 0x1.62e430p-1f, x);  // exact
  *c = *nf * 0x1.05c610p-29f;                      // -n (ln2 - L1)
}

// (e^r - 1 - r) / r^2 for |r| <= 0.3467.
NUVEC_KERNEL_INLINE float exp_poly(float r) {
  return hornerf(r, 0x1.a27408p-13f, 0x1.6d514ep-10f, 0x1.110feep-7f,
                 0x1.5554e4p-5f, 0x1.555556p-3f, 0x1.0p-1f);
}

// Cody-Waite reduction of e^x for |x| <= 160: e^x ~ 2^n (1 + r + lo), with
// |r| <= 0.3467 and lo = e^r - 1 - r plus the rounding error of r, so that
// 1 + r + lo has a relative error below 2^-31 and |lo| <= |r| / 4 (or both
// are tiny: exp_join's Fast2Sum). NaN x gives NaN r and lo.
NUVEC_KERNEL_INLINE void exp_core(float x, i32* n, float* r, float* lo) {
  float nf, r1, c;
  exp_split(x, n, &nf, &r1, &c);
  float rr = r1 + c;
  float rerr = (r1 - rr) + c;  // Fast2Sum (|c| < 2^-21: exact enough)
  *r = rr;
  *lo = __builtin_fmaf(rr * rr, exp_poly(rr), rerr);
}

// e^x ~ 2^n (1 + r + lo) as exp_core, for exp alone (no |lo| <= |r| / 4):
// r = r1 exact, and e^(r1 + c) - 1 - r1 = r1^2 q (1 + c) + c (1 + r1) up
// to c^2 and c r1^2 (q - 1/2) (below 2^-28), q = exp_poly(r1). One
// instruction fewer than exp_core's pair, and over all float inputs exp's
// largest error falls from 0.8442 to 0.8005 ULP (the same 17972239 -> 17971238
// results not correctly rounded).
NUVEC_KERNEL_INLINE void exp_parts(float x, i32* n, float* r, float* lo) {
  float nf, r1, c;
  exp_split(x, n, &nf, &r1, &c);
  float q = exp_poly(r1);
  *r = r1;
  *lo = __builtin_fmaf(r1 * r1, __builtin_fmaf(q, c, q), __builtin_fmaf(c, r1, c));
}

// s (1 + r + l) as a float pair hi + lo, hi the rounded sum (s a power of
// two, |l| <= |r| / 4 or both tiny as from exp_core).
NUVEC_KERNEL_INLINE void exp_join(float s, float r, float l, float* hi,
                                  float* lo) {
  float t = r + l;
  float tl = (r - t) + l;  // Fast2Sum
  float h = __builtin_fmaf(s, t, s);
  *hi = h;
  *lo = __builtin_fmaf(s, tl, __builtin_fmaf(s, t, s - h));  // s - h exact
}

// Splits a finite float x > 0 as 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2))
// (f exact), subnormals included.
NUVEC_KERNEL_INLINE void log_reduce(float x, float* e, float* f) {
  bool sub = x < 0x1.0p-126f;
  float xs = self(sub, x * 0x1.0p23f, x);
  u32 b = bit_cast<u32>(xs);
  i32 ei = i32(b - 0x3f3504f3u) >> 23;  // sqrt(1/2) = 0x3f3504f3
  float m = bit_cast<float>(b - (u32(ei) << 23));
  *f = m - 1.0f;
  *e = float(ei) - self(sub, 23.0f, 0.0f);
}

// ln(1 + f) - f for f in [sqrt(1/2) - 1, sqrt(2) - 1], relative 2^-27.7.
NUVEC_KERNEL_INLINE float log1p_tail(float f) {
  float q = hornerf(f, -0x1.325ab0p-4f, 0x1.06b520p-3f, -0x1.0fa384p-3f,
                    0x1.22b8bep-3f, -0x1.5422b0p-3f, 0x1.99a016p-3f,
                    -0x1.000432p-2f, 0x1.555558p-2f, -0x1.fffff8p-2f);
  return (f * f) * q;
}

// e ln2 + f + lo, summed with one significant rounding (e integral).
NUVEC_KERNEL_INLINE float log_sum(float e, float f, float lo) {
  float eh = e * 0x1.62e4p-1f;  // exact: ln2 to 16 bits
  float s = eh + f;
  float err = (eh - s) + f;  // Fast2Sum: |eh| >= |f| or eh = 0
  return s + (err + __builtin_fmaf(e, 0x1.7f7d1cp-20f, lo));
}

// Compensated quotient (nh + nl) / (dh + dl) for dh in [1, 2], |dl| and |nl|
// tiny: within about 0.5 ULP plus the pairs' own errors.
NUVEC_KERNEL_INLINE float div_pair(float nh, float nl, float dh, float dl) {
  float rc = 1.0f / dh;
  float q0 = nh * rc;
  float res = __builtin_fmaf(-q0, dh, nh) + (nl - q0 * dl);
  return __builtin_fmaf(res, rc, q0);
}


// Float Cody-Waite reduction for |x| < 2^18 only (sin_small, cos_small):
// r = |x| - n pi/2 as a float pair h + l (|h| <= 0.8, |l| < 2^-24.8) and
// n mod 4, with pi/2 = P1 + P2 + P3 + O(2^-76). Every step but one is exact:
// - r1 = |x| - n P1 (fma): a multiple of 2^-24 below 1 in magnitude
//   (n >= 1 needs |x| >= pi/4, whose ulp is at least 2^-24).
// - n P2 = th + tl: th is n P2 rounded to a multiple of 2^-24 (adding and
//   subtracting 0.75, whose ulp is 2^-24, |n P2| < 2^-7), tl the rest
//   (fma: n P2 is a multiple of 2^-48 within 2^-25 of th).
// - h = r1 - th: both multiples of 2^-24, |h| < 1.
// - l = -(tl + n P3), rounded once (error below 2^-50).
// The pair is not normalized: sin_f and cos_f take l as a first-order
// term, which needs it small, not below half an ulp of h.
// Any other x gives some values without undefined behaviour (float
// arithmetic and bit casts only).
NUVEC_KERNEL_INLINE void reduce_trig_small(float ax, float* h, float* l,
                                           u32* q) {
  float k = __builtin_fmaf(ax, 0x1.45f306p-1f, 0x1.8p23f);
  float n = k - 0x1.8p23f;
  *q = bit_cast<u32>(k) & 3u;
  float r1 = __builtin_fmaf(-n, 0x1.921fb6p+0f, ax);
  float th = __builtin_fmaf(n, -0x1.777a5cp-25f, 0.75f) - 0.75f;
  float tl = __builtin_fmaf(n, -0x1.777a5cp-25f, -th);
  *h = r1 - th;
  *l = __builtin_fmaf(-n, -0x1.ee59dap-50f, -tl);
}

// sin(h + l) and cos(h + l) for |h| <= 0.8, |l| < 2^-24.8, hh = h * h.
// sin(h + l) ~ sin(h) + l (1 - h^2 / 2), sin(h) = h + h^3 p. (Also tried:
// h + (hh (h p - l / 2) + l), one product fewer, raised the largest error
// over all inputs from 0.7185 to 0.7478 ULP.)
NUVEC_KERNEL_INLINE float sin_f(float h, float l, float hh) {
  float p = hornerf(hh, 0x1.7705acp-19f, -0x1.a045a2p-13f, 0x1.111162p-7f,
                    -0x1.555556p-3f);
  return h + __builtin_fmaf(h * hh, p, __builtin_fmaf(0.5f * hh, -l, l));
}
// cos(h + l) ~ cos(h) - l h, cos(h) = 1 - h^2 / 2 + h^4 p, where 1 - h^2 / 2
// is w + wl: w rounded once (fma), wl its error (1 - w is exact, as w lies
// in [0.68, 1]; the fma rounds |wl| <= 2^-25 once).
NUVEC_KERNEL_INLINE float cos_f(float h, float l, float hh) {
  float p = hornerf(hh, -0x1.319490p-22f, 0x1.a05f7ep-16f, -0x1.6c174cp-10f,
                    0x1.555556p-5f);
  float m = -0.5f * h;
  float w = __builtin_fmaf(m, h, 1.0f);
  float wl = __builtin_fmaf(m, h, 1.0f - w);
  return w + __builtin_fmaf(hh * hh, p, __builtin_fmaf(-l, h, wl));
}

}  // namespace detail

/// e^x. Overflows to inf above ~88.72, underflows through subnormals to 0.
NUVEC_KERNEL_INLINE float exp(float x) {
  x = detail::self(x > 100.0f, 100.0f, x);  // NaN passes
  x = detail::self(x < -110.0f, -110.0f, x);
  i32 n;
  float r, lo;
  detail::exp_parts(x, &n, &r, &lo);
  // Two exact scalings, the second rounds subnormal results once; the
  // first as s1 (1 + t) rounded once, which is s1 times 1 + t rounded
  // (s1 = 2^(n >> 1) is a normal power of two, the product normal).
  float s1 = detail::pow2f(n >> 1);
  return __builtin_fmaf(s1, r + lo, s1) * detail::pow2f(n - (n >> 1));
}

/// e^x where |x| < kExpNormal, where it is normal: exp's bits, with one
/// scaling and no clamps. (exp rounds s1 (1 + t) once and scales by an
/// exact power of two; with a normal result that is 2^n (1 + t) rounded
/// once, which this computes.) Unspecified values elsewhere.
constexpr float kExpNormal = 87.0f;
NUVEC_KERNEL_INLINE float exp_normal(float x) {
  i32 n;
  float r, lo;
  detail::exp_parts(x, &n, &r, &lo);
  float s = detail::pow2f(n);
  return __builtin_fmaf(s, r + lo, s);
}

/// 2^x.
NUVEC_KERNEL_INLINE float exp2(float x) {
  x = detail::self(x > 200.0f, 200.0f, x);  // NaN passes
  x = detail::self(x < -200.0f, -200.0f, x);
  float k = x + 0x1.8p23f;  // rounds x to an integer
  float nf = k - 0x1.8p23f;
  i32 n = i32(bit_cast<u32>(k) - 0x4b400000u);
  float t = x - nf;  // exact, |t| <= 1/2
  // t ln2 as th + tl, then e^(th + tl) = 1 + r + lo as in exp_core (n = 0).
  float th = t * 0x1.62e430p-1f;
  float tl = __builtin_fmaf(t, 0x1.62e430p-1f, -th) + t * -0x1.05c610p-29f;
  i32 n0;
  float r, lo;
  detail::exp_core(th, &n0, &r, &lo);  // n0 = 0 since |th| < 0.3466
  float s1 = detail::pow2f(n >> 1);  // as in exp
  return __builtin_fmaf(s1, r + __builtin_fmaf(tl, r, lo + tl), s1) * detail::pow2f(n - (n >> 1));
}

/// e^x - 1, accurate near 0; expm1(-0) = -0.
NUVEC_KERNEL_INLINE float expm1(float x) {
  float xc = detail::self(x > 89.0f, 89.0f, x);  // NaN passes
  xc = detail::self(xc < -30.0f, -30.0f, xc);
  i32 n;
  float r, lo;
  detail::exp_core(xc, &n, &r, &lo);
  // 2^n (1 + r + lo) - 1 with s = 2^min(n, 127), times 2 when n = 128.
  i32 big = i32(n > 127);
  float s = detail::pow2f(n - big);
  float a = s - 1.0f, b = s * r;  // exact
  float h = a + b;
  float l = (a - h) + b;  // Fast2Sum: |a| >= |b| when n != 0, else a = 0
  float v = (h + __builtin_fmaf(s, lo, l)) * float(big + 1);
  return detail::self(__builtin_fabsf(x) < 0x1.0p-25f, x, v);
}

/// Natural logarithm; log(0) = -inf, log(x < 0) = NaN.
NUVEC_KERNEL_INLINE float log(float x) {
  bool ok = (x > 0.0f) & (x < detail::kInfF);
  float e, f;
  detail::log_reduce(detail::self(ok, x, 1.0f), &e, &f);
  float r = detail::log_sum(e, f, detail::log1p_tail(f));
  float spec = detail::self(x == 0.0f, -detail::kInfF,
                            detail::self(x < 0.0f, detail::kNanF, x));
  return detail::self(ok, r, spec);
}

/// Base-2 logarithm.
NUVEC_KERNEL_INLINE float log2(float x) {
  bool ok = (x > 0.0f) & (x < detail::kInfF);
  float e, f;
  detail::log_reduce(detail::self(ok, x, 1.0f), &e, &f);
  // log2(1 + f) = f C + f^2 Q(f), C = 1/ln2 as 0x1.715476p+0 + 0x1.4ae0cp-26.
  float q = detail::hornerf(f, -0x1.baabaap-4f, 0x1.7b9ceap-3f, -0x1.881186p-3f,
                            0x1.a35476p-3f, -0x1.eaac80p-3f, 0x1.277bfap-2f,
                            -0x1.715acap-2f, 0x1.ec70a0p-2f, -0x1.715470p-1f);
  float ph = f * 0x1.715476p+0f;
  float pl = __builtin_fmaf(f, 0x1.715476p+0f, -ph);
  pl = __builtin_fmaf(f, 0x1.4ae0c0p-26f, pl);
  float s = e + ph;
  float err = (e - s) + ph;  // Fast2Sum: |e| >= 1 > |ph| or e = 0
  float r = s + (err + __builtin_fmaf(f * f, q, pl));
  float spec = detail::self(x == 0.0f, -detail::kInfF,
                            detail::self(x < 0.0f, detail::kNanF, x));
  return detail::self(ok, r, spec);
}

/// Base-10 logarithm.
NUVEC_KERNEL_INLINE float log10(float x) {
  bool ok = (x > 0.0f) & (x < detail::kInfF);
  float e, f;
  detail::log_reduce(detail::self(ok, x, 1.0f), &e, &f);
  // log10(1 + f) = f D + f^2 Q(f), D = log10(e) as two floats.
  float q = detail::hornerf(f, -0x1.0a5508p-5f, 0x1.c8cbe4p-5f, -0x1.d8034cp-5f,
                            0x1.f8f87ep-5f, -0x1.276caap-4f, 0x1.63cc26p-4f,
                            -0x1.bcbf2cp-4f, 0x1.287a78p-3f, -0x1.bcb7aap-3f);
  float ph = f * 0x1.bcb7b2p-2f;
  float pl = __builtin_fmaf(f, 0x1.bcb7b2p-2f, -ph);
  pl = __builtin_fmaf(f, -0x1.5b235ep-27f, pl);
  pl = __builtin_fmaf(e, 0x1.a84fbcp-21f, pl);  // e (log10(2) - below)
  float eh = e * 0x1.3441p-2f;                   // exact: 18 bits
  float s = eh + ph;
  float err = (eh - s) + ph;  // Fast2Sum: |eh| >= 0.3 > |ph| or eh = 0
  float r = s + (err + __builtin_fmaf(f * f, q, pl));
  float spec = detail::self(x == 0.0f, -detail::kInfF,
                            detail::self(x < 0.0f, detail::kNanF, x));
  return detail::self(ok, r, spec);
}

/// ln(1 + x), accurate near 0; log1p(-1) = -inf, log1p(x < -1) = NaN.
NUVEC_KERNEL_INLINE float log1p(float x) {
  bool ok = (x > -1.0f) & (x < detail::kInfF);
  float xs = detail::self(ok, x, 0.0f);
  // u = 1 + x rounded, d its exact rounding error (2Sum).
  float u = 1.0f + xs;
  float bv = u - 1.0f;
  float d = (1.0f - (u - bv)) + (xs - bv);
  float e, f;
  detail::log_reduce(u, &e, &f);
  // ln(1 + x) = ln(u) + ln(1 + d/u) ~ ln(u) + d/u.
  float r = detail::log_sum(e, f, detail::log1p_tail(f) + d / u);
  float spec = detail::self(x == -1.0f, -detail::kInfF,
                            detail::self(x < -1.0f, detail::kNanF, x));
  r = detail::self(ok, r, spec);
  return detail::self(__builtin_fabsf(x) < 0x1.0p-25f, x, r);
}

/// Arctangent in [-pi/2, pi/2].
NUVEC_KERNEL_INLINE float atan(float x) {
  float r = float(detail::atan_d(double(__builtin_fabsf(x))));
  return detail::xorsign(r, x);
}

/// Arcsine; NaN outside [-1, 1].
NUVEC_KERNEL_INLINE float asin(float x) {
  double a = __builtin_fabsf(x);
  double t = a / __builtin_sqrt((1.0 - a) * (1.0 + a));  // exact factors
  return detail::xorsign(float(detail::atan_d(t)), x);
}

/// Arccosine in [0, pi]; NaN outside [-1, 1].
NUVEC_KERNEL_INLINE float acos(float x) {
  double xd = x;
  double t = __builtin_sqrt((1.0 - xd) / (1.0 + xd));
  return float(2.0 * detail::atan_d(t));
}

/// atan(y / x) in the quadrant of (x, y), C99 special cases included.
NUVEC_KERNEL_INLINE float atan2(float y, float x) {
  double ay = __builtin_fabsf(y), ax = __builtin_fabsf(x);
  double a = detail::atan_d(ay / ax);
  a = detail::sel((ay == 0.0) & (ax == 0.0), 0.0, a);
  a = detail::sel((ay == detail::kInf) & (ax == detail::kInf), detail::kPio4,
                  a);
  bool neg_x = (bit_cast<u32>(x) >> 31) != 0;
  a = detail::sel(neg_x, detail::kPi - a, a);
  return detail::xorsign(float(a), y);
}

/// Hyperbolic sine; overflows to +-inf.
NUVEC_KERNEL_INLINE float sinh(float x) {
  double a = __builtin_fabsf(x);
  a = detail::sel(a > 120.0, 120.0, a);
  double e = detail::expm1_d(a);
  return detail::xorsign(float(0.5 * (e + e / (e + 1.0))), x);
}

/// Hyperbolic cosine; overflows to +inf.
NUVEC_KERNEL_INLINE float cosh(float x) {
  double a = __builtin_fabsf(x);
  a = detail::sel(a > 120.0, 120.0, a);
  double e = detail::exp_d(a);
  return float(0.5 * e + 0.5 / e);
}

/// Hyperbolic tangent; tanh(-0) = -0.
NUVEC_KERNEL_INLINE float tanh(float x) {
  float a = __builtin_fabsf(x);
  // a < 0.8: tanh(a) = a + a s Q(s), s = a^2 (tiny and subnormal a give a).
  float s2 = a * a;
  float q = detail::hornerf(s2, 0x1.9de75p-10f, -0x1.e4dc6p-8f, 0x1.5ce5c4p-6f,
                            -0x1.b92312p-5f, 0x1.110b0ap-3f, -0x1.55553cp-2f);
  float small = __builtin_fmaf(a, s2 * q, a);
  // a >= 0.8: tanh(a) = 1 - 2y/(1 + y), y = e^-2a = s (1 + t), s = 2^n.
  // Written 1 - 2s - s V, V = 2t + u (1 + t), u = -2y/(1 + y) = y R(y):
  // 1 - 2s is exact and V's roundings are scaled by s <= 1/4, no division.
  // n = rint(-a K), K = 2 log2(e) (1 - 1.9%): n = -26 (1 - 2s no longer
  // exact) first at 0x1.205968p+3, the first a where tanh rounds to 1, and
  // from there on every result is 1. Clamped to 9.5 (bits; NaN -> 9.5, the
  // small branch passes it): s stays normal, inf gives 1.
  u32 ab = bit_cast<u32>(a);
  float ac = bit_cast<float>(detail::selu(ab > 0x41180000u, 0x41180000u, ab));
  // Rounds -a K to an integer in the low bits of 1.5 2^23 + 127: k's bits
  // shifted left by 23 are those of 2^n.
  float k = __builtin_fmaf(ac, -0x1.6a3a3ap+1f, 0x1.8p23f + 127.0f);
  float nf = k - (0x1.8p23f + 127.0f);
  float s = bit_cast<float>(bit_cast<u32>(k) << 23);
  // v = a + n ln2/2 in [-0.16, 0.36] (exact; ln2/2 to 21 bits is close
  // enough: n is small where the result is sensitive to it), then
  // t = e^-2v - 1 = v X(v) - v.
  float v = __builtin_fmaf(nf, 0x1.62e430p-2f, ac);
  float t = __builtin_fmaf(
      v,
      detail::hornerf(v, 0x1.5cbfc4p-4f, -0x1.121138p-2f, 0x1.55675ap-1f,
                      -0x1.5554cp+0f, 0x1.ffffeep+0f, -0x1p+0f),
      -v);
  float y = __builtin_fmaf(s, t, s);
  float u = y * detail::hornerf(y, -0x1.1573aap+0f, 0x1.cc36fep+0f,
                                -0x1.fa3886p+0f, 0x1.ffb104p+0f,
                                -0x1.fffe72p+0f);
  float vv = __builtin_fmaf(2.0f, t, __builtin_fmaf(u, t, u));
  float big = __builtin_fmaf(-s, vv, __builtin_fmaf(-2.0f, s, 1.0f));
  return detail::xorsign(detail::self(a >= 0.8f, big, small), x);
}

/// Inverse hyperbolic sine.
NUVEC_KERNEL_INLINE float asinh(float x) {
  float ax = __builtin_fabsf(x);
  bool ok = ax < detail::kInfF;
  double a = detail::sel(ok, double(ax), 0.0);
  double a2 = a * a;
  double r = detail::log1p_d(a + a2 / (1.0 + __builtin_sqrt(1.0 + a2)));
  float v = detail::self(ok, float(r), ax);
  v = detail::self(ax < 0x1.0p-30f, ax, v);
  return detail::xorsign(v, x);
}

/// Inverse hyperbolic cosine; NaN below 1.
NUVEC_KERNEL_INLINE float acosh(float x) {
  bool ok = (x >= 1.0f) & (x < detail::kInfF);
  double xd = detail::sel(ok, double(x), 1.0);
  double t = xd - 1.0;  // exact
  double r = detail::log1p_d(t + __builtin_sqrt(t * (xd + 1.0)));
  float spec = detail::self(x == detail::kInfF, x, detail::kNanF);
  return detail::self(ok, float(r), spec);
}

/// Inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1].
NUVEC_KERNEL_INLINE float atanh(float x) {
  float ax = __builtin_fabsf(x);
  bool ok = ax < 1.0f;
  double a = detail::sel(ok, double(ax), 0.0);
  float r = float(0.5 * detail::log1p_d(2.0 * a / (1.0 - a)));
  float spec = detail::self(ax == 1.0f, detail::kInfF, detail::kNanF);
  r = detail::self(ok, r, spec);
  r = detail::self(ax < 0x1.0p-30f, ax, r);
  return detail::xorsign(r, x);
}

}  // namespace nuvec::kernels::math
