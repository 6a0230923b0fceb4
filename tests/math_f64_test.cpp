// Accuracy and special-value tests for include/nuvec/kernels/math_f64.h.
// Reference: long double libm (x87 80-bit on x86-64), an independent
// implementation with 11 more bits of precision.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

#include "nuvec/kernels/math_f64_special.h"

namespace m = nuvec::kernels::math;

namespace {

using ld = long double;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double from_bits(uint64_t b) {
  double d;
  std::memcpy(&d, &b, 8);
  return d;
}
uint64_t to_bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

// Error of got against the exact ref, in ULP of the double nearest to ref.
double ulp_err(double got, ld ref) {
  if (std::isnan(got) || std::isnan((double)ref)) return (std::isnan(got) && std::isnan((double)ref)) ? 0 : 1e9;
  double rd = (double)ref;
  if (std::isinf(rd) || std::isinf(got)) {
    if (got == rd) return 0;
    // ref rounds to inf but is just above DBL_MAX: measure against 2^1024.
    ld big = std::ldexp((ld)1, 1024);
    if (std::isinf(got)) return (double)std::fabs((big * (got > 0 ? 1 : -1) - ref) / std::ldexp((ld)1, 971));
    return 1e9;
  }
  int e;
  std::frexp(rd == 0 ? (double)ref : rd, &e);
  ld u = std::ldexp((ld)1, std::max(e - 53, -1074));
  if (rd == 0) u = std::ldexp((ld)1, -1074);
  return (double)(std::fabs((ld)got - ref) / u);
}

struct Worst {
  double err = 0, x = 0, y = 0;
};

// Samplers.
std::mt19937_64& rng() {
  static std::mt19937_64 g(12345);
  return g;
}
double any_bits() {  // any finite double, uniform over bit patterns
  for (;;) {
    double d = from_bits(rng()());
    if (std::isfinite(d)) return d;
  }
}
double uniform(double a, double b) { return std::uniform_real_distribution<double>(a, b)(rng()); }
double log_uniform(double a, double b) {  // a, b > 0
  return std::exp(uniform(std::log(a), std::log(b)));
}

using F1 = double (*)(double);
using R1 = ld (*)(ld);

Worst check1(const char* name, F1 f, R1 ref, const std::vector<double>& xs) {
  Worst w;
  for (double x : xs) {
    double got = f(x);
    double e = ulp_err(got, ref(x));
    if (e > w.err) w = {e, x, 0};
  }
  std::printf("  %-8s max %.3f ULP at x=%.17g (%zu inputs)\n", name, w.err, w.x, xs.size());
  return w;
}

std::vector<double> gen(std::initializer_list<std::function<double()>> parts, int n_each) {
  std::vector<double> v;
  for (auto& p : parts)
    for (int i = 0; i < n_each; ++i) {
      double x = p();
      v.push_back(x);
      v.push_back(-x);
    }
  return v;
}

bool same(double a, double b) {  // bitwise modulo NaN payload
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return to_bits(a) == to_bits(b);
}
#define EXPECT_SAME(a, b) EXPECT_TRUE(same((a), (b))) << #a << " = " << (a) << " expected " << (b)

ld l_exp(ld x) { return expl(x); }
ld l_exp2(ld x) { return exp2l(x); }
ld l_expm1(ld x) { return expm1l(x); }
ld l_log(ld x) { return logl(x); }
ld l_log2(ld x) { return log2l(x); }
ld l_log10(ld x) { return log10l(x); }
ld l_log1p(ld x) { return log1pl(x); }
ld l_sin(ld x) { return sinl(x); }
ld l_cos(ld x) { return cosl(x); }
ld l_tan(ld x) { return tanl(x); }
ld l_asin(ld x) { return asinl(x); }
ld l_acos(ld x) { return acosl(x); }
ld l_atan(ld x) { return atanl(x); }
ld l_sinh(ld x) { return sinhl(x); }
ld l_cosh(ld x) { return coshl(x); }
ld l_tanh(ld x) { return tanhl(x); }
ld l_asinh(ld x) { return asinhl(x); }
ld l_acosh(ld x) { return acoshl(x); }
ld l_atanh(ld x) { return atanhl(x); }
ld l_sigmoid(ld x) { return 1.0L / (1.0L + expl(-x)); }

double f_exp(double x) { return m::exp(x); }
double f_exp2(double x) { return m::exp2(x); }
double f_expm1(double x) { return m::expm1(x); }
double f_log(double x) { return m::log(x); }
double f_log2(double x) { return m::log2(x); }
double f_log10(double x) { return m::log10(x); }
double f_log1p(double x) { return m::log1p(x); }
double f_sin(double x) { return m::sin(x); }
double f_cos(double x) { return m::cos(x); }
double f_tan(double x) { return m::tan(x); }
double f_asin(double x) { return m::asin(x); }
double f_acos(double x) { return m::acos(x); }
double f_atan(double x) { return m::atan(x); }
double f_sinh(double x) { return m::sinh(x); }
double f_cosh(double x) { return m::cosh(x); }
double f_tanh(double x) { return m::tanh(x); }
double f_asinh(double x) { return m::asinh(x); }
double f_acosh(double x) { return m::acosh(x); }
double f_atanh(double x) { return m::atanh(x); }
double f_sigmoid(double x) { return m::sigmoid(x); }

constexpr int N = 40000;  // per sampler, times 2 signs

}  // namespace

TEST(MathF64, Exp) {
  auto xs = gen({[] { return uniform(0, 1); }, [] { return uniform(0, 746); },
                 [] { return log_uniform(1e-300, 1); }, [] { return uniform(700, 710); },
                 [] { return uniform(708, 745.2); }, [] { return any_bits(); }},
                N);
  EXPECT_LE(check1("exp", f_exp, l_exp, xs).err, 1.0);
  auto x2 = gen({[] { return uniform(0, 1); }, [] { return uniform(0, 1080); },
                 [] { return log_uniform(1e-300, 1); }, [] { return any_bits(); }},
                N);
  EXPECT_LE(check1("exp2", f_exp2, l_exp2, x2).err, 1.0);
  auto x3 = gen({[] { return uniform(0, 1); }, [] { return uniform(0, 50); },
                 [] { return log_uniform(1e-300, 1); }, [] { return uniform(700, 710); },
                 [] { return any_bits(); }},
                N);
  EXPECT_LE(check1("expm1", f_expm1, l_expm1, x3).err, 1.0);
}

TEST(MathF64, ExpSpecial) {
  EXPECT_SAME(m::exp(0.0), 1.0);
  EXPECT_SAME(m::exp(-0.0), 1.0);
  EXPECT_SAME(m::exp(kInf), kInf);
  EXPECT_SAME(m::exp(-kInf), 0.0);
  EXPECT_SAME(m::exp(kNaN), kNaN);
  EXPECT_SAME(m::exp(710.0), kInf);
  EXPECT_SAME(m::exp(-746.0), 0.0);
  EXPECT_SAME(m::exp(-745.0), 4.9406564584124654e-324);
  EXPECT_SAME(m::exp(1e-320), 1.0);
  EXPECT_SAME(m::exp2(3.0), 8.0);
  EXPECT_SAME(m::exp2(-1074.0), 4.9406564584124654e-324);
  EXPECT_SAME(m::exp2(1023.0), 0x1p1023);
  EXPECT_SAME(m::exp2(1024.0), kInf);
  EXPECT_SAME(m::exp2(-kInf), 0.0);
  EXPECT_SAME(m::exp2(kNaN), kNaN);
  EXPECT_SAME(m::expm1(0.0), 0.0);
  EXPECT_SAME(m::expm1(-0.0), -0.0);
  EXPECT_SAME(m::expm1(1e-310), 1e-310);
  EXPECT_SAME(m::expm1(-kInf), -1.0);
  EXPECT_SAME(m::expm1(kInf), kInf);
  EXPECT_SAME(m::expm1(-50.0), -1.0);
  EXPECT_SAME(m::expm1(710.0), kInf);
  EXPECT_SAME(m::expm1(kNaN), kNaN);
}

TEST(MathF64, Log) {
  auto pos = [] { return std::fabs(any_bits()); };
  auto xs = gen({pos, [] { return uniform(0.5, 2); }, [] { return uniform(0.99, 1.01); },
                 [] { return log_uniform(1e-320, 1e-300); }, [] { return log_uniform(1e-5, 1e5); }},
                N);
  for (auto& x : xs) x = std::fabs(x);
  EXPECT_LE(check1("log", f_log, l_log, xs).err, 1.0);
  EXPECT_LE(check1("log2", f_log2, l_log2, xs).err, 1.0);
  EXPECT_LE(check1("log10", f_log10, l_log10, xs).err, 1.0);
  auto x1 = gen({[] { return log_uniform(1e-300, 1); }, [] { return uniform(0, 1); },
                 [] { return log_uniform(1, 1e300); }, [] { return uniform(0.25, 0.5); }},
                N);
  for (auto& x : x1)
    if (x <= -1) x = -0.5;
  EXPECT_LE(check1("log1p", f_log1p, l_log1p, x1).err, 1.0);
}

TEST(MathF64, LogSpecial) {
  for (auto f : {m::log, m::log2, m::log10}) {
    EXPECT_SAME(f(1.0), 0.0);
    EXPECT_SAME(f(0.0), -kInf);
    EXPECT_SAME(f(-0.0), -kInf);
    EXPECT_SAME(f(kInf), kInf);
    EXPECT_SAME(f(-1.0), kNaN);
    EXPECT_SAME(f(-kInf), kNaN);
    EXPECT_SAME(f(kNaN), kNaN);
  }
  EXPECT_SAME(m::log2(0x1p-1074), -1074.0);
  EXPECT_SAME(m::log2(0x1p1023), 1023.0);
  EXPECT_SAME(m::log10(1000.0), 3.0);
  EXPECT_SAME(m::log1p(0.0), 0.0);
  EXPECT_SAME(m::log1p(-0.0), -0.0);
  EXPECT_SAME(m::log1p(-1.0), -kInf);
  EXPECT_SAME(m::log1p(-2.0), kNaN);
  EXPECT_SAME(m::log1p(kInf), kInf);
  EXPECT_SAME(m::log1p(-kInf), kNaN);
  EXPECT_SAME(m::log1p(kNaN), kNaN);
  EXPECT_SAME(m::log1p(1e-310), 1e-310);
}

TEST(MathF64, Trig) {
  // Dense near multiples of pi/2 and pi/4, plus the whole range.
  auto near_k = [] {
    double k = std::floor(uniform(1, 1e6));
    return (double)((ld)k * 1.5707963267948966192313216916397514L) * (1 + uniform(-1e-15, 1e-15));
  };
  // Known hard case for argument reduction (Kahan/McDonald).
  std::vector<double> hard = {6381956970095103.0 * std::ldexp(1.0, 797), 5.319372648326541416e+255,
                              1.5707963267948966, 3.141592653589793, 1e22, 0x1.fffffffffffffp1023,
                              0x1p1023, 0x1p-1022, 4.9e-324, 0.78539816339744828, 0.78539816339744840};
  auto xs = gen({[] { return uniform(0, 1); }, [] { return uniform(0, 100); }, near_k,
                 [] { return log_uniform(1e-300, 1e300); }, [] { return any_bits(); }},
                N);
  xs.insert(xs.end(), hard.begin(), hard.end());
  EXPECT_LE(check1("sin", f_sin, l_sin, xs).err, 1.0);
  EXPECT_LE(check1("cos", f_cos, l_cos, xs).err, 1.0);
  EXPECT_LE(check1("tan", f_tan, l_tan, xs).err, 1.0);
}

TEST(MathF64, TrigSpecial) {
  EXPECT_SAME(m::sin(0.0), 0.0);
  EXPECT_SAME(m::sin(-0.0), -0.0);
  EXPECT_SAME(m::sin(1e-310), 1e-310);
  EXPECT_SAME(m::sin(-1e-310), -1e-310);
  EXPECT_SAME(m::tan(-0.0), -0.0);
  EXPECT_SAME(m::tan(5e-324), 5e-324);
  EXPECT_SAME(m::cos(0.0), 1.0);
  EXPECT_SAME(m::cos(-0.0), 1.0);
  for (auto f : {m::sin, m::cos, m::tan}) {
    EXPECT_SAME(f(kInf), kNaN);
    EXPECT_SAME(f(-kInf), kNaN);
    EXPECT_SAME(f(kNaN), kNaN);
    EXPECT_FALSE(std::isnan(f(0x1.fffffffffffffp1023)));
  }
}

TEST(MathF64, InverseTrig) {
  auto unit = gen({[] { return uniform(0, 1); }, [] { return uniform(0.45, 0.55); },
                   [] { return uniform(0.999, 1); }, [] { return log_uniform(1e-300, 1); },
                   [] { return 1 - log_uniform(1e-16, 1e-3); }},
                  N);
  EXPECT_LE(check1("asin", f_asin, l_asin, unit).err, 1.0);
  EXPECT_LE(check1("acos", f_acos, l_acos, unit).err, 1.0);
  auto xs = gen({[] { return uniform(0, 3); }, [] { return any_bits(); },
                 [] { return uniform(0.40, 0.43); }, [] { return uniform(2.4, 2.43); }},
                N);
  EXPECT_LE(check1("atan", f_atan, l_atan, xs).err, 1.0);
  // atan2 over random pairs
  Worst w;
  for (int i = 0; i < 4 * N; ++i) {
    double y, x;
    switch (i % 4) {
      case 0: y = any_bits(), x = any_bits(); break;
      case 1: y = uniform(-2, 2), x = uniform(-2, 2); break;
      case 2: x = uniform(-2, 2), y = x * uniform(0.40, 0.43); break;
      default: x = uniform(-1e-300, 1e-300), y = uniform(-1e-300, 1e-300);
    }
    double e = ulp_err(m::atan2(y, x), atan2l(y, x));
    if (e > w.err) w = {e, x, y};
  }
  std::printf("  %-8s max %.3f ULP at y=%.17g x=%.17g\n", "atan2", w.err, w.y, w.x);
  EXPECT_LE(w.err, 1.0);
}

TEST(MathF64, InverseTrigSpecial) {
  const double pi = 3.141592653589793, pio2 = 1.5707963267948966, pio4 = 0.78539816339744828;
  EXPECT_SAME(m::asin(-0.0), -0.0);
  EXPECT_SAME(m::asin(1.0), pio2);
  EXPECT_SAME(m::asin(-1.0), -pio2);
  EXPECT_SAME(m::asin(1.0000000000000002), kNaN);
  EXPECT_SAME(m::asin(kInf), kNaN);
  EXPECT_SAME(m::asin(kNaN), kNaN);
  EXPECT_SAME(m::asin(1e-310), 1e-310);
  EXPECT_SAME(m::acos(1.0), 0.0);
  EXPECT_SAME(m::acos(-1.0), pi);
  EXPECT_SAME(m::acos(0.0), pio2);
  EXPECT_SAME(m::acos(-kInf), kNaN);
  EXPECT_SAME(m::acos(kNaN), kNaN);
  EXPECT_SAME(m::atan(-0.0), -0.0);
  EXPECT_SAME(m::atan(kInf), pio2);
  EXPECT_SAME(m::atan(-kInf), -pio2);
  EXPECT_SAME(m::atan(kNaN), kNaN);
  EXPECT_SAME(m::atan(5e-324), 5e-324);
  // C99 F.9.1.4
  EXPECT_SAME(m::atan2(0.0, -0.0), pi);
  EXPECT_SAME(m::atan2(-0.0, -0.0), -pi);
  EXPECT_SAME(m::atan2(0.0, 0.0), 0.0);
  EXPECT_SAME(m::atan2(-0.0, 0.0), -0.0);
  EXPECT_SAME(m::atan2(0.0, -1.0), pi);
  EXPECT_SAME(m::atan2(-0.0, -1.0), -pi);
  EXPECT_SAME(m::atan2(0.0, 1.0), 0.0);
  EXPECT_SAME(m::atan2(-0.0, 1.0), -0.0);
  EXPECT_SAME(m::atan2(-1.0, 0.0), -pio2);
  EXPECT_SAME(m::atan2(1.0, -0.0), pio2);
  EXPECT_SAME(m::atan2(1.0, -kInf), pi);
  EXPECT_SAME(m::atan2(-1.0, -kInf), -pi);
  EXPECT_SAME(m::atan2(1.0, kInf), 0.0);
  EXPECT_SAME(m::atan2(-1.0, kInf), -0.0);
  EXPECT_SAME(m::atan2(kInf, 1.0), pio2);
  EXPECT_SAME(m::atan2(-kInf, -1.0), -pio2);
  EXPECT_SAME(m::atan2(kInf, -kInf), 2.3561944901923448);
  EXPECT_SAME(m::atan2(-kInf, kInf), -pio4);
  EXPECT_SAME(m::atan2(kNaN, 1.0), kNaN);
  EXPECT_SAME(m::atan2(1.0, kNaN), kNaN);
  EXPECT_SAME(m::atan2(1e308, 1e-308), pio2);
  EXPECT_SAME(m::atan2(1e-308, 1e308), 0.0);
  EXPECT_SAME(m::atan2(5e-324, 1.0), 5e-324);
  EXPECT_SAME(m::atan2(5e-324, 0.5), 1e-323);
}

TEST(MathF64, Hyperbolic) {
  auto xs = gen({[] { return uniform(0, 2); }, [] { return uniform(0, 30); },
                 [] { return uniform(700, 711); }, [] { return log_uniform(1e-300, 1); },
                 [] { return uniform(0.5, 0.6); }, [] { return any_bits(); }},
                N);
  EXPECT_LE(check1("sinh", f_sinh, l_sinh, xs).err, 1.0);
  EXPECT_LE(check1("cosh", f_cosh, l_cosh, xs).err, 1.0);
  EXPECT_LE(check1("tanh", f_tanh, l_tanh, xs).err, 1.0);
  EXPECT_LE(check1("asinh", f_asinh, l_asinh, xs).err, 1.0);
  auto x1 = gen({[] { return 1 + log_uniform(1e-16, 1); }, [] { return uniform(1, 10); },
                 [] { return std::fabs(any_bits()); }},
                N);
  for (auto& x : x1) x = std::fabs(x);
  EXPECT_LE(check1("acosh", f_acosh, l_acosh, x1).err, 1.0);
  auto x2 = gen({[] { return uniform(0, 1); }, [] { return 1 - log_uniform(1e-16, 1); },
                 [] { return log_uniform(1e-300, 1); }},
                N);
  EXPECT_LE(check1("atanh", f_atanh, l_atanh, x2).err, 1.0);
  auto x3 = gen({[] { return uniform(0, 40); }, [] { return uniform(700, 746); },
                 [] { return log_uniform(1e-300, 1); }},
                N);
  EXPECT_LE(check1("sigmoid", f_sigmoid, l_sigmoid, x3).err, 1.0);
}

TEST(MathF64, HyperbolicSpecial) {
  for (auto f : {m::sinh, m::tanh, m::asinh, m::atanh}) {
    EXPECT_SAME(f(0.0), 0.0);
    EXPECT_SAME(f(-0.0), -0.0);
    EXPECT_SAME(f(1e-310), 1e-310);
    EXPECT_SAME(f(-1e-310), -1e-310);
    EXPECT_SAME(f(kNaN), kNaN);
  }
  EXPECT_SAME(m::sinh(kInf), kInf);
  EXPECT_SAME(m::sinh(-kInf), -kInf);
  EXPECT_SAME(m::sinh(711.0), kInf);
  EXPECT_SAME(m::cosh(0.0), 1.0);
  EXPECT_SAME(m::cosh(-kInf), kInf);
  EXPECT_SAME(m::cosh(711.0), kInf);
  EXPECT_SAME(m::cosh(kNaN), kNaN);
  EXPECT_SAME(m::tanh(kInf), 1.0);
  EXPECT_SAME(m::tanh(-kInf), -1.0);
  EXPECT_SAME(m::tanh(30.0), 1.0);
  EXPECT_SAME(m::asinh(kInf), kInf);
  EXPECT_SAME(m::asinh(-kInf), -kInf);
  EXPECT_SAME(m::acosh(1.0), 0.0);
  EXPECT_SAME(m::acosh(kInf), kInf);
  EXPECT_SAME(m::acosh(0.5), kNaN);
  EXPECT_SAME(m::acosh(-kInf), kNaN);
  EXPECT_SAME(m::acosh(kNaN), kNaN);
  EXPECT_SAME(m::atanh(1.0), kInf);
  EXPECT_SAME(m::atanh(-1.0), -kInf);
  EXPECT_SAME(m::atanh(1.5), kNaN);
  EXPECT_SAME(m::atanh(-kInf), kNaN);
  EXPECT_SAME(m::sigmoid(0.0), 0.5);
  EXPECT_SAME(m::sigmoid(kInf), 1.0);
  EXPECT_SAME(m::sigmoid(-kInf), 0.0);
  EXPECT_SAME(m::sigmoid(-800.0), 0.0);
  EXPECT_SAME(m::sigmoid(kNaN), kNaN);
}

namespace {
ld l_erf(ld x) { return erfl(x); }
double f_erf(double x) { return m::erf(x); }
double f_erfinv(double x) { return m::erfinv(x); }
// erfinv reference: Newton in long double on erfl / erfcl (4 steps from our
// result, which is within a few ULP; the root does not depend on the start).
ld l_erfinv(ld a) {
  ld aa = fabsl(a);
  if (aa >= 1) return aa == 1 ? copysignl(INFINITY, a) : NAN;
  ld x = std::fabs(m::erfinv((double)aa));
  if (!std::isfinite((double)x)) return NAN;
  const ld c = 1.1283791670955125738961589031215452L;  // 2/sqrt(pi)
  for (int i = 0; i < 4; ++i) {
    ld f = x < 0.5L ? erfl(x) - aa : (1 - aa) - erfcl(x);
    x -= f / (c * expl(-x * x));
  }
  return copysignl(x, a);
}
}  // namespace

TEST(MathF64, Erf) {
  auto xs = gen(
      {[] { return uniform(0, 1); }, [] { return uniform(1, 6); },
       [] { return uniform(0.95, 1.05); },
       [] { return log_uniform(1e-300, 1); }, [] { return uniform(5.5, 6.2); },
       [] { return uniform(1.7, 1.8); }, [] { return uniform(2.7, 2.8); },
       [] { return uniform(3.95, 4.05); }, [] { return any_bits(); }},
      N / 2);
  for (double x : {1.0, 1.75, 2.75, 4.0, 5.9, 6.0, 0x1p-1074, 0x1p-1022,
                   0.9999999999999999})
    xs.push_back(x);
  EXPECT_LE(check1("erf", f_erf, l_erf, xs).err, 1.0);
}

TEST(MathF64, ErfSpecial) {
  EXPECT_SAME(m::erf(0.0), 0.0);
  EXPECT_SAME(m::erf(-0.0), -0.0);
  EXPECT_SAME(m::erf(kInf), 1.0);
  EXPECT_SAME(m::erf(-kInf), -1.0);
  EXPECT_SAME(m::erf(kNaN), kNaN);
  EXPECT_SAME(m::erf(6.0), 1.0);
  EXPECT_SAME(m::erf(-30.0), -1.0);
  EXPECT_SAME(m::erf(1e300), 1.0);
  EXPECT_SAME(m::erf(5e-324), 5e-324);
  EXPECT_SAME(m::erf(-1e-310), (double)(-1e-310L * 1.1283791670955125739L));
}

TEST(MathF64, Erfinv) {
  auto xs = gen({[] { return uniform(0, 1); }, [] { return uniform(0.8, 0.9); },
                 [] { return uniform(0.996, 0.9975); },
                 [] { return 1 - log_uniform(1e-16, 1e-1); },
                 [] { return log_uniform(1e-300, 1); },
                 [] { return log_uniform(1e-10, 1e-7); },
                 [] { return uniform(0.99999, 1); },
                 [] { return 1 - log_uniform(1e-16, 1e-13); }},
                N / 2);
  for (double x : {0.5, 0.8427007929497149, 1 - 0x1p-53, 1 - 0x1p-52,
                   1 - 0x1p-40, 0x1p-28, 0x1p-1074})
    xs.push_back(x);
  for (double x : xs) ASSERT_TRUE(std::isfinite(m::erfinv(x))) << x;
  EXPECT_LE(check1("erfinv", f_erfinv, l_erfinv, xs).err, 1.0);
}

TEST(MathF64, ErfinvSpecial) {
  EXPECT_SAME(m::erfinv(0.0), 0.0);
  EXPECT_SAME(m::erfinv(-0.0), -0.0);
  EXPECT_SAME(m::erfinv(1.0), kInf);
  EXPECT_SAME(m::erfinv(-1.0), -kInf);
  EXPECT_SAME(m::erfinv(1.0000000000000002), kNaN);
  EXPECT_SAME(m::erfinv(-2.0), kNaN);
  EXPECT_SAME(m::erfinv(kInf), kNaN);
  EXPECT_SAME(m::erfinv(-kInf), kNaN);
  EXPECT_SAME(m::erfinv(kNaN), kNaN);
  EXPECT_SAME(m::erfinv(5e-324), 5e-324);
  EXPECT_SAME(m::erfinv(-1e-310), (double)(-1e-310L * 0.88622692545275801365L));
  EXPECT_SAME(m::erf(m::erfinv(0.5)), 0.5);
}

TEST(MathF64, Pow) {
  Worst w;
  int n = 0;
  auto run = [&](double x, double y) {
    double e = ulp_err(m::pow(x, y), powl(x, y));
    ++n;
    if (e > w.err) w = {e, x, y};
  };
  auto ilog = [](double x) { return std::log(std::fabs(x)); };
  for (int i = 0; i < 8 * N; ++i) {
    double x, y;
    switch (i % 10) {
      case 0:
        x = std::fabs(any_bits()), y = any_bits();
        break;  // mostly 0 / inf
      case 1:
        x = uniform(0, 10), y = uniform(-60, 60);
        break;
      case 2:
        x = 1 + uniform(-1e-3, 1e-3), y = uniform(-1, 1) * log_uniform(1, 1e6);
        break;
      case 3:  // x = 1 +- a few ULP, huge y
        x = 1 + std::floor(uniform(-64, 64)) * 0x1p-52,
        y = uniform(-1, 1) * log_uniform(1e10, 1e18);
        break;
      case 4:
        x = uniform(-10, 10), y = std::floor(uniform(-300, 300));
        break;  // integer y
      case 5:   // results near overflow
        x = log_uniform(1e-300, 1e300), y = uniform(700, 709.78) / ilog(x);
        break;
      case 6:  // results near and below the underflow threshold (subnormals)
        x = log_uniform(1e-300, 1e300), y = uniform(-745.2, -700) / ilog(x);
        break;
      case 7:
        x = std::fabs(any_bits()),
        y = uniform(-1, 1) * log_uniform(1e-300, 1e-3);
        break;
      case 8:
        x = log_uniform(1e-320, 1e-300), y = uniform(-1.1, 1.1);
        break;  // subnormal x
      default:
        x = std::fabs(any_bits()),
        y = uniform(-745, 709) / ilog(x);  // any x, finite result
    }
    run(x, y);
    if (i % 10 == 4) run(-x, y + 1);
  }
  // Exact cases.
  for (int k = -1074; k <= 1023; ++k) run(2.0, k);
  for (int k = -60; k <= 60; ++k) run(-3.0, k), run(10.0, k), run(0.5, k);
  std::printf("  %-8s max %.3f ULP at x=%.17g y=%.17g (%d pairs)\n", "pow",
              w.err, w.x, w.y, n);
  EXPECT_LE(w.err, 1.0);
}

TEST(MathF64, PowSpecial) {
  const double vals[] = {0.0,  -0.0,   0.5,     -0.5,  1.0,   -1.0, 2.0,
                         -2.0, 3.0,    -3.0,    2.5,   -2.5,  kInf, -kInf,
                         kNaN, 5e-324, -5e-324, 1e308, -1e308};
  for (double x : vals)
    for (double y : vals) {
      double want = std::pow(x, y);  // glibc follows Annex F exactly for these
      EXPECT_SAME(m::pow(x, y), want) << " x=" << x << " y=" << y;
    }
  EXPECT_SAME(m::pow(kNaN, 0.0), 1.0);
  EXPECT_SAME(m::pow(kNaN, -0.0), 1.0);
  EXPECT_SAME(m::pow(1.0, kNaN), 1.0);
  EXPECT_SAME(m::pow(-1.0, kInf), 1.0);
  EXPECT_SAME(m::pow(-1.0, -kInf), 1.0);
  EXPECT_SAME(m::pow(-0.0, -3.0), -kInf);
  EXPECT_SAME(m::pow(-0.0, 3.0), -0.0);
  EXPECT_SAME(m::pow(-0.0, -2.0), kInf);
  EXPECT_SAME(m::pow(-0.0, 0.5), 0.0);
  EXPECT_SAME(m::pow(-kInf, -3.0), -0.0);
  EXPECT_SAME(m::pow(-kInf, 3.0), -kInf);
  EXPECT_SAME(m::pow(-kInf, 0.5), kInf);
  EXPECT_SAME(m::pow(-8.0, 1.0 / 3), kNaN);
  EXPECT_SAME(m::pow(-2.0, 0x1p53), kInf);
  EXPECT_SAME(m::pow(-2.0, 0x1p53 + 2), kInf);
  EXPECT_SAME(m::pow(-0.5, 1e300), 0.0);
  EXPECT_SAME(m::pow(-2.0, 1025.0), -kInf);
  EXPECT_SAME(m::pow(-2.0, -1075.0), -0.0);
  EXPECT_SAME(m::pow(-2.0, -1073.0), -1e-323);
  EXPECT_SAME(m::pow(2.0, 1024.0), kInf);
  EXPECT_SAME(m::pow(2.0, -1074.0), 5e-324);
  EXPECT_SAME(m::pow(2.0, -1075.0), 0.0);
  EXPECT_SAME(m::pow(4.0, 0.5), 2.0);
  EXPECT_SAME(m::pow(9.0, 1.5), 27.0);
  EXPECT_SAME(m::pow(-3.0, 3.0), -27.0);
  EXPECT_SAME(m::pow(10.0, 22.0), 1e22);
  EXPECT_SAME(m::pow(5e-324, 1.0), 5e-324);
  EXPECT_SAME(m::pow(5e-324, -1.0), kInf);
  EXPECT_SAME(m::pow(1e308, 2.0), kInf);
  EXPECT_SAME(m::pow(1e-308, 2.0), 0.0);
  EXPECT_SAME(m::pow(1.0000000000000002, 1e300), kInf);
  EXPECT_SAME(m::pow(0.9999999999999999, 1e300), 0.0);
  EXPECT_SAME(m::pow(kInf, 1e-300), kInf);
  EXPECT_SAME(m::pow(0x1p-1022, 0.5), 0x1p-511);
}
