// Sort and scan benchmarks, each against a hand loop in the same run:
// sort of 2^22 float32 vs std::sort (one thread, the hand baseline) and
// std::stable_sort, and cumsum of 2^24 float32 vs a sequential prefix sum.
// Prints a table of medians.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <vector>

#include "core/thread_pool.h"
#include <nuvec/core/graph.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;
using bench::median_ms;
using bench::row;

int main() {
  std::printf("threads: %d\n\n", cpu::num_threads());
  bench::header();
  const int ns = 1 << 22;
  std::vector<float> data(ns);
  std::mt19937 gen(42);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (float& v : data) v = dist(gen);
  Array x = array<float>(data.data(), {ns});
  x.eval();
  std::vector<float> work(ns);
  double ours = median_ms(7, [&] { ops::sort(x, 0).eval(); });
  double base = median_ms(7, [&] {
    work = data;
    std::sort(work.begin(), work.end());
  });
  row("sort float32 2^22 vs std::sort", ours, base);
  double stable = median_ms(7, [&] {
    work = data;
    std::stable_sort(work.begin(), work.end());
  });
  row("sort float32 2^22 vs std::stable_sort", ours, stable);
  ours = median_ms(7, [&] { ops::argsort(x, 0).eval(); });
  row("argsort float32 2^22 vs std::sort", ours, base);

  const int nc = 1 << 24;
  std::vector<float> cdata(nc);
  for (float& v : cdata) v = dist(gen);
  Array c = array<float>(cdata.data(), {nc});
  c.eval();
  std::vector<float> out(nc);
  ours = median_ms(9, [&] { ops::cumsum(c, 0).eval(); });
  base = median_ms(9, [&] {
    float acc = 0;
    for (int i = 0; i < nc; ++i) out[i] = acc += cdata[i];
  });
  row("cumsum float32 2^24 vs prefix loop", ours, base);
  Array c2 = ops::reshape(c, {4096, 4096});
  ours = median_ms(9, [&] { ops::cumsum(c2, 0).eval(); });
  row("cumsum axis 0 of 4096x4096 vs loop", ours, base);
  return 0;
}
