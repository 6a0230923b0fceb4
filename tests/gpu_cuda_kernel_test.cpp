// fast::CudaKernel on the GPU (docs/cuda-kernel.md): users' kernels
// against nuvec's own ops, layouts read through the generated shape and
// strides, several outputs filled with an initial value (atomics), template
// arguments, shared memory, NVRTC's errors, and kernels inside compile and
// custom_function. Skipped where no GPU is present (CI); the checks that
// need no GPU are in cuda_kernel_test.cpp.
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <string>
#include <vector>

#include "support/gpu.h"

using namespace nuvec;
using namespace nuvec::testing;

namespace {

// The element count from the generated shape parameters (a kernel need not
// be recompiled for each size).
const char* kSize = R"(
  long n = 1;
  for (int d = 0; d < inp_ndim; ++d) n *= inp_shape[d];
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
)";

fast::CudaKernelCall like(
    const Array& x,
    std::vector<std::pair<std::string, fast::TemplateArg>> targs = {}) {
  int n = static_cast<int>(x.size());
  return {.output_shapes = {x.shape()},
          .output_dtypes = {x.dtype()},
          .grid = {n, 1, 1},
          .threadgroup = {128, 1, 1},
          .template_args = std::move(targs),
          .stream = Device::gpu};
}

Array normal(const Shape& s, DType dt, int seed) {
  return (random::normal(s, random::key(seed)) * 2.0f).astype(dt);
}

// The example of docs/cuda-kernel.md, as written there.
Array exp_elementwise(const Array& a) {
  static const fast::CudaKernel kernel("myexp", {"inp"}, {"out"}, R"(
    long n = 1;
    for (int d = 0; d < inp_ndim; ++d) n *= inp_shape[d];
    const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < n) out[i] = nuvec::kernels::Exp{}(inp[i]);  // nuvec's exp
  )");
  int n = static_cast<int>(a.size());
  return kernel({a}, {.output_shapes = {a.shape()},
                      .output_dtypes = {a.dtype()},
                      .grid = {n, 1, 1},
                      .threadgroup = {256, 1, 1},
                      .stream = Device::gpu})[0];
}

}  // namespace

TEST(GpuCudaKernel, DocsExample) {
  NUVEC_GPU_REQUIRED();
  Array a = random::normal({4, 16});
  Array b = exp_elementwise(a);
  EXPECT_EQ(bits_of(b), bits_of(ops::exp(a)));  // the CPU's exp, bit for bit
  Array h = exp_elementwise(a.astype(float16));
  EXPECT_EQ(bits_of(h), bits_of(ops::exp(a.astype(float16))));
}

// exp in the input's dtype through a typename: nuvec's functor gives the
// bits of ops::exp on the GPU and the CPU; CUDA's expf is close.
TEST(GpuCudaKernel, ElementwiseMatchesOps) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel functor(
      "exp_functor", {"inp"}, {"out"},
      std::string(kSize) +
          "out[i] = nuvec::kernels::Exp{}(static_cast<T>(inp[i]));");
  fast::CudaKernel cuda(
      "exp_cuda", {"inp"}, {"out"},
      std::string(kSize) + "out[i] = T(expf(static_cast<float>(inp[i])));");
  for (DType dt : {float32, float16}) {
    Array x = normal({37, 129}, dt, 1);
    Array want = ops::exp(x, Device::gpu);
    Array got = functor({x}, like(x, {{"T", dt}}))[0];
    EXPECT_EQ(bits_of(got), bits_of(want)) << dtype_name(dt);
    EXPECT_EQ(bits_of(got), bits_of(ops::exp(x, kCpu))) << dtype_name(dt);
    Array close = cuda({x}, like(x, {{"T", dt}}))[0];
    EXPECT_TRUE(ops::allclose(close.astype(float32), want.astype(float32),
                              dt == float16 ? 2e-3 : 1e-6, 0.0)
                    .item<bool>())
        << dtype_name(dt);
  }
}

// Every dtype travels with its storage type: a copy keeps the bits.
TEST(GpuCudaKernel, EveryDtypeCopies) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel copy("copy", {"inp"}, {"out"},
                        std::string(kSize) + "out[i] = inp[i];");
  for (DType dt : kDtypes) {
    Array x =
        dt == bool_ ? normal({5, 7}, float32, 2) > 0.0f : normal({5, 7}, dt, 2);
    EXPECT_EQ(bits_of(copy({x}, like(x))[0]), bits_of(x)) << dtype_name(dt);
  }
}

// Without ensure_row_contiguous the kernel gets the view's own pointer
// (offset included) and strides; with it, a dense copy and its strides.
TEST(GpuCudaKernel, StridesOfNonContiguousInputs) {
  NUVEC_GPU_REQUIRED();
  const char* body = R"(
  long at = 0, rest = i;
  for (int d = inp_ndim - 1; d >= 0; --d) {
    at += rest % inp_shape[d] * inp_strides[d];
    rest /= inp_shape[d];
  }
  out[i] = inp[at];
  if (i < inp_ndim) strides[i] = inp_strides[i];
)";
  fast::CudaKernel as_is("gather_view", {"inp"}, {"out", "strides"},
                         std::string(kSize) + body, "", false);
  fast::CudaKernel dense("gather_dense", {"inp"}, {"out", "strides"},
                         std::string(kSize) + body);
  Array base = normal({12, 64}, float32, 3);
  struct View {
    const char* name;
    Array x;
    std::vector<int64_t> strides;  // as the kernel sees them without a copy
  };
  View views[] = {
      {"transposed", ops::transpose(normal({32, 6}, float32, 4)), {1, 6}},
      {"sliced", ops::slice(base, {1, 1}, {12, 64}, {2, 3}), {128, 3}},
      {"broadcast",
       ops::broadcast_to(normal({32}, float32, 5), {6, 32}),
       {0, 1}}};
  for (const auto& v : views) {
    Array want = ops::copy(v.x, kCpu);
    auto call = like(v.x);
    call.output_shapes.push_back({2});
    call.output_dtypes.push_back(int64);
    auto a = as_is({v.x}, call);
    EXPECT_EQ(bits_of(a[0]), bits_of(want)) << v.name;
    EXPECT_EQ(a[1].to_vector<int64_t>(), v.strides) << v.name;
    auto d = dense({v.x}, call);
    EXPECT_EQ(bits_of(d[0]), bits_of(want)) << v.name;
    EXPECT_EQ(d[1].to_vector<int64_t>(),
              (std::vector<int64_t>{v.x.shape()[1], 1}))
        << v.name;
  }
}

// Outputs start at init_value: a histogram and a sum with int32 atomics
// (exact, whatever the order), and a float output the kernel writes in part.
TEST(GpuCudaKernel, SeveralOutputsWithInitValue) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel hist("histogram", {"inp"}, {"counts", "total", "evens"},
                        std::string(kSize) + R"(
  atomicAdd(&counts[inp[i]], 1);
  atomicAdd(total, inp[i]);
  if (i % 2 == 0 && i < 10) evens[i] = 1.5f;
)");
  Array x = random::randint(0, 16, {1000}, int32, random::key(6));
  auto call = like(x);
  call.output_shapes = {{16}, {1}, {10}};
  call.output_dtypes = {int32, int32, float32};
  call.init_value = 0.0f;
  auto out = hist({x}, call);
  Array want = ops::sum(
      ops::equal(ops::expand_dims(x, 1), ops::arange(16)).astype(int32), 0);
  EXPECT_EQ(out[0].to_vector<int32_t>(), want.to_vector<int32_t>());
  EXPECT_EQ(out[1].item<int32_t>(), x.sum().item<int32_t>());
  EXPECT_EQ(out[2].to_vector<float>(),
            (std::vector<float>{1.5f, 0, 1.5f, 0, 1.5f, 0, 1.5f, 0, 1.5f, 0}));

  call.init_value = 7.0f;  // counts from 7; untouched floats are 7
  out = hist({x}, call);
  EXPECT_EQ(out[0].to_vector<int32_t>(), (want + 7).to_vector<int32_t>());
  EXPECT_EQ(out[2].to_vector<float>(),
            (std::vector<float>{1.5f, 7, 1.5f, 7, 1.5f, 7, 1.5f, 7, 1.5f, 7}));

  // A zero grid launches nothing: the outputs are the initial value.
  call.grid = {0, 1, 1};
  EXPECT_EQ(hist({x}, call)[0].to_vector<int32_t>(),
            std::vector<int32_t>(16, 7));
}

TEST(GpuCudaKernel, TemplateIntAndBoolArguments) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel scale(
      "scale", {"inp"}, {"out"},
      std::string(kSize) +
          "out[i] = Negate ? -(inp[i] * Factor) : inp[i] * Factor;");
  Array x = random::randint(-50, 50, {3, 40}, int32, random::key(7));
  auto run = [&](int factor, bool negate) {
    return scale({x}, like(x, {{"Factor", factor}, {"Negate", negate}}))[0];
  };
  EXPECT_EQ(run(3, false).to_vector<int32_t>(), (x * 3).to_vector<int32_t>());
  EXPECT_EQ(run(3, true).to_vector<int32_t>(), (x * -3).to_vector<int32_t>());
  EXPECT_EQ(run(-2, false).to_vector<int32_t>(), (x * -2).to_vector<int32_t>());
}

// Dynamic shared memory, above the default 48 KiB too (an opt-in).
TEST(GpuCudaKernel, SharedMemory) {
  NUVEC_GPU_REQUIRED();
  const char* body = R"(
  extern __shared__ float tile[];
  const int t = threadIdx.x, base = blockIdx.x * blockDim.x;
  tile[t] = inp[base + t];
  __syncthreads();
  out[base + t] = tile[blockDim.x - 1 - t];
)";
  Array x = normal({4, 256}, float32, 8);
  Array want = ops::take(x, ops::arange(255, -1, -1), 1, kCpu);
  for (int bytes : {256 * 4, 64 * 1024}) {
    fast::CudaKernel reverse("reverse_blocks", {"inp"}, {"out"}, body, "", true,
                             bytes);
    auto call = like(x);
    call.threadgroup = {256, 1, 1};
    EXPECT_EQ(bits_of(reverse({x}, call)[0]), bits_of(want)) << bytes;
  }
}

// NVRTC's log reaches the caller, at the line of the user's source.
TEST(GpuCudaKernel, CompileErrorCarriesTheLog) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel bad("bad", {"inp"}, {"out"},
                       "out[0] = inp[0];\nout[1] = not_declared;\n");
  Array x = ops::ones({4});
  Array r = bad({x}, like(x))[0];
  ASSERT_TRUE(r.is_failed());
  std::string what = r.error()->what();
  EXPECT_EQ(r.error()->kind(), ErrorKind::invalid_argument);
  for (const char* text : {"fast::CudaKernel \"bad\" does not compile", "NVRTC",
                           "bad:source(2)", "not_declared"})
    EXPECT_NE(what.find(text), std::string::npos) << text << "\n" << what;
  EXPECT_THROW(r.eval(), Error);
}

// A kernel inside a compiled function: the same result as eager calls, the
// second call a replay of the trace.
TEST(GpuCudaKernel, InsideCompile) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel twice("twice_plus", {"inp"}, {"out"},
                         std::string(kSize) + "out[i] = inp[i] * 2.0f;");
  auto f = [&](const Array& x) {
    return twice({ops::sin(x)}, like(x))[0] + 1.0f;
  };
  with_stream(Device::gpu, [&] {
    auto g = compile(f);
    for (int seed : {9, 10}) {
      Array x = normal({17, 33}, float32, seed);
      EXPECT_EQ(bits_of(g(x)), bits_of(f(x))) << seed;
    }
  });
}

// Transforms have no rules for a kernel; custom_function gives it one.
TEST(GpuCudaKernel, CustomFunctionGivesAGradient) {
  NUVEC_GPU_REQUIRED();
  fast::CudaKernel square("square", {"inp"}, {"out"},
                          std::string(kSize) + "out[i] = inp[i] * inp[i];");
  auto f =
      custom_function([&](const Array& x) {
        return square({x}, like(x))[0];
      }).with_vjp([](const Array& x, const Array& cotangent, const Array&) {
        return cotangent * 2.0f * x;
      });
  Array x = normal({3, 5}, float32, 11);
  Array g = grad([&](const Array& v) { return f(v).sum(); })(x);
  EXPECT_EQ(bits_of(g), bits_of(x * 2.0f));
}
