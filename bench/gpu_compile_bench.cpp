// compile on the GPU (run on the H200 by scripts/gpu.sh): the standard set
// of the compile issue at 2^26 elements in float32 and bfloat16, eager (one
// kernel per op) and compiled (one generated NVRTC kernel per region),
// as GB/s of the bytes each function must move (inputs read once, outputs
// written once) and as a share of the copy bandwidth measured in the same
// run; then the host time of a compiled call on 16 elements and the first
// call of a compiled function with an empty and a warm disk cache.
// tools/peer_gpu_bench.py measures PyTorch and JAX on the same functions.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <string>

#include <nuvec/compile.h>
#include <nuvec/nuvec.h>

#include "bench_util.h"
#include "compile/jit.h"
#ifdef NUVEC_BENCH_FLOOR
#include "launch_floor.h"
#endif
#include "standard_set.h"
#include "support/bits.h"

using namespace nuvec;
using bench::Fn;

namespace {

double ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
}

// The GPU's time per call once calls are issued back to back (async_eval,
// every result evaluated at the end; a result the background worker has
// not reached yet runs in eval): the time of 60 such calls less that of
// 20, over 40 (medians of 11). The first call's submission and the final
// wait, paid once per batch, cancel out, as they stay outside the CUDA
// events the peers' script times its calls with. (Until 2026-11-30 09:40
// this was the time of 20 calls over 20, about 1 us per call more at 2^26
// bfloat16; until 18:40, 40 less 20 over 20, medians of 7, which spread
// over 0.059-0.067 ms for bfloat16 x*x+1 in three runs on one machine.)
double back_to_back_ms(const std::function<Arrays()>& call) {
  auto batch = [&](int calls) {
    return bench::median_ms(11, [&] {
      Arrays all;
      for (int i = 0; i < calls; ++i) {
        Arrays out = call();
        async_eval(out);
        all.insert(all.end(), out.begin(), out.end());
      }
      nuvec::eval(all);
    });
  };
  return (batch(60) - batch(20)) / 40;
}

void eval_all(const Arrays& r) {
  for (const auto& a : r) a.eval();
}

// First calls: before anything else has used NVRTC in this process.
void first_calls() {
  char tmpl[] = "/tmp/nuvec-gpu-bench-XXXXXX";
  std::string dir = mkdtemp(tmpl);
  Array x = ops::copy(array({1.0f, 2.0f}), Device::gpu);
  x.eval();
  std::printf("first call of a new compiled function (trace, kernel, run; host ms):\n");
  for (const char* what : {"empty kernel cache (NVRTC runs)", "warm disk cache, memory cache dropped"}) {
    jit_detail::reset_for_tests(dir, "");
    auto f = compile_flat([](const Arrays& a) { return Arrays{ops::tanh(a[0] * 1.7f) + a[0] * 0.25f}; });
    auto t0 = std::chrono::steady_clock::now();
    with_stream(Device::gpu, [&] { f(Arrays{x})[0].eval(); });
    std::printf("  %-40s %8.1f\n", what, ms_since(t0));
  }
  jit_detail::reset_for_tests("", "");
  std::filesystem::remove_all(dir);
}

void standard_set(DType dt, long long n, const std::string& only) {
  Array src = ops::astype(ops::copy(random::uniform(0.1f, 2.0f, {static_cast<int>(n)}, float32, random::key(9)),
                                    Device::gpu), dt, Device::gpu);
  src.eval();
  const double mb = n * dt.size() / 1e6;
  double copy = bench::median_ms(21, [&] { ops::copy(src, Device::gpu).eval(); });
  double copy_b2b = back_to_back_ms([&] { return Arrays{ops::copy(src, Device::gpu)}; });
  std::printf("\n2^26 %s: copy %.3f ms = %.0f GB/s (read + write); back to back %.3f ms\n\n",
              std::string(dtype_name(dt)).c_str(), copy, 2 * mb / copy, copy_b2b);
  std::printf("| %-34s | %9s | %9s | %9s | %7s | %9s | %9s |\n", "function", "eager ms", "compiled", "GB/s",
              "% copy", "eager/cmp", "b2b ms");
  std::printf("|------------------------------------|-----------|-----------|-----------|---------|-----------|"
              "-----------|\n");
  for (const auto& c : bench::standard_set()) {
    if (std::string(c.name).find(only) == std::string::npos) continue;
    // The broadcast case at 2^26: [8192, 8192] with rows of 8192.
    Shape shape = c.shape.empty() ? Shape{static_cast<int>(n)} : Shape{8192, 8192};
    Shape side = c.side.empty() ? shape : Shape{8192};
    Arrays in;
    double bytes = 0;
    for (int j = 0; j < c.inputs; ++j) {
      Shape s = j > 0 ? side : shape;
      Array a = random::uniform(0.1f, 2.0f, s, float32, random::key(j));
      in.push_back(ops::astype(ops::copy(a, Device::gpu), dt, Device::gpu));
      in.back().eval();
      bytes += in.back().nbytes();
    }
    bytes += static_cast<double>(c.outputs) * n * dt.size();
    Arrays eager_out;
    double eager = bench::median_ms(11, [&] {
      with_stream(Device::gpu, [&] {
        eager_out = c.f(in);
        eval_all(eager_out);
      });
    });
    Fn compiled = compile_flat(c.f);
    Arrays out;
    double tc = bench::median_ms(21, [&] {
      with_stream(Device::gpu, [&] {
        out = compiled(in);
        eval_all(out);
      });
    });
    double b2b = 0;
    with_stream(Device::gpu, [&] { b2b = back_to_back_ms([&] { return out = compiled(in); }); });
    bool same = true;
    for (size_t k = 0; k < out.size(); ++k) same = same && testing::bits_of(out[k]) == testing::bits_of(eager_out[k]);
    double gbs = bytes / (tc * 1e6);
    std::string name = c.name;  // the set's label names the CPU benchmark's shape
    if (!c.shape.empty()) name = name.substr(0, name.find(" [")) + " [8192,8192]";
    std::printf("| %-34s | %9.3f | %9.3f | %9.0f | %6.1f%% | %9.2f | %9.3f |%s\n", name.c_str(), eager, tc, gbs,
                100 * gbs / (2 * mb / copy), eager / tc, b2b, same ? "" : " compiled differs from eager!");
  }
}

// Host time per call on 16 elements: waiting for each result; issuing
// calls back to back with async_eval (one wait at the end), and how long
// the issuing loop itself took (the rest is the background worker's
// launches and the GPU); building every call first and evaluating them all
// with one eval (this thread launches them: no hand-off).
void replay() {
  Array x = ops::copy(random::normal({16}, random::key(3)), Device::gpu);
  x.eval();
  auto f = [](const Arrays& a) { return Arrays{a[0] * a[0] + 1.0f}; };
  auto ten = [](const Arrays& a) {
    const Array& x = a[0];
    Array t = ops::exp(ops::sin(x) * 2.0f + ops::cos(x)) / (ops::abs(x) + 1.0f);
    return Arrays{ops::sigmoid(t * 3.0f - 1.0f)};
  };
  std::printf("\nhost time per call on 16 elements (us):\n");
  std::printf("| %-28s | %10s | %12s | %10s | %10s | %10s |\n", "function", "eval each", "back to back", "(issuing)",
              "one eval", "(building)");
  std::printf("|------------------------------|------------|--------------|------------|------------|------------|\n");
  const int calls = 2000;
  for (auto [name, fn] : {std::pair<const char*, Fn>{"x*x+1 eager", f}, {"x*x+1 compiled", compile_flat(f)},
                          {"10-op eager", ten}, {"10-op compiled", compile_flat(ten)}}) {
    auto g = fn;
    with_stream(Device::gpu, [&] {
      double each = bench::median_ms(5, [&] {
        for (int i = 0; i < calls; ++i) g(Arrays{x})[0].eval();
      }) * 1e3 / calls;
      std::vector<double> issuing;
      double b2b = bench::median_ms(5, [&] {
        Arrays all;  // every result evaluated at the end (see standard_set)
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < calls; ++i) {
          all.push_back(g(Arrays{x})[0]);
          async_eval({all.back()});
        }
        issuing.push_back(ms_since(t0));
        nuvec::eval(all);
      }) * 1e3 / calls;
      std::sort(issuing.begin(), issuing.end());
      double one = bench::median_ms(5, [&] {
        Arrays all;
        for (int i = 0; i < calls; ++i) all.push_back(g(Arrays{x})[0]);
        nuvec::eval(all);
      }) * 1e3 / calls;
      // The calls alone: graphs built, nothing evaluated.
      double building = 0;
      {
        Arrays all;
        all.reserve(calls);
        building = bench::median_ms(5, [&] {
          all.clear();
          for (int i = 0; i < calls; ++i) all.push_back(g(Arrays{x})[0]);
        }) * 1e3 / calls;
      }
      std::printf("| %-28s | %10.2f | %12.2f | %10.2f | %10.2f | %10.2f |\n", name, each, b2b,
                  issuing[issuing.size() / 2] * 1e3 / calls, one, building);
    });
  }
#ifdef NUVEC_BENCH_FLOOR
  std::printf("\nthe CUDA runtime alone, one 16-element kernel (us per call, same machine):\n");
  for (const FloorRow& r : launch_floor()) std::printf("  %-50s %6.2f\n", r.what, r.us);
#endif
}

// An optimizer step on a small model: the standard set's Adam update over
// 32 parameters (16 of [256, 256], 16 of [256]), float32, one compiled
// function of all of them (128 inputs, 96 outputs) against the same ops
// eager. Host time per step (us): waiting for each step, and steps issued
// back to back (each step's state feeds the next; async_eval, one wait at
// the end); and the generated kernels a compiled step runs. One launch per
// parameter is what a whole-step CUDA graph or horizontal fusion would cut
// (docs/gpu-status.md); tools/peer_gpu_bench.py --step measures PyTorch on
// the same step.
void step(const std::string& only) {
  constexpr int kParams = 32;
  const Fn fn = bench::adam_step(kParams);  // state [p..., m..., v...]; the gradients stay fixed
  Arrays state, grads;
  for (int j = 0; j < 4 * kParams; ++j) {
    Shape s = j % 2 ? Shape{256} : Shape{256, 256};
    Array a = ops::copy(random::uniform(0.1f, 2.0f, s, float32, random::key(100 + j)), Device::gpu);
    a.eval();
    (j < 3 * kParams ? state : grads).push_back(a);
  }
  std::printf("\nAdam over %d parameters (16 of [256,256], 16 of [256]), float32, host time per step (us):\n",
              kParams);
  std::printf("| %-12s | %10s | %12s | %14s |\n", "step", "eval each", "back to back", "kernels a step");
  std::printf("|--------------|------------|--------------|----------------|\n");
  const int steps = only.empty() ? 200 : 2000;
  for (auto [name, f] : {std::pair<const char*, Fn>{"eager", fn}, {"compiled", compile_flat(fn)}}) {
    if (!only.empty() && std::string(name) == "eager") continue;
    auto g = f;
    with_stream(Device::gpu, [&] {
      auto run = [&](bool each) {
        Arrays s = state;
        for (int i = 0; i < steps; ++i) {
          Arrays in = s;
          in.insert(in.end(), grads.begin(), grads.end());
          s = g(in);
          if (each) {
            nuvec::eval(s);
          } else {
            async_eval(s);
          }
        }
        nuvec::eval(s);
      };
      const auto before = jit::stats().generated_runs;
      run(true);  // also builds the trace and the kernels
      const double kernels = static_cast<double>(jit::stats().generated_runs - before) / steps;
      double each = only == "b2b" ? 0 : bench::median_ms(5, [&] { run(true); }) * 1e3 / steps;
      double b2b = only == "each" ? 0 : bench::median_ms(5, [&] { run(false); }) * 1e3 / steps;
      std::printf("| %-12s | %10.1f | %12.1f | %14.1f |\n", name, each, b2b, kernels);
    });
  }
}

}  // namespace

// `gpu_compile_bench first` measures the first calls only (run it in a
// few fresh processes: the first in a machine's life also reads NVRTC's
// libraries from disk); `gpu_compile_bench replay` the 16-element calls
// only; `gpu_compile_bench set NAME [DTYPE]` the functions of the
// standard set whose names contain NAME (for a profiler); `gpu_compile_bench
// step [each|b2b]` the optimizer step over 32 parameters (with an
// argument: the compiled step alone, one way, longer, for a profiler).
int main(int argc, char** argv) {
  if (!is_available(Device::gpu)) {
    std::printf("no GPU: nothing to measure\n");
    return 0;
  }
  jit::set_mode(jit::Mode::sync);
  std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "replay") {
    replay();
    return 0;
  }
  if (mode == "step") {
    step(argc > 2 ? argv[2] : "");
    return 0;
  }
  if (mode != "set") first_calls();
  if (mode == "first") return 0;
  std::string only = mode == "set" && argc > 2 ? argv[2] : "";
  for (DType dt : {float32, bfloat16})
    if (mode != "set" || argc < 4 || dtype_name(dt) == argv[3]) standard_set(dt, 1 << 26, only);
  if (mode != "set") {
    replay();
    step("");
  }
}
