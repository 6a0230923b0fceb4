// The checks of the cross-backend harness (tests/gpu_ops_test.cpp) for the
// primitives that are not element-wise, copies or views: reductions,
// creation and random bits, gathers and scatters, sorting and scans,
// convolution, linear algebra, compile and users' CUDA kernels.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "support/gpu_ops.h"

namespace nuvec::testing::gpu_ops {

// ---- reductions ----

void check_Reduce() {
  using R =
      Array (*)(const Array&, const Axes&, bool, StreamOrDevice, Location);
  std::pair<const char*, R> reductions[] = {
      {"sum", ops::sum}, {"prod", ops::prod}, {"max", ops::max},
      {"min", ops::min}, {"all", ops::all},   {"any", ops::any}};
  for (DType dt : kDtypes) {
    auto positive = [&](const Shape& s, int k) {
      Array x = random::uniform(0.5f, 1.5f, s, float32, random::key(k));
      return dt == bool_ ? x > 1.0f : (x * 2.0f).astype(dt);
    };
    Input xs[] = {{"dense", positive({6, 32}, 38)},
                  {"transposed", ops::transpose(positive({32, 6}, 39))},
                  {"sliced", ops::slice(positive({12, 64}, 40), {0, 1},
                                        {12, 64}, {2, 2})}};
    for (const auto& [op, f] : reductions)
      for (const auto& in : xs)
        for (const Axes& a : {Axes{0}, Axes{1}, Axes{0, 1}})
          expect_close(
              [&, f = f](StreamOrDevice s) {
                return f(in.x, a, false, s, NUVEC_LOC);
              },
              tolerance(dt) * 10,
              std::string(op) + " " + name(dt) + " " + in.layout);
  }
}

// Ties (few distinct values), signed zeros and NaNs, short and long rows.
void check_ArgReduce() {
  for (DType dt : kDtypes) {
    auto tied = [&](const Shape& s, int k) {
      Array x = ops::floor(random::normal(s, random::key(k)) * 1.5f);
      if (dt == bool_) return x > 0.0f;
      if (is_floating(dt) || dt == complex64) {
        Array u = random::uniform(s, float32, random::key(k + 1));
        x = ops::where(u < 0.05f, array(NAN),
                       ops::where(u > 0.9f, x * 0.0f, x));
      }
      return x.astype(dt);
    };
    Input xs[] = {
        {"dense", tied({6, 32}, 41)},
        {"transposed", ops::transpose(tied({32, 6}, 43))},
        {"broadcast", ops::broadcast_to(tied({32}, 45), {6, 32})},
        {"sliced", ops::slice(tied({12, 64}, 47), {0, 1}, {12, 64}, {2, 2})},
        {"long rows", tied({3, 5000}, 49)}};
    for (const auto& in : xs)
      for (int axis : {0, 1}) {
        std::string w =
            name(dt) + " " + in.layout + " axis " + std::to_string(axis);
        expect_same(
            [&](StreamOrDevice s) { return ops::argmax(in.x, axis, false, s); },
            "argmax " + w);
        expect_same(
            [&](StreamOrDevice s) { return ops::argmin(in.x, axis, true, s); },
            "argmin " + w);
      }
    expect_same(
        [&](StreamOrDevice s) { return ops::argmax(xs[1].x, false, s); },
        "argmax flat " + name(dt));
  }
}

// mean divides by NumberOf; integer values keep the sums exact, so the
// quotient is the CPU's bits.
void check_NumberOf() {
  for (DType dt : {float32, float64, int32, uint8, int64}) {
    auto xs = layouts(dt, 51);
    for (const auto& in : xs)
      for (const Axes& a : {Axes{0}, Axes{1}, Axes{0, 1}})
        expect_same(
            [&](StreamOrDevice s) {
              return ops::mean(ops::round(in.x, 0, s), a, false, s);
            },
            "mean " + name(dt) + " " + in.layout);
  }
}

void check_Matmul() {
  for (DType dt : {float32, float64, float16, bfloat16, complex64}) {
    auto m = [&](const Shape& s, int k) {
      return (random::normal(s, random::key(k)) * 0.5f).astype(dt);
    };
    Array a = m({24, 40}, 52), b = m({40, 16}, 53),
          ta = ops::transpose(m({40, 24}, 54));
    Array ba = m({3, 24, 40}, 55),
          sl = ops::slice(m({24, 80}, 56), {0, 0}, {24, 80}, {1, 2});
    for (const Array* x : {&a, &ta, &ba, &sl})
      expect_close([&](StreamOrDevice s) { return ops::matmul(*x, b, s); },
                   tolerance(dt), "matmul " + name(dt));
  }
}

// cuBLASLt's bias epilogue (a row c, beta 1, with and without alpha, also
// batched and with a transposed operand), C = D (a full, column or batched
// c, beta != 1, operands copied dense where strided or unevenly batched),
// and k == 0 (separate kernels).
void check_AddMM() {
  for (DType dt : {float32, float64, float16, bfloat16, complex64}) {
    auto m = [&](const Shape& s, int k) {
      return (random::normal(s, random::key(k)) * 0.5f).astype(dt);
    };
    Array a = m({24, 40}, 60), b = m({40, 16}, 61), bias = m({16}, 62);
    Array ta = ops::transpose(m({40, 24}, 63)), full = m({24, 16}, 64);
    Array column = m({24, 1}, 65), ba = m({3, 24, 40}, 66), bb = m({3, 40, 16}, 67);
    Array bc = m({3, 24, 16}, 68), sl = ops::slice(m({24, 80}, 69), {0, 0}, {24, 80}, {1, 2});
    Array ua = m({3, 1, 24, 40}, 70), ub = m({2, 40, 16}, 71);  // batch (3, 2)
    Array a0 = m({24, 0}, 72), b0 = m({0, 16}, 73);
    struct Case {
      const char* what;
      const Array &c, &x, &y;
      float alpha, beta;
    };
    const Case cases[] = {{"bias", bias, a, b, 1.0f, 1.0f},
                          {"bias alpha 0.5", bias, a, b, 0.5f, 1.0f},
                          {"bias transposed", bias, ta, b, -2.0f, 1.0f},
                          {"bias batched", bias, ba, b, 1.0f, 1.0f},
                          {"full beta 0.5", full, a, b, 1.0f, 0.5f},
                          {"full beta 1", full, ta, b, 0.5f, 1.0f},
                          {"column", column, a, b, 1.0f, 1.0f},
                          {"batched c", bc, ba, bb, -2.0f, 0.5f},
                          {"strided", full, sl, b, 1.0f, -2.0f},
                          {"uneven batch", bias, ua, ub, 1.0f, 0.5f},
                          {"k 0", bias, a0, b0, 1.0f, 2.0f}};
    for (const auto& k : cases)
      expect_close(
          [&](StreamOrDevice s) {
            return ops::addmm(k.c, k.x, k.y, k.alpha, k.beta, s);
          },
          tolerance(dt), std::string("addmm ") + k.what + " " + name(dt));
  }
}

// ---- creation and random ----

void check_Arange() {
  for (DType dt : {float32, float64, int32, int64, float16, uint8})
    expect_same(
        [&](StreamOrDevice s) { return ops::arange(0.0, 10.0, 0.3, dt, s); },
        "arange " + name(dt));
}

void check_RandomBits() {
  for (int width : {1, 2, 4})
    for (int n : {1, 7, 1000})
      expect_same(
          [&](StreamOrDevice s) {
            return random::bits({n}, width, random::key(n), s);
          },
          "bits width " + std::to_string(width));
  expect_same(
      [&](StreamOrDevice s) { return random::split(random::key(5), 7, s); },
      "split");
  expect_same(
      [&](StreamOrDevice s) {
        return random::uniform({333}, bfloat16, random::key(8), s);
      },
      "uniform");
}

// ---- gathers and scatters ----

void check_Take() {
  Array i1 = random::randint(-40, 40, {9}, int32,
                             random::key(60));  // out of range: clamped
  Array i2 =
      ops::transpose(random::randint(-8, 8, {5, 3}, int64, random::key(61)));
  Array i3 = ops::slice(random::randint(0, 50, {20}, uint8, random::key(62)),
                        {1}, {20}, {3});
  Array i4 = ops::broadcast_to(
      random::randint(-6, 6, {4}, int16, random::key(63)), {2, 4});
  Array i0 = array(-2);
  Array along1 = random::randint(-40, 40, {6, 7}, int32, random::key(64));
  Array along0 =
      ops::transpose(random::randint(0, 9, {32, 3}, uint32, random::key(65)));
  for (DType dt : kDtypes)
    for (const auto& in : layouts(dt, 66)) {
      std::string w = name(dt) + " " + in.layout;
      for (int axis : {0, 1})
        for (const Array* idx : {&i1, &i2, &i3, &i4, &i0})
          expect_same(
              [&](StreamOrDevice s) { return ops::take(in.x, *idx, axis, s); },
              "take " + w + " axis " + std::to_string(axis));
      expect_same([&](StreamOrDevice s) { return ops::take(in.x, i2, s); },
                  "take flat " + w);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::take_along_axis(in.x, along1, 1, s);
          },
          "take_along_axis 1 " + w);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::take_along_axis(in.x, along0, 0, s);
          },
          "take_along_axis 0 " + w);
    }
  Array big = values(float32, {1000, 1000}, 67),
        many = random::randint(-1000, 1000, {4000}, int32, random::key(68));
  for (int axis : {0, 1})
    expect_same([&](StreamOrDevice s) { return ops::take(big, many, axis, s); },
                "take large axis " + std::to_string(axis));
}

// Repeated positions: set keeps the last update, the others fold in order
// (float sums and products round in that order, so bits tell).
void check_Scatter() {
  Array rows =
      array({0, 2, 2, -1, 5, 2, 0, 9, -9});  // repeats, wrapped and clamped
  Array along = random::randint(0, 6, {9, 32}, int32, random::key(70));
  for (DType dt : kDtypes) {
    Array upd_dense = values(dt, {9, 32}, 71),
          upd_t = ops::transpose(values(dt, {32, 9}, 72));
    auto xs = layouts(dt, 73);
    for (const auto& in : xs) {
      const Array& x = in.x;
      std::string w = name(dt) + " " + in.layout;
      for (const Array* u : {&upd_dense, &upd_t}) {
        expect_same(
            [&](StreamOrDevice s) {
              return on(s, [&] { return x.at(rows).set(*u); });
            },
            "at.set " + w);
        expect_same(
            [&](StreamOrDevice s) {
              return on(s, [&] { return x.at(rows).add(*u); });
            },
            "at.add " + w);
        expect_same(
            [&](StreamOrDevice s) {
              return on(s, [&] { return x.at(rows).multiply(*u); });
            },
            "at.multiply " + w);
        expect_same(
            [&](StreamOrDevice s) {
              return on(s, [&] { return x.at(rows).maximum(*u); });
            },
            "at.maximum " + w);
        expect_same(
            [&](StreamOrDevice s) {
              return on(s, [&] { return x.at(rows).minimum(*u); });
            },
            "at.minimum " + w);
      }
      expect_same(
          [&](StreamOrDevice s) {
            return on(s, [&] { return x.at(rows, slice(1, 30, 3)).add(1.5); });
          },
          "at.add scalar " + w);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::put_along_axis(x, along, upd_t, 0, s);
          },
          "put_along_axis " + w);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::scatter_add_along_axis(x, along, upd_dense, 0, s);
          },
          "scatter_add_along_axis " + w);
      expect_same(
          [&](StreamOrDevice s) {
            return ops::slice_update(x, values(dt, {2, 5}, 74), array({3, 20}),
                                     {0, 1}, s);
          },
          "slice_update " + w);
    }
    // Many updates to few places (long runs of one destination).
    Array flat = values(dt, {50}, 75);
    Array many = random::randint(-60, 60, {4000}, int32, random::key(76));
    Array upd = values(dt, {4000}, 77);
    expect_same(
        [&](StreamOrDevice s) {
          return on(s, [&] { return flat.at(many).add(upd); });
        },
        "many at.add " + name(dt));
    expect_same(
        [&](StreamOrDevice s) {
          return on(s, [&] { return flat.at(many).set(upd); });
        },
        "many at.set " + name(dt));
  }
  // A million updates of 65536 places.
  Array big = values(float32, {1 << 16}, 81),
        big_pos =
            random::randint(0, 1 << 16, {1 << 20}, int32, random::key(82));
  Array big_upd = values(float32, {1 << 20}, 83);
  expect_same(
      [&](StreamOrDevice s) {
        return on(s, [&] { return big.at(big_pos).add(big_upd); });
      },
      "large at.add");
  expect_same(
      [&](StreamOrDevice s) {
        return on(s, [&] { return big.at(big_pos).set(big_upd); });
      },
      "large at.set");
  // NaNs in max/min updates.
  Array x = values(float32, {6, 32}, 78);
  Array u =
      ops::where(random::uniform({9, 32}, float32, random::key(79)) < 0.2f,
                 array(NAN), values(float32, {9, 32}, 80));
  expect_same(
      [&](StreamOrDevice s) {
        return on(s, [&] { return x.at(rows).maximum(u); });
      },
      "at.maximum NaN");
  expect_same(
      [&](StreamOrDevice s) {
        return on(s, [&] { return x.at(rows).minimum(u); });
      },
      "at.minimum NaN");
}

// ---- sorting and scans ----

void check_Sort() {
  for (DType dt : kDtypes)
    for (const auto& in : layouts(dt, 81))
      for (int axis : {0, 1})
        expect_same([&](StreamOrDevice s) { return ops::sort(in.x, axis, s); },
                    "sort " + name(dt) + " " + in.layout + " axis " +
                        std::to_string(axis));
}

void check_ArgSort() {
  for (DType dt : kDtypes)
    for (const auto& in :
         layouts(dt, 82))  // integer and bool values tie: stability shows
      for (int axis : {0, 1})
        expect_same(
            [&](StreamOrDevice s) { return ops::argsort(in.x, axis, s); },
            "argsort " + name(dt) + " " + in.layout + " axis " +
                std::to_string(axis));
}

// `v` (from x along axis) holds x's values, x's kth smallest at kth, no
// larger value before it and no smaller one after it.
void expect_partitioned(const Array& x, const Array& v, int kth, int axis,
                        const std::string& what) {
  const Stream c = kCpu;
  int n = x.shape()[axis];
  Array sorted = ops::sort(x, axis, c);
  EXPECT_EQ(bits_of(ops::sort(v, axis, c)), bits_of(sorted))
      << what << ": not the same values";
  Array pivot = ops::take(v, array({kth}), axis, c);
  EXPECT_EQ(bits_of(pivot), bits_of(ops::take(sorted, array({kth}), axis, c)))
      << what << ": wrong kth";
  if (kth > 0) {
    Array before = ops::take(v, ops::arange(0, kth, 1, c), axis, c);
    EXPECT_TRUE(
        ops::all(ops::less_equal(before, pivot, c), false, c).item<bool>())
        << what;
  }
  if (kth + 1 < n) {
    Array after = ops::take(v, ops::arange(kth + 1, n, 1, c), axis, c);
    EXPECT_TRUE(
        ops::all(ops::greater_equal(after, pivot, c), false, c).item<bool>())
        << what;
  }
}

void partition_cases(bool arg) {
  for (DType dt : {float32, int32, float16, uint8, int64, float64})
    for (const auto& in : layouts(dt, 83))
      for (int axis : {0, 1})
        for (int kth : {0, 3, in.x.shape()[axis] - 1}) {
          std::string w = std::string(arg ? "argpartition " : "partition ") +
                          name(dt) + " " + in.layout + " axis " +
                          std::to_string(axis) + " kth " + std::to_string(kth);
          auto f = [&](StreamOrDevice s) {
            return arg ? ops::argpartition(in.x, kth, axis, s)
                       : ops::partition(in.x, kth, axis, s);
          };
          auto r = run_both(f, w);
          if (!r) continue;
          Array g = r->second;
          if (arg) {  // a permutation, then the values it picks
            EXPECT_EQ(bits_of(ops::sort(g, axis, kCpu)),
                      bits_of(ops::sort(r->first, axis, kCpu)))
                << w;
            g = ops::take_along_axis(in.x, g, axis, kCpu);
          }
          expect_partitioned(in.x, g, kth, axis, w);
        }
}

void check_Partition() { partition_cases(false); }
void check_ArgPartition() { partition_cases(true); }

void check_Scan() {
  using S = Array (*)(const Array&, int, bool, bool, StreamOrDevice, Location);
  std::pair<const char*, S> scans[] = {{"cumsum", ops::cumsum},
                                       {"cumprod", ops::cumprod},
                                       {"cummax", ops::cummax},
                                       {"cummin", ops::cummin},
                                       {"logcumsumexp", ops::logcumsumexp}};
  for (DType dt : kDtypes) {
    auto xs = layouts(dt, 84);
    for (const auto& [op, f] : scans)
      for (const auto& in : xs)
        for (int axis : {0, 1})
          for (auto o : {std::pair{false, true}, std::pair{true, false}})
            expect_close(
                [&, f = f](StreamOrDevice s) {
                  return f(in.x, axis, o.first, o.second, s, NUVEC_LOC);
                },
                tolerance(dt) * 10,
                std::string(op) + " " + name(dt) + " " + in.layout + " axis " +
                    std::to_string(axis) +
                    (o.first ? " reverse exclusive" : ""));
  }
}

// ---- convolution, linear algebra, compile ----

// A weight [cout, taps..., cin] with a single 1 per output channel: each
// output is one input value (or a padding zero) plus zeros, exact in any
// order of additions, so the GPU's im2col shows bit for bit.
Array one_hot_weight(const Shape& shape, DType dt, int seed) {
  int cout = shape[0], per = 1;
  for (size_t i = 1; i < shape.size(); ++i) per *= shape[i];
  Array col = ops::reshape(ops::arange(0, per, 1), {1, per});
  Array pick = random::randint(0, per, {cout, 1}, int32, random::key(seed));
  return ops::reshape(ops::astype(ops::equal(col, pick), dt), shape);
}

void check_Im2Col() {
  for (DType dt : {float32, float64, float16, bfloat16}) {
    const double tol = tolerance(dt) * 10;
    Array x1 = ops::transpose(values(dt, {3, 9, 2}, 90),
                              {2, 1, 0});  // [2, 9, 3], strided
    Array w1 = values(dt, {4, 3, 3}, 91) * 0.25f;
    Array x2 = values(dt, {2, 7, 6, 4}, 92),
          w2 = values(dt, {4, 3, 2, 4}, 93) * 0.25f;
    Array x3 = values(dt, {1, 4, 5, 3, 2}, 94),
          w3 = values(dt, {2, 2, 2, 2, 2}, 95) * 0.25f;
    std::string w = name(dt);
    expect_close(
        [&](StreamOrDevice s) { return ops::conv1d(x1, w1, 2, 1, 2, 1, s); },
        tol, "conv1d " + w);
    expect_close(
        [&](StreamOrDevice s) {
          return ops::conv_general(x1, w1, {1}, {2}, {1}, {1}, {2}, 1, false,
                                   s);
        },
        tol, "conv_general input dilation " + w);
    expect_close(
        [&](StreamOrDevice s) {
          return ops::conv2d(x2, w2, {2, 1}, {1, 0}, {1, 2}, 1, s);
        },
        tol, "conv2d " + w);
    expect_close(
        [&](StreamOrDevice s) {
          return ops::conv2d(x2, values(dt, {4, 3, 3, 2}, 96), 1, 1, 1, 2, s);
        },
        tol * 10, "conv2d groups " + w);
    expect_close(
        [&](StreamOrDevice s) {
          return ops::conv3d(x3, w3, 1, {1, 0, 1}, 1, 1, s);
        },
        tol, "conv3d " + w);
    expect_close(
        [&](StreamOrDevice s) {
          return ops::conv_transpose2d(x2, w2, 2, 1, 1, 1, 1, s);
        },
        tol * 10, "conv_transpose2d " + w);
    Array h1 = one_hot_weight({4, 3, 3}, dt, 97),
          h2 = one_hot_weight({5, 3, 2, 4}, dt, 98);
    expect_same(
        [&](StreamOrDevice s) {
          return ops::conv_general(x1, h1, {2}, {2}, {1}, {2}, {2}, 1, false,
                                   s);
        },
        "conv1d one-hot " + w);
    expect_same(
        [&](StreamOrDevice s) {
          return ops::conv2d(x2, h2, {1, 2}, {2, 1}, {2, 1}, 1, s);
        },
        "conv2d one-hot " + w);
  }
}

// MLX runs linalg on the CPU only; a GPU stream gets a clear error.
void check_Linalg() {
  Array a =
      ops::add(ops::multiply(values(float32, {4, 4}, 99), 0.1f), ops::eye(4));
  expect_eval_error(linalg::inv(a, Device::gpu), "CPU only");
  EXPECT_NO_THROW(linalg::inv(a, kCpu).eval());
}

// Placeholders exist only while compile traces: evaluating one fails with
// the CPU's message on the GPU stream too.
void check_Placeholder() {
  with_stream(Device::gpu, [] {
    auto f = compile([](const Array& x) {
      Array y = x * 2.0f;
      (void)y.item<float>();
      return y;
    });
    ++cases_checked();
    try {
      (void)f(array(1.0f));
      ADD_FAILURE() << "evaluating inside the trace must throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("while compile traced it"),
                std::string::npos)
          << e.what();
    }
  });
}

// Fused regions come from compile; fused equals unfused, here across
// devices (the GPU's generated NVRTC kernels against the CPU's).
void check_Fused() {
  auto f = compile([](const Array& x, const Array& y) {
    return ops::exp(ops::negative(x * x)) + ops::sin(y) * 0.5f;
  });
  for (DType dt : {float32, float16, float64}) {
    auto xs = layouts(dt, 100), ys = layouts(dt, 101);
    for (size_t i = 0; i < xs.size(); ++i)
      expect_same(
          [&](StreamOrDevice s) {
            return on(s, [&] { return f(xs[i].x, ys[(i + 3) % 4].x); });
          },
          "compiled " + name(dt) + " " + xs[i].layout);
  }
}

// Regions over rows (a hand-written softmax): compiled equals uncompiled
// bit for bit on the GPU, every layout (the GPU's reductions are not the
// CPU's bits, so the reference is the eager GPU graph).
void check_FusedReduce() {
  auto softmax = [](const Array& x) {
    Array e = ops::exp(x - ops::max(x, {-1}, true));
    return e / ops::sum(e, {-1}, true);
  };
  auto f = compile(softmax);
  for (DType dt : {float32, float16, float64})
    for (const auto& in : layouts(dt, 102)) {
      ++cases_checked();
      Array eager = on(Device::gpu, [&] { return softmax(in.x); });
      Array compiled = on(Device::gpu, [&] { return f(in.x); });
      EXPECT_EQ(bits_of(compiled), bits_of(eager)) << "softmax " << name(dt) << " " << in.layout;
      // The eager reduction's order depends on the row's length only: a
      // view and its dense copy give the same bits.
      Array view_sum = on(Device::gpu, [&] { return ops::sum(in.x, {-1}); });
      Array copy_sum = on(Device::gpu, [&] { return ops::sum(ops::copy(in.x), {-1}); });
      EXPECT_EQ(bits_of(view_sum), bits_of(copy_sum)) << "sum " << name(dt) << " " << in.layout;
    }
  // Long rows (many packs a thread) and rows that are not whole packs.
  for (int n : {4099, 70001}) {
    Array x = values(float32, {3, n}, 103);
    Array eager = on(Device::gpu, [&] { return softmax(x); });
    Array compiled = on(Device::gpu, [&] { return f(x); });
    EXPECT_EQ(bits_of(compiled), bits_of(eager)) << "softmax rows of " << n;
  }
}

// A user's kernel (fast::CudaKernel) has no CPU version: its GPU result is
// compared with the same arithmetic done by ops on the CPU. Both kernels
// call nuvec's functors, so the bits are the ops' bits; one reads dense
// copies (ensure_row_contiguous), the other the inputs' own layouts through
// a_strides and b_strides.
void check_CudaKernel() {
  const char* body = R"(
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < N) out[i] = nuvec::kernels::Add{}(nuvec::kernels::Multiply{}(a[i], b[i]), T(1));
)";
  const char* strided_body = R"(
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= N) return;
  long ia = 0, ib = 0, rest = i;
  for (int d = a_ndim - 1; d >= 0; --d) {
    const long c = rest % a_shape[d];
    rest /= a_shape[d];
    ia += c * a_strides[d];
    ib += c * b_strides[d];
  }
  out[i] = nuvec::kernels::Add{}(nuvec::kernels::Multiply{}(a[ia], b[ib]), T(1));
)";
  fast::CudaKernel dense("fma_dense", {"a", "b"}, {"out"}, body);
  fast::CudaKernel strided("fma_strided", {"a", "b"}, {"out"}, strided_body, "", false);
  for (DType dt : {float32, float16, bfloat16, float64, int32, uint8}) {
    auto as = layouts(dt, 102), bs = layouts(dt, 103);
    for (size_t i = 0; i < as.size(); ++i)
      for (const auto* k : {&dense, &strided}) {
        const Array &a = as[i].x, &b = bs[(i + 1) % bs.size()].x;
        expect_same(
            [&](StreamOrDevice s) {
              if (to_stream(s).device != Device::gpu) return ops::add(ops::multiply(a, b, s), 1, s);
              int n = static_cast<int>(a.size());
              return (*k)({a, b}, {.output_shapes = {a.shape()},
                                   .output_dtypes = {dt},
                                   .grid = {n, 1, 1},
                                   .threadgroup = {64, 1, 1},
                                   .template_args = {{"T", dt}, {"N", n}},
                                   .stream = s})[0];
            },
            k->name() + " " + name(dt) + " " + as[i].layout);
      }
  }
}

}  // namespace nuvec::testing::gpu_ops
