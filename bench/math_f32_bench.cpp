// ns/element of nuvec's float32 math against glibc: scalar libm calls and,
// where glibc's libmvec has the function, its AVX2 vector variant.
//
// Build: g++ -std=c++20 -O3 -march=native -ffp-contract=off -fno-math-errno
//          -Iinclude bench/math_f32_bench.cpp -lmvec -lm -o /tmp/math_f32_bench
#include <immintrin.h>
#include <math.h>

#include <chrono>
#include <cstdio>
#include <random>
#include <vector>

#include "nuvec/kernels/math_f32_special.h"

namespace m = nuvec::kernels::math;

// glibc libmvec AVX2 entry points (x86_64 vector ABI, 8 floats).
extern "C" {
#define VDECL(N) __m256 _ZGVdN8v_##N##f(__m256);
VDECL(exp)
VDECL(exp2) VDECL(expm1) VDECL(log) VDECL(log2) VDECL(log10) VDECL(log1p)
    VDECL(sin) VDECL(cos) VDECL(tan) VDECL(asin) VDECL(acos) VDECL(atan)
        VDECL(sinh) VDECL(cosh) VDECL(tanh) VDECL(asinh) VDECL(acosh)
            VDECL(atanh) VDECL(erf) __m256 _ZGVdN8vv_powf(__m256, __m256);
__m256 _ZGVdN8vv_atan2f(__m256, __m256);
}

namespace {

constexpr int kN = 1 << 20;

template <class F>
double time_ns(F body) {
  double best = 1e30;
  for (int rep = 0; rep < 7; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    body();
    auto t1 = std::chrono::steady_clock::now();
    double ns = std::chrono::duration<double, std::nano>(t1 - t0).count();
    if (ns < best) best = ns;
  }
  return best / kN;
}

std::vector<float> uniform(float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(kN);
  for (float& f : v) f = d(rng);
  return v;
}

volatile float g_sink;

void row(const char* name, double ours, double scalar, double vec) {
  std::printf("%-8s %8.2f %10.2f %10.2f %9.2fx\n", name, ours, scalar, vec,
              ours / vec);
}

}  // namespace

#define BENCH1(N, LO, HI)                                                 \
  {                                                                       \
    auto in = uniform(LO, HI, 1);                                         \
    std::vector<float> out(kN);                                           \
    const float* __restrict a = in.data();                                \
    float* __restrict o = out.data();                                     \
    double t1 = time_ns([&] {                                             \
      for (int i = 0; i < kN; ++i) o[i] = m::N(a[i]);                     \
    });                                                                   \
    double t2 = time_ns([&] {                                             \
      for (int i = 0; i < kN; ++i) o[i] = ::N##f(a[i]);                   \
    });                                                                   \
    double t3 = time_ns([&] {                                             \
      for (int i = 0; i < kN; i += 8)                                     \
        _mm256_storeu_ps(o + i, _ZGVdN8v_##N##f(_mm256_loadu_ps(a + i))); \
    });                                                                   \
    g_sink = o[kN / 2];                                                   \
    row(#N, t1, t2, t3);                                                  \
  }

#define BENCH2(N, LO1, HI1, LO2, HI2)                                      \
  {                                                                        \
    auto in1 = uniform(LO1, HI1, 1), in2 = uniform(LO2, HI2, 2);           \
    std::vector<float> out(kN);                                            \
    const float* __restrict a = in1.data();                                \
    const float* __restrict b = in2.data();                                \
    float* __restrict o = out.data();                                      \
    double t1 = time_ns([&] {                                              \
      for (int i = 0; i < kN; ++i) o[i] = m::N(a[i], b[i]);                \
    });                                                                    \
    double t2 = time_ns([&] {                                              \
      for (int i = 0; i < kN; ++i) o[i] = ::N##f(a[i], b[i]);              \
    });                                                                    \
    double t3 = time_ns([&] {                                              \
      for (int i = 0; i < kN; i += 8)                                      \
        _mm256_storeu_ps(o + i, _ZGVdN8vv_##N##f(_mm256_loadu_ps(a + i),   \
                                                 _mm256_loadu_ps(b + i))); \
    });                                                                    \
    g_sink = o[kN / 2];                                                    \
    row(#N, t1, t2, t3);                                                   \
  }

int main() {
  std::printf("ns/element over 2^20 floats (best of 7)\n");
  std::printf("%-8s %8s %10s %10s %10s\n", "function", "nuvec", "libm",
              "libmvec", "nuvec/vec");
  BENCH1(exp, -80.0f, 80.0f)
  BENCH1(exp2, -120.0f, 120.0f)
  BENCH1(expm1, -10.0f, 10.0f)
  BENCH1(log, 1e-30f, 1e30f)
  BENCH1(log2, 1e-30f, 1e30f)
  BENCH1(log10, 1e-30f, 1e30f)
  BENCH1(log1p, -0.9f, 100.0f)
  BENCH1(sin, -100.0f, 100.0f)
  BENCH1(cos, -100.0f, 100.0f)
  BENCH1(tan, -100.0f, 100.0f)
  BENCH1(asin, -1.0f, 1.0f)
  BENCH1(acos, -1.0f, 1.0f)
  BENCH1(atan, -100.0f, 100.0f)
  BENCH1(sinh, -80.0f, 80.0f)
  BENCH1(cosh, -80.0f, 80.0f)
  BENCH1(tanh, -10.0f, 10.0f)
  BENCH1(asinh, -100.0f, 100.0f)
  BENCH1(acosh, 1.0f, 100.0f)
  BENCH1(atanh, -1.0f, 1.0f)
  BENCH1(erf, -5.0f, 5.0f)
  BENCH2(atan2, -10.0f, 10.0f, -10.0f, 10.0f)
  BENCH2(pow, 0.0f, 10.0f, -20.0f, 20.0f) {
    auto in = uniform(-1.0f, 1.0f, 1);
    std::vector<float> out(kN);
    const float* __restrict a = in.data();
    float* __restrict o = out.data();
    double t = time_ns([&] {
      for (int i = 0; i < kN; ++i) o[i] = m::erfinv(a[i]);
    });
    std::printf("%-8s %8.2f %10s %10s\n", "erfinv", t, "-", "-");
    t = time_ns([&] {
      for (int i = 0; i < kN; ++i) o[i] = m::sigmoid(a[i] * 20.0f);
    });
    double t2 = time_ns([&] {
      for (int i = 0; i < kN; ++i) o[i] = 1.0f / (1.0f + ::expf(-a[i] * 20.0f));
    });
    g_sink = o[kN / 2];
    std::printf("%-8s %8.2f %10.2f %10s\n", "sigmoid", t, t2, "-");
  }
  {
    // The fast variants that blocks of small arguments (|x| < 2^18) take.
    auto in = uniform(-100.0f, 100.0f, 1);
    std::vector<float> out(kN);
    const float* __restrict a = in.data();
    float* __restrict o = out.data();
    double ts = time_ns([&] {
      for (int i = 0; i < kN; ++i) o[i] = m::sin_small(a[i]);
    });
    double tc = time_ns([&] {
      for (int i = 0; i < kN; ++i) o[i] = m::cos_small(a[i]);
    });
    g_sink = o[kN / 2];
    std::printf("%-8s %8.2f %10s %10s\n", "sin_sm", ts, "-", "-");
    std::printf("%-8s %8.2f %10s %10s\n", "cos_sm", tc, "-", "-");
  }
  return 0;
}
