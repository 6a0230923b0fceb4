// compile's fused element-wise kernels against the same chain run eagerly
// (one pass over memory per op), on 2^24 float32 elements.
#include <cstdio>

#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;

int main() {
  const int n = 1 << 24;
  Array x = random::normal({n}, random::key(1));
  Array y = random::normal({n}, random::key(2));
  x.eval();
  y.eval();
  auto chain = [](const Array& a, const Array& b) {
    Array t = a * 1.5f + b;
    t = ops::maximum(t, 0.0f) - ops::minimum(b, 0.5f) * a;
    t = t * t + a * 0.25f - b;
    return t * 0.5f + 1.0f;  // 12 element-wise ops
  };
  auto swiglu = [](const Array& g, const Array& u) { return g * ops::sigmoid(g) * u; };
  auto cchain = compile(chain);
  auto cswiglu = compile(swiglu);
  std::printf("\n2^24 float32 element-wise chains, compiled (fused) against eager\n\n");
  bench::header();
  double e1 = bench::median_ms(7, [&] { chain(x, y).eval(); });
  double c1 = bench::median_ms(7, [&] { cchain(x, y).eval(); });
  bench::row("12-op arithmetic chain", c1, e1);
  double e2 = bench::median_ms(7, [&] { swiglu(x, y).eval(); });
  double c2 = bench::median_ms(7, [&] { cswiglu(x, y).eval(); });
  bench::row("swiglu g * sigmoid(g) * u", c2, e2);
}
