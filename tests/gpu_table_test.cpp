// Fused regions of one 16-bit input run on the GPU as lookups in a table
// their own kernel wrote (src/backend/cuda/fused.cpp, table.cu): the
// compiled result must equal the eager GPU kernels' bits for every input
// bit pattern, at any position, with a tail that is not a whole pack; calls
// too small, misaligned or with a broadcast input compute instead.
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
  const long long n = (1 << 18) + 37;  // above the threshold, a ragged tail
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
    expect_same(c.f, all_patterns(70000, c.in, 8), false);     // small: computed
    expect_same(c.f, ops::slice(x, {1}, {n}), false);          // misaligned: computed
  }
}

// Two inputs, or a second output, or no transcendental function: no table.
TEST(GpuTable, OnlyRegionsOfOneSixteenBitInputAndOneOutput) {
  NUVEC_GPU_REQUIRED();
  const long long n = 1 << 18;
  Array x = all_patterns(n, bfloat16, 9), y = all_patterns(n, bfloat16, 10);
  with_stream(Device::gpu, [&] {
    auto before = jit::stats().gpu_table_runs;
    std::string why;
    Fn two_inputs = [](const Arrays& a) { return Arrays{ops::exp(a[0]) * a[1]}; };
    EXPECT_TRUE(same_bits(two_inputs({x, y}), compile_flat(two_inputs)(Arrays{x, y}), why)) << why;
    Fn two_outputs = [](const Arrays& a) { return Arrays{ops::exp(a[0]), ops::exp(a[0]) + 1.0f}; };
    EXPECT_TRUE(same_bits(two_outputs({x}), compile_flat(two_outputs)(Arrays{x}), why)) << why;
    Fn cheap = [](const Arrays& a) { return Arrays{a[0] * a[0] + 1.0f}; };
    EXPECT_TRUE(same_bits(cheap({x}), compile_flat(cheap)(Arrays{x}), why)) << why;
    Fn wide = [](const Arrays& a) { return Arrays{ops::exp(a[0].astype(float32))}; };
    EXPECT_TRUE(same_bits(wide({x}), compile_flat(wide)(Arrays{x}), why)) << why;
    EXPECT_EQ(jit::stats().gpu_table_runs, before);
  });
}
