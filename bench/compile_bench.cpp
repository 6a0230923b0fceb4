// compile's standard set (issue 6) at 2^24 float32 on the pool's threads:
// each function eager, compiled through the interpreter, and compiled with
// generated C++ kernels, against a hand-written fused loop over the same
// scalar functors (the baseline, measured in the same run; sin/cos in
// blocks that take the fast variants when every argument is small, as the
// eager and generated kernels do). Also: effective bandwidth, replay
// overhead on 1-element inputs, and first-call latency with an empty and a
// warm kernel cache.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nuvec/compile.h>
#include <nuvec/kernels/functors.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"
#include "standard_set.h"
#include "compile/jit.h"
#include "core/thread_pool.h"

using namespace nuvec;
namespace k = nuvec::kernels;

namespace {

using bench::Fn;
using bench::b1;
using bench::b2;
using bench::eps;
using bench::kC;
using bench::kRsqrt2;
using bench::lr;

// The hand loop over elements [b, e) of each function of the standard
// set, in its order.
using Hand = std::function<void(const float* const*, float* const*, long long b, long long e)>;

std::vector<Hand> hand_loops() {
  return {
      [](const float* const* in, float* const* out, long long b, long long e) {
         for (long long i = b; i < e; ++i) {
         out[0][i] = k::Add{}(k::Multiply{}(in[0][i], in[0][i]), 1.0f);
       }},
      [](const float* const* in, float* const* out, long long b, long long e) {
         for (long long i = b; i < e; ++i) {
         float x = in[0][i];
         out[0][i] = k::Multiply{}(k::Multiply{}(x, k::Add{}(k::Erf{}(k::Multiply{}(x, kRsqrt2)), 1.0f)), 0.5f);
       }},
      [](const float* const* in, float* const* out, long long b, long long e) {
         for (long long i = b; i < e; ++i) {
         float x = in[0][i];
         float c = k::Multiply{}(k::Multiply{}(x, x), x);
         float t = k::Tanh{}(k::Multiply{}(k::Add{}(x, k::Multiply{}(c, 0.044715f)), kC));
         out[0][i] = k::Multiply{}(k::Multiply{}(x, k::Add{}(t, 1.0f)), 0.5f);
       }},
      [](const float* const* in, float* const* out, long long b, long long e) {
         for (long long i = b; i < e; ++i) {
         float g = in[0][i];
         out[0][i] = k::Multiply{}(k::Multiply{}(g, k::Sigmoid{}(g)), in[1][i]);
       }},
      [](const float* const* in, float* const* out, long long b, long long e) {
         // Pointers in locals and no alias checks: seven streams need more
         // run-time checks than GCC will version a loop for.
         const float *ip = in[0], *ig = in[1], *im = in[2], *iv = in[3];
         float *op = out[0], *om = out[1], *ov = out[2];
         NUVEC_INDEPENDENT_ITERATIONS
         for (long long i = b; i < e; ++i) {
         float p = ip[i], g = ig[i], m = im[i], v = iv[i];
         m = k::Add{}(k::Multiply{}(m, b1), k::Multiply{}(g, 1.0f - b1));
         v = k::Add{}(k::Multiply{}(v, b2), k::Multiply{}(k::Multiply{}(g, g), 1.0f - b2));
         op[i] = k::Subtract{}(p, k::Divide{}(k::Multiply{}(m, lr), k::Add{}(k::Sqrt{}(v), eps)));
         om[i] = m;
         ov[i] = v;
       }},
      [](const float* const* in, float* const* out, long long b, long long e) {
         // Blocks whose arguments are all small take the fast sin/cos.
         auto chain = [&](auto sin, auto cos, long long s, long long t) {
           for (long long i = s; i < t; ++i) {
             float x = in[0][i];
             float e = k::Exp{}(k::Add{}(k::Multiply{}(sin(x), 2.0f), cos(x)));
             out[0][i] = k::Divide{}(e, k::Add{}(k::Abs{}(x), 1.0f));
           }
         };
         for (long long s = b; s < e; s += 256) {
           long long t = std::min(e, s + 256);
           k::u32 outside = 0;
           for (long long i = s; i < t; ++i) outside |= k::Small<k::Sin>::outside(in[0][i]);
           if (outside) chain(k::Sin{}, k::Cos{}, s, t);
           else chain(k::Small<k::Sin>{}, k::Small<k::Cos>{}, s, t);
         }
       },
      [](const float* const* in, float* const* out, long long b, long long e) {
         for (long long i = b; i < e; ++i) {
         long long c = i & 4095;
         out[0][i] = k::Maximum{}(k::Add{}(k::Multiply{}(in[0][i], in[1][c]), in[2][c]), 0.0f);
       }},
  };
}

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace

int main() {
  const long long n = 1 << 24;
  std::printf("threads: %d\n\n", cpu::num_threads());
  std::printf("%-34s | %8s | %8s | %8s | %8s | %6s | %6s | %6s\n", "2^24 float32", "hand ms", "eager",
              "interp", "generated", "GB/s", "gen/hand", "eager/gen");
  std::printf("-----------------------------------|----------|----------|----------|----------|--------|--------|--------\n");
  auto set = bench::standard_set();
  auto hands = hand_loops();
  for (size_t ci = 0; ci < set.size(); ++ci) {
    const auto& c = set[ci];
    Shape shape = c.shape.empty() ? Shape{static_cast<int>(n)} : c.shape;
    Arrays in;
    std::vector<std::vector<float>> host;
    for (int j = 0; j < c.inputs; ++j) {
      Shape s = j > 0 && !c.side.empty() ? c.side : shape;
      in.push_back(random::uniform(0.1f, 2.0f, s, float32, random::key(j)));
      host.push_back(in.back().to_vector<float>());
    }
    std::vector<std::vector<float>> out(c.outputs, std::vector<float>(static_cast<size_t>(n)));
    std::vector<const float*> ip;
    std::vector<float*> op;
    for (auto& h : host) ip.push_back(h.data());
    for (auto& o : out) op.push_back(o.data());
    double hand = bench::median_ms(7, [&] {
      cpu::parallel_for(n, 1 << 16, [&](long long b, long long e) {
        hands[ci](ip.data(), op.data(), b, e);
      });
    });
    auto run = [&](const Fn& f) {
      Arrays r = f(in);
      for (auto& a : r) a.eval();
    };
    double eager = bench::median_ms(7, [&] { run(c.f); });
    jit::set_mode(jit::Mode::off);
    auto interp = compile_flat(c.f);
    double ti = bench::median_ms(7, [&] { run(interp); });
    jit::set_mode(jit::Mode::sync);
    auto gen = compile_flat(c.f);
    double tg = bench::median_ms(7, [&] { run(gen); });
    // The generated result equals the hand loop's (the same functors).
    bool same = gen(in)[0].to_vector<float>() == out[0];
    long long bytes = 0;
    for (const auto& a : in) bytes += a.nbytes();
    bytes += static_cast<long long>(c.outputs) * n * 4;
    std::printf("%-34s | %8.2f | %8.2f | %8.2f | %8.2f | %6.1f | %6.2f | %6.2f%s\n", c.name, hand, eager, ti,
                tg, bytes / (tg * 1e6), tg / hand, eager / tg, same ? "" : "  (differs from the hand loop!)");
  }

  // Replay overhead: a 10-op function on 1-element inputs, per call.
  std::printf("\nper call on 1-element inputs (microseconds):\n");
  auto ten = [](const Arrays& a) {
    Array x = a[0];
    Array t = ops::exp(ops::sin(x) * 2.0f + ops::cos(x)) / (ops::abs(x) + 1.0f);
    return Arrays{ops::sigmoid(t * 3.0f - 1.0f)};
  };
  Arrays one{array({0.5f})};
  auto compiled = compile_flat(ten);
  const int calls = 20000;
  double te = bench::median_ms(5, [&] {
    for (int i = 0; i < calls; ++i) ten(one)[0].eval();
  }) * 1e3 / calls;
  double tc = bench::median_ms(5, [&] {
    for (int i = 0; i < calls; ++i) compiled(one)[0].eval();
  }) * 1e3 / calls;
  std::printf("  10-op function: uncompiled %.2f us, compiled (replay, generated kernel) %.2f us\n", te, tc);

  // An optimizer step of 32 regions (bench::adam_step) on 8-element
  // parameters: the compiled call alone (its nodes built, nothing
  // evaluated: the host's cost per call on any device), and with eval.
  {
    constexpr int kParams = 32;
    auto step = compile_flat(bench::adam_step(kParams));
    Arrays in;
    for (int j = 0; j < 4 * kParams; ++j) in.push_back(random::uniform(0.1f, 2.0f, {8}, float32, random::key(50 + j)));
    nuvec::eval(in);
    const int steps = 2000;
    double build = bench::median_ms(5, [&] {
      for (int i = 0; i < steps; ++i) step(in);
    }) * 1e3 / steps;
    double with_eval = bench::median_ms(5, [&] {
      for (int i = 0; i < steps; ++i) nuvec::eval(step(in));
    }) * 1e3 / steps;
    std::printf("  Adam step over %d parameters of 8 elements (32 regions): building the call %.1f us, with eval "
                "%.1f us\n", kParams, build, with_eval);
  }

  // First call with an empty kernel cache, then after dropping the loaded
  // modules (what a new process sees: the disk cache is warm).
  char tmpl[] = "/tmp/nuvec-bench-cache-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  jit_detail::reset_for_tests(dir, "");
  auto first = [&](const char* what) {
    auto f = compile_flat([](const Arrays& a) { return Arrays{ops::tanh(a[0] * 1.7f) + a[0] * 0.25f}; });
    auto t0 = std::chrono::steady_clock::now();
    f(Arrays{array({1.0f, 2.0f})})[0].eval();
    std::printf("  first call, %s: %.1f ms\n", what, seconds_since(t0) * 1e3);
  };
  std::printf("\nfirst call of a new compiled function (trace, kernel, run):\n");
  first("empty kernel cache (compiler runs)");
  jit_detail::reset_for_tests(dir, "");
  first("warm disk cache, modules dropped");
  jit::set_mode(jit::Mode::async);
  jit_detail::reset_for_tests(dir + "-async", "");
  first("empty cache, async mode (interpreter meanwhile)");
  jit::wait();
  jit_detail::reset_for_tests("", "");
  std::filesystem::remove_all(dir);
  std::filesystem::remove_all(dir + "-async");
}
