// Values of one 16-bit input that compute a transcendental function run on
// the GPU as lookups in a table their own kernel wrote
// (src/backend/cuda/fused.cpp): the compiled result must equal the eager
// GPU kernels' bits for every input bit pattern, at any position, with a
// tail that is not a whole pack; calls the strided kernel runs
// (misaligned) compute instead.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "support/gpu.h"
#include "support/programs.h"
#include <nuvec/compile.h>

using namespace nuvec;
using namespace nuvec::testing;

namespace {

using Fn = std::function<Arrays(const Arrays&)>;

Array gelu_erf(const Array& x) { return x * 0.5f * (ops::erf(x * 0.70710678f) + 1.0f); }

Array gelu_tanh(const Array& x) {
  return x * 0.5f * (ops::tanh((x + x * x * x * 0.044715f) * 0.7978845608f) + 1.0f);
}

// n 16-bit values: every pattern at least once (n >= 65536), in a shuffled
// order, as `dt`.
Array all_patterns(long long n, DType dt, uint32_t seed) {
  std::vector<uint16_t> bits(static_cast<size_t>(n));
  for (size_t i = 0; i < bits.size(); ++i) bits[i] = static_cast<uint16_t>(i);
  std::shuffle(bits.begin(), bits.end(), std::mt19937(seed));
  return ops::view(array<uint16_t>(bits, {static_cast<int>(n)}), dt);
}

void expect_same(const Fn& f, const Array& x, bool table) {
  with_stream(Device::gpu, [&] {
    auto eager = f(Arrays{x});
    auto before = jit::stats();
    std::string why;
    EXPECT_TRUE(same_bits(eager, compile_flat(f)(Arrays{x}), why)) << why;
    auto after = jit::stats();
    EXPECT_EQ(after.gpu_table_runs > before.gpu_table_runs, table);
    EXPECT_GT(after.generated_runs, before.generated_runs);
  });
}

}  // namespace

TEST(GpuTable, LookupsEqualEager) {
  NUVEC_GPU_REQUIRED();
  const long long n = (1 << 18) + 37;  // a ragged tail
  struct Case {
    const char* name;
    DType in;
    Fn f;
  };
  std::vector<Case> cases = {
      {"gelu erf bf16", bfloat16, [](const Arrays& a) { return Arrays{gelu_erf(a[0])}; }},
      {"gelu tanh f16", float16, [](const Arrays& a) { return Arrays{gelu_tanh(a[0])}; }},
      {"sin/cos bf16", bfloat16,
       [](const Arrays& a) {
         return Arrays{ops::exp(ops::sin(a[0]) * 2.0f + ops::cos(a[0])) / (ops::abs(a[0]) + 1.0f)};
       }},
      {"int16 -> float16 log", int16,
       [](const Arrays& a) { return Arrays{ops::log(ops::abs(a[0].astype(float16)) + 1.0f)}; }},
      {"uint16 -> bool (1-byte table)", uint16,
       [](const Arrays& a) { return Arrays{ops::greater(ops::log(a[0].astype(float32) + 1.0f), 5.0f)}; }},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Array x = all_patterns(n, c.in, 7);
    expect_same(c.f, x, true);
    expect_same(c.f, x, true);  // the table built once, looked up again
    expect_same(c.f, all_patterns(70000, c.in, 8), true);      // another size
    expect_same(c.f, ops::slice(x, {1}, {n}), false);          // misaligned: strided, computed
  }
}

// In a region of several inputs or outputs, values of one 16-bit input
// that compute a transcendental function are looked up in tables their own
// kernels write (SwiGLU's silu(g)); any size, dense or strided.
TEST(GpuTable, PartialTablesEqualEager) {
  NUVEC_GPU_REQUIRED();
  auto silu = [](const Array& g) { return g * ops::sigmoid(g); };
  struct Case {
    const char* name;
    Fn f;
    bool table;
  };
  std::vector<Case> cases = {
      {"swiglu", [&](const Arrays& a) { return Arrays{silu(a[0]) * a[1]}; }, true},
      {"two outputs", [](const Arrays& a) { return Arrays{ops::exp(a[0]), ops::exp(a[0]) + 1.0f}; }, true},
      {"used inside and outside",
       [](const Arrays& a) {
         Array s = ops::sigmoid(a[0]);
         return Arrays{s * a[1] + s, ops::tanh(a[1]) * ops::erf(a[0])};
       },
       true},
      {"sqrt of a value of two inputs (Adam's)",
       [](const Arrays& a) {
         Array v = a[0] * a[0] * 0.001f + a[1] * 0.999f;
         return Arrays{a[1] - a[0] * 0.01f / (ops::sqrt(v) + 1e-8f), v};
       },
       true},
      {"no transcendental", [](const Arrays& a) { return Arrays{a[0] * a[0] + a[1]}; }, false},
      {"float32 value", [](const Arrays& a) { return Arrays{ops::exp(a[0].astype(float32)) * a[1]}; }, false},
  };
  for (long long n : {(1LL << 18) + 37, 1000LL}) {
    Array g = all_patterns(std::max(n, 65536LL), bfloat16, 11), u = all_patterns(std::max(n, 65536LL), bfloat16, 12);
    g = ops::slice(g, {0}, {static_cast<int>(n)});
    u = ops::slice(u, {0}, {static_cast<int>(n)});
    for (const auto& c : cases) {
      SCOPED_TRACE(std::string(c.name) + " n=" + std::to_string(n));
      with_stream(Device::gpu, [&] {
        auto eager = c.f({g, u});
        auto before = jit::stats();
        std::string why;
        EXPECT_TRUE(same_bits(eager, compile_flat(c.f)(Arrays{g, u}), why)) << why;
        EXPECT_EQ(jit::stats().gpu_table_runs > before.gpu_table_runs, c.table);
        Array gt = ops::transpose(ops::reshape(g, {1, static_cast<int>(n)}));
        Array ut = ops::transpose(ops::reshape(u, {1, static_cast<int>(n)}));
        EXPECT_TRUE(same_bits(c.f({gt, ut}), compile_flat(c.f)(Arrays{gt, ut}), why)) << why;
      });
    }
  }
}
