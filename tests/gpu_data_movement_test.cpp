// The GPU's data movement kernels on the layouts that take their fast
// paths (src/backend/cuda/data_copy.cu, elementwise.cuh; compile's strided
// and row kernels, src/compile/emit_cuda*.cpp): copies of runs contiguous
// on both sides in 16-, 8- or 4-byte words, 32-bit index arithmetic, a
// warp per short row. Element-wise results equal the CPU's bits; row
// regions equal the eager GPU reductions (a block per row, the order of
// kernels/gpu_rows.h) bit for bit at every row length around the warp's
// and the block's limits. Skipped without a GPU.
#include <gtest/gtest.h>
#include <nuvec/compile.h>

#include <functional>

#include "backend/backend.h"
#include "compile/emit_cpp.h"
#include "compile/jit.h"
#include "compile/simplify.h"
#include "nuvec/primitives/fused_reduce.h"
#include "support/gpu.h"

using namespace nuvec;
using namespace nuvec::testing;

namespace {

Array values(DType dt, const Shape& shape, uint32_t seed) {
  return ops::astype(random::normal(shape, random::key(seed), kCpu), dt, kCpu);
}

// f's outputs built on stream (or device) s.
Arrays run_on(StreamOrDevice s, const std::function<Arrays()>& f) {
  Arrays r;
  with_stream(s, [&] { r = f(); });
  return r;
}

// [B, L, H, D] -> [B, H, L, D] (the attention heads' transpose).
Array heads(const Array& x, StreamOrDevice s) {
  return ops::transpose(x, {0, 2, 1, 3}, s);
}

}  // namespace

// Concatenate copies each input through copy_elements: transposed inputs
// whose inner axis is contiguous on both sides (whole words, a word that
// covers the axis, runs that are not whole words, misaligned starts).
TEST(GpuCompileDataMovement, CopiesEqualTheCpu) {
  NUVEC_GPU_REQUIRED();
  struct Case {
    DType dt;
    Shape shape;  // [B, L, H, D]
    int start;    // of a slice along D
  };
  const Case cases[] = {
      {bfloat16, {4, 33, 6, 64}, 0}, {bfloat16, {3, 17, 5, 8}, 0},
      {float32, {2, 9, 3, 64}, 0},   {int8, {2, 31, 4, 48}, 0},
      {float64, {2, 5, 3, 6}, 0},    {bfloat16, {2, 7, 3, 66}, 2},
      {bfloat16, {2, 7, 3, 65}, 1},  {uint8, {3, 5, 7, 3}, 0},
      {float16, {1, 130, 2, 4}, 0}};
  uint32_t seed = 1;
  for (const Case& c : cases) {
    const Array x = values(c.dt, c.shape, seed++),
                y = values(c.dt, c.shape, seed++);
    Shape stop = c.shape;
    expect_same(
        [&](StreamOrDevice s) {
          Array a = ops::slice(x, {0, 0, 0, c.start}, stop, s);
          return ops::concatenate(
              {heads(a, s),
               heads(ops::slice(y, {0, 0, 0, c.start}, stop, s), s)},
              2, s);
        },
        "concatenate of head transposes, " + std::string(dtype_name(c.dt)));
  }
}

// Casts and element-wise operations of strided inputs (the strided
// kernels, 32-bit coordinates), eager and compiled.
TEST(GpuCompileDataMovement, StridedElementwiseEqualsTheCpu) {
  NUVEC_GPU_REQUIRED();
  const Array x = values(float32, {3, 37, 5, 24}, 11),
              y = values(float32, {3, 5, 37, 24}, 12);
  expect_same(
      [&](StreamOrDevice s) { return ops::astype(heads(x, s), bfloat16, s); },
      "cast of a transpose");
  expect_same(
      [&](StreamOrDevice s) {
        return ops::exp(ops::transpose(x, {3, 1, 0, 2}, s), s);
      },
      "exp of a permutation");
  auto f = [](const Arrays& a) {
    Array t = heads(a[0], {});
    return Arrays{ops::add(ops::multiply(t, a[1]), ops::astype(t, bfloat16)),
                  ops::subtract(a[1], t)};
  };
  auto g = compile(f);
  Arrays want = run_on(kCpu, [&] { return f({x, y}); });
  Arrays got = run_on(Device::gpu, [&] { return g({x, y}); });
  ++cases_checked();
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(bits_of(got[i]), bits_of(want[i])) << "output " << i;
}

namespace {

// Layer norm, softmax and all() over the last axis.
Arrays norms(const Arrays& a) {
  const Array& x = a[0];
  Array n = ops::astype(nuvec::array(static_cast<float>(x.shape().back())),
                        x.dtype());
  Array mean = ops::divide(ops::sum(x, {-1}, true), n);
  Array d = ops::subtract(x, mean);
  Array var = ops::divide(ops::sum(ops::multiply(d, d), {-1}, true), n);
  Array e = ops::exp(ops::subtract(x, ops::max(x, {-1}, true)));
  return {ops::multiply(
              d, ops::rsqrt(ops::add(var, nuvec::array(1e-5f, x.dtype())))),
          ops::divide(e, ops::sum(e, {-1}, true)),
          ops::all(ops::greater(x, nuvec::array(-3.0f, x.dtype())), {-1})};
}

}  // namespace

// The row kernels' source compiles with NVRTC (no GPU needed).
TEST(GpuCompileDataMovement, RowSourcesCompileWithNvrtc) {
  std::string binary;
  if (backend::gpu_compile("", "sm_90", binary) ==
      "nuvec was built without CUDA")
    GTEST_SKIP() << "no CUDA";
  for (DType dt : {float32, bfloat16, float64, uint32, int8}) {
    const Array x = values(dt, {13, 384}, 7);
    compiler::Graph g = compiler::trace({x}, false, norms);
    std::string program;
    int regions = 0;
    for (const auto& st : g.steps)
      if (st.primitive->id() == PrimitiveId::FusedReduce)
        program += compiler::emit_cuda_rows_kernel(
            static_cast<const FusedReduce&>(*st.primitive), regions++);
    EXPECT_GT(regions, 0);
    EXPECT_EQ(
        backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary),
        "")
        << dtype_name(dt);
    EXPECT_GT(binary.size(), 1000u);
  }
}

// Layer norms and softmaxes over rows of every length near the warp's
// limit (1024) and the block's packs, 13 rows (not a whole number of
// blocks of 8): compiled (row kernels) equals eager (the Reduce kernel).
TEST(GpuCompileDataMovement, RowKernelsEqualEagerAtEveryLength) {
  NUVEC_GPU_REQUIRED();
  auto norm = norms;
  auto compiled = compile(norm);
  uint32_t seed = 100;
  for (DType dt : {float32, bfloat16})
    for (int n : {1, 2, 3, 5, 31, 96, 127, 128, 129, 384, 513, 1000, 1023, 1024,
                  1025, 2050}) {
      const Array x = values(dt, {13, n}, seed++);
      Arrays eager = run_on(Device::gpu, [&] { return norm({x}); });
      Arrays fused = run_on(Device::gpu, [&] { return compiled({x}); });
      ASSERT_EQ(eager.size(), fused.size());
      for (size_t i = 0; i < eager.size(); ++i)
        EXPECT_EQ(bits_of(fused[i]), bits_of(eager[i]))
            << dtype_name(dt) << " rows of " << n << ", output " << i;
      ++cases_checked();
    }
}
