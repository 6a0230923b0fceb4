// The quantized products on the CPU (the quantization issue's CPU targets):
// the 4- and 8-bit group-64 decode products [1, 4096] x [14336, 4096]^T in GB/s over
// the packed bytes it reads (weights, scales, biases) beside a streaming read
// of the same number of bytes in the same run (two threads summing 64-bit
// words), and a
// prefill product [256, 4096] x 4-bit [4096, 4096]^T in GFLOP/s beside
// OpenBLAS sgemm (nuvec::matmul) on the dequantized weights. Sizes are
// smaller than the GPU bench's so the run stays short on two cores.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;

namespace {

const StreamOrDevice C = Device::cpu;

double ms_of(const std::function<Array()>& f) {
  return bench::median_ms(5, [&] { f().eval(); });
}

double packed_bytes(const std::vector<Array>& q) {
  double b = 0;
  for (const Array& a : q) b += double(a.nbytes());
  return b;
}

}  // namespace

int main() {
  random::seed(0);
  Array w = random::normal({14336, 4096}, float32, 0.0f, 0.02f, std::nullopt, C);
  std::printf("| %-44s | %9s | %8s | %8s | %7s |\n", "CPU quantized product", "us", "GB/s", "read GB/s", "of read");
  std::printf("|----------------------------------------------|-----------|----------|----------|---------|\n");
  for (int bits : {4, 8}) {
    auto q = ops::quantize(w, 64, bits, "affine", std::nullopt, C);
    eval(q);
    const double bytes = packed_bytes(q);
    // The streaming read of the same bytes by two threads (a fixed-order
    // float sum, the earlier baseline, is compute-bound at a few GB/s).
    const double read_gbs = bench::stream_read_gbs(bytes, 2);
    for (int rows : {1, 8}) {
      if (bits == 8 && rows > 1) continue;
      Array x = random::normal({rows, 4096}, float32, 0.0f, 1.0f, std::nullopt, C);
      x.eval();
      double ms = ms_of([&] { return ops::quantized_matmul(x, q[0], q[1], q[2], true, 64, bits, "affine", C); });
      double gbs = bytes / (ms * 1e6);
      std::printf("| %-44s | %9.1f | %8.2f | %8.2f | %6.1f%% |\n",
                  ("decode [" + std::to_string(rows) + ", 4096] x " + std::to_string(bits) + "-bit [14336, 4096]^T")
                      .c_str(),
                  ms * 1e3, gbs, read_gbs, 100.0 * gbs / read_gbs);
    }
  }
  Array wq = ops::slice(w, {0, 0}, {4096, 4096});
  auto q2 = ops::quantize(wq, 64, 4, "affine", std::nullopt, C);
  Array deq = ops::dequantize(q2[0], q2[1], q2[2], 64, 4, "affine", std::nullopt, std::nullopt, C);
  Array x = random::normal({256, 4096}, float32, 0.0f, 1.0f, std::nullopt, C);
  eval(std::tie(x, deq, q2));
  double flops = 2.0 * 256 * 4096 * 4096;
  double qms = ms_of([&] { return ops::quantized_matmul(x, q2[0], q2[1], q2[2], true, 64, 4, "affine", C); });
  double dms = ms_of([&] { return ops::matmul(x, ops::transpose(deq, C), C); });
  bench::header();
  bench::row("prefill [256, 4096] x 4-bit [4096, 4096]^T vs sgemm", qms, dms);
  std::printf("(GFLOP/s: quantized %.1f, sgemm on the dequantized weights %.1f)\n", flops / (qms * 1e6),
              flops / (dms * 1e6));
  return 0;
}
