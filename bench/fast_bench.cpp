// The fast operations on the CPU, each against a hand-written loop in the
// same run (the same two-pass algorithm, vectorizable, split over the same
// number of threads) and against the MLX formula written with ops (the
// composite, uncompiled). Prints a table of medians; docs/performance.md
// records it beside PyTorch CPU's figures (tools/peer_cpu_fast.py).
#include <cmath>
#include <cstdio>
#include <thread>
#include <vector>

#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"
#include "core/thread_pool.h"

using namespace nuvec;
using bench::median_ms;
using bench::row;

namespace {

// Rows [r0, r1) of fn over the pool's thread count, in equal parts.
template <class F>
void split_rows(int rows, F fn) {
  const int t = cpu::num_threads();
  std::vector<std::thread> th;
  for (int k = 1; k < t; ++k) th.emplace_back([&, k] { fn(rows * k / t, rows * (k + 1) / t); });
  fn(0, rows / t);
  for (auto& x : th) x.join();
}

// 16 interleaved partial sums (vectorized by the compiler).
float sum16(const float* x, int n) {
  float a[16] = {};
  int i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) a[k] += x[i + k];
  float s = 0;
  for (int k = 0; k < 16; ++k) s += a[k];
  for (; i < n; ++i) s += x[i];
  return s;
}
float max16(const float* x, int n) {
  float a[16];
  for (int k = 0; k < 16; ++k) a[k] = -INFINITY;
  int i = 0;
  for (; i + 16 <= n; i += 16)
    for (int k = 0; k < 16; ++k) a[k] = a[k] > x[i + k] ? a[k] : x[i + k];
  float m = -INFINITY;
  for (int k = 0; k < 16; ++k) m = m > a[k] ? m : a[k];
  for (; i < n; ++i) m = m > x[i] ? m : x[i];
  return m;
}

std::vector<float> host(const Array& a) { return a.to_vector<float>(); }

}  // namespace

int main() {
  set_default_device(Device::cpu);
  std::printf("threads: %d\n\n", cpu::num_threads());
  bench::header();

  {  // softmax [4096, 4096]
    const int R = 4096, N = 4096;
    Array x = random::normal({R, N}, random::key(1)).eval();
    auto xs = host(x);
    std::vector<float> out(size_t(R) * N);
    double ours = median_ms(9, [&] { ops::softmax(x, -1).eval(); });
    double loop = median_ms(9, [&] {
      split_rows(R, [&](int r0, int r1) {
        for (int r = r0; r < r1; ++r) {
          const float* p = xs.data() + size_t(r) * N;
          float* o = out.data() + size_t(r) * N;
          float m = max16(p, N);
          for (int i = 0; i < N; ++i) o[i] = std::exp(p[i] - m);
          float inv = 1.0f / sum16(o, N);
          for (int i = 0; i < N; ++i) o[i] *= inv;
        }
      });
    });
    row("softmax f32 [4096, 4096] vs hand loop", ours, loop);
    Array m = ops::max(x, -1, true);
    double comp = median_ms(9, [&] {
      Array e = ops::exp(x - m);
      (e / ops::sum(e, -1, true)).eval();
    });
    row("softmax f32 [4096, 4096] vs composite", ours, comp);
    // The composite compiled: fusion into reductions (docs/compile.md).
    auto hand = compile([](const Array& a) {
      Array e = ops::exp(a - ops::max(a, -1, true));
      return e / ops::sum(e, -1, true);
    });
    hand(x).eval();
    wait_for_kernels();  // (measure the generated kernels, not the interpreter)
    double fused = median_ms(9, [&] { hand(x).eval(); });
    row("compiled hand softmax vs fast softmax", fused, ours);
    row("compiled hand softmax vs composite", fused, comp);
  }
  {  // rms_norm [8192, 1024] with a weight
    const int R = 8192, N = 1024;
    Array x = random::normal({R, N}, random::key(2)).eval(), w = random::normal({N}, random::key(3)).eval();
    auto xs = host(x), ws = host(w);
    std::vector<float> out(size_t(R) * N), sq(size_t(N) * 64);
    double ours = median_ms(9, [&] { fast::rms_norm(x, w, 1e-5f).eval(); });
    double loop = median_ms(9, [&] {
      split_rows(R, [&](int r0, int r1) {
        std::vector<float> s(N);
        for (int r = r0; r < r1; ++r) {
          const float* p = xs.data() + size_t(r) * N;
          for (int i = 0; i < N; ++i) s[i] = p[i] * p[i];
          float inv = 1.0f / std::sqrt(sum16(s.data(), N) / N + 1e-5f);
          float* o = out.data() + size_t(r) * N;
          for (int i = 0; i < N; ++i) o[i] = p[i] * inv * ws[i];
        }
      });
    });
    row("rms_norm f32 [8192, 1024] vs hand loop", ours, loop);
    double comp = median_ms(9, [&] {
      (x * ops::rsqrt(ops::mean(ops::square(x), -1, true) + 1e-5f) * w).eval();
    });
    row("rms_norm f32 [8192, 1024] vs composite", ours, comp);
    auto hand = compile([](const Array& a, const Array& wt) {
      return a * ops::rsqrt(ops::mean(ops::square(a), -1, true) + 1e-5f) * wt;
    });
    hand(x, w).eval();
    wait_for_kernels();
    double fused = median_ms(9, [&] { hand(x, w).eval(); });
    row("compiled hand rms_norm vs fast rms_norm", fused, ours);
    row("compiled hand rms_norm vs composite", fused, comp);
    auto sumsq = compile([](const Array& a) { return ops::sum(a * a); });
    sumsq(x).eval();
    wait_for_kernels();
    double fs = median_ms(9, [&] { sumsq(x).eval(); });
    double es = median_ms(9, [&] { ops::sum(x * x).eval(); });
    row("compiled sum(x * x) [8192, 1024] vs uncompiled", fs, es);
    double ln = median_ms(9, [&] { fast::layer_norm(x, w, w, 1e-5f).eval(); });
    double ln_loop = median_ms(9, [&] {
      split_rows(R, [&](int r0, int r1) {
        std::vector<float> c(N);
        for (int r = r0; r < r1; ++r) {
          const float* p = xs.data() + size_t(r) * N;
          float mu = sum16(p, N) / N;
          for (int i = 0; i < N; ++i) c[i] = (p[i] - mu) * (p[i] - mu);
          float inv = 1.0f / std::sqrt(sum16(c.data(), N) / N + 1e-5f);
          float* o = out.data() + size_t(r) * N;
          for (int i = 0; i < N; ++i) o[i] = (p[i] - mu) * inv * ws[i] + ws[i];
        }
      });
    });
    row("layer_norm f32 [8192, 1024] vs hand loop", ln, ln_loop);
  }
  {  // cross entropy [1024, 32000]: forward, and forward + backward
    const int R = 1024, C = 32000;
    Array x = random::normal({R, C}, random::key(4)).eval();
    Array t = random::randint(0, C, {R}, int32, random::key(5)).eval();
    auto xs = host(x);
    auto ts = t.to_vector<int32_t>();
    std::vector<float> loss(R), grad(size_t(R) * C);
    double fwd = median_ms(9, [&] { fast::cross_entropy(x, t).eval(); });
    auto loop_fwd = [&](bool backward) {
      split_rows(R, [&](int r0, int r1) {
        std::vector<float> e(C);
        for (int r = r0; r < r1; ++r) {
          const float* p = xs.data() + size_t(r) * C;
          float m = max16(p, C);
          for (int i = 0; i < C; ++i) e[i] = std::exp(p[i] - m);
          float s = sum16(e.data(), C);
          loss[r] = std::log(s) + m - p[ts[r]];
          if (backward) {
            float inv = 1.0f / (s * R);
            float* g = grad.data() + size_t(r) * C;
            for (int i = 0; i < C; ++i) g[i] = e[i] * inv;
            g[ts[r]] -= 1.0f / R;
          }
        }
      });
    };
    row("cross_entropy fwd f32 [1024, 32000] vs hand loop", fwd, median_ms(9, [&] { loop_fwd(false); }));
    auto vg = value_and_grad([&](const Array& l) { return ops::mean(fast::cross_entropy(l, t)); });
    double both = median_ms(9, [&] {
      auto [v, g] = vg(x);
      eval({v, g});
    });
    row("cross_entropy fwd+bwd f32 [1024, 32000] vs loop", both, median_ms(9, [&] { loop_fwd(true); }));
  }
  {  // rope [1, 32, 1024, 128] and causal attention [1, 8, 1024, 64]
    Array x = random::normal({1, 32, 1024, 128}, random::key(6)).eval();
    double ours = median_ms(9, [&] { fast::rope(x, 128, false, 10000.0f, 1.0f, 0).eval(); });
    double comp = median_ms(9, [&] {
      // The composite, as mlx.nn.RoPE writes it without the fast kernel.
      Array pos = ops::arange(0.0, 1024.0, float32);
      Array inv = ops::exp(ops::arange(0.0, -64.0, -1.0, float32) * float(std::log(10000.0f) / 64));
      Array th = ops::expand_dims(pos, -1) * inv;
      Array c = ops::cos(th), s = ops::sin(th);
      Array x1 = ops::slice(x, {0, 0, 0, 0}, {1, 32, 1024, 64}), x2 = ops::slice(x, {0, 0, 0, 64}, {1, 32, 1024, 128});
      ops::concatenate({x1 * c - x2 * s, x1 * s + x2 * c}, -1).eval();
    });
    row("rope f32 [1, 32, 1024, 128] vs composite", ours, comp);
    Array q = random::normal({1, 8, 1024, 64}, random::key(7)).eval();
    Array k = random::normal({1, 8, 1024, 64}, random::key(8)).eval();
    Array v = random::normal({1, 8, 1024, 64}, random::key(9)).eval();
    double att = median_ms(5, [&] { fast::scaled_dot_product_attention(q, k, v, 0.125f, "causal").eval(); });
    double att_comp = median_ms(5, [&] {
      Array sc = ops::matmul(q * 0.125f, ops::swapaxes(k, -1, -2));
      Array mask = ops::greater_equal(ops::expand_dims(ops::arange(1024), 1), ops::expand_dims(ops::arange(1024), 0));
      sc = ops::where(mask, sc, -1e30f);
      ops::matmul(ops::softmax(sc, -1, true), v).eval();
    });
    row("causal sdpa f32 [1, 8, 1024, 64] vs composite", att, att_comp);
  }
  return 0;
}
