// Prints the cost of allocating, touching and freeing a 64 MiB buffer through
// the nuvec allocator (cached and uncached) and through malloc/free, and the
// overhead of an empty parallel_for.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#include "core/allocator.h"
#include "core/thread_pool.h"
#include "nuvec/core/memory.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kBytes = size_t{64} << 20;
constexpr int kIters = 20;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void touch(void* p, size_t n) {
  auto* bytes = static_cast<volatile unsigned char*>(p);
  for (size_t i = 0; i < n; i += 4096) bytes[i] = 1;
}

// Times kIters rounds of alloc + touch + free; prints first, median, total.
void row(const char* name, const std::function<void*()>& alloc,
         const std::function<void(void*)>& release) {
  std::vector<double> t;
  for (int i = 0; i < kIters; ++i) {
    auto t0 = Clock::now();
    void* p = alloc();
    touch(p, kBytes);
    release(p);
    t.push_back(ms_since(t0));
  }
  double total = 0;
  for (double x : t) total += x;
  std::vector<double> rest(t.begin() + 1, t.end());
  std::sort(rest.begin(), rest.end());
  std::printf("| %-28s | %9.2f | %9.3f | %9.1f |\n", name, t[0],
              rest[rest.size() / 2], total);
}

void alloc_table() {
  std::printf("64 MiB buffer: allocate, touch every page, free; %d rounds\n\n",
              kIters);
  std::printf("| %-28s | %9s | %9s | %9s |\n", "allocator", "first ms",
              "median ms", "total ms");
  std::printf(
      "|------------------------------|-----------|-----------|"
      "-----------|\n");
  nuvec::allocator::Block held;
  auto a = [&] {
    held = nuvec::allocator::malloc(kBytes);
    return held.ptr;
  };
  auto f = [&](void*) { nuvec::allocator::free(held); };
  row("nuvec (cache)", a, f);
  nuvec::clear_cache();
  size_t prev = nuvec::set_cache_limit(0);
  row("nuvec (no cache, mmap+THP)", a, f);
  nuvec::set_cache_limit(prev);
  row(
      "malloc/free", [] { return std::malloc(kBytes); },
      [](void* p) { std::free(p); });
  std::printf("\n");
}

template <class Run>
double us_per_call(int calls, Run run) {
  for (int i = 0; i < calls / 10; ++i) run();  // warm up, start threads
  auto t0 = Clock::now();
  for (int i = 0; i < calls; ++i) run();
  return ms_since(t0) * 1000.0 / calls;
}

void pool_table() {
  using nuvec::cpu::parallel_for;
  std::printf("parallel_for overhead, empty body (%d threads)\n\n",
              nuvec::cpu::num_threads());
  std::printf("| %-36s | %9s |\n", "call", "us/call");
  std::printf("|--------------------------------------|-----------|\n");
  auto empty = [](long long, long long) {};
  std::function<void(long long, long long)> fn = empty;
  std::printf("| %-36s | %9.3f |\n", "n=1, grain=1 (inline)",
              us_per_call(200000, [&] { parallel_for(1, 1, empty); }));
  std::printf("| %-36s | %9.3f |\n", "n=2, grain=1 (lambda)",
              us_per_call(100000, [&] { parallel_for(2, 1, empty); }));
  std::printf("| %-36s | %9.3f |\n", "n=2, grain=1 (std::function)",
              us_per_call(100000, [&] { parallel_for(2, 1, fn); }));
  std::printf("| %-36s | %9.3f |\n", "n=64, grain=1",
              us_per_call(50000, [&] { parallel_for(64, 1, empty); }));
  // Work worth splitting: 2 blocks of ~20 us each.
  std::vector<float> x(1 << 16, 1.0f);
  float sink[2] = {};
  auto work = [&](long long b, long long e) {
    float s = 0;
    for (long long i = b * 32768; i < e * 32768; ++i) s += x[size_t(i)] * 1.5f;
    sink[b] = s;
  };
  double serial = us_per_call(5000, [&] {
    work(0, 1);
    work(1, 2);
  });
  double pooled = us_per_call(5000, [&] { parallel_for(2, 1, work); });
  std::printf("| %-36s | %9.3f |\n", "2 x 32768 float adds, serial", serial);
  std::printf("| %-36s | %9.3f |\n", "2 x 32768 float adds, parallel_for",
              pooled);
}

}  // namespace

int main() {
  alloc_table();
  pool_table();
  return 0;
}
