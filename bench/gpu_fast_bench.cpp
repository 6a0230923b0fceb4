// The fast operations on the GPU (run on the H200 by scripts/gpu.sh), each
// as a share of the copy bandwidth measured in the same run (the bytes the
// op must move at least: read the inputs once, write the outputs once), or
// in TFLOP/s and TB/s for attention. Each figure is 20 calls back to back
// over one wait, divided by 20 (host launch cost overlaps the kernels).
// tools/peer_gpu_bench.py --fast measures PyTorch, torch.compile, JAX and
// MLX-CUDA on the same cases. Exits quietly without a GPU.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;

namespace {

const StreamOrDevice G = Device::gpu;

Array on_gpu(const Shape& s, DType dt, int seed, float scale = 1.0f) {
  Array x = ops::astype(ops::multiply(random::normal(s, random::key(seed), G), scale, G), dt, G);
  x.eval();
  return x;
}

// Milliseconds per call: the median of 7 runs of 20 calls and one wait.
double per_call(const std::function<std::vector<Array>()>& f) {
  return bench::median_ms(7, [&] {
           std::vector<Array> keep;
           for (int i = 0; i < 20; ++i)
             for (Array& a : f()) keep.push_back(a);
           nuvec::eval(keep);
           synchronize();
         }) /
         20.0;
}

double copy_gbs = 0;

void bw_row(const char* name, double ms, double bytes) {
  double gbs = bytes / (ms * 1e6);
  std::printf("| %-46s | %8.1f | %8.1f | %5.1f%% |\n", name, ms * 1e3, gbs, 100.0 * gbs / copy_gbs);
}

}  // namespace

int main() {
  if (!is_available(Device::gpu)) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
  // The copy baseline: 1 GiB read + written (bfloat16 [16384, 32768]).
  Array big = on_gpu({16384, 32768}, bfloat16, 1);
  double cms = per_call([&] { return std::vector<Array>{ops::copy(big, G)}; });
  copy_gbs = 2.0 * big.nbytes() / (cms * 1e6);
  std::printf("copy: %.1f GB/s (read + write of 1 GiB)\n\n", copy_gbs);
  std::printf("| %-46s | %8s | %8s | %6s |\n", "op", "us", "GB/s", "copy");
  std::printf("|------------------------------------------------|----------|----------|--------|\n");
  big = Array();

  {
    Array x = on_gpu({8192, 8192}, bfloat16, 2);
    double ms = per_call([&] { return std::vector<Array>{ops::softmax(x, -1, false, G)}; });
    bw_row("softmax bf16 [8192, 8192]", ms, 2.0 * x.nbytes());
    double lse = per_call([&] { return std::vector<Array>{ops::logsumexp(x, -1, false, G)}; });
    bw_row("logsumexp bf16 [8192, 8192]", lse, x.nbytes());
    // The hand-written softmax, compiled (fusion into reductions: docs/compile.md).
    auto hand = compile([](const Array& a) {
      Array af = ops::astype(a, float32);
      Array e = ops::exp(af - ops::max(af, -1, true));
      return ops::astype(e / ops::sum(e, -1, true), bfloat16);
    });
    double hms = per_call([&] {
      std::vector<Array> r;
      with_stream(G, [&] { r.push_back(hand(x)); });
      return r;
    });
    bw_row("  hand-written softmax, compiled", hms, 2.0 * x.nbytes());
  }
  {
    Array x = on_gpu({16384, 4096}, bfloat16, 3), r = on_gpu({16384, 4096}, bfloat16, 4);
    Array w = on_gpu({4096}, bfloat16, 5), b = on_gpu({4096}, bfloat16, 6);
    double ms = per_call([&] { return std::vector<Array>{fast::rms_norm(x, w, 1e-5f, G)}; });
    bw_row("rms_norm bf16 [16384, 4096]", ms, 2.0 * x.nbytes());
    double ln = per_call([&] { return std::vector<Array>{fast::layer_norm(x, w, b, 1e-5f, G)}; });
    bw_row("layer_norm bf16 [16384, 4096]", ln, 2.0 * x.nbytes());
    double add = per_call([&] {
      auto [h, y] = fast::add_rms_norm(x, r, w, 1e-5f, G);
      return std::vector<Array>{h, y};
    });
    bw_row("add_rms_norm bf16 [16384, 4096]", add, 4.0 * x.nbytes());
    auto hand = compile([](const Array& a, const Array& wt) {
      Array af = ops::astype(a, float32);
      Array n = af * ops::rsqrt(ops::mean(ops::square(af), -1, true) + 1e-5f);
      return ops::astype(n, bfloat16) * wt;
    });
    double hms = per_call([&] {
      std::vector<Array> out;
      with_stream(G, [&] { out.push_back(hand(x, w)); });
      return out;
    });
    bw_row("  hand-written rms_norm, compiled", hms, 2.0 * x.nbytes());
    Array q = on_gpu({16, 32, 1024, 128}, bfloat16, 7);
    double rope = per_call([&] { return std::vector<Array>{fast::rope(q, 128, false, 10000.0f, 1.0f, 0, std::nullopt, G)}; });
    bw_row("rope bf16 [16, 32, 1024, 128]", rope, 2.0 * q.nbytes());
  }
  {
    Array l = on_gpu({8192, 32000}, bfloat16, 8);
    Array t = random::randint(0, 32000, {8192}, int32, random::key(9), G);
    t.eval();
    double fwd = per_call([&] { return std::vector<Array>{fast::cross_entropy(l, t, G)}; });
    std::printf("| %-46s | %8.1f | %8.1f | %5.1f%% |  (one-pass floor %.1f us)\n",
                "cross_entropy fwd bf16 [8192, 32000]", fwd * 1e3, l.nbytes() / (fwd * 1e6),
                100.0 * (l.nbytes() / (fwd * 1e6)) / copy_gbs, l.nbytes() / (copy_gbs * 1e3));
    auto vg = value_and_grad([&](const Array& a) { return ops::mean(fast::cross_entropy(a, t, G), false, G); });
    double both = per_call([&] {
      auto [v, g] = vg(l);
      return std::vector<Array>{v, g};
    });
    bw_row("cross_entropy fwd+bwd bf16 [8192, 32000]", both, 2.0 * l.nbytes());
  }
  std::printf("\n| %-46s | %8s | %10s | %s\n", "attention", "us", "TFLOP/s|TB/s", "kernel");
  std::printf("|------------------------------------------------|----------|------------|------\n");
  {
    const int B = 8, H = 16, L = 2048, D = 128;
    Array q = on_gpu({B, H, L, D}, bfloat16, 10), k = on_gpu({B, H, L, D}, bfloat16, 11),
          v = on_gpu({B, H, L, D}, bfloat16, 12);
    double ms = per_call([&] {
      return std::vector<Array>{fast::scaled_dot_product_attention(q, k, v, 0.088f, "causal", {}, {}, false, G)};
    });
    // Causal: half of the 4 B H L^2 D products.
    double flops = 2.0 * B * H * double(L) * L * D;
    std::printf("| %-46s | %8.1f | %10.1f | %s\n", "causal sdpa fwd bf16 B8 H16 L2048 D128", ms * 1e3,
                flops / (ms * 1e9), fast::plan_attention(q, k, v, "causal", {}, {}, G).kernel.c_str());
    auto vg = value_and_grad([&](const std::vector<Array>& a) {
      return ops::sum(ops::astype(fast::scaled_dot_product_attention(a[0], a[1], a[2], 0.088f, "causal", {}, {}, false, G), float32, G), false, G);
    }, std::vector<int>{0, 1, 2});
    double both = per_call([&] {
      auto [val, g] = vg({q, k, v});
      std::vector<Array> out = g;
      out.push_back(val);
      return out;
    });
    std::printf("| %-46s | %8.1f | %10.1f |\n", "  forward + backward", both * 1e3, 3.5 * flops / (both * 1e9));
  }
  {
    const int B = 32, H = 32, Lk = 4096, D = 128;
    Array q = on_gpu({B, H, 1, D}, bfloat16, 13), k = on_gpu({B, H, Lk, D}, bfloat16, 14),
          v = on_gpu({B, H, Lk, D}, bfloat16, 15);
    double ms = per_call([&] {
      return std::vector<Array>{fast::scaled_dot_product_attention(q, k, v, 0.088f, "", {}, {}, false, G)};
    });
    std::printf("| %-46s | %8.1f | %10.2f | %s\n", "decode sdpa bf16 B32 H32 Lk4096 D128 (TB/s)", ms * 1e3,
                2.0 * k.nbytes() / (ms * 1e9), fast::plan_attention(q, k, v, "", {}, {}, G).kernel.c_str());
  }
  return 0;
}
