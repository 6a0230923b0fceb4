// float64 erf, erfinv and pow: the rules, helpers and measured bounds of
// math_f64.h (see its header comment), split out by family.
#pragma once

#include "math_f64.h"

namespace nuvec::kernels::math {

// ---- error function
// ----------------------------------------------------------

namespace f64detail {
constexpr double TWO_OVER_SQRTPI_HI = 0x1.20dd750429b6dp+0,
                 TWO_OVER_SQRTPI_LO = 0x1.1ae3a914fed80p-56;
constexpr double ERF_P0_HI = -0x1.812746b0379e7p-2,
                 ERF_P0_LO = 0x1.ee12e49cab700p-57;  // -2/(3 sqrt(pi))
constexpr double SQRTPI_OVER_2_HI = 0x1.c5bf891b4ef6bp-1,
                 SQRTPI_OVER_2_LO = -0x1.618f13eb7ca89p-55;

constexpr double ERF_P1_HI = 0x1.ce2f21a042be2p-4,
                 ERF_P1_LO = -0x1.2871bc5e00766p-58;  // 1/(5 sqrt(pi))

// Horner step in double-double: c + z u, |c| >= |z u|.
NUVEC_KERNEL_INLINE dd horner_dd(double ch, double cl, dd z, dd u) {
  dd a = two_prod(z.hi, u.hi);
  dd s = fast_two_sum(ch, a.hi);
  s.lo += cl + (a.lo + fma(z.hi, u.lo, z.lo * u.hi));
  return s;
}
// erf(x) for |x| <= 1 as a double-double (relative error ~2^-58):
// erf(x) = x (c0 + z (p0 + z (p1 + z P2(z)))), z = x^2, c0 = 2/sqrt(pi),
// p0 = -c0/3, p1 = c0/10, the three leading Horner steps in double-double.
NUVEC_KERNEL_INLINE dd erf_small(double x) {
  dd z = two_prod(x, x);
  double q = poly(
      z.hi, -0x1.b82ce31288b51p-6, 0x1.565bcd0e6a515p-8, -0x1.c02db4003d681p-11,
      0x1.f9a326f81a171p-14, -0x1.f4d25bd606bc4p-17, 0x1.b9e6ba9b29ce8p-20,
      -0x1.5f72c8d573f85p-23, 0x1.fc9b2472a83c2p-27, -0x1.50392f1c750c7p-30,
      0x1.8a810ae261bcfp-34, -0x1.4904bd033c782p-38);
  dd v = horner_dd(ERF_P1_HI, ERF_P1_LO, z, {q, 0.0});
  v = horner_dd(ERF_P0_HI, ERF_P0_LO, z, v);
  dd S = horner_dd(TWO_OVER_SQRTPI_HI, TWO_OVER_SQRTPI_LO, z, v);
  dd r = two_prod(x, S.hi);
  return {r.hi, fma(x, S.lo, r.lo)};
}

NUVEC_KERNEL_INLINE double pick4(bool b1, bool b2, bool b3, double c0,
                                 double c1, double c2, double c3) {
  return sel(b3, c3, sel(b2, c2, sel(b1, c1, c0)));
}
// erfcx(x) = e^(x^2) erfc(x) for 1 <= x <= 6.1: a degree-16 polynomial in
// x - mid on [1, 1.75], [1.75, 2.75], [2.75, 4], [4, 6.1], coefficients picked
// by blends (relative error <= 2^-53.7 before rounding).
NUVEC_KERNEL_INLINE double erfcx_poly(double x) {
  bool b1 = x >= 1.75, b2 = x >= 2.75, b3 = x >= 4.0;
  double t = x - pick4(b1, b2, b3, 1.375, 2.25, 3.375, 5.05);  // exact
  return poly(t,
              pick4(b1, b2, b3, 0x1.5f88f52f3c76bp-2, 0x1.d94446d627932p-3,
                    0x1.48f8f10299b71p-3, 0x1.c11e44ae48e30p-4),
              pick4(b1, b2, b3, -0x1.797a639d8129dp-3, -0x1.6a70d2bb37411p-4,
                    -0x1.696d353f008b5p-5, -0x1.56fcd0bc86af9p-6),
              pick4(b1, b2, b3, 0x1.701342cbcea7bp-4, 0x1.0615670e25a7bp-5,
                    0x1.804cc15714188p-7, 0x1.018b059ded860p-8),
              pick4(b1, b2, b3, -0x1.4bcdb9d9083cep-5, -0x1.6883f9919a1b2p-7,
                    -0x1.8c84c13afba0ep-9, -0x1.7c9334296fcf4p-11),
              pick4(b1, b2, b3, 0x1.17eba60d31fd1p-6, 0x1.da595561f7d67p-9,
                    0x1.8de5f26a7e68ap-11, 0x1.14e197d5f5916p-13),
              pick4(b1, b2, b3, -0x1.bdf24bccaa179p-8, -0x1.2bd251bb28cbcp-10,
                    -0x1.8511846d95631p-13, -0x1.8cf5a9d78688bp-16),
              pick4(b1, b2, b3, 0x1.51ab9ffce615cp-9, 0x1.6d7743d3acd71p-12,
                    0x1.7350e39ff5c8dp-15, 0x1.1889cae2a6035p-18),
              pick4(b1, b2, b3, -0x1.e8ae68b7503c4p-11, -0x1.aed7ebd35f41bp-14,
                    -0x1.5a6138967689dp-17, -0x1.8721d5b56ed05p-21),
              pick4(b1, b2, b3, 0x1.535f57ffa591dp-12, 0x1.ec773cd209d4bp-16,
                    0x1.3c3b6faf67eeep-19, 0x1.0d16b0867feebp-23),
              pick4(b1, b2, b3, -0x1.c5fa68acec92cp-14, -0x1.117a6255d0638p-17,
                    -0x1.1ae03ba6fc284p-21, -0x1.6d90bad09a0b6p-26),
              pick4(b1, b2, b3, 0x1.254ed0adec8cdp-15, 0x1.27af3eda8ec2fp-19,
                    0x1.f05afb83b864fp-24, 0x1.ea8e9abdb0b00p-29),
              pick4(b1, b2, b3, -0x1.6f07247ce7cd7p-17, -0x1.37bb8f3a543b4p-21,
                    -0x1.ab828500f3ee0p-26, -0x1.454ca0b57923bp-31),
              pick4(b1, b2, b3, 0x1.bdb8405ffc898p-19, 0x1.40e94c78ec8f9p-23,
                    0x1.69c1d2f295b53p-28, 0x1.aa658fa41f0d6p-34),
              pick4(b1, b2, b3, -0x1.06e9e5f654f58p-20, -0x1.427b6363e66acp-25,
                    -0x1.2c67b457e4af7p-30, -0x1.129d49bd9a22cp-36),
              pick4(b1, b2, b3, 0x1.2e61a2834fe14p-22, 0x1.3dc03504d4efap-27,
                    0x1.ebe5c01b89f41p-33, 0x1.60317dd0f12fdp-39),
              pick4(b1, b2, b3, -0x1.62b25c05dd3a3p-24, -0x1.45bae9d10cbcfp-29,
                    -0x1.a7b7ab2012f59p-35, -0x1.f850c4a3c7fcep-42),
              pick4(b1, b2, b3, 0x1.83d799532b74ap-26, 0x1.33bfa65900a4bp-31,
                    0x1.4fcf3417b0c8bp-37, 0x1.3bebbe186fb64p-44));
}
// e^(-x^2) as a double-double, 0 <= x <= 6.1 (normal result).
NUVEC_KERNEL_INLINE dd exp_negsq(double x) {
  dd x2 = two_prod(x, x);
  exp_red r = exp_reduce(-x2.hi, -x2.lo);
  dd p = exp_poly(r.r, r.rl);
  double s = pow2i(r.k);
  return {p.hi * s, p.lo * s};
}
}  // namespace f64detail

NUVEC_KERNEL_INLINE double erf(double x) {
  using namespace f64detail;
  double ax = fabs(x);
  dd e = erf_small(sel(ax < 1.0, ax, 1.0));
  double small = e.hi + e.lo;
  // Tiny |x| (products' low parts would be subnormal): 2/sqrt(pi) x, scaled
  // by 2^64 above 2^-1021 so that the single rounding is the final one.
  double xs = ax * 0x1p64;
  double tiny = fma(xs, TWO_OVER_SQRTPI_HI, xs * TWO_OVER_SQRTPI_LO) * 0x1p-64;
  tiny = sel(ax < 0x1p-1021, ax * TWO_OVER_SQRTPI_HI, tiny);
  small = sel(ax < 0x1p-1000, tiny, small);
  // |x| < 1: erf_small; 1 <= |x| < 6: erf = 1 - e^(-x^2) R(x), e^(-x^2) as a
  // double-double.
  double ab = sel(ax < 1.0, 1.0, sel(ax < 6.0, ax, 6.0));
  dd E = exp_negsq(ab);
  double R = erfcx_poly(ab);
  dd c = two_prod(E.hi, R);
  dd s = fast_two_sum(1.0, -c.hi);
  double big = s.hi + (s.lo - fma(E.lo, R, c.lo));
  double r = sel(ax < 1.0, small, sel(ax < 6.0, big, 1.0));
  return sel(isnan(x), x + x, xorsign(r, x));
}

NUVEC_KERNEL_INLINE double erfinv(double y) {
  using namespace f64detail;
  double a = fabs(y);
  bool ok = a < 1.0;
  double ac = sel(ok, a, 0.5);
  // Starting guess (relative error <= 2^-27): w = -log(1 - a^2),
  // erfinv(a) = a P1(w) for w < 5, P2(sqrt(w)) above.
  double w = -log((1.0 - ac) * (1.0 + ac));
  bool lo = w < 5.0;
  double v = sel(lo, w, sqrt(w));
  double P = poly(v, sel(lo, 0x1.c5bf891fdde9fp-1, -0x1.5141fac8c97e0p-2),
                  sel(lo, 0x1.db29f71873b1fp-3, 0x1.e41bfd281eceap+0),
                  sel(lo, 0x1.7a754eed81674p-7, -0x1.581221d59b27ep+0),
                  sel(lo, -0x1.3233ffd4a5df5p-9, 0x1.0b73f815b90a8p+0),
                  sel(lo, -0x1.087cfe6048d6dp-13, -0x1.039d24c369c29p-1),
                  sel(lo, 0x1.75df8937c643ap-15, 0x1.556d9cd2c5f88p-3),
                  sel(lo, 0x1.bf17e87f90989p-19, -0x1.3a9d89b23dc57p-5),
                  sel(lo, -0x1.976067aa59a22p-20, 0x1.98d581fcdef0ep-8),
                  sel(lo, 0x1.15b9f39b582afp-24, -0x1.704e1aa5ae3eep-11),
                  sel(lo, 0x1.641ad7aa462e6p-26, 0x1.b6ea26620d44fp-15),
                  sel(lo, -0x1.96fd94ffd9daap-29, -0x1.37b1cf8fbf34fp-19),
                  sel(lo, 0x1.0f810cd459d8fp-33, 0x1.8ff61c9526420p-25));
  double x0 = sel(lo, ac * P, P);
  x0 = sel(x0 < 6.1, x0, 6.1);
  // One Halley step on f(x) = erf(x) - a, f' = 2/sqrt(pi) e^(-x^2),
  // f''/f' = -2x: x1 = x0 - u / (1 + x0 u), u = f / f'. The residual f is
  // computed with an absolute error ~2^-56 f'(x0) x0.
  dd E = exp_negsq(x0);
  // x0 < 1: f = (erf.hi - a) + erf.lo, erf.hi - a exact (Sterbenz).
  dd es = erf_small(sel(x0 < 1.0, x0, 1.0));
  double f_small = (es.hi - ac) + es.lo;
  // x0 >= 1: f = (1 - a) - e^(-x0^2) R(x0), 1 - a exact (a > 0.84).
  double xb = sel(x0 < 1.0, 1.0, x0);
  double R = erfcx_poly(xb);
  dd c = two_prod(E.hi, R);
  double f_big = (((1.0 - ac) - c.hi) - c.lo) - E.lo * R;
  double f = sel(x0 < 1.0, f_small, f_big);
  double u = f / (TWO_OVER_SQRTPI_HI * E.hi);
  double x1 = x0 - u / fma(x0, u, 1.0);
  // Tiny a: erfinv(a) = sqrt(pi)/2 a (1 + pi a^2 / 12 + ...).
  double tiny = fma(ac, SQRTPI_OVER_2_HI, ac * SQRTPI_OVER_2_LO);
  double r = sel(ac < 0x1p-28, tiny, x1);
  r = sel(ok, r, sel(a == 1.0, kInf, qnan()));
  return sel(isnan(y), y + y, xorsign(r, y));
}

// ---- power
// -------------------------------------------------------------------

namespace f64detail {
constexpr double TWO_THIRDS_HI = 0x1.5555555555555p-1,
                 TWO_THIRDS_LO = 0x1.5555555555555p-55;
constexpr double TWO_FIFTHS_HI = 0x1.999999999999ap-2,
                 TWO_FIFTHS_LO = -0x1.999999999999ap-56;

// (2 atanh(s) - 2s - 2s^3/3 - 2s^5/5) / s^7, z = s^2 <= 0.0295.
NUVEC_KERNEL_INLINE double pow_q7(double z) {
  return poly(z, 0x1.2492492492492p-2, 0x1.c71c71c71c822p-3,
              0x1.745d1745a3ef0p-3, 0x1.3b13b16b4b833p-3, 0x1.1110f80547523p-3,
              0x1.e1effabc4b093p-4, 0x1.acf8448fda674p-4, 0x1.b2e0d3d38f395p-4);
}

// log x for positive finite x (subnormals included) as a double-double with
// relative error ~2^-70: x = 2^e m, m in [sqrt(1/2), sqrt(2)), s = (m-1)/(m+1)
// in double-double, log m = 2s + s^3 (2/3 + s^2 (2/5 + s^2 Q7(s^2))), the
// two leading Horner steps in double-double.
NUVEC_KERNEL_INLINE dd log_hp(double x) {
  bool sub = x < 0x1p-1022;
  x = sel(sub, x * 0x1p54, x);
  constexpr u64 kSqrtHalf = 0x3fe6a09e667f3bcdull;
  u64 b = as_u(x) + (0x3ff0000000000000ull - kSqrtHalf);
  double e = u2d(b >> 52) - sel(sub, 1023.0 + 54.0, 1023.0);
  double m = as_d((b & 0x000fffffffffffffull) + kSqrtHalf);
  double f = m - 1.0;  // exact
  dd den = two_sum(2.0, f);
  double sh = f / den.hi;
  double sl = (fma(-sh, den.hi, f) - sh * den.lo) / den.hi;
  dd z = two_prod(sh, sh);
  z.lo = fma(2.0 * sh, sl, z.lo);
  // U = 2/5 + z Q7(z)
  dd U = fast_two_sum(TWO_FIFTHS_HI, z.hi * pow_q7(z.hi));
  U.lo += TWO_FIFTHS_LO;
  // V = 2/3 + z U
  dd p = two_prod(z.hi, U.hi);
  dd V = fast_two_sum(TWO_THIRDS_HI, p.hi);
  V.lo += TWO_THIRDS_LO + (p.lo + fma(z.hi, U.lo, z.lo * U.hi));
  // T = s^3 V
  dd s3 = two_prod(sh, z.hi);
  s3.lo += fma(sh, z.lo, sl * z.hi);
  dd T = two_prod(s3.hi, V.hi);
  T.lo += fma(s3.hi, V.lo, s3.lo * V.hi);
  dd lm = fast_two_sum(2.0 * sh, T.hi);
  double lml = lm.lo + (2.0 * sl + T.lo);
  // + e ln2 (e LN2_42_HI exact; |e LN2_42_HI| >= 0.69 > |log m| unless e = 0)
  dd el = two_prod(e, LN2_42_LO);
  dd s = fast_two_sum(e * LN2_42_HI, lm.hi);
  return fast_two_sum(s.hi, s.lo + (el.hi + (el.lo + lml)));
}
}  // namespace f64detail

// x^y with the C99 (Annex F) special cases. |x|^y = e^(y log|x|): log|x| in
// double-double (~2^-70), y log|x| as a double-double, then exp with the
// extra-precision reduction.
NUVEC_KERNEL_INLINE double pow(double x, double y) {
  using namespace f64detail;
  double ax = fabs(x);
  bool fin = (ax > 0.0) & (ax < kInf);
  dd L = log_hp(sel(fin, ax, 1.0));
  double Lh = sel(fin, L.hi, sel(ax == 0.0, -kInf, kInf));
  double Ll = sel(fin, L.lo, 0.0);
  dd z = two_prod(y, Lh);
  double zh = z.hi;
  double zl = z.lo + y * Ll;
  zl = sel(fabs(zh) <= 746.0, zl, 0.0);  // 0 in inf/NaN lanes
  zh = sel(zh > 710.0, 710.0, zh);
  zh = sel(zh < -746.0, -746.0, zh);
  exp_red r = exp_reduce(zh, zl);
  // rl can reach 2^-44 here (zl): apply it as e^r (1 + rl), not through
  // exp_poly's first-order term (which assumes |rl| <= 2^-50 |r|).
  dd e = exp_poly(r.r, 0.0);
  double el = fma(e.hi, r.rl, e.lo);
  double mag = scale(e.hi + el, r.k);
  // Subnormal results: round (e.hi + el) 2^k once, on the grid of 2^-52 in
  // 1 + W, W = (e.hi + el) 2^(k + 1022) < 1 (scaling by 2^(k+1022) is exact).
  double ks = sel(r.k < -1021.5, r.k + 1022.0, 0.0);
  double sc = pow2i(ks);
  double Wh = e.hi * sc;
  dd T = two_sum(1.0, Wh);
  double sub = ((T.hi + (T.lo + el * sc)) - 1.0) * 0x1p-1022;  // exact
  mag = sel((r.k < -1021.5) & (Wh < 1.0), sub, mag);
  bool y_int = rint(y) == y;  // +-inf counts as an even integer
  double h = 0.5 * y;
  bool y_odd = y_int & (rint(h) != h);
  double res = sel(signbit(x) & y_odd, -mag, mag);
  res = sel((x < 0.0) & (x > -kInf) & !y_int, qnan(), res);
  res = sel(isnan2(x, y), x + y, res);
  bool one = (y == 0.0) | (x == 1.0) | ((x == -1.0) & (fabs(y) == kInf));
  return sel(one, 1.0, res);
}

}  // namespace nuvec::kernels::math
