// Core benchmarks, each against a baseline measured in the same run:
// contiguous float32 add over 2^24 elements vs a hand-written loop on the
// same threads, sum over 2^24 vs a hand-written loop, eager sin and cos vs a
// loop of the per-element functor, and float32 matmul 2048^3 vs calling
// OpenBLAS directly. Prints a table of medians.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include <nuvec/core/graph.h>
#include <nuvec/kernels/functors.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;
using bench::median_ms;
using bench::row;

int main() {
  const int n = 1 << 24;
  std::printf("threads: %d\n\n", cpu::num_threads());
  bench::header();
  Array a = ops::full({n}, 1.5, float32).copy(), b = ops::full({n}, 2.5, float32).copy();
  eval({a, b});
  const float* pa = static_cast<const float*>(a.desc()->data->ptr);
  const float* pb = static_cast<const float*>(b.desc()->data->ptr);
  std::vector<float> out(n);
  double ours = median_ms(15, [&] { (a + b).eval(); });
  double base = median_ms(15, [&] {
    cpu::parallel_for(n, 1 << 15, [&](long long s, long long e) {
      for (long long i = s; i < e; ++i) out[i] = pa[i] + pb[i];
    });
  });
  row("add float32 2^24", ours, base);

  ours = median_ms(15, [&] { a.sum().eval(); });
  volatile float sink = 0;
  base = median_ms(15, [&] {
    float acc[16] = {};
    for (int i = 0; i < n; i += 16)
      for (int j = 0; j < 16; ++j) acc[j] += pa[i + j];
    float s = 0;
    for (float v : acc) s += v;
    sink = s;
  });
  (void)sink;
  row("sum float32 2^24", ours, base);

  // Small arguments (blocks take the float path) and large ones (every
  // block has some |x| >= 2^18: the general path).
  struct Trig {
    const char* name;
    float bound;
    bool cos;
  };
  for (Trig t : {Trig{"sin float32 2^24, |x| < 100", 100.0f, false},
                 Trig{"cos float32 2^24, |x| < 100", 100.0f, true},
                 Trig{"sin float32 2^24, |x| < 1e6", 1e6f, false}}) {
    Array x = random::uniform(-t.bound, t.bound, {n}, float32, random::key(1));
    x.eval();
    const float* px = static_cast<const float*>(x.desc()->data->ptr);
    ours = median_ms(7, [&] { (t.cos ? ops::cos(x) : ops::sin(x)).eval(); });
    base = median_ms(7, [&] {
      cpu::parallel_for(n, 1 << 15, [&](long long s, long long e) {
        if (t.cos)
          for (long long i = s; i < e; ++i) out[i] = kernels::Cos{}(px[i]);
        else
          for (long long i = s; i < e; ++i) out[i] = kernels::Sin{}(px[i]);
      });
    });
    row(t.name, ours, base);
  }

  const int m = 2048;
  Array x = ops::full({m, m}, 0.5, float32).copy(), y = ops::full({m, m}, 0.25, float32).copy();
  eval({x, y});
  std::vector<float> c(size_t(m) * m);
  ours = median_ms(3, [&] { ops::matmul(x, y).eval(); });
  base = median_ms(3, [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, m, m, 1.0f,
                static_cast<const float*>(x.desc()->data->ptr), m,
                static_cast<const float*>(y.desc()->data->ptr), m, 0.0f, c.data(), m);
  });
  row("matmul float32 2048^3", ours, base);
  return 0;
}
