// compile's fused element-wise kernels on 2^24 float32 elements: the chain
// run eagerly (one pass over memory per op), compiled with the interpreter,
// compiled with generated C++ kernels, and a hand-written fused loop over
// the same scalar functors on the same threads (the ideal).
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nuvec/compile.h>
#include <nuvec/kernels/functors.h>
#include <nuvec/nuvec.h>

#include "core/thread_pool.h"
#include "bench_util.h"

using namespace nuvec;
namespace k = nuvec::kernels;

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
  std::vector<float> vx = x.to_vector<float>(), vy = y.to_vector<float>(), vo(n);
  const float* px = vx.data();
  const float* py = vy.data();
  float* po = vo.data();
  auto hand_chain = [&] {
    cpu::parallel_for(n, 1 << 16, [&](long long b, long long e) {
      for (long long i = b; i < e; ++i) {
        float a = px[i], c = py[i];
        float t = k::Add{}(k::Multiply{}(a, 1.5f), c);
        t = k::Subtract{}(k::Maximum{}(t, 0.0f), k::Multiply{}(k::Minimum{}(c, 0.5f), a));
        t = k::Subtract{}(k::Add{}(k::Multiply{}(t, t), k::Multiply{}(a, 0.25f)), c);
        po[i] = k::Add{}(k::Multiply{}(t, 0.5f), 1.0f);
      }
    });
  };
  auto hand_swiglu = [&] {
    cpu::parallel_for(n, 1 << 16, [&](long long b, long long e) {
      for (long long i = b; i < e; ++i)
        po[i] = k::Multiply{}(k::Multiply{}(px[i], k::Sigmoid{}(px[i])), py[i]);
    });
  };

  struct Case {
    const char* name;
    std::function<Array(const Array&, const Array&)> f;
    std::function<void()> hand;
  } cases[] = {{"12-op arithmetic chain", chain, hand_chain},
               {"swiglu g * sigmoid(g) * u", swiglu, hand_swiglu}};
  std::printf("\n2^24 float32 element-wise chains (ratios against the hand-written fused loop)\n\n");
  bench::header();
  for (const auto& c : cases) {
    double hand = bench::median_ms(7, c.hand);
    double eager = bench::median_ms(7, [&] { c.f(x, y).eval(); });
    jit::set_mode(jit::Mode::off);
    auto interp = compile(c.f);
    double ti = bench::median_ms(7, [&] { interp(x, y).eval(); });
    jit::set_mode(jit::Mode::sync);
    auto gen = compile(c.f);
    double tg = bench::median_ms(7, [&] { gen(x, y).eval(); });
    std::string name = c.name;
    bench::row((name + ": eager").c_str(), eager, hand);
    bench::row((name + ": compiled, interpreter").c_str(), ti, hand);
    bench::row((name + ": compiled, generated").c_str(), tg, hand);
  }
  auto st = jit::stats();
  std::printf("\ngenerated runs %llu, interpreted runs %llu, kernels compiled %llu, from disk %llu\n",
              static_cast<unsigned long long>(st.generated_runs),
              static_cast<unsigned long long>(st.interpreted_runs),
              static_cast<unsigned long long>(st.compiled), static_cast<unsigned long long>(st.disk_hits));
}
