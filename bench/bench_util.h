// Shared by the benchmarks: median timings and the table they print.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
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

inline void header() {
  std::printf("| %-50s | %9s | %9s | %5s |\n", "benchmark", "nuvec ms", "base ms", "ratio");
  std::printf("|----------------------------------------------------|-----------|-----------|-------|\n");
}

/// One table row: nuvec's time, the baseline's, and their ratio.
inline void row(const char* name, double ours, double base) {
  std::printf("| %-50s | %9.3f | %9.3f | %5.2f |\n", name, ours, base, ours / base);
}

}  // namespace nuvec::bench
