// vmap of every non-element-wise primitive family against a loop over the
// batch: the loop runs f on each slice (a view, as the engine's tracer) and
// stacks the results. The same kernels run on the same rows, so the two
// agree bit for bit (NaNs compared as NaNs).
#include <gtest/gtest.h>
#include <nuvec/nuvec.h>

#include <cmath>
#include <optional>
#include <random>

#include "support/cpu_default.h"

using namespace nuvec;

namespace {

using Axis = std::optional<int>;

Array randn(const Shape& shape, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<float> dist;
  std::vector<float> v(static_cast<size_t>(shape_size(shape)));
  for (auto& x : v) x = dist(gen);
  return array<float>(v, shape);
}

Array randint(const Shape& shape, int lo, int hi, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int32_t> dist(lo, hi);
  std::vector<int32_t> v(static_cast<size_t>(shape_size(shape)));
  for (auto& x : v) x = dist(gen);
  return array<int32_t>(v, shape);
}

// `slice` with a batch of `size` inserted at `axis` (negative from the end).
Shape batched(Shape slice, int size, int axis) {
  if (axis < 0) axis += static_cast<int>(slice.size()) + 1;
  slice.insert(slice.begin() + axis, size);
  return slice;
}

// Element i of x along `axis`: a view.
Array slice_at(const Array& x, int axis, int i) {
  std::vector<int> start(static_cast<size_t>(x.ndim()), 0);
  std::vector<int> stop(x.shape().begin(), x.shape().end());
  start[axis] = i;
  stop[axis] = i + 1;
  return ops::squeeze(ops::slice(x, start, stop), {axis});
}

// f looped over the batch and stacked: what vmap_flat(f, in_axes, out_axes)
// must give.
FlatFunction looped(FlatFunction f, std::vector<Axis> in_axes,
                    std::vector<int> out_axes = {}) {
  return [=](const std::vector<Array>& in) {
    std::vector<int> axes;
    int size = 0;
    for (size_t k = 0; k < in.size(); ++k) {
      Axis a = in_axes.empty() ? Axis(0) : in_axes[k];
      axes.push_back(a ? (*a < 0 ? *a + in[k].ndim() : *a) : -1);
      if (a) size = in[k].shape(axes.back());
    }
    std::vector<std::vector<Array>> per_output;
    for (int i = 0; i < size; ++i) {
      std::vector<Array> args;
      for (size_t k = 0; k < in.size(); ++k)
        args.push_back(axes[k] < 0 ? in[k] : slice_at(in[k], axes[k], i));
      auto outs = f(args);
      per_output.resize(outs.size());
      for (size_t j = 0; j < outs.size(); ++j) per_output[j].push_back(outs[j]);
    }
    std::vector<Array> result;
    for (size_t j = 0; j < per_output.size(); ++j)
      result.push_back(
          ops::stack(per_output[j], out_axes.empty() ? 0 : out_axes[j]));
    return result;
  };
}

void expect_same(const Array& got, const Array& want, size_t which) {
  SCOPED_TRACE("output " + std::to_string(which));
  ASSERT_EQ(got.shape(), want.shape());
  ASSERT_EQ(got.dtype(), want.dtype());
  auto g = got.to_vector<double>(), w = want.to_vector<double>();
  int bad = 0;
  for (size_t k = 0; k < g.size() && bad < 5; ++k) {
    if (std::isnan(g[k]) && std::isnan(w[k])) continue;
    if (g[k] != w[k]) {
      ++bad;
      ADD_FAILURE() << "element " << k << ": vmap " << g[k] << ", loop "
                    << w[k];
    }
  }
}

void check(const FlatFunction& f, const std::vector<Array>& in,
           std::vector<Axis> in_axes, std::vector<int> out_axes = {}) {
  auto got = vmap_flat(f, in_axes, out_axes)(in);
  auto want = looped(f, in_axes, out_axes)(in);
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) expect_same(got[j], want[j], j);
}

// f of one argument, batched at every axis of a slice of shape `slice`
// (and at -1), with the output batch at 0 and at the output's last axis.
void check_all_axes(const FlatFunction& f, const Shape& slice,
                    unsigned seed = 1) {
  int n = static_cast<int>(slice.size());
  for (int axis = -1; axis <= n; ++axis) {
    SCOPED_TRACE("in axis " + std::to_string(axis));
    Array x = randn(batched(slice, 3, axis), seed);
    check(f, {x}, {axis});
    check(f, {x}, {axis}, {-1});
  }
}

FlatFunction unary(std::function<Array(const Array&)> g) {
  return [g](const std::vector<Array>& in) {
    return std::vector<Array>{g(in[0])};
  };
}

FlatFunction binary(std::function<Array(const Array&, const Array&)> g) {
  return [g](const std::vector<Array>& in) {
    return std::vector<Array>{g(in[0], in[1])};
  };
}

}  // namespace

TEST(TransformsVmap, ReshapeTransposeBroadcast) {
  check_all_axes(unary([](const Array& x) {
                   return ops::reshape(x, {2, -1});
                 }),
                 {3, 4});
  check_all_axes(unary([](const Array& x) { return ops::flatten(x); }),
                 {2, 3, 2});
  check_all_axes(unary([](const Array& x) {
                   return ops::transpose(x, {2, 0, 1});
                 }),
                 {2, 3, 4});
  check_all_axes(unary([](const Array& x) { return ops::swapaxes(x, 0, 1); }),
                 {3, 4});
  // A slice of lower rank than the target: the batch must not align with it.
  check_all_axes(unary([](const Array& x) {
                   return ops::broadcast_to(x, {2, 3, 4});
                 }),
                 {3, 1});
  check_all_axes(unary([](const Array& x) {
                   return ops::broadcast_to(x, {2, 4});
                 }),
                 {4});
  check_all_axes(unary([](const Array& x) {
                   return ops::broadcast_to(x, {2, 5});
                 }),
                 {});
}

TEST(TransformsVmap, SliceAndViews) {
  check_all_axes(unary([](const Array& x) {
                   return ops::slice(x, {1, 0}, {3, 5}, {1, 2});
                 }),
                 {4, 5});
  check_all_axes(unary([](const Array& x) {
                   return ops::slice(x, {-1, 3}, {-5, 0}, {-2, -1});
                 }),
                 {4, 5});
  check_all_axes(
      unary([](const Array& x) { return x.i(1, slice({}, {}, -1)); }), {3, 4});
  check_all_axes(
      unary([](const Array& x) { return ops::stop_gradient(x) * 2.0f; }),
      {3, 2});
  check_all_axes(unary([](const Array& x) { return ops::copy(x.t()); }),
                 {3, 2});
}

TEST(TransformsVmap, BitCastChangesTheLastAxis) {
  // Wider to narrower and back: the batch axis must not be rescaled.
  check_all_axes(unary([](const Array& x) { return x.view(uint8); }), {2, 3});
  check_all_axes(
      unary([](const Array& x) { return x.view(uint16).view(float32); }), {3});
  check_all_axes(unary([](const Array& x) { return x.view(int32); }), {});
  Array bytes = ops::astype(randint({4, 8}, 0, 255, 3), uint8);
  check(unary([](const Array& x) { return x.view(float32); }), {bytes}, {0});
  check(unary([](const Array& x) { return x.view(uint16); }),
        {ops::transpose(bytes)}, {-1});
}

TEST(TransformsVmap, DependsKeepsTheValue) {
  auto f = [](const std::vector<Array>& in) {
    return ops::depends({in[0]}, {in[1] * 2.0f});
  };
  Array x = randn({3, 4}, 1), y = randn({4, 3}, 2);
  check(f, {x, y}, {0, 1});
  check(f, {x, y}, {std::nullopt, 1});  // only the dependency is batched
  check(f, {x, y}, {1, std::nullopt}, {1});
}

TEST(TransformsVmap, Reductions) {
  check_all_axes(unary([](const Array& x) { return x.sum(); }), {3, 4});
  check_all_axes(unary([](const Array& x) { return x.sum({1}, true); }),
                 {3, 4, 2});
  check_all_axes(unary([](const Array& x) {
                   return x.max({0, 2});
                 }),
                 {3, 4, 2});
  check_all_axes(unary([](const Array& x) { return x.prod({-1}); }), {3, 4});
  check_all_axes(unary([](const Array& x) { return x.min({0}); }), {5});
  check_all_axes(unary([](const Array& x) { return ops::all(x > 0.0f, {1}); }),
                 {3, 4});
  check_all_axes(unary([](const Array& x) { return ops::any(x > 1.0f); }),
                 {3, 4});
  // A long contiguous row (more than one block of 16 accumulators).
  check_all_axes(unary([](const Array& x) { return x.sum({0}); }), {1000});
}

TEST(TransformsVmap, ArgReduceAndNumberOf) {
  check_all_axes(unary([](const Array& x) { return x.argmax(1); }), {3, 4});
  check_all_axes(unary([](const Array& x) { return x.argmin(); }), {3, 4});
  check_all_axes(unary([](const Array& x) { return x.argmax(0, true); }),
                 {3, 4});
  // mean and var count the slice's elements (NumberOf), not the batch's.
  check_all_axes(unary([](const Array& x) { return x.mean(); }), {3, 4});
  check_all_axes(unary([](const Array& x) { return x.mean({1}); }), {3, 4});
  check_all_axes(unary([](const Array& x) { return x.var({0}, false, 1); }),
                 {3, 4});
}

TEST(TransformsVmap, Matmul) {
  // vmap equals the loop bit for bit on the CPU; on the GPU cuBLAS picks its
  // kernels by the batch shape (docs/gpu-status.md, determinism).
  nuvec::testing::CpuDefault cpu_default;
  auto mm =
      binary([](const Array& a, const Array& b) { return ops::matmul(a, b); });
  Array a = randn({3, 4, 5}, 1), b = randn({5, 3, 2}, 2);
  check(mm, {a, b}, {0, 1});
  check(mm, {a, ops::transpose(randn({3, 2, 5}, 3), {2, 0, 1})}, {0, 1}, {2});
  check(mm, {randn({4, 3, 5}, 4), randn({5, 2}, 5)}, {1, std::nullopt});
  check(mm, {randn({4, 5}, 6), randn({5, 2, 3}, 7)}, {std::nullopt, -1}, {-1});
  // 1-D operands (reshaped before the primitive) and broadcast batch shapes.
  check(mm, {randn({3, 5}, 8), randn({5, 2}, 9)}, {0, std::nullopt});
  check(mm, {randn({4, 5}, 10), randn({5, 3}, 11)}, {std::nullopt, 1});
  check(mm, {randn({3, 5}, 12), randn({5, 3}, 13)}, {0, 1});
  check(mm, {randn({2, 3, 4, 5}, 14), randn({1, 5, 2}, 15)}, {1, std::nullopt});
  check(mm, {randn({1, 4, 5}, 16), randn({2, 5, 2, 3}, 17)}, {std::nullopt, 3});
}

TEST(TransformsVmap, ConcatenateMixesBatchedAndUnbatched) {
  auto f = [](const std::vector<Array>& in) {
    return std::vector<Array>{ops::concatenate({in[0], in[1], in[2]}, 1),
                              ops::stack({in[0], in[2]}, -1)};
  };
  Array x = randn({3, 2, 4}, 1), y = randn({2, 5}, 2), z = randn({2, 4, 3}, 3);
  check(f, {x, y, z}, {0, std::nullopt, 2});
  check(f, {x, y, z}, {0, std::nullopt, 2}, {1, -1});
  check(f, {ops::moveaxis(x, 0, 1), y, randn({2, 4}, 4)},
        {1, std::nullopt, std::nullopt});
}

TEST(TransformsVmap, ConvolutionIm2Col) {
  // vmap equals the loop bit for bit on the CPU; on the GPU cuBLAS picks its
  // kernels by the batch shape (docs/gpu-status.md, determinism).
  nuvec::testing::CpuDefault cpu_default;
  auto c1 = binary(
      [](const Array& x, const Array& w) { return ops::conv1d(x, w, 2, 1); });
  Array x = randn({3, 2, 9, 4}, 1), w = randn({3, 5, 3, 4}, 2);
  check(c1, {x, w}, {0, 0});
  check(c1, {x, randn({5, 3, 4}, 3)}, {0, std::nullopt});
  check(c1, {randn({2, 9, 4}, 4), w},
        {std::nullopt, 0});  // only the weight is batched
  check(c1, {ops::moveaxis(x, 0, 2), w}, {2, 0}, {1});
  auto c2 = binary([](const Array& x, const Array& w) {
    return ops::conv2d(x, w, 1, {1, 0}, 1, 2);
  });
  check(c2, {randn({2, 5, 4, 4, 2}, 5), randn({2, 4, 3, 2, 2}, 6)}, {-1, 0});
}

TEST(TransformsVmap, RandomOverKeys) {
  // A batch of keys gives a batch of independent draws (MLX under vmap).
  Array keys = random::split(random::key(7), 4);
  auto u = unary([](const Array& k) {
    return random::uniform({3, 2}, float32, k);
  });
  check(u, {keys}, {0});
  check(u, {ops::transpose(keys)}, {1}, {2});
  check(unary([](const Array& k) { return random::bits({5}, 1, k); }), {keys},
        {0});
  check(unary([](const Array& k) { return random::normal({3}, k); }), {keys},
        {0});
  check(unary([](const Array& k) { return random::split(k, 3); }), {keys}, {0});
  // Draws differ across the batch (each key its own stream).
  auto d = vmap_flat(u, {0})({keys})[0];
  EXPECT_NE(slice_at(d, 0, 0).to_vector<float>(),
            slice_at(d, 0, 1).to_vector<float>());
}

TEST(TransformsVmap, TakeBatchedDataIndicesOrBoth) {
  auto t1 =
      binary([](const Array& x, const Array& i) { return ops::take(x, i, 1); });
  Array x = randn({3, 4, 3, 3}, 1);
  // Indices out of range and negative: wrapped once, then clamped.
  Array idx = randint({3, 3, 3}, -7, 7, 2);
  check(t1, {x, idx}, {0, 0});
  check(t1, {x, idx}, {2, 1}, {-1});
  check(t1, {x, idx}, {-1, -1});
  check(t1, {x, randint({2, 3}, -6, 6, 3)}, {1, std::nullopt});
  check(t1, {x, randint({2, 3}, -6, 6, 3)}, {3, std::nullopt}, {2});
  check(t1, {randn({4, 5, 2}, 4), idx}, {std::nullopt, 2});
  auto t0 =
      binary([](const Array& x, const Array& i) { return ops::take(x, i, 0); });
  check(t0, {x, ops::astype(randint({3}, 0, 3, 5), uint32)},
        {0, 0});  // 0-d indices
  auto flat =
      binary([](const Array& x, const Array& i) { return ops::take(x, i); });
  check(flat, {x, randint({3, 4}, -40, 40, 6)}, {0, 0});
  auto along = binary([](const Array& x, const Array& i) {
    return ops::take_along_axis(x, i, 0);
  });
  check(along, {randn({3, 4, 5}, 7), randint({3, 2, 5}, 0, 3, 8)}, {0, 0});
  check(along, {randn({4, 3, 5}, 7), randint({2, 5}, 0, 3, 8)},
        {1, std::nullopt});
  auto adv =
      binary([](const Array& x, const Array& i) { return x.i(slice(), i, 0); });
  check(adv, {randn({3, 2, 4, 5}, 9), randint({3, 2, 2}, 0, 3, 10)}, {0, 0});
}

TEST(TransformsVmap, ScatterBatchedTargetIndicesUpdates) {
  auto add = [](const std::vector<Array>& in) {
    return std::vector<Array>{in[0].at(in[1]).add(in[2])};
  };
  Array x = randn({3, 6}, 1);
  Array idx = randint({3, 5}, -6, 5, 2);  // repeats accumulate in order
  Array v = randn({3, 5}, 3);
  check(add, {x, idx, v}, {0, 0, 0});
  check(add, {x, idx, v}, {0, std::nullopt, std::nullopt});
  check(add, {randn({6}, 4), idx, v}, {std::nullopt, 0, 0});
  check(add, {randn({6}, 4), randint({5}, 0, 5, 5), v},
        {std::nullopt, std::nullopt, 0});
  check(add, {ops::transpose(x), ops::transpose(idx), v}, {1, 1, 0}, {1});
  auto set = [](const std::vector<Array>& in) {
    return std::vector<Array>{in[0].at(in[1]).set(in[2]),
                              in[0].at(in[1]).maximum(in[2])};
  };
  check(set, {x, idx, v}, {0, 0, 0});  // the last write wins
  auto two_d = [](const std::vector<Array>& in) {
    return std::vector<Array>{in[0].at(slice(), in[1]).multiply(2.0f),
                              ops::put_along_axis(in[0], in[2], 0.0f, 1)};
  };
  check(two_d,
        {randn({3, 4, 5}, 6), randint({3, 2}, 0, 4, 7),
         randint({4, 3, 2}, 0, 4, 8)},
        {0, 0, 1});
}

TEST(TransformsVmap, SortsAndPartitions) {
  for (int axis : {0, 1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    check_all_axes(unary([=](const Array& x) { return ops::sort(x, axis); }),
                   {4, 5});
    check_all_axes(unary([=](const Array& x) { return ops::argsort(x, axis); }),
                   {4, 5});
    check_all_axes(
        unary([=](const Array& x) { return ops::partition(x, 2, axis); }),
        {4, 5});
    check_all_axes(
        unary([=](const Array& x) { return ops::argpartition(x, -1, axis); }),
        {4, 5});
    check_all_axes(unary([=](const Array& x) { return ops::topk(x, 2, axis); }),
                   {4, 5});
  }
  check_all_axes(unary([](const Array& x) { return ops::sort(x); }), {3, 4});
  // Ties: argsort is stable per slice.
  Array ties = ops::astype(randint({3, 8}, 0, 2, 3), float32);
  check(unary([](const Array& x) { return ops::argsort(x, 0); }), {ties}, {0});
}

TEST(TransformsVmap, Scans) {
  for (int axis : {0, 1}) {
    SCOPED_TRACE("axis " + std::to_string(axis));
    check_all_axes(unary([=](const Array& x) { return ops::cumsum(x, axis); }),
                   {4, 5});
    check_all_axes(
        unary([=](const Array& x) { return ops::cumprod(x, axis, true, false); }),
        {4, 5});
    check_all_axes(unary([=](const Array& x) { return ops::cummax(x, axis); }),
                   {4, 5});
    check_all_axes(
        unary([=](const Array& x) { return ops::logcumsumexp(x, axis); }),
        {4, 5});
  }
  check_all_axes(unary([](const Array& x) { return ops::cummin(x); }), {3, 4});
}

TEST(TransformsVmap, Linalg) {
  nuvec::testing::CpuDefault cpu_default;  // LAPACK: CPU only, as MLX
  // Well-conditioned matrices: x x^T + 4 I is positive definite.
  auto spd = [](const Array& x) {
    return ops::add(ops::matmul(x, ops::swapaxes(x, -1, -2)),
                    ops::multiply(ops::eye(4), 4.0f));
  };
  auto f = [=](const std::vector<Array>& in) {
    Array a = spd(in[0]);
    auto [q, r] = linalg::qr(in[0]);
    auto usv = linalg::svd(in[0]);
    auto [w, v] = linalg::eigh(a);
    return std::vector<Array>{linalg::inv(a),
                              linalg::cholesky(a),
                              q,
                              r,
                              usv[0],
                              usv[1],
                              usv[2],
                              w,
                              v,
                              linalg::eigvalsh(a, "U")};
  };
  check(f, {randn({3, 4, 4}, 1)}, {0});
  check(f, {randn({4, 3, 4}, 2)}, {1}, std::vector<int>(10, -1));
  auto solve = [=](const std::vector<Array>& in) {
    return std::vector<Array>{linalg::solve(spd(in[0]), in[1])};
  };
  Array a = randn({3, 4, 4}, 3), b = randn({3, 4, 2}, 4);
  check(solve, {a, b}, {0, 0});
  check(solve, {a, randn({4, 2}, 5)}, {0, std::nullopt});
  check(solve, {randn({4, 4}, 6), randn({4, 2, 3}, 8)}, {std::nullopt, 2});
  check(solve, {a, randn({4, 3}, 7)}, {0, 1});  // a vector right-hand side
}

TEST(TransformsVmap, OutputsIndependentOfTheBatch) {
  // arange is a constant; the second output does not depend on x at all.
  auto f = [](const std::vector<Array>& in) {
    Array r = ops::astype(ops::arange(4), float32);
    return std::vector<Array>{in[0] + r, r * 2.0f, in[1]};
  };
  Array x = randn({3, 4}, 1), y = randn({2}, 2);
  check(f, {x, y}, {0, std::nullopt});
  check(f, {x, y}, {0, std::nullopt}, {1, 1, 0});
  auto out = vmap_flat(f, {0, std::nullopt}, {0, 1, 0})({x, y});
  EXPECT_EQ(out[1].shape(), (Shape{4, 3}));
  EXPECT_EQ(out[2].shape(), (Shape{3, 2}));
}

TEST(TransformsVmap, NonContiguousInputs) {
  // vmap equals the loop bit for bit on the CPU; on the GPU cuBLAS picks its
  // kernels by the batch shape (docs/gpu-status.md, determinism).
  nuvec::testing::CpuDefault cpu_default;
  auto f = [](const std::vector<Array>& in) {
    Array m = ops::matmul(in[0], in[1]);
    return std::vector<Array>{ops::sort(m, 0), m.sum({1}),
                              ops::take(m, in[2], 1)};
  };
  Array a = ops::slice(randn({6, 4, 6}, 1), {0, 0, 0}, {6, 4, 6},
                       {2, 1, 2});  // steps
  Array b = ops::transpose(randn({3, 5, 3}, 2), {2, 1, 0});
  Array i = ops::transpose(randint({2, 3}, -3, 3, 3));
  check(f, {a, b, i}, {0, -1, 0});
  check(f, {ops::broadcast_to(randn({1, 4, 3}, 4), {3, 4, 3}), b, i}, {0, 2, 0},
        {1, 0, 1});
}

TEST(TransformsVmap, NestedVmap) {
  auto f = [](const std::vector<Array>& in) {
    Array m = ops::matmul(in[0], in[1]);
    Array t = ops::take(m, in[2], 0);
    return std::vector<Array>{ops::sort(t, -1), ops::cumsum(m, 0).max({1}),
                              in[0].at(in[2]).add(1.0f),
                              ops::broadcast_to(in[3], {2, 3})};
  };
  Array a = randn({2, 4, 3, 5}, 1), b = randn({5, 3, 2}, 2),
        i = randint({2, 2, 4, 3}, -5, 5, 3);
  Array c = randn({2, 3}, 4);
  // Inner over the middle axes, outer over the remaining ones.
  FlatFunction inner = vmap_flat(f, {1, 1, 2, std::nullopt}, {1, 0, 0, 0});
  FlatFunction inner_loop = looped(f, {1, 1, 2, std::nullopt}, {1, 0, 0, 0});
  auto got =
      vmap_flat(inner, {0, std::nullopt, 0, 0}, {0, 2, 1, 0})({a, b, i, c});
  auto want =
      looped(inner_loop, {0, std::nullopt, 0, 0}, {0, 2, 1, 0})({a, b, i, c});
  ASSERT_EQ(got.size(), want.size());
  for (size_t j = 0; j < got.size(); ++j) expect_same(got[j], want[j], j);
  // vmap of vmap of an axis-changing pipeline, batch axes last.
  auto g = unary(
      [](const Array& x) { return ops::argsort(ops::reshape(x, {-1}), 0); });
  Array y = randn({4, 2, 3, 2}, 5);
  // The last axis as an optional: -1 as an int means "not mapped" (MLX).
  auto got2 = vmap_flat(vmap_flat(g, {Axis(-1)}), {Axis(-1)}, {-1})({y});
  auto want2 = looped(looped(g, {-1}), {-1}, {-1})({y});
  expect_same(got2[0], want2[0], 0);
}

TEST(TransformsVmap, ComposesWithGrad) {
  // vmap equals the loop bit for bit on the CPU; on the GPU cuBLAS picks its
  // kernels by the batch shape (docs/gpu-status.md, determinism).
  nuvec::testing::CpuDefault cpu_default;
  // Per-example gradients: the vjp's own primitives (broadcasts, scatters
  // of take's cotangent, transposed products) go through the vmap rules.
  FlatFunction loss = [](const std::vector<Array>& in) {
    Array logits = ops::matmul(in[1], in[0]);
    return std::vector<Array>{ops::logsumexp(logits, Axes{0}) -
                              ops::take(logits, in[2], 0)};
  };
  Array w = randn({4, 3}, 1), xs = randn({5, 4}, 2),
        labels = randint({5}, 0, 2, 3);
  check(grad_flat(loss, {0, 1}), {w, xs, labels}, {std::nullopt, 0, 0});
  // The gradient of a vmap sums the batch in another order than a loop
  // does: equal up to rounding.
  auto total = [&](const std::vector<Array>& in, bool vectorized) {
    auto per = vectorized
                   ? vmap_flat(loss, {std::nullopt, 0, 0})({in[0], xs, labels})
                   : looped(loss, {std::nullopt, 0, 0})({in[0], xs, labels});
    return std::vector<Array>{per[0].sum()};
  };
  auto g = grad_flat(
      [&](const std::vector<Array>& in) { return total(in, true); })({w});
  auto ref = grad_flat(
      [&](const std::vector<Array>& in) { return total(in, false); })({w});
  auto gv = g[0].to_vector<float>(), rv = ref[0].to_vector<float>();
  ASSERT_EQ(gv.size(), rv.size());
  for (size_t k = 0; k < gv.size(); ++k) EXPECT_NEAR(gv[k], rv[k], 1e-5f) << k;
}
