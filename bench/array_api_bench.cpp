// Array-API benchmarks against baselines measured in the same run: take of
// 2^20 rows (of 64 float32) against a hand-written gather loop, and conv2d
// of a ResNet-like layer (batch 8, 56x56x64, 3x3x64x64, stride 1, padding 1)
// against a hand-written im2col + cblas_sgemm.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include <nuvec/core/graph.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;
using bench::median_ms;
using bench::row;

int main() {
  bench::header();
  const int rows = 1 << 16, cols = 64, n = 1 << 20;
  Array table = random::uniform({rows, cols}, float32, random::key(1));
  Array idx = random::randint(0, rows, {n}, int32, random::key(2));
  eval({table, idx});
  const float* tp = static_cast<const float*>(table.desc()->data->ptr);
  const int* ip = static_cast<const int*>(idx.desc()->data->ptr);
  std::vector<float> out(size_t(n) * cols);
  double ours = median_ms(7, [&] { ops::take(table, idx, 0).eval(); });
  double base = median_ms(7, [&] {
    for (int i = 0; i < n; ++i) std::memcpy(&out[size_t(i) * cols], tp + size_t(ip[i]) * cols, cols * 4);
  });
  row("take 2^20 rows of 64 float32", ours, base);

  // conv2d: NHWC input, OHWI weights as MLX.
  const int B = 8, H = 56, W = 56, C = 64, O = 64, K = 3;
  Array x = random::uniform({B, H, W, C}, float32, random::key(3));
  Array w = random::uniform({O, K, K, C}, float32, random::key(4));
  eval({x, w});
  const float* xp = static_cast<const float*>(x.desc()->data->ptr);
  const float* wp = static_cast<const float*>(w.desc()->data->ptr);
  std::vector<float> cols_buf(size_t(B) * H * W * K * K * C), y(size_t(B) * H * W * O);
  ours = median_ms(3, [&] { ops::conv2d(x, w, {1, 1}, {1, 1}).eval(); });
  base = median_ms(3, [&] {
    for (int b = 0; b < B; ++b)
      for (int i = 0; i < H; ++i)
        for (int j = 0; j < W; ++j) {
          float* dst = &cols_buf[((size_t(b) * H + i) * W + j) * K * K * C];
          for (int ki = 0; ki < K; ++ki)
            for (int kj = 0; kj < K; ++kj, dst += C) {
              int si = i + ki - 1, sj = j + kj - 1;
              if (si < 0 || si >= H || sj < 0 || sj >= W) std::memset(dst, 0, C * 4);
              else std::memcpy(dst, xp + ((size_t(b) * H + si) * W + sj) * C, C * 4);
            }
        }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, B * H * W, O, K * K * C, 1.0f,
                cols_buf.data(), K * K * C, wp, K * K * C, 0.0f, y.data(), O);
  });
  row("conv2d 8x56x56x64, 3x3x64x64", ours, base);
  return 0;
}
