// fast::CudaKernel without a GPU (docs/cuda-kernel.md): the checks of its
// names and of a call's options, the error of a CPU stream, the generated
// signature, equality for compile's CSE, transforms refusing it, and the
// generated sources compiled with NVRTC (which needs no GPU). The kernels
// running on a GPU are in gpu_cuda_kernel_test.cpp.
#include "nuvec/primitives/cuda_kernel.h"

#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <string>
#include <vector>

#include "backend/backend.h"
#include "compile/jit.h"
#include "ops/builder.h"

using namespace nuvec;

namespace {

const char* kExpBody = R"(
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = nuvec::kernels::Exp{}(inp[i]);
)";

fast::CudaKernel exp_kernel() {
  return fast::CudaKernel("myexp", {"inp"}, {"out"}, kExpBody);
}

fast::CudaKernelCall exp_call(const Array& x, StreamOrDevice s = Device::gpu) {
  int n = static_cast<int>(x.size());
  return {.output_shapes = {x.shape()},
          .output_dtypes = {x.dtype()},
          .grid = {n, 1, 1},
          .threadgroup = {256, 1, 1},
          .template_args = {{"n", n}},
          .stream = s};
}

// The message of a failed array, checked to come from the call at `line`
// of this file with op name cuda_kernel.
std::string failure(const Array& a, int line) {
  const Error* e = a.error();
  if (!e) return "(not failed)";
  EXPECT_EQ(e->op_name().value_or(""), "cuda_kernel");
  EXPECT_NE(e->file().find("cuda_kernel_test.cpp"), std::string::npos)
      << e->what();
  EXPECT_EQ(e->line(), line);
  return e->what();
}

bool built_with_cuda() {
  std::string bin;
  return backend::gpu_compile("", "sm_90", bin) !=
         "nuvec was built without CUDA";
}

// NVRTC's verdict on a kernel's source (for sm_90, as on the H200).
std::string nvrtc(const std::string& program) {
  std::string binary;
  std::string error =
      backend::gpu_compile(compiler::cuda_program(program), "sm_90", binary);
  if (error.empty() && binary.size() < 100) return "no binary";
  return error;
}

std::shared_ptr<const Primitive> primitive_of(const Array& a) {
  return a.desc()->node->primitive;
}

}  // namespace

TEST(CudaKernel, ConstructorRejectsBadNames) {
  auto rejects = [](const char* what, auto make) {
    try {
      make();
      ADD_FAILURE() << "accepted: " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::invalid_argument) << e.what();
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos)
          << e.what();
    }
  };
  rejects("the name must be", [] { fast::CudaKernel("", {"a"}, {"b"}, ""); });
  rejects("the name must be",
          [] { fast::CudaKernel("my kernel", {"a"}, {"b"}, ""); });
  rejects("at least one output", [] { fast::CudaKernel("k", {"a"}, {}, ""); });
  rejects("\"2x\" is not a C++ identifier",
          [] { fast::CudaKernel("k", {"2x"}, {"b"}, ""); });
  rejects("\"\" is not a C++ identifier",
          [] { fast::CudaKernel("k", {"a"}, {""}, ""); });
  rejects("\"a\" is declared twice", [] {
    fast::CudaKernel("k", {"a", "b"}, {"a"}, "");
  });
  rejects("\"x_shape\" is declared twice", [] {
    fast::CudaKernel("k", {"x", "x_shape"}, {"o"}, "");
  });
  rejects("shared_memory must not be negative",
          [] { fast::CudaKernel("k", {"a"}, {"b"}, "", "", true, -1); });
  EXPECT_EQ(fast::CudaKernel("ok_2", {}, {"out"}, "").name(), "ok_2");
}

TEST(CudaKernel, InvalidCallsGiveFailedArrays) {
  auto k = exp_kernel();
  Array x = ops::ones({4, 3});
  auto call = exp_call(x);

  const int line = __LINE__ + 1;
  auto out = k({x, x}, call);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NE(failure(out[0], line)
                .find("fast::CudaKernel \"myexp\": expected 1 inputs (one per "
                      "input name), got 2"),
            std::string::npos);
  EXPECT_THROW(out[0].check(), Error);

  auto bad = [&](auto edit, const char* text) {
    auto c = call;
    edit(c);
    Array r = k({x}, c)[0];
    ASSERT_TRUE(r.is_failed()) << text;
    EXPECT_NE(std::string(r.error()->what()).find(text), std::string::npos)
        << r.error()->what();
    EXPECT_NE(std::string(r.error()->what()).find("\"myexp\""),
              std::string::npos)
        << r.error()->what();
  };
  using Call = fast::CudaKernelCall;
  bad([](Call& c) { c.output_shapes.push_back({2}); },
      "expected 1 output shapes");
  bad([](Call& c) { c.output_dtypes.clear(); }, "expected 1 output dtypes");
  bad([](Call& c) { c.threadgroup = {0, 1, 1}; }, "threadgroup (0, 1, 1)");
  bad([](Call& c) { c.threadgroup = {64, 32, 1}; }, "at most 1024 threads");
  bad([](Call& c) { c.threadgroup = {1, 1, 65}; }, "z at most 64");
  bad([](Call& c) { c.grid = {4, -1, 1}; }, "negative dimension");
  bad([](Call& c) { c.grid = {1, 70000, 1}; }, "more than 65535 blocks");
  bad(
      [](Call& c) {
        c.template_args.push_back({"n", 2});
      },
      "\"n\" repeats or names a parameter");
  bad(
      [](Call& c) {
        c.template_args.push_back({"inp_shape", 2});
      },
      "repeats or names a parameter");
  bad(
      [](Call& c) {
        c.template_args.push_back({"a-b", true});
      },
      "\"a-b\" is not a C++ identifier");
  bad(
      [](Call& c) {
        c.output_shapes = {{2, -3}};
      },
      "output 0 has a negative dimension");

  // A failed input is every output, unchanged.
  Array broken = ops::reshape(x, {5});
  auto two = fast::CudaKernel("two", {"a"}, {"p", "q"}, "")({broken}, call);
  ASSERT_EQ(two.size(), 2u);
  EXPECT_EQ(std::string(two[0].error()->what()), broken.error()->what());
  EXPECT_EQ(std::string(two[1].error()->what()), broken.error()->what());
}

// The default device is the CPU in CI: a call without a GPU stream fails
// (never a crash), naming the kernel; so does evaluating the primitive on
// a CPU stream.
TEST(CudaKernel, RunsOnGpuStreamsOnly) {
  auto k = exp_kernel();
  Array x = ops::ones({4});
  const int line = __LINE__ + 1;
  Array on_cpu = k({x}, exp_call(x, default_stream(Device::cpu)))[0];
  std::string text = failure(on_cpu, line);
  EXPECT_NE(text.find("fast::CudaKernel \"myexp\" runs on a GPU stream only"),
            std::string::npos)
      << text;
  EXPECT_THROW(on_cpu.eval(), Error);
  with_stream(Device::cpu, [&] {
    Array r = k({x}, exp_call(x, {}))[0];
    ASSERT_TRUE(r.is_failed());
    EXPECT_NE(std::string(r.error()->what()).find("runs on a GPU stream only"),
              std::string::npos);
  });
  // Without a GPU a call on the GPU stream fails when evaluated, as every
  // GPU op there.
  Array on_gpu = k({x}, exp_call(x))[0];
  ASSERT_FALSE(on_gpu.is_failed()) << on_gpu.error()->what();
  auto primitive = primitive_of(on_gpu);
  if (!is_available(Device::gpu)) EXPECT_THROW(on_gpu.eval(), Error);
  // The primitive of a GPU call, built on the CPU stream by hand.
  Array forced = ops::impl::build1(primitive, {x}, Device::cpu,
                                     "cuda_kernel", NUVEC_LOC);
  try {
    forced.eval();
    ADD_FAILURE() << "a CudaKernel evaluated on the CPU";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("\"myexp\" runs on a GPU stream only"),
              std::string::npos)
        << e.what();
  }
}

TEST(CudaKernel, OutputsHaveTheGivenShapesAndDtypes) {
  fast::CudaKernel k("three", {"a"}, {"x", "y", "z"}, "");
  auto out =
      k({ops::ones({2, 2})}, {.output_shapes = {{3}, {2, 5}, {}},
                              .output_dtypes = {int32, float16, complex64},
                              .stream = Device::gpu});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), Shape{3});
  EXPECT_EQ(out[1].shape(), (Shape{2, 5}));
  EXPECT_EQ(out[2].ndim(), 0);
  EXPECT_EQ(out[0].dtype(), int32);
  EXPECT_EQ(out[1].dtype(), float16);
  EXPECT_EQ(out[2].dtype(), complex64);
  EXPECT_EQ(primitive_of(out[0]).get(), primitive_of(out[2]).get())
      << "one node, three outputs";
}

TEST(CudaKernel, GeneratedSignature) {
  fast::CudaKernel k("sig", {"inp", "other"}, {"out", "out2"}, R"(
    // inp_shape, inp_ndim and other_strides are read; inp_shapes is not a mention
    out[0] = T(inp_shape[0] + inp_ndim + other_strides[0] + N + (B ? 1 : 0));
  )",
                     "__device__ int helper() { return inp_shape_in_header; }");
  fast::CudaKernelCall call{
      .output_shapes = {{1}, {2}},
      .output_dtypes = {float16, int64},
      .template_args = {{"T", float16}, {"N", -3}, {"B", true}},
      .stream = Device::gpu};
  std::string src =
      k.source({ops::ones({2}, float32), ops::ones({3}, uint8)}, call);
  for (const char* line :
       {"extern \"C\" __global__ void custom_kernel_sig_float16_n3_t(",
        "const float* inp,", "const __grid_constant__ nuvec_shape inp_shape,",
        "const int inp_ndim,", "const unsigned char* other,",
        "const __grid_constant__ nuvec_strides other_strides,",
        "float16_t* out,", "long* out2) {", "  using T = float16_t;",
        "  constexpr int N = -3;", "  constexpr bool B = true;",
        "#line 1 \"sig:source\"", "#line 1 \"sig:header\""})
    EXPECT_NE(src.find(line), std::string::npos) << line << "\n" << src;
  for (const char* absent : {"inp_strides,", "other_shape", "other_ndim"})
    EXPECT_EQ(src.find(absent), std::string::npos) << absent << "\n" << src;
  EXPECT_LT(src.find("helper()"), src.find("__global__"))
      << "the header comes first";
  EXPECT_THROW(k.source({ops::ones({2})}, call), Error) << "one input missing";
}

TEST(CudaKernel, VerbosePrintsTheSource) {
  auto k = exp_kernel();
  Array x = ops::ones({8});
  auto call = exp_call(x);
  call.verbose = true;
  ::testing::internal::CaptureStdout();
  Array r = k({x}, call)[0];
  std::string printed = ::testing::internal::GetCapturedStdout();
  EXPECT_NE(printed.find("extern \"C\" __global__ void custom_kernel_myexp_8("),
            std::string::npos)
      << printed;
  EXPECT_NE(printed.find("nuvec::kernels::Exp{}(inp[i])"), std::string::npos)
      << printed;
}

// compile's CSE merges two nodes only when everything that decides the
// result is equal (the initial value bitwise).
TEST(CudaKernel, EqualCallsAreEquivalent) {
  auto k = exp_kernel();
  Array x = ops::ones({8});
  auto node = [&](const fast::CudaKernelCall& c) {
    return primitive_of(k({x}, c)[0]);
  };
  auto base = exp_call(x);
  auto p = node(base);
  EXPECT_TRUE(p->is_equivalent(*node(base)));
  EXPECT_EQ(p->params_hash(), node(base)->params_hash());
  EXPECT_TRUE(p->is_equivalent(*primitive_of(exp_kernel()({x}, base)[0])))
      << "another object, same source";
  std::vector<fast::CudaKernelCall> others(6, base);
  others[0].grid = {16, 1, 1};
  others[1].threadgroup = {128, 1, 1};
  others[2].template_args = {{"n", 7}};
  others[3].init_value = 0.0f;
  others[4].output_dtypes = {float16};
  others[5].output_shapes = {{2, 4}};
  for (size_t i = 0; i < others.size(); ++i)
    EXPECT_FALSE(p->is_equivalent(*node(others[i]))) << i;
  auto zero = base, negative_zero = base;
  zero.init_value = 0.0f;
  negative_zero.init_value = -0.0f;
  EXPECT_FALSE(node(zero)->is_equivalent(*node(negative_zero)));
  EXPECT_TRUE(node(zero)->is_equivalent(*node(zero)));
  fast::CudaKernel copies("myexp", {"inp"}, {"out"}, kExpBody, "", false);
  EXPECT_FALSE(p->is_equivalent(*primitive_of(copies({x}, base)[0])))
      << "ensure_row_contiguous differs";
}

TEST(CudaKernel, TransformsNameTheKernel) {
  auto k = exp_kernel();
  auto f = [&](const Array& x) { return k({x}, exp_call(x))[0].sum(); };
  Array x = ops::ones({8});
  for (auto run : {std::function<void()>([&] { (void)grad(f)(x); }),
                   std::function<void()>([&] {
                     (void)vmap(f)(ops::ones({2, 8}));
                   })}) {
    try {
      run();
      ADD_FAILURE() << "a transform of a custom kernel did not throw";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::transform) << e.what();
      EXPECT_NE(std::string(e.what()).find(
                    "of fast::CudaKernel \"myexp\" is not defined"),
                std::string::npos)
          << e.what();
    }
  }
}

// What a call compiles is valid CUDA for NVRTC (no GPU needed), for every
// dtype, with layouts, template arguments, a header and shared memory; a
// mistake is reported with NVRTC's log, at the line of the user's source.
TEST(CudaKernel, GeneratedSourceCompilesWithNvrtc) {
  if (!built_with_cuda()) GTEST_SKIP() << "built without CUDA";
  const DType all[] = {bool_,    uint8,   uint16,  uint32,   uint64,
                       int8,     int16,   int32,   int64,    float16,
                       bfloat16, float32, float64, complex64};
  fast::CudaKernel copy("copy", {"inp"}, {"out"}, R"(
    const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
    long at = 0, rest = i;
    for (int d = inp_ndim - 1; d >= 0; --d) {
      at += rest % inp_shape[d] * inp_strides[d];
      rest /= inp_shape[d];
    }
    if (i < n) out[i] = inp[at];
  )",
                        "", false);
  for (DType dt : all) {
    Array x = ops::zeros({3, 4}, dt);
    auto src = copy.source({x}, {.output_shapes = {{3, 4}},
                                 .output_dtypes = {dt},
                                 .template_args = {{"n", 12}}});
    EXPECT_EQ(nvrtc(src), "") << dtype_name(dt) << "\n" << src;
  }
  fast::CudaKernel fancy(
      "fancy", {"a", "b"}, {"hist", "total"}, R"(
    extern __shared__ float tile[];
    const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
    tile[threadIdx.x] = static_cast<float>(a[i]);
    __syncthreads();
    int bin = static_cast<int>(tile[threadIdx.x]) % Bins;
    atomicAdd(&hist[bin < 0 ? -bin : bin], 1);
    if (Flag) atomicAdd(total, static_cast<float>(square(b[i])));
  )",
      "__device__ inline double square(double v) { return v * v; }", true,
      1024);
  auto src = fancy.source({ops::ones({64}, float16), ops::ones({64}, float64)},
                          {.output_shapes = {{8}, {1}},
                           .output_dtypes = {int32, float32},
                           .template_args = {{"Bins", 8}, {"Flag", true}}});
  EXPECT_EQ(nvrtc(src), "") << src;

  fast::CudaKernel broken("broken", {"inp"}, {"out"},
                          "const int i = 0;\nout[i] = undefined_name;\n");
  std::string log = nvrtc(broken.source(
      {ops::ones({2})}, {.output_shapes = {{2}}, .output_dtypes = {float32}}));
  EXPECT_NE(log.find("NVRTC"), std::string::npos) << log;
  EXPECT_NE(log.find("broken:source(2)"), std::string::npos) << log;
  EXPECT_NE(log.find("undefined_name"), std::string::npos) << log;
}
