// Random benchmarks against baselines measured in the same run: uniform of
// 2^24 float32 (bits, then MLX's divide / clamp / scale / shift nodes) vs a
// plain loop that runs the same Threefry rounds and writes the same floats
// in one pass on the same threads; and the raw bits vs the same loop writing
// the words. Prints a table of medians.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#include "core/thread_pool.h"
#include <nuvec/kernels/threefry.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"

using namespace nuvec;
using bench::median_ms;
using bench::row;

namespace {

// The plain loop: word j and j + n/2 from counter (j, j + n/2) (n even).
template <class Store>
void plain(long long n, kernels::U32Pair key, Store store) {
  long long half = n / 2;
  cpu::parallel_for(half, 1 << 13, [&](long long s, long long e) {
    for (long long j = s; j < e; ++j) {
      auto r = kernels::threefry2x32(key, {uint32_t(j), uint32_t(j + half)});
      store(j, r.x0);
      store(j + half, r.x1);
    }
  });
}

}  // namespace

int main() {
  const int n = 1 << 24;
  std::printf("threads: %d\n\n", cpu::num_threads());
  bench::header();
  Array k = random::key(7);
  std::vector<float> out(n);
  std::vector<uint32_t> words(n);
  const float below = std::nextafter(1.0f, 0.0f);
  double ours = median_ms(11, [&] { random::uniform({n}, float32, k).eval(); });
  double base = median_ms(11, [&] {
    plain(n, {0u, 7u}, [&](long long i, uint32_t w) {
      out[i] = std::min(static_cast<float>(w) / 4294967295.0f, below) * 1.0f + 0.0f;
    });
  });
  row("uniform float32 2^24", ours, base);
  // The loop computes the same values (checked once).
  bool same = random::uniform({n}, float32, k).to_vector<float>() == out;

  ours = median_ms(11, [&] { random::bits({n}, 4, k).eval(); });
  base = median_ms(11, [&] { plain(n, {0u, 7u}, [&](long long i, uint32_t w) { words[i] = w; }); });
  row("bits uint32 2^24", ours, base);
  std::printf("\nuniform equals the plain loop: %s\n", same ? "yes" : "NO");
  return same ? 0 : 1;
}
