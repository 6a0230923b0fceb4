// GPU element-wise throughput (run on the H200 by scripts/gpu.sh): a copy
// (the bandwidth baseline, bytes read plus written) and unfused chains at
// 2^26 float32, as GB/s of the bytes each op moves. Exits quietly without
// a GPU.
#include <chrono>
#include <cstdio>

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
  std::printf("2^26 float32 on the GPU (eager, one kernel per op; the host waits for each node)\n\n");
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
}
