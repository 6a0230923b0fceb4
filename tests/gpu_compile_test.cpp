// compile on the GPU: fused regions become CUDA kernels built with NVRTC
// (src/compile/jit_cuda.cpp, src/backend/cuda/fused.cpp). Generated
// sources are compiled here even without a GPU (NVRTC needs none); on the
// H200 (scripts/gpu.sh) compiled functions give the unfused GPU kernels'
// bits, through generated kernels and op by op, and kernels come from the
// disk cache in a later load.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <limits>
#include <random>

#include "backend/backend.h"
#include "compile/emit_cpp.h"
#include "compile/jit.h"
#include "support/programs.h"
#include <nuvec/compile.h>
#include <nuvec/kernels/fastdiv.h>

using namespace nuvec;
using namespace nuvec::testing;

namespace {

bool built_with_cuda() {
  std::string bin;
  return backend::gpu_compile("", "sm_90", bin) != "nuvec was built without CUDA";
}

// Compiled on the GPU (generated kernels, or op by op with jit off) equals
// the eager GPU kernels bit for bit.
void gpu_cases(uint32_t seed, int count, jit::Mode mode, bool reductions = false) {
  jit::Mode saved = jit::mode();
  jit::set_mode(mode);
  Batch b = batch(seed, count, 2000, reductions);
  SCOPED_TRACE("seed " + std::to_string(seed) + b.text);
  with_stream(Device::gpu, [&] {
    auto eager = b.f()(b.inputs);
    auto before = jit::stats();
    std::string why;
    EXPECT_TRUE(same_bits(eager, compile_flat(b.f())(b.inputs), why)) << why;
    EXPECT_TRUE(same_bits(eager, compile_flat_with({.shapeless = true}, b.f())(b.inputs), why)) << why;
    auto after = jit::stats();
    EXPECT_EQ(after.gpu_failures, before.gpu_failures);
    if (mode == jit::Mode::off) EXPECT_GT(after.interpreted_runs, before.interpreted_runs);
    else EXPECT_GT(after.generated_runs, before.generated_runs);
  });
  jit::set_mode(saved);
}

// The CUDA program of the trace's fused regions in variant v; `regions`
// counts them.
std::string emitted_program(const compiler::Graph& g, compiler::CudaVariant v, int& regions) {
  std::string program;
  regions = 0;
  for (const auto& s : g.steps) {
    if (s.primitive->id() != PrimitiveId::Fused) continue;
    program += compiler::emit_cuda_kernel(compiler::gpu_region(s), regions++, v);
  }
  return program;
}

}  // namespace

// The emitted CUDA of random regions compiles with NVRTC (no GPU needed),
// as two programs, as compile makes per trace (contiguous kernels, strided
// kernels).
TEST(GpuCompile, GeneratedSourcesCompileWithNvrtc) {
  if (!built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  Batch b = batch(7, 12, 2000);
  auto g = compiler::trace(b.inputs, false, [&](const Arrays& ph) { return b.f()(ph); });
  for (auto v : {compiler::CudaVariant::contig, compiler::CudaVariant::strided}) {
    int regions = 0;
    std::string program = emitted_program(g, v, regions);
    EXPECT_GT(regions, 6);
    std::string source = compiler::cuda_program(program);
    std::string binary;
    std::string error = backend::gpu_compile(source, "sm_90", binary);
    EXPECT_EQ(error, "") << b.text;
    EXPECT_GT(binary.size(), 1000u);
    // A compile error is reported with NVRTC's log.
    error = backend::gpu_compile(source + "\nint broken(", "sm_90", binary);
    EXPECT_NE(error.find("NVRTC"), std::string::npos) << error;
  }
}

TEST(GpuCompile, GeneratedKernelsEqualEager) {
  NUVEC_GPU_REQUIRED();
  for (uint32_t s : {21u, 22u}) gpu_cases(s, 12, jit::Mode::sync);
  gpu_cases(daily_seed() * 5 + 2, 12, jit::Mode::sync);
}

TEST(GpuCompile, OpByOpEqualsEager) {
  NUVEC_GPU_REQUIRED();
  gpu_cases(31, 12, jit::Mode::off);
}

// With reductions over trailing axes among the steps: row regions
// (FusedReduce) through their generated row kernels and member by member.
TEST(GpuCompile, RowRegionsEqualEager) {
  NUVEC_GPU_REQUIRED();
  for (uint32_t s : {41u, 42u, 43u}) gpu_cases(s, 12, jit::Mode::sync, true);
  gpu_cases(daily_seed() * 7 + 3, 12, jit::Mode::sync, true);
  gpu_cases(44, 12, jit::Mode::off, true);
}

// The layouts the launcher chooses between: dense, a runtime single value
// (contiguous kernel), transposed and a misaligned slice (strided kernel),
// several outputs; large enough for many blocks.
TEST(GpuCompile, LayoutsAndOutputs) {
  NUVEC_GPU_REQUIRED();
  auto f = [](const Arrays& a) {
    Array t = ops::multiply(a[0], a[1]);
    Array u = ops::exp(ops::subtract(t, a[2]));
    return Arrays{ops::add(u, 1.0f), t, ops::astype(ops::greater(u, a[1]), int32)};
  };
  Array x = random::normal({300, 517}, random::key(1));
  Array lr = array(0.25f);
  Array big = random::normal({301, 520}, random::key(2));
  std::vector<Arrays> cases = {
      {x, x, lr},
      {x, lr, ops::transpose(random::normal({517, 300}, random::key(3)))},
      {ops::slice(big, {1, 3}, {301, 520}), x, lr},
      {random::normal({517}, random::key(4)), x, lr},
  };
  for (const auto& in : cases)
    with_stream(Device::gpu, [&] {
      auto eager = f(in);
      auto before = jit::stats().generated_runs;
      std::string why;
      EXPECT_TRUE(same_bits(eager, compile_flat(f)(in), why)) << why;
      EXPECT_GT(jit::stats().generated_runs, before);
    });
}

// Calls on small arrays launch their kernels through CUDA graphs of one
// node whose parameters each launch updates: many calls issued back to
// back on two streams, each on its own input, a result that is 0-d, of 16
// elements or of one block's worth, each equal to the eager result.
TEST(GpuCompile, SmallCallsLaunchThroughGraphs) {
  NUVEC_GPU_REQUIRED();
  auto f = [](const Arrays& a) { return Arrays{a[0] * a[0] + 1.0f, ops::exp(a[0]) - a[0]}; };
  auto compiled = compile_flat(f);
  Stream streams[] = {new_stream(Device::gpu), new_stream(Device::gpu)};
  std::vector<Arrays> ins, outs;
  for (int i = 0; i < 300; ++i) {
    Shape shape = i % 3 == 0 ? Shape{} : i % 3 == 1 ? Shape{16} : Shape{1000};
    ins.push_back({ops::copy(random::normal(shape, random::key(100 + i)), Device::gpu)});
  }
  for (const auto& in : ins) nuvec::eval(in);
  auto before = jit::stats().gpu_graph_launches;
  for (size_t i = 0; i < ins.size(); ++i)
    with_stream(streams[i % 2], [&] {
      outs.push_back(compiled(ins[i]));
      async_eval(outs.back());
    });
  for (size_t i = 0; i < ins.size(); ++i)
    with_stream(Device::gpu, [&] {
      std::string why;
      EXPECT_TRUE(same_bits(f(ins[i]), outs[i], why)) << i << ": " << why;
    });
  const char* mode = std::getenv("NUVEC_GPU_GRAPHS");
  if (!(mode && std::string(mode) == "0")) EXPECT_GE(jit::stats().gpu_graph_launches - before, 300u);
}

// Generated kernels of small grids are held back on their stream and
// launched together as one graph of a chain of nodes (cuda/module.h's
// defer_module_kernel). An optimizer step over 12 parameters of several
// shapes (one kernel each) runs 30 times, each step fed the last one's
// values, with work between steps that must see the held kernels' results
// or must not overtake them: steps left unevaluated (two steps' kernels in
// one eval, more than one batch), a second stream, gradients uploaded from
// the host, reductions, host reads. Every value equals the same steps done
// eagerly on the CPU, bit for bit.
TEST(GpuCompile, HeldLaunchesKeepTheirOrder) {
  NUVEC_GPU_REQUIRED();
  constexpr int K = 12;
  auto step = [](const Arrays& a) {  // [p..., m..., v..., g...] -> [p..., m..., v...]
    Arrays out(3 * K);
    for (int k = 0; k < K; ++k) {
      const Array &p = a[k], &m = a[K + k], &v = a[2 * K + k], &g = a[3 * K + k];
      out[K + k] = m * 0.9f + g * 0.1f;
      out[2 * K + k] = v * 0.999f + g * g * 0.001f;
      out[k] = p - out[K + k] * 1e-3f / (ops::sqrt(out[2 * K + k]) + 1e-8f);
    }
    return out;
  };
  auto compiled = compile_flat(step);
  const Shape shapes[K] = {{}, {3}, {16}, {64}, {1000}, {33, 7}, {4, 256}, {1}, {257}, {8, 8}, {5000}, {2, 3, 4}};
  auto values = [&](int j, int seed) {
    Array a = random::uniform(0.1f, 2.0f, shapes[j % K], float32, random::key(seed));
    a.eval();
    return a;
  };
  Arrays cpu, gpu;
  for (int j = 0; j < 4 * K; ++j) {
    cpu.push_back(values(j, 300 + j));
    gpu.push_back(ops::copy(cpu.back(), Device::gpu));
  }
  nuvec::eval(gpu);
  Stream other = new_stream(Device::gpu);
  const auto graphs_before = jit::stats().gpu_graph_launches;
  std::vector<std::pair<Array, Array>> sums;  // (the CPU's values, their sum on the GPU)
  for (int i = 0; i < 30; ++i) {
    Arrays next_cpu, next_gpu;
    with_stream(Device::cpu, [&] { next_cpu = step(cpu); });
    with_stream(i % 3 == 2 ? other : default_stream(Device::gpu), [&] { next_gpu = compiled(gpu); });
    std::copy(next_cpu.begin(), next_cpu.end(), cpu.begin());
    std::copy(next_gpu.begin(), next_gpu.end(), gpu.begin());
    if (i % 2 == 0) async_eval(next_gpu);  // odd steps: built on unevaluated values
    if (i % 5 == 1) {                       // new gradients from the host
      for (int k = 0; k < K; ++k) cpu[3 * K + k] = gpu[3 * K + k] = values(k, 1000 + 31 * i + k);
    }
    if (i % 7 == 3) {  // a reduction (not held) on the stream after the step
      sums.emplace_back(cpu[4], ops::sum(gpu[4], false, Device::gpu));
      async_eval({sums.back().second});
    }
    if (i % 4 == 0) {  // a host read of one value
      const int k = i % (3 * K);
      EXPECT_EQ(bits_of(cpu[k]), bits_of(gpu[k])) << "step " << i << ", value " << k;
    }
  }
  for (int j = 0; j < 3 * K; ++j) EXPECT_EQ(bits_of(cpu[j]), bits_of(gpu[j])) << "value " << j;
  // The same reduction of the same values on the GPU (not the CPU's sum:
  // reductions may differ between the backends in their last bits).
  for (const auto& [c, g] : sums)
    EXPECT_EQ(bits_of(ops::sum(ops::copy(c, Device::gpu), false, Device::gpu)), bits_of(g));
  const char* mode = std::getenv("NUVEC_GPU_GRAPHS");
  if (!(mode && std::string(mode) == "0")) EXPECT_GE(jit::stats().gpu_graph_launches - graphs_before, 30u * K);
}

// kernels::fast_div / fast_quotient (the generated kernels' i % len for
// rows repeated over leading axes) equal integer division for every x
// below 2^31: all divisors up to 3000 and powers of two, neighbours of
// powers of two and random ones up to 2^31 - 1, against x at 0, around
// every multiple boundary tried, the top of the range and random values.
TEST(GpuCompile, FastDivisionEqualsDivision) {
  std::mt19937 rng(7);
  std::vector<uint32_t> divisors;
  for (uint32_t d = 2; d <= 3000; ++d) divisors.push_back(d);
  for (int k = 1; k < 31; ++k)
    for (int64_t e : {-1, 0, 1}) divisors.push_back(static_cast<uint32_t>((int64_t(1) << k) + e));
  for (int i = 0; i < 2000; ++i) divisors.push_back(2 + rng() % 0x7ffffffdu);
  divisors.push_back(0x7fffffffu);
  long bad = 0;
  for (uint32_t d : divisors) {
    if (d < 2) continue;
    kernels::FastDiv f = kernels::fast_div(d);
    auto check = [&](uint64_t x) {
      if (x >= 0x80000000u) return;
      uint32_t xi = static_cast<uint32_t>(x);
      bad += kernels::fast_quotient(xi, f) != xi / d;
    };
    for (uint64_t x : {uint64_t(0), uint64_t(1), uint64_t(d) - 1, uint64_t(d), uint64_t(d) + 1,
                       uint64_t(0x7fffffffu), uint64_t(0x7ffffffeu)})
      check(x);
    for (uint64_t q : {uint64_t(1), uint64_t(0x7fffffffu) / d, uint64_t(0x7fffffffu) / d / 2 + 1})
      for (int64_t e : {-1, 0, 1}) check(q * d + static_cast<uint64_t>(e + 1) - 1);
    for (int i = 0; i < 64; ++i) check(rng() & 0x7fffffffu);
  }
  EXPECT_EQ(bad, 0);
}

// float32 division in the contiguous kernel's packs: Small<Divide>'s steps
// where both operands are in [2^-60, 2^60) in magnitude, `x / y` for a pack
// with any other operand. Compiled equals eager bit for bit over operands
// of random signs, significands and exponents from 2^-75 to 2^75 (inside,
// outside and at the bounds of the fast range), with zeros, subnormals,
// infinities and NaNs sprinkled so that most packs stay fast; the quotient
// of normal operands inside the range is never subnormal or infinite. The
// same operands in bfloat16 (the reciprocal path of gpu_bfloat_div and
// quotients past both of its bounds) and float16 too.
TEST(GpuCompile, PackDivisionEqualsDivision) {
  auto f = [](const Arrays& a) { return Arrays{a[0] / a[1], (a[0] + 1.0f) / (a[1] * a[1])}; };
  Array probe = ops::zeros({4}, float32);
  auto g = compiler::trace({probe, probe}, false, [&](const Arrays& ph) { return f(ph); });
  int regions = 0;
  std::string program = emitted_program(g, compiler::CudaVariant::contig, regions);
  EXPECT_NE(program.find("Small<Divide>{}("), std::string::npos) << program;
  if (built_with_cuda()) {
    std::string binary;
    EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary), "");
  }
  NUVEC_GPU_REQUIRED();
  std::mt19937 rng(11);
  const size_t n = 1 << 20;
  std::vector<float> x(n), y(n);
  auto draw = [&] {
    float m = std::ldexp(1.0f + static_cast<float>(rng() & 0x7fffff) * 0x1.0p-23f, static_cast<int>(rng() % 151) - 75);
    return rng() & 1 ? -m : m;
  };
  for (size_t i = 0; i < n; ++i) x[i] = draw(), y[i] = draw();
  const float inf = std::numeric_limits<float>::infinity();
  const float special[] = {0.0f, -0.0f, 1e-40f, -0x1.0p-149f, inf, -inf, std::numeric_limits<float>::quiet_NaN(),
                           0x1.0p60f, -0x1.fffffep59f, 0x1.0p-60f, -0x1.fffffep-61f, 0x1.fffffep127f};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; ++k)
    for (size_t i = k * 4099; i < n; i += 65537) (i % 2 ? x : y)[i] = special[(k + i) % 12];
  for (DType dt : {float32, bfloat16, float16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Array a = array<float>(x, {1024, 1024}).astype(dt), b = array<float>(y, {1024, 1024}).astype(dt);
    with_stream(Device::gpu, [&] {
      auto eager = f(Arrays{a, b});
      std::string why;
      EXPECT_TRUE(same_bits(eager, compile_flat(f)(Arrays{a, b}), why)) << why;
    });
  }
}

// Regions with 16-bit float arithmetic compute their packs a pair of
// adjacent elements at a time (kernels/pairs.h): +, -, * as paired
// instructions, maximum and minimum as paired comparisons and a blend,
// other functors on each half. Compiled equals eager bit for bit for every
// pair of float16 and bfloat16 operands (NaNs with payloads, signed zeros,
// infinities, subnormals), with a literal on either side too.
TEST(GpuCompile, PairedHalfOperationsEqualTheScalarOnes) {
  auto f = [](const Arrays& a) {
    return Arrays{a[0] + a[1], a[0] - a[1], a[0] * a[1], ops::maximum(a[0], a[1]), ops::minimum(a[0], a[1]),
                  ops::maximum(ops::minimum(0.0f, a[0]) * 3.0f, a[1] * 0.5f), ops::greater(a[0], a[1])};
  };
  for (DType dt : {bfloat16, float16}) {
    Array probe = ops::zeros({4}, dt);
    auto g = compiler::trace({probe, probe}, false, [&](const Arrays& ph) { return f(ph); });
    int regions = 0;
    std::string program = emitted_program(g, compiler::CudaVariant::contig, regions);
    EXPECT_NE(program.find("pair_call(Maximum{}, v"), std::string::npos) << program;
    EXPECT_NE(program.find(std::string("NvPack<Two<") + compiler::cpp_type(dt) + ">, E>"), std::string::npos)
        << program;
    if (built_with_cuda()) {
      std::string binary;
      EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary), "");
    }
  }
  NUVEC_GPU_REQUIRED();
  const int rows = 4096;  // operand pairs per step: rows * 65536
  for (DType dt : {bfloat16, float16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    with_stream(Device::gpu, [&] {
      Array all = ops::view(ops::arange(0.0, 65536.0, 1.0, uint16), dt);
      Array y = ops::copy(ops::broadcast_to(all.reshape({1, 65536}), {rows, 65536}));
      auto compiled = compile_flat(f);
      int64_t differ = 0;
      for (int r = 0; r < 65536; r += rows) {
        Array x = ops::copy(ops::broadcast_to(ops::slice(all, {r}, {r + rows}).reshape({rows, 1}), {rows, 65536}));
        auto eager = f(Arrays{x, y});
        auto got = compiled(Arrays{x, y});
        for (size_t k = 0; k < eager.size(); ++k) {
          DType word = eager[k].dtype() == bool_ ? uint8 : uint16;
          differ += ops::sum(ops::not_equal(ops::view(got[k], word), ops::view(eager[k], word)))
                        .astype(int64)
                        .item<int64_t>();
        }
      }
      EXPECT_EQ(differ, 0);
    });
  }
}

// A pass through the fast variants leaves out the checks that the checks
// before it imply (compile/fast_ranges.h): in the sin/cos chain, once
// |x| < 2^18, 2 sin x + cos x lies in [-3, 3], so exp's check (|t| < 87)
// and the division's (both operands' magnitudes in [2^-60, 2^60)) cannot
// fail. With sin x * 100 (past 87) and a divisor of unknown range they
// stay. Compiled equals eager bit for bit either way, with arguments that
// fail each check.
TEST(GpuCompile, ChecksImpliedByEarlierOnesAreLeftOut) {
  auto implied = [](const Arrays& a) {
    return Arrays{ops::exp(ops::sin(a[0]) * 2.0f + ops::cos(a[0])) / (ops::abs(a[0]) + 1.0f)};
  };
  auto needed = [](const Arrays& a) { return Arrays{ops::exp(ops::sin(a[0]) * 100.0f) / a[0]}; };
  Array probe = ops::zeros({4}, float32);
  int regions = 0;
  auto g = compiler::trace({probe}, false, [&](const Arrays& ph) { return implied(ph); });
  std::string program = emitted_program(g, compiler::CudaVariant::contig, regions);
  EXPECT_NE(program.find("outside |= Small<SinCos>::outside("), std::string::npos) << program;
  EXPECT_NE(program.find("Small<Exp>{}("), std::string::npos) << program;
  EXPECT_NE(program.find("Small<Divide>{}("), std::string::npos) << program;
  EXPECT_EQ(program.find("Small<Exp>::outside("), std::string::npos) << program;
  EXPECT_EQ(program.find("Small<Divide>::outside("), std::string::npos) << program;
  auto g2 = compiler::trace({probe}, false, [&](const Arrays& ph) { return needed(ph); });
  std::string program2 = emitted_program(g2, compiler::CudaVariant::contig, regions);
  EXPECT_NE(program2.find("Small<Exp>::outside("), std::string::npos) << program2;
  EXPECT_NE(program2.find("Small<Divide>::outside("), std::string::npos) << program2;
  if (built_with_cuda()) {
    std::string binary;
    EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary), "");
    EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(program2), "sm_90", binary), "");
  }
  NUVEC_GPU_REQUIRED();
  std::vector<float> v(1 << 18);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 4.0f * std::sin(0.37f * static_cast<float>(i));
  const float special[] = {0x1p18f, -3e7f, 0.0f, -0.0f, 1e-40f, 0x1p-70f, std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), 1.5707964f};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; ++k) v[k * 4099 + 5] = special[k];
  Array x = array<float>(v, {512, 512});
  for (auto f : {std::function<Arrays(const Arrays&)>(implied), std::function<Arrays(const Arrays&)>(needed)})
    with_stream(Device::gpu, [&] {
      auto eager = f(Arrays{x});
      std::string why;
      EXPECT_TRUE(same_bits(eager, compile_flat(f)(Arrays{x}), why)) << why;
    });
}

// sin and cos of one value share one argument reduction in the generated
// kernel (kernels::SinCos), small arguments first through the float
// reduction alone: compiled equals eager bit for bit for small,
// wide (past 2^18, the double reduction) and special arguments, in
// float32 and the 16-bit floats, contiguous and strided; the source has
// the pairing.
TEST(GpuCompile, SinAndCosOfOneValueShareTheReduction) {
  auto f = [](const Arrays& a) {
    Array s = ops::sin(a[0]);
    return Arrays{ops::exp(s * 2.0f + ops::cos(a[0])) / (ops::abs(a[0]) + 1.0f), ops::cos(a[0] * 3.0f),
                  ops::sin(a[0] * 3.0f)};
  };
  Array probe = ops::zeros({4}, float32);
  auto g = compiler::trace({probe}, false, [&](const Arrays& ph) { return f(ph); });
  int regions = 0;
  std::string program = emitted_program(g, compiler::CudaVariant::contig, regions);
  size_t pairs = 0;
  for (size_t at = program.find("SinCos{}"); at != std::string::npos; at = program.find("SinCos{}", at + 1)) ++pairs;
  EXPECT_GE(pairs, 2u) << program;
  // A thread's packs go through the float reduction alone first
  // (Small<SinCos>), then the general SinCos when one argument was outside.
  EXPECT_NE(program.find("Small<SinCos>{}("), std::string::npos) << program;
  EXPECT_NE(program.find("if (outside)"), std::string::npos) << program;
  if (built_with_cuda()) {  // NVRTC compiles it (no GPU needed)
    std::string binary;
    EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary), "");
  }
  NUVEC_GPU_REQUIRED();
  std::vector<float> v(200000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 3.0f * std::sin(0.001f * static_cast<float>(i)) * static_cast<float>(i % 1000);
  const float special[] = {0x1p18f, -0x1.fffffep17f, 3e7f, -1e30f, 0.0f, -0.0f, 1e-40f,
                           std::numeric_limits<float>::infinity(), std::numeric_limits<float>::quiet_NaN()};
  for (size_t k = 0; k < sizeof special / sizeof special[0]; ++k) v[k * 7919] = special[k];
  for (DType dt : {float32, float16, bfloat16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Array x = array<float>(v, {400, 500}).astype(dt);
    for (const Array& in : {x, ops::transpose(x)})
      with_stream(Device::gpu, [&] {
        auto eager = f(Arrays{in});
        std::string why;
        EXPECT_TRUE(same_bits(eager, compile_flat(f)(Arrays{in}), why)) << why;
      });
  }
}

// SwiGLU in bfloat16: silu(g) is looked up in a table (one 16-bit input, a
// transcendental function, used with another input), written by its own
// kernel in the same program; the program compiles with NVRTC.
TEST(GpuCompile, TablesAreEmittedWithTheirKernels) {
  auto f = [](const Arrays& a) { return Arrays{a[0] * ops::sigmoid(a[0]) * a[1]}; };
  Array probe = ops::zeros({4}, bfloat16);
  auto g = compiler::trace({probe, probe}, false, [&](const Arrays& ph) { return f(ph); });
  int regions = 0;
  std::string program = emitted_program(g, compiler::CudaVariant::contig, regions);
  EXPECT_EQ(regions, 1);
  EXPECT_NE(program.find("nuvec_table_0_0(const unsigned short* __restrict__ pattern"), std::string::npos) << program;
  // (Both halves of a pair: the region multiplies bfloat16 values.)
  EXPECT_NE(program.find("__ldg(t0 + bit_cast<unsigned short>(v0.a))"), std::string::npos) << program;
  EXPECT_EQ(program.find("nuvec_table_0_1"), std::string::npos) << program;
  // Adam's sqrt(v), v made from two inputs: a table keyed by v.
  auto adam = [](const Arrays& a) {
    Array v = a[0] * a[0] * 0.001f + a[1] * 0.999f;
    return Arrays{a[1] - a[0] * 0.01f / (ops::sqrt(v) + 1e-8f), v};
  };
  auto ga = compiler::trace({probe, probe}, false, [&](const Arrays& ph) { return adam(ph); });
  std::string adam_program = emitted_program(ga, compiler::CudaVariant::contig, regions);
  EXPECT_NE(adam_program.find("nuvec_table_0_0(const unsigned short* __restrict__ pattern"), std::string::npos)
      << adam_program;
  EXPECT_EQ(adam_program.find("nuvec_table_0_1"), std::string::npos) << adam_program;
  if (built_with_cuda()) {
    std::string binary;
    EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary), "");
    EXPECT_EQ(backend::gpu_compile(compiler::cuda_program(adam_program), "sm_90", binary), "");
  }
}

// A trace compiles its contiguous kernels at once and its strided ones when
// a call first needs them (here a transposed input of the same shape, so
// the same trace), once.
TEST(GpuCompile, StridedKernelsAreBuiltOnFirstNeed) {
  NUVEC_GPU_REQUIRED();
  char tmpl[] = "/tmp/nuvec-gpu-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  jit_detail::reset_for_tests(tmpl, "");  // an empty disk cache
  auto f = compile_flat([](const Arrays& a) { return Arrays{ops::exp(ops::multiply(a[0], 0.75f))}; });
  Array x = random::normal({64, 64}, random::key(8));
  auto run = [&](const Array& in) {
    Array got, want;
    with_stream(Device::gpu, [&] {
      got = f(Arrays{in})[0];
      want = ops::exp(ops::multiply(in, 0.75f));
      nuvec::eval({got, want});
    });
    EXPECT_EQ(bits_of(want), bits_of(got));
  };
  auto s0 = jit::stats();
  run(x);
  EXPECT_EQ(jit::stats().gpu_compiled, s0.gpu_compiled + 1);
  run(x.transpose());
  EXPECT_EQ(jit::stats().gpu_compiled, s0.gpu_compiled + 2);
  run(x.transpose());
  run(x);
  EXPECT_EQ(jit::stats().gpu_compiled, s0.gpu_compiled + 2);
  jit_detail::reset_for_tests("", "");
  std::filesystem::remove_all(tmpl);
}

// The contiguous kernel loads an input the trace saw at the output's shape
// as dense, with no test of how it is read. Replayed shapeless with that
// input as a repeated row, the launch takes the strided kernel (built then)
// and the bits stay eager's.
TEST(GpuCompile, DenseInputsReadAsRowsTakeTheStridedKernel) {
  NUVEC_GPU_REQUIRED();
  char tmpl[] = "/tmp/nuvec-gpu-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  jit_detail::reset_for_tests(tmpl, "");  // an empty disk cache
  auto body = [](const Arrays& a) { return Arrays{a[0] * a[1] + 1.0f}; };
  auto f = compile_flat_with({.shapeless = true}, body);
  auto run = [&](const Array& x, const Array& y) {
    Array got, want;
    with_stream(Device::gpu, [&] {
      got = f(Arrays{x, y})[0];
      want = body(Arrays{x, y})[0];
      nuvec::eval({got, want});
    });
    EXPECT_EQ(got.shape(), want.shape());
    EXPECT_EQ(bits_of(want), bits_of(got));
  };
  Array full = random::normal({64, 256}, random::key(3));
  Array row = random::normal({1, 256}, random::key(4));
  auto s0 = jit::stats();
  run(full, row);  // traced: the first input dense, the second a row
  EXPECT_EQ(jit::stats().gpu_compiled, s0.gpu_compiled + 1);
  run(full * 2.0f, full);  // both dense: the contiguous kernel
  EXPECT_EQ(jit::stats().gpu_compiled, s0.gpu_compiled + 1);
  run(row, full);  // the dense input now a row: the strided kernel
  EXPECT_EQ(jit::stats().gpu_compiled, s0.gpu_compiled + 2);
  jit_detail::reset_for_tests("", "");
  std::filesystem::remove_all(tmpl);
}

// A new process (here: the memory cache forgotten) loads the kernel from
// the disk cache; a damaged file is rebuilt.
TEST(GpuCompile, DiskCache) {
  NUVEC_GPU_REQUIRED();
  char tmpl[] = "/tmp/nuvec-gpu-cache-XXXXXX";
  ASSERT_NE(mkdtemp(tmpl), nullptr);
  std::string dir = tmpl;
  jit_detail::reset_for_tests(dir, "");
  auto f = [](const Arrays& a) { return Arrays{ops::add(ops::multiply(a[0], a[0]), 1.5f)}; };
  Array x = random::normal({1000}, random::key(5));
  Array expected, got;
  with_stream(Device::gpu, [&] {
    expected = f(Arrays{x})[0];
    expected.eval();
  });
  auto run_once = [&] {
    with_stream(Device::gpu, [&] {
      got = compile_flat(f)(Arrays{x})[0];
      got.eval();
    });
    EXPECT_EQ(bits_of(expected), bits_of(got));
  };
  auto s0 = jit::stats();
  run_once();
  auto s1 = jit::stats();
  EXPECT_EQ(s1.gpu_compiled, s0.gpu_compiled + 1);
  jit_detail::reset_for_tests(dir, "");
  run_once();
  auto s2 = jit::stats();
  EXPECT_EQ(s2.gpu_disk_hits, s1.gpu_disk_hits + 1);
  EXPECT_EQ(s2.gpu_compiled, s1.gpu_compiled);
  // Damage every cached binary: the loader refuses it and rebuilds.
  int damaged = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir + "/cuda")) {
    std::fstream file(e.path(), std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(-5, std::ios::end);
    file.write("XXXXX", 5);
    ++damaged;
  }
  EXPECT_EQ(damaged, 1);
  jit_detail::reset_for_tests(dir, "");
  run_once();
  EXPECT_EQ(jit::stats().gpu_compiled, s2.gpu_compiled + 1);
  jit_detail::reset_for_tests("", "");
  std::filesystem::remove_all(dir);
}
