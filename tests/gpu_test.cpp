// The GPU backend against the CPU (a cross-backend harness, ggml's idea):
// every element-wise primitive on random inputs of several shapes, layouts
// and dtypes gives the CPU's bits (the same functors, no contraction).
// Skipped where no GPU is present (CI); scripts/gpu.sh runs it on the H200.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "support/gpu.h"
#include <nuvec/nuvec.h>

using namespace nuvec;
using namespace nuvec::testing;

namespace {

// Inputs in several layouts: dense, transposed, a broadcast row, a scalar.
std::vector<Array> layouts(DType dt, int seed) {
  auto values = [&](const Shape& s, int k) {
    Array x = random::normal(s, random::key(seed * 10 + k)) * 3.0f;
    return dt == bool_ ? x > 0.0f : x.astype(dt);
  };
  return {values({37, 129}, 0), ops::transpose(values({129, 37}, 1)), values({129}, 2), values({}, 3)};
}

}  // namespace

TEST(Gpu, AvailabilityIsReported) {
  if (is_available(Device::gpu)) {
    Array x = ops::add(array({1.0f, 2.0f}), array({3.0f, 4.0f}), Device::gpu);
    EXPECT_EQ(x.to_vector<float>(), (std::vector<float>{4.0f, 6.0f}));
  } else {
    EXPECT_THROW(set_default_device(Device::gpu), Error);
    expect_eval_error(ops::add(array({1.0f}), array({3.0f}), Device::gpu), "GPU is not available");
  }
}

TEST(Gpu, UnaryPrimitivesMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  using U = std::function<Array(const Array&, StreamOrDevice)>;
  std::vector<std::pair<const char*, U>> unary = {
#define NUVEC_ENTRY(name) {#name, [](const Array& x, StreamOrDevice s) { return ops::name(x, s); }},
      NUVEC_UNARY_OPS(NUVEC_ENTRY)
#undef NUVEC_ENTRY
  };
  for (DType dt : kDtypes)
    for (const auto& x : layouts(dt, 1))
      for (const auto& [name, f] : unary)
        expect_same([&, f = f](StreamOrDevice s) { return f(x, s); },
                    std::string(name) + " " + std::string(dtype_name(dt)));
}

TEST(Gpu, BinaryPrimitivesMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  using B = std::function<Array(const Array&, const Array&, StreamOrDevice)>;
  std::vector<std::pair<const char*, B>> binary = {
#define NUVEC_ENTRY(name) \
  {#name, [](const Array& a, const Array& b, StreamOrDevice s) { return ops::name(a, b, s); }},
      NUVEC_BINARY_OPS(NUVEC_ENTRY)
#undef NUVEC_ENTRY
  };
  for (DType dt : kDtypes) {
    auto xs = layouts(dt, 2), ys = layouts(dt, 3);
    for (size_t i = 0; i < xs.size(); ++i)
      for (const auto& [name, f] : binary)
        expect_same([&, f = f](StreamOrDevice s) { return f(xs[i], ys[(i + 1) % ys.size()], s); },
                    std::string(name) + " " + std::string(dtype_name(dt)) + " layout " + std::to_string(i));
  }
}

TEST(Gpu, SelectAndCastsMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  for (DType from : kDtypes)
    for (const auto& x : layouts(from, 4)) {
      for (DType to : kDtypes)
        expect_same([&](StreamOrDevice s) { return ops::astype(x, to, s); },
                    "astype " + std::string(dtype_name(from)) + " -> " + std::string(dtype_name(to)));
      Array c = layouts(bool_, 5)[0];
      expect_same([&](StreamOrDevice s) { return ops::where(c, x, ops::negative(x, kCpu), s); },
                  "where " + std::string(dtype_name(from)));
    }
}

// float32 -> float16/bfloat16 on the GPU (one cvt instruction, NaN payloads
// kept by a test before it) gives the CPU's bits: NaNs with payloads and signs,
// infinities, the overflow threshold, ties, subnormals, and random words.
TEST(Gpu, HalfRoundingKeepsTheCpuBits) {
  NUVEC_GPU_REQUIRED();
  std::vector<uint32_t> special = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa5a5a5u, 0xff812345u,
                                   0x7f800000u, 0xff800000u, 0x477ff000u, 0x477fefffu, 0x47800000u,
                                   0x33800000u, 0x33000000u, 0x00000001u, 0x80000000u, 0x00000000u,
                                   0x3f800001u, 0x3f808000u, 0x3f818000u, 0x38800000u, 0x387fc000u};
  Array words = ops::concatenate({array(special, {static_cast<int>(special.size())}),
                                  random::bits({4096}, 4, random::key(12)).astype(uint32)});
  Array x = ops::view(words, float32);
  for (DType to : {float16, bfloat16})
    expect_same([&](StreamOrDevice s) { return ops::view(ops::astype(x, to, s), uint16); },
                "float32 -> " + std::string(dtype_name(to)));
}

// The premise of kernels::from_arith: on the GPU, + - * / and sqrt give the
// canonical NaN 0x7fffffff whatever the NaN operands' signs and payloads
// (float32), so their float16/bfloat16 results that are NaN are 0x7fff,
// the CPU's rounding of that NaN; every other result is the CPU's.
TEST(Gpu, ArithmeticNaNsAreCanonical) {
  NUVEC_GPU_REQUIRED();
  std::vector<uint32_t> special = {0x7fc00000u, 0xffc00001u, 0x7f800001u, 0x7fa5a5a5u, 0xff812345u,
                                   0xffffffffu, 0x7f800000u, 0xff800000u, 0x00000000u, 0x80000000u,
                                   0x3f800000u, 0xbf800000u, 0x00000001u, 0x7f7fffffu};
  const int n = static_cast<int>(special.size());
  std::vector<uint32_t> a, b;  // every pair
  for (uint32_t u : special)
    for (uint32_t v : special) a.push_back(u), b.push_back(v);
  Array x = ops::view(array(a, {n * n}), float32), y = ops::view(array(b, {n * n}), float32);
  using Op = std::function<Array(const Array&, const Array&, StreamOrDevice)>;
  std::vector<std::pair<const char*, Op>> arith = {
      {"add", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::add(p, q, s); }},
      {"subtract", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::subtract(p, q, s); }},
      {"multiply", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::multiply(p, q, s); }},
      {"divide", [](const Array& p, const Array& q, StreamOrDevice s) { return ops::divide(p, q, s); }},
      {"sqrt", [](const Array& p, const Array&, StreamOrDevice s) { return ops::sqrt(p, s); }},
  };
  for (const auto& [name, op] : arith) {
    SCOPED_TRACE(name);
    auto f32 = ops::view(op(x, y, Device::gpu), uint32).to_vector<uint32_t>();
    auto cpu = op(x, y, kCpu).to_vector<float>();
    for (size_t i = 0; i < f32.size(); ++i)
      if (std::isnan(cpu[i])) EXPECT_EQ(f32[i], 0x7fffffffu) << "pair " << i;
    for (DType dt : {float16, bfloat16}) {
      Array xh = x.astype(dt), yh = y.astype(dt);
      auto gpu = ops::view(op(xh, yh, Device::gpu), uint16).to_vector<uint16_t>();
      auto want = ops::view(op(xh, yh, kCpu), uint16).to_vector<uint16_t>();
      auto wide = op(xh, yh, kCpu).astype(float32).to_vector<float>();
      for (size_t i = 0; i < gpu.size(); ++i)
        EXPECT_EQ(gpu[i], std::isnan(wide[i]) ? uint16_t{0x7fff} : want[i]) << dtype_name(dt) << " pair " << i;
    }
  }
}

// Linear algebra runs on the CPU only (as MLX's): on a GPU stream the node
// fails and says so, never a silent CPU run.
TEST(Gpu, LinalgSaysItRunsOnTheCpu) {
  NUVEC_GPU_REQUIRED();
  expect_eval_error(linalg::inv(array({2.0f, 0.0f, 0.0f, 4.0f}, {2, 2}), Device::gpu), "CPU only");
}

TEST(Gpu, ChainsStayOnTheDeviceAndReadBack) {
  NUVEC_GPU_REQUIRED();
  Array x = random::normal({1 << 20}, random::key(9));
  auto chain = [&](StreamOrDevice s) {
    Array t = ops::multiply(x, x, s);
    t = ops::add(ops::exp(ops::negative(t, s), s), ops::sin(x, s), s);
    return ops::astype(ops::maximum(t, array(0.25f), s), bfloat16, s);
  };
  Array g = chain(Device::gpu);
  g.eval();
  EXPECT_EQ(g.desc()->data->device, Device::gpu);
  EXPECT_EQ(bits_of(g), bits_of(chain(kCpu)));
}

TEST(Gpu, ReductionsMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  using R = std::function<Array(const Array&, const Axes&, StreamOrDevice)>;
  std::vector<std::pair<const char*, R>> reductions = {
#define NUVEC_ENTRY(name) \
  {#name, [](const Array& x, const Axes& a, StreamOrDevice s) { return ops::name(x, a, false, s); }},
      NUVEC_ENTRY(sum) NUVEC_ENTRY(prod) NUVEC_ENTRY(max) NUVEC_ENTRY(min) NUVEC_ENTRY(all) NUVEC_ENTRY(any)
#undef NUVEC_ENTRY
  };
  for (DType dt : kDtypes) {
    auto values = [&](const Shape& s, int k) {
      Array x = random::uniform(0.5f, 1.5f, s, float32, random::key(k));
      return dt == bool_ ? x > 1.0f : (x * 2.0f).astype(dt);
    };
    Array cube = values({6, 37, 9}, 1);
    Array t = ops::transpose(values({9, 37, 6}, 2));
    Array rows = values({4, 5000}, 3);
    for (const auto& [name, f] : reductions) {
      std::string w = std::string(name) + " " + std::string(dtype_name(dt));
      for (const Axes& a : {Axes{2}, Axes{0}, Axes{0, 2}, Axes{0, 1, 2}})
        for (const Array* x : {&cube, &t})
          expect_close([&, f = f](StreamOrDevice s) { return f(*x, a, s); }, tolerance(dt) * 10, w);
      if (std::string(name) != "prod")
        expect_close([&, f = f](StreamOrDevice s) { return f(rows, Axes{1}, s); }, tolerance(dt) * 10, w + " rows");
    }
  }
}

TEST(Gpu, MatmulMatchesTheCpu) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, float64, float16, bfloat16, complex64}) {
    auto m = [&](const Shape& s, int k) { return (random::normal(s, random::key(k)) * 0.5f).astype(dt); };
    std::string w(dtype_name(dt));
    Array a = m({64, 40}, 1), b = m({40, 48}, 2);
    expect_close([&](StreamOrDevice s) { return ops::matmul(a, b, s); }, tolerance(dt), w);
    Array ta = ops::transpose(m({40, 64}, 3)), tb = ops::transpose(m({48, 40}, 4));
    expect_close([&](StreamOrDevice s) { return ops::matmul(ta, tb, s); }, tolerance(dt), w + " transposed");
    Array ba = m({3, 64, 40}, 5);
    expect_close([&](StreamOrDevice s) { return ops::matmul(ba, b, s); }, tolerance(dt), w + " batched");
    Array sl = ops::slice(m({64, 80}, 6), {0, 0}, {64, 80}, {1, 2});  // strided: copied dense
    expect_close([&](StreamOrDevice s) { return ops::matmul(sl, b, s); }, tolerance(dt), w + " strided");
    // Batches not evenly spaced (one cuBLAS call per matrix), and a batch of
    // b broadcast over a's (stride 0, one cuBLASLt call).
    Array uneven = ops::transpose(m({3, 2, 64, 40}, 7), {1, 0, 2, 3});
    expect_close([&](StreamOrDevice s) { return ops::matmul(uneven, b, s); }, tolerance(dt), w + " uneven batch");
    Array one_b = m({1, 40, 48}, 8);
    expect_close([&](StreamOrDevice s) { return ops::matmul(ba, one_b, s); }, tolerance(dt), w + " broadcast batch");
  }
  float tf32_sensitive = ops::matmul(array({1.0f + 0x1p-20f}, {1, 1}), array({1.0f}, {1, 1}), Device::gpu).item<float>();
  EXPECT_EQ(tf32_sensitive, 1.0f + 0x1p-20f) << "float32 products must not round to TF32";
}

// A product never reads its output's old bytes (cuBLASLt runs with beta 0
// and D as C): written over a freed buffer of NaNs, which the stream's
// cache hands back, it is the CPU's product.
TEST(Gpu, MatmulIgnoresTheOutputsOldBytes) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, bfloat16, float64}) {
    Array a = random::normal({64, 40}, random::key(21)).astype(dt);
    Array b = random::normal({40, 48}, random::key(22)).astype(dt);
    nuvec::eval({a, b});
    expect_close(
        [&](StreamOrDevice s) {
          if (to_stream(s).device == Device::gpu) {
            Array junk = ops::add(ops::zeros({64, 48}, dt, s), array(std::nanf("")).astype(dt), s);
            junk.eval();
            junk = Array();
            EXPECT_GE(get_cache_memory(Device::gpu), size_t(64 * 48) * dt.size());
          }
          return ops::matmul(a, b, s);
        },
        tolerance(dt), std::string(dtype_name(dt)));
  }
}

// addmm through cuBLASLt (a Linear layer's bias in the epilogue, a full c
// in C = D, batched, 16-bit floats) within matmul's tolerance of the CPU.
TEST(Gpu, AddMMMatchesTheCpu) {
  NUVEC_GPU_REQUIRED();
  for (DType dt : {float32, float64, float16, bfloat16}) {
    auto m = [&](const Shape& s, int k) { return (random::normal(s, random::key(k)) * 0.5f).astype(dt); };
    std::string w(dtype_name(dt));
    Array x = m({64, 128}, 11), weight = ops::transpose(m({96, 128}, 12)), bias = m({96}, 13);
    Array full = m({64, 96}, 14), bx = m({4, 64, 128}, 15);
    for (float alpha : {1.0f, 0.5f}) {
      std::string a = " alpha " + std::to_string(alpha);
      expect_close([&](StreamOrDevice s) { return ops::addmm(bias, x, weight, alpha, 1.0f, s); }, tolerance(dt),
                   w + " bias" + a);
      expect_close([&](StreamOrDevice s) { return ops::addmm(bias, bx, weight, alpha, 1.0f, s); }, tolerance(dt),
                   w + " batched bias" + a);
      expect_close([&](StreamOrDevice s) { return ops::addmm(full, x, weight, alpha, -2.0f, s); }, tolerance(dt),
                   w + " full c" + a);
      expect_close([&](StreamOrDevice s) { return ops::addmm(bias, bx, weight, alpha, 0.5f, s); }, tolerance(dt),
                   w + " batched, bias with beta 0.5" + a);
    }
  }
}

// set_matmul_tf32(true) opts in to TF32 tensor cores: an operand 1 + 2^-20
// rounds to 1 (a @ ones with a = (1 + 2^-20) I gives 1 instead of 1 + 2^-20).
TEST(Gpu, MatmulTf32IsAnExplicitOption) {
  NUVEC_GPU_REQUIRED();
  const float v = 1.0f + 0x1p-20f;
  Array a = ops::eye(256) * v, b = ops::ones({256, 256});
  auto corner = [&] { return ops::matmul(a, b, Device::gpu).to_vector<float>()[0]; };
  ASSERT_FALSE(matmul_tf32());
  EXPECT_EQ(corner(), v);
  set_matmul_tf32(true);
  float rounded = corner();
  set_matmul_tf32(false);
  EXPECT_EQ(rounded, 1.0f);
  EXPECT_EQ(corner(), v);
}

TEST(Gpu, RandomBitsAndArangeMatchTheCpu) {
  NUVEC_GPU_REQUIRED();
  Array keys = random::split(random::key(11), 3);
  for (int width : {1, 2, 4})
    for (int n : {1, 2, 3, 7, 33, 1000})
      expect_same([&](StreamOrDevice s) { return random::bits({n}, width, random::key(n), s); },
                  "bits width " + std::to_string(width) + " n " + std::to_string(n));
  expect_same([&](StreamOrDevice s) { return random::split(random::key(5), 7, s); }, "split");
  for (DType dt : {float32, float16, bfloat16})
    for (int n : {1, 5, 4096})
      expect_same([&](StreamOrDevice s) { return random::uniform({n}, dt, random::key(n), s); },
                  "uniform " + std::string(dtype_name(dt)));
  expect_same([&](StreamOrDevice s) { return random::normal({999}, float32, std::nullopt, std::nullopt, random::key(3), s); }, "normal");
  expect_same([&](StreamOrDevice s) { return ops::arange(0.0, 10.0, 0.1, float32, s); }, "arange");
}

// Work is enqueued asynchronously: a consumer on another stream waits for
// its producer on the GPU, async_eval returns before the work is done and a
// read waits for it, and results do not depend on what else was allocated
// or run in between.
TEST(Gpu, StreamsAsyncEvalAndDeterminism) {
  NUVEC_GPU_REQUIRED();
  Array x = random::normal({1 << 22}, random::key(21));
  Stream s1 = new_stream(Device::gpu), s2 = new_stream(Device::gpu);
  auto chain = [&](StreamOrDevice first, StreamOrDevice second) {
    Array a = ops::exp(ops::sin(x, first), first);
    return ops::sum(ops::multiply(a, a, second), false, second);
  };
  Array expect = chain(kCpu, kCpu);
  Array two = chain(s1, s2);
  async_eval(two);
  EXPECT_NEAR(two.item<float>(), expect.item<float>(), 1e-3 * std::abs(expect.item<float>()));
  auto first = bits_of(chain(Device::gpu, Device::gpu));
  for (int round = 0; round < 3; ++round) {
    std::vector<Array> noise;
    for (int k = 1; k < 6; ++k) noise.push_back(ops::add(random::normal({1000 * k + round}, random::key(k)), 1.0f, Device::gpu));
    nuvec::eval(noise);
    EXPECT_EQ(bits_of(chain(s2, s1)), first) << "round " << round;
  }
}

// Host arrays larger than a staging slot go to the GPU in pinned chunks of
// 2 MiB through a ring of 8 (16 MiB): arrays of several ring lengths, sizes
// that are not multiples of a chunk, on two streams with a large product
// queued ahead, arrive whole and in place.
TEST(Gpu, LargeUploadsArriveWhole) {
  NUVEC_GPU_REQUIRED();
  Stream other = new_stream(Device::gpu);
  Array busy = random::normal({2048, 2048}, random::key(4), Device::gpu);
  for (int n : {(2 << 20) / 4 + 1, 5'000'003, 11'000'017}) {
    std::vector<float> v(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) v[i] = static_cast<float>(i % 1000003) * 0.5f;
    Array x = array<float>(v, {n});
    Array product = ops::matmul(busy, busy, Device::gpu);  // work ahead of the copy
    Array a = ops::add(x, 1.0f, Device::gpu), b = ops::subtract(x, 1.0f, other);
    nuvec::eval({product, a, b});
    std::vector<float> va = a.to_vector<float>(), vb = b.to_vector<float>();
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(va[i], v[i] + 1.0f) << n << " " << i;
      ASSERT_EQ(vb[i], v[i] - 1.0f) << n << " " << i;
    }
  }
  std::vector<int8_t> bytes(3 * (2 << 20) + 7);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<int8_t>(i * 7 % 251 - 125);
  Array y = ops::add(array<int8_t>(bytes, {static_cast<int>(bytes.size())}), int8_t(1), Device::gpu);
  std::vector<int8_t> vy = y.to_vector<int8_t>();
  for (size_t i = 0; i < bytes.size(); ++i) ASSERT_EQ(vy[i], static_cast<int8_t>(bytes[i] + 1)) << i;
}

// Waits between streams and from the host go through events recorded when
// the wait comes (src/backend/cuda/timeline.h): a reader on another stream
// and a host read after async_eval each see their writer's result, while
// the writer's stream has slow work ahead of the write and more queued
// behind it, over rounds that reuse the recorded events.
TEST(Gpu, WaitsFindTheirWrites) {
  NUVEC_GPU_REQUIRED();
  Stream a = new_stream(Device::gpu), b = new_stream(Device::gpu);
  Array w = ops::multiply(random::normal({2048, 2048}, random::key(5), a), 1e-3f, a);
  Array x = random::normal({1 << 20}, random::key(6), a);
  nuvec::eval({w, x});
  const std::vector<float> xs = x.to_vector<float>();
  for (int round = 0; round < 4; ++round) {
    Array slow = w;
    for (int k = 0; k < 4; ++k) slow = ops::matmul(slow, w, a);  // ahead of the write on a
    Array written = ops::add(ops::multiply(x, float(round + 2), a), ops::sum(slow, false, a) * 0.0f, a);
    Array read = ops::add(written, 1.0f, b);  // waits on b for a's write
    async_eval({read});
    Array behind = ops::matmul(slow, w, a);  // queued on a behind the write
    async_eval({behind});
    std::vector<float> got = read.to_vector<float>(), direct = written.to_vector<float>();
    for (size_t i = 0; i < xs.size(); ++i) {
      const float expect = xs[i] * float(round + 2);
      ASSERT_EQ(direct[i], expect) << round << " " << i;
      ASSERT_EQ(got[i], expect + 1.0f) << round << " " << i;
    }
  }
}

// A schedule of GPU work, started on the worker, gives eager's bits.
TEST(Gpu, ScheduledWorkMatchesTheCpu) {
  NUVEC_GPU_REQUIRED();
  Array x = random::normal({1 << 16}, random::key(8));
  auto chain = [&](StreamOrDevice s) { return ops::exp(ops::sin(ops::multiply(x, 3.0f, s), s), s); };
  Array g = chain(Device::gpu);
  Scheduled s = schedule({g});
  s.async_eval();
  EXPECT_EQ(bits_of(g), bits_of(chain(kCpu)));
  s.eval();
  EXPECT_EQ(g.desc()->data->device, Device::gpu);
}
