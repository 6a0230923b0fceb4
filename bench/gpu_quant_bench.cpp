// The quantized products on the GPU (run on the H200): the decode product
// (1, 2, 4 and 8 rows times a 4-bit group-64 [28672, 8192] weight; groups 32
// and 128, and the shapes of a 1B model's decode step, at 1 and 8 rows), a
// mixture-of-experts decode step (top-4 of 64 experts [14336, 4096]) in
// GB/s over the packed bytes they read (weights, scales, biases), beside a
// device-to-device copy of the same bytes measured in the same run (read +
// write, so a kernel that only reads can pass 100%); the prefill product
// [4096, 8192] x [28672, 8192]^T in TFLOP/s beside a cuBLAS bfloat16 GEMM of
// the same shape (nuvec::matmul). Each figure is 20 calls back to back over
// one wait, divided by 20. Exits quietly without a GPU.
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

double per_call(const std::function<Array()>& f) {
  return bench::median_ms(7, [&] {
           std::vector<Array> keep;
           for (int i = 0; i < 20; ++i) keep.push_back(f());
           nuvec::eval(keep);
           synchronize();
         }) /
         20.0;
}

// GB/s of a copy of `bytes` bytes (read + write), the same run.
double copy_gbs(double bytes) {
  Array buf = on_gpu({int(bytes / 4)}, float32, 7);
  double ms = per_call([&] { return ops::copy(buf, G); });
  return 2.0 * double(buf.nbytes()) / (ms * 1e6);
}

double packed_bytes(const std::vector<Array>& q) {
  double b = 0;
  for (const Array& a : q) b += double(a.nbytes());
  return b;
}

void bw_row(const std::string& name, double ms, double bytes, double copy) {
  const double gbs = bytes / (ms * 1e6);
  std::printf("| %-44s | %9.1f | %8.1f | %8.1f | %6.1f%% |\n", name.c_str(), ms * 1e3, gbs, copy,
              100.0 * gbs / copy);
}

}  // namespace

int main() {
  if (!is_available(Device::gpu)) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
  const int N = 28672, K = 8192;
  Array w = on_gpu({N, K}, bfloat16, 1, 0.02f);
  std::vector<Array> q = ops::quantize(w, 64, 4, "affine", std::nullopt, G);
  for (Array& a : q) a.eval();
  const double bytes = packed_bytes(q);
  const double copy = copy_gbs(bytes);
  std::printf("packed [%d, %d] 4-bit g64: %.1f MB; copy of the same bytes: %.1f GB/s\n\n", N, K,
              bytes / 1e6, copy);
  std::printf("| %-44s | %9s | %8s | %8s | %7s |\n", "product", "us", "GB/s", "copy", "share");
  std::printf("|----------------------------------------------|-----------|----------|----------|---------|\n");
  double one = 0;
  for (int m : {1, 2, 4, 8}) {
    Array x = on_gpu({m, K}, bfloat16, 2 + m);
    double ms = per_call([&] {
      return ops::quantized_matmul(x, q[0], q[1], q[2], true, 64, 4, "affine", G);
    });
    if (m == 1) one = ms;
    bw_row("decode bf16 M=" + std::to_string(m) + " x [28672, 8192]^T", ms, bytes, copy);
    if (m > 1) std::printf("|   M=%d time / M=1 time: %.2f\n", m, ms / one);
  }

  // Other group sizes and the shapes of a 1B model's decode step.
  struct Shape3 {
    int n, k, group;
  };
  for (const Shape3& sh : {Shape3{28672, 8192, 32}, Shape3{28672, 8192, 128}, Shape3{8192, 2048, 64},
                           Shape3{2048, 8192, 64}, Shape3{2048, 2048, 64}}) {
    Array ws = on_gpu({sh.n, sh.k}, bfloat16, 40, 0.02f);
    std::vector<Array> qs = ops::quantize(ws, sh.group, 4, "affine", std::nullopt, G);
    for (Array& a : qs) a.eval();
    const double b = packed_bytes(qs), c = copy_gbs(b);
    for (int m : {1, 8}) {
      Array x = on_gpu({m, sh.k}, bfloat16, 41 + m);
      double ms = per_call([&] {
        return ops::quantized_matmul(x, qs[0], qs[1], qs[2], true, sh.group, 4, "affine", G);
      });
      bw_row("g" + std::to_string(sh.group) + " M=" + std::to_string(m) + " x [" + std::to_string(sh.n) + ", " +
                 std::to_string(sh.k) + "]^T",
             ms, b, c);
    }
  }

  // Mixture of experts: 64 experts [14336, 4096], top-4 for one token.
  {
    const int E = 64, NE = 14336, KE = 4096;
    Array we = on_gpu({E, NE, KE}, bfloat16, 20, 0.02f);
    std::vector<Array> qe = ops::quantize(we, 64, 4, "affine", std::nullopt, G);
    for (Array& a : qe) a.eval();
    we = Array();
    Array x = on_gpu({1, 1, 1, 1, KE}, bfloat16, 21);
    Array rhs = array(std::vector<uint32_t>{3, 17, 40, 63}, Shape{1, 1, 4});
    rhs.eval();
    const double sel = packed_bytes(qe) * 4.0 / E;
    const double ecopy = copy_gbs(sel);
    double ms = per_call([&] {
      return ops::gather_qmm(x, qe[0], qe[1], qe[2], std::nullopt, rhs, true, 64, 4, "affine",
                             std::nullopt, false, G);
    });
    bw_row("gather_qmm top-4 of 64 x [14336, 4096]^T", ms, sel, ecopy);
  }

  // Prefill: TFLOP/s beside cuBLAS on the bfloat16 weights.
  {
    const int M = 4096;
    Array x = on_gpu({M, K}, bfloat16, 30);
    const double flop = 2.0 * M * double(N) * K;
    double qms = per_call([&] {
      return ops::quantized_matmul(x, q[0], q[1], q[2], true, 64, 4, "affine", G);
    });
    Array wt = ops::transpose(w, G);
    double bms = per_call([&] { return ops::matmul(x, wt, G); });
    std::printf("\n| %-44s | %9s | %8s |\n", "prefill [4096, 8192] x [28672, 8192]^T", "ms", "TFLOP/s");
    std::printf("|----------------------------------------------|-----------|----------|\n");
    std::printf("| %-44s | %9.3f | %8.1f |\n", "quantized_matmul 4-bit g64 (bf16)", qms, flop / (qms * 1e9));
    std::printf("| %-44s | %9.3f | %8.1f |\n", "matmul bf16 (cuBLAS)", bms, flop / (bms * 1e9));
    std::printf("quantized / bf16 GEMM throughput: %.2f\n", bms / qms);
  }
  return 0;
}
