// Accuracy and special-value tests for include/nuvec/kernels/math_f32.h.
// References are glibc's double (or long double) functions; errors are
// measured in ULPs of the float nearest to the reference.
#include "nuvec/kernels/math_f32_special.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace m = nuvec::kernels::math;

namespace {

// Stated bounds (math_f32.h): float32 kernels 1.5 ULP, double-based ones 1,
// sin and cos 0.75 (float path below 2^18: 0.72 over every input).
constexpr double kBound = 1.0;
constexpr double kFast = 1.5;
constexpr double kTrig = 0.75;

float bits_to_float(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t float_to_bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// Error of `got` against the exact value `ref`, in ULPs of float near ref.
// Results beyond the float range must be the matching infinity.
double ulp_error(float got, long double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e9;
  if (std::isnan(got)) return 1e9;
  float rf = static_cast<float>(ref);
  if (std::isinf(rf) || std::isinf(got)) return rf == got ? 0.0 : 1e9;
  long double a = std::fabs(ref);
  int e = a < 0x1p-126L ? -126 : std::ilogb(a);
  long double ulp = std::ldexp(1.0L, e - 23);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - ref) /
                             ulp);
}

struct Worst {
  double ulp = 0;
  float x = 0, y = 0;
};

// Inputs: random bit patterns, dense grids near interesting points, and
// special values. `lo`/`hi` restrict the random patterns to the domain.
std::vector<float> inputs(float lo, float hi, std::vector<float> centers) {
  std::vector<float> v;
  std::mt19937 rng(12345);
  while (v.size() < 200000) {
    float f = bits_to_float(static_cast<uint32_t>(rng()));
    if (f >= lo && f <= hi) v.push_back(f);
  }
  centers.push_back(0.0f);
  for (float c : centers) {
    // 2000 consecutive floats on each side of c.
    float a = c, b = c;
    for (int i = 0; i < 2000; ++i) {
      a = std::nextafter(a, -INFINITY);
      b = std::nextafter(b, INFINITY);
      if (a >= lo && a <= hi) v.push_back(a);
      if (b >= lo && b <= hi) v.push_back(b);
    }
    if (c >= lo && c <= hi) v.push_back(c);
  }
  // Uniform grid in [-4, 4] (where most of the curvature is).
  for (int i = 0; i <= 40000; ++i) {
    float f = -4.0f + 8.0f * static_cast<float>(i) / 40000.0f;
    if (f >= lo && f <= hi) v.push_back(f);
  }
  // Subnormals and tiny values.
  for (uint32_t b = 1; b < (1u << 23); b += 997) {
    float f = bits_to_float(b);
    if (f >= lo && f <= hi) v.push_back(f);
    if (-f >= lo && -f <= hi) v.push_back(-f);
  }
  return v;
}

template <class F, class R>
Worst check1(F f, R ref, const std::vector<float>& xs) {
  Worst w;
  for (float x : xs) {
    double e = ulp_error(f(x), ref(x));
    if (e > w.ulp) w = {e, x, 0};
  }
  return w;
}

long double erfinv_ref(float yf) {
  long double y = yf;
  if (y == 0) return y;
  long double ay = std::fabs(y);
  if (ay == 1) return std::copysign(INFINITY, y);
  if (ay > 1) return NAN;
  // Newton on erf (erfc near 1) from a float-accurate start.
  long double x = m::erfinv(static_cast<float>(ay));
  if (!std::isfinite(x)) x = 4;
  const long double k = 0.886226925452758013649083741671L;  // sqrt(pi)/2
  for (int i = 0; i < 4; ++i) {
    long double r = x < 1 ? std::erf(x) - ay : (1 - ay) - std::erfc(x);
    x -= r * k * std::exp(x * x);
  }
  return std::copysign(x, y);
}

#define EXPECT_WITHIN_BOUND(w) EXPECT_WITHIN(w, kBound)
#define EXPECT_WITHIN(w, bound)                                              \
  do {                                                                       \
    std::printf("  max ulp %.4f at x = %a y = %a\n", (w).ulp, double((w).x), \
                double((w).y));                                              \
    EXPECT_LE((w).ulp, bound)                                                \
        << "worst at x = " << std::hexfloat << (w).x << " y = " << (w).y;    \
  } while (0)

constexpr float kMax = std::numeric_limits<float>::max();

}  // namespace

#define UNARY_TEST_B(NAME, BOUND, LO, HI, REF, ...)                \
  TEST(MathF32, NAME) {                                            \
    auto xs = inputs(LO, HI, {__VA_ARGS__});                       \
    Worst w = check1([](float x) { return m::NAME(x); }, REF, xs); \
    EXPECT_WITHIN(w, BOUND);                                       \
  }
#define UNARY_TEST(NAME, ...) UNARY_TEST_B(NAME, kBound, __VA_ARGS__)
#define FAST_TEST(NAME, ...) UNARY_TEST_B(NAME, kFast, __VA_ARGS__)

#define REF1(FN) [](float x) -> long double { return FN(double(x)); }

FAST_TEST(exp, -kMax, kMax, REF1(std::exp), 88.72f, -87.33f, -103.97f, 1.0f)
FAST_TEST(exp2, -kMax, kMax, REF1(std::exp2), 128.0f, -126.0f, -149.0f, 1.0f)
FAST_TEST(expm1, -kMax, kMax, REF1(std::expm1), 88.72f, -17.0f, 0.35f, -0.35f)
FAST_TEST(log, 0.0f, kMax, REF1(std::log), 1.0f, 0.7071f, 1.4142f, kMax)
FAST_TEST(log2, 0.0f, kMax, REF1(std::log2), 1.0f, 0.7071f, 1.4142f, 2.0f)
FAST_TEST(log10, 0.0f, kMax, REF1(std::log10), 1.0f, 10.0f, 0.1f, 1e10f)
FAST_TEST(log1p, -1.0f, kMax, REF1(std::log1p), -1.0f, 1e-8f, -0.29f, 0.41f)
// sin, cos: around 2^18 (where the float path ends) on both sides too.
UNARY_TEST_B(sin, kTrig, -kMax, kMax, REF1(std::sin), 3.14159265f, 1.5707963f,
             0x1p52f, 0x1p17f, 0x1p18f, -0x1p18f, 0x1p24f, 1e22f, 6.2831853f)
UNARY_TEST_B(cos, kTrig, -kMax, kMax, REF1(std::cos), 3.14159265f, 1.5707963f,
             0x1p52f, 0x1p17f, 0x1p18f, -0x1p18f, 0x1p24f, 1e22f, 4.712389f)
UNARY_TEST(tan, -kMax, kMax, REF1(std::tan), 1.5707963f, 0.7853982f, 0x1p52f,
           0x1p17f, 1e22f)
UNARY_TEST(asin, -1.0f, 1.0f, REF1(std::asin), 1.0f, -1.0f, 0.5f)
UNARY_TEST(acos, -1.0f, 1.0f, REF1(std::acos), 1.0f, -1.0f, 0.5f, -0.5f)
UNARY_TEST(atan, -kMax, kMax, REF1(std::atan), 1.0f, -1.0f, 0.41421356f, 1e8f)
UNARY_TEST(sinh, -kMax, kMax, REF1(std::sinh), 89.41f, -89.41f, 1e-4f)
UNARY_TEST(cosh, -kMax, kMax, REF1(std::cosh), 89.41f, -89.41f, 1e-4f)
// tanh: 0.8 (polynomial / exp branch), 0.8834 (2^n from 1/4 to 1/8), 9.01
// (rounds to 1 from 0x1.205968p+3 on).
FAST_TEST(tanh, -kMax, kMax, REF1(std::tanh), 9.01f, 0.8f, -0.8f, 0.8834f,
          0.55f, 0.3466f)
UNARY_TEST(asinh, -kMax, kMax, REF1(std::asinh), 1.0f, 1e19f, 1e-4f)
UNARY_TEST(acosh, 1.0f, kMax, REF1(std::acosh), 1.0f, 2.0f, 1e19f)
UNARY_TEST(atanh, -1.0f, 1.0f, REF1(std::atanh), 1.0f, -1.0f, 0.5f)
FAST_TEST(erf, -kMax, kMax, REF1(std::erf), 1.0f, 2.5f, 4.25f, 3.92f)
UNARY_TEST(erfinv, -1.0f, 1.0f, erfinv_ref, 1.0f, -1.0f, 0.5f, 0.8427f, 0.99f,
           0.9953f)
FAST_TEST(sigmoid, -kMax, kMax, ([](float x) -> long double {
             long double xl = x;
             return 1.0L / (1.0L + std::exp(-xl));
           }),
           -88.0f, -103.0f, 16.6f, 17.0f, -80.0f, 0.3466f, -0.3466f)

namespace {

template <class F, class R>
Worst check2(F f, R ref, const std::vector<float>& xs,
             const std::vector<float>& ys) {
  Worst w;
  for (float x : xs)
    for (float y : ys) {
      double e = ulp_error(f(x, y), ref(x, y));
      if (e > w.ulp) w = {e, x, y};
    }
  return w;
}

std::vector<float> sample(size_t n, float lo, float hi, uint32_t seed) {
  std::vector<float> v;
  std::mt19937 rng(seed);
  while (v.size() < n) {
    float f = bits_to_float(static_cast<uint32_t>(rng()));
    if (f >= lo && f <= hi) v.push_back(f);
  }
  return v;
}

}  // namespace

TEST(MathF32, atan2) {
  auto xs = sample(500, -kMax, kMax, 1), ys = sample(500, -kMax, kMax, 2);
  for (float s : {0.0f, 1.0f, -1.0f, 1e-40f, 3.0f, -2.5f}) {
    xs.push_back(s);
    ys.push_back(s);
  }
  Worst w = check2([](float y, float x) { return m::atan2(y, x); },
                   [](float y, float x) -> long double {
                     return std::atan2(double(y), double(x));
                   },
                   ys, xs);
  EXPECT_WITHIN_BOUND(w);
}

TEST(MathF32, pow) {
  auto ref = [](float x, float y) -> long double {
    return std::pow(static_cast<long double>(x), static_cast<long double>(y));
  };
  auto f = [](float x, float y) { return m::pow(x, y); };
  // Positive bases, exponents that keep the result mostly in range.
  Worst w = check2(f, ref, sample(400, 0.0f, kMax, 3),
                   sample(400, -300.0f, 300.0f, 4));
  EXPECT_WITHIN_BOUND(w);
  // Bases near 1 with large exponents (the hardest case for log2 * y).
  std::vector<float> near1, big;
  for (int i = -200; i <= 200; ++i)
    near1.push_back(1.0f + static_cast<float>(i) * 0x1p-23f);
  for (int i = 0; i < 300; ++i)
    big.push_back(std::ldexp(1.0f + i / 300.0f, 10 + i % 20) *
                  (i % 2 ? 1.0f : -1.0f));
  w = check2(f, ref, near1, big);
  EXPECT_WITHIN_BOUND(w);
  // Negative bases with integer exponents; subnormal results.
  std::vector<float> ints;
  for (int i = -40; i <= 40; ++i) ints.push_back(static_cast<float>(i));
  w = check2(f, ref, sample(500, -kMax, 0.0f, 5), ints);
  EXPECT_WITHIN_BOUND(w);
  w = check2(f, ref, {0.5f, 0.1f, 2.0f, 3.0f, 1e-20f},
             sample(2000, -1200.0f, 1200.0f, 6));
  EXPECT_WITHIN_BOUND(w);
}

// Special values: exact, including the sign of zero.
namespace {

bool same(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return float_to_bits(a) == float_to_bits(b);
}

#define EXPECT_SAME(got, want)     \
  EXPECT_TRUE(same((got), (want))) \
      << #got << " = " << std::hexfloat << (got) << ", want " << (want)

constexpr float kInf = std::numeric_limits<float>::infinity();
const float kNan = std::numeric_limits<float>::quiet_NaN();

}  // namespace

TEST(MathF32, SpecialValues) {
  // NaN in -> NaN out for every unary function.
  float (*unary[])(float) = {m::exp,    m::exp2,   m::expm1, m::log,   m::log2,
                             m::log10,  m::log1p,  m::sin,   m::cos,   m::tan,
                             m::asin,   m::acos,   m::atan,  m::sinh,  m::cosh,
                             m::tanh,   m::asinh,  m::acosh, m::atanh, m::erf,
                             m::erfinv, m::sigmoid};
  for (auto f : unary) {
    EXPECT_TRUE(std::isnan(f(kNan)));
    EXPECT_TRUE(std::isnan(f(-kNan)));
  }
  // Odd functions keep the sign of zero; even ones and exp give 1 or +0.
  float (*odd[])(float) = {m::expm1, m::log1p, m::sin,  m::tan,
                           m::asin,  m::atan,  m::sinh, m::tanh,
                           m::asinh, m::atanh, m::erf,  m::erfinv};
  for (auto f : odd) {
    EXPECT_SAME(f(0.0f), 0.0f);
    EXPECT_SAME(f(-0.0f), -0.0f);
  }
  EXPECT_SAME(m::exp(0.0f), 1.0f);
  EXPECT_SAME(m::exp(-0.0f), 1.0f);
  EXPECT_SAME(m::exp(kInf), kInf);
  EXPECT_SAME(m::exp(-kInf), 0.0f);
  EXPECT_SAME(m::exp(89.0f), kInf);
  EXPECT_SAME(m::exp(-104.0f), 0.0f);
  EXPECT_SAME(m::exp2(128.0f), kInf);
  EXPECT_SAME(m::exp2(-149.0f), 0x1p-149f);
  EXPECT_SAME(m::exp2(-kInf), 0.0f);
  EXPECT_SAME(m::exp2(10.0f), 1024.0f);
  EXPECT_SAME(m::expm1(kInf), kInf);
  EXPECT_SAME(m::expm1(-kInf), -1.0f);
  EXPECT_SAME(m::log(1.0f), 0.0f);
  EXPECT_SAME(m::log(0.0f), -kInf);
  EXPECT_SAME(m::log(-0.0f), -kInf);
  EXPECT_SAME(m::log(kInf), kInf);
  EXPECT_TRUE(std::isnan(m::log(-1.0f)));
  EXPECT_TRUE(std::isnan(m::log(-kInf)));
  EXPECT_SAME(m::log2(8.0f), 3.0f);
  EXPECT_SAME(m::log2(0x1p-149f), -149.0f);
  EXPECT_SAME(m::log2(-0.0f), -kInf);
  EXPECT_TRUE(std::isnan(m::log2(-2.0f)));
  EXPECT_SAME(m::log10(1000.0f), 3.0f);
  EXPECT_SAME(m::log10(0.0f), -kInf);
  EXPECT_TRUE(std::isnan(m::log10(-2.0f)));
  EXPECT_SAME(m::log1p(-1.0f), -kInf);
  EXPECT_SAME(m::log1p(kInf), kInf);
  EXPECT_TRUE(std::isnan(m::log1p(-2.0f)));
  for (auto f : {m::sin, m::cos, m::tan}) {
    EXPECT_TRUE(std::isnan(f(kInf)));
    EXPECT_TRUE(std::isnan(f(-kInf)));
  }
  EXPECT_SAME(m::cos(0.0f), 1.0f);
  EXPECT_SAME(m::cos(-0.0f), 1.0f);
  EXPECT_TRUE(std::isnan(m::asin(1.5f)));
  EXPECT_TRUE(std::isnan(m::acos(-1.5f)));
  EXPECT_SAME(m::acos(1.0f), 0.0f);
  EXPECT_SAME(m::asin(1.0f), static_cast<float>(M_PI_2));
  EXPECT_SAME(m::acos(-1.0f), static_cast<float>(M_PI));
  EXPECT_SAME(m::atan(kInf), static_cast<float>(M_PI_2));
  EXPECT_SAME(m::atan(-kInf), -static_cast<float>(M_PI_2));
  EXPECT_SAME(m::sinh(kInf), kInf);
  EXPECT_SAME(m::sinh(-kInf), -kInf);
  EXPECT_SAME(m::sinh(90.0f), kInf);
  EXPECT_SAME(m::cosh(-kInf), kInf);
  EXPECT_SAME(m::cosh(0.0f), 1.0f);
  EXPECT_SAME(m::tanh(kInf), 1.0f);
  EXPECT_SAME(m::tanh(-kInf), -1.0f);
  EXPECT_SAME(m::asinh(kInf), kInf);
  EXPECT_SAME(m::asinh(-kInf), -kInf);
  EXPECT_SAME(m::acosh(1.0f), 0.0f);
  EXPECT_SAME(m::acosh(kInf), kInf);
  EXPECT_TRUE(std::isnan(m::acosh(0.5f)));
  EXPECT_TRUE(std::isnan(m::acosh(-kInf)));
  EXPECT_SAME(m::atanh(1.0f), kInf);
  EXPECT_SAME(m::atanh(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(m::atanh(1.5f)));
  EXPECT_SAME(m::erf(kInf), 1.0f);
  EXPECT_SAME(m::erf(-kInf), -1.0f);
  EXPECT_SAME(m::erfinv(1.0f), kInf);
  EXPECT_SAME(m::erfinv(-1.0f), -kInf);
  EXPECT_TRUE(std::isnan(m::erfinv(1.5f)));
  EXPECT_TRUE(std::isnan(m::erfinv(-kInf)));
  EXPECT_SAME(m::sigmoid(0.0f), 0.5f);
  EXPECT_SAME(m::sigmoid(kInf), 1.0f);
  EXPECT_SAME(m::sigmoid(-kInf), 0.0f);
}

TEST(MathF32, Atan2SpecialValues) {
  const float pi = static_cast<float>(M_PI), pio2 = static_cast<float>(M_PI_2);
  const float pio4 = static_cast<float>(M_PI_4);
  EXPECT_SAME(m::atan2(0.0f, 0.0f), 0.0f);
  EXPECT_SAME(m::atan2(-0.0f, 0.0f), -0.0f);
  EXPECT_SAME(m::atan2(0.0f, -0.0f), pi);
  EXPECT_SAME(m::atan2(-0.0f, -0.0f), -pi);
  EXPECT_SAME(m::atan2(0.0f, -1.0f), pi);
  EXPECT_SAME(m::atan2(-0.0f, -1.0f), -pi);
  EXPECT_SAME(m::atan2(1.0f, 0.0f), pio2);
  EXPECT_SAME(m::atan2(-1.0f, -0.0f), -pio2);
  EXPECT_SAME(m::atan2(kInf, kInf), pio4);
  EXPECT_SAME(m::atan2(-kInf, -kInf), -3.0f * pio4);
  EXPECT_SAME(m::atan2(1.0f, kInf), 0.0f);
  EXPECT_SAME(m::atan2(1.0f, -kInf), pi);
  EXPECT_SAME(m::atan2(-kInf, 5.0f), -pio2);
  EXPECT_TRUE(std::isnan(m::atan2(kNan, 1.0f)));
  EXPECT_TRUE(std::isnan(m::atan2(1.0f, kNan)));
}

TEST(MathF32, PowSpecialValues) {
  for (float x : {0.0f, -0.0f, 1.0f, -1.0f, kInf, -kInf, kNan, 2.5f}) {
    EXPECT_SAME(m::pow(x, 0.0f), 1.0f);
    EXPECT_SAME(m::pow(x, -0.0f), 1.0f);
  }
  for (float y : {0.5f, -3.0f, kInf, -kInf, kNan})
    EXPECT_SAME(m::pow(1.0f, y), 1.0f);
  EXPECT_SAME(m::pow(-1.0f, kInf), 1.0f);
  EXPECT_SAME(m::pow(-1.0f, -kInf), 1.0f);
  EXPECT_SAME(m::pow(0.0f, -3.0f), kInf);
  EXPECT_SAME(m::pow(-0.0f, -3.0f), -kInf);
  EXPECT_SAME(m::pow(-0.0f, -2.0f), kInf);
  EXPECT_SAME(m::pow(-0.0f, -0.5f), kInf);
  EXPECT_SAME(m::pow(0.0f, 3.0f), 0.0f);
  EXPECT_SAME(m::pow(-0.0f, 3.0f), -0.0f);
  EXPECT_SAME(m::pow(-0.0f, 2.0f), 0.0f);
  EXPECT_SAME(m::pow(-0.0f, 0.5f), 0.0f);
  EXPECT_SAME(m::pow(0.5f, kInf), 0.0f);
  EXPECT_SAME(m::pow(0.5f, -kInf), kInf);
  EXPECT_SAME(m::pow(2.0f, kInf), kInf);
  EXPECT_SAME(m::pow(-2.0f, -kInf), 0.0f);
  EXPECT_SAME(m::pow(-kInf, -3.0f), -0.0f);
  EXPECT_SAME(m::pow(-kInf, -2.0f), 0.0f);
  EXPECT_SAME(m::pow(-kInf, 3.0f), -kInf);
  EXPECT_SAME(m::pow(-kInf, 2.5f), kInf);
  EXPECT_SAME(m::pow(kInf, -1.0f), 0.0f);
  EXPECT_SAME(m::pow(kInf, 0.5f), kInf);
  EXPECT_TRUE(std::isnan(m::pow(-2.0f, 0.5f)));
  EXPECT_TRUE(std::isnan(m::pow(kNan, 1.0f)));
  EXPECT_TRUE(std::isnan(m::pow(2.0f, kNan)));
  EXPECT_SAME(m::pow(-2.0f, 3.0f), -8.0f);
  EXPECT_SAME(m::pow(-2.0f, 2.0f), 4.0f);
  EXPECT_SAME(m::pow(2.0f, -149.0f), 0x1p-149f);
  EXPECT_SAME(m::pow(2.0f, 128.0f), kInf);
  EXPECT_SAME(m::pow(-2.0f, 127.0f), -0x1p127f);
  EXPECT_SAME(m::pow(-0x1p-100f, 3.0f), 0.0f * -1.0f);
  EXPECT_SAME(m::pow(3.0f, 0.5f), std::sqrt(3.0f));
}

// Odd functions are exactly symmetric (the exhaustive checker relies on it).
TEST(MathF32, OddSymmetry) {
  std::mt19937 rng(7);
  float (*odd[])(float) = {m::sin,  m::tan,   m::asin,  m::atan, m::sinh,
                           m::tanh, m::asinh, m::atanh, m::erf,  m::erfinv};
  for (int i = 0; i < 20000; ++i) {
    float x = std::fabs(bits_to_float(static_cast<uint32_t>(rng())));
    for (auto f : odd) EXPECT_SAME(f(-x), -f(x));
  }
}

// sin_small and cos_small give sin's and cos's bits wherever trig_small
// holds (|x| < 2^18; the blocks of the eager and generated kernels rely on
// it), and trig_small is false from 2^18 on, for inf and NaN.
TEST(MathF32, SmallTrigVariants) {
  const float below = std::nextafter(0x1p18f, 0.0f);
  EXPECT_TRUE(m::trig_small(below));
  EXPECT_TRUE(m::trig_small(-below));
  EXPECT_TRUE(m::trig_small(-0.0f));
  EXPECT_TRUE(m::trig_small(0x1p-149f));
  for (float x : {0x1p18f, -0x1p18f, std::nextafter(0x1p18f, kInf), kMax, kInf,
                  -kInf, kNan, -kNan})
    EXPECT_FALSE(m::trig_small(x)) << x;
  std::vector<float> xs = inputs(-below, below, {below, -below, 0x1p17f, 1e5f});
  for (float x : xs) {
    ASSERT_TRUE(m::trig_small(x)) << x;
    EXPECT_SAME(m::sin_small(x), m::sin(x));
    EXPECT_SAME(m::cos_small(x), m::cos(x));
  }
  EXPECT_SAME(m::sin_small(-0.0f), -0.0f);
  EXPECT_SAME(m::cos_small(-0.0f), 1.0f);
}

// Values across the 2^18 boundary (the float path below, the double one
// from 2^18 on) against glibc's double sin and cos, both signs.
TEST(MathF32, TrigAcrossTheBoundary) {
  Worst ws, wc;
  float a = 0x1p18f, b = 0x1p18f;
  for (int i = 0; i < 100000; ++i) {
    a = std::nextafter(a, 0.0f);
    b = std::nextafter(b, kInf);
    for (float x : {a, b, -a, -b}) {
      double es = ulp_error(m::sin(x), std::sin(double(x)));
      double ec = ulp_error(m::cos(x), std::cos(double(x)));
      if (es > ws.ulp) ws = {es, x, 0};
      if (ec > wc.ulp) wc = {ec, x, 0};
    }
  }
  EXPECT_WITHIN(ws, kTrig);
  EXPECT_WITHIN(wc, kTrig);
}
