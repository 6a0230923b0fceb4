// Shared by the benchmarks: median timings and the table they print.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <thread>
#include <vector>

namespace nuvec::bench {

/// The median of `reps` timed runs of f, in milliseconds (after one warm-up).
inline double median_ms(int reps, const std::function<void()>& f) {
  std::vector<double> t;
  f();
  for (int i = 0; i < reps; ++i) {
    auto s = std::chrono::steady_clock::now();
    f();
    t.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - s).count());
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

/// GB/s of a streaming read of `bytes` (at least 64 MiB, so that it comes
/// from memory) by `threads` threads summing 64-bit words, best of 5: the
/// memory-bound baseline of a product that reads that many bytes.
inline double stream_read_gbs(double bytes, int threads = 2) {
  const size_t n = static_cast<size_t>(std::max(bytes, 64.0 * (1 << 20)) / 8);
  std::vector<uint64_t> buf(n, 1);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<uint64_t> sums(static_cast<size_t>(threads));
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> th;
    for (int t = 0; t < threads; ++t)
      th.emplace_back([&, t] {
        uint64_t a0 = 0, a1 = 0, a2 = 0, a3 = 0;
        const size_t b = n * t / threads, e = n * (t + 1) / threads;
        size_t i = b;
        for (; i + 4 <= e; i += 4) a0 += buf[i], a1 += buf[i + 1], a2 += buf[i + 2], a3 += buf[i + 3];
        for (; i < e; ++i) a0 += buf[i];
        sums[static_cast<size_t>(t)] = a0 + a1 + a2 + a3;
      });
    for (auto& x : th) x.join();
    const double dt = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    uint64_t total = 0;
    for (uint64_t v : sums) total += v;
    if (total == n) best = std::max(best, double(n) * 8.0 / dt / 1e9);
  }
  return best;
}

inline void header() {
  std::printf("| %-50s | %9s | %9s | %5s |\n", "benchmark", "nuvec ms", "base ms", "ratio");
  std::printf("|----------------------------------------------------|-----------|-----------|-------|\n");
}

/// One table row: nuvec's time, the baseline's, and their ratio.
inline void row(const char* name, double ours, double base) {
  std::printf("| %-50s | %9.3f | %9.3f | %5.2f |\n", name, ours, base, ours / base);
}

}  // namespace nuvec::bench
