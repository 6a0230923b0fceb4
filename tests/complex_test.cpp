// Tests for include/nuvec/kernels/complex.h against std::complex<long double>.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "nuvec/kernels/complex.h"

using nuvec::kernels::complex64_t;
namespace m = nuvec::kernels::math;

namespace {

using ld = long double;
using C = std::complex<ld>;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

static_assert(sizeof(complex64_t) == 8 && alignof(complex64_t) == 8);
static_assert(std::is_standard_layout_v<complex64_t>);
static_assert(std::is_trivially_copyable_v<complex64_t>);
constexpr complex64_t kC0{}, kC1{1.5f}, kC2{1.5f, -2.0f};
static_assert(kC0.re == 0 && kC1.im == 0 && kC2.im == -2.0f);

std::mt19937_64 g(4242);
float comp() {  // a float component over a wide range
  std::uniform_int_distribution<int> pick(0, 3);
  std::uniform_real_distribution<double> u(-1, 1);
  switch (pick(g)) {
    case 0: return (float)(u(g) * 4);
    case 1: return (float)(u(g) * 100);
    case 2: return (float)std::copysign(std::exp(u(g) * 80), u(g));
    default: return (float)std::copysign(std::exp(u(g) * 40), u(g));
  }
}

double ulpf(ld mag) {
  if (mag < (ld)FLT_MIN) return std::ldexp(1.0, -149);
  int e;
  std::frexp((double)mag, &e);
  return std::ldexp(1.0, e - 24);
}

struct Err {
  double mag = 0, comp = 0;  // relative to |ref| and to the component itself
  complex64_t at{};
};

// err of one result; returns false if a non-finite mismatch.
void measure(complex64_t in, complex64_t got, C ref, Err& e) {
  ld mag = std::abs(ref);
  for (int c = 0; c < 2; ++c) {
    ld r = c ? ref.imag() : ref.real();
    float gv = c ? got.im : got.re;
    float rf = (float)r;
    double em, ec;
    if (std::isinf(rf) || std::isinf(gv)) {
      em = ec = (rf == gv) ? 0 : 1e9;
    } else if (std::isnan(gv) || std::isnan((double)r)) {
      em = ec = (std::isnan(gv) && std::isnan((double)r)) ? 0 : 1e9;
    } else {
      ld d = std::fabs((ld)gv - r);
      em = (double)(d / ulpf(mag));
      ec = (double)(d / ulpf(std::fabs(r)));
    }
    if (em > e.mag) e.mag = em, e.at = in;
    e.comp = std::max(e.comp, ec);
  }
}

C ref_of(complex64_t z) { return C(z.re, z.im); }

// log(1 + z) without the rounding of 1 + z: log|1+z| from 2x + x^2 + y^2
// (exact in long double for float parts), or from (1+x)^2 + y^2 when |1+z| is
// small (1 + x is then exact).
C log1p_ref(C z) {
  ld x = z.real(), y = z.imag();
  ld s = 2 * x + x * x + y * y;
  ld re = s < -0.5L ? 0.5L * std::log((1 + x) * (1 + x) + y * y) : 0.5L * std::log1p(s);
  if (std::isinf(x) || std::isinf(y)) re = INFINITY;
  return C(re, std::atan2(y, 1 + x));
}

void run1(const char* name, std::function<complex64_t(complex64_t)> f, std::function<C(C)> ref, double bound,
          float re_lim = 0) {
  Err e;
  for (int i = 0; i < 30000; ++i) {
    complex64_t z(comp(), comp());
    if (re_lim > 0 && std::fabs(z.re) > re_lim) z.re = std::fmod(z.re, re_lim);
    measure(z, f(z), ref(ref_of(z)), e);
  }
  // dense near the unit circle and the axes
  std::uniform_real_distribution<double> u(-1, 1);
  for (int i = 0; i < 10000; ++i) {
    double t = u(g) * 3.2;
    float r = (float)(1 + u(g) * 1e-6);
    complex64_t z((float)(r * std::cos(t)), (float)(r * std::sin(t)));
    measure(z, f(z), ref(ref_of(z)), e);
    complex64_t z2((float)(u(g) * 10), (float)(u(g) * 1e-30));
    measure(z2, f(z2), ref(ref_of(z2)), e);
  }
  std::printf("  %-10s max %.3f ULP of |result| (componentwise %.3g) at (%.9g, %.9g)\n", name, e.mag, e.comp,
              e.at.re, e.at.im);
  EXPECT_LE(e.mag, bound) << name;
  EXPECT_LE(e.comp, 1.0) << name;
}

void run2(const char* name, std::function<complex64_t(complex64_t, complex64_t)> f, std::function<C(C, C)> ref,
          double bound) {
  Err e;
  for (int i = 0; i < 200000; ++i) {
    complex64_t a(comp(), comp()), b(comp(), comp());
    measure(a, f(a, b), ref(ref_of(a), ref_of(b)), e);
  }
  std::printf("  %-10s max %.3f ULP of |result| (componentwise %.3g)\n", name, e.mag, e.comp);
  EXPECT_LE(e.mag, bound) << name;
  EXPECT_LE(e.comp, 1.0) << name;
}

bool same(float a, float b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  uint32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x == y;
}
#define EXPECT_C(got, r, i)                                                                          \
  do {                                                                                               \
    complex64_t g_ = (got);                                                                          \
    EXPECT_TRUE(same(g_.re, (r)) && same(g_.im, (i)))                                                \
        << #got << " = (" << g_.re << ", " << g_.im << ") expected (" << (r) << ", " << (i) << ")"; \
  } while (0)

}  // namespace

TEST(Complex64, Arithmetic) {
  run2("mul", [](complex64_t a, complex64_t b) { return a * b; },
       [](C a, C b) { return C(a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()); },
       1.0);
  run2("div", [](complex64_t a, complex64_t b) { return a / b; },
       [](C a, C b) {
         ld d = b.real() * b.real() + b.imag() * b.imag();
         return C((a.real() * b.real() + a.imag() * b.imag()) / d, (a.imag() * b.real() - a.real() * b.imag()) / d);
       },
       1.0);
  complex64_t a(1, 2), b(3, -4);
  EXPECT_C(a + b, 4.0f, -2.0f);
  EXPECT_C(a - b, -2.0f, 6.0f);
  EXPECT_C(-a, -1.0f, -2.0f);
  EXPECT_C(a * b, 11.0f, 2.0f);
  EXPECT_C(complex64_t(11, 2) / b, 1.0f, 2.0f);
  EXPECT_TRUE(a == complex64_t(1, 2));
  EXPECT_TRUE(a != b);
  EXPECT_FALSE(complex64_t(kNaN, 0) == complex64_t(kNaN, 0));
  // overflow-safe division
  EXPECT_C(complex64_t(1e38f, 1e38f) / complex64_t(1e38f, 1e38f), 1.0f, 0.0f);
  EXPECT_C(complex64_t(0x1p-126f, 0x1p-126f) / complex64_t(0x1p-148f, 0x1p-148f), 0x1p22f, 0.0f);
  EXPECT_C(complex64_t(3e38f, -3e38f) / complex64_t(1e-45f, 1e-45f), 0.0f, -kInf);
  // Annex G
  complex64_t p = complex64_t(kInf, kNaN) * complex64_t(1, 0);
  EXPECT_TRUE(std::isinf(p.re) || std::isinf(p.im));
  complex64_t q = complex64_t(1, 1) / complex64_t(0, 0);
  EXPECT_TRUE(std::isinf(q.re) && std::isinf(q.im));
  complex64_t r = complex64_t(1, 1) / complex64_t(kInf, kNaN);
  EXPECT_TRUE(r.re == 0 && r.im == 0);
  complex64_t s = complex64_t(kInf, 1) / complex64_t(1, 1);
  EXPECT_TRUE(std::isinf(s.re) || std::isinf(s.im));
  EXPECT_C(complex64_t(kNaN, 1) * complex64_t(1, 1), kNaN, kNaN);
}

TEST(Complex64, Functions) {
  run1("abs", [](complex64_t z) { return complex64_t(m::abs(z)); }, [](C z) { return C(std::abs(z)); }, 1.0);
  run1("sqrt", [](complex64_t z) { return m::sqrt(z); }, [](C z) { return std::sqrt(z); }, 1.0);
  run1("rsqrt", [](complex64_t z) { return m::rsqrt(z); }, [](C z) { return (ld)1 / std::sqrt(z); }, 1.0);
  run1("exp", [](complex64_t z) { return m::exp(z); }, [](C z) { return std::exp(z); }, 1.0, 100);
  run1("log", [](complex64_t z) { return m::log(z); }, [](C z) { return std::log(z); }, 1.0);
  run1("log2", [](complex64_t z) { return m::log2(z); }, [](C z) { return std::log(z) / std::log((ld)2); }, 1.0);
  run1("log10", [](complex64_t z) { return m::log10(z); }, [](C z) { return std::log10(z); }, 1.0);
  run1("sin", [](complex64_t z) { return m::sin(z); }, [](C z) { return std::sin(z); }, 1.0);
  run1("cos", [](complex64_t z) { return m::cos(z); }, [](C z) { return std::cos(z); }, 1.0);
  run1("tan", [](complex64_t z) { return m::tan(z); }, [](C z) { return std::tan(z); }, 1.0);
  run1("sinh", [](complex64_t z) { return m::sinh(z); }, [](C z) { return std::sinh(z); }, 1.0, 100);
  run1("cosh", [](complex64_t z) { return m::cosh(z); }, [](C z) { return std::cosh(z); }, 1.0, 100);
  run1("tanh", [](complex64_t z) { return m::tanh(z); }, [](C z) { return std::tanh(z); }, 1.0);
  run1("square", [](complex64_t z) { return m::square(z); }, [](C z) { return z * z; }, 1.0);
  run1("reciprocal", [](complex64_t z) { return m::reciprocal(z); }, [](C z) { return (ld)1 / z; }, 1.0);
  run1("sign", [](complex64_t z) { return m::sign(z); }, [](C z) { return z / std::abs(z); }, 1.0);
  run1("log1p", [](complex64_t z) { return m::log1p(z); }, log1p_ref, 1.0);
  run1("asin", [](complex64_t z) { return m::asin(z); }, [](C z) { return std::asin(z); }, 1.0);
  run1("acos", [](complex64_t z) { return m::acos(z); }, [](C z) { return std::acos(z); }, 1.0);
  run1("atan", [](complex64_t z) { return m::atan(z); }, [](C z) { return std::atan(z); }, 1.0);
  run1("asinh", [](complex64_t z) { return m::asinh(z); }, [](C z) { return std::asinh(z); }, 1.0);
  run1("acosh", [](complex64_t z) { return m::acosh(z); }, [](C z) { return std::acosh(z); }, 1.0);
  run1("atanh", [](complex64_t z) { return m::atanh(z); }, [](C z) { return std::atanh(z); }, 1.0);
}

// Dense sampling where the inverse functions and log1p are delicate: near the
// branch points +-1 and +-i, on and next to the cuts, near |1 + z| = 1 and
// near 0, with both signs of zero.
TEST(Complex64, InverseNearCuts) {
  struct F {
    const char* name;
    complex64_t (*f)(complex64_t);
    C (*ref)(C);
  };
  const F fs[] = {
      {"log1p", [](complex64_t z) { return m::log1p(z); }, log1p_ref},
      {"asin", [](complex64_t z) { return m::asin(z); }, [](C z) { return std::asin(z); }},
      {"acos", [](complex64_t z) { return m::acos(z); }, [](C z) { return std::acos(z); }},
      {"atan", [](complex64_t z) { return m::atan(z); }, [](C z) { return std::atan(z); }},
      {"asinh", [](complex64_t z) { return m::asinh(z); }, [](C z) { return std::asinh(z); }},
      {"acosh", [](complex64_t z) { return m::acosh(z); }, [](C z) { return std::acosh(z); }},
      {"atanh", [](complex64_t z) { return m::atanh(z); }, [](C z) { return std::atanh(z); }},
  };
  std::uniform_real_distribution<double> u(-1, 1);
  std::uniform_int_distribution<int> pick(0, 5);
  auto sample = [&]() -> complex64_t {
    double e = std::exp(u(g) * 30), t = u(g) * 3.2;
    switch (pick(g)) {
      case 0: return complex64_t((float)std::copysign(1.0, u(g)) + (float)(u(g) * 1e-3), (float)(u(g) * e * 1e-6));
      case 1: return complex64_t((float)(u(g) * e * 1e-6), (float)std::copysign(1.0, u(g)) + (float)(u(g) * 1e-3));
      case 2: return complex64_t((float)(u(g) * 4), std::copysign(0.0f, (float)u(g)));
      case 3: return complex64_t(std::copysign(0.0f, (float)u(g)), (float)(u(g) * 4));
      case 4: return complex64_t((float)(-1 + std::cos(t) * (1 + u(g) * 1e-5)), (float)(std::sin(t) * (1 + u(g) * 1e-5)));
      default: return complex64_t((float)(u(g) * e * 1e-12), (float)(u(g) * e * 1e-12));
    }
  };
  for (const F& f : fs) {
    Err e;
    for (int i = 0; i < 40000; ++i) {
      complex64_t z = sample();
      measure(z, f.f(z), f.ref(ref_of(z)), e);
    }
    std::printf("  %-10s max %.3f ULP of |result| (componentwise %.3g) at (%.9g, %.9g)\n", f.name, e.mag, e.comp,
                e.at.re, e.at.im);
    EXPECT_LE(e.mag, 1.0) << f.name;
    EXPECT_LE(e.comp, 1.0) << f.name;
  }
}

// MLX's logaddexp formula, evaluated in long double (operands of moderate
// size so that lo - hi is exact).
TEST(Complex64, LogAddExp) {
  std::uniform_real_distribution<double> u(-1, 1);
  Err e;
  for (int i = 0; i < 200000; ++i) {
    double s1 = std::exp(u(g) * 4), s2 = std::exp(u(g) * 4);
    complex64_t a((float)(u(g) * s1), (float)(u(g) * s2)), b((float)(u(g) * s2), (float)(u(g) * s1));
    bool a_hi = a.re > b.re || (a.re == b.re && a.im > b.im);
    C hi = ref_of(a_hi ? a : b), lo = ref_of(a_hi ? b : a);
    C w = std::exp(lo - hi);
    C ref = hi + log1p_ref(w);
    measure(a, m::logaddexp(a, b), ref, e);
  }
  std::printf("  logaddexp  max %.3f ULP of |result| (componentwise %.3g)\n", e.mag, e.comp);
  EXPECT_LE(e.mag, 1.0);
  // special values (MLX): NaN in the first operand propagates, -inf + i0 and
  // inf + i0 are absorbing/neutral, other infinities give NaN
  EXPECT_C(m::logaddexp(complex64_t(0, 0), complex64_t(0, 0)), 0.693147182f, 0.0f);
  EXPECT_C(m::logaddexp(complex64_t(-kInf, 0), complex64_t(1, 1)), 1.0f, 1.0f);
  EXPECT_C(m::logaddexp(complex64_t(-0.0f, -0.0f), complex64_t(-kInf, 0)), -0.0f, -0.0f);
  EXPECT_C(m::logaddexp(complex64_t(-kInf, 0), complex64_t(-kInf, 0)), -kInf, 0.0f);
  EXPECT_C(m::logaddexp(complex64_t(kInf, 1), complex64_t(-kInf, 0)), kInf, 1.0f);
  EXPECT_C(m::logaddexp(complex64_t(kInf, 1), complex64_t(0, 0)), kInf, 1.0f);
  EXPECT_C(m::logaddexp(complex64_t(kInf, 1), complex64_t(kInf, 1)), kNaN, kNaN);
  EXPECT_C(m::logaddexp(complex64_t(kInf, 0), complex64_t(1, kNaN)), kInf, 0.0f);
  EXPECT_C(m::logaddexp(complex64_t(1, kNaN), complex64_t(kInf, 0)), kNaN, kNaN);
  EXPECT_C(m::logaddexp(complex64_t(-kInf, 0), complex64_t(1, kNaN)), 1.0f, kNaN);
  EXPECT_C(m::logaddexp(complex64_t(kNaN, 0), complex64_t(1, 1)), kNaN, kNaN);
}

TEST(Complex64, Special) {
  EXPECT_C(m::conj(complex64_t(1, 2)), 1.0f, -2.0f);
  EXPECT_EQ(m::abs(complex64_t(3, 4)), 5.0f);
  EXPECT_EQ(m::abs(complex64_t(3e38f, 3e38f)), kInf);
  EXPECT_EQ(m::abs(complex64_t(3e-39f, 4e-39f)), 5e-39f);
  EXPECT_EQ(m::abs(complex64_t(kNaN, -kInf)), kInf);
  EXPECT_TRUE(std::isnan(m::abs(complex64_t(kNaN, 1))));
  // sqrt (G.6.4.2)
  EXPECT_C(m::sqrt(complex64_t(0.0f, 0.0f)), 0.0f, 0.0f);
  EXPECT_C(m::sqrt(complex64_t(-0.0f, -0.0f)), 0.0f, -0.0f);
  EXPECT_C(m::sqrt(complex64_t(-4.0f, 0.0f)), 0.0f, 2.0f);
  EXPECT_C(m::sqrt(complex64_t(-4.0f, -0.0f)), 0.0f, -2.0f);
  EXPECT_C(m::sqrt(complex64_t(4.0f, -0.0f)), 2.0f, -0.0f);
  EXPECT_C(m::sqrt(complex64_t(kNaN, kInf)), kInf, kInf);
  EXPECT_C(m::sqrt(complex64_t(1.0f, -kInf)), kInf, -kInf);
  EXPECT_C(m::sqrt(complex64_t(-kInf, 1.0f)), 0.0f, kInf);
  EXPECT_C(m::sqrt(complex64_t(kInf, -1.0f)), kInf, -0.0f);
  EXPECT_C(m::sqrt(complex64_t(kInf, kNaN)), kInf, kNaN);
  EXPECT_C(m::sqrt(complex64_t(kNaN, 1.0f)), kNaN, kNaN);
  // exp
  EXPECT_C(m::exp(complex64_t(0.0f, 0.0f)), 1.0f, 0.0f);
  EXPECT_C(m::exp(complex64_t(-0.0f, -0.0f)), 1.0f, -0.0f);
  EXPECT_C(m::exp(complex64_t(kInf, 0.0f)), kInf, 0.0f);
  EXPECT_C(m::exp(complex64_t(-kInf, 1.0f)), 0.0f, 0.0f);
  EXPECT_C(m::exp(complex64_t(-kInf, kInf)), 0.0f, 0.0f);
  EXPECT_C(m::exp(complex64_t(kNaN, 0.0f)), kNaN, 0.0f);
  EXPECT_C(m::exp(complex64_t(1.0f, kInf)), kNaN, kNaN);
  EXPECT_C(m::exp(complex64_t(100.0f, 0.0f)), kInf, 0.0f);
  // log
  const float pi = 3.14159265f;
  EXPECT_C(m::log(complex64_t(-0.0f, 0.0f)), -kInf, pi);
  EXPECT_C(m::log(complex64_t(0.0f, -0.0f)), -kInf, -0.0f);
  EXPECT_C(m::log(complex64_t(1.0f, 0.0f)), 0.0f, 0.0f);
  EXPECT_C(m::log(complex64_t(-1.0f, -0.0f)), 0.0f, -pi);
  EXPECT_C(m::log(complex64_t(kInf, kNaN)), kInf, kNaN);
  EXPECT_C(m::log(complex64_t(kNaN, -kInf)), kInf, kNaN);
  // hyperbolic / trig zeros
  EXPECT_C(m::sinh(complex64_t(0.0f, 0.0f)), 0.0f, 0.0f);
  EXPECT_C(m::sinh(complex64_t(-0.0f, -0.0f)), -0.0f, -0.0f);
  EXPECT_C(m::sinh(complex64_t(kInf, 0.0f)), kInf, 0.0f);
  EXPECT_C(m::cosh(complex64_t(0.0f, 0.0f)), 1.0f, 0.0f);
  EXPECT_C(m::cosh(complex64_t(kInf, 0.0f)), kInf, 0.0f);
  EXPECT_C(m::tanh(complex64_t(0.0f, -0.0f)), 0.0f, -0.0f);
  EXPECT_C(m::tanh(complex64_t(kInf, 1.0f)), 1.0f, 0.0f);
  EXPECT_C(m::tanh(complex64_t(-50.0f, 0.0f)), -1.0f, 0.0f);
  EXPECT_C(m::sin(complex64_t(-0.0f, 0.0f)), -0.0f, 0.0f);
  EXPECT_C(m::cos(complex64_t(0.0f, 0.0f)), 1.0f, -0.0f);
  EXPECT_C(m::tan(complex64_t(0.0f, -0.0f)), 0.0f, -0.0f);
  EXPECT_C(m::sign(complex64_t(0.0f, 0.0f)), 0.0f, 0.0f);
  EXPECT_C(m::sign(complex64_t(-3.0f, 4.0f)), -0.6f, 0.8f);
  EXPECT_C(m::square(complex64_t(1.0f, 1.0f)), 0.0f, 2.0f);
  EXPECT_C(m::reciprocal(complex64_t(0.0f, 2.0f)), 0.0f, -0.5f);
  EXPECT_C(m::rsqrt(complex64_t(4.0f, 0.0f)), 0.5f, 0.0f);
}

// Special values of the functions MLX computes with glibc (values recorded
// from MLX 0.32.4 on x86-64; NaN signs are not compared).
TEST(Complex64, SpecialGlibc) {
  const float pi = 3.14159265f, pi2 = 1.57079633f, pi4 = 0.785398163f, pi34 = 2.35619449f;
  // sinh / cosh / tanh
  EXPECT_C(m::sinh(complex64_t(0.0f, kInf)), 0.0f, kNaN);
  EXPECT_C(m::sinh(complex64_t(-0.0f, kNaN)), -0.0f, kNaN);
  EXPECT_C(m::sinh(complex64_t(-kInf, kInf)), kInf, kNaN);
  EXPECT_C(m::sinh(complex64_t(kInf, kNaN)), kInf, kNaN);
  EXPECT_C(m::sinh(complex64_t(kNaN, -0.0f)), kNaN, -0.0f);
  EXPECT_C(m::sinh(complex64_t(1.0f, kInf)), kNaN, kNaN);
  EXPECT_C(m::cosh(complex64_t(0.0f, kInf)), kNaN, 0.0f);
  EXPECT_C(m::cosh(complex64_t(kNaN, -0.0f)), kNaN, -0.0f);
  EXPECT_C(m::cosh(complex64_t(-kInf, -kInf)), kInf, kNaN);
  EXPECT_C(m::cosh(complex64_t(-kInf, 0.0f)), kInf, -0.0f);
  EXPECT_C(m::tanh(complex64_t(0.0f, kInf)), 0.0f, kNaN);
  EXPECT_C(m::tanh(complex64_t(100.0f, kInf)), kNaN, kNaN);
  EXPECT_C(m::tanh(complex64_t(kInf, -kInf)), 1.0f, -0.0f);
  EXPECT_C(m::tanh(complex64_t(-kInf, kNaN)), -1.0f, 0.0f);
  EXPECT_C(m::tanh(complex64_t(kInf, 3.0f)), 1.0f, -0.0f);  // sign of sin 6
  EXPECT_C(m::tanh(complex64_t(kNaN, -0.0f)), kNaN, -0.0f);
  // sin / cos / tan
  EXPECT_C(m::sin(complex64_t(kInf, 0.0f)), kNaN, 0.0f);
  EXPECT_C(m::sin(complex64_t(-kInf, -0.0f)), kNaN, -0.0f);
  EXPECT_C(m::sin(complex64_t(kInf, -kInf)), kNaN, kInf);
  EXPECT_C(m::sin(complex64_t(kNaN, -kInf)), kNaN, kInf);
  EXPECT_C(m::sin(complex64_t(kNaN, 0.0f)), kNaN, 0.0f);
  EXPECT_C(m::cos(complex64_t(kInf, 0.0f)), kNaN, 0.0f);
  EXPECT_C(m::cos(complex64_t(kInf, kInf)), kInf, kNaN);
  EXPECT_C(m::tan(complex64_t(kInf, 1.0f)), kNaN, kNaN);
  EXPECT_C(m::tan(complex64_t(2.0f, kInf)), -0.0f, 1.0f);  // sign of sin 4
  EXPECT_C(m::tan(complex64_t(kNaN, -kInf)), 0.0f, -1.0f);
  // exp(-inf + i(inf or NaN)) keeps the sign of the imaginary part on zero
  EXPECT_C(m::exp(complex64_t(-kInf, -kInf)), 0.0f, -0.0f);
  EXPECT_C(m::exp(complex64_t(kNaN, -0.0f)), kNaN, -0.0f);
  // sign = z / (|z|, 0)
  EXPECT_C(m::sign(complex64_t(kNaN, 0.0f)), kNaN, kNaN);
  EXPECT_C(m::sign(complex64_t(0.0f, kInf)), kNaN, kNaN);
  EXPECT_C(m::sign(complex64_t(-1.0f, -0.0f)), -1.0f, 0.0f);
  EXPECT_C(m::sign(complex64_t(-0.0f, -0.0f)), -0.0f, -0.0f);
  // MLX rounds |z| to float first: 0.70693 and -0 - i0 for these two
  EXPECT_C(m::sign(complex64_t(1e-42f, 1e-42f)), 0.707106769f, 0.707106769f);
  EXPECT_C(m::sign(complex64_t(-3e38f, -3e38f)), -0.707106769f, -0.707106769f);
  // log1p
  EXPECT_C(m::log1p(complex64_t(-0.0f, -0.0f)), -0.0f, -0.0f);
  EXPECT_C(m::log1p(complex64_t(-1.0f, 0.0f)), -kInf, 0.0f);
  EXPECT_C(m::log1p(complex64_t(-kInf, 0.0f)), kInf, pi);
  EXPECT_C(m::log1p(complex64_t(kInf, 1.0f)), kInf, 0.0f);
  EXPECT_C(m::log1p(complex64_t(0.0f, kInf)), kInf, pi2);
  EXPECT_C(m::log1p(complex64_t(kNaN, -kInf)), kInf, kNaN);
  EXPECT_C(m::log1p(complex64_t(kNaN, 0.0f)), kNaN, kNaN);
  EXPECT_C(m::log1p(complex64_t(1e-30f, 0.0f)), 1e-30f, 0.0f);
  EXPECT_C(m::log1p(complex64_t(-3e38f, -3e38f)), 88.9434204f, -pi34);  // MLX: inf
  // asinh / asin
  EXPECT_C(m::asinh(complex64_t(-0.0f, 0.0f)), -0.0f, 0.0f);
  EXPECT_C(m::asinh(complex64_t(1.0f, kInf)), kInf, pi2);
  EXPECT_C(m::asinh(complex64_t(-kInf, -kInf)), -kInf, -pi4);
  EXPECT_C(m::asinh(complex64_t(kNaN, kInf)), kInf, kNaN);
  EXPECT_C(m::asinh(complex64_t(-kInf, 2.0f)), -kInf, 0.0f);
  EXPECT_C(m::asinh(complex64_t(kNaN, -0.0f)), kNaN, -0.0f);
  EXPECT_C(m::asinh(complex64_t(kInf, kNaN)), kInf, kNaN);
  EXPECT_C(m::asinh(complex64_t(1.0f, kNaN)), kNaN, kNaN);
  EXPECT_C(m::asinh(complex64_t(0.0f, 2.0f)), 1.31695795f, pi2);
  EXPECT_C(m::asinh(complex64_t(-0.0f, -2.0f)), -1.31695795f, -pi2);
  EXPECT_C(m::asin(complex64_t(2.0f, 0.0f)), pi2, 1.31695795f);
  EXPECT_C(m::asin(complex64_t(2.0f, -0.0f)), pi2, -1.31695795f);
  EXPECT_C(m::asin(complex64_t(-0.0f, -0.0f)), -0.0f, -0.0f);
  EXPECT_C(m::asin(complex64_t(kInf, kNaN)), kNaN, kInf);
  EXPECT_C(m::asin(complex64_t(-0.0f, kNaN)), -0.0f, kNaN);
  EXPECT_C(m::asin(complex64_t(kInf, -kInf)), pi4, -kInf);
  // acos / acosh
  EXPECT_C(m::acos(complex64_t(0.0f, 0.0f)), pi2, -0.0f);
  EXPECT_C(m::acos(complex64_t(0.0f, kNaN)), pi2, kNaN);
  EXPECT_C(m::acos(complex64_t(1.0f, 0.0f)), 0.0f, -0.0f);
  EXPECT_C(m::acos(complex64_t(-2.0f, 0.0f)), pi, -1.31695795f);
  EXPECT_C(m::acos(complex64_t(-kInf, kInf)), pi34, -kInf);
  EXPECT_C(m::acos(complex64_t(kInf, kNaN)), kNaN, -kInf);
  EXPECT_C(m::acosh(complex64_t(0.0f, 0.0f)), 0.0f, pi2);
  EXPECT_C(m::acosh(complex64_t(0.0f, -0.0f)), 0.0f, -pi2);
  EXPECT_C(m::acosh(complex64_t(0.0f, kNaN)), kNaN, pi2);
  EXPECT_C(m::acosh(complex64_t(-2.0f, -0.0f)), 1.31695795f, -pi);
  EXPECT_C(m::acosh(complex64_t(-kInf, 1.0f)), kInf, pi);
  EXPECT_C(m::acosh(complex64_t(kInf, -1.0f)), kInf, -0.0f);
  EXPECT_C(m::acosh(complex64_t(-kInf, kInf)), kInf, pi34);
  EXPECT_C(m::acosh(complex64_t(1.0f, -kInf)), kInf, -pi2);
  EXPECT_C(m::acosh(complex64_t(kNaN, kInf)), kInf, kNaN);
  EXPECT_C(m::acosh(complex64_t(kInf, kNaN)), kInf, kNaN);
  // atanh / atan
  EXPECT_C(m::atanh(complex64_t(1.0f, 0.0f)), kInf, 0.0f);
  EXPECT_C(m::atanh(complex64_t(-1.0f, -0.0f)), -kInf, -0.0f);
  EXPECT_C(m::atanh(complex64_t(2.0f, 0.0f)), 0.549306154f, pi2);
  EXPECT_C(m::atanh(complex64_t(-2.0f, 0.0f)), -0.549306154f, pi2);
  EXPECT_C(m::atanh(complex64_t(2.0f, -0.0f)), 0.549306154f, -pi2);
  EXPECT_C(m::atanh(complex64_t(-0.0f, 0.0f)), -0.0f, 0.0f);
  EXPECT_C(m::atanh(complex64_t(kInf, -1.0f)), 0.0f, -pi2);
  EXPECT_C(m::atanh(complex64_t(kNaN, -kInf)), 0.0f, -pi2);
  EXPECT_C(m::atanh(complex64_t(-0.0f, kNaN)), -0.0f, kNaN);
  EXPECT_C(m::atanh(complex64_t(kInf, kNaN)), 0.0f, kNaN);
  EXPECT_C(m::atanh(complex64_t(1.0f, kNaN)), kNaN, kNaN);
  EXPECT_C(m::atan(complex64_t(0.0f, 1.0f)), 0.0f, kInf);
  EXPECT_C(m::atan(complex64_t(kInf, kNaN)), pi2, 0.0f);
  EXPECT_C(m::atan(complex64_t(kNaN, -kInf)), kNaN, -0.0f);
  EXPECT_C(m::atan(complex64_t(-1.0f, kInf)), -pi2, 0.0f);
  EXPECT_C(m::atan(complex64_t(0.0f, 2.0f)), pi2, 0.549306154f);
  EXPECT_C(m::atan(complex64_t(-0.0f, 2.0f)), -pi2, 0.549306154f);
  EXPECT_C(m::atan(complex64_t(kNaN, 0.0f)), kNaN, 0.0f);
}
