// compile's first calls and compile time (docs/compile.md, "Modes" and
// "Fusion"; figures in docs/performance.md):
//
//   first: a dozen calls of a function at 2^22 float32 right after
//     compiling it with an empty kernel cache (the compiler runs in the
//     background, at SCHED_IDLE, while the interpreter runs the calls),
//     against the same calls uncompiled (eager), compiled with NUVEC_JIT=sync
//     semantics (the first call waits for the compiler), with the
//     interpreter only (off), and once the kernel is built (warm).
//   chain: the first call of compile on n steps of y = y + c (trace,
//     simplification, fusion, replay and the run: regions this long keep
//     the interpreter) against the same steps uncompiled.
//
// `compile_first_calls_bench [first|chain]` runs one table (both by default).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

#include "compile/jit.h"
#include "core/thread_pool.h"

using namespace nuvec;

namespace {

using Fn = std::function<Arrays(const Arrays&)>;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// `calls` evaluated calls of f on x: the total in milliseconds.
double run_calls(const Fn& f, const Arrays& x, int calls) {
  auto t = Clock::now();
  for (int i = 0; i < calls; ++i) f(x)[0].eval();
  return ms_since(t);
}

// A fresh, empty kernel cache (so the compiler runs) for one round.
struct ColdCache {
  ColdCache() {
    char tmpl[] = "/tmp/nuvec-bench-first-XXXXXX";
    dir = mkdtemp(tmpl);
    jit_detail::reset_for_tests(dir, "");
  }
  ~ColdCache() {
    jit::wait();
    jit_detail::reset_for_tests("", "");
    std::filesystem::remove_all(dir);
  }
  std::string dir;
};

void first_calls() {
  const int n = 1 << 22, calls = 12, rounds = 3;
  struct Case {
    const char* name;
    Fn f;
  };
  std::vector<Case> cases{
      {"10-op arithmetic chain",
       [](const Arrays& a) {
         const Array& x = a[0];
         Array y = (x * 1.5f + 0.25f) * x - 0.75f;
         y = (y * y + x) * 0.5f - x;
         return Arrays{(y * 0.125f + 1.0f) / (x + 2.0f)};
       }},
      {"10-op function (sin, cos, exp, sigmoid)",
       [](const Arrays& a) {
         const Array& x = a[0];
         Array t = ops::exp(ops::sin(x) * 2.0f + ops::cos(x)) / (ops::abs(x) + 1.0f);
         return Arrays{ops::sigmoid(t * 3.0f - 1.0f)};
       }},
  };
  Arrays x{random::uniform(0.1f, 2.0f, {n}, float32, random::key(1))};
  x[0].eval();
  std::printf("threads: %d; %d calls at 2^22 float32, each evaluated; ms for all %d (median of %d "
              "rounds; compiled rounds start with an empty kernel cache)\n\n",
              cpu::num_threads(), calls, calls, rounds);
  std::printf("| %-40s | %8s | %8s | %8s | %8s | %8s | %11s | %11s |\n", "function", "eager",
              "async", "sync", "interp", "warm", "eager/async", "eager/warm");
  std::printf("|------------------------------------------|----------|----------|----------|"
              "----------|----------|-------------|-------------|\n");
  for (const auto& c : cases) {
    std::vector<double> eager, async, sync, interp, warm;
    std::vector<double> first_async;  // per call, the last round
    for (int r = 0; r < rounds; ++r) {
      eager.push_back(run_calls(c.f, x, calls));
      {
        ColdCache cold;
        jit::set_mode(jit::Mode::async);
        auto f = compile_flat(c.f);
        first_async.clear();
        auto t = Clock::now();
        for (int i = 0; i < calls; ++i) {
          auto ti = Clock::now();
          f(x)[0].eval();
          first_async.push_back(ms_since(ti));
        }
        async.push_back(ms_since(t));
        f.wait_for_kernels();
        warm.push_back(run_calls(f, x, calls));
      }
      {
        ColdCache cold;
        jit::set_mode(jit::Mode::sync);
        sync.push_back(run_calls(compile_flat(c.f), x, calls));
      }
      jit::set_mode(jit::Mode::off);
      interp.push_back(run_calls(compile_flat(c.f), x, calls));
      jit::set_mode(jit::Mode::async);
    }
    double e = median(eager), a = median(async), w = median(warm);
    std::printf("| %-40s | %8.1f | %8.1f | %8.1f | %8.1f | %8.1f | %11.2f | %11.2f |\n", c.name, e, a,
                median(sync), median(interp), w, e / a, e / w);
    std::printf("|   async, each call of the last round     |");
    for (double t : first_async) std::printf(" %.1f", t);
    std::printf(" |\n");
  }
}

void chain_compile_time() {
  std::printf("\ncompile of n steps y = y + c on 1024 float32 (first call: trace, simplify, fuse, "
              "replay, run), ms, median of 3\n\n");
  std::printf("| %6s | %14s | %14s | %14s | %14s |\n", "n", "c = 0.5f", "eager", "c captured",
              "eager");
  std::printf("|--------|----------------|----------------|----------------|----------------|\n");
  Array x = random::normal({1024}, random::key(2));
  Array c = random::normal({1024}, random::key(3));
  x.eval();
  c.eval();
  for (int n : {5000, 10000, 20000, 40000}) {
    auto literal = [n](const Array& v) {
      Array y = v;
      for (int i = 0; i < n; ++i) y = y + 0.5f;
      return y;
    };
    auto captured = [n, c](const Array& v) {
      Array y = v;
      for (int i = 0; i < n; ++i) y = y + c;
      return y;
    };
    auto first = [&](auto body) {
      std::vector<double> t;
      for (int r = 0; r < 3; ++r) {
        auto f = compile(body);
        auto s = Clock::now();
        f(x).eval();
        t.push_back(ms_since(s));
      }
      return median(t);
    };
    auto eager = [&](auto body) {
      std::vector<double> t;
      for (int r = 0; r < 3; ++r) {
        auto s = Clock::now();
        body(x).eval();
        t.push_back(ms_since(s));
      }
      return median(t);
    };
    std::printf("| %6d | %14.1f | %14.1f | %14.1f | %14.1f |\n", n, first(literal), eager(literal),
                first(captured), eager(captured));
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string what = argc > 1 ? argv[1] : "";
  if (what.empty() || what == "first") first_calls();
  if (what.empty() || what == "chain") chain_compile_time();
}
