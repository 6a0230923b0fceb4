// Exhaustive accuracy check of include/nuvec/kernels/math_f32.h: every float
// input of one unary function against glibc's double result.
//
// Build: g++ -std=c++20 -O3 -march=native -ffp-contract=off -fno-math-errno
//          -Iinclude tools/exhaustive_math_f32.cpp -o /tmp/exhaustive_math_f32
// Run:   nice /tmp/exhaustive_math_f32 sin     (one function per run)
// Odd functions (exactly symmetric by construction, see OddSymmetry test) are
// checked over the non-negative half only. Prints the max ULP error, where it
// occurs, and how many results are not the correctly rounded float.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "nuvec/kernels/math_f32_special.h"

namespace m = nuvec::kernels::math;

namespace {

double erfinv_ref(double y) {
  if (y == 0 || std::isnan(y)) return y;
  double ay = std::fabs(y);
  if (ay == 1) return std::copysign(INFINITY, y);
  if (ay > 1) return NAN;
  double x = m::erfinv(static_cast<float>(ay));
  const double k = 0.886226925452758013649083741671;  // sqrt(pi)/2
  for (int i = 0; i < 2; ++i) {
    double r = x < 1 ? std::erf(x) - ay : (1 - ay) - std::erfc(x);
    x -= r * k * std::exp(x * x);
  }
  return std::copysign(x, y);
}

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Fn {
  const char* name;
  float (*ours)(float);
  double (*ref)(double);
  bool odd;
};

#define FN(N, ODD)                                    \
  {                                                   \
#N, m::N, [](double x) { return std::N(x); }, ODD \
  }
const Fn kFns[] = {
    FN(exp, false),
    FN(exp2, false),
    FN(expm1, false),
    FN(log, false),
    FN(log2, false),
    FN(log10, false),
    FN(log1p, false),
    FN(sin, true),
    FN(cos, false),
    FN(tan, true),
    FN(asin, true),
    FN(acos, false),
    FN(atan, true),
    FN(sinh, true),
    FN(cosh, false),
    FN(tanh, true),
    FN(asinh, true),
    FN(acosh, false),
    FN(atanh, true),
    FN(erf, true),
    {"erfinv", m::erfinv, erfinv_ref, true},
    {"sigmoid", m::sigmoid, sigmoid_ref, false},
};

__attribute__((noinline)) void run_ours(float (*f)(float), const float* in,
                                        float* out, int n);

// One vectorized loop per function (the function pointer is a template-free
// dispatch; each case is a plain loop the compiler vectorizes).
#define LOOP(N)                                       \
  if (f == m::N) {                                    \
    for (int i = 0; i < n; ++i) out[i] = m::N(in[i]); \
    return;                                           \
  }
void run_ours(float (*f)(float), const float* in, float* out, int n) {
  LOOP(exp)
  LOOP(exp2) LOOP(expm1) LOOP(log) LOOP(log2) LOOP(log10) LOOP(log1p) LOOP(sin)
      LOOP(cos) LOOP(tan) LOOP(asin) LOOP(acos) LOOP(atan) LOOP(sinh) LOOP(cosh)
          LOOP(tanh) LOOP(asinh) LOOP(acosh) LOOP(atanh) LOOP(erf) LOOP(erfinv)
              LOOP(sigmoid)
  for (int i = 0; i < n; ++i) out[i] = f(in[i]);
}

double ulp_error(float got, double ref) {
  if (std::isnan(ref)) return std::isnan(got) ? 0.0 : 1e9;
  if (std::isnan(got)) return 1e9;
  float rf = static_cast<float>(ref);
  if (std::isinf(rf) || std::isinf(got)) return rf == got ? 0.0 : 1e9;
  double a = std::fabs(ref);
  int e = a < 0x1p-126 ? -126 : std::ilogb(a);
  return std::fabs(static_cast<double>(got) - ref) / std::ldexp(1.0, e - 23);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s FUNCTION\n", argv[0]);
    return 2;
  }
  const Fn* fn = nullptr;
  for (const Fn& f : kFns)
    if (std::string(argv[1]) == f.name) fn = &f;
  if (!fn) {
    std::fprintf(stderr, "unknown function %s\n", argv[1]);
    return 2;
  }
  const uint64_t end = fn->odd ? (1ull << 31) : (1ull << 32);
  const int kChunk = 1 << 16;
  std::vector<float> in(kChunk), out(kChunk);
  double worst = 0;
  float worst_x = 0;
  uint64_t not_cr = 0;
  for (uint64_t base = 0; base < end; base += kChunk) {
    for (int i = 0; i < kChunk; ++i) {
      uint32_t b = static_cast<uint32_t>(base + i);
      std::memcpy(&in[i], &b, 4);
    }
    run_ours(fn->ours, in.data(), out.data(), kChunk);
    for (int i = 0; i < kChunk; ++i) {
      double ref = fn->ref(in[i]);
      float rf = static_cast<float>(ref);
      if (std::memcmp(&rf, &out[i], 4) == 0) continue;
      if (std::isnan(rf) && std::isnan(out[i])) continue;
      ++not_cr;
      double e = ulp_error(out[i], ref);
      if (e > worst) {
        worst = e;
        worst_x = in[i];
      }
    }
  }
  std::printf("%-8s max_ulp %.4f at %a  not_correctly_rounded %llu of %llu\n",
              fn->name, worst > 0 ? worst : 0.5, worst_x,
              static_cast<unsigned long long>(not_cr),
              static_cast<unsigned long long>(end));
  return 0;
}
