// GPU element-wise throughput (run on the H200 by scripts/gpu.sh): a copy
// (the bandwidth baseline, bytes read plus written) and unfused chains at
// 2^26 float32, as GB/s of the bytes each op moves. Exits quietly without
// a GPU.
#include <chrono>
#include <cstdio>
#include <string>

#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;

int main() {
  if (!is_available(Device::gpu)) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
  const int n = 1 << 26;
  Array x = ops::copy(random::normal({n}, random::key(1)), Device::gpu);
  Array y = ops::copy(random::normal({n}, random::key(2)), Device::gpu);
  x.eval();
  y.eval();
  const double mb = n * 4.0 / 1e6;
  std::printf("2^26 float32 on the GPU (eager, one kernel per op; eval waits for the GPU)\n\n");
  std::printf("| %-34s | %9s | %9s |\n", "op", "ms", "GB/s");
  std::printf("|------------------------------------|-----------|-----------|\n");
  auto row = [&](const char* name, double ms, double bytes_mb) {
    std::printf("| %-34s | %9.3f | %9.1f |\n", name, ms, bytes_mb / ms);
  };
  double copy = bench::median_ms(21, [&] { ops::copy(x, Device::gpu).eval(); });
  row("copy (read + write)", copy, 2 * mb);
  double add = bench::median_ms(21, [&] { ops::add(x, y, Device::gpu).eval(); });
  row("add (2 reads + write)", add, 3 * mb);
  double xx1 = bench::median_ms(21, [&] { ops::add(ops::multiply(x, x, Device::gpu), 1.0f, Device::gpu).eval(); });
  row("x*x+1 (2 kernels)", xx1, 4 * mb);
  double ex = bench::median_ms(21, [&] { ops::exp(x, Device::gpu).eval(); });
  row("exp", ex, 2 * mb);
  double bf = bench::median_ms(21, [&] { ops::astype(x, bfloat16, Device::gpu).eval(); });
  row("astype bfloat16", bf, 1.5 * mb);

  Array rows = ops::reshape(x, {8192, 8192});
  double rs = bench::median_ms(21, [&] { ops::sum(rows, Axes{1}, false, Device::gpu).eval(); });
  row("sum over the last axis [8192, 8192]", rs, mb);

  std::printf("\nmatmul (cuBLASLt, float32 without TF32)\n\n| %-34s | %9s | %9s |\n", "shape", "ms", "TFLOP/s");
  std::printf("|------------------------------------|-----------|-----------|\n");
  for (DType dt : {float32, bfloat16})
    for (int n : {4096, 8192}) {
      Array a = ops::astype(ops::copy(random::normal({n, n}, random::key(3)), Device::gpu), dt, Device::gpu);
      Array b = ops::astype(ops::copy(random::normal({n, n}, random::key(4)), Device::gpu), dt, Device::gpu);
      a.eval();
      b.eval();
      double ms = bench::median_ms(5, [&] { ops::matmul(a, b, Device::gpu).eval(); });
      char name[64];
      std::snprintf(name, sizeof name, "%s %d^3", std::string(dtype_name(dt)).c_str(), n);
      std::printf("| %-34s | %9.3f | %9.1f |\n", name, ms, 2.0 * n * n * double(n) / (ms * 1e9));
      // A Linear layer's bias: AddMM through cuBLASLt's bias epilogue,
      // against the product and a separate add.
      Array bias = ops::astype(ops::copy(random::normal({n}, random::key(5)), Device::gpu), dt, Device::gpu);
      bias.eval();
      double fused = bench::median_ms(5, [&] { ops::addmm(bias, a, b, 1.0f, 1.0f, Device::gpu).eval(); });
      double apart = bench::median_ms(5, [&] { ops::add(ops::matmul(a, b, Device::gpu), bias, Device::gpu).eval(); });
      std::snprintf(name, sizeof name, "  addmm + bias (matmul, add: %.3f)", apart);
      std::printf("| %-34s | %9.3f | %9.1f |\n", name, fused, 2.0 * n * n * double(n) / (fused * 1e9));
    }
  // A small Linear layer, where host time dominates: x [64, 256] @ w [256,
  // 256] + bias, per call back to back (one wait at the end).
  std::printf("\nsmall addmm, host time per call (us, 200 calls back to back)\n\n");
  Array sx = ops::copy(random::normal({64, 256}, random::key(6)), Device::gpu);
  Array sw = ops::copy(random::normal({256, 256}, random::key(7)), Device::gpu);
  Array sb = ops::copy(random::normal({256}, random::key(8)), Device::gpu);
  nuvec::eval(std::vector<Array>{sx, sw, sb});
  auto per_call = [&](auto f) {
    return 1e3 * bench::median_ms(5, [&] {
             std::vector<Array> outs;
             for (int i = 0; i < 200; ++i) outs.push_back(f());
             nuvec::eval(outs);
           }) / 200.0;
  };
  std::printf("  addmm(bias, x, w): %.2f us; matmul(x, w) + bias: %.2f us; matmul alone: %.2f us\n",
              per_call([&] { return ops::addmm(sb, sx, sw, 1.0f, 1.0f, Device::gpu); }),
              per_call([&] { return ops::add(ops::matmul(sx, sw, Device::gpu), sb, Device::gpu); }),
              per_call([&] { return ops::matmul(sx, sw, Device::gpu); }));
  // Where the time goes: building the nodes alone (no evaluation), and an
  // element-wise op of the same output size for comparison.
  double build = 1e3 * bench::median_ms(5, [&] {
                   std::vector<Array> outs;
                   for (int i = 0; i < 200; ++i) outs.push_back(ops::matmul(sx, sw, Device::gpu));
                 }) / 200.0;
  std::printf("  matmul nodes built, not evaluated: %.2f us; x * x + 1 on [64, 256] evaluated: %.2f us\n", build,
              per_call([&] { return ops::add(ops::multiply(sx, sx, Device::gpu), 1.0f, Device::gpu); }));
}
