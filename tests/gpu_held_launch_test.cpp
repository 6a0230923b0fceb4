// Kernels held back across primitives (src/backend/cuda/launch.cuh): the
// few-row product, RMS norms, RoPE, the decode attention and KV-cache
// writes of one evaluation go out together as CUDA graphs. A decode-like
// step built whole and evaluated once (launches held across every held
// primitive, with cuBLAS products, softmax, AddMM's nested few-row product,
// a second stream and host reads between them) must give the bits of the
// same ops evaluated one at a time (each eval launches what it held), and
// the held launches must really go through graphs. Skipped without a GPU.
#include <gtest/gtest.h>

#include <nuvec/compile.h>
#include <nuvec/fast.h>

#include "support/gpu.h"

using namespace nuvec;
using namespace nuvec::testing;

namespace {

constexpr int kHidden = 64, kHeads = 4, kKvHeads = 2, kHeadDim = 16, kSteps = 6, kLen = 16;

Array gpu_values(DType dt, const Shape& shape, uint32_t seed, float scale = 0.3f) {
  Array a = ops::copy(ops::astype(random::normal(shape, random::key(seed), kCpu) * scale, dt, kCpu), Device::gpu);
  a.eval();
  return a;
}

struct Weights {
  Array norm, qkv, o, big, c;
};

// One step on (x, residual) at position `pos`, caches updated in place of
// `kc` / `vc`; with `each`, every op is evaluated as it is made.
Arrays step(const Weights& w, Array x, Array res, Array& kc, Array& vc, int pos, bool each, Stream other) {
  auto ev = [&](Array a) {
    if (each) a.eval();
    return a;
  };
  auto [h, n] = fast::add_rms_norm(x, res, w.norm, 1e-5f);
  h = ev(h), n = ev(n);
  Array qkv = ev(ops::matmul(n, ops::transpose(w.qkv)));  // [1, 1, 128]: few rows
  Array q = ev(ops::transpose(ops::reshape(ops::slice(qkv, {0, 0, 0}, {1, 1, 64}), {1, 1, kHeads, kHeadDim}),
                              {0, 2, 1, 3}));
  Array k = ev(ops::transpose(
      ops::reshape(ops::slice(qkv, {0, 0, 64}, {1, 1, 96}), {1, 1, kKvHeads, kHeadDim}), {0, 2, 1, 3}));
  Array v = ev(ops::transpose(
      ops::reshape(ops::slice(qkv, {0, 0, 96}, {1, 1, 128}), {1, 1, kKvHeads, kHeadDim}), {0, 2, 1, 3}));
  q = ev(fast::rope(q, kHeadDim, false, 10000.0f, 1.0f, pos));
  k = ev(fast::rope(k, kHeadDim, false, 10000.0f, 1.0f, pos));
  kc = ev(ops::slice_update(kc, k, {0, 0, pos, 0}, {1, kKvHeads, pos + 1, kHeadDim}));
  vc = ev(ops::slice_update(vc, v, {0, 0, pos, 0}, {1, kKvHeads, pos + 1, kHeadDim}));
  Array keys = ev(ops::slice(kc, {0, 0, 0, 0}, {1, kKvHeads, pos + 1, kHeadDim}));
  Array vals = ev(ops::slice(vc, {0, 0, 0, 0}, {1, kKvHeads, pos + 1, kHeadDim}));
  Array att = ev(fast::scaled_dot_product_attention(q, keys, vals, 0.25f));
  Array flat = ev(ops::reshape(ops::transpose(att, {0, 2, 1, 3}), {1, 1, kHidden}));
  Array o = ev(ops::matmul(flat, ops::transpose(w.o)));                   // few rows
  Array wide = ev(ops::matmul(ops::broadcast_to(o, {1, 32, kHidden}), w.big));  // 32 rows: cuBLAS
  Array soft = ev(ops::softmax(wide, -1));              // not held
  Array mm = ev(ops::addmm(w.c, ops::reshape(n, {1, kHidden}), w.big, 0.5f, 2.0f));  // AddMM, nested few-row
  Array side = each ? ev(ops::multiply(o, o, other)) : ops::multiply(o, o, other);  // another stream reads o
  Array out = ev(ops::add(ops::add(o, side), ops::sum(soft, 1, true)));
  return {out, h, mm};
}

TEST(GpuHeldLaunches, ADecodeStepEqualsItsOpsEvaluatedOneByOne) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, bfloat16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Weights w{gpu_values(dt, {kHidden}, 1), gpu_values(dt, {128, kHidden}, 2), gpu_values(dt, {kHidden, kHidden}, 3),
              gpu_values(dt, {kHidden, kHidden}, 4), gpu_values(dt, {1, kHidden}, 5)};
    Stream other = new_stream(Device::gpu);
    Array kc_a = ops::zeros({1, kKvHeads, kLen, kHeadDim}, dt, Device::gpu), vc_a = ops::zeros_like(kc_a);
    Array kc_b = ops::zeros({1, kKvHeads, kLen, kHeadDim}, dt, Device::gpu), vc_b = ops::zeros_like(kc_b);
    nuvec::eval({kc_a, vc_a, kc_b, vc_b});
    Array x = gpu_values(dt, {1, 1, kHidden}, 10), res = gpu_values(dt, {1, 1, kHidden}, 11);
    Array xa = x, ra = res, xb = x, rb = res;
    auto to_cpu = [](const Array& a) { return ops::copy(a, Device::cpu); };
    Weights wc{to_cpu(w.norm), to_cpu(w.qkv), to_cpu(w.o), to_cpu(w.big), to_cpu(w.c)};
    Array kc_c = to_cpu(kc_a), vc_c = to_cpu(vc_a), xc = to_cpu(x), rc = to_cpu(res);
    const float tol = dt == float32 ? 1e-4f : 3e-2f;
    const auto graphs_before = jit::stats().gpu_graph_launches;
    for (int pos = 0; pos < kSteps; ++pos) {
      Arrays a = step(w, xa, ra, kc_a, vc_a, pos, true, other);
      Arrays b = step(w, xb, rb, kc_b, vc_b, pos, false, other);
      Arrays c;
      with_stream(kCpu, [&] { c = step(wc, xc, rc, kc_c, vc_c, pos, false, kCpu); });
      if (pos % 2 == 0) async_eval(b);  // odd steps build on unevaluated values
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(bits_of(a[i]), bits_of(b[i])) << "step " << pos << ", output " << i;
      for (size_t i = 0; i < a.size(); ++i)
        EXPECT_TRUE(ops::allclose(ops::astype(to_cpu(b[i]), float32), ops::astype(c[i], float32, kCpu), tol, tol)
                        .item<bool>())
            << "step " << pos << ", output " << i << " against the CPU";
      xa = ops::astype(a[0], dt), ra = a[1], xb = ops::astype(b[0], dt), rb = b[1];
      with_stream(kCpu, [&] { xc = ops::astype(c[0], dt), rc = c[1]; });
    }
    EXPECT_EQ(bits_of(kc_a), bits_of(kc_b));
    EXPECT_EQ(bits_of(vc_a), bits_of(vc_b));
    const char* mode = std::getenv("NUVEC_GPU_GRAPHS");
    const char* batch = std::getenv("NUVEC_GPU_BATCH");
    // The whole-step evaluations hold at least their norms, products, RoPE,
    // attention and cache writes (10 kernels a step).
    if (!(mode && std::string(mode) == "0") && !(batch && std::atoi(batch) <= 1))
      EXPECT_GE(jit::stats().gpu_graph_launches - graphs_before, uint64_t(10 * kSteps));
  }
}

// A long chain of held kernels, each reading its predecessor's output and
// writing buffers its predecessors freed (the programmatic edges of
// module.cpp: a kernel may start before the one before it ends, and must
// wait for it; a product reads constant weights before that, but not a
// matrix its predecessor writes): the chain evaluated whole equals it
// evaluated op by op, bit for bit, in float32 and bfloat16, with quantized
// products and products by a just-computed matrix in it.
TEST(GpuHeldLaunches, ALongDependentChainEqualsItsOpsEvaluatedOneByOne) {
  NUVEC_GPU_REQUIRED();
  constexpr int kWidth = 1024, kDepth = 24;
  for (DType dt : {float32, bfloat16}) {
    SCOPED_TRACE(std::string(dtype_name(dt)));
    Array w = gpu_values(dt, {kWidth, kWidth}, 20, 0.03f), norm = gpu_values(dt, {kWidth}, 21);
    std::vector<Array> packed = ops::quantize(w, 64, 4);
    nuvec::eval(packed);
    Array x0 = gpu_values(dt, {1, kWidth}, 22);
    auto chain = [&](bool each) {
      Array x = x0;
      for (int i = 0; i < kDepth; ++i) {
        if (i % 4 == 3) {
          // A matrix made by the kernel just before the product that reads it.
          Array made = fast::rms_norm(w, norm, 1e-5f);
          if (each) made.eval();
          x = ops::matmul(x, ops::transpose(made));
        } else {
          x = i % 4 == 2 ? ops::quantized_matmul(x, packed[0], packed[1], packed[2], true, 64, 4)
                         : ops::matmul(x, ops::transpose(w));
        }
        if (each) x.eval();
        x = fast::rms_norm(x, norm, 1e-5f);
        if (each) x.eval();
      }
      x.eval();
      return x;
    };
    const auto graphs_before = jit::stats().gpu_graph_launches;
    Array whole = chain(false);
    const auto graphs_whole = jit::stats().gpu_graph_launches - graphs_before;
    Array each = chain(true);
    EXPECT_EQ(bits_of(whole), bits_of(each));
    // Not a constant: the chain's values still depend on its input.
    EXPECT_GT(ops::max(ops::abs(ops::astype(whole, float32))).item<float>(), 0.1f);
    const char* mode = std::getenv("NUVEC_GPU_GRAPHS");
    const char* batch = std::getenv("NUVEC_GPU_BATCH");
    if (!(mode && std::string(mode) == "0") && !(batch && std::atoi(batch) <= 1))
      EXPECT_GE(graphs_whole, uint64_t(2 * kDepth));
  }
}

}  // namespace
